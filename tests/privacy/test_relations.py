"""Neighbour relations: the sensitivity table against constructed and random neighbours, and one
replace-one ledger counting add/remove releases, checked against dp-accounting's own accountant."""

import math

import numpy as np
import pytest
from dp_accounting import GaussianDpEvent, LaplaceDpEvent, NeighboringRelation
from dp_accounting.pld.pld_privacy_accountant import PLDAccountant

from pm_private.privacy import PrivacyAccountant
from pm_private.privacy.budget import NoiseEvent
from pm_private.privacy.primitives import gaussian_noise_multiplier
from pm_private.privacy.relations import (
    ADD_REMOVE,
    REPLACE_ONE,
    Sensitivity,
    gram_sensitivity,
    histogram_sensitivity,
    sum_sensitivity,
)

PAIRS = 10_000


def _ball(rng, size, d, radius):
    """Points in the ball of ``radius``, a third of them on its sphere (where the extremes are)."""
    z = rng.normal(size=(size, d))
    z /= np.linalg.norm(z, axis=1, keepdims=True)
    r = radius * rng.uniform(size=(size, 1)) ** (1 / d)
    r[: size // 3] = radius
    return z * r


def test_histogram_sensitivity_attained_and_never_exceeded():
    rng = np.random.default_rng(0)
    cells, size = 7, 50
    for norm in (1, 2):
        sensitivity = histogram_sensitivity(norm)
        worst = {ADD_REMOVE: 0.0, REPLACE_ONE: 0.0}
        for _ in range(PAIRS // 10):
            data = rng.integers(cells, size=size)
            counts = np.bincount(data, minlength=cells)
            replaced = data.copy()
            replaced[rng.integers(size)] = rng.integers(cells)
            removed = np.delete(data, rng.integers(size))
            for relation, other in ((REPLACE_ONE, replaced), (ADD_REMOVE, removed)):
                change = np.linalg.norm(counts - np.bincount(other, minlength=cells), ord=norm)
                worst[relation] = max(worst[relation], change)
        assert worst[REPLACE_ONE] == pytest.approx(sensitivity.replace_one)
        assert worst[ADD_REMOVE] == pytest.approx(sensitivity.add_remove)
    with pytest.raises(ValueError, match="norm"):
        histogram_sensitivity(3)


def test_sum_and_gram_sensitivity_attained_and_never_exceeded():
    rng = np.random.default_rng(1)
    d, radius = 4, 1.7
    z, w = _ball(rng, PAIRS, d, radius), _ball(rng, PAIRS, d, radius)
    outer = np.einsum("ni,nj->nij", z, z)
    gram, vector = gram_sensitivity(radius), sum_sensitivity(radius)
    replaced = np.linalg.norm(outer - np.einsum("ni,nj->nij", w, w), axis=(1, 2))
    assert replaced.max() <= gram.replace_one * (1 + 1e-12)
    assert np.linalg.norm(outer, axis=(1, 2)).max() <= gram.add_remove * (1 + 1e-12)
    assert np.linalg.norm(z - w, axis=1).max() <= vector.replace_one * (1 + 1e-12)
    assert np.linalg.norm(z, axis=1).max() <= vector.add_remove * (1 + 1e-12)
    # constructed neighbours attain every entry
    e1, e2 = radius * np.eye(d)[0], radius * np.eye(d)[1]
    assert np.linalg.norm(np.outer(e1, e1) - np.outer(e2, e2)) == pytest.approx(gram.replace_one)
    assert np.linalg.norm(np.outer(e1, e1)) == pytest.approx(gram.add_remove)
    assert np.linalg.norm(e1 - (-e1)) == pytest.approx(vector.replace_one)
    assert Sensitivity(1.0, 2.0).under(ADD_REMOVE) == 1.0 and Sensitivity(1.0, 2.0).under(REPLACE_ONE) == 2.0
    with pytest.raises(ValueError, match="relation"):
        Sensitivity(1.0, 2.0).under("swap")


def _independent_epsilon(events, relation, delta):
    accountant = PLDAccountant(relation)
    for event in events:
        accountant.compose(event)
    return accountant.get_epsilon(delta)


def test_one_ledger_of_both_relations_matches_dp_accounting():
    """Replace-one and add/remove spends on one ledger; dp-accounting recomposes the same events
    with its own relation handling (its replace-one Gaussian doubles an add/remove sensitivity)."""
    delta = 1e-5
    accountant = PrivacyAccountant(20.0, delta)
    m_half, m_one = gaussian_noise_multiplier(0.5, 1e-6), gaussian_noise_multiplier(1.0, 1e-6)
    accountant.record("replace-one gaussian", 0.5, 1e-6, noise=(NoiseEvent("gaussian", m_half, 1.0),))
    accountant.record(
        "add/remove gaussian", 1.0, 1e-6, neighbours=ADD_REMOVE, noise=(NoiseEvent("gaussian", m_one, 1.0),)
    )
    accountant.record("add/remove laplace", 0.3, neighbours=ADD_REMOVE, noise=(NoiseEvent("laplace", 1 / 0.3, 1.0),))
    converted = accountant.ledger[1]
    assert converted.neighbours == "add-remove as replace-one"
    assert converted.noise[0].sensitivity == 2.0 and accountant.ledger[2].epsilon == pytest.approx(0.6)
    gaussians = [GaussianDpEvent(m_half), GaussianDpEvent(m_one / 2)]  # replace-one pairs as add/remove ones
    mine = accountant.tight_epsilon()
    theirs = _independent_epsilon([*gaussians, LaplaceDpEvent(1 / 0.6)], NeighboringRelation.ADD_OR_REMOVE_ONE, delta)
    # the ledger composes a Laplace event as randomized response, its pure-DP dominating pair:
    # never below dp-accounting's continuous Laplace, and close to it
    assert theirs * (1 - 1e-3) <= mine <= theirs * 1.02
    # dp-accounting's replace-one relation for the add/remove Gaussian alone: the same doubling
    alone = PrivacyAccountant(20.0, delta)
    alone.record("add/remove gaussian", 1.0, 1e-6, neighbours=ADD_REMOVE, noise=(NoiseEvent("gaussian", m_one, 1.0),))
    replace = _independent_epsilon([GaussianDpEvent(m_one)], NeighboringRelation.REPLACE_ONE, delta)
    assert alone.tight_epsilon() == pytest.approx(replace, rel=2e-3)


def test_stated_replace_one_sensitivity_is_used_and_bounded():
    accountant = PrivacyAccountant(10.0, 1e-5)
    m = gaussian_noise_multiplier(1.0, 1e-6)
    gram = gram_sensitivity(1.0)
    event = NoiseEvent("gaussian", m, gram.add_remove, gram.replace_one)
    accountant.record("gram", 1.0, 1e-6, neighbours="add-remove person", noise=(event,))
    entry = accountant.ledger[0]
    assert entry.neighbours == "add-remove person as replace-one person"
    assert entry.noise[0].sensitivity == pytest.approx(math.sqrt(2))
    theirs = _independent_epsilon([GaussianDpEvent(m / math.sqrt(2))], NeighboringRelation.ADD_OR_REMOVE_ONE, 1e-6)
    assert entry.epsilon == pytest.approx(theirs, rel=2e-3)
    assert 1.0 < entry.epsilon < 2.0  # tighter than group privacy's 2ε
    with pytest.raises(ValueError, match="replace_one_sensitivity"):
        NoiseEvent("gaussian", m, 1.0, 2.5)


def test_group_privacy_conversion_without_noise_and_refusals():
    accountant = PrivacyAccountant(10.0, 1e-4)
    accountant.record("elsewhere", 0.7, 1e-6, neighbours=ADD_REMOVE)
    entry = accountant.ledger[0]
    assert (entry.epsilon, entry.delta) == pytest.approx((1.4, (1 + math.exp(0.7)) * 1e-6))
    for bad in ("swap", "add-remove persons", "replace-one as add-remove"):
        with pytest.raises(ValueError, match="neighbours"):
            accountant.record("bad", 0.1, neighbours=bad)
    assert len(accountant.history) == 1


def test_converted_entry_survives_a_ledger_file(tmp_path):
    path = tmp_path / "ledger.sqlite"
    accountant = PrivacyAccountant.open(path, epsilon=5.0, delta=1e-5)
    accountant.record("opendp histogram", 0.5, neighbours=ADD_REMOVE, noise=(NoiseEvent("laplace", 2.0, 1.0),))
    again = PrivacyAccountant.open(path)
    (entry,) = again.ledger
    assert entry.neighbours == "add-remove as replace-one" and entry.epsilon == pytest.approx(1.0)
    assert again.tight_epsilon() == pytest.approx(1.0, rel=1e-3)


def test_a_pure_event_is_one_randomized_response_converted_by_its_stated_replace_one_epsilon():
    """A whole pure ε-DP mechanism (kind "pure", b = 1, Δ = ε) composes as randomized response of
    its ε, like a Laplace event of the same ε; under add/remove it converts to the replace-one ε
    it states (default 2ε), and a stated one above 2ε is refused."""
    delta = 1e-6
    pure, laplace = PrivacyAccountant(20.0, delta), PrivacyAccountant(20.0, delta)
    for _ in range(10):
        pure.record("pure", 0.5, noise=(NoiseEvent("pure", 1.0, 0.5),))
        laplace.record("laplace", 0.5, noise=(NoiseEvent("laplace", 2.0, 1.0),))
    assert pure.tight_epsilon() == laplace.tight_epsilon() < pure.spent[0] == 5.0
    stated = PrivacyAccountant(20.0, delta)
    stated.record("stated", 0.8, neighbours=ADD_REMOVE, noise=(NoiseEvent("pure", 1.0, 0.8, 1.1),))
    stated.record("default", 0.8, neighbours=ADD_REMOVE, noise=(NoiseEvent("pure", 1.0, 0.8),))
    assert [entry.epsilon for entry in stated.ledger] == pytest.approx([1.1, 1.6])
    with pytest.raises(ValueError, match="replace_one_sensitivity"):
        NoiseEvent("pure", 1.0, 0.8, 1.7)

"""LSP + TLL under add/remove neighbours: the ladder constraint and the rungs' cover of the MLEs
at add/remove distance k, the exact event-mean bounds, TLL without a public n, and the release's
record and ledger entry."""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from weibull_ladders import (
    FLOOR,
    GAMMA,
    NEW_TIMES,
    OMEGA,
    TOL,
    check_a_drawn_data_set,
    check_a_large_data_set,
    data_sets,
)

from pm_private.privacy.accountant import PrivacyAccountant
from pm_private.privacy.noise import as_noise_source
from pm_private.survival.weibull.fit import mle_rows
from pm_private.survival.weibull.ladder import _event_mean_bounds, _tll
from pm_private.survival.weibull.mechanisms import WeibullLSP, lsp_ladder, weibull_private
from pm_private.survival.weibull.simulate import simulate_weibull


def _added_or_removed(t, d, kind, i, new_t, new_d):
    """Add the record (new_t, new_d), or remove the longest, shortest or i-th record."""
    if kind == "add":
        return np.append(t, new_t), np.append(d, new_d)
    j = {"longest": np.argmax(t), "shortest": np.argmin(t)}.get(kind, i % t.size)
    return np.delete(t, j), np.delete(d, j)


AR = "add-remove"
DATA_SETS = data_sets(1, 50)
CHANGES = st.tuples(
    st.sampled_from(["add", "add", "longest", "shortest", "random"]),
    st.integers(0, 10**6),
    NEW_TIMES,
    st.integers(0, 1),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(DATA_SETS, CHANGES)
def test_ladder_constraint_on_random_and_adversarial_added_or_removed_records(data, change):
    check_a_drawn_data_set(data, lambda t, d: _added_or_removed(t, d, *change), AR)


def test_the_ladder_covers_a_removal_that_leaves_equal_times():
    data = ([0.0, 4.0, 4.0, 4.0], [0, 0, 1, 1], 1.0)
    check_a_drawn_data_set(data, lambda t, d: _added_or_removed(t, d, "longest", 0, 0.0024787521766663585, 0), AR)


@pytest.mark.parametrize("kind", ["add", "longest", "shortest", "random"])
def test_ladder_constraint_on_a_large_data_set(kind):
    check_a_large_data_set(lambda t, d, new_t, new_d: _added_or_removed(t, d, kind, 17, new_t, new_d), AR)


def _mle(t, d):
    """The MLE of p clipped to γ; γ for data with no event or no root (the ladder's convention)."""
    if d.sum() == 0:
        return GAMMA
    return min(mle_rows(np.log(t), d)[0][0], GAMMA)


def test_rungs_contain_the_mle_of_data_sets_at_add_remove_distance_k():
    """Random and extreme removals and additions, including removing every record and adding
    new ones (k ≥ n), and adding records at the time that lowers f the most."""
    rng = np.random.default_rng(4)
    worst = 0.0
    for trial in range(60):
        n = int(rng.integers(2, 40))
        t = np.exp(-rng.uniform(0, OMEGA, n) * rng.uniform(0.05, 1))
        d = (rng.uniform(size=n) < 0.6).astype(int)
        lower, upper = lsp_ladder(t, d, K=6, relation=AR)
        assert lower[0] == upper[0] == pytest.approx(_mle(t, d), abs=1e-8)
        for k in range(1, 7):
            removed = rng.integers(0, min(k, n) + 1)
            order = np.argsort(t) if trial % 3 == 0 else (np.argsort(-t) if trial % 3 == 1 else rng.permutation(n))
            keep = np.sort(order[removed:])
            extreme = rng.choice([FLOOR, 1.0, math.exp(-1.0 / upper[0] if upper[0] > 0 else 0)], size=k - removed)
            added = extreme if k % 2 else np.exp(-rng.uniform(0, OMEGA, k - removed))
            t2 = np.concatenate([t[keep], np.clip(added, FLOOR, 1.0)])
            d2 = np.concatenate([d[keep], rng.integers(0, 2, k - removed)])
            if t2.size == 0:
                continue
            p = _mle(t2, d2)
            assert lower[k] - TOL <= p <= upper[k] + TOL, (trial, k)
            worst = max(worst, abs(p - lower[0]))
    assert worst > 0.1  # the neighbours moved the MLE


def test_event_mean_bounds_are_exact_on_a_small_case():
    """Brute force over every data set at add/remove distance ≤ 2 with added times on a grid
    that holds the extremes."""
    t = np.array([FLOOR, 0.2, 0.5, 0.9, 1.0])
    d = np.array([1, 0, 1, 1, 0])
    low, high = _event_mean_bounds(np.log(t), d, 2, OMEGA, AR)
    grid = [(FLOOR, 1), (0.3, 1), (1.0, 1), (0.3, 0)]
    sets = {1: [], 2: []}
    for i in range(t.size):  # remove one, then maybe another or add one
        t1, d1 = np.delete(t, i), np.delete(d, i)
        sets[1].append((t1, d1))
        sets[2] += [(np.delete(t1, j), np.delete(d1, j)) for j in range(t1.size)]
        sets[2] += [(np.append(t1, a), np.append(d1, b)) for a, b in grid]
    for a, b in grid:  # add one, then maybe another
        t1, d1 = np.append(t, a), np.append(d, b)
        sets[1].append((t1, d1))
        sets[2] += [(np.append(t1, a2), np.append(d1, b2)) for a2, b2 in grid]
    for k in (1, 2):
        means = [(d2 * np.log(t2)).sum() / d2.sum() for t2, d2 in sets[1] + sets[k] if d2.sum()]
        assert low[k] == pytest.approx(min(means), abs=1e-12)
        assert high[k] == pytest.approx(max(means), abs=1e-12)


def test_no_record_and_no_event():
    lower, upper = lsp_ladder([], [], K=4, relation=AR)
    assert lower[0] == upper[0] == GAMMA and lower[1] == pytest.approx(1 / OMEGA) and (upper == GAMMA).all()
    lower, upper = lsp_ladder([0.5, 0.7], [0, 0], K=3, relation=AR)
    assert lower[0] == GAMMA and (upper == GAMMA).all()
    with pytest.raises(ValueError, match="time"):
        lsp_ladder([], [], K=4)


def test_tll_without_a_public_n_clips_only_by_the_released_sums():
    t, d = np.full(3, 0.5), np.array([1, 0, 0])
    for s in range(200):
        lam, events, powers = _tll(t, d, 0.7, 0.05, omega=OMEGA, gamma=GAMMA, source=as_noise_source(s), n=None)
        delta = max(events.values[0], 1.0)
        tau = max(powers.values[0], delta * math.exp(-OMEGA * 0.7))
        assert lam == pytest.approx(min((tau / delta) ** (1 / 0.7), GAMMA)) and FLOOR * (1 - 1e-12) <= lam <= GAMMA


def test_release_keeps_n_private_and_a_replace_one_ledger_counts_one_and_a_half_epsilon():
    data = simulate_weibull(400, shape=1.5, scale=100.0, horizon=250.0, rng=0)
    accountant = PrivacyAccountant(10.0)
    release = weibull_private(data.time, data.event, epsilon=1.0, horizon=250.0, accountant=accountant, rng=0,
                              relation=AR)  # fmt: skip
    assert release.n is None and release.neighbours == AR and release.noise_scales == (4.0, 4.0)
    (entry,) = accountant.ledger
    assert entry.neighbours == "add-remove as replace-one" and "n=" not in entry.label
    assert entry.epsilon == pytest.approx(1.5) and accountant.tight_epsilon() <= 1.5 + 1e-9
    lsp = WeibullLSP(data.time, data.event, horizon=250.0, K=20, relation=AR)
    assert "400" not in repr(lsp) and "n private" in repr(lsp)
    nobody = weibull_private([], [], epsilon=1.0, horizon=250.0, accountant=accountant, rng=0, relation=AR)
    assert 0.0 < nobody.shape <= GAMMA and len(accountant.ledger) == 2


@pytest.mark.parametrize("relation", ["add/remove", None, 1])
def test_an_unknown_relation_is_refused_before_anything_is_spent(relation):
    accountant = PrivacyAccountant(10.0)
    with pytest.raises(ValueError, match="relation"):
        weibull_private([1.0, 2.0], [1, 0], epsilon=1.0, horizon=10.0, accountant=accountant, relation=relation)
    assert accountant.ledger == ()


def _log_density(ladder, epsilon_shape, points):
    """log f(p) of LSP's draw at ``points``: level i(p) = the first rung holding p, drawn with
    probability ∝ length·exp(−ε_p·i/2) and uniform within (``_draw_lsp``), so
    f(p) = exp(−ε_p·i(p)/2)/Z, Z = Σᵢ lengthᵢ·exp(−ε_p·i/2)."""
    lower, upper = ladder
    length = (lower[:-1] - lower[1:]) + (upper[1:] - upper[:-1])
    levels = np.arange(1, length.size + 1)
    log_z = np.log(np.sum(length * np.exp(-epsilon_shape * levels / 2)))
    inside = (lower[None, :] <= points[:, None]) & (points[:, None] <= upper[None, :])
    return -epsilon_shape * np.argmax(inside, axis=1) / 2 - log_z


@pytest.mark.parametrize("relation", ["replace-one", AR])
def test_the_shape_draw_is_epsilon_dp_exactly_on_adversarial_neighbours(relation):
    """The whole density of the shape's draw on a data set and on a neighbour (a record added or
    removed, or replaced under replace-one), compared at every piece of both ladders: the log
    ratio stays within ε_p, and the neighbours bring it close (the bound is attained up to the
    ladders' shapes)."""
    rng = np.random.default_rng(11)
    epsilon_shape, worst = 1.0, 0.0
    for trial in range(40):
        n = int(rng.integers(3, 40))
        t = np.exp(-rng.uniform(0, OMEGA, n) * rng.uniform(0.05, 1))
        d = (rng.uniform(size=n) < rng.uniform(0.2, 1)).astype(int)
        new_t = [FLOOR, 1.0, float(np.exp(-rng.uniform(0, OMEGA)))][trial % 3]
        if relation == AR:
            kind = ["add", "longest", "shortest", "random"][trial % 4]
            t2, d2 = _added_or_removed(t, d, kind, trial, new_t, trial % 2)
        else:
            j = [np.argmax(t), np.argmin(t), trial % n][trial % 3]
            t2, d2 = t.copy(), d.copy()
            t2[j], d2[j] = new_t, trial % 2
        a = lsp_ladder(t, d, K=8, relation=relation)
        b = lsp_ladder(t2, d2, K=8, relation=relation)
        cuts = np.unique(np.concatenate([*a, *b, [0.0, GAMMA]]))
        wide = np.diff(cuts) > 1e-9  # the pieces; their ends have probability 0 (and sit within rounding)
        points = ((cuts[1:] + cuts[:-1]) / 2)[wide]
        ratio = np.abs(_log_density(a, epsilon_shape, points) - _log_density(b, epsilon_shape, points))
        assert ratio.max() <= epsilon_shape + 1e-9, (trial, ratio.max())
        worst = max(worst, ratio.max())
    assert worst > 0.5 * epsilon_shape

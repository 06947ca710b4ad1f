"""Tight composition: Gaussian noise composed through privacy-loss distributions under the
library's replace-one sensitivity, Laplace as randomized response, the rest by basic composition."""

import math

import dp_accounting
import numpy as np
import pytest

from pm_private import BudgetExceededError, PrivacyAccountant, release_linear_stats
from pm_private.privacy.accountant import NoiseEvent
from pm_private.privacy.budget import gaussian_multiplier, implied_epsilon, tight_epsilon
from pm_private.privacy.primitives import gaussian_delta, gaussian_noise_event, gaussian_scale, laplace_noise_event


def _gaussian(c: float) -> NoiseEvent:
    return NoiseEvent("gaussian", c * 2.5, 2.5)  # σ/Δ = c with Δ = 2.5: the ratio is what counts


@pytest.mark.parametrize("c", [0.8, 4.225])
def test_one_gaussian_event_matches_the_exact_curve_for_replace_one_sensitivity(c):
    # Balle & Wang (2018): N(0, σ²) vs N(Δ, σ²) with Δ the replace-one ℓ2 sensitivity.
    acct = PrivacyAccountant(100.0, 0.5)
    # the declared ε must be the event's own at the declared δ (a looser claim is refused)
    acct.record("g", implied_epsilon((_gaussian(c),), 1e-6), 1e-6, noise=(_gaussian(c),))
    for eps in (0.5, 1.0, 2.0):
        exact = gaussian_delta(c, eps)
        epsilon = acct.tight_epsilon(exact)
        assert eps <= epsilon <= eps + 2e-3  # pessimistic: never below the exact ε
    # dp-accounting's REPLACE_ONE takes the multiplier relative to an add/remove sensitivity of
    # 1 and doubles it: using it here would charge the curve of σ/(2Δ), far above the exact one.
    replace = dp_accounting.pld.PLDAccountant(dp_accounting.NeighboringRelation.REPLACE_ONE)
    replace.compose(dp_accounting.GaussianDpEvent(c))
    assert replace.get_delta(1.0) == pytest.approx(gaussian_delta(c / 2, 1.0), rel=1e-2)
    assert replace.get_delta(1.0) > 3 * gaussian_delta(c, 1.0)


def test_laplace_event_is_its_epsilon_and_composes_below_the_sum():
    event = laplace_noise_event(2.0, 0.5)
    assert (event.scale, event.sensitivity, event.ratio) == (4.0, 2.0, 0.5)
    acct = PrivacyAccountant(100.0, 1e-5)
    acct.record("l", 0.5, noise=(event,))
    assert acct.tight_epsilon(0.0) == 0.5  # one release: its ε (basic is the better bound here)
    for _ in range(99):
        acct.record("l", 0.5, noise=(event,))
    assert acct.spent[0] == pytest.approx(50.0)
    assert 25.0 < acct.tight_epsilon() < 35.0  # optimal composition of 100 × 0.5-DP (Kairouz et al. 2015)


def test_ten_gaussian_releases_at_1_1e6_fit_a_budget_of_3_5_1e5_and_the_first_one_over_it_is_refused(tmp_path):
    rng = np.random.default_rng(0)
    X, y = rng.uniform(-1, 1, (50, 2)), rng.uniform(-1, 1, 50)
    file = PrivacyAccountant.open(tmp_path / "l.ledger", 3.5, 1e-5, durable=False)
    for acct in (PrivacyAccountant(3.5, 1e-5), file):
        for _ in range(10):
            release_linear_stats(X, y, epsilon=1.0, delta=1e-6, x_bound=1, y_bound=1, accountant=acct, rng=1)
        assert acct.spent == pytest.approx((10.0, 1e-5))  # basic composition: far over ε = 3.5
        assert 2.5 < acct.tight_epsilon() < 3.5
        # more fit while the composed ε at δ = 1e-5 stays within 3.5 (δ is not summed under PLD)
        (event,) = acct.ledger[0].noise
        while acct.cost(1.0, 1e-6, noise=(event,))[1] <= 3.5:
            release_linear_stats(X, y, epsilon=1.0, delta=1e-6, x_bound=1, y_bound=1, accountant=acct, rng=1)
        assert len(acct.ledger) == 12
        generator = np.random.default_rng(5)
        state = generator.bit_generator.state
        with pytest.raises(BudgetExceededError, match="tight composition"):
            release_linear_stats(X, y, epsilon=1.0, delta=1e-6, x_bound=1, y_bound=1, accountant=acct, rng=generator)
        assert generator.bit_generator.state == state and len(acct.ledger) == 12  # refused before noise
        # the statistics of d = 2 with the intercept column and the three counts (5 % of the squared sensitivity): stated
        # with the multiplier whose PLD ε is the ε charged, below OpenDP's (zCDP-calibrated) σ
        assert event.kind == "gaussian"
        assert event.scale < gaussian_scale(13, 3 * np.sqrt(2.0) / np.sqrt(0.95), 1.0, 1e-6)
        assert event.scale == pytest.approx(gaussian_multiplier(1.0, 1e-6) * event.sensitivity, rel=1e-12)
        assert 4.2 < event.scale / event.sensitivity < 4.6


def test_history_recomposes_from_the_stored_parameters(tmp_path):
    path = tmp_path / "l.ledger"
    acct = PrivacyAccountant.open(path, 20.0, 1e-5, durable=False)
    X, y = np.ones((20, 2)) * 0.5, np.ones(20) * 0.5
    release_linear_stats(X, y, noise="laplace", epsilon=1.0, x_bound=1, y_bound=1, accountant=acct, rng=0)
    release_linear_stats(X, y, epsilon=1.0, delta=1e-6, x_bound=1, y_bound=1, accountant=acct, rng=0)
    acct.record("no noise stated", 0.5, 1e-7)
    acct.close()
    history = PrivacyAccountant.open(path).ledger
    laplace, gaussian, other = (entry.noise for entry in history)
    # three statistics and the clipped counts (5 % of ε by default)
    assert [e.kind for e in laplace] == ["laplace"] * 4
    assert math.fsum(e.ratio for e in laplace) == pytest.approx(1.0)  # the ε split of the release
    (event,) = gaussian
    # the 10 statistics of the intercept's constant and d = 2 columns and the three counts (rows
    # scaled with their responses), noised together
    size = 10 + 3
    assert event == gaussian_noise_event(
        size, event.sensitivity - (size + 2) * 2.0 ** (math.floor(math.log2(event.scale)) - 40), 1.0, 1e-6
    )
    assert other == ()
    # the rest is added by basic composition: ε(tight) ≥ 0.5 + the noisy part's ε at δ − 1e-7
    assert tight_epsilon(history, 1e-5) == pytest.approx(PrivacyAccountant.open(path).tight_epsilon(), rel=1e-12)
    assert 0.5 < tight_epsilon(history, 1e-5) <= 2.5


def test_releases_without_noise_parameters_compose_by_basic_composition():
    acct = PrivacyAccountant(3.5, 1e-5)
    for _ in range(3):
        acct.record("plain", 1.0, 1e-6)
    with pytest.raises(BudgetExceededError, match="only 0.5 of 3.5 remains; nothing"):
        acct.record("plain", 1.0, 1e-6)
    assert acct.tight_epsilon() == 3.0


def test_dry_run_cost_records_nothing():
    acct = PrivacyAccountant(3.5, 1e-5)
    event = gaussian_noise_event(1, 1.0, 1.0, 1e-6)
    for _ in range(9):
        acct.record("g", 1.0, 1e-6, noise=(event,))
    basic, tight = acct.cost(1.0, 1e-6, noise=(event,))
    assert basic == pytest.approx(10.0) and tight < 3.5 and len(acct.ledger) == 9
    assert acct.cost(1.0, 1e-6)[1] > 3.5  # the same release without its noise: basic for it


@pytest.mark.parametrize(
    "kind, scale, sensitivity", [("cauchy", 1.0, 1.0), ("gaussian", 0.0, 1.0), ("laplace", 1.0, math.nan)]
)
def test_invalid_noise_events(kind, scale, sensitivity):
    with pytest.raises(ValueError):
        NoiseEvent(kind, scale, sensitivity)
    with pytest.raises(TypeError, match="NoiseEvent"):
        PrivacyAccountant(1.0).record("x", 0.5, noise=[("gaussian", 1.0, 1.0)])


def test_an_l2_laplace_event_composes_as_randomized_response_as_a_laplace_event_does():
    """Pure ε-DP noise in the ℓ2 norm (density ∝ exp(−‖b‖₂/b)) is composed as the Laplace event of
    the same ε = Δ/b: basic and tight totals agree with two Laplace releases; a subsampled one is refused."""
    l2 = NoiseEvent("l2-laplace", 2.0, 1.0)
    assert l2.ratio == 0.5 and implied_epsilon((l2, l2), 0.0) == 1.0
    laplace = PrivacyAccountant(epsilon=20.0, delta=1e-6)
    pure = PrivacyAccountant(epsilon=20.0, delta=1e-6)
    for _ in range(30):
        laplace.record("laplace", 0.5, noise=(NoiseEvent("laplace", 2.0, 1.0),))
        pure.record("l2", 0.5, noise=(l2,))
    assert pure.tight_epsilon(1e-6) == laplace.tight_epsilon(1e-6) < pure.spent[0] == 15.0
    with pytest.raises(ValueError, match="sampling_rate"):
        NoiseEvent("l2-laplace", 2.0, 1.0, sampling_rate=0.5)

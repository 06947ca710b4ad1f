"""The accountant verifies a stated noise description instead of trusting it: composed alone,
the events must give the declared ε at the declared δ, else ValueError before anything is
recorded; every mechanism of the library describes its own noise consistently."""

import sys
from pathlib import Path

import pytest

from pm_private import PrivacyAccountant
from pm_private.privacy.budget import NOISE_ATOL, NOISE_RTOL, NoiseEvent, implied_epsilon
from pm_private.privacy.primitives import gaussian_noise_event, gaussian_scale, laplace_noise_event
from pm_private.privacy.release import release_guard

sys.path.insert(0, str(Path(__file__).parents[1] / "contracts"))
from cards import CARDS  # noqa: E402

HOSTILE = NoiseEvent("gaussian", 100.0, 1.0)  # σ/Δ = 100: ε ≈ 0.05 at δ = 1e-6, not 5


def _untouched(acct: PrivacyAccountant) -> None:
    assert acct.spent == (0.0, 0.0) and acct.history == () and acct.ledger == ()


@pytest.mark.parametrize("how", ["record", "charge", "reserve", "release_guard"])
def test_a_hostile_noise_description_is_refused_before_anything_is_recorded(how):
    acct = PrivacyAccountant(1.0, 1e-5)
    with pytest.raises(ValueError) as info:
        if how == "record":
            acct.record("hostile", 5.0, 1e-6, noise=(HOSTILE,))
        elif how == "reserve":
            acct.reserve("hostile", 5.0, 1e-6, noise=(HOSTILE,))
        else:
            guard = acct.charge if how == "charge" else lambda *a, **k: release_guard(acct, *a, **k)
            with guard("hostile", 5.0, 1e-6, noise=(HOSTILE,)):
                pytest.fail("the body ran")
    message = str(info.value)
    assert "'hostile'" in message and "ε = 5" in message and "nothing was recorded" in message
    assert f"ε = {implied_epsilon((HOSTILE,), 1e-6):.6g}" in message  # the implied ε, named
    _untouched(acct)


def test_the_audit_case_spends_nothing_and_leaves_the_tight_totals_alone():
    acct = PrivacyAccountant(1.0, 1e-5)
    for epsilon in (5.0, 3.0):
        with pytest.raises(ValueError, match="implies ε = 0.0"):
            acct.record("hostile", epsilon, 1e-6, noise=(HOSTILE,))
    _untouched(acct)
    assert acct.tight_epsilon() == 0.0
    with pytest.raises(ValueError, match="implies"):
        acct.cost(5.0, 1e-6, noise=(HOSTILE,))


@pytest.mark.parametrize(
    "epsilon, events",
    [
        (0.5, (laplace_noise_event(1.0, 1.0),)),  # Laplace implies more: ε = Δ/b = 1
        (2.0, (laplace_noise_event(1.0, 1.0),)),  # ... or less
        (1.0, (NoiseEvent("gaussian", 1.0, 1.0),)),  # σ/Δ = 1 implies ε ≈ 4.9 at 1e-6
        (1.0, (gaussian_noise_event(1, 1.0, 1.0, 1e-6),) * 2),  # two releases' noise stated as one
    ],
)
def test_more_or_less_than_declared_is_refused(epsilon, events):
    acct = PrivacyAccountant(10.0, 1e-5)
    with pytest.raises(ValueError, match="implies"):
        acct.record("x", epsilon, 1e-6, noise=events)
    _untouched(acct)


def test_gaussian_noise_at_delta_zero_is_refused():
    acct = PrivacyAccountant(10.0)
    with pytest.raises(ValueError, match="implies ε = inf"):
        acct.record("x", 1.0, noise=(gaussian_noise_event(1, 1.0, 1.0, 1e-6),))
    _untouched(acct)


def test_consistent_descriptions_are_accepted_within_the_tolerance():
    acct = PrivacyAccountant(100.0, 1e-3)
    split = [laplace_noise_event(2.0, share) for share in (0.6, 0.35, 0.05)]
    acct.record("laplace plan", 1.0, noise=split)  # Σ Δ/b = 1 up to float rounding
    implied = implied_epsilon((gaussian_noise_event(9, 3.0, 1.0, 1e-6),), 1e-6)
    for declared in (implied * (1 + 0.9 * NOISE_RTOL), implied * (1 - 0.9 * NOISE_RTOL)):
        acct.record("gaussian", declared, 1e-6, noise=(gaussian_noise_event(9, 3.0, 1.0, 1e-6),))
    for declared in (implied * (1 + 2 * NOISE_RTOL), implied * (1 - 2 * NOISE_RTOL)):
        with pytest.raises(ValueError, match="implies"):
            acct.record("gaussian", declared, 1e-6, noise=(gaussian_noise_event(9, 3.0, 1.0, 1e-6),))
    assert len(acct.ledger) == 3


@pytest.mark.parametrize("epsilon", [0.01, 0.1, 1.0, 10.0])
@pytest.mark.parametrize("delta", [1e-5, 1e-9])
def test_the_library_gaussian_description_gives_its_epsilon_and_states_no_more_noise_than_drawn(epsilon, delta):
    event = gaussian_noise_event(4, 2.0, epsilon, delta)
    assert implied_epsilon((event,), delta) == pytest.approx(epsilon, rel=1e-4)
    assert event.scale <= gaussian_scale(4, 2.0, epsilon, delta)  # pessimistic: never more noise than drawn
    assert event.sensitivity >= 2.0
    PrivacyAccountant(100.0, 1e-3).record("gaussian", epsilon, delta, noise=(event,))


def test_every_mechanism_describes_its_own_noise_consistently():
    """Every card with an accountant runs once; each ledger entry that states noise gives its ε."""
    stated = 0
    for card in CARDS:
        if not card.takes_accountant:
            continue
        acct = PrivacyAccountant(epsilon=1e5, delta=1e-3)  # ε up to 1e4 (the SGD's valid call)
        card.run(acct, neighbour=0)
        assert acct.ledger, card.name
        for entry in acct.ledger:
            if entry.noise:
                stated += 1
                implied = implied_epsilon(entry.noise, entry.delta)
                assert abs(implied - entry.epsilon) <= NOISE_RTOL * entry.epsilon + NOISE_ATOL, card.name
    assert stated >= 4  # linear Laplace and Gaussian, logistic, Poisson

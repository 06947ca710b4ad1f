"""Data-perturbation DP-ERM baseline (paper 002, SPEC §6): calibration, sensitivity, noise, limits."""

import numpy as np
import pytest
from scipy import stats
from scipy.special import expit

from pm_private.logistic.data_perturbation import (
    MULTIPLIER_RANGE,
    accounted_epsilon,
    calibrate_noise_multiplier,
    data_perturbation_sgd,
    perturbed_batch,
)
from pm_private.privacy.accountant import PrivacyAccountant
from pm_private.privacy.noise import as_noise_source
from pm_private.privacy.primitives import project_rows

SETTING = dict(n=200, batch_size=50, steps=12)


def _data(n=200, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = (rng.uniform(size=n) < expit(X @ np.array([3.0, -2.0, 0.0]))).astype(int)
    return X, y


def test_noise_multiplier_is_the_smallest_meeting_epsilon():
    z = calibrate_noise_multiplier(epsilon=1.0, delta=1e-5, **SETTING)
    assert accounted_epsilon(z, delta=1e-5, **SETTING) <= 1.0
    assert accounted_epsilon(z * 0.99, delta=1e-5, **SETTING) > 1.0
    # more steps or a larger batch need more noise for the same ε
    assert calibrate_noise_multiplier(epsilon=1.0, delta=1e-5, n=200, batch_size=50, steps=48) > z


@pytest.mark.parametrize("intercept", [True, False])
def test_record_sensitivity_is_twice_the_radius(intercept):
    """‖u − u'‖₂ ≤ 2R for u = y[x, 1] with clipped x: random pairs, and u' = −u attains it."""
    rng = np.random.default_rng(1)
    C = 1.5
    R = np.sqrt(C**2 + 1) if intercept else C

    def record(x, y):
        x = project_rows(x, C, 2)
        return y[:, None] * (np.hstack([x, np.ones((len(x), 1))]) if intercept else x)

    x1, x2 = rng.normal(size=(5000, 3)) * 3, rng.normal(size=(5000, 3)) * 3
    y1, y2 = rng.choice([-1.0, 1.0], 5000), rng.choice([-1.0, 1.0], 5000)
    diff = np.linalg.norm(record(x1, y1) - record(x2, y2), axis=1)
    assert diff.max() <= 2 * R + 1e-12
    far = record(x1, y1), record(x1, -y1)  # the same features, the other label: u' = −u
    assert np.linalg.norm(far[0] - far[1], axis=1).max() == pytest.approx(2 * R)
    result = data_perturbation_sgd(*_data(), epsilon=1.0, delta=1e-5, x_bound=C, fit_intercept=intercept, rng=0)
    assert result.sensitivity == pytest.approx(2 * R)
    assert result.noise_std == pytest.approx(result.noise_multiplier * 2 * R)


def test_batch_noise_is_fresh_gaussian_and_sampling_without_replacement():
    records = np.arange(40.0).reshape(20, 2)
    source = as_noise_source(2)
    draws = []
    for _ in range(400):
        batch, noisy = perturbed_batch(records, 5, 3.0, np.ones(20, bool), source)
        assert len(set(batch.tolist())) == 5
        draws.append((noisy - records[batch]) / 3.0)
    z = np.concatenate(draws).ravel()
    assert stats.kstest(z, "norm").pvalue > 1e-3
    # unnoised records (the influence variant) pass through exactly
    batch, noisy = perturbed_batch(records, 20, 3.0, np.zeros(20, bool), source)
    np.testing.assert_array_equal(noisy, records[batch])


def test_large_epsilon_approaches_non_private_accuracy():
    X, y = _data(n=600, seed=3)
    Xt, yt = _data(n=2000, seed=4)
    truth = (Xt @ np.array([3.0, -2.0, 0.0]) > 0).astype(int)
    loose = data_perturbation_sgd(X, y, epsilon=1e5, delta=1e-5, x_bound=5.0, epochs=20, rng=5)
    tight = data_perturbation_sgd(X, y, epsilon=0.3, delta=1e-5, x_bound=5.0, epochs=20, rng=5)
    assert np.mean(loose.predict(Xt) == truth) > 0.95
    assert loose.noise_std < tight.noise_std / 50
    assert np.mean(loose.predict(Xt) == yt) > np.mean(tight.predict(Xt) == yt)


def test_influence_threshold_variant_is_marked_not_private():
    X, y = _data()
    acct = PrivacyAccountant(5.0, 1e-3)
    result = data_perturbation_sgd(
        X, y, epsilon=1.0, delta=1e-5, x_bound=2.0, influence_threshold=2e-3, accountant=acct
    )
    assert result.private is False
    assert "NOT DP" in acct.ledger[0].label
    assert not hasattr(result, "noised_fraction")  # decided on the private data: not reported
    secure = data_perturbation_sgd(X, y, epsilon=1.0, delta=1e-5, x_bound=2.0)
    assert secure.private is True


@pytest.mark.parametrize(
    "change, message",
    [
        (dict(epsilon=0.0), "epsilon"),
        (dict(delta=0.0), "delta"),
        (dict(delta=1.0), r"delta must be in \(0, 1\)"),
        (dict(x_bound=-1.0), "x_bound"),
        (dict(batch_size=0), "batch_size"),
        (dict(batch_size=1000), "batch_size"),
        (dict(epochs=0), "epochs"),
        (dict(learning_rate=0.0), "learning_rate"),
        (dict(influence_threshold=-1.0), "influence_threshold"),
        (dict(learning_rate=1e10), r"learning_rate·l2 = 1e\+07 > 2"),
        (dict(learning_rate=1e300), "learning_rate"),
        (dict(epsilon=1e-3, epochs=1), r"epsilon = 0.001 is out of reach for n = 200"),
        (dict(X=[["a", "b", "c"]] * 200), "X must be numeric"),
        (dict(y=["yes"] * 200), "y must be numeric"),
        (dict(fit_intercept="no"), "fit_intercept"),
        (dict(fit_intercept=0), "fit_intercept"),
        (dict(batch_size="a"), "batch_size"),
        (dict(batch_size=2.5), "batch_size"),
        (dict(epochs=-1), "epochs"),
        (dict(epochs=True), "epochs"),
        (dict(l2=float("nan")), "l2"),
        (dict(l2=-1.0), "l2"),
        (dict(learning_rate="a"), "learning_rate"),
        (dict(influence_threshold=float("nan")), "influence_threshold"),
        (dict(influence_threshold=0.0), "influence_threshold"),
        (dict(x_bound=float("nan")), "x_bound"),
        (dict(epsilon=float("inf")), "epsilon"),
        (dict(delta="a"), "delta"),
    ],
)
def test_bad_input_raises_before_spending(change, message):
    X, y = _data()
    params = dict(X=X, y=y, epsilon=1.0, delta=1e-5, x_bound=2.0)
    params.update(change)
    acct = PrivacyAccountant(10.0, 0.5)
    with pytest.raises(ValueError, match=message) as info:
        data_perturbation_sgd(params.pop("X"), params.pop("y"), **params, accountant=acct, rng=0)
    assert "could not convert" not in str(info.value) and "brentq" not in str(info.value)
    with pytest.raises(ValueError, match="labels"):
        data_perturbation_sgd(X, y + 1, epsilon=1.0, delta=1e-5, x_bound=2.0, accountant=acct)
    with pytest.raises(ValueError, match="NaN"):
        data_perturbation_sgd(np.where(X > 2, np.nan, X), y, epsilon=1.0, delta=1e-5, x_bound=2.0, accountant=acct)
    assert acct.spent == (0.0, 0.0) and not acct.ledger


@pytest.mark.parametrize("change", [dict(accountant="budget"), dict(rng="seed")])
def test_bad_accountant_or_rng_raises_before_spending(change):
    X, y = _data()
    acct = PrivacyAccountant(10.0, 0.5)
    params = dict(epsilon=1.0, delta=1e-5, x_bound=2.0, accountant=acct, rng=0) | change
    with pytest.raises(TypeError, match=next(iter(change))):
        data_perturbation_sgd(X, y, **params)
    assert acct.spent == (0.0, 0.0) and not acct.ledger


def test_predictions_clip_new_rows_to_the_training_ball():
    """The release maps new rows as its training rows were mapped: onto ‖x‖₂ ≤ x_bound."""
    X, y = _data()
    release = data_perturbation_sgd(X, y, epsilon=10.0, delta=1e-5, x_bound=2.0, epochs=2, rng=0)
    assert release.x_bound == 2.0
    far = np.array([[30.0, -40.0, 0.0], [0.3, 0.4, 0.0]])
    clipped = project_rows(far, 2.0, 2)
    np.testing.assert_allclose(release.decision_function(far), clipped @ release.coef + release.intercept)
    np.testing.assert_array_equal(release.predict(far), release.predict(clipped))
    np.testing.assert_allclose(release.predict_proba(far), release.predict_proba(clipped))
    with pytest.raises(ValueError, match="features"):
        release.predict(np.ones((2, 4)))
    with pytest.raises(ValueError, match="NaN"):
        release.predict(np.array([[np.nan, 0.0, 0.0]]))


def test_huge_epsilon_uses_the_smallest_multiplier_searched():
    assert calibrate_noise_multiplier(epsilon=1e6, delta=1e-5, **SETTING) == MULTIPLIER_RANGE[0]


def test_overflowing_iterates_are_refused_after_the_charge_never_returned():
    X, y = _data()
    acct = PrivacyAccountant(1e7, 0.5)
    with pytest.raises(ValueError, match="overflowed .* was charged"):
        data_perturbation_sgd(
            50 * X,
            y,
            epsilon=1e6,
            delta=1e-5,
            x_bound=10.0,
            learning_rate=1e308,
            l2=1e-308,
            epochs=1,
            accountant=acct,
            rng=0,
        )
    assert acct.spent == (1e6, 1e-5)  # noise was drawn: a retry is a new release


def test_a_person_with_several_rows_enters_once():
    """With ``unit`` one row per person runs (n persons: the step count follows them), the release
    and the ledger name the person, and the run equals the one on those rows by hand."""
    X, y = _data(300, seed=4)
    unit = np.repeat(np.arange(100), 3)  # 100 persons of 3 rows
    accountant = PrivacyAccountant(10.0, 1e-4)
    options = dict(epsilon=2.0, delta=1e-5, x_bound=3.0, batch_size=20, epochs=2)
    release = data_perturbation_sgd(X, y, unit=unit, accountant=accountant, rng=5, **options)
    assert release.unit == "person" and release.steps == 10  # ⌈2·100/20⌉
    assert accountant.history[0].neighbours == "replace-one person"
    source = as_noise_source(5)
    from pm_private.privacy.units import rows_kept_per_unit

    kept = rows_kept_per_unit(unit, source)
    assert np.unique(unit[kept]).size == 100
    by_hand = data_perturbation_sgd(X[kept], y[kept], rng=source, **options)
    np.testing.assert_array_equal(release.coef, by_hand.coef)
    with pytest.raises(ValueError, match="unit"):
        data_perturbation_sgd(X, y, unit=unit[:10], accountant=accountant, rng=5, **options)
    assert len(accountant.history) == 1

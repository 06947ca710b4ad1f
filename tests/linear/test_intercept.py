"""The intercept of the linear family: a constant column released with the statistics, the model's
``intercept`` and ``beta``, predictions, and the refusals at the seams."""

import warnings

import numpy as np
import pandas as pd
import pymc as pm
import pytest

from pm_private import PrivacyAccountant, linear_stats, release_linear_stats
from pm_private.linear import LinearStats, NoiseDominatedWarning, linear_model, predict_linear, release_signal_to_noise
from pm_private.linear.integrated import VALIDATED_GRAM_SNR
from pm_private.released import recorded_warnings

TRUE = np.array([2.0, 1.0, -1.0, 0.5])  # intercept, then the slopes


def _data(n=4000, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 3)) + [1.0, 0.0, -1.0], columns=["a", "b", "c"])
    y = TRUE[0] + X.to_numpy() @ TRUE[1:] + 0.5 * rng.normal(size=n)
    return X, y


def test_the_constant_column_holds_n_and_the_first_moments():
    X, y = _data()
    exact = linear_stats(X, y)
    assert exact.intercept and exact.d == 4 and exact.xx[0, 0] == len(y)
    np.testing.assert_allclose(exact.xx[0, 1:], X.sum(axis=0), rtol=1e-12)
    assert exact.xy[0] == pytest.approx(y.sum(), rel=1e-12)
    np.testing.assert_allclose(np.linalg.solve(exact.xx, exact.xy), TRUE, atol=0.05)  # OLS with an intercept
    # rows scaled onto the ball carry their constant, scaled with them: the regression is kept
    release = release_linear_stats(X, y, epsilon=500.0, delta=1e-6, x_bound=2.0, y_bound=20.0, rng=0)
    (record,) = release.releases
    assert record.intercept and release.intercept and release.feature_names == ("intercept", "a", "b", "c")
    factors = np.minimum(1.0, 2.0 / np.linalg.norm(X.to_numpy(), axis=1))
    assert release.xx[0, 0] == pytest.approx(factors @ factors, abs=5 * record.noise_scale)
    np.testing.assert_allclose(np.linalg.solve(release.xx, release.xy), TRUE, atol=0.1)
    assert "(intercept first)" in repr(release)


def test_the_gaussian_sensitivity_and_the_laplace_columns_count_the_constant():
    X, y = _data(200)
    with_constant = release_linear_stats(X, y, epsilon=1.0, delta=1e-6, x_bound=2.0, y_bound=3.0, rng=0)
    without = release_linear_stats(X, y, epsilon=1.0, delta=1e-6, x_bound=2.0, y_bound=3.0, rng=0, intercept=False)
    assert with_constant.releases[0].sensitivity / without.releases[0].sensitivity == pytest.approx(14 / 13)
    laplace = release_linear_stats(X, y, noise="laplace", epsilon=1.0, x_bound=2.0, y_bound=3.0, rng=0, clip_share=0.0)
    assert laplace.releases[0].sensitivities == pytest.approx((4 * 5 * 4.0 / 2, 2 * 4 * 6.0, 9.0))


def test_the_laplace_constant_must_lie_inside_the_bound_and_nothing_is_spent():
    X, y = _data(200)
    accountant = PrivacyAccountant(1.0)
    with pytest.raises(ValueError, match="x_bound must be at least 1 with intercept=True"):
        release_linear_stats(X, y, noise="laplace", epsilon=0.5, x_bound=0.5, y_bound=3.0, accountant=accountant)
    assert accountant.ledger == ()
    release_linear_stats(X, y, noise="laplace", epsilon=0.5, x_bound=0.5, y_bound=3.0, rng=0, intercept=False)


def test_seams_refuse_mixed_designs():
    X, y = _data(200)
    with pytest.raises(ValueError, match="cannot add statistics with an intercept column"):
        linear_stats(X, y) + LinearStats(np.eye(4), np.zeros(4), 1.0, 10)
    with pytest.raises(ValueError, match="X has a column named 'intercept'"):
        release_linear_stats(X.rename(columns={"a": "intercept"}), y, epsilon=1, delta=1e-6, x_bound=2, y_bound=3)
    release = release_linear_stats(X, y, epsilon=1.0, delta=1e-6, x_bound=2.0, y_bound=3.0, rng=0)
    with pytest.raises(ValueError, match="intercept=False disagrees with a release"):
        LinearStats(release.xx, release.xy, release.yy, release.n, release.releases, intercept=False)


@pytest.mark.slow
def test_the_model_names_the_intercept_and_predicts_with_it():
    X, y = _data()
    release = release_linear_stats(X, y, epsilon=50.0, delta=1e-6, x_bound=4.0, y_bound=12.0, rng=1)
    model = linear_model(release)
    assert list(model.coords["feature"]) == ["a", "b", "c"]
    assert list(model.coords["column"]) == ["intercept", "a", "b", "c"]
    with model:
        # PyMC's NUTS loads the compiled model from the disk cache; nutpie (PyMC's default where
        # installed) compiles it again on every call
        idata = pm.sample(
            300,
            tune=300,
            chains=1,
            random_seed=2,
            progressbar=False,
            compute_convergence_checks=False,
            nuts_sampler="pymc",
        )
    post = idata.posterior
    assert post["intercept"].dims == ("chain", "draw") and post["beta"].sizes["feature"] == 3
    estimate = np.r_[post["intercept"].mean().item(), post["beta"].mean(("chain", "draw")).values]
    np.testing.assert_allclose(estimate, TRUE, atol=0.15)
    new = X.iloc[:5]
    expected = estimate[0] + new.to_numpy() @ estimate[1:]
    np.testing.assert_allclose(predict_linear(idata, new)["mean"], expected, atol=0.2)
    # the coefficients alone cannot answer for a fit with an intercept: refused, not answered without it
    with pytest.raises(ValueError, match="the fit has an intercept"):
        predict_linear(post["beta"], new, stats=release)


def test_a_noise_dominated_release_warns_with_its_signal_to_noise():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(500, 5)) / np.sqrt(5)
    y = X @ rng.normal(size=5) + 0.5 * rng.normal(size=500)
    noisy = release_linear_stats(X, y, epsilon=0.15, delta=1e-6, x_bound=3.0, y_bound=3.0, rng=3)
    figures = release_signal_to_noise(noisy)
    assert figures["gram_snr"] < VALIDATED_GRAM_SNR
    with pytest.warns(NoiseDominatedWarning, match="gram_snr") as record:
        model = linear_model(noisy)
    warned = [str(w.message) for w in record if issubclass(w.category, NoiseDominatedWarning)]
    assert recorded_warnings(model) == warned  # the record print_summary repeats
    clear = release_linear_stats(
        rng.normal(size=(20_000, 5)), rng.normal(size=20_000), epsilon=3.0, delta=1e-6, x_bound=5.0, y_bound=4.0, rng=0
    )
    assert release_signal_to_noise(clear)["gram_snr"] > 1
    with warnings.catch_warnings():
        warnings.simplefilter("error", NoiseDominatedWarning)
        assert recorded_warnings(linear_model(clear)) == []
    with pytest.warns(NoiseDominatedWarning, match="1 of 2 statistics") as record:  # a batch warns once
        linear_model([noisy, clear])
    assert sum(issubclass(w.category, NoiseDominatedWarning) for w in record) == 1


def test_bare_draws_of_one_coefficient_are_used_as_they_are():
    """A plain array of draws names no columns: no intercept is guessed, whatever its width."""
    prediction = predict_linear(np.array([[1.0], [0.5]]), np.array([[2.0], [3.0]]))
    np.testing.assert_allclose(prediction["mean"], [1.5, 2.25])

"""The noise-aware logistic model: its variables, its likelihood, swapping statistics, predictions."""

import numpy as np
import pytest
import xarray as xr
from scipy import stats as sps
from scipy.special import expit

from pm_private import logistic_model, predict_logistic, release_logistic_stats
from pm_private.logistic import logistic_stat_moments, logistic_stats, set_logistic_stats

rng = np.random.default_rng(0)
X = rng.normal(size=(400, 2))
Y = (rng.uniform(size=400) < expit(X @ [1.0, -0.5] + 0.2)).astype(int)
RELEASE = release_logistic_stats(X, Y, epsilon=1.0, delta=1e-6, x_bound=3.0, rng=0)


def test_model_variables_and_data():
    model = logistic_model(RELEASE, feature_names=["a", "b"])
    assert {"beta", "intercept", "x_mean", "x_sd", "likelihood"} <= set(model.named_vars)
    assert list(model.coords["feature"]) == ["a", "b"]
    assert model["stats_n"].get_value() == 400
    assert model["x_bound"].get_value() == 3.0  # public, for the projection of new rows in predictions
    assert np.allclose(model["stats_noise_var"].get_value(), RELEASE.noise_variance())
    assert "intercept" not in logistic_model(RELEASE, intercept=False).named_vars


def test_likelihood_is_the_normal_of_the_moments_plus_noise():
    """The likelihood at a point equals log N(r | n·m, n·V + diag(v)) evaluated independently (d = 1,
    whose covariate scale is a half-normal standard deviation)."""
    release = release_logistic_stats(X[:, :1], Y, epsilon=1.0, delta=1e-6, x_bound=3.0, rng=1)
    model = logistic_model(release)
    point = {"beta": np.array([0.8]), "intercept": np.array(0.1), "x_mean": np.array([0.05])}
    point["x_sd_log__"] = np.log([1.3])
    (likelihood,) = model.logp(vars=[model["likelihood"]], sum=False)
    value = model.compile_fn(likelihood, point_fn=True, mode="FAST_COMPILE")(point)
    mean, cov = (m.eval(mode="FAST_COMPILE") for m in logistic_stat_moments([0.8], 0.1, [0.05], [[1.3**2]], 1))
    r = np.array([release.x_sum[0], release.y_sum, release.xx[0, 0], release.yx[0]])
    expected = sps.multivariate_normal(400 * mean, 400 * cov + np.diag(release.noise_variance())).logpdf(r)
    assert value == pytest.approx(expected, rel=1e-9)


def test_set_logistic_stats_swaps_the_data_and_the_naive_model_has_no_noise():
    model = logistic_model(RELEASE)
    exact = logistic_stats(X[:100], Y[:100], x_bound=3.0)
    set_logistic_stats(exact, model)
    assert model["stats_n"].get_value() == 100 and not model["stats_noise_var"].get_value().any()
    set_logistic_stats(RELEASE, model, noise_aware=False)
    assert not model["stats_noise_var"].get_value().any()
    with pytest.raises(ValueError, match="stats"):
        set_logistic_stats(logistic_stats(np.ones((3, 3)), [0, 1, 1]), model)
    with pytest.raises(ValueError, match="stats"):
        logistic_model("not statistics")
    with pytest.raises(ValueError, match="beta_sigma"):
        logistic_model(RELEASE, beta_sigma=0.0)


def _posterior(beta, intercept, x_bound):
    draws = xr.Dataset(
        {
            "beta": (("chain", "draw", "feature"), beta[None]),
            "intercept": (("chain", "draw"), intercept[None]),
        }
    )
    return xr.DataTree.from_dict({"posterior": draws, "constant_data": xr.Dataset({"x_bound": x_bound})})


def test_predict_averages_the_probabilities_of_the_draws_after_projection():
    beta = np.array([[1.0, 0.0], [3.0, 0.0]])
    intercept = np.array([0.0, 1.0])
    rows = np.array([[0.5, 0.0], [10.0, 0.0]])
    table = predict_logistic(_posterior(beta, intercept, 2.0), rows, interval=0.5)
    projected = np.array([[0.5, 0.0], [2.0, 0.0]])
    p = expit(projected @ beta.T + intercept)
    assert np.allclose(table["mean"], p.mean(axis=1))
    assert np.all(table["lower"] <= table["mean"]) and np.all(table["mean"] <= table["upper"])
    with pytest.raises(ValueError, match="X"):
        predict_logistic(_posterior(beta, intercept, 2.0), np.ones((2, 3)))
    with pytest.raises(ValueError, match="interval"):
        predict_logistic(_posterior(beta, intercept, 2.0), rows, interval=1.0)
    for bad in (np.nan, np.inf, 0.0, -1.0):  # a given radius must be one: NaN used to skip the projection
        with pytest.raises(ValueError, match="x_bound"):
            predict_logistic(_posterior(beta, intercept, 2.0), rows, x_bound=bad)
    with pytest.raises(ValueError, match="non-finite"):
        predict_logistic(_posterior(beta, intercept, 2.0), np.array([[np.nan, 0.0]]))

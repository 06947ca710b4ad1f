"""The noise-aware regression model's released statistics are an observed variable.

- its log-density is the noise-aware likelihood plus the public rows' exact likelihood, built here
  from the module's density functions (spectral, dense, clipping modelled, batched), to 1e-10;
- ``set_linear_stats`` swaps the observed statistics without recompiling;
- its random draws have the mean n·C and covariance n·V(C) + diag(v) its log-density assumes
  (whitened by the model's own covariance: mean 0 and identity covariance);
- prior and posterior predictive draws of the statistics, ArviZ's predictive plot, and one
  observation per fit in the log-likelihood (ArviZ's LOO says the pointwise value is the sum).
"""

from __future__ import annotations

import warnings

import arviz as az
import numpy as np
import pymc as pm
import pytensor.tensor as pt
import pytest

from pm_private.linear import (
    linear_model,
    linear_stats,
    release_linear_stats,
    set_linear_stats,
)
from pm_private.linear.noise_aware import (
    augmented_cholesky,
    exact_stats_logp,
    noise_aware_arrays,
    noisy_stats_logp,
    projected_second_moment,
    projection_draws,
)
from pm_private.linear.stats import stat_pairs

C_BACKEND = {"mode": "CVM"}
D = 2
RNG = np.random.default_rng(5)
X = RNG.uniform(-1, 1, (400, D))
Y = X @ [0.6, -0.4] + 0.3 * RNG.normal(size=400)
GAUSS = release_linear_stats(X, Y, epsilon=1.0, delta=1e-5, x_bound=1.5, y_bound=1.5, rng=0, intercept=False)
LAPLACE = release_linear_stats(X, Y, noise="laplace", epsilon=2.0, x_bound=1.0, y_bound=1.5, rng=1, intercept=False)
X_COV = np.array([[0.35, 0.05], [0.05, 0.3]])


def _reference_logp(model, stats, clipping):
    """The likelihood as a PyTensor expression of the model's β, λ and Lx, from the density functions."""
    arrays = noise_aware_arrays(stats)
    chol_c = augmented_cholesky(model["beta"], model["noise_precision"], model["x_cov_chol"])
    # Rows scaled with their responses carry residuals cᵢeᵢ: residual variance σ²·Σcᵢ²/n.
    share = arrays["private_residual_share"]
    chol_private = augmented_cholesky(model["beta"], model["noise_precision"] / share, model["x_cov_chol"])
    if clipping == "model":
        release = stats.releases[0]
        moment = projected_second_moment(chol_c, projection_draws(D), release.x_bound, release.y_bound, release.x_clip)
        chol_private = pt.linalg.cholesky(moment)
    private = noisy_stats_logp(chol_private, arrays["private"], arrays["private_n"], arrays["noise_var"], D)
    return private + exact_stats_logp(chol_c, arrays["exact"], arrays["exact_n"], D)


@pytest.mark.parametrize(
    ("stats", "kwargs"),
    [
        (GAUSS, {}),
        (LAPLACE, {}),
        (linear_stats(X[:40], Y[:40], intercept=False) + GAUSS, {}),
        (GAUSS, {"clipping": "model"}),
    ],
    ids=["spectral", "dense", "public-rows", "clipping"],
)
def test_logp_is_the_noise_aware_likelihood(stats, kwargs):
    model = linear_model(stats, x_cov=X_COV, **kwargs)
    assert model.observed_RVs == [model["likelihood"]] and model.potentials == []
    assert model.named_vars_to_dims["likelihood"] == ("statistic",)
    total = model.compile_logp(mode="FAST_COMPILE")
    prior = model.compile_logp(vars=model.free_RVs, mode="FAST_COMPILE")
    (expression,) = model.replace_rvs_by_values([_reference_logp(model, stats, kwargs.get("clipping"))])
    reference = model.compile_fn(expression, inputs=model.value_vars, on_unused_input="ignore", mode="FAST_COMPILE")
    rng = np.random.default_rng(0)
    start = model.initial_point()
    for _ in range(4):
        point = {key: value + 0.4 * rng.normal(size=np.shape(value)) for key, value in start.items()}
        expected = prior(point) + reference(point)
        np.testing.assert_allclose(total(point), expected, rtol=1e-10)


def test_set_stats_swaps_the_observation_without_recompiling():
    other = release_linear_stats(
        X[:300], Y[:300], epsilon=0.5, delta=1e-5, x_bound=1.5, y_bound=1.5, rng=2, intercept=False
    )
    model = linear_model(GAUSS, x_cov="release")
    logp = model.compile_logp(mode="FAST_COMPILE")
    point = model.initial_point()
    before = logp(point)
    set_linear_stats(other, model)
    assert model["likelihood_private"].get_value()[-1] == pytest.approx(other.yy)
    fresh = linear_model(other, x_cov="release")
    np.testing.assert_allclose(logp(point), fresh.compile_logp(mode="FAST_COMPILE")(point), rtol=1e-12)
    assert logp(point) != before


def _model_moments(model, point, stats):
    """Mean n·C[a, b] and covariance n·(C_ac·C_bd + C_ad·C_bc) + diag(v) the likelihood assumes."""
    arrays = noise_aware_arrays(stats)
    share = 1.0 if "likelihood_x_bound" in model.named_vars else arrays["private_residual_share"]
    chol = augmented_cholesky(point["beta"], point["noise_precision"] / share, np.linalg.cholesky(X_COV)).eval()
    second = chol @ chol.T
    if "likelihood_x_bound" in model.named_vars:
        release = stats.releases[0]
        second = projected_second_moment(
            chol, projection_draws(D), release.x_bound, release.y_bound, release.x_clip
        ).eval()
    a, b = stat_pairs(D)
    n = arrays["private_n"]
    cov = n * (second[np.ix_(a, a)] * second[np.ix_(b, b)] + second[np.ix_(a, b)] * second[np.ix_(b, a)])
    return n * second[a, b], cov + np.diag(arrays["noise_var"])


@pytest.mark.parametrize(("stats", "kwargs"), [(GAUSS, {}), (LAPLACE, {"clipping": "model"})], ids=["gauss", "laplace"])
def test_random_draws_have_the_moments_of_the_likelihood(stats, kwargs):
    model = linear_model(stats, x_cov=X_COV, **kwargs)
    beta = np.array([0.4, -0.2])
    point = {"beta": beta, "noise_precision": np.float64(8.0), "prior_precision": 1.0}
    fixed = pm.do(model, point)
    draws = pm.draw(fixed["likelihood"], draws=6000, random_seed=3)
    mean, cov = _model_moments(model, {"beta": beta, "noise_precision": 8.0}, stats)
    white = np.linalg.solve(np.linalg.cholesky(cov), (draws - mean).T).T  # N(0, I) under the model
    k = mean.size
    assert np.abs(white.mean(axis=0)).max() < 4.5 / np.sqrt(len(draws))
    sample_cov = np.cov(white.T)
    # entries of a sample covariance of N(0, I) have s.d. about √(2/N) on the diagonal, √(1/N) off it
    assert np.abs(sample_cov - np.eye(k)).max() < 5.0 * np.sqrt(2.0 / len(draws))


def test_prior_and_posterior_predictive_of_the_statistics():
    batched = linear_model([GAUSS, GAUSS], x_cov="release")
    assert batched.named_vars_to_dims["likelihood"] == ("fit", "statistic")
    model = linear_model(GAUSS, x_cov="release")
    with model:
        trace = pm.sample_prior_predictive(draws=30, random_seed=1, compile_kwargs=C_BACKEND)
    predictive = trace.prior_predictive["likelihood"]
    assert predictive.dims == ("chain", "draw", "statistic")
    assert list(predictive.coords["statistic"].values) == [
        "xx[x0,x0]",
        "xx[x0,x1]",
        "xx[x1,x1]",
        "xy[x0]",
        "xy[x1]",
        "yy",
    ]
    trace["posterior"] = trace["prior"]  # prior draws stand in for posterior draws
    with model:
        predicted = pm.sample_posterior_predictive(trace, random_seed=2, progressbar=False, compile_kwargs=C_BACKEND)
        pm.compute_log_likelihood(trace, progressbar=False, compile_kwargs=C_BACKEND)
    assert predicted.posterior_predictive["likelihood"].shape == (1, 30, 6)
    assert np.isfinite(predicted.posterior_predictive["likelihood"].values).all()
    import matplotlib

    matplotlib.use("Agg")
    az.plot_ppc_dist(predicted)
    # one observation (the release): ArviZ's LOO says that its pointwise value is the sum
    assert trace.log_likelihood["likelihood"].dims == ("chain", "draw")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        az.loo(trace)
    assert any("point-wise LOO is the same" in str(w.message) for w in caught)

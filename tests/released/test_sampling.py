"""The covariate model's partial-correlation parametrisation and the Laplace-started NUTS step."""

import numpy as np
import pymc as pm
import pytest
from scipy import stats as sps

from pm_private.logistic import logistic_model, logistic_stats, set_logistic_stats
from pm_private.released import (
    laplace_approximation,
    laplace_covariance,
    laplace_nuts,
    laplace_restart,
    laplace_start,
)
from pm_private.released.covariates import lkj_cholesky, lkj_partial_shapes, partial_correlation_cholesky


def test_partial_correlation_cholesky_is_a_correlation_factor():
    c = 0.6
    two = partial_correlation_cholesky(np.array([c]), 2).eval()
    assert np.allclose(two, [[1.0, 0.0], [c, np.sqrt(1 - c**2)]])
    partial = np.random.default_rng(0).uniform(-0.9, 0.9, size=10)
    chol = partial_correlation_cholesky(partial, 5).eval()
    assert np.allclose(np.triu(chol, 1), 0.0) and np.all(np.diag(chol) > 0)
    assert np.allclose(np.diag(chol @ chol.T), 1.0)
    assert np.allclose(chol[1:, 0], partial[[0, 1, 3, 6]])  # first column: the correlations with x0


def test_covariate_prior_is_lkj_times_half_normal():
    """Every correlation of LKJ(η) in d dimensions has (r + 1)/2 ~ Beta(η − 1 + d/2, η − 1 + d/2)
    (Lewandowski, Kurowicka & Joe 2009); only the first column is a partial correlation itself."""
    d, eta = 4, 1.5
    assert np.allclose(lkj_partial_shapes(d, eta), eta + (d - 2 - np.tril_indices(d, -1)[1]) / 2)
    with pm.Model() as model:
        chol = lkj_cholesky(d, 2.0, eta)
    assert {"x_cov", "x_corr"}.isdisjoint(model.named_vars)  # nuisance, not recorded
    cov = pm.draw(chol @ chol.T, draws=3000, random_seed=3)
    sd = np.sqrt(np.diagonal(cov, axis1=1, axis2=2))
    corr = cov / (sd[:, :, None] * sd[:, None, :])
    shape = eta - 1 + d / 2
    for i, j in [(1, 0), (2, 1), (3, 2), (3, 1)]:
        assert sps.kstest(0.5 * (corr[:, i, j] + 1), sps.beta(shape, shape).cdf).pvalue > 1e-3
    assert sps.kstest(sd[:, 2], sps.halfnorm(scale=2.0).cdf).pvalue > 1e-3
    assert np.allclose(np.diagonal(corr, axis1=1, axis2=2), 1.0)


def test_the_partial_correlations_are_stored_as_correlations_with_the_beta_density():
    """``x_partial_corr`` holds c ∈ (−1, 1), not (c + 1)/2: at d = 2 it is the correlation of Σx,
    and in the sampler's space (logit((c + 1)/2)) its log-density is that of (c + 1)/2 ~ Beta(b, b)
    in its log-odds space, so NUTS sees the same posterior as with a Beta variable."""
    with pm.Model() as model:
        chol = lkj_cholesky(2, 1.0, 2.0)
    draws = pm.draw([model["x_partial_corr"], chol], draws=500, random_seed=1)
    cov = draws[1] @ np.swapaxes(draws[1], 1, 2)
    corr = cov[:, 1, 0] / np.sqrt(cov[:, 0, 0] * cov[:, 1, 1])
    np.testing.assert_allclose(draws[0][:, 0], corr, rtol=1e-12, atol=1e-12)
    assert draws[0].min() < -0.3 and draws[0].max() > 0.3
    d, eta = 4, 1.5
    shapes = lkj_partial_shapes(d, eta)
    with pm.Model() as ours:
        lkj_cholesky(d, 1.0, eta)
    with pm.Model() as beta:
        pm.Beta("u", shapes, shapes, shape=shapes.size)
    z = np.random.default_rng(2).normal(scale=2.0, size=shapes.size)
    (value_var,) = [v for v in ours.value_vars if v.name.startswith("x_partial_corr")]
    logp_ours = ours.compile_logp(vars=[ours["x_partial_corr"]], sum=False)
    logp_beta = beta.compile_logp(sum=False)
    point = {value_var.name: z, **{v.name: np.zeros(d) for v in ours.value_vars if v is not value_var}}
    np.testing.assert_allclose(logp_ours(point)[0], logp_beta({"u_logodds__": z})[0], rtol=1e-13, atol=1e-13)


def test_laplace_covariance_of_a_gaussian_is_exact():
    rng = np.random.default_rng(1)
    a = rng.normal(size=(4, 4))
    precision = a @ a.T + 4 * np.eye(4)
    mean = rng.normal(size=4)

    def logp_dlogp(x):
        r = x - mean
        return -0.5 * r @ precision @ r, -precision @ r

    mode, cov = laplace_covariance(logp_dlogp, np.zeros(4))
    assert np.allclose(mode, mean, atol=1e-5)
    assert np.allclose(cov, np.linalg.inv(precision), rtol=1e-4, atol=1e-8)


def test_laplace_nuts_starts_the_dense_adaptation_at_the_mode():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(3000, 2))
    y = (rng.uniform(size=3000) < 1 / (1 + np.exp(-(X @ [1.0, -0.5])))).astype(int)
    model = logistic_model(logistic_stats(X, y, x_bound=5.0))
    with model:
        step = laplace_nuts(target_accept=0.85, compile_kwargs={"mode": "CVM"})
        names = [v.name for v in model.continuous_value_vars]
        assert names[0] == "beta"  # the first two coordinates of the raveled mode
        beta = step.potential._initial_mean[:2]
        assert step.target_accept == 0.85
        assert step.potential._initial_weight == 100.0
        assert np.all(np.linalg.eigvalsh(step.potential._initial_cov) > 0)
        idata = pm.sample(30, tune=30, step=step, chains=1, progressbar=False, random_seed=0)
    assert np.allclose(beta, [1.0, -0.5], atol=0.2)
    assert idata.posterior["beta"].shape == (1, 30, 2)
    y2 = (rng.uniform(size=3000) < 1 / (1 + np.exp(-(X @ [-0.5, 1.5])))).astype(int)
    set_logistic_stats(logistic_stats(X, y2, x_bound=5.0), model)
    assert laplace_restart(step, model) is step
    assert np.allclose(step.potential._initial_mean[:2], [-0.5, 1.5], atol=0.2)
    start = laplace_start(step, model)
    assert set(start) == {rv.name for rv in model.free_RVs}
    assert np.allclose(start["beta"], step.potential._initial_mean[:2])
    assert np.all(start["x_sd"] > 0) and np.all(np.abs(start["x_partial_corr"]) < 1)
    with model:
        idata = pm.sample(5, tune=5, step=step, chains=1, progressbar=False, random_seed=0, initvals=start)
    assert np.all(np.isfinite(idata.posterior["beta"].values))
    with pytest.raises(ValueError, match="target_accept"), model:
        laplace_nuts(target_accept=1.0)


def test_laplace_approximation_is_exact_for_a_gaussian_posterior():
    """μ ~ N(0, 1), yᵢ ~ N(μ, 1): the posterior is N(Σy/(n + 1), 1/(n + 1)); a positive variable
    comes back on its own scale, and the model's data travel in constant_data."""
    y = np.random.default_rng(0).normal(1.0, 1.0, 24)
    with pm.Model(coords={"obs": np.arange(24)}) as model:
        scale = pm.Data("prior_scale", 1.0)
        mu = pm.Normal("mu", 0.0, scale)
        pm.HalfNormal("spread", 1.0)
        pm.Deterministic("twice", 2 * mu)
        pm.Normal("y", mu, 1.0, observed=y, dims="obs")
    idata = laplace_approximation(model, draws=20_000, chains=2, random_seed=1)
    posterior = idata["posterior"]
    assert posterior.sizes == {"chain": 2, "draw": 20_000}
    assert set(posterior.data_vars) == {"mu", "spread", "twice"}
    draws = posterior["mu"].values.ravel()
    sd = 1 / np.sqrt(25)
    assert abs(draws.mean() - y.sum() / 25) < 4 * sd / np.sqrt(draws.size)
    assert abs(draws.std() / sd - 1) < 0.02
    assert (posterior["spread"].values > 0).all()
    np.testing.assert_allclose(posterior["twice"].values, 2 * posterior["mu"].values)
    assert float(idata["constant_data"]["prior_scale"]) == 1.0
    with pytest.raises(ValueError, match="draws"):
        laplace_approximation(model, draws=0)
    with pm.Model() as discrete:
        pm.Poisson("k", 3.0)
    with pytest.raises(ValueError, match="continuous"):
        laplace_approximation(discrete)

"""The transforms of pm_private.released.reparametrisation against the densities they stand for."""

import warnings

import numpy as np
import pymc as pm
import pytensor.tensor as pt
import scipy.stats as sps

from pm_private.released.reparametrisation import centred_intercept, random_walk, whitened_normal

RNG = np.random.default_rng(0)
A = RNG.normal(size=(4, 4))
CHOL = np.linalg.cholesky(A @ A.T + 4 * np.eye(4))  # [[l00, 0], [l, L]] of a design [1, x]


def _logp(model, point):
    return model.compile_logp()(point)


def test_whitened_coefficients_have_the_density_of_the_whitened_prior():
    """(α, β) ~ N(0, diag(s_α², s²)) moved to γ = Lxᵀ(α, β): the density N(0, LxᵀDLx) of γ."""
    with pm.Model() as model:
        precision = pm.Gamma("precision", 2.0, 2.0)
        sd = pt.repeat(1.0 / pt.sqrt(precision)[None], 3)
        beta = whitened_normal("beta", sd, pt.as_tensor(CHOL[1:, 1:]))
        centred_intercept("intercept", 2.5, beta, pt.as_tensor(CHOL[1:, 0]), pt.as_tensor(CHOL[0, 0]))
    assert [v.name for v in model.value_vars] == ["precision_log__", "beta_whitened__", "intercept_centred__"]
    for _ in range(3):
        gamma = RNG.normal(size=4)
        log_precision = RNG.normal()
        point = {"precision_log__": log_precision, "beta_whitened__": gamma[1:], "intercept_centred__": gamma[0]}
        precision = np.exp(log_precision)
        cov = CHOL.T @ np.diag([2.5**2, *np.full(3, 1 / precision)]) @ CHOL
        expected = sps.multivariate_normal(np.zeros(4), cov).logpdf(gamma)
        expected += sps.gamma(2.0, scale=0.5).logpdf(precision) + log_precision
        np.testing.assert_allclose(_logp(model, point), expected, rtol=1e-8)
    # The posterior holds α and β themselves: (α, β) = Lx⁻ᵀγ.
    fn = model.compile_fn(model.unobserved_value_vars, inputs=model.value_vars, point_fn=False)
    values = dict(zip([v.name for v in model.unobserved_value_vars], fn(*point.values()), strict=True))
    np.testing.assert_allclose(np.r_[values["intercept"], values["beta"]], np.linalg.solve(CHOL.T, gamma))


def test_whitened_prior_draws_are_the_prior():
    with pm.Model() as model:
        beta = whitened_normal("beta", pt.as_tensor([1.0, 2.0, 0.5]), pt.as_tensor(CHOL[1:, 1:]))
        centred_intercept("intercept", 3.0, beta, pt.as_tensor(CHOL[1:, 0]), pt.as_tensor(CHOL[0, 0]))
    beta, alpha = pm.draw([model["beta"], model["intercept"]], draws=4000, random_seed=1)
    for j, sd in enumerate([1.0, 2.0, 0.5]):
        assert sps.kstest(beta[:, j], sps.norm(scale=sd).cdf).pvalue > 1e-3
    assert sps.kstest(alpha, sps.norm(scale=3.0).cdf).pvalue > 1e-3


def test_random_walk_is_non_centred_gaussian_walk():
    """The value z is N(0, 1) whatever the step; the walk is x₀ = μ + s₀z₀, xⱼ = xⱼ₋₁ + τzⱼ."""
    with pm.Model(coords={"cell": ["a", "b"], "interval": np.arange(5)}) as model:
        random_walk("walk", np.array([[0.5], [-1.0]]), 2.0, 1.5, ("cell", "interval"), (2, 5))
    assert [v.name for v in model.free_RVs] == ["walk_step", "walk"]
    z = RNG.normal(size=(2, 5))
    log_step = 0.3
    point = {"walk_step_log__": log_step, "walk_z__": z}
    expected = sps.norm.logpdf(z).sum() + sps.halfnorm(scale=1.5).logpdf(np.exp(log_step)) + log_step
    np.testing.assert_allclose(_logp(model, point), expected, rtol=1e-8)
    fn = model.compile_fn(model.unobserved_value_vars, inputs=model.value_vars, point_fn=False)
    walk = fn(log_step, z)[-1]
    first = np.array([[0.5], [-1.0]]) + 2.0 * z[:, :1]
    np.testing.assert_allclose(walk, np.c_[first, first + np.exp(log_step) * np.cumsum(z[:, 1:], axis=1)])
    # Prior draws: increments N(0, τ²) given τ, the first level N(μ, s₀²); the start is the prior mean.
    draws, steps = pm.draw([model["walk"], model["walk_step"]], draws=4000, random_seed=2)
    assert sps.kstest(draws[:, 1, 0], sps.norm(-1.0, 2.0).cdf).pvalue > 1e-3
    assert sps.kstest((np.diff(draws[:, 0], axis=-1) / steps[:, None]).ravel(), sps.norm.cdf).pvalue > 1e-3
    np.testing.assert_allclose(model.initial_point()["walk_z__"], 0.0)


def test_prior_draws_compile_in_numba_without_the_object_mode_fallback():
    """The three variables' draws are PyTensor graphs (``CustomDist(dist=...)``), so prior and
    predictive sampling compile in Numba; a Python ``random`` would run in object mode with a warning."""
    with pm.Model(coords={"cell": ["a", "b"], "interval": np.arange(4)}), warnings.catch_warnings():
        beta = whitened_normal("beta", pt.as_tensor([1.0, 2.0, 0.5]), pt.as_tensor(CHOL[1:, 1:]))
        centred_intercept("intercept", 3.0, beta, pt.as_tensor(CHOL[1:, 0]), pt.as_tensor(CHOL[0, 0]))
        random_walk("walk", np.array([[0.5], [-1.0]]), 2.0, 1.5, ("cell", "interval"), (2, 4))
        warnings.simplefilter("error")
        prior = pm.sample_prior_predictive(2000, random_seed=3, compile_kwargs={"mode": "NUMBA"})["prior"]
    assert prior["beta"].shape == (1, 2000, 3) and prior["walk"].shape == (1, 2000, 2, 4)
    assert sps.kstest(prior["intercept"].values.ravel(), sps.norm(scale=3.0).cdf).pvalue > 1e-3
    assert sps.kstest(prior["beta"].values[0, :, 1], sps.norm(scale=2.0).cdf).pvalue > 1e-3
    increments = np.diff(prior["walk"].values[0], axis=-1) / prior["walk_step"].values[0, :, None, None]
    assert sps.kstest(increments.ravel(), sps.norm.cdf).pvalue > 1e-3

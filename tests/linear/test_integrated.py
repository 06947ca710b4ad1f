"""The noise-aware likelihood with the covariate model integrated out (conditioning on the released Sxx)."""

import numpy as np
import pytensor
import pytest
from scipy import stats as sps

from pm_private import linear_stats, release_linear_stats
from pm_private.linear.integrated import (
    gram_posterior,
    gram_shape,
    integrated_data,
    integrated_moments,
    integrated_stats_logp,
    release_signal_to_noise,
)
from pm_private.linear.model import linear_model, release_x_cov, set_linear_stats
from pm_private.sampling.refit_nuts import RefittableNUTS


def _moments_fn():
    beta, lam = pytensor.tensor.dvector("beta"), pytensor.tensor.dscalar("lam")
    q, v, g = (pytensor.tensor.dmatrix(name) for name in ("q", "v", "g"))
    tau, n = pytensor.tensor.dvector("tau"), pytensor.tensor.dscalar("n")
    mean, cov = integrated_moments(beta, lam, q, v, g, tau, n)
    return pytensor.function([beta, lam, q, v, g, tau, n], [mean, cov], mode="FAST_COMPILE")


def test_moments_match_simulation_of_the_conditional_model():
    """E and Cov are those of (Sxx·β + u + w, βᵀSxxβ + 2βᵀu + eᵀe + w) with Sxx = Ŝ + QδQᵀ, δ's
    entries independent with variances V in the basis Q, u = Xᵀe, e ~ N(0, σ²I)."""
    rng = np.random.default_rng(0)
    d, n, sigma2, draws = 3, 40, 0.7, 40_000
    q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    a = rng.standard_normal((n, d))
    gram = a.T @ a
    v = rng.uniform(0.5, 2.0, (d, d))
    v = (v + v.T) / 2
    tau = rng.uniform(0.5, 1.5, d + 1)
    beta = rng.standard_normal(d)
    mean, cov = _moments_fn()(beta, 1 / sigma2, q, v, gram, tau, float(n))

    upper = np.triu_indices(d)
    delta = np.zeros((draws, d, d))
    delta[:, upper[0], upper[1]] = rng.standard_normal((draws, upper[0].size)) * np.sqrt(v[upper])
    delta = delta + np.triu(delta, 1).transpose(0, 2, 1)
    sxx = gram + q @ delta @ q.T
    # u = Aᵀe with AᵀA = Ŝ: covariance σ²·Ŝ = E[σ²·Sxx], the same second moments as σ²·Sxx given Sxx
    e = rng.standard_normal((draws, n)) * np.sqrt(sigma2)
    u = e @ a
    ee = (e**2).sum(axis=1)
    sxy = np.einsum("sij,j->si", sxx, beta) + u + rng.standard_normal((draws, d)) * np.sqrt(tau[:d])
    syy = np.einsum("i,sij,j->s", beta, sxx, beta) + 2 * u @ beta + ee + rng.standard_normal(draws) * np.sqrt(tau[d])
    sample = np.column_stack([sxy, syy])
    se = np.sqrt(np.diag(cov) / draws)
    assert np.all(np.abs(sample.mean(axis=0) - mean) < 5 * se)
    np.testing.assert_allclose(np.cov(sample.T), cov, rtol=0.03, atol=0.03 * np.abs(cov).max())


def test_exact_statistics_have_no_gram_uncertainty():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((200, 3))
    stats = linear_stats(X, X @ [1.0, 0.0, -1.0] + rng.standard_normal(200), intercept=False)
    post = gram_posterior(stats, x_scale=1.0, x_dof=5.0, x_cov=release_x_cov(stats))
    np.testing.assert_allclose(post["gram"], X.T @ X)
    assert np.all(post["entry_var"] == 0)
    assert post["n"] == 200


def test_gaussian_release_gram_posterior_shrinks_towards_the_prior_by_the_noise():
    """With huge noise Ŝ falls back to the prior mean n·s²·I (the Laplace approximation's exponent
    is the prior's, a = k); with tiny noise Ŝ is the released Sxx."""
    rng = np.random.default_rng(2)
    X = np.clip(rng.standard_normal((500, 2)), -2, 2)
    y = np.clip(X @ [0.5, -0.5] + rng.standard_normal(500), -4, 4)
    for eps, expect_prior in ((1e-3, True), (500.0, False)):
        rel = release_linear_stats(X, y, epsilon=eps, delta=1e-5, x_bound=3.0, y_bound=4.0, rng=3, intercept=False)
        post = gram_posterior(rel, x_scale=1.0, x_dof=4.0, x_cov=np.eye(2))
        if expect_prior:
            np.testing.assert_allclose(post["gram"], 500 * np.eye(2), atol=10.0)
        else:
            np.testing.assert_allclose(post["gram"], rel.xx, rtol=1e-3, atol=0.5)


def test_noise_dominated_gram_posterior_is_positive_definite_and_stationary():
    """Where the noise makes the released Sxx indefinite, Ŝ is positive definite, shares its
    eigenvectors and solves (r − x)/τ² − c + a/(2x) = 0 per eigenvalue; the signal-to-noise figures
    flag the regime and are infinite for exact statistics."""
    rng = np.random.default_rng(13)
    d, n = 8, 400
    X = rng.standard_normal((n, d)) / np.sqrt(d)
    y = X @ rng.standard_normal(d) + 0.5 * rng.standard_normal(n)
    rel = release_linear_stats(X, y, epsilon=1.0, delta=1e-6, x_bound=3.0, y_bound=3.0, rng=14, intercept=False)
    assert np.linalg.eigvalsh(rel.xx)[0] < 0
    s, nu = 0.5, d + 2.0
    post = gram_posterior(rel, x_scale=s, x_dof=nu, x_cov=release_x_cov(rel))
    r, u = np.linalg.eigh(rel.xx)
    x = np.einsum("ik,ij,jk->k", u, post["gram"], u)
    assert np.all(x > 0)
    tau2 = rel.releases[0].noise_variance(d)[0]
    k, a = gram_shape(d, n, x_scale=s, x_dof=nu, tau2=tau2)
    np.testing.assert_allclose((r - x) / tau2 - k / (2 * n * s**2) + a / (2 * x), 0.0, atol=1e-9 * np.abs(a / x).max())
    assert np.all(post["entry_var"] > 0) and np.all(post["entry_var"] <= tau2)
    snr = release_signal_to_noise(rel)
    assert snr["negative_eigenvalues"] >= 1 and snr["gram_snr"] < 1.0
    assert snr["gram_noise_sd"] == pytest.approx(np.sqrt(tau2))
    assert release_signal_to_noise(linear_stats(X, y, intercept=False))["gram_snr"] == np.inf


def test_regression_model_integrated_recovers_beta_and_refits():
    """A near-exact release (ε = 500, n = 20,000): the posterior covers β; ``set_linear_stats`` swaps in a
    release with the opposite β and the compiled sampler follows it."""
    rng = np.random.default_rng(4)
    d, n = 4, 20_000
    beta = np.array([0.8, -0.5, 0.3, 0.0])
    X = rng.standard_normal((n, d)) * 0.5
    releases = [
        release_linear_stats(
            X,
            X @ b + 0.5 * rng.standard_normal(n),
            epsilon=500.0,
            delta=1e-5,
            x_bound=4.0,
            y_bound=5.0,
            rng=5,
            intercept=False,
        )
        for b in (beta, -beta)
    ]
    model = linear_model(releases[0], x_cov="integrated")
    assert {v.name for v in model.free_RVs} == {"prior_precision", "noise_precision", "beta"}
    fitter = RefittableNUTS(model, draws=300, tune=300, random_seed=6)
    for release, truth in zip(releases, (beta, -beta), strict=True):
        set_linear_stats(release, model)
        post = fitter.fit().posterior["beta"].values[0]
        lo, hi = np.quantile(post, [0.005, 0.995], axis=0)
        assert np.all((lo < truth) & (truth < hi)), (lo, hi)


def test_integrated_logp_is_a_normal_density_of_the_released_vector():
    """integrated_stats_logp equals scipy's multivariate normal log-density at the moments."""
    rng = np.random.default_rng(9)
    d = 3
    q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    a = rng.standard_normal((30, d))
    v = np.full((d, d), 0.3)
    tau = np.full(d + 1, 0.2)
    beta, lam = rng.standard_normal(d), 2.0
    released = rng.standard_normal(d + 1) * 5
    mean, cov = _moments_fn()(beta, lam, q, v, a.T @ a, tau, 30.0)
    logp = integrated_stats_logp(beta, lam, q, v, a.T @ a, released, tau, 30.0).eval(mode="FAST_COMPILE")
    assert logp == pytest.approx(sps.multivariate_normal(mean, cov).logpdf(released), rel=1e-10)


def test_laplace_release_beyond_the_dense_limit_fits_with_integrated_covariates():
    rng = np.random.default_rng(10)
    d = 30
    X = rng.uniform(-1, 1, (2000, d))
    y = X @ rng.normal(0, 0.3, d) + 0.3 * rng.standard_normal(2000)
    release = release_linear_stats(
        X, y, noise="laplace", epsilon=5.0, x_bound=1.0, y_bound=3.0, rng=11, intercept=False
    )
    with pytest.raises(ValueError, match="d ≤"):
        linear_model(release, x_cov="wishart")
    model = linear_model(release, x_cov="integrated")
    assert integrated_data("likelihood", model)["gram"].shape == (d, d)
    assert np.isfinite(model.compile_logp(mode="FAST_COMPILE")(model.initial_point()))


def test_integrated_model_holds_one_blas_thread_while_alive(monkeypatch):
    import gc

    from threadpoolctl import threadpool_info, threadpool_limits

    from pm_private._engine import threads

    def blas_threads():
        return {i["filepath"]: i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"}

    gc.collect()
    monkeypatch.setattr(threads, "_held", None)
    monkeypatch.setattr(threads, "_holders_alive", 0)
    rng = np.random.default_rng(12)
    X = rng.standard_normal((300, 3))
    release = release_linear_stats(
        X, X[:, 0], epsilon=1.0, delta=1e-5, x_bound=3.0, y_bound=4.0, rng=0, intercept=False
    )
    with threadpool_limits(2, user_api="blas"):
        before = blas_threads()
        model = linear_model(release, x_cov="integrated")
        assert set(blas_threads().values()) == {1}
        del model
        gc.collect()
        assert blas_threads() == before


def test_whitening_of_beta_stays_conditioned_where_the_noise_leaves_the_gram_singular():
    """Nearly collinear covariates and a noisy release: the whitening of β (batched, and after
    ``set_linear_stats``) has eigenvalues ≥ 10⁻³ × their mean (Ŝ itself, the Laplace centre of
    the module notes, is positive definite; its smallest eigenvalue is far below the mean)."""
    rng = np.random.default_rng(7)
    d, n = 6, 300
    z = rng.standard_normal((n, 2))
    X = np.clip(z @ rng.standard_normal((2, d)) + 0.01 * rng.standard_normal((n, d)), -1, 1) / np.sqrt(d)
    releases = [
        release_linear_stats(
            X,
            X[:, 0] + 0.3 * rng.standard_normal(n),
            epsilon=1.0,
            delta=1e-5,
            x_bound=1.0,
            y_bound=2.0,
            rng=r,
            intercept=False,
        )
        for r in range(4)
    ]
    prior = dict(x_scale=1 / np.sqrt(d), x_dof=d + 2.0)
    grams = [gram_posterior(r, x_cov=release_x_cov(r), **prior)["gram"] for r in releases]
    assert all(np.linalg.eigvalsh(g)[0] > 0 for g in grams)
    model = linear_model(releases[:2], x_cov="integrated", **prior)
    for batch in (releases[:2], releases[2:]):
        set_linear_stats(batch, model)
        chol = model["x_cov_integrated_chol"].get_value()
        values = np.linalg.eigvalsh(chol @ np.swapaxes(chol, -1, -2))
        assert np.all(values[:, 0] >= 0.999e-3 * values.mean(axis=1)), values

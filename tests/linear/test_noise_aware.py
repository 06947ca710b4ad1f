"""Tests of the noise-aware likelihood (Bernstein & Sheldon 2019), public preprocessing that travels
with a release, prediction on the original scale, posterior-predictive draws and R²-tuned bounds.

What is checked:

- the statistics are split into their exact and private parts, and the noise variances are
  read from the release metadata (2b² per entry, summed over releases);
- the CLT moments (Isserlis) match a Monte Carlo estimate; the PyTensor log-density equals
  SciPy's multivariate normal; the exact part equals the row-wise Gaussian log-likelihood;
- ``linear_model`` is noise-aware by default exactly when a release is present, and
  ``noise_aware=False`` is Honkela et al.'s (2018) likelihood;
- as ε → ∞ the noise-aware posterior of β recovers the exact-statistics posterior (NUTS);
- a small simulation-based calibration check: intervals of the noise-aware model cover the
  truth at about the nominal rate where the naive model's do not;
- preprocessing is stored in the release, ``predict`` maps new covariates and predictions;
  ``posterior_predictive`` returns draws for new X; ``tune_bounds`` picks interior bounds.
"""

import numpy as np
import pymc as pm
import pytensor
import pytest
from scipy import stats as st

from pm_private import (
    Preprocessing,
    linear_stats,
    posterior_predictive,
    predict_linear,
    release_linear_stats,
    tune_bounds,
)
from pm_private.linear.integrated import integrated_data
from pm_private.linear.model import linear_model, set_linear_stats
from pm_private.linear.noise_aware import augmented_cholesky, exact_stats_logp, noise_aware_arrays, noisy_stats_logp
from pm_private.linear.stats import stat_pairs

C_BACKEND = {"mode": "CVM"}


def _data(n, d, seed, sd=0.5):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    beta = rng.standard_normal(d)
    return X, X @ beta + sd * rng.standard_normal(n), beta


def _cov_moments(C):
    d = C.shape[0] - 1
    a, b = stat_pairs(d)
    mean = C[a, b]
    V = C[np.ix_(a, a)] * C[np.ix_(b, b)] + C[np.ix_(a, b)] * C[np.ix_(b, a)]
    return mean, V


def test_arrays_split_exact_and_private_parts():
    X, y, _ = _data(300, 3, seed=1)
    public = linear_stats(X[:50], y[:50], intercept=False)
    r1 = release_linear_stats(
        X[50:200], y[50:200], noise="laplace", epsilon=1.0, x_bound=2.0, y_bound=3.0, rng=0, intercept=False
    )
    r2 = release_linear_stats(
        X[200:], y[200:], noise="laplace", epsilon=2.0, x_bound=1.0, y_bound=3.0, rng=1, intercept=False
    )
    total = public + r1 + r2
    assert total.public.n == 50 and total.public.is_exact
    np.testing.assert_allclose(total.public.xx, public.xx)
    arrays = noise_aware_arrays(total)
    assert arrays["private_n"] == 250 and arrays["exact_n"] == 50 and arrays["private_on"] == 1
    upper = np.triu_indices(3)
    expect = np.concatenate([(r1.xx + r2.xx)[upper], r1.xy + r2.xy, [r1.yy + r2.yy]])
    np.testing.assert_allclose(arrays["private"], expect, rtol=1e-10, atol=1e-8)
    var = sum(np.repeat(2 * np.square(r.releases[0].noise_scales), (6, 3, 1)) for r in (r1, r2))
    np.testing.assert_allclose(arrays["noise_var"], var)
    np.testing.assert_allclose(arrays["exact"][:3, :3], public.xx)
    # Exact statistics alone: no private part.
    only = noise_aware_arrays(public)
    assert only["private_on"] == 0 and only["exact_n"] == 50
    # A private release alone has no exact part.
    assert r1.public is None and noise_aware_arrays(r1)["exact_n"] == 0


def test_clt_moments_match_monte_carlo():
    rng = np.random.default_rng(3)
    d = 2
    L = np.array([[1.0, 0.0, 0.0], [0.5, 0.8, 0.0], [0.7, -0.4, 0.6]])
    C = L @ L.T
    z = rng.standard_normal((400_000, d + 1)) @ L.T
    a, b = stat_pairs(d)
    t = z[:, a] * z[:, b]
    mean, V = _cov_moments(C)
    np.testing.assert_allclose(t.mean(axis=0), mean, atol=0.01)
    np.testing.assert_allclose(np.cov(t.T), V, atol=0.03)


def test_logp_matches_scipy_and_rowwise():
    rng = np.random.default_rng(4)
    d, n = 3, 40
    beta, lam = np.array([0.5, -1.0, 0.3]), 2.5
    Lx = np.linalg.cholesky(np.array([[1.0, 0.3, 0.0], [0.3, 1.5, 0.2], [0.0, 0.2, 0.7]]))
    chol = augmented_cholesky(beta, lam, Lx).eval(mode="FAST_COMPILE")
    C = chol @ chol.T
    np.testing.assert_allclose(C[:d, d], Lx @ Lx.T @ beta)
    np.testing.assert_allclose(C[d, d], beta @ Lx @ Lx.T @ beta + 1 / lam)
    mean, V = _cov_moments(C)
    k = mean.size
    r = n * mean + rng.standard_normal(k) * 5
    noise_var = rng.uniform(1, 4, k)
    got = noisy_stats_logp(chol, r, n, noise_var, d).eval(mode="FAST_COMPILE")
    want = st.multivariate_normal(n * mean, n * V + np.diag(noise_var)).logpdf(r)
    np.testing.assert_allclose(got, want, rtol=1e-9)
    Z = rng.standard_normal((n, d + 1)) @ chol.T
    got = exact_stats_logp(chol, Z.T @ Z, n, d).eval(mode="FAST_COMPILE")
    np.testing.assert_allclose(got, st.multivariate_normal(np.zeros(d + 1), C).logpdf(Z).sum(), rtol=1e-9)


def test_default_is_noise_aware_only_for_private_releases():
    X, y, _ = _data(200, 2, seed=5)
    exact = linear_stats(X, y, intercept=False)
    noisy = release_linear_stats(X, y, noise="laplace", epsilon=1.0, x_bound=2.0, y_bound=3.0, rng=0, intercept=False)
    free = lambda m: {v.name for v in m.free_RVs}  # noqa: E731
    assert free(linear_model(exact)) == {"beta", "noise_precision", "prior_precision"}
    aware = linear_model(noisy)  # the covariate model integrated out: no covariate parameters
    assert free(aware) == {"beta", "noise_precision", "prior_precision"}
    assert {"x_cov_chi2", "x_cov_offdiag"} <= free(linear_model(noisy, x_cov="wishart"))
    assert aware.named_vars_to_dims["beta"] == ("feature",)
    assert free(linear_model(noisy, noise_aware=False)) == {"beta", "noise_precision", "prior_precision"}
    # A public covariance removes the covariate prior; the sampler moves γ = Lxᵀβ and the
    # posterior stores β = Lx⁻ᵀγ.
    cov = np.array([[2.0, 0.6], [0.6, 1.0]])
    public_cov = linear_model(noisy, x_cov=cov)
    assert free(public_cov) == {"beta", "noise_precision", "prior_precision"}
    assert public_cov.rvs_to_values[public_cov["beta"]].name == "beta_whitened__"
    (beta_graph,) = public_cov.replace_rvs_by_values([public_cov["beta"]])
    whitened = public_cov.rvs_to_values[public_cov["beta"]]
    beta = pytensor.function([whitened], beta_graph, mode="FAST_COMPILE")(np.array([0.3, -0.7]))
    np.testing.assert_allclose(np.linalg.cholesky(cov).T @ beta, [0.3, -0.7])
    with pytest.raises(ValueError, match="x_cov"):
        linear_model(noisy, x_cov=-np.eye(2))
    with pytest.raises(ValueError, match="x_dof"):
        linear_model(noisy, x_dof=0.5)
    # Batched noise-aware models build and set_linear_stats swaps the statistics.
    batched = linear_model([noisy, noisy])
    assert batched["beta"].type.shape[-1] == 2 or batched.dim_lengths["fit"].eval() == 2
    other = release_linear_stats(X, y, noise="laplace", epsilon=2.0, x_bound=2.0, y_bound=3.0, rng=1, intercept=False)
    set_linear_stats([other, noisy], batched)
    np.testing.assert_allclose(
        integrated_data("likelihood", batched)["noise_var"][0], noise_aware_arrays(other)["noise_var"][3:]
    )
    dense = linear_model([noisy, noisy], x_cov="wishart")
    set_linear_stats([other, noisy], dense)
    np.testing.assert_allclose(dense["likelihood_noise_var"].get_value()[0], noise_aware_arrays(other)["noise_var"])


@pytest.mark.slow
def test_recovers_exact_posterior_as_epsilon_grows():
    X, y, _ = _data(3000, 2, seed=6)
    exact = linear_stats(X, y, intercept=False)
    nearly = release_linear_stats(X, y, noise="laplace", epsilon=1e7, x_bound=6.0, y_bound=10.0, rng=2, intercept=False)
    kw = dict(draws=400, tune=400, chains=2, cores=1, random_seed=3, progressbar=False, compile_kwargs=C_BACKEND)
    with linear_model(exact):
        ref = pm.sample(**kw).posterior["beta"]
    with linear_model(nearly):
        aware = pm.sample(**kw).posterior["beta"]
    sd = ref.std(("chain", "draw")).values
    np.testing.assert_allclose(
        aware.mean(("chain", "draw")).values, ref.mean(("chain", "draw")).values, atol=0.3 * sd.max()
    )
    np.testing.assert_allclose(aware.std(("chain", "draw")).values, sd, rtol=0.25)


@pytest.mark.slow
def test_small_calibration_check():
    """Eight data sets from the model (d = 2, n = 400, ε = 1): the noise-aware 90% intervals
    cover at least 70% of the 16 coefficients; the naive model (Honkela et al. 2018) covers
    about 10–20% here, as over-confident as the problem it fixes."""
    rng = np.random.default_rng(7)
    d, n, reps = 2, 400, 8
    model = step = None
    aware_hits, naive_hits = [], []
    naive_model = naive_step = None
    for rep in range(reps):
        lam0, lam = rng.gamma(10, 0.1), rng.gamma(10, 0.1)
        beta = rng.standard_normal(d) / np.sqrt(lam0)
        T = rng.standard_normal((d + 2, d)) / np.sqrt(d + 2)
        X = rng.standard_normal((n, d)) @ np.linalg.cholesky(T.T @ T).T
        y = X @ beta + rng.standard_normal(n) / np.sqrt(lam)
        stats = release_linear_stats(
            X, y, noise="laplace", epsilon=1.0, x_bound=4.0, y_bound=4 * np.sqrt(2 * (d + 1)), rng=rng, intercept=False
        )
        if model is None:
            prior = dict(
                noise_precision_alpha=10.0,
                noise_precision_beta=10.0,
                prior_precision_alpha=10.0,
                prior_precision_beta=10.0,
            )
            model = linear_model(stats, x_scale=1.0, **prior)
            naive_model = linear_model(stats, noise_aware=False, **prior)
            with model:
                step = pm.NUTS(compile_kwargs=C_BACKEND)
            with naive_model:
                naive_step = pm.NUTS(compile_kwargs=C_BACKEND)
        for m, s, hits in ((model, step, aware_hits), (naive_model, naive_step, naive_hits)):
            set_linear_stats(stats, m)
            with m:
                draws = (
                    pm.sample(
                        200,
                        tune=200,
                        step=s,
                        chains=1,
                        progressbar=False,
                        random_seed=rep,
                        compute_convergence_checks=False,
                    )
                    .posterior["beta"]
                    .values[0]
                )
            lo, hi = np.quantile(draws, [0.05, 0.95], axis=0)
            hits.extend((lo <= beta) & (beta <= hi))
    assert np.mean(aware_hits) >= 0.7, np.mean(aware_hits)
    assert np.mean(naive_hits) <= 0.5, np.mean(naive_hits)


def test_preprocessing_travels_and_predict_uses_it():
    X, y, _ = _data(500, 2, seed=8)
    raw_X, raw_y = 10 + 3 * X, 100 + 5 * y
    prep = Preprocessing(x_center=10.0, x_scale=[3.0, 3.0], y_center=100.0, y_scale=5.0)
    stats = release_linear_stats(
        raw_X, raw_y, noise="laplace", epsilon=1.0, x_bound=2.0, y_bound=3.0, rng=0, preprocessing=prep, intercept=False
    )
    assert stats.releases[0].preprocessing is prep
    draws = np.array([[1.0, -1.0], [3.0, 1.0]])
    X_new = np.array([[13.0, 10.0], [40.0, 4.0]])  # standardised (1, 0) and (10 → clipped 2, −2)
    got = predict_linear(draws, X_new, stats=stats)
    x_std = np.array([[1.0, 0.0], [2.0, -2.0]])
    np.testing.assert_allclose(got["mean"], 100 + 5 * (x_std @ draws.T).mean(axis=1))
    # Without a transform the draws are used as they are.
    np.testing.assert_allclose(predict_linear(draws, x_std)["mean"], (x_std @ draws.T).mean(axis=1))
    with pytest.raises(ValueError, match="x_scale"):
        Preprocessing(x_scale=0.0)
    with pytest.raises(ValueError, match="preprocessing"):
        release_linear_stats(
            raw_X,
            raw_y,
            noise="laplace",
            epsilon=1.0,
            x_bound=2.0,
            y_bound=3.0,
            rng=0,
            preprocessing={"x": 1},
            intercept=False,
        )


@pytest.mark.slow
def test_posterior_predictive_for_new_X():
    X, y, beta = _data(2000, 2, seed=9)
    prep = Preprocessing(x_center=1.0, y_center=2.0)
    stats = release_linear_stats(
        X + 1.0,
        y + 2.0,
        noise="laplace",
        epsilon=5.0,
        x_bound=4.0,
        y_bound=6.0,
        rng=0,
        preprocessing=prep,
        intercept=False,
    )
    model = linear_model(stats, x_cov=np.eye(2))
    with model:
        idata = pm.sample(300, tune=300, chains=1, random_seed=1, progressbar=False, compile_kwargs=C_BACKEND)
    X_new = np.array([[1.0, 1.0], [2.0, 0.0], [0.0, 3.0]])
    pp = posterior_predictive(model, idata, X_new, random_seed=2)
    draws = pp["predictions"]["y_new"]
    assert draws.shape == (1, 300, 3)
    assert draws.dims == ("chain", "draw", "row")  # the dimension the docstring promises
    expected = 2.0 + (X_new - 1.0) @ beta
    np.testing.assert_allclose(draws.mean(("chain", "draw")).values, expected, atol=0.25)
    np.testing.assert_allclose(predict_linear(idata, X_new)["mean"], expected, atol=0.25)
    assert "y_new" not in model.named_vars  # the user's model is not changed


def test_tune_bounds_is_interior_and_reproducible():
    res = tune_bounds(300, 4, 1.0, 2.0, 5.0, n_datasets=3, n_noise=3)
    grid = res.omegas
    # ωx interior, or at the modelling floor min_omega = 0.5, never at the top of the grid; ωy at
    # least the bound that clips 5 % of Gaussian responses (max_y_clip), never at the top either.
    assert res.omega_x < grid[-1] and (res.omega_x > grid[0] or res.omega_x == 0.5)
    assert 1.959 < res.omega_y < res.omegas[-1] * 2
    assert grid[0] >= 0.5
    assert res.x_bound == pytest.approx(res.omega_x * 2.0) and res.y_bound == pytest.approx(res.omega_y * 5.0)
    assert abs(sum(res.split) - 1) < 1e-9 and res.split[2] in (0.05, 0.1)
    assert res.score == pytest.approx(res.score_grid.max())
    assert tune_bounds(300, 4, 1.0, 2.0, 5.0, n_datasets=3, n_noise=3) == res
    # More budget never makes the tuned aux R² worse.
    assert tune_bounds(300, 4, 20.0, 2.0, 5.0, n_datasets=3, n_noise=3).score > res.score
    with pytest.raises(ValueError, match="epsilon"):
        tune_bounds(300, 4, -1.0, 1.0, 1.0)
    with pytest.raises(ValueError, match="min_omega"):
        tune_bounds(300, 4, 1.0, 1.0, 1.0, omegas=[0.1, 0.2])
    with pytest.raises(ValueError, match="p3_values"):
        tune_bounds(300, 4, 1.0, 1.0, 1.0, p3_values=(1.5,))

"""Tests of pm_private.linear.model (paper 004's Bayesian linear regression on sufficient statistics).

What is checked:

- the ``likelihood`` potential equals the row-wise Normal log-likelihood for exact statistics
  (also batched: one model with two independent regressions gives the sum of both);
- its graph does not depend on n (only d×d, d and scalar data; same graph for n = 10 and 10⁶);
- :func:`project_psd` on indefinite noisy statistics: eigenvalue floor, nearest such matrix,
  symmetry, non-negative residual sum of squares, and that without it the likelihood is
  unbounded;
- ADVI (``pm.fit`` and :class:`RefittableADVI`) and NUTS run on indefinite noisy statistics;
- ADVI agrees with NUTS and with the closed-form conditional posterior mean on exact statistics;
  refitting after :func:`set_linear_stats` gives the new answer;
- the ``pm.sample`` DataTree works with ArviZ 1.x (dims, coords, summary, ess, trace plot);
- bad input raises ValueError.

Samplers and fits compile with the C backend (``mode="CVM"``, also RefittableADVI's default);
log-densities evaluated once for a check run in PyTensor's Python mode; the NUTS run on exact
statistics is shared per module.
"""

import itertools

import matplotlib

matplotlib.use("Agg")

import arviz as az  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pymc as pm  # noqa: E402
import pytensor  # noqa: E402
import pytest  # noqa: E402
import xarray as xr  # noqa: E402
from pytensor.graph.basic import Constant  # noqa: E402
from pytensor.graph.traversal import graph_inputs  # noqa: E402
from pytensor.tensor.sharedvar import TensorSharedVariable  # noqa: E402
from scipy import stats as st  # noqa: E402

from pm_private import LinearStats, linear_stats, release_linear_stats  # noqa: E402
from pm_private.linear.exact_likelihood import PSD_FLOOR
from pm_private.linear.model import gibbs_regression, linear_model, project_psd, set_linear_stats
from pm_private.sampling.advi import RefittableADVI  # noqa: E402

# PyTensor's C backend.  Note: in PyTensor 3.3 ``mode="FAST_RUN"`` resolves to the *Numba* linker
# (config.linker is "auto"); "CVM" is the C VM (what ``backend="c"`` maps to in PyMC).
C_BACKEND = {"mode": "CVM"}
FEATURES = ["age", "bmi", "dose", "sex", "smoker"]
N, D = 500, 5


def _data(n, d, seed, noise_sd=0.7, beta=None):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    beta = rng.standard_normal(d) if beta is None else np.asarray(beta, dtype=float)
    y = X @ beta + noise_sd * rng.standard_normal(n)
    return X, y, beta


def _rowwise_loglik(X, y, beta, lam):
    return st.norm(X @ beta, 1 / np.sqrt(lam)).logpdf(y).sum()


def _point(beta, lam, lam0=1.3):
    return {
        "prior_precision_log__": np.log(lam0),
        "noise_precision_log__": np.log(lam),
        "beta": np.asarray(beta, dtype=float),
    }


def _potential_fn(model):
    (potential,) = model.potentials
    assert potential.name == "likelihood"
    return model.compile_logp(vars=[potential], mode="FAST_COMPILE")


def _augmented(stats):
    d = stats.d
    M = np.empty((d + 1, d + 1))
    M[:d, :d] = stats.xx
    M[:d, d] = M[d, :d] = stats.xy
    M[d, d] = stats.yy
    return M


def _closed_form_mean(stats, lam, lam0):
    """E[β | λ, λ₀, data] = (Sxx + (λ₀/λ) I)⁻¹ Sxy and the conditional sd of each βⱼ."""
    d = stats.d
    mean = np.linalg.solve(stats.xx + (lam0 / lam) * np.eye(d), stats.xy)
    sd = np.sqrt(np.diag(np.linalg.inv(lam * stats.xx + lam0 * np.eye(d))))
    return mean, sd


# ---------------------------------------------------------------------------------------------
# Shared data and fits
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def exact():
    X, y, beta = _data(N, D, seed=1)
    return linear_stats(X, y, intercept=False)


@pytest.fixture(scope="module")
def noisy():
    """Indefinite noisy statistics: ε = 0.1 with Bx = 1 makes the Sxx noise (scale 500) larger
    than Sxx's diagonal (≈ 0.6·n = 300).  Seeded noise: a test release, not private."""
    X, y, _ = _data(N, D, seed=2)
    stats = release_linear_stats(
        X, y, noise="laplace", epsilon=0.1, x_bound=1.0, y_bound=2.0, rng=12345, intercept=False
    )
    assert not stats.is_exact and stats.releases[0].private is False
    assert np.linalg.eigvalsh(stats.xx).min() < 0  # the case project_psd exists for
    assert (np.linalg.eigvalsh(_augmented(stats)) < 0).sum() == 3
    return stats


@pytest.fixture(scope="module")
def noisy_mild():
    """Same data, ε = 0.3: Sxx still indefinite, one negative eigenvalue of the augmented matrix.

    NUTS on :func:`noisy` (three floored directions) also passes but takes 18–25 s: the
    posterior is a thin slab (sd ≈ 1 along the floored directions, ≈ 0.003 across), so about
    60% of its draws hit the maximum tree depth.  This case keeps the test at about 2 s."""
    X, y, _ = _data(N, D, seed=2)
    stats = release_linear_stats(X, y, noise="laplace", epsilon=0.3, x_bound=1.0, y_bound=2.0, rng=2, intercept=False)
    assert np.linalg.eigvalsh(stats.xx).min() < 0
    assert (np.linalg.eigvalsh(_augmented(stats)) < 0).sum() == 1
    return stats


@pytest.fixture(scope="module")
def nuts_exact(exact):
    with linear_model(exact, feature_names=FEATURES):
        return pm.sample(
            draws=300, tune=300, chains=2, cores=1, compile_kwargs=C_BACKEND, random_seed=11, progressbar=False
        )


@pytest.fixture
def advi(exact):
    """A compiled ADVI step on a model of its own (about 1 s from the compile cache).  Built per
    test so that each test sees the same Monte Carlo stream whatever ran before it."""
    return RefittableADVI(linear_model(exact, feature_names=FEATURES), random_seed=21)


def _advi_beta(advi, stats, n_iter=5000, draws=2000, seed=0):
    """Refit ``advi`` on ``stats``; (mean, sd) of β from ``draws`` draws and the mean λ, λ₀."""
    set_linear_stats(stats, model=advi.model)
    approx = advi.fit(n_iter)
    post = approx.sample(draws, random_seed=seed).posterior
    beta = post["beta"]
    return (
        beta.mean(("chain", "draw")).values,
        beta.std(("chain", "draw")).values,
        float(post["noise_precision"].mean()),
        float(post["prior_precision"].mean()),
    )


# ---------------------------------------------------------------------------------------------
# Likelihood equals the row-wise Normal likelihood
# ---------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_likelihood_equals_rowwise_normal():
    X, y, _ = _data(40, 3, seed=3)
    model = linear_model(linear_stats(X, y, intercept=False))
    logp = _potential_fn(model)
    rng = np.random.default_rng(4)
    for _ in range(6):
        beta = 2 * rng.standard_normal(3)
        lam = np.exp(rng.uniform(-3, 3))
        point = _point(beta, lam, lam0=np.exp(rng.uniform(-2, 2)))
        np.testing.assert_allclose(logp(point), _rowwise_loglik(X, y, beta, lam), rtol=1e-8)
    # point_logps (PyMC's own per-term report) agrees too, and the priors are separate terms.
    beta, lam = np.array([0.5, -1.0, 2.0]), 0.7
    terms = model.point_logps(_point(beta, lam), round_vals=12, mode="FAST_COMPILE")
    assert set(terms) == {"prior_precision", "noise_precision", "beta", "likelihood"}
    np.testing.assert_allclose(terms["likelihood"], _rowwise_loglik(X, y, beta, lam), rtol=1e-8)


@pytest.mark.slow
def test_batched_likelihood_is_sum_of_both():
    X1, y1, _ = _data(30, 3, seed=5)
    X2, y2, _ = _data(70, 3, seed=6)
    model = linear_model([linear_stats(X1, y1, intercept=False), linear_stats(X2, y2, intercept=False)])
    assert model.initial_point()["beta"].shape == (2, 3)
    logp = _potential_fn(model)
    rng = np.random.default_rng(7)
    for _ in range(5):
        beta = rng.standard_normal((2, 3))
        lam = np.exp(rng.uniform(-2, 2, size=2))
        point = _point(beta, lam, lam0=np.array([1.0, 2.0]))
        expected = _rowwise_loglik(X1, y1, beta[0], lam[0]) + _rowwise_loglik(X2, y2, beta[1], lam[1])
        np.testing.assert_allclose(logp(point), expected, rtol=1e-8)


# ---------------------------------------------------------------------------------------------
# Cost independent of n
# ---------------------------------------------------------------------------------------------


def _graph_signature(model):
    logp = model.logp()
    text = pytensor.printing.debugprint(logp, file="str")
    inputs = [v for v in graph_inputs([logp]) if isinstance(v, (Constant, TensorSharedVariable))]
    sizes = {v.name or str(v): np.size(v.data if isinstance(v, Constant) else v.get_value(borrow=True)) for v in inputs}
    return text, sizes


@pytest.mark.slow
def test_graph_does_not_depend_on_n():
    d = 3
    X_small, y_small, _ = _data(10, d, seed=8)
    X_big, y_big, _ = _data(1_000_000, d, seed=9)
    small = linear_model(linear_stats(X_small, y_small, intercept=False))
    big = linear_model(linear_stats(X_big, y_big, intercept=False))

    for model, n in ((small, 10), (big, 1_000_000)):
        shapes = {v.name: v.get_value(borrow=True).shape for v in model.data_vars}
        assert shapes == {
            "likelihood_xx": (d, d),
            "likelihood_xy": (d,),
            "likelihood_yy": (),
            "likelihood_n": (),
            "preprocessing": (2 * d + 6,),
            "fit_record": (3,),
            "prior_precision_rate": (),
        }
        assert float(model["likelihood_n"].get_value()) == n
        # No constant or shared input of the logp graph is larger than d×d.
        _, sizes = _graph_signature(model)
        assert max(sizes.values()) <= d * d, sizes

    text_small, _ = _graph_signature(small)
    text_big, _ = _graph_signature(big)
    assert text_small == text_big
    fn_small, fn_big = _potential_fn(small), _potential_fn(big)
    ops_small = [str(node.op) for node in fn_small.f.maker.fgraph.toposort()]
    ops_big = [str(node.op) for node in fn_big.f.maker.fgraph.toposort()]
    assert ops_small == ops_big
    # ... and at n = 10⁶ it still equals the row-wise likelihood.
    beta, lam = np.array([0.3, -0.2, 1.1]), 1.7
    np.testing.assert_allclose(fn_big(_point(beta, lam)), _rowwise_loglik(X_big, y_big, beta, lam), rtol=1e-8)


# ---------------------------------------------------------------------------------------------
# project_psd
# ---------------------------------------------------------------------------------------------


def test_project_psd_leaves_exact_statistics_alone(exact):
    assert project_psd(exact) is exact
    # A noisy release that is already well conditioned changes by rounding only.
    X, y, _ = _data(5000, 3, seed=10)
    mild = release_linear_stats(X, y, noise="laplace", epsilon=50.0, x_bound=4.0, y_bound=8.0, rng=1, intercept=False)
    assert np.linalg.eigvalsh(_augmented(mild)).min() > 1e-3 * np.linalg.eigvalsh(_augmented(mild)).max()
    projected = project_psd(mild)
    np.testing.assert_allclose(_augmented(projected), _augmented(mild), rtol=1e-10, atol=1e-9 * mild.yy)


def test_project_psd_on_indefinite_statistics(noisy):
    M = _augmented(noisy)
    values, vectors = np.linalg.eigh(M)
    assert values[0] < 0
    top = values[-1]
    floor = PSD_FLOOR * top

    projected = project_psd(noisy)
    assert isinstance(projected, LinearStats)
    assert projected.releases == noisy.releases and projected.n == noisy.n and projected.d == noisy.d
    P = _augmented(projected)
    np.testing.assert_array_equal(projected.xx, projected.xx.T)
    new_values = np.linalg.eigvalsh(P)
    assert new_values.min() >= floor * (1 - 1e-6)
    np.testing.assert_allclose(new_values.max(), top, rtol=1e-12)

    # The change lives in the eigen-directions below the floor: P − M = Σ (floor − λᵢ) vᵢvᵢᵀ.
    low = values < floor
    assert 1 <= low.sum() < len(values)
    change = P - M
    for value, vector in zip(values, vectors.T, strict=True):
        expected = (floor - value) * vector if value < floor else 0 * vector
        np.testing.assert_allclose(change @ vector, expected, atol=1e-9 * top)
    # Nearest: by Hoffman–Wielandt every symmetric Q with eig(Q) ≥ floor has
    # ‖Q − M‖_F ≥ ‖(floor − λ)₊‖₂, and the projection attains it.
    lower_bound = np.linalg.norm(np.maximum(floor - values, 0))
    np.testing.assert_allclose(np.linalg.norm(change), lower_bound, rtol=1e-8)
    # ... so random feasible competitors are never closer.
    rng = np.random.default_rng(11)
    for _ in range(20):
        A = rng.standard_normal(M.shape)
        competitor = P + 1e-3 * top * (A @ A.T) / M.shape[0]
        assert np.linalg.norm(competitor - M) >= np.linalg.norm(change)

    # Residual sum of squares [β; −1]ᵀ M [β; −1]: negative somewhere before, never after.
    v = vectors[:, 0]
    beta_bad = -v[:-1] / v[-1]
    rss = lambda s, b: b @ s.xx @ b - 2 * b @ s.xy + s.yy  # noqa: E731
    assert rss(noisy, beta_bad) < 0
    betas = np.concatenate(
        [rng.standard_normal((500, noisy.d)) * scale for scale in (0.01, 1.0, 100.0)] + [beta_bad[None]]
    )
    for b in betas:
        assert rss(projected, b) >= floor * (b @ b + 1) * (1 - 1e-6)


@pytest.mark.slow
def test_without_projection_likelihood_is_unbounded(noisy):
    """Why project: with the raw indefinite statistics the potential grows without bound in λ
    along the negative direction; with the projected ones it has a finite maximum."""
    model = linear_model(noisy, noise_aware=False)
    logp = _potential_fn(model)
    v = np.linalg.eigh(_augmented(noisy))[1][:, 0]
    beta_bad = -v[:-1] / v[-1]
    projected = [logp(_point(beta_bad, lam)) for lam in (1.0, 1e3, 1e6)]
    assert np.all(np.isfinite(projected)) and projected[2] < projected[1]
    raw = {"likelihood_xx": noisy.xx, "likelihood_xy": noisy.xy, "likelihood_yy": noisy.yy}
    pm.set_data(raw, model=model)
    unbounded = [logp(_point(beta_bad, lam)) for lam in (1.0, 1e3, 1e6)]
    assert unbounded[0] < unbounded[1] < unbounded[2] and unbounded[2] > 1e6


# ---------------------------------------------------------------------------------------------
# Fitting on indefinite noisy statistics
# ---------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_advi_on_indefinite_statistics(noisy, advi):
    model = linear_model(noisy, noise_aware=False)
    with model:
        approx = pm.fit(
            n=5000,
            method="advi",
            obj_optimizer=pm.adam(learning_rate=0.05),
            random_seed=31,
            progressbar=False,
            compile_kwargs=C_BACKEND,
        )
    assert np.isfinite(approx.hist).all()
    post = approx.sample(500, random_seed=32).posterior
    for name in ("beta", "noise_precision", "prior_precision"):
        assert np.isfinite(post[name].values).all()
    assert (post["noise_precision"].values > 0).all()
    # RefittableADVI after set_linear_stats on the same indefinite statistics: finite as well.
    mean, sd, lam, lam0 = _advi_beta(advi, noisy, n_iter=3000, draws=500)
    assert np.isfinite([*mean, *sd, lam, lam0]).all() and (sd > 0).all()


@pytest.mark.slow
def test_nuts_on_indefinite_statistics(noisy_mild):
    with linear_model(noisy_mild, noise_aware=False):
        idata = pm.sample(
            draws=300, tune=300, chains=2, cores=1, compile_kwargs=C_BACKEND, random_seed=41, progressbar=False
        )
    divergences = int(idata.sample_stats["diverging"].sum())
    assert divergences < 0.05 * 2 * 300, divergences
    for name in ("beta", "noise_precision", "prior_precision"):
        assert np.isfinite(idata.posterior[name].mean(("chain", "draw")).values).all()


# ---------------------------------------------------------------------------------------------
# ADVI against NUTS and the closed form on exact statistics
# ---------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_nuts_matches_closed_form(exact, nuts_exact):
    post = nuts_exact.posterior
    assert int(nuts_exact.sample_stats["diverging"].sum()) == 0
    nuts_mean = post["beta"].mean(("chain", "draw")).values
    nuts_sd = post["beta"].std(("chain", "draw")).values
    lam, lam0 = float(post["noise_precision"].mean()), float(post["prior_precision"].mean())
    closed, closed_sd = _closed_form_mean(exact, lam, lam0)
    ratio = np.abs(nuts_mean - closed) / nuts_sd
    print(f"|NUTS − closed form| / sd = {np.round(ratio, 3)}")
    assert ratio.max() < 0.3  # ≈ 6 Monte Carlo standard errors at ESS ≈ 500
    np.testing.assert_allclose(nuts_sd, closed_sd, rtol=0.2)


@pytest.mark.slow
def test_advi_matches_nuts_and_closed_form(exact, nuts_exact, advi):
    post = nuts_exact.posterior
    nuts_mean = post["beta"].mean(("chain", "draw")).values
    nuts_sd = post["beta"].std(("chain", "draw")).values
    mean, sd, lam, lam0 = _advi_beta(advi, exact)
    ratio = np.abs(mean - nuts_mean) / nuts_sd
    print(f"|ADVI − NUTS| / NUTS sd = {np.round(ratio, 3)}")
    assert ratio.max() <= 1.0
    closed, _ = _closed_form_mean(exact, float(post["noise_precision"].mean()), float(post["prior_precision"].mean()))
    assert (np.abs(mean - closed) / nuts_sd).max() <= 1.0
    # Mean-field sd: X has nearly uncorrelated columns, so β's posterior is nearly diagonal.
    np.testing.assert_allclose(sd, nuts_sd, rtol=0.3)
    np.testing.assert_allclose(lam, float(post["noise_precision"].mean()), rtol=0.15)


@pytest.mark.slow
def test_refit_after_set_stats_gives_new_answer(exact, advi):
    X, y, _ = _data(N, D, seed=50, beta=[-2.0, 1.0, 0.0, 0.5, 3.0])
    other = linear_stats(X, y, intercept=False)
    closed_old, sd_old = _closed_form_mean(exact, 2.0, 1.0)
    closed_new, sd_new = _closed_form_mean(other, 2.0, 1.0)
    assert (np.abs(closed_new - closed_old) / sd_old).min() > 10  # the two answers are far apart

    new_mean, _, lam, lam0 = _advi_beta(advi, other)
    closed_new, sd_new = _closed_form_mean(other, lam, lam0)
    assert (np.abs(new_mean - closed_new) / sd_new).max() <= 1.0
    # ... and back to the first data set: the first answer again.
    old_mean, _, lam, lam0 = _advi_beta(advi, exact)
    closed_old, sd_old = _closed_form_mean(exact, lam, lam0)
    assert (np.abs(old_mean - closed_old) / sd_old).max() <= 1.0


@pytest.mark.slow
def test_repeated_fits_on_same_data_agree(exact, nuts_exact, advi):
    nuts_sd = nuts_exact.posterior["beta"].std(("chain", "draw")).values
    set_linear_stats(exact, model=advi.model)
    means = []
    for _ in range(4):
        advi.fit(5000)
        means.append(advi.mean("beta"))
    worst = max(np.abs(a - b).max() for a, b in itertools.combinations(np.array(means) / nuts_sd, 2))
    print(f"largest difference between repeated fits: {worst:.3f} posterior sd")
    assert worst <= 0.5
    # The Monte Carlo mean over draws of the approximation agrees with its exact mean.
    np.testing.assert_array_less(np.abs(advi.expectation("beta", draws=4000) - means[-1]) / nuts_sd, 0.1)


@pytest.mark.slow
def test_advi_expectation_of_the_noise_aware_beta(noisy_mild):
    """β of the noise-aware model is a deterministic (Lx⁻ᵀγ); its ADVI mean comes from draws."""
    advi = RefittableADVI(linear_model(noisy_mild), random_seed=5)
    advi.fit(3000)
    first = advi.expectation("beta", draws=2000)
    assert first.shape == (D,) and np.isfinite(first).all()
    direct = advi.inference.approx.sample(2000, random_seed=6).posterior["beta"].mean(("chain", "draw")).values
    sd = advi.inference.approx.sample(2000, random_seed=6).posterior["beta"].std(("chain", "draw")).values
    np.testing.assert_array_less(np.abs(first - direct) / sd, 0.15)


# ---------------------------------------------------------------------------------------------
# DataTree / ArviZ 1.x
# ---------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_sample_output_has_feature_dims(nuts_exact):
    assert isinstance(nuts_exact, xr.DataTree)
    beta = nuts_exact.posterior["beta"]
    assert beta.dims == ("chain", "draw", "feature")
    assert beta.shape == (2, 300, D)
    assert list(beta.coords["feature"].values) == FEATURES
    assert nuts_exact.posterior["noise_precision"].dims == ("chain", "draw")


@pytest.mark.slow
def test_arviz_summary_ess_and_trace_plot(nuts_exact, tmp_path):
    summary = az.summary(nuts_exact)
    rows = list(summary.index)
    assert [f"beta[{name}]" for name in FEATURES] == [r for r in rows if r.startswith("beta[")]
    assert {"prior_precision", "noise_precision"} <= set(rows)
    assert np.isfinite(summary.loc[[f"beta[{name}]" for name in FEATURES], "mean"].astype(float)).all()

    ess = az.ess(nuts_exact)
    beta_ess = ess["beta"]
    assert beta_ess.dims == ("feature",)
    assert (beta_ess.values > 100).all()

    try:
        plot = az.plot_trace_dist(nuts_exact, var_names=["beta"])
        plot.savefig(tmp_path / "trace.png")
        assert (tmp_path / "trace.png").stat().st_size > 0
    finally:
        plt.close("all")


# ---------------------------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------------------------


def test_feature_names_of_wrong_length(exact):
    with pytest.raises(ValueError, match="feature_names"):
        linear_model(exact, feature_names=FEATURES[:-1])
    with pytest.raises(ValueError, match="feature_names"):
        linear_model([exact, exact], feature_names=[*FEATURES, "extra"])


def test_batch_with_different_d(exact):
    X, y, _ = _data(50, D - 1, seed=60)
    with pytest.raises(ValueError, match="share d"):
        linear_model([exact, linear_stats(X, y, intercept=False)])


def test_empty_batch():
    with pytest.raises(ValueError, match="no statistics"):
        linear_model([])


def _mean_variance(X, intercept):
    return float(np.mean(X.var(axis=0) if intercept else np.mean(X**2, axis=0)))


def test_prior_precision_rate_defaults_to_two_over_the_covariates_total_variance():
    """λ₀ ~ Gamma(2, 2/(k·v̄)) by default, v̄ the covariates' mean variance (about their mean with an
    intercept column): the prior of the explained variance βᵀΣxβ does not grow with k nor change
    with the covariates' units; Gamma(2, b₀) when given; checked on PyMC's own draws of the prior."""
    for k in (1, 4, 12):
        X, y, _ = _data(200, k, seed=k)
        X = X * (0.2 + 0.5 * np.arange(k)) + 3.0  # columns of other scales and a mean
        for intercept in (False, True):
            stats = linear_stats(X, y, intercept=intercept)
            draws = pm.draw(linear_model(stats)["prior_precision"], draws=20000, random_seed=k)
            # Gamma(2, 2/(k·v̄)): mean k·v̄, s.d. k·v̄/√2; 20000 draws put the mean within 4 s.e.
            expected = k * _mean_variance(X, intercept)
            assert abs(draws.mean() - expected) < 4 * (expected / np.sqrt(2)) / np.sqrt(20000)
    X, y, _ = _data(200, 12, seed=0)
    paper = pm.draw(linear_model(linear_stats(X, y), prior_precision_beta=2.0)["prior_precision"], 20000, random_seed=1)
    assert abs(paper.mean() - 1.0) < 4 * (1 / np.sqrt(2)) / np.sqrt(20000)
    for bad in (0.0, -1.0, np.nan):
        with pytest.raises(ValueError, match="prior_precision_beta"):
            linear_model(linear_stats(X, y), prior_precision_beta=bad)
        with pytest.raises(ValueError, match="prior_precision_beta"):
            gibbs_regression(linear_stats(X, y), prior_precision_beta=bad)


def test_a_release_sets_the_slopes_prior_scale_only_where_its_noise_allows_and_refits_renew_it():
    """From a release, v̄ is its own estimate where that stands out of the noise, else 1 (the
    standardised scale); set_linear_stats renews the rate as a new build would."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((20_000, 4)) * 0.3
    y = X @ np.ones(4) + 0.5 * rng.standard_normal(20_000)
    clear = release_linear_stats(X, y, epsilon=1.0, delta=1e-6, x_bound=2.0, y_bound=3.0, rng=1)
    hidden = release_linear_stats(X[:300], y[:300], epsilon=0.1, delta=1e-6, x_bound=2.0, y_bound=3.0, rng=1)
    rate = {
        name: float(linear_model(s)["prior_precision_rate"].get_value())
        for name, s in (("clear", clear), ("hidden", hidden))
    }
    assert rate["clear"] == pytest.approx(2.0 / (4 * 0.09), rel=0.1)
    assert rate["hidden"] == pytest.approx(2.0 / 4)
    model = linear_model(hidden)
    set_linear_stats(clear, model)
    assert float(model["prior_precision_rate"].get_value()) == pytest.approx(rate["clear"], rel=1e-12)
    fixed = linear_model(hidden, prior_precision_beta=2.0)
    assert "prior_precision_rate" not in fixed.named_vars


# ---------------------------------------------------------------------------------------------
# The exact Gibbs sampler of the same model
# ---------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_gibbs_matches_nuts_on_exact_statistics(exact, nuts_exact):
    draws = gibbs_regression(exact, draws=4000, rng=3)
    assert draws.shape == (4000, D)
    nuts = nuts_exact.posterior["beta"]
    nuts_mean, nuts_sd = nuts.mean(("chain", "draw")).values, nuts.std(("chain", "draw")).values
    # Monte Carlo error of the difference: 600 NUTS draws (ESS ≳ 300) and 4000 Gibbs draws.
    tolerance = 4 * nuts_sd * np.sqrt(1 / 300 + 1 / 1000)
    np.testing.assert_array_less(np.abs(draws.mean(axis=0) - nuts_mean), tolerance)
    np.testing.assert_allclose(draws.std(axis=0), nuts_sd, rtol=0.2)


def test_gibbs_batches_projects_and_checks_its_input(noisy):
    draws = gibbs_regression([noisy, noisy], draws=200, tune=50, rng=0)
    assert draws.shape == (200, 2, D) and np.isfinite(draws).all()
    # The sampler is reproducible from its seed.
    np.testing.assert_array_equal(draws, gibbs_regression([noisy, noisy], draws=200, tune=50, rng=0))
    with pytest.raises(ValueError, match="draws"):
        gibbs_regression(noisy, draws=0)
    with pytest.raises(ValueError, match="no statistics"):
        gibbs_regression([])

"""Private Bayesian regression on real data sets that ship with installed packages.

Data (no download): scikit-learn's ``load_diabetes`` (n = 442, d = 10, raw units), statsmodels'
1996 American National Election Study ``anes96`` (n = 944, d = 5, response: party identification
on a 0–6 scale), statsmodels' RAND Health Insurance Experiment ``randhie`` (n = 20190, d = 9,
response log(1 + number of outpatient visits); little signal: OLS R² ≈ 0.08) and statsmodels'
California schools ``star98`` (n = 303, d = 20, response: the share of pupils above the national
median in maths, NABOVE/(NABOVE + NBELOW)), statsmodels' ``fair`` (n = 6366, d = 8, response: the
rating of the marriage, 1–5, on the other columns with log(1 + affairs)) and scikit-survival's
Mayo Clinic ``flchain`` (n = 6524 with creatinine recorded, d = 6, response: log free light chain
λ on age, sex, log κ, log creatinine, MGUS and the sample year).

Every regression has an intercept: the releases prepend the constant column (``intercept=True``,
their default), so the statistics hold n and the first moments, :func:`pm_private.linear_model`
has an ``intercept`` α beside the slopes β, and the coefficients are those of the usual
regression with an intercept whatever the public centring left.

For each data set and repeat, the rows are split at random into 20 % test rows
(``--test-fraction``), 30 public rows and the private rest (randhie: 16,122 private rows; 20,060 with
``--test-fraction 0.005``).  The **public** rows give the preprocessing constants only (column
means and standard deviations of x and y, a :class:`pm_private.Preprocessing`), so nothing about
the private rows enters them; the private rows are released with ε ∈ {0.5, 1, 2, 5} (seeded noise:
a simulation, not a release).  Methods, all predicting test rows on the original scale:

* ``noise-aware Gaussian``: :func:`pm_private.release_linear_stats`, (ε, 10⁻⁵)-DP like
  AdaSSP and with the same bounds as AdaSSP: those of :func:`pm_private.gaussian_bounds` for the
  private n and ε (‖x‖ ≤ m√d, |y| ≤ 2m on the public scale, m ≥ 1 growing with n and ε, at most
  5 % of the public responses clipped), or with ``--fixed-bounds`` m = 1, the bounds √d and 2
  used before; rows beyond the ball scaled onto it with their responses, or with
  ``--no-scale-response`` projected covariates alone; the preprocessing attached; the default
  (noise-aware, Bernstein & Sheldon 2019)
  :func:`pm_private.linear_model`, NUTS, prediction by :func:`pm_private.predict_linear` (posterior
  mean; it applies the release's transform and projection);
* ``noise-aware Laplace``: pure ε-DP :func:`pm_private.release_linear_stats` with
  :func:`pm_private.tune_bounds` (entrywise bounds and split tuned for coefficients of the d + 1
  design columns, at most 5 % of the responses clipped, on the aux model and on the public rows;
  no budget; the entrywise bound at least 1, as the constant column requires), the same model
  and prediction;
* ``Honkela 2018``: Honkela et al.'s (2018) model, ``linear_model(..., noise_aware=False)``,
  on the **same** Laplace release (so the two rows differ only in the likelihood), sampled
  exactly by :func:`pm_private.linear.gibbs_regression` (the intercept a coefficient like the
  slopes), with the paper's Gamma(2, 2) prior of λ₀ (``prior_precision_beta=2``: the library's
  default rate 2/k shrinks less, and the projected noisy statistics then fit the noise), the
  same prediction.  (The paper's own tuning,
  ``pm_private.linear.bounds._tune_release``, picks the smallest bound
  on its grid, ω = 0.1, for diabetes at every ε; it is left out for run time: on randhie's
  16 000 private rows it takes many minutes per ε.)
* ``AdaSSP``: Wang (2018), (ε, 10⁻⁵)-DP, on the publicly standardised rows with the bounds of
  the noise-aware Gaussian release; as in the paper, without an intercept (it regresses on the
  covariates the public rows centred);
* ``OLS``: non-private least squares with an intercept on the standardised private rows.

One prediction rule for every method (the library's): a new row is mapped exactly as the rows
the predictor was fitted on, i.e. the public standardisation and then the release's clipping or
projection (:func:`pm_private.predict_linear` reads them from the release; ``AdaSSPRelease.predict``
projects onto its ball); OLS, fitted on unclipped rows, takes new rows unclipped.

Scores, mean over releases (± s.e. for R²):

* held-out R² = 1 − Σ(y − ŷ)²/Σ(y − ȳ)² and Spearman's rank correlation;
* ``coef cover`` (``coef cover 50``): the share of the d + 1 coefficients, intercept and slopes,
  whose **full-data** OLS value (all rows, unclipped, regressed with an intercept in the same
  public standardisation) lies in the method's 90 % (50 %) interval (equal-tailed posterior
  interval; t interval for OLS; AdaSSP gives none); ``slope cover`` and ``intercept cover``: the
  90 % share for the d slopes and for the intercept alone;
* ``y cover``: the share of held-out responses inside the 90 % posterior-predictive interval
  (draws of β and the noise precision λ; Honkela et al.'s λ drawn from its Gibbs conditional
  given β; t prediction interval for OLS);
* ``divergent``: the share of NUTS draws that diverged;
* ``clipped rows`` / ``clipped y``: the release's own private estimate of the share of rows and
  responses its clipping changed (:func:`pm_private.linear.clip_report`).

    python -m models.linear_real_data            # 20 releases per cell
    python -m models.linear_real_data --data randhie --releases 15 --epsilons 1 2
    python -m models.linear_real_data --quick    # 3 releases, ε ∈ {1, 5}
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import time
import warnings

import numpy as np
import pandas as pd
from scipy import stats as scipy_stats
from threadpoolctl import threadpool_limits

from pm_private import (
    Preprocessing,
    adassp,
    gaussian_bounds,
    release_linear_stats,
    tune_bounds,
)
from pm_private.datasets import split_keeping_identical_rows
from pm_private.linear.clipping import clip_report
from pm_private.linear.model import gibbs_regression, linear_model, project_psd, set_linear_stats
from pm_private.linear.predict import _apply, beta_draws, prediction_transform, r_squared, spearman
from pm_private.sampling.refit_nuts import RefittableNUTS

METHODS = ("noise-aware Gaussian", "noise-aware Laplace", "Honkela 2018", "AdaSSP", "OLS")
BAYES = METHODS[:3]
DELTA = 1e-5
N_PUBLIC = 30
TEST_FRACTION = 0.2
LEVEL = 0.9
LEVEL_50 = 0.5
#: The per-release scores of a method with intervals (:func:`bayes_scores`, :func:`ols_scores`).
SCORES = ["r2", "spearman", "coef_cover", "coef_cover_50", "slope_cover", "intercept_cover", "y_cover"]
COVERAGE = SCORES[2:6]
COLUMNS = [
    "data",
    "epsilon",
    "release",
    "method",
    *SCORES,
    "divergent",
    "clipped_rows",
    "clipped_y",
]
#: Tuning grid of the Laplace release's bounds: the constant column is bounded entrywise with the
#: covariates, so the entrywise bound is at least 1 (public standard deviations).
LAPLACE_OMEGAS = 2.0 ** np.arange(0, 2.25, 0.25)


def load(name: str):
    """(X, y, feature names) of a shipped data set."""
    if name == "diabetes":
        from sklearn.datasets import load_diabetes

        data = load_diabetes(scaled=False)
        return np.asarray(data.data, float), np.asarray(data.target, float), list(data.feature_names)
    if name == "anes96":
        from statsmodels.datasets import anes96

        data = anes96.load_pandas()
        return data.exog.to_numpy(float), data.endog.to_numpy(float), list(data.exog.columns)
    if name == "randhie":
        from statsmodels.datasets import randhie

        frame = randhie.load_pandas().data
        y = np.log1p(frame.pop("mdvis").to_numpy(float))
        return frame.to_numpy(float), y, list(frame.columns)
    if name == "star98":
        from statsmodels.datasets import star98

        data = star98.load_pandas()
        counts = data.endog.to_numpy(float)
        return data.exog.to_numpy(float), counts[:, 0] / counts.sum(axis=1), list(data.exog.columns)
    if name == "fair":
        from statsmodels.datasets import fair

        frame = fair.load_pandas().data.copy()
        y = frame.pop("rate_marriage").to_numpy(float)
        frame["affairs"] = np.log1p(frame["affairs"])
        return frame.to_numpy(float), y, list(frame.columns)
    if name == "flchain":
        from sksurv.datasets import load_flchain

        frame, _ = load_flchain()
        frame = frame.dropna(subset=["creatinine"])
        columns = {
            "age": frame["age"].to_numpy(float),
            "male": (frame["sex"] == "M").to_numpy(float),
            "log_kappa": np.log(frame["kappa"].to_numpy(float)),
            "log_creatinine": np.log(frame["creatinine"].to_numpy(float)),
            "mgus": (frame["mgus"] == "yes").to_numpy(float),
            "sample_year": frame["sample.yr"].astype(float).to_numpy(),
        }
        return np.column_stack(list(columns.values())), np.log(frame["lambda"].to_numpy(float)), list(columns)
    raise ValueError(f"unknown data set {name!r}")


def cover(value, lower, upper) -> float:
    """Share of ``value`` inside [lower, upper] (elementwise)."""
    return float(np.mean((lower <= value) & (value <= upper)))


def coefficient_cover(coef_full, lower90, upper90, lower50, upper50) -> tuple:
    """(all at 90 %, all at 50 %, slopes at 90 %, intercept at 90 %): shares of the full-data
    coefficients (intercept first) inside the intervals."""
    inside = (lower90 <= coef_full) & (coef_full <= upper90)
    return (
        float(np.mean(inside)),
        cover(coef_full, lower50, upper50),
        float(np.mean(inside[1:])),
        float(inside[0]),
    )


def design_draws(idata) -> np.ndarray:
    """Draws (S, d + 1) of a linear_model fit's design coefficients: the intercept, then the slopes."""
    beta = beta_draws(idata)
    if "intercept" not in idata["posterior"]:
        raise ValueError("the fit has no intercept: the study releases statistics with the constant column")
    return np.column_stack([idata["posterior"]["intercept"].values.ravel(), beta])


def bayes_scores(prep, stats, coef, precision, X_test, y_test, coef_full, rng) -> tuple:
    """Scores (:data:`SCORES`) of posterior draws ``coef`` (S, d + 1) of the design's coefficients
    (the intercept first, as in the statistics) and noise precisions (S,); new rows mapped by the
    release's public transform, the constant 1 prepended (the library's prediction rule)."""
    coef = np.asarray(coef, float)
    if not stats.intercept or coef.shape[1] != stats.d:
        raise ValueError(
            f"coef must be draws (S, {stats.d}) of the intercept and slopes of statistics with an intercept"
        )
    half, half50 = (1 - LEVEL) / 2, (1 - LEVEL_50) / 2
    lo, hi, lo50, hi50 = np.quantile(coef, [half, 1 - half, half50, 1 - half50], axis=0)
    Z = _apply(prediction_transform(stats), X_test)
    mean = prep.inverse_y(Z @ coef.mean(axis=0))
    draws = Z @ coef.T + rng.standard_normal((len(Z), len(coef))) / np.sqrt(precision)
    y_lo, y_hi = prep.inverse_y(np.quantile(draws, [half, 1 - half], axis=1))
    return (
        r_squared(y_test, mean),
        spearman(y_test, mean),
        *coefficient_cover(coef_full, lo, hi, lo50, hi50),
        cover(y_test, y_lo, y_hi),
    )


def honkela_precision(stats, beta, rng, a=2.0, b=2.0, intercept=None) -> np.ndarray:
    """λ | β ~ Gamma(a + n/2, b + RSS(β)/2) on the projected statistics, as in the Gibbs sampler.

    ``beta`` holds draws (S, d) of all the statistics' columns (the intercept first where the
    statistics have the constant column, as :func:`pm_private.linear.gibbs_regression` returns
    them), or of the d − 1 slopes with the intercept's draws (S,) given as ``intercept``."""
    s = project_psd(stats)
    beta = np.atleast_2d(np.asarray(beta, float))
    if intercept is not None:
        if not stats.intercept:
            raise ValueError("intercept draws given for statistics without the constant column")
        beta = np.column_stack([np.broadcast_to(np.asarray(intercept, float), beta.shape[:1]), beta])
    if beta.shape[1] != s.d:
        raise ValueError(
            f"beta must be draws (S, {s.d})"
            + (f", or (S, {s.d - 1}) slopes with intercept=" if stats.intercept else "")
            + f", got {beta.shape}"
        )
    rss = np.einsum("si,ij,sj->s", beta, s.xx, beta) - 2 * beta @ s.xy + s.yy
    return rng.gamma(a + s.n / 2, 1.0 / (b + np.maximum(rss, 0.0) / 2))


def with_intercept(X) -> np.ndarray:
    """The design (1, x) of rows ``X``."""
    X = np.asarray(X, float)
    return np.column_stack([np.ones(len(X)), X])


def full_data_coefficients(prep, X, y) -> np.ndarray:
    """The reference: OLS with an intercept on all rows (unclipped) in the public standardisation,
    (α, β) with the intercept first."""
    return np.linalg.lstsq(with_intercept(prep.transform_x(X)), prep.transform_y(y), rcond=None)[0]


def ols_scores(Xs, ys, prep, X_test, y_test, coef_full) -> tuple:
    """Scores (:data:`SCORES`) of OLS with an intercept on the standardised private rows ``Xs``
    (covariates only), with t intervals; ``coef_full`` is (α, β), the intercept first."""
    design = with_intercept(Xs)
    n, d = design.shape
    gram_inv = np.linalg.inv(design.T @ design)
    coef = gram_inv @ design.T @ ys
    sigma2 = np.sum((ys - design @ coef) ** 2) / (n - d)
    se = np.sqrt(sigma2 * np.diag(gram_inv))
    t, t50 = scipy_stats.t.ppf([1 - (1 - LEVEL) / 2, 1 - (1 - LEVEL_50) / 2], n - d)
    Z = with_intercept(prep.transform_x(X_test))
    mean = Z @ coef
    half_y = t * np.sqrt(sigma2 * (1 + np.einsum("ij,jk,ik->i", Z, gram_inv, Z)))
    pred = prep.inverse_y(mean)
    covered = cover(y_test, prep.inverse_y(mean - half_y), prep.inverse_y(mean + half_y))
    return (
        r_squared(y_test, pred),
        spearman(y_test, pred),
        *coefficient_cover(coef_full, coef - t * se, coef + t * se, coef - t50 * se, coef + t50 * se),
        covered,
    )


def public_covariance(stats, X_public) -> np.ndarray:
    """A public covariate model for ``linear_model(stats, x_cov=...)``: the covariance of the public
    rows' covariates after the release's own public transform (centre, scale, clip or projection),
    shrunk halfway to the matching multiple of I.

    Statistics with the constant column take the design's second moments, d × d: the covariance
    C above completed to [[1, μᵀ], [μ, C + μμᵀ]] with μ the released means of the covariates
    (Σxᵢ/n, post-processing), as :func:`pm_private.linear_model` completes a (d − 1) × (d − 1)
    covariance itself (returned whole so that ``pm.set_data`` can swap its Cholesky factor)."""
    Z = _apply(prediction_transform(stats), X_public)
    if stats.intercept:
        Z = Z[:, 1:]
        Z = Z - Z.mean(axis=0)
    moments = Z.T @ Z / len(Z)
    shrunk = 0.5 * moments + 0.5 * np.trace(moments) / len(moments) * np.eye(len(moments))
    if not stats.intercept:
        return shrunk
    mean = np.asarray(stats.xx[0, 1:]) / stats.n
    return np.block([[np.ones((1, 1)), mean[None, :]], [mean[:, None], shrunk + np.outer(mean, mean)]])


@contextlib.contextmanager
def _quiet_sampling():
    """PyMC's log silenced (divergences are reported in the tables), warnings ignored and BLAS
    held at one thread: the models' dense algebra is tiny ((d+1)(d+2)/2 ≤ 66 rows), so a
    multi-threaded BLAS only adds synchronisation (7x slower per gradient on a loaded 2-core
    machine)."""
    pymc_log = logging.getLogger("pymc")
    level = pymc_log.level
    pymc_log.setLevel(logging.ERROR)
    try:
        with threadpool_limits(1, user_api="blas"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        pymc_log.setLevel(level)


@_quiet_sampling()
def run(
    names,
    epsilons,
    releases,
    draws=300,
    seed=0,
    public_cov=False,
    verbose=False,
    target_accept=0.95,
    x_cov=None,
    clipping="ignore",
    scale_response=True,
    fixed_bounds=False,
    test_fraction=TEST_FRACTION,
) -> pd.DataFrame:
    """Scores (:data:`COLUMNS`) of every method on every release (``verbose``: a line per release,
    NUTS times and tuned bounds; PyMC's log is silenced, divergences are reported in the table).
    ``x_cov`` and ``clipping`` are passed to the noise-aware models' :func:`pm_private.linear_model`,
    ``scale_response`` to the Gaussian release; ``fixed_bounds`` gives it and AdaSSP the bounds √d and 2
    instead of those of :func:`pm_private.gaussian_bounds`; ``test_fraction`` is the share of held-out
    rows."""
    report = print if verbose else lambda *a, **k: None
    import pymc as pm

    rows = []
    for name in names:
        X, y, features = load(name)
        n, d = X.shape
        rng = np.random.default_rng(seed)
        fitters = {}
        tuned = {}
        people = len(np.unique(X, axis=0))
        for rep in range(releases):
            if people == n:
                order = rng.permutation(n)
                n_test = int(test_fraction * n)
                test, public, private = order[:n_test], order[n_test : n_test + N_PUBLIC], order[n_test + N_PUBLIC :]
            else:  # identical rows (randhie: a person's years) stay together; one public row per person
                test, public, private = split_keeping_identical_rows(
                    X, rng, [int(test_fraction * people), N_PUBLIC], count="groups"
                )
                public = public[np.unique(X[public], axis=0, return_index=True)[1]]
            prep = Preprocessing.from_public(X[public], y[public])
            Xp, yp = X[private], y[private]
            Xs, ys = prep.transform_x(Xp), prep.transform_y(yp)
            coef_full = full_data_coefficients(prep, X, y)
            X_test, y_test = X[test], y[test]
            nan = (np.nan, np.nan, np.nan)
            rows.append((name, np.inf, rep, "OLS", *ols_scores(Xs, ys, prep, X_test, y_test, coef_full), *nan))
            for eps in epsilons:
                if eps not in tuned:
                    public_y = prep.transform_y(y[public])
                    tuned[eps] = tune_bounds(  # for the intercept's d + 1 columns: entrywise bound ≥ 1
                        len(private),
                        d,
                        eps,
                        1.0,
                        1.0,
                        goal="coefficients",
                        public_y=public_y,
                        omegas=LAPLACE_OMEGAS,
                        rng=seed,
                    )
                tune = tuned[eps]
                if fixed_bounds:
                    x_bound, y_bound = np.sqrt(d), 2.0
                else:
                    bounds = gaussian_bounds(
                        len(private), d, eps, DELTA, public_y=prep.transform_y(y[public]), scale_response=scale_response
                    )
                    x_bound, y_bound = bounds.x_bound, bounds.y_bound
                laplace = release_linear_stats(
                    Xp,
                    yp,
                    noise="laplace",
                    epsilon=eps,
                    x_bound=tune.x_bound,
                    y_bound=tune.y_bound,
                    split=tune.split,
                    preprocessing=prep,
                    rng=rng,
                )
                gaussian = release_linear_stats(
                    Xp,
                    yp,
                    epsilon=eps,
                    delta=DELTA,
                    x_bound=x_bound,
                    y_bound=y_bound,
                    preprocessing=prep,
                    rng=rng,
                    scale_response=scale_response,
                )
                clipped = {id(s): clip_report(s, warn=False)[0] for s in (laplace, gaussian)}
                for method, stats in zip(BAYES[:2], (gaussian, laplace), strict=True):
                    covariates = public_covariance(stats, X[public]) if public_cov else x_cov
                    if method not in fitters:
                        model = linear_model(stats, noise_aware=True, x_cov=covariates, clipping=clipping)
                        fitters[method] = RefittableNUTS(
                            model,
                            draws=draws,
                            tune=draws,
                            random_seed=seed,
                            target_accept=target_accept,
                            compute_convergence_checks=False,  # divergences are reported in the table
                        )
                    set_linear_stats(stats, fitters[method].model)
                    if public_cov:
                        pm.set_data({"x_cov_chol": np.linalg.cholesky(covariates)}, model=fitters[method].model)
                    idata = fitters[method].fit()
                    coef = design_draws(idata)
                    precision = idata["posterior"]["noise_precision"].values.ravel()
                    scores = bayes_scores(prep, stats, coef, precision, X_test, y_test, coef_full, rng)
                    divergent = fitters[method].divergences[-1] / draws
                    clip = clipped[id(stats)]
                    rows.append((name, eps, rep, method, *scores, divergent, clip.rows, clip.responses))
                coef = gibbs_regression(laplace, prior_precision_beta=2.0, rng=rng)  # (S, d + 1), the paper's prior
                precision = honkela_precision(laplace, coef, rng)
                scores = bayes_scores(prep, laplace, coef, precision, X_test, y_test, coef_full, rng)
                clip = clipped[id(laplace)]
                rows.append((name, eps, rep, BAYES[2], *scores, np.nan, clip.rows, clip.responses))
                fit = adassp(Xs, ys, epsilon=eps, delta=DELTA, x_bound=x_bound, y_bound=y_bound, rng=rng)
                pred = prep.inverse_y(fit.predict(prep.transform_x(X_test)))
                no_intervals = (np.nan,) * (len(SCORES) - 2)
                rows.append(
                    (name, eps, rep, "AdaSSP", r_squared(y_test, pred), spearman(y_test, pred), *no_intervals, *nan)
                )
            done = pd.DataFrame(rows[-1 - 4 * len(epsilons) :], columns=COLUMNS)
            report(
                f"{name} release {rep}: "
                + ", ".join(
                    f"{m} ε={e:g} R²={v:+.2f}" for m, e, v in zip(done.method, done.epsilon, done.r2, strict=True)
                ),
                flush=True,
            )
        for method, fitter in fitters.items():
            report(f"{name}: {method} NUTS fit {np.median(fitter.times):.1f} s median (n = {n}, d = {d})", flush=True)
        for eps, tb in tuned.items():
            report(
                f"{name} ε={eps:g}: tune_bounds ωx={tb.omega_x:.3g} ωy={tb.omega_y:.3g} "
                f"split={tuple(round(p, 2) for p in tb.split)}",
                flush=True,
            )
    return pd.DataFrame(rows, columns=COLUMNS)


def table(results: pd.DataFrame) -> pd.DataFrame:
    """Data × ε rows, methods as columns, 'R² ± se / Spearman' cells (OLS is non-private)."""
    ols = results[results.method == "OLS"].groupby("data")[["r2", "spearman"]].mean()
    private = results[results.method != "OLS"]
    stats = private.groupby(["data", "epsilon", "method"]).agg(
        r2=("r2", "mean"), r2_se=("r2", lambda v: v.std(ddof=1) / np.sqrt(len(v))), rho=("spearman", "mean")
    )
    cells = stats.assign(
        cell=[f"{a:+.3f} ± {s:.3f} / {r:.3f}" for a, s, r in zip(stats.r2, stats.r2_se, stats.rho, strict=True)]
    )
    wide = cells.cell.unstack("method")[list(METHODS[:4])]
    wide["OLS (non-private)"] = [
        f"{ols.loc[data, 'r2']:+.3f} / {ols.loc[data, 'spearman']:.3f}" for data, _ in wide.index
    ]
    return wide


def inference_table(results: pd.DataFrame) -> pd.DataFrame:
    """Data × ε × method rows (methods with intervals, and OLS): mean coverage of the full-data
    coefficients (intercept and slopes; :data:`COVERAGE`) and of held-out responses by the
    intervals, share of divergent NUTS draws and the releases' estimated shares of clipped rows and
    responses."""
    columns = [*COVERAGE, "y_cover", "divergent", "clipped_rows", "clipped_y"]
    scored = results[results.method != "AdaSSP"]
    return scored.groupby(["data", "epsilon", "method"], sort=False)[columns].mean()


def _mean_se(values: pd.Series) -> str:
    se = values.std(ddof=1) / np.sqrt(len(values)) if len(values) > 1 else np.nan
    return f"{values.mean():.3f} ± {se:.3f}"


def coverage_table(results: pd.DataFrame) -> pd.DataFrame:
    """Data × ε × method rows: 'mean ± Monte Carlo s.e.' over releases of the coverage of the
    full-data coefficients (:data:`COVERAGE`: intercept and slopes at 90 % and 50 %, the slopes
    and the intercept at 90 %), the s.e. that of the per-release shares (so it counts the
    correlation of the coefficients of one release), and the number of releases."""
    scored = results[results.method != "AdaSSP"]
    groups = scored.groupby(["data", "epsilon", "method"], sort=False)
    out = groups[COVERAGE].agg(_mean_se)
    out["releases"] = groups.size()
    return out


def r2_change(results: pd.DataFrame, previous: pd.DataFrame, method: str = METHODS[0]) -> pd.DataFrame:
    """Data × ε rows (ε common to both studies): held-out R² of ``method`` in ``results`` and in a
    ``previous`` study's scores (mean and s.e. over releases), their difference, and whether the
    new R² is worse than the previous by more than the previous s.e."""

    def summary(frame):
        scores = frame[frame.method == method].groupby(["data", "epsilon"]).r2
        return pd.DataFrame({"r2": scores.mean(), "se": scores.std(ddof=1) / np.sqrt(scores.size())})

    new, old = summary(results), summary(previous)
    both = new.join(old, lsuffix=" now", rsuffix=" before", how="inner")
    both["difference"] = both["r2 now"] - both["r2 before"]
    both["difference se"] = np.hypot(both["se now"], both["se before"])
    both["worse by > se before"] = both["difference"] < -both["se before"]
    return both


def goal_check(results: pd.DataFrame, method: str = METHODS[0]) -> pd.DataFrame:
    """Per data set and ε ≥ 1: mean R² of ``method`` and of AdaSSP, their paired difference over
    releases with its standard error, and whether ``method`` is at least as good as AdaSSP and not
    below 0."""
    scores = results[results.epsilon.between(1, np.inf, inclusive="left")]
    pairs = scores.pivot_table(index=["data", "epsilon", "release"], columns="method", values="r2")
    diff = (pairs[method] - pairs["AdaSSP"]).groupby(["data", "epsilon"])
    check = pairs[[method, "AdaSSP"]].groupby(["data", "epsilon"]).mean()
    check["difference"] = diff.mean()
    check["difference se"] = diff.std(ddof=1) / np.sqrt(diff.size())
    check[">= AdaSSP"] = check[method] >= check["AdaSSP"]
    check[">= 0"] = check[method] >= 0
    return check


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 releases, ε ∈ {1, 5}")
    parser.add_argument("--data", nargs="+", default=["diabetes", "anes96", "randhie", "star98", "fair", "flchain"])
    parser.add_argument("--epsilons", type=float, nargs="+", default=[0.5, 1.0, 2.0, 5.0])
    parser.add_argument("--releases", type=int, default=20)
    parser.add_argument("--draws", type=int, default=300, help="NUTS tuning and kept draws per fit")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--target-accept", type=float, default=0.95, help="NUTS target acceptance rate")
    parser.add_argument(
        "--test-fraction",
        type=float,
        default=TEST_FRACTION,
        help="share of the rows held out for R² (randhie at 0.005: 100 test rows, 20,060 private rows)",
    )
    parser.add_argument("--out", help="optional CSV of all scores")
    parser.add_argument(
        "--previous", help="optional CSV of a previous study's scores: its held-out R² against this run's"
    )
    parser.add_argument(
        "--x-cov",
        choices=["wishart", "integrated"],
        help="covariate model of the noise-aware fits (default: linear_model's)",
    )
    parser.add_argument(
        "--clipping", choices=["ignore", "model"], default="ignore", help="linear_model's clipping argument"
    )
    parser.add_argument(
        "--no-scale-response",
        dest="scale_response",
        action="store_false",
        help="the Gaussian release projects the covariates alone (Wang 2018) instead of scaling whole rows",
    )
    parser.add_argument(
        "--fixed-bounds",
        action="store_true",
        help="the Gaussian release and AdaSSP bound rows at √d and responses at 2 (public scale) "
        "instead of using gaussian_bounds",
    )
    parser.add_argument(
        "--public-cov",
        action="store_true",
        help="noise-aware models with the covariate covariance fixed at the public rows' second moments "
        "after each release's own transform (shrunk halfway to a multiple of I) instead of a Wishart "
        "prior: d + 2 parameters, much faster NUTS",
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.releases, args.epsilons = 3, [1.0, 5.0]
    start = time.perf_counter()
    results = run(
        args.data,
        args.epsilons,
        args.releases,
        args.draws,
        args.seed,
        args.public_cov,
        verbose=True,
        target_accept=args.target_accept,
        x_cov=args.x_cov,
        clipping=args.clipping,
        scale_response=args.scale_response,
        fixed_bounds=args.fixed_bounds,
        test_fraction=args.test_fraction,
    )
    print(
        f"\nHeld-out R² (mean ± s.e.) / Spearman over {args.releases} releases ({time.perf_counter() - start:.0f} s):"
    )
    print(table(results).to_string())
    print(
        f"\nCoverage of {LEVEL:.0%} intervals (full-data OLS coefficients with an intercept; held-out y), "
        "divergent NUTS draws, clipping:"
    )
    print(inference_table(results).round(3).to_string())
    print("\nCoverage of the full-data coefficients (mean ± Monte Carlo s.e. over releases):")
    print(coverage_table(results).to_string())
    print("\nGoal at ε ≥ 1 (mean R² of the noise-aware Gaussian fit ≥ AdaSSP's and ≥ 0):")
    print(goal_check(results).round(3).to_string())
    if args.previous:
        print(f"\nHeld-out R² of the {METHODS[0]} fit against {args.previous}:")
        print(r2_change(results, pd.read_csv(args.previous)).round(4).to_string())
    if args.out:
        results.to_csv(args.out, index=False)
    return results


if __name__ == "__main__":
    main()

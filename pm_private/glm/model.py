"""Noise-aware Bayesian logistic and Poisson regression on released statistics, and their predictions.

A release (:func:`pm_private.glm.release_logistic_stats`, :func:`pm_private.glm.release_poisson_stats`)
publishes r = s + ξ/w with s = Σᵢ t(xᵢ, yᵢ) the true statistics of the n private records,
t(x, y) = (x, y, upper(xxᵀ), y·x) (for counts, y clipped to the public bound), and Gaussian noise
of known variance.  As for linear regression (Bernstein & Sheldon 2019) the true statistics are
latent and marginalised with their central-limit normal under a model of the covariates, and the
Gaussian noise adds to its covariance exactly:

    r ~ N(n·m(θ), n·V(θ) + diag(v)),   θ = (β, b, μ, Σx),

where m and V are the mean and covariance of t(x, y) for one record with x ~ N(μ, Σx) and
P(y = 1 | x) = σ(xᵀβ + b), or y | x ~ Poisson(exp(xᵀβ + b)) (:mod:`pm_private.glm.moments`).
Kulkarni et al. (2021) model such releases so for noise-aware GLM inference.  The cost of a
gradient is that of a k × k Cholesky factorisation, k = 2d + 1 + d(d+1)/2 (76 at d = 10), whatever
n is.

Known limits.  The projection of rows onto the Bx ball is not modelled (choose Bx so that few rows
are projected); the covariates are modelled as Gaussian, and non-Gaussian covariates change the
third and fourth moments in V.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pymc as pm
import pytensor.tensor as pt
import xarray as xr
from scipy.special import expit

from .._engine.threads import hold_one_blas_thread_while
from ..privacy.primitives import project_rows
from ..privacy.validation import as_matrix, check_bool, check_fraction, check_positive
from .likelihood import normal_logp
from .moments import poisson_stat_moments, stat_moments
from .poisson import PoissonStats, PoissonStatsRelease
from .stats import LogisticStats, LogisticStatsRelease, stats_vector

__all__ = [
    "covariate_cholesky",
    "lkj_partial_shapes",
    "logistic_model",
    "partial_correlation_cholesky",
    "poisson_model",
    "predict_logistic",
    "predict_poisson",
    "set_logistic_stats",
    "set_poisson_stats",
]


def _arrays(stats, kinds: tuple, noise_aware: bool) -> dict[str, np.ndarray]:
    """The released vector (release order), its noise variances and n, as the model's data."""
    if not isinstance(stats, kinds):
        raise ValueError(f"stats must be a {' or '.join(k.__name__ for k in kinds)}, got {type(stats).__name__}")
    vector = stats_vector(stats.x_sum, stats.y_sum, stats.xx, stats.yx)
    noise_var = stats.noise_variance() if noise_aware else np.zeros(vector.size)
    return {"stats_vector": vector, "stats_noise_var": noise_var, "stats_n": np.float64(stats.n)}


_LOGISTIC = (LogisticStatsRelease, LogisticStats)
_POISSON = (PoissonStatsRelease, PoissonStats)


def lkj_partial_shapes(d: int, eta: float) -> np.ndarray:
    """Beta shapes bₖ of the partial correlations of an LKJ(η) correlation matrix, in the order of
    ``numpy.tril_indices(d, -1)``.

    The correlation matrix of the LKJ(η) distribution (Lewandowski, Kurowicka & Joe 2009) is, by
    their vine construction, the one whose canonical partial correlations cᵢₖ (of variables i and k
    given variables 0, …, k − 1, i > k) are independent with (cᵢₖ + 1)/2 ~ Beta(bₖ, bₖ),

        bₖ = η + (d − 2 − k)/2,   k = 0, …, d − 2.

    Parameters
    ----------
    d : int
        The dimension.
    eta : float
        The LKJ shape η > 0.

    Returns
    -------
    numpy.ndarray, shape (d(d − 1)/2,)
        bₖ for each (i, k) of ``numpy.tril_indices(d, -1)``.
    """
    _, cols = np.tril_indices(d, -1)
    return eta + (d - 2 - cols) / 2.0


def partial_correlation_cholesky(partial, d: int):
    """The Cholesky factor L of the correlation matrix with canonical partial correlations ``partial``.

    With c the partial correlations placed strictly below the diagonal (order of
    ``numpy.tril_indices(d, -1)``), the rows of L are (Lewandowski, Kurowicka & Joe 2009; the
    Stan reference manual's transform of a correlation Cholesky factor)

        Lᵢₖ = cᵢₖ · √(Π_{j<k} (1 − cᵢⱼ²)) for k < i,   Lᵢᵢ = √(Π_{j<i} (1 − cᵢⱼ²)),

    so every row has unit norm and LLᵀ is a correlation matrix; computed from cumulative sums of
    log(1 − cᵢⱼ²), differentiable in c.

    Parameters
    ----------
    partial : tensor (d(d − 1)/2,)
        Partial correlations in (−1, 1).
    d : int
        The dimension.

    Returns
    -------
    tensor (d, d)
        Lower-triangular L with positive diagonal.
    """
    rows, cols = np.tril_indices(d, -1)
    strict = pt.zeros(d * d)[rows * d + cols].set(partial).reshape((d, d))
    log_rest = pt.log1p(-(strict**2))
    before = pt.cumsum(log_rest, axis=1) - log_rest  # Σ over j < k of log(1 − cᵢⱼ²)
    return (strict + pt.eye(d)) * pt.exp(0.5 * before)


def covariate_cholesky(d: int, sd_sigma: float, eta: float):
    """The covariate model's Σx = diag(s)·R·diag(s) in the current model, returned as its Cholesky factor.

    Prior: standard deviations s ~ HalfNormal(``sd_sigma``) (``x_sd``) and correlation matrix
    R ~ LKJ(η), the distribution of ``pm.LKJCholeskyCov``, parametrised by R's canonical partial
    correlations: (cᵢₖ + 1)/2 ~ Beta(bₖ, bₖ) independently (``x_partial_corr``, stored as
    (c + 1)/2; :func:`lkj_partial_shapes`), R = LLᵀ with L of
    :func:`partial_correlation_cholesky`.  NUTS samples log s and logit((c + 1)/2) = 2 atanh(c), in
    which the prior factorises into independent one-dimensional densities; PyMC's packed
    Cholesky parametrisation of the same prior couples the standard deviations with the
    correlations.  Deterministics ``x_cov`` (Σx) and ``x_corr`` (R) are recorded.

    Parameters
    ----------
    d : int
        The number of covariates.
    sd_sigma : float
        Scale of the half-normal prior of the standard deviations.
    eta : float
        LKJ shape of the correlations (1: uniform).

    Returns
    -------
    tensor (d, d)
        diag(s)·L, lower triangular.
    """
    sd = pm.HalfNormal("x_sd", sd_sigma, shape=d)
    if d == 1:
        chol = sd[:, None]
        pm.Deterministic("x_cov", chol @ chol.T)
        return chol
    shapes = lkj_partial_shapes(d, eta)
    unit = pm.Beta("x_partial_corr", alpha=shapes, beta=shapes, shape=shapes.size)
    corr_chol = partial_correlation_cholesky(2.0 * unit - 1.0, d)
    pm.Deterministic("x_corr", corr_chol @ corr_chol.T)
    chol = sd[:, None] * corr_chol
    pm.Deterministic("x_cov", chol @ chol.T)
    return chol


def _glm_model(stats, arrays, moments, *, intercept, feature_names, priors, extra_data) -> pm.Model:
    """The noise-aware model of released statistics shared by the GLMs: priors, covariate model,
    and the normal likelihood r ~ N(n·m(θ), n·V(θ) + diag(v)) with the moments of ``moments``."""
    priors = {name: check_positive(name, value) for name, value in priors.items()}
    d = stats.d
    if feature_names is None:
        feature_names = getattr(stats, "features", None)
    names = [f"x{j}" for j in range(d)] if feature_names is None else [str(v) for v in feature_names]
    if len(names) != d or len(set(names)) != d:
        raise ValueError(f"feature_names must be {d} distinct names, one per feature, got {len(names)}")
    x_bound = np.inf if stats.x_bound is None else stats.x_bound
    with pm.Model(coords={"feature": names}) as model:
        data = {key: pm.Data(key, value) for key, value in arrays.items()}
        pm.Data("x_bound", np.float64(x_bound))
        for key, value in extra_data.items():
            pm.Data(key, value)
        beta = pm.Normal("beta", 0.0, priors["beta_sigma"], dims="feature")
        b = pm.Normal("intercept", 0.0, priors["intercept_sigma"]) if intercept else pt.constant(0.0)
        mu = pm.Normal("x_mean", 0.0, priors["x_mean_sigma"], dims="feature")
        x_chol = covariate_cholesky(d, priors["x_sd_sigma"], priors["x_eta"])
        mean, cov = moments(beta, b, mu, x_chol @ x_chol.T, d)
        n = data["stats_n"]
        total = n * cov + pt.diag(data["stats_noise_var"])
        logp = normal_logp(data["stats_vector"], n * mean, total)
        pm.Potential("likelihood", logp)
    hold_one_blas_thread_while(model)
    return model


def logistic_model(
    stats,
    *,
    noise_aware: bool = True,
    intercept: bool = True,
    feature_names=None,
    beta_sigma: float = 2.5,
    intercept_sigma: float = 2.5,
    x_mean_sigma: float = 1.0,
    x_sd_sigma: float = 1.0,
    x_eta: float = 2.0,
) -> pm.Model:
    """Bayesian logistic regression on released statistics, with the release noise marginalised.

    Priors: β ~ N(0, ``beta_sigma``² I) (dims ``feature``), intercept b ~ N(0, ``intercept_sigma``²);
    covariate model x ~ N(μ, Σx) with μ ~ N(0, ``x_mean_sigma``² I) (``x_mean``) and Σx from
    :func:`covariate_cholesky` (standard deviations HalfNormal(``x_sd_sigma``), ``x_sd``;
    correlations LKJ(``x_eta``) through their partial correlations, ``x_partial_corr``; Σx
    recorded as ``x_cov``).  Likelihood ``likelihood`` (a ``pm.Potential``): the released
    vector r ~ N(n·m(θ), n·V(θ) + diag(v)), the central-limit normal of the true statistics
    (Bernstein & Sheldon 2019; Kulkarni et al. 2021) with the moments of
    :func:`pm_private.glm.moments.stat_moments` and the release's noise variances v.

    Parameters
    ----------
    stats : LogisticStatsRelease or LogisticStats
        A release of :func:`pm_private.glm.release_logistic_stats`, or exact statistics
        (:func:`pm_private.glm.logistic_stats`; no noise).
    noise_aware : bool, default True
        False: treat the released statistics as exact (v = 0), the naive model, which is
        over-confident when the noise is not small against the sampling variability.
    intercept : bool, default True
        Whether the model has an intercept (``intercept``); without, b = 0.
    feature_names : sequence of str, optional
        Coordinates of the ``feature`` dim (default: the column names the release recorded from
        a data frame, ``stats.features``, else x0, x1, …).
    beta_sigma, intercept_sigma : float, default 2.5
        Prior standard deviations of the coefficients and of the intercept.
    x_mean_sigma, x_sd_sigma : float, default 1.0
        Prior scales of the covariate mean and standard deviations (covariates on the scale of
        standardised data).
    x_eta : float, default 2.0
        LKJ shape of the covariate correlations (1: uniform).

    Returns
    -------
    pymc.Model
        With ``beta``, ``intercept`` (when ``intercept``), ``x_mean``, ``x_sd``, ``x_partial_corr``
        (when d > 1), the deterministics ``x_cov`` and ``x_corr`` (when d > 1), and the data
        ``stats_vector``, ``stats_noise_var``, ``stats_n`` (swap them with
        :func:`set_logistic_stats`) and ``x_bound`` (for :func:`predict_logistic`).

    Raises
    ------
    ValueError
        If ``stats`` is not a statistics record, a prior scale is not finite and > 0, or the
        number of feature names is not d.

    Notes
    -----
    Cost per gradient O(k³), k = 2d + 1 + d(d+1)/2, independent of n; building the model limits
    BLAS to one thread in the process while it lives (small dense algebra).  Sample it with
    NUTS started at the posterior mode, its dense mass matrix at the Laplace approximation there
    (:func:`pm_private.glm.laplace_nuts`): inside the model, ``step = laplace_nuts()`` and
    ``pm.sample(step=step, initvals=laplace_start(step))``.  The statistics tie β to the
    covariate covariance, and the posterior's scales span orders of magnitude: at d = 2,
    n = 5000 a fit with the default diagonal adaptation took tens of times longer than with a
    dense one; at d = 10, n = 1000 this start and the partial-correlation parametrisation of Σx
    halve the leapfrog steps of a fit again (about 28 s for 2 chains of 1000 + 1000 on a
    lightly loaded 2-core machine).

    Examples
    --------
    >>> import numpy as np
    >>> from pm_private import logistic_model, release_logistic_stats
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 2))
    >>> y = rng.uniform(size=2000) < 1 / (1 + np.exp(-(X @ [1.0, -0.5] + 0.3)))
    >>> release = release_logistic_stats(X, y, epsilon=1.0, delta=1e-6, x_bound=4.0, rng=0)
    >>> model = logistic_model(release)
    >>> sorted(model.named_vars)[:3]
    ['beta', 'intercept', 'likelihood']
    """
    noise_aware = check_bool("noise_aware", noise_aware)
    intercept = check_bool("intercept", intercept)
    arrays = _arrays(stats, _LOGISTIC, noise_aware)
    priors = dict(
        beta_sigma=beta_sigma,
        intercept_sigma=intercept_sigma,
        x_mean_sigma=x_mean_sigma,
        x_sd_sigma=x_sd_sigma,
        x_eta=x_eta,
    )
    return _glm_model(
        stats, arrays, stat_moments, intercept=intercept, feature_names=feature_names, priors=priors, extra_data={}
    )


def set_logistic_stats(stats, model: pm.Model | None = None, *, noise_aware: bool = True) -> None:
    """Replace the statistics of a :func:`logistic_model` (same d), e.g. to refit without recompiling.

    Parameters
    ----------
    stats : LogisticStatsRelease or LogisticStats
        The new statistics.
    model : pymc.Model, optional
        The model (default: the model of the current context).
    noise_aware : bool, default True
        As in :func:`logistic_model`.

    Raises
    ------
    ValueError
        If ``stats`` is not a statistics record or its d differs from the model's.
    """
    _set_stats(stats, model, _LOGISTIC, noise_aware)


def _set_stats(stats, model, kinds, noise_aware, **extra) -> None:
    model = pm.modelcontext(model)
    arrays = _arrays(stats, kinds, check_bool("noise_aware", noise_aware))
    if arrays["stats_vector"].shape != model["stats_vector"].get_value().shape:
        raise ValueError("stats: the number of features differs from the model's")
    for key, value in extra.items():
        if model[key].get_value() != value:
            raise ValueError(f"stats: {key} is {value}, the model's {model[key].get_value()} (build a new model)")
    pm.set_data({**arrays, "x_bound": np.float64(np.inf if stats.x_bound is None else stats.x_bound)}, model=model)


def _posterior_dataset(posterior) -> xr.Dataset:
    if isinstance(posterior, xr.DataTree):
        return posterior["posterior"].to_dataset()
    if isinstance(posterior, xr.Dataset):
        return posterior
    raise ValueError(
        f"posterior must be the DataTree of pm.sample or its posterior Dataset, got {type(posterior).__name__}"
    )


def predict_logistic(posterior, X, *, x_bound: float | None = None, interval: float = 0.9) -> pd.DataFrame:
    """Posterior predictive probabilities P(y = 1 | x) of new rows under a fitted :func:`logistic_model`.

    Each row is projected onto the ball ‖x‖₂ ≤ Bx the release used (public; read from the
    sampled DataTree's ``constant_data``, or given), then p⁽ˢ⁾ = σ(xᵀβ⁽ˢ⁾ + b⁽ˢ⁾) for every
    posterior draw s.

    Parameters
    ----------
    posterior : xarray.DataTree or xarray.Dataset
        The result of ``pm.sample`` on the model (or its ``posterior`` group, then give ``x_bound``
        if the rows should be projected).
    X : array_like, shape (m, d)
        New covariate rows (public).
    x_bound : float, optional
        The projection radius (default: the model's, when the DataTree carries it; else none).
    interval : float, default 0.9
        Mass of the central credible interval of the probability.

    Returns
    -------
    pandas.DataFrame
        ``mean`` (the posterior predictive probability of y = 1), ``lower`` and ``upper`` (the
        central interval of p), one row per new row.

    Raises
    ------
    ValueError
        If ``X`` is not numeric, not finite or has the wrong number of columns, ``x_bound`` is
        given but not finite and > 0, ``interval`` is not in (0, 1), or ``posterior`` holds no
        ``beta``.
    """
    interval = check_fraction("interval", interval, closed=False)
    p = expit(_linear_predictor(posterior, X, x_bound, "logistic_model"))
    return _interval_table(p, interval)


def _linear_predictor(posterior, X, x_bound, builder: str) -> np.ndarray:
    """xᵀβ⁽ˢ⁾ + b⁽ˢ⁾ of the (projected) rows for every posterior draw s: shape (m, S)."""
    if x_bound is not None:
        x_bound = check_positive("x_bound", x_bound)
    elif isinstance(posterior, xr.DataTree) and "constant_data" in posterior.children:
        x_bound = float(posterior["constant_data"]["x_bound"].values)  # ∞: exact statistics, no projection
    draws = _posterior_dataset(posterior)
    if "beta" not in draws:
        raise ValueError(f"posterior holds no 'beta': pass the result of sampling a {builder}")
    beta = draws["beta"].stack(sample=("chain", "draw")).transpose("sample", ...).values
    if "intercept" in draws:
        b = draws["intercept"].stack(sample=("chain", "draw")).values
    else:
        b = np.zeros(beta.shape[0])
    X = as_matrix(X)
    if X.shape[1] != beta.shape[1]:
        raise ValueError(f"X has {X.shape[1]} columns, the model {beta.shape[1]} features")
    if not np.all(np.isfinite(X)):
        raise ValueError("X holds missing or non-finite values")
    if x_bound is not None and np.isfinite(x_bound):
        X = project_rows(X, x_bound)
    return X @ beta.T + b


def _interval_table(values: np.ndarray, interval: float) -> pd.DataFrame:
    lower, upper = np.quantile(values, [(1 - interval) / 2, (1 + interval) / 2], axis=1)
    return pd.DataFrame({"mean": values.mean(axis=1), "lower": lower, "upper": upper})


# ------------------------------------------------------------------------------ Poisson


def poisson_model(
    stats,
    *,
    noise_aware: bool = True,
    intercept: bool = True,
    feature_names=None,
    beta_sigma: float = 1.0,
    intercept_sigma: float = 2.5,
    x_mean_sigma: float = 1.0,
    x_sd_sigma: float = 1.0,
    x_eta: float = 2.0,
) -> pm.Model:
    """Bayesian Poisson regression on released statistics, with the release noise marginalised.

    Model of a record: x ~ N(μ, Σx), y | x ~ Poisson(exp(xᵀβ + b)), of which the release saw the
    clipped count ỹ = min(y, B).  Priors: β ~ N(0, ``beta_sigma``² I) (dims ``feature``), intercept
    b ~ N(0, ``intercept_sigma``²); μ ~ N(0, ``x_mean_sigma``² I) (``x_mean``) and Σx from
    :func:`covariate_cholesky` (standard deviations HalfNormal(``x_sd_sigma``), ``x_sd``;
    correlations LKJ(``x_eta``) through their partial correlations, ``x_partial_corr``; Σx
    recorded as ``x_cov``).  Likelihood ``likelihood`` (a ``pm.Potential``): the released
    vector r ~ N(n·m(θ), n·V(θ) + diag(v)), the central-limit normal of the true statistics
    (Bernstein & Sheldon 2019; Kulkarni et al. 2021) with the moments of the clipped counts
    (:func:`pm_private.glm.moments.poisson_stat_moments`) and the release's noise variances v.

    Parameters
    ----------
    stats : PoissonStatsRelease or PoissonStats
        A release of :func:`pm_private.glm.release_poisson_stats`, or exact statistics
        (:func:`pm_private.glm.poisson_stats`; no noise).
    noise_aware : bool, default True
        False: treat the released statistics as exact (v = 0), the naive model, which is
        over-confident when the noise is not small against the sampling variability.
    intercept : bool, default True
        Whether the model has an intercept (``intercept``); without, b = 0.
    feature_names : sequence of str, optional
        Coordinates of the ``feature`` dim (default: the column names the release recorded from
        a data frame, ``stats.features``, else x0, x1, …).
    beta_sigma : float, default 1.0
        Prior standard deviation of the coefficients (log rate ratios per unit of a covariate).
    intercept_sigma : float, default 2.5
        Prior standard deviation of the intercept (the log rate at x = 0).
    x_mean_sigma, x_sd_sigma : float, default 1.0
        Prior scales of the covariate mean and standard deviations (covariates on the scale of
        standardised data).
    x_eta : float, default 2.0
        LKJ shape of the covariate correlations (1: uniform).

    Returns
    -------
    pymc.Model
        With ``beta``, ``intercept`` (when ``intercept``), ``x_mean``, ``x_sd``, ``x_partial_corr``
        (when d > 1), the deterministics ``x_cov`` and ``x_corr`` (when d > 1), and the data
        ``stats_vector``, ``stats_noise_var``, ``stats_n`` (swap them with
        :func:`set_poisson_stats`), ``x_bound`` (for :func:`predict_poisson`) and ``y_bound``.

    Raises
    ------
    ValueError
        If ``stats`` is not a Poisson statistics record, a prior scale is not finite and > 0, or
        the number of feature names is not d.

    Notes
    -----
    Cost per gradient O(k³ + B), k = 2d + 1 + d(d+1)/2, independent of n.  Sample it as
    :func:`logistic_model` (:func:`pm_private.glm.laplace_nuts`, chains started at
    :func:`pm_private.glm.laplace_start`).  Known limits: the projection of rows onto the Bx
    ball is not modelled, the covariates are modelled as Gaussian, and there is no exposure
    offset.

    Examples
    --------
    >>> import numpy as np
    >>> from pm_private import poisson_model, release_poisson_stats
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 2))
    >>> y = rng.poisson(np.exp(X @ [0.5, -0.3] + 0.5))
    >>> release = release_poisson_stats(X, y, epsilon=1.0, delta=1e-6, x_bound=4.0, y_bound=10, rng=0)
    >>> model = poisson_model(release)
    >>> sorted(model.named_vars)[:3]
    ['beta', 'intercept', 'likelihood']
    """
    noise_aware = check_bool("noise_aware", noise_aware)
    intercept = check_bool("intercept", intercept)
    arrays = _arrays(stats, _POISSON, noise_aware)
    priors = dict(
        beta_sigma=beta_sigma,
        intercept_sigma=intercept_sigma,
        x_mean_sigma=x_mean_sigma,
        x_sd_sigma=x_sd_sigma,
        x_eta=x_eta,
    )
    y_bound = stats.y_bound

    def moments(beta, b, mu, cov, d):
        return poisson_stat_moments(beta, b, mu, cov, d, y_bound)

    return _glm_model(
        stats,
        arrays,
        moments,
        intercept=intercept,
        feature_names=feature_names,
        priors=priors,
        extra_data={"y_bound": np.int64(y_bound)},
    )


def set_poisson_stats(stats, model: pm.Model | None = None, *, noise_aware: bool = True) -> None:
    """Replace the statistics of a :func:`poisson_model` (same d and count bound), e.g. to refit
    without recompiling.

    Parameters
    ----------
    stats : PoissonStatsRelease or PoissonStats
        The new statistics.
    model : pymc.Model, optional
        The model (default: the model of the current context).
    noise_aware : bool, default True
        As in :func:`poisson_model`.

    Raises
    ------
    ValueError
        If ``stats`` is not a Poisson statistics record, or its d or count bound differs from the
        model's.
    """
    _set_stats(stats, model, _POISSON, noise_aware, y_bound=getattr(stats, "y_bound", None))


def predict_poisson(posterior, X, *, x_bound: float | None = None, interval: float = 0.9) -> pd.DataFrame:
    """Posterior predictive rates E[y | x] = exp(xᵀβ + b) of new rows under a fitted :func:`poisson_model`.

    Each row is projected onto the ball ‖x‖₂ ≤ Bx the release used (public; read from the
    sampled DataTree's ``constant_data``, or given), then λ⁽ˢ⁾ = exp(xᵀβ⁽ˢ⁾ + b⁽ˢ⁾) for every posterior
    draw s.  The rate is that of the unclipped count (the clipping only served the release).

    Parameters
    ----------
    posterior : xarray.DataTree or xarray.Dataset
        The result of ``pm.sample`` on the model (or its ``posterior`` group, then give ``x_bound``
        if the rows should be projected).
    X : array_like, shape (m, d)
        New covariate rows (public).
    x_bound : float, optional
        The projection radius (default: the model's, when the DataTree carries it; else none).
    interval : float, default 0.9
        Mass of the central credible interval of the rate.

    Returns
    -------
    pandas.DataFrame
        ``mean`` (the posterior predictive mean count), ``lower`` and ``upper`` (the central
        interval of λ), one row per new row.

    Raises
    ------
    ValueError
        If ``X`` is not numeric, not finite or has the wrong number of columns, ``x_bound`` is
        given but not finite and > 0, ``interval`` is not in (0, 1), or ``posterior`` holds no
        ``beta``.
    """
    interval = check_fraction("interval", interval, closed=False)
    with np.errstate(over="ignore"):
        rate = np.exp(_linear_predictor(posterior, X, x_bound, "poisson_model"))
    return _interval_table(rate, interval)

"""Noise-aware Bayesian logistic regression on released statistics (Kulkarni et al. 2021)."""

from __future__ import annotations

import pymc as pm

from ..privacy.validation import check_bool
from ..released.glm import _arrays, _glm_model, _set_stats
from .moments import logistic_stat_moments
from .release import LogisticStats, LogisticStatsRelease

__all__ = ["logistic_model", "set_logistic_stats"]


_LOGISTIC = (LogisticStatsRelease, LogisticStats)


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
    :func:`pm_private.released.covariates.lkj_cholesky` (standard deviations HalfNormal(``x_sd_sigma``), ``x_sd``;
    correlations LKJ(``x_eta``) through their partial correlations, ``x_partial_corr``; Σx
    recorded as ``x_cov``).  Likelihood ``likelihood`` (a ``pm.Potential``): the released
    vector r ~ N(n·m(θ), n·V(θ) + diag(v)), the central-limit normal of the true statistics
    (Bernstein & Sheldon 2019; Kulkarni et al. 2021) with the moments of
    :func:`pm_private.moments.logistic_stat_moments` and the release's noise variances v.

    Parameters
    ----------
    stats : LogisticStatsRelease or LogisticStats
        A release of :func:`pm_private.release_logistic_stats`, or exact statistics
        (:func:`pm_private.logistic_stats`; no noise).
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
    (:func:`pm_private.laplace_nuts`): inside the model, ``step = laplace_nuts()`` and
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
        stats,
        arrays,
        logistic_stat_moments,
        intercept=intercept,
        feature_names=feature_names,
        priors=priors,
        extra_data={},
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

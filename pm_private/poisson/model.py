"""Noise-aware Bayesian Poisson regression on released statistics (Kulkarni et al. 2021)."""

from __future__ import annotations

import numpy as np
import pymc as pm

from ..privacy.validation import check_bool
from ..released.glm import _arrays, _glm_model, _set_stats
from .moments import poisson_stat_moments
from .release import PoissonStats, PoissonStatsRelease

__all__ = ["poisson_model", "set_poisson_stats"]


_POISSON = (PoissonStatsRelease, PoissonStats)


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
    :func:`pm_private.released.covariates.lkj_cholesky` (standard deviations HalfNormal(``x_sd_sigma``), ``x_sd``;
    correlations LKJ(``x_eta``) through their partial correlations, ``x_partial_corr``; Σx
    recorded as ``x_cov``).  Likelihood ``likelihood`` (a ``pm.Potential``): the released
    vector r ~ N(n·m(θ), n·V(θ) + diag(v)), the central-limit normal of the true statistics
    (Bernstein & Sheldon 2019; Kulkarni et al. 2021) with the moments of the clipped counts
    (:func:`pm_private.moments.poisson_stat_moments`) and the release's noise variances v.

    Parameters
    ----------
    stats : PoissonStatsRelease or PoissonStats
        A release of :func:`pm_private.release_poisson_stats`, or exact statistics
        (:func:`pm_private.poisson_stats`; no noise).
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
    :func:`logistic_model` (:func:`pm_private.laplace_nuts`, chains started at
    :func:`pm_private.laplace_start`).  Known limits: the projection of rows onto the Bx
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

"""Noise-aware Bayesian logistic regression on released statistics (Kulkarni et al. 2021)."""

from __future__ import annotations

import pymc as pm
import pytensor.tensor as pt

from .._engine.docstrings import parameters_from
from ..released.glm import GLM_MODEL_PARAMETERS, GLM_SETTER_PARAMETERS, PUBLIC_ROWS, glm_model, set_glm_stats
from .moments import logistic_stat_moments
from .release import LOGISTIC

__all__ = ["logistic_model", "set_logistic_stats"]


@parameters_from(GLM_MODEL_PARAMETERS, sections=("Warns",))
def logistic_model(
    stats,
    *,
    noise_aware: bool = True,
    intercept: bool = True,
    feature_names=None,
    beta_sigma: float = 1.25,
    intercept_sigma: float = 2.5,
    x_mean_sigma: float = 1.0,
    x_sd_sigma: float = 1.0,
    x_eta: float = 2.0,
    x_sample=PUBLIC_ROWS,
) -> pm.Model:
    """Bayesian logistic regression on released statistics, with the release noise marginalised.

    The model of Kulkarni et al. (2021), with the latent true statistics marginalised as in
    Bernstein & Sheldon (2019).  A record is

        x ~ N(μ, Σx),   y | x ~ Bernoulli(σ(xᵀβ + b)),

    with priors β ~ N(0, ``beta_sigma``² I), b ~ N(0, ``intercept_sigma``²),
    μ ~ N(0, ``x_mean_sigma``² I) and Σx from ``pm_private.released.covariates.lkj_cholesky``
    (standard deviations HalfNormal(``x_sd_sigma``), correlations LKJ(``x_eta``) through their
    partial correlations); with public rows (``x_sample``, by default those the release's
    preprocessing kept), x follows their shape instead (below).  The release r of the statistics
    t(x, y) = (x, y, upper(xxᵀ), y·x)
    summed over the n records is modelled by the central-limit normal of the true statistics plus
    the release's Gaussian noise of variances v:

        r ~ N(n·m(θ), n·V(θ) + diag(v)),   θ = (β, b, μ, Σx),

    with the moments m, V of :func:`pm_private.logistic.moments.logistic_stat_moments`.

    Parameters
    ----------
    stats : LogisticStatsRelease or LogisticStats
        A release of :func:`pm_private.release_logistic_stats`, or exact statistics
        (:func:`pm_private.logistic_stats`; no noise).
    beta_sigma : float, default 1.25
        Prior standard deviation of the coefficients β (log odds ratios per unit of a covariate):
        Gelman, Jakulin, Pittau & Su's (2008) 2.5 for inputs scaled to standard deviation 0.5,
        that is 1.25 on the public standardised scale of :meth:`pm_private.Preprocessing.from_public`
        (standard deviation 1).  Where the release barely informs β, a wider prior lets the
        saturating link pull the posterior outwards (the documentation's model-selection page
        measures it).
    intercept_sigma : float, default 2.5
        Prior standard deviation of the intercept b.

    Returns
    -------
    pymc.Model
        With coords ``feature`` and ``statistic`` (the labels of the released vector), the
        variables ``beta`` (dims ``feature``), ``intercept`` (when ``intercept``), ``x_mean``,
        (with ``x_sample``, the data ``x_sample_whitened``, and ``x_sample_jackknife`` for
        public rows),
        ``x_sd`` (dims ``feature``), ``x_partial_corr`` (when d > 1: the partial correlations, in (−1, 1); dims
        ``feature_pair``, labels ``"a,b"``), the observed ``likelihood`` (dims ``statistic``: the released vector, whose random
        method draws replicated releases), and the data ``degree2_vector``, ``stats_noise_var``,
        ``stats_n`` (swap them with :func:`set_logistic_stats`), ``x_bound`` (for
        :func:`predict_logistic`) and ``fit_record`` (the family and release kind, checked by the
        predictors); where n is private (a release under add/remove neighbours) the latent
        ``n_people`` and the observed ``n_noisy`` (the released count), with the data
        ``stats_n_noisy`` and ``stats_n_noise_var``.

    Raises
    ------
    ValueError
        If ``stats`` is not a logistic statistics record, a prior scale is not finite and > 0, or
        ``feature_names`` are not d distinct names.

    See Also
    --------
    set_logistic_stats : Swap the statistics of a built model without recompiling.
    predict_logistic : Predicted probabilities at new covariates from the posterior.
    logistic_bounds : The library's rule for the release's row bound, with the public rows of ``x_sample``.

    Notes
    -----
    Privacy: the model is post-processing of the release; building and sampling it spend no
    budget.

    Contract: the variable, data and dim names listed under Returns are public; the cost of a
    gradient is that of a k × k Cholesky factorisation, k = 2d + 1 + d(d+1)/2, independent of n.
    Building the model limits BLAS to one thread in the process while it lives (small dense
    algebra).  Known limits: the projection of rows onto the ``x_bound`` ball is not modelled (a
    bound from :func:`logistic_bounds` keeps the projected share small and falling with n);
    without public rows the covariates are modelled as Gaussian, and on binary or skewed
    covariates the intervals then miss the full-data coefficients more often as n grows (the
    degree-2 statistics do not determine the fit there: module notes of
    ``pm_private.released.glm``).

    Sampling: the statistics tie β to the covariate covariance, and the posterior's scales span
    orders of magnitude, so sample with NUTS started at the posterior mode and its dense mass
    matrix at the Laplace approximation there (``laplace_nuts`` and ``laplace_start`` of
    ``pm_private.released``): inside the model, ``step = laplace_nuts()`` and
    ``pm.sample(step=step, initvals=laplace_start(step))``.  Its measured advantage over PyMC's
    default adaptation is on the documentation's model-selection page.

    Examples
    --------
    >>> import numpy as np
    >>> from pm_private import logistic_model, release_logistic_stats
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 2))
    >>> y = rng.uniform(size=2000) < 1 / (1 + np.exp(-(X @ [1.0, -0.5] + 0.3)))
    >>> release = release_logistic_stats(X, y, epsilon=1.0, delta=1e-6, x_bound=4.0, rng=0)
    >>> model = logistic_model(release)
    >>> [rv.name for rv in model.free_RVs]
    ['beta', 'intercept', 'x_mean', 'x_sd', 'x_partial_corr']
    """
    priors = dict(
        beta_sigma=beta_sigma,
        intercept_sigma=intercept_sigma,
        x_mean_sigma=x_mean_sigma,
        x_sd_sigma=x_sd_sigma,
        x_eta=x_eta,
    )
    return glm_model(
        stats,
        logistic_stat_moments,
        family=LOGISTIC,
        noise_aware=noise_aware,
        intercept=intercept,
        feature_names=feature_names,
        priors=priors,
        x_sample=x_sample,
        link_mean=_logistic_link_mean,
    )


def _logistic_link_mean(a):
    """E[y | a] = 2σ(a) − 1 = tanh(a/2) for labels ±1."""
    return pt.tanh(0.5 * a)


@parameters_from(GLM_SETTER_PARAMETERS)
def set_logistic_stats(stats, model: pm.Model | None = None, *, noise_aware: bool = True, x_sample=PUBLIC_ROWS) -> None:
    """Replace the statistics of a :func:`logistic_model` (same d), e.g. to refit without recompiling.

    Parameters
    ----------
    stats : LogisticStatsRelease or LogisticStats
        The new statistics.

    Raises
    ------
    ValueError
        If ``stats`` is not a statistics record or its d differs from the model's, or ``x_sample``
        is given to a model built without one, has another number of rows, or is not a reference
        law for a model built with one (or the other way round).
    """
    set_glm_stats(stats, model, LOGISTIC, noise_aware, x_sample=x_sample)

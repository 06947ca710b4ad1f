"""Noise-aware Bayesian Poisson regression on released statistics (Kulkarni et al. 2021)."""

from __future__ import annotations

import numpy as np
import pymc as pm

from .._engine.docstrings import parameters_from
from ..released.family import check_stats
from ..released.glm import GLM_MODEL_PARAMETERS, GLM_SETTER_PARAMETERS, PUBLIC_ROWS, glm_model, set_glm_stats
from .moments import clipped_count_mean, poisson_stat_moments
from .release import POISSON

__all__ = ["poisson_model", "set_poisson_stats"]


@parameters_from(GLM_MODEL_PARAMETERS, sections=("Warns",))
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
    x_sample=PUBLIC_ROWS,
) -> pm.Model:
    """Bayesian Poisson regression on released statistics, with the release noise marginalised.

    The model of Kulkarni et al. (2021) for counts, with the latent true statistics marginalised as
    in Bernstein & Sheldon (2019).  A record is

        x ~ N(μ, Σx),   y | x ~ Poisson(exp(xᵀβ + b)),

    of which the release saw the clipped count ỹ = min(y, B), with priors β ~ N(0, ``beta_sigma``² I),
    b ~ N(0, ``intercept_sigma``²), μ ~ N(0, ``x_mean_sigma``² I) and Σx from
    ``pm_private.released.covariates.lkj_cholesky`` (standard deviations HalfNormal(``x_sd_sigma``),
    correlations LKJ(``x_eta``) through their partial correlations); with public rows (``x_sample``,
    by default those the release's preprocessing kept), x follows their shape instead.  The release r of the
    statistics t(x, ỹ) = (x, ỹ, upper(xxᵀ), ỹ·x) summed over the n records is modelled by the
    central-limit normal of the true statistics plus the release's Gaussian noise of variances v:

        r ~ N(n·m(θ), n·V(θ) + diag(v)),   θ = (β, b, μ, Σx),

    with the moments m, V of the clipped counts
    (:func:`pm_private.poisson.moments.poisson_stat_moments`).

    Parameters
    ----------
    stats : PoissonStatsRelease or PoissonStats
        A release of :func:`pm_private.release_poisson_stats`, or exact statistics
        (:func:`pm_private.poisson_stats`; no noise).
    beta_sigma : float, default 1.0
        Prior standard deviation of the coefficients (log rate ratios per unit of a covariate).
    intercept_sigma : float, default 2.5
        Prior standard deviation of the intercept (the log rate at x = 0).

    Returns
    -------
    pymc.Model
        With coords ``feature`` and ``statistic``, the variables ``beta`` (dims ``feature``),
        ``intercept`` (when ``intercept``), ``x_mean`` and ``x_sd`` (dims ``feature``),
        ``x_partial_corr`` (when d > 1: the partial correlations, in (−1, 1); dims ``feature_pair``,
        labels ``"a,b"``),
        the observed ``likelihood`` (dims
        ``statistic``: the released vector, whose random method draws replicated releases), and the
        data ``degree2_vector``, ``stats_noise_var``, ``stats_n`` (swap them with
        :func:`set_poisson_stats`), ``x_bound`` (for :func:`predict_poisson`), ``y_bound`` (B) and
        ``fit_record`` (the family and release kind, checked by the predictors); where n is private
        (a release under add/remove neighbours) the latent ``n_people`` and the observed
        ``n_noisy`` (the released count), with the data ``stats_n_noisy`` and
        ``stats_n_noise_var``.

    Raises
    ------
    ValueError
        If ``stats`` is not a Poisson statistics record, a prior scale is not finite and > 0, or
        ``feature_names`` are not d distinct names.

    See Also
    --------
    set_poisson_stats : Swap the statistics of a built model without recompiling.
    predict_poisson : Predicted rates at new covariates from the posterior.
    poisson_bounds : The library's rule for the release's row bound, with the public rows of ``x_sample``.

    Notes
    -----
    Privacy: the model is post-processing of the release; building and sampling it spend no
    budget.

    Contract: the variable, data and dim names listed under Returns are public; the cost of a
    gradient is O(k³ + B), k = 2d + 1 + d(d+1)/2, independent of n.  Building the model limits BLAS
    to one thread in the process while it lives.  Known limits: the projection of rows onto the
    ``x_bound`` ball is not modelled (a bound from :func:`poisson_bounds` keeps the projected share
    small and falling with n), without public rows the covariates are modelled as Gaussian
    (biased on binary or skewed covariates at large n; module notes of ``pm_private.released.glm``),
    and there is no exposure offset.

    Sampling: as :func:`logistic_model`, with NUTS started at the posterior mode and its dense mass
    matrix at the Laplace approximation there (``laplace_nuts`` and ``laplace_start`` of
    ``pm_private.released``): inside the model, ``step = laplace_nuts()`` and
    ``pm.sample(step=step, initvals=laplace_start(step))``.

    Examples
    --------
    >>> import numpy as np
    >>> from pm_private import poisson_model, release_poisson_stats
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 2))
    >>> y = rng.poisson(np.exp(X @ [0.5, -0.3] + 0.5))
    >>> release = release_poisson_stats(X, y, epsilon=1.0, delta=1e-6, x_bound=4.0, y_bound=10, rng=0)
    >>> model = poisson_model(release)
    >>> [rv.name for rv in model.free_RVs]
    ['beta', 'intercept', 'x_mean', 'x_sd', 'x_partial_corr']
    """
    check_stats(stats, POISSON)  # before its count bound is read
    y_bound = stats.y_bound
    priors = dict(
        beta_sigma=beta_sigma,
        intercept_sigma=intercept_sigma,
        x_mean_sigma=x_mean_sigma,
        x_sd_sigma=x_sd_sigma,
        x_eta=x_eta,
    )

    def moments(beta, b, mu, cov, d):
        return poisson_stat_moments(beta, b, mu, cov, d, y_bound)

    return glm_model(
        stats,
        moments,
        family=POISSON,
        noise_aware=noise_aware,
        intercept=intercept,
        feature_names=feature_names,
        priors=priors,
        extra_data={"y_bound": np.int64(y_bound)},
        x_sample=x_sample,
        link_mean=lambda a: clipped_count_mean(a, y_bound),
    )


@parameters_from(GLM_SETTER_PARAMETERS)
def set_poisson_stats(stats, model: pm.Model | None = None, *, noise_aware: bool = True, x_sample=PUBLIC_ROWS) -> None:
    """Replace the statistics of a :func:`poisson_model` (same d and count bound), e.g. to refit
    without recompiling.

    Parameters
    ----------
    stats : PoissonStatsRelease or PoissonStats
        The new statistics.

    Raises
    ------
    ValueError
        If ``stats`` is not a Poisson statistics record, or its d or count bound differs from the
        model's.
    """
    set_glm_stats(stats, model, POISSON, noise_aware, x_sample=x_sample, y_bound=getattr(stats, "y_bound", None))

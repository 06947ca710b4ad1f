"""The noise-aware proportional-hazards regression of a release of the exit table with covariate
moments (:mod:`pm_private.survival.regression.release`).

A person's covariates follow x ~ N(μ, Σx) (the covariate model of the GLMs,
:func:`pm_private.released.covariates.lkj_cholesky`); their exit follows piecewise-constant
hazards, event λⱼ·exp(xᵀβ) and censoring κⱼ inside interval j (times divided by the horizon τ;
log λⱼ and log κⱼ random walks over the intervals, as in
:func:`pm_private.survival.survival_model`).  The released vector r (the counts, the covariate
sums per exit and the upper triangle of Σxxᵀ) is the sum of n independent contributions plus the
release's Gaussian noise, so by the central limit theorem (Bernstein & Sheldon 2019; Kulkarni et
al. 2021 for GLMs)

    r ~ N(n·m(θ), n·V(θ) + diag(v)),

with m, V the mean and covariance of one person's contribution
(``pm_private.survival.regression.moments.regression_stat_blocks``: one-dimensional
Gauss–Hermite integrals over the linear predictor) and v the noise variances.  β is the vector of
log hazard ratios per unit of each covariate on the release's (public) scale.  Since a person
leaves by one exit, n·V is block-arrowhead plus a rank-one term, and the log-density is
evaluated by blocks (``pm_private.survival.regression.likelihood``): the cost of a gradient is
O(J·d³ + d⁵) flops instead of the dense O(J³d³ + d⁶), independent of n.  The model's graph holds
that log-density and its gradient as one compiled Op (``pm_private.survival.regression.ops``:
Numba kernels compiled once per machine), and the replicated releases' mean and covariance as
another.

Cells (strata: arm, sex, centre) get their own baseline and censoring hazards and their own
covariate mean, and share β and the covariates' covariance: the stratified proportional-hazards
model.  Their shares of the n people are a Dirichlet parameter (the per-cell counts are released
with noise, only n is public).

Covariate law: where the release declares its columns' kinds (``Preprocessing.x_kinds``), the
means of the counts and covariate sums are taken from a reference law matched to the released
moments and those kinds (``pm_private.survival.regression.covariate_law``), as the GLMs do;
otherwise, or with ``x_sample=None``, the covariates are Gaussian within a cell (binary or
skewed covariates then bias β at large n).

Known limits: the covariance of the statistics keeps the Gaussian law's forms, the cells share
the reference law's shape (its rows moved onto each cell's mean), censoring does not depend on
x, and the projection of rows
onto the ``x_bound`` ball is not modelled (the release's ``projected`` count says how many rows it
moved; a bound from :func:`pm_private.survival.survival_regression_bounds` keeps the projected share
small and falling with n).
"""

from __future__ import annotations

import warnings

import numpy as np
import pymc as pm
import pytensor.tensor as pt

from ..._engine.compile_notice import announce_compilation
from ..._engine.compile_worker import start_compile_worker
from ...privacy.validation import check_positive
from ...released.copula_law import ReferenceLaw, rare_level_warning, reference_law
from ...released.covariates import lkj_cholesky
from ...released.family import check_stats, packed_preprocessing, record_fit, record_preprocessing
from ...released.glm import PUBLIC_ROWS, CovariateLawWarning, preprocessing_arrays, whitened_sample
from ...released.reparametrisation import random_walk, symmetric_dirichlet
from ..exits.model import HAZARDS, people_of_total
from ..table_models import censoring_terms, check_censoring, resolve_noise_aware, survival_deterministics
from .covariate_law import law_mean_shift
from .moments import statistic_size
from .ops import regression_log_density, regression_release_law
from .release import SURVIVAL_REGRESSION, SurvivalRegressionStats, SurvivalRegressionStatsRelease

__all__ = [
    "covariate_law_warning",
    "regression_statistic_labels",
    "set_survival_regression_stats",
    "survival_regression_model",
]

#: Variance added to every statistic of an exact release, whose counts add up to n exactly (the
#: covariance of the counts is singular without noise).
EXACT_JITTER = 1e-6


def regression_statistic_labels(stats, names) -> list[str]:
    """Labels of the released vector in the model's order: the 2J + 1 exits, the covariate sums
    per exit, the upper triangle of Σxxᵀ."""
    ends = [0.0, *stats.edges.tolist()]
    spans = [f"({ends[j]:g}, {ends[j + 1]:g}]" for j in range(stats.J)]
    exits = [f"event in {s}" for s in spans] + [f"censored in {s}" for s in spans] + [f"event-free at {ends[-1]:g}"]
    i, j = np.triu_indices(len(names))
    return (
        [f"n[{e}]" for e in exits]
        + [f"sum x[{name} | {e}]" for e in exits for name in names]
        + [f"sum {names[a]}·{names[b]}" for a, b in zip(i, j, strict=True)]
    )


def _arrays(stats, noise_aware: bool) -> dict[str, np.ndarray]:
    d, K = stats.d, stats.K
    i, j = np.triu_indices(d)

    def per_cell(counts, x_sums, xx):
        return np.concatenate([counts, x_sums.reshape(K, -1), xx[:, i, j]], axis=1)

    vector = per_cell(stats.counts, stats.x_sums, stats.xx)
    if noise_aware:
        variance = stats.noise_variance()
        noise = per_cell(variance["counts"], variance["x_sums"], variance["xx"])
    else:
        noise = np.full(vector.shape, EXACT_JITTER)
    # Treated as exact, the counts must add up to the model's n: a release's noisy counts add up to
    # n only within the noise, and n·V has no spread along their sum, so the naive model takes
    # their sum for n (an exact table's is n).  Where n is private, so does the noise-aware model's
    # likelihood, and the latent n is seen through that sum alone (people_of_total).
    n = float(stats.n) if noise_aware and stats.n is not None else max(float(np.sum(stats.counts)), 1.0)
    return {"regression_vector": vector, "regression_noise_var": noise, "stats_n": np.float64(n)}


def covariate_law_warning(stats, names) -> str | None:
    """The warning :func:`survival_regression_model` raises, with the Gaussian covariate law
    (``x_sample=None``), where the release declares columns whose law is not Gaussian
    (``Preprocessing.x_kinds``: binary or categorical), or None; public facts only.

    The model's expectations over the covariates (each cell's exit probabilities and moments)
    then take a Gaussian law with the released means and covariance.  A binary or categorical column
    has other higher moments, so those expectations, and the hazard ratios fitted to them, carry
    a bias that does not shrink with n.

    Parameters
    ----------
    stats : SurvivalRegressionStatsRelease or SurvivalRegressionStats
        The statistics the model is built on.
    names : sequence of str
        The covariates' names.

    Returns
    -------
    str or None
        The message, naming the columns and their kinds.
    """
    preprocessing = getattr(stats, "preprocessing", None)
    kinds = None if preprocessing is None else preprocessing.x_kinds
    if kinds is None:
        return None
    declared = [f"{name} ({kind})" for name, kind in zip(names, kinds, strict=True) if kind != "continuous"]
    if not declared:
        return None
    return (
        f"survival_regression_model describes the covariates by a Gaussian law with their released means and "
        f"covariance, but the release declares {len(declared)} of its {len(names)} columns not continuous: "
        f"{', '.join(declared)}; the hazard ratios' expectations over those columns are approximate, with a "
        f"bias that does not shrink with n (the default x_sample='public' takes their reference law)"
    )


def _check(stats):
    check_stats(stats, SURVIVAL_REGRESSION)
    if not isinstance(stats, SurvivalRegressionStats | SurvivalRegressionStatsRelease):
        raise ValueError(
            f"stats: survival_regression_model takes an exit table with covariate moments, got {type(stats).__name__}"
        )


def _likelihood_functions(K: int, discrete: bool):
    """The observed statistics' log-density and its random method, each one compiled Op of the
    parameters (:mod:`pm_private.survival.regression.ops`); ``shift`` is a covariate law's shift of
    one person's mean (:func:`~pm_private.survival.regression.covariate_law.law_mean_shift`), n·π
    times it on each cell's statistics."""

    def logp(value, n, share, noise_var, shift, beta, mu, chol, lei, cens):
        shifted = value - n * share[:, None] * shift
        return regression_log_density(shifted, n, share, noise_var, beta, mu, chol, lei, cens, discrete=discrete)

    def dist(n, share, noise_var, shift, beta, mu, chol, lei, cens, size):
        mean, cov = regression_release_law(n, share, noise_var, beta, mu, chol, lei, cens, discrete=discrete)
        mean = mean + (n * share[:, None] * shift).reshape((-1,))
        draws = pm.MvNormal.dist(mean, cov, size=size)
        return draws.reshape((*draws.shape[:-1], K, -1))

    return logp, dist


#: The prior scales of :func:`survival_regression_model`, checked finite and > 0.
PRIOR_SCALES = (
    "beta_sigma",
    "baseline_sigma",
    "baseline_step_sigma",
    "censoring_sigma",
    "censoring_step_sigma",
    "x_mean_sigma",
    "x_sd_sigma",
    "x_eta",
    "cell_share_alpha",
)


def _checked_options(hazard: str, censoring: str, arguments: dict) -> dict[str, float]:
    """Check ``hazard`` and ``censoring``; the prior scales of ``arguments``, checked."""
    if hazard not in ("piecewise_exponential", "cloglog"):
        raise ValueError(f"hazard must be 'piecewise_exponential' or 'cloglog', got {hazard!r}")
    check_censoring(censoring)
    return {name: check_positive(name, arguments[name]) for name in PRIOR_SCALES}


def _feature_names(stats, feature_names) -> list[str]:
    """The d covariate names: ``feature_names``, else the release's, else x0, x1, …"""
    d = stats.d
    if feature_names is None:
        feature_names = stats.features
    names = [f"x{j}" for j in range(d)] if feature_names is None else [str(v) for v in feature_names]
    if len(names) != d or len(set(names)) != d:
        raise ValueError(f"feature_names must be {d} distinct names, one per covariate, got {len(names)}")
    return names


def _covariate_law(x_sample, stats) -> ReferenceLaw | None:
    """The reference law the model takes (None: the Gaussian law): ``"public"`` gives the release's
    reference law where its preprocessing declares the columns' kinds, else None."""
    if isinstance(x_sample, ReferenceLaw) or x_sample is None:
        return x_sample
    if isinstance(x_sample, str) and x_sample == PUBLIC_ROWS:
        declared = getattr(getattr(stats, "preprocessing", None), "x_kinds", None) is not None
        return reference_law(stats) if declared else None
    raise ValueError(f"x_sample must be 'public', None or a reference law (pm_private.reference_law), got {x_sample!r}")


def _law_shift(law, stats, beta, mu, x_chol, lei, cens, discrete: bool):
    """The shift of one person's mean per cell (K, k) that the reference law ``law`` gives, with its
    whitened rows as the model's data ``x_sample_whitened``; zeros for the Gaussian law."""
    if law is None:
        return pt.zeros((stats.K, statistic_size(stats.J, stats.d)))
    whitened = pm.Data("x_sample_whitened", whitened_sample(law.rows, stats))
    return law_mean_shift(whitened, beta, mu, x_chol, lei, cens, discrete=discrete)


def _hazard_terms(priors, censoring: str, discrete: bool, centre: float, width, K: int, J: int):
    """The baseline and censoring random walks (model variables ``baseline``, ``censoring``) and
    the deterministics ``cumulative_hazard`` and ``survival``; returns the log event increments
    and the censoring terms the likelihood takes."""
    walk = (("cell", "interval"), (K, J))
    baseline = random_walk("baseline", centre, priors["baseline_sigma"], priors["baseline_step_sigma"], *walk)
    log_event_increment = baseline if discrete else baseline + np.log(width)
    censor_terms = censoring_terms(censoring, centre, priors, (K, J), width, discrete)
    survival_deterministics(pt.cumsum(pt.exp(log_event_increment), axis=-1))
    return log_event_increment, censor_terms


def survival_regression_model(
    stats,
    *,
    noise_aware: bool | None = None,
    hazard: str = "piecewise_exponential",
    censoring: str = "random_walk",
    feature_names=None,
    x_sample=PUBLIC_ROWS,
    beta_sigma: float = 1.0,
    baseline_sigma: float = 3.0,
    baseline_step_sigma: float = 0.5,
    censoring_sigma: float = 3.0,
    censoring_step_sigma: float = 0.5,
    x_mean_sigma: float = 1.0,
    x_sd_sigma: float = 1.0,
    x_eta: float = 2.0,
    cell_share_alpha: float = 1.0,
) -> pm.Model:
    """Proportional-hazards regression on a release of the exit table with covariate moments,
    with the release's noise marginalised (module notes).

    Parameters
    ----------
    stats : SurvivalRegressionStatsRelease or SurvivalRegressionStats
        A release of :func:`pm_private.survival.release_survival_regression_stats`, or
        the exact statistics of :func:`pm_private.survival.survival_regression_stats`.
    noise_aware : bool, optional
        Model the release's noise (True) or treat the statistics as exact (False).  Default: True
        for a release, False for exact statistics.
    hazard : {"piecewise_exponential", "cloglog"}, default "piecewise_exponential"
        Continuous time with hazards constant inside each interval (censoring competing with the
        event inside it), or the grouped (discrete-time) proportional-hazards model: interval
        hazard 1 − exp(−e^{γⱼ + xᵀβ}), the complementary log-log link, censoring at the end of an
        interval survived (Kalbfleisch & Prentice 2002, §4.8).  Both make β log hazard ratios.
    censoring : {"random_walk", "none"}, default "random_walk"
        Censoring hazards (continuous time) or logit censoring probabilities (discrete time) as a
        random walk over the intervals (``censoring``), or none before the horizon (a design that
        follows everyone to it).
    feature_names : sequence of str, optional
        The d covariate names (default: the release's ``features``, else x0, x1, …).
    x_sample : "public", None or ReferenceLaw, default "public"
        The covariates' law behind the means of the counts and covariate sums (module notes):
        ``"public"``, the release's reference law (:func:`pm_private.reference_law`) where its
        preprocessing declares the columns' kinds, else the Gaussian law; None, the Gaussian law;
        a :class:`~pm_private.released.ReferenceLaw` of this release (for other kinds or another
        number of rows).
    beta_sigma : float, default 1.0
        Prior s.d. of each log hazard ratio (per unit of a covariate on the release's scale).
    baseline_sigma : float, default 3.0
        Prior s.d. of the first interval's log baseline hazard (times divided by the horizon; in
        discrete time the log of the interval's cumulative hazard, centred at −log J).
    baseline_step_sigma : float, default 0.5
        Scale of the half-normal prior of the baseline walk's step.
    censoring_sigma : float, default 3.0
        Prior s.d. of the first interval's log censoring hazard.
    censoring_step_sigma : float, default 0.5
        Scale of the half-normal prior of the censoring walk's step.
    x_mean_sigma : float, default 1.0
        Prior s.d. of the covariate mean μ (covariates on a standardised public scale).
    x_sd_sigma : float, default 1.0
        Scale of the half-normal prior of the covariates' standard deviations.
    x_eta : float, default 2.0
        LKJ shape of the covariates' correlations.
    cell_share_alpha : float, default 1.0
        Concentration of the Dirichlet prior of the cells' shares of the people (K > 1).

    Returns
    -------
    pymc.Model
        Coords ``cell``, ``feature``, ``interval`` (the interval ends) and ``statistic``.
        Variables: ``beta`` (dims ``feature``), ``hazard_ratio`` (exp β), ``baseline`` (log
        baseline hazards per cell and interval, Gaussian random walks with a half-normal step
        ``baseline_step``, sampled non-centred), ``censoring`` (likewise, unless
        ``censoring="none"``), ``cell_share`` (K > 1), the covariate model's ``x_mean``
        (dims ``cell``, ``feature``), ``x_sd`` (dims ``feature``), ``x_partial_corr`` (d > 1: the partial
        correlations, in (−1, 1); dims ``feature_pair``, labels ``"a,b"``), the
        deterministics ``cumulative_hazard`` and ``survival`` (dims ``cell``, ``interval``: at
        x = 0, the public centre of the covariates), the observed ``likelihood`` (dims ``cell``,
        ``statistic``; its random method draws replicated releases) and the data
        ``regression_vector``,
        ``regression_noise_var``, ``stats_n`` (n, or where n is private, a release under add/remove
        neighbours, the noisy counts' total T: the likelihood's n, and the count over which the
        latent ``n_people`` of a noise-aware model is flat, seen through the observed ``table_total``,
        T ~ N(n, the counts' noise variance)), ``hazard_code``,
        ``interval_end``, ``x_bound``,
        ``preprocessing`` (the public map of new rows, for
        :func:`predict_survival_regression`), ``fit_record`` and, with a reference law,
        ``x_sample_whitened`` (its rows, whitened).

    Raises
    ------
    ValueError
        If ``stats`` is not such a release, ``hazard`` or ``censoring`` is unknown,
        a prior scale is not finite and > 0, ``feature_names`` are not d distinct names,
        ``noise_aware=True`` is asked of exact statistics, or ``x_sample`` is none of its kinds.

    Warns
    -----
    CovariateLawWarning
        With ``x_sample=None``, when the release's preprocessing declares binary or categorical
        columns (``Preprocessing.x_kinds``), which the Gaussian covariate law misdescribes
        (``covariate_law_warning``); with a reference law, when a binary column's level is rarer
        than the release's noise can resolve (``pm_private.released.copula_law.rare_level_warning``);
        ``print_summary`` repeats it.

    See Also
    --------
    set_survival_regression_stats : Swap the statistics of a built model without recompiling.
    predict_survival_regression : Survival curves S(t | x) with bands for new covariate rows.

    Notes
    -----
    Privacy: the model is post-processing of the release; building and sampling it spend no
    budget.

    Sampling: :func:`pm_private.sample` with nutpie adapts nutpie's low-rank mass matrix for this
    model (the family's choice), which takes the fewest leapfrog steps per draw; PyMC's NUTS (and
    ``pm-private fit``) adapts a diagonal one, PyMC's default.  Unlike the GLMs, do not start it at
    the Laplace approximation (``laplace_nuts``) nor ask PyMC for a dense adaptation
    (``init="jitter+adapt_full"``): on a release at d = 10 and J = 20 intervals the first made the
    step size collapse, with most draws divergent, and the second mixed so slowly that the
    coefficients' effective sample size was a few draws.  The posterior couples the neighbouring
    steps of the baseline and censoring walks, so NUTS takes many leapfrog steps per draw, and at
    the samplers' default target acceptance of 0.8 it diverges in some transitions:
    :func:`pm_private.sample` asks nutpie for 0.9 (the family's ``target_accept``) and
    ``pm-private fit`` asks PyMC's NUTS for 0.95; with ``pm.sample`` pass ``target_accept=0.95``
    (the Samplers page of the documentation measures all three).

    References
    ----------
    Kalbfleisch, J. D. & Prentice, R. L. (2002). The Statistical Analysis of Failure Time Data, 2nd ed.

    Bernstein, G. & Sheldon, D. (2019). Differentially private Bayesian linear regression. NeurIPS.

    Kulkarni, T., Jälkö, J., Koskela, A., Kaski, S. & Honkela, A. (2021). Differentially private
    Bayesian inference for generalized linear models. ICML.

    Examples
    --------
    >>> import numpy as np
    >>> from pm_private.survival import release_survival_regression_stats, survival_regression_model
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 2))
    >>> time = rng.exponential(np.exp(-X @ [0.5, -0.3]))
    >>> release = release_survival_regression_stats(time, np.ones(2000), X, edges=[0.5, 1.0, 2.0],
    ...                                             x_bound=4.0, epsilon=1.0, delta=1e-6, rng=0)
    >>> model = survival_regression_model(release)
    >>> model.named_vars_to_dims["beta"], len(model.coords["statistic"])
    (('feature',), 24)
    """
    _check(stats)
    priors = _checked_options(hazard, censoring, locals())
    noise_aware = resolve_noise_aware(
        noise_aware,
        isinstance(stats, SurvivalRegressionStats),
        "noise_aware=True needs a release: exact statistics have no noise",
    )
    d, J = stats.d, stats.J
    names = _feature_names(stats, feature_names)
    K = stats.K
    coords = {
        "cell": [str(c) for c in stats.cells],
        "feature": names,
        "interval": stats.edges.tolist(),
        "statistic": regression_statistic_labels(stats, names),
    }
    width = np.diff(np.concatenate([[0.0], stats.edges])) / stats.horizon
    discrete = hazard == "cloglog"
    centre = -np.log(J) if discrete else 0.0
    law = _covariate_law(x_sample, stats)
    law_warning = covariate_law_warning(stats, names) if law is None else rare_level_warning(stats, law)
    if law_warning is not None:
        warnings.warn(law_warning, CovariateLawWarning, stacklevel=2)
    with pm.Model(coords=coords) as model:
        record_fit(SURVIVAL_REGRESSION, getattr(stats, "kind", "exact"), warnings=[law_warning] if law_warning else [])
        pm.Data("hazard_code", np.int64(HAZARDS[hazard]))
        data = {key: pm.Data(key, value) for key, value in _arrays(stats, noise_aware).items()}
        pm.Data("interval_end", np.asarray(stats.edges, dtype=np.float64), dims="interval")
        pm.Data("x_bound", np.float64(np.inf if stats.x_bound is None else stats.x_bound))
        record_preprocessing(preprocessing_arrays(stats))
        beta = pm.Normal("beta", 0.0, priors["beta_sigma"], dims="feature", shape=d)
        pm.Deterministic("hazard_ratio", pt.exp(beta), dims="feature")
        mu = pm.Normal("x_mean", 0.0, priors["x_mean_sigma"], dims=("cell", "feature"), shape=(K, d))
        x_chol = lkj_cholesky(d, priors["x_sd_sigma"], priors["x_eta"])
        share = symmetric_dirichlet("cell_share", priors["cell_share_alpha"], K, dims="cell") if K > 1 else pt.ones(1)
        log_event_increment, censor_terms = _hazard_terms(priors, censoring, discrete, centre, width, K, J)
        logp, dist = _likelihood_functions(K, discrete)
        count_variance = pt.sum(data["regression_noise_var"][:, : 2 * J + 1])  # the counts' columns
        shift = _law_shift(law, stats, beta, mu, x_chol, log_event_increment, censor_terms, discrete)
        pm.CustomDist(
            "likelihood",
            people_of_total(stats, data, count_variance) if noise_aware else data["stats_n"],
            pt.specify_shape(share, (K,)),
            data["regression_noise_var"],
            pt.specify_shape(shift, (K, len(coords["statistic"]))),
            pt.specify_shape(beta, (d,)),
            pt.specify_shape(mu, (K, d)),
            pt.specify_shape(x_chol, (d, d)),
            pt.specify_shape(log_event_increment, (K, J)),
            pt.specify_shape(censor_terms, (K, J)),
            logp=logp,
            dist=dist,
            signature="(),(c),(c,k),(c,k),(f),(c,f),(f,f),(c,j),(c,j)->(c,k)",
            observed=data["regression_vector"],
            dims=("cell", "statistic"),
        )
    if announce_compilation(model, SURVIVAL_REGRESSION.name):
        start_compile_worker("survival_regression")  # its kernel, while the first fit compiles the graph
    return model


def set_survival_regression_stats(stats, model: pm.Model | None = None, *, x_sample=PUBLIC_ROWS) -> None:
    """Swap the statistics of a built :func:`survival_regression_model` for others of the same
    intervals and covariates, without recompiling (``pm.set_data``).

    Parameters
    ----------
    stats : SurvivalRegressionStatsRelease or SurvivalRegressionStats
        The new statistics.
    model : pymc.Model, optional
        A model of :func:`survival_regression_model` (default: the model of the current context).
    x_sample : "public", None or ReferenceLaw, default "public"
        As for :func:`survival_regression_model`; the model keeps the law it was built with
        (reference or Gaussian), and a reference law is rebuilt from the new statistics with
        the model's number of rows.

    Raises
    ------
    ValueError
        If ``stats`` is not such a release, its intervals or number of covariates differ from the
        model's, it is exact and the model is noise-aware, n is private in one of them and
        public in the other, or the covariate law ``x_sample`` gives is not of the kind the
        model was built with.
    """
    _check(stats)
    model = pm.modelcontext(model)
    if (
        stats.d != len(model.coords["feature"])
        or not np.array_equal(np.asarray(model.coords["interval"], dtype=np.float64), stats.edges)
        or [str(c) for c in stats.cells] != list(model.coords["cell"])
    ):
        raise ValueError("stats must have the model's cells, interval ends and number of covariates")
    noise_aware = bool(np.any(model["regression_noise_var"].get_value() > EXACT_JITTER))
    if ("n_people" in model.named_vars) != (noise_aware and stats.n is None):
        raise ValueError("stats: n is private in one of the model and the statistics and public in the other")
    if noise_aware and isinstance(stats, SurvivalRegressionStats):
        raise ValueError("stats: exact statistics need a model built with noise_aware=False (this one models noise)")
    new = _arrays(stats, noise_aware)
    new["x_bound"] = np.float64(np.inf if stats.x_bound is None else stats.x_bound)
    new["preprocessing"] = packed_preprocessing(preprocessing_arrays(stats))
    built_with_law = "x_sample_whitened" in model
    if isinstance(x_sample, str) and x_sample == PUBLIC_ROWS and built_with_law:
        x_sample = reference_law(stats, size=model["x_sample_whitened"].get_value().shape[0])
    law = _covariate_law(x_sample, stats)
    if (law is not None) != built_with_law:
        built = "a reference covariate law" if built_with_law else "the Gaussian covariate law"
        raise ValueError(
            f"x_sample: the model was built with {built} and the new statistics ask for the other (build a new model)"
        )
    if law is not None:
        whitened = whitened_sample(law.rows, stats)
        if whitened.shape != model["x_sample_whitened"].get_value().shape:
            raise ValueError("x_sample: the number of rows differs from the model's (build a new model)")
        new["x_sample_whitened"] = whitened
    pm.set_data(new, model=model)

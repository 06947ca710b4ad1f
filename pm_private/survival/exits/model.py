"""Noise-aware survival models of an exit table (:mod:`pm_private.survival.exits.release`).

Within cell c a person leaves in interval j by an event with probability πᶜ(event, j), by
censoring with πᶜ(censored, j), or is followed event-free to the horizon with πᶜ(survivor); the
cell has share w_c of the study.  The whole table is one multinomial draw of the n people over the
K(2J + 1) exits with probabilities p = (w_c·πᶜ) (Kalbfleisch & Prentice 2002, §4.2, for grouped
survival data).  Event and censoring compete inside an interval of width Δⱼ (times divided by
the horizon τ):

* piecewise-exponential proportional hazards: event hazard λⱼ·exp(β_c) and censoring hazard κ_{c,j}
  constant inside interval j; with aⱼ = λⱼ·e^{β_c}·Δⱼ, kⱼ = κ_{c,j}·Δⱼ, rⱼ = aⱼ + kⱼ and the
  probability Rⱼ = exp(−Σ_{i<j} rᵢ) of being followed at its start,
  π(event, j) = Rⱼ(1 − e^{−rⱼ})·aⱼ/rⱼ and π(censored, j) = Rⱼ(1 − e^{−rⱼ})·kⱼ/rⱼ, exact;
* Weibull proportional hazards: the event's cumulative hazard H_c(u) = exp(α + β_c)·u^ρ, its
  increase over interval j in place of aⱼ above (exact at the interval ends; the split between
  event and censoring inside the interval takes the hazard constant there);
* discrete-time hazard (Nguyên & Hui 2017a): hⱼ = g⁻¹(γⱼ + β_c) with the logit or the
  complementary log-log link (the latter is the grouped proportional-hazards model, Prentice &
  Gloeckler 1978), censoring probability gⱼ at the end of an interval survived:
  π(event, j) = Rⱼhⱼ, π(censored, j) = Rⱼ(1 − hⱼ)gⱼ, R_{j+1} = Rⱼ(1 − hⱼ)(1 − gⱼ).

The baselines (log λⱼ, γⱼ) and the censoring (log κ_{c,j}, logit g_{c,j}) are random walks over the
intervals with half-normal step scales (a smoothing prior; a first-order Gaussian Markov random
field), so J may be large without overfitting.  β_c is the log hazard ratio of cell c against the
reference cell (for the logit link, the log odds ratio of the interval hazard).

Likelihood of a release r = counts + ξ (noise variance v per count):

* noise-aware (default for a release): the normal approximation of the multinomial convolved with
  the noise, r ~ N(n·p, n·(diag p − ppᵀ) + diag v).  Its covariance is a diagonal minus a rank-one
  term, so the log-density costs O(K·J) (the matrix determinant lemma and the Sherman–Morrison
  formula): with D = diag(n·p + v), u = √n·p, e = r − n·p and s = 1 − uᵀD⁻¹u = Σₖ pₖvₖ/(n·pₖ + vₖ) > 0,

      log N = −½ (m·log 2π + Σₖ log Dₖₖ + log s + Σₖ eₖ²/Dₖₖ + (uᵀD⁻¹e)²/s).

  The noise's variance v ≥ σ² keeps the approximation close where
  counts are small: the skewness of an entry, λ/(λ + v)^{3/2} for a count of mean λ, is largest at
  λ = 2v, where it is about 0.38/√v (0.05 at ε = 1, δ = 10⁻⁶).
* exact tables (:class:`SurvivalStats`, ε = ∞) and ``noise_aware=False``: the multinomial
  log-likelihood Σₖ rₖ·log pₖ (negative noisy counts taken as 0), exact for exact tables.

Both are the observed variable ``likelihood`` (dims ``exit``), whose random method draws
replicated tables: a multinomial table plus the release's noise.
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor.tensor as pt

from ..._engine.compile_notice import announce_compilation
from ...privacy.validation import check_bool, check_positive
from ...released.family import check_stats, record_fit
from ...released.glm import people_prior
from ...released.reparametrisation import random_walk, symmetric_dirichlet
from ..table_models import censoring_terms, check_censoring, resolve_noise_aware, survival_deterministics
from .ops import exit_table_logp, table_probabilities
from .release import SURVIVAL, SurvivalStats, SurvivalStatsRelease

__all__ = ["HAZARDS", "exit_labels", "set_survival_stats", "survival_model"]

#: The hazard models of :func:`survival_model`, with the code each records (``hazard_code``).
HAZARDS = {"piecewise_exponential": 0, "logit": 1, "cloglog": 2, "weibull": 3}


def exit_labels(stats) -> list[str]:
    """Labels of the table's K(2J + 1) exits in the model's order: per cell, the events of each
    interval, the censorings of each interval, the survivors at the horizon."""
    ends = [0.0, *stats.edges.tolist()]
    spans = [f"({ends[j]:g}, {ends[j + 1]:g}]" for j in range(stats.J)]
    labels = []
    for c in stats.cells:
        labels += [f"{c}: event in {s}" for s in spans]
        labels += [f"{c}: censored in {s}" for s in spans]
        labels.append(f"{c}: event-free at {ends[-1]:g}")
    return labels


def _arrays(stats, noise_aware: bool) -> dict[str, np.ndarray]:
    """The model's data; ``stats_n`` is n, or where n is private the table's noisy total (the
    centre of the latent n's prior)."""
    table = np.asarray(stats.table(), dtype=np.float64).ravel()
    variance = np.asarray(stats.noise_variance(), dtype=np.float64).ravel() if noise_aware else np.zeros(table.size)
    n = max(float(table.sum()), 1.0) if stats.n is None else float(stats.n)
    return {"exit_table": table, "exit_noise_var": variance, "stats_n": np.float64(n)}


def people_of_total(stats, data, total_variance):
    """The n of a noise-aware table's likelihood: n, or where n is private (add/remove neighbours)
    the table's noisy total T (the data ``stats_n``), with the latent ``n_people`` seen through T
    alone: flat on (0, T + 10σ) (:func:`~pm_private.released.glm.people_prior`) and the observed
    ``table_total``, T ~ N(n, σ²), σ² = ``total_variance``, the noise variance of the counts' sum.

    Each person adds exactly 1 to the counts' sum, so the table's normal likelihood with n = T is,
    up to a factor free of the hazards, the likelihood of the table given its total, and n is seen
    only through the total.  Letting the latent n set the table's mean and covariance instead pulls
    it down by up to T's variance × d/n (d the hazards' dimension, where the noise outweighs the
    counts' own spread): the hazards' prior, fixed while the expected counts n·p scale with n,
    gives more prior volume to small n (an Occam factor)."""
    if stats.n is None:
        people = people_prior(data["stats_n"], total_variance)
        pm.Normal("table_total", people, pt.sqrt(total_variance), observed=data["stats_n"])
    return data["stats_n"]


def competing_exits(event_hazard, censor_hazard):
    """(π events, π censorings, π survivors) from interval cumulative hazards (..., J) of the
    event and of censoring, constant inside each interval (piecewise exponential)."""
    total = event_hazard + censor_hazard
    leave = -pt.expm1(-total)  # 1 − e^{−r}
    at_risk = pt.exp(-(pt.cumsum(total, axis=-1) - total))  # R_j = exp(−Σ_{i<j} r_i)
    exits = at_risk * leave / total
    return exits * event_hazard, exits * censor_hazard, pt.exp(-pt.sum(total, axis=-1))


def discrete_exits(log_stay_event, hazard, censor):
    """(π events, π censorings, π survivors) of a discrete-time hazard h and censoring probability g."""
    log_stay = log_stay_event + pt.log1p(-censor)
    at_risk = pt.exp(pt.cumsum(log_stay, axis=-1) - log_stay)
    return at_risk * hazard, at_risk * (1.0 - hazard) * censor, pt.exp(pt.sum(log_stay, axis=-1))


def _replicated_table(laplace: bool, discrete: bool):
    """PyMC's ``dist`` of the observed table: a multinomial draw of round(n) people over the
    table's probabilities plus the release's noise (normal, or Laplace of the same variance), as
    a graph, so that predictive draws compile in every backend."""

    def dist(lei, cens, share, n, noise_var, size):
        p = pt.clip(table_probabilities(lei, cens, share, discrete=discrete), 1e-300, 1.0)
        counts = pm.Multinomial.dist(pt.round(n).astype("int64"), p / pt.sum(p), size=size)
        scale = pt.sqrt(noise_var)
        if laplace:
            noise = pm.Laplace.dist(0.0, scale / np.sqrt(2.0), size=counts.shape)
        else:
            noise = pm.Normal.dist(0.0, scale, size=counts.shape)
        return counts + noise

    return dist


def survival_model(
    stats,
    *,
    hazard: str = "piecewise_exponential",
    proportional: bool = True,
    censoring: str = "random_walk",
    noise_aware: bool | None = None,
    reference: str | None = None,
    beta_sigma: float = 2.0,
    baseline_sigma: float = 3.0,
    baseline_step_sigma: float = 0.5,
    censoring_sigma: float = 3.0,
    censoring_step_sigma: float = 0.5,
    intercept_sigma: float = 3.0,
    shape_sigma: float = 1.0,
    cell_share_alpha: float = 1.0,
) -> pm.Model:
    """A survival model of an exit table, noise-aware for a private release.

    The models and the likelihood are in the module notes: the table is one multinomial draw of the
    n people over every cell's exits, whose probabilities a hazard model (``hazard``) and a
    censoring model give, convolved with the release's noise.  β holds one log hazard ratio per
    non-reference cell.

    Parameters
    ----------
    stats : SurvivalStatsRelease or SurvivalStats
        A release of :func:`pm_private.release_survival_stats` or the exact table of
        :func:`pm_private.survival.survival_stats`.
    hazard : {"piecewise_exponential", "weibull", "cloglog", "logit"}, default "piecewise_exponential"
        The event model: piecewise-constant proportional hazards (``baseline`` = log λⱼ per
        interval, times divided by the horizon), Weibull proportional hazards (``intercept`` α and
        ``shape`` ρ), or a discrete-time hazard with the complementary log-log link (grouped
        proportional hazards) or the logit link (``baseline`` = γⱼ).
    proportional : bool, default True
        Proportional hazards: one baseline, shifted by β per cell.  False: every cell has its own
        baseline (its own ``baseline`` walk, or Weibull ``intercept`` and ``shape``; no ``beta``),
        for hazards that are not proportional (survival curves that cross), at the price of the
        hazard ratio.
    censoring : {"random_walk", "none"}, default "random_walk"
        The censoring model: a random walk per cell over the intervals (``censoring``,
        ``censoring_step``), or ``"none"``, no censoring before the horizon, for a study whose
        design follows everyone to the horizon (public knowledge of the design: the table's
        censoring entries are then modelled as zero counts plus noise, and no walk spends the
        noise of those entries on censorings the design rules out).
    noise_aware : bool, optional
        Model the release's noise (True) or treat the table as exact (False).  Default: True for a
        release, False for an exact table.
    reference : str, optional
        The reference cell, against which ``beta`` compares the others (default: the first).
    beta_sigma : float, default 2.0
        Prior s.d. of each log hazard ratio β_c.
    baseline_sigma : float, default 3.0
        Prior s.d. of the first interval's baseline (log λ₁ around 0, or γ₁ around −log J).
    baseline_step_sigma : float, default 0.5
        Scale of the half-normal prior of the baseline's random-walk step (``baseline_step``).
    censoring_sigma : float, default 3.0
        Prior s.d. of each cell's first-interval censoring (log κ around 0, or logit g around −log J).
    censoring_step_sigma : float, default 0.5
        Scale of the half-normal prior of the censoring walks' step (``censoring_step``).
    intercept_sigma : float, default 3.0
        Prior s.d. of the Weibull α (log cumulative hazard at the horizon, reference cell).
    shape_sigma : float, default 1.0
        Prior s.d. of log ρ, the Weibull shape's logarithm.
    cell_share_alpha : float, default 1.0
        Concentration of the Dirichlet prior of the cell shares w (``cell_share``).

    Returns
    -------
    pymc.Model
        Coords ``cell``, ``interval`` (the interval ends), ``feature`` (the non-reference cells)
        and ``exit``.  Variables: ``beta`` (dims ``feature``; when K > 1 and ``proportional``), ``cell_share``, the
        event model's (``baseline`` and ``baseline_step``, or ``intercept`` and ``shape``, and with
        ``beta`` the Weibull model's ``log_time_ratio`` −β_c/ρ: proportional Weibull hazards are
        the accelerated-failure-time model whose times in cell c are those of the reference cell
        times e^{−β_c/ρ}, Kalbfleisch & Prentice 2002, §2.3), the censoring's (``censoring``, ``censoring_step``; none with ``censoring="none"``), the deterministic ``cumulative_hazard``
        (dims ``cell``, ``interval``: the event's, at the interval ends) and ``survival``
        (exp(−cumulative_hazard), S at the interval ends), the observed ``likelihood`` (dims
        ``exit``), ``n_people`` when n is private and the model noise-aware (a release under
        add/remove neighbours: n latent, flat on (0, T + 10σ) around the table's noisy total T,
        seen through the observed ``table_total``, T ~ N(n, σ²), σ² = Σ noise variances,
        while the table's likelihood takes n = T and so informs the hazards through the table's
        composition alone), and the data ``exit_table``, ``exit_noise_var``, ``stats_n`` (n, or
        the noisy total where n is private; swap them with :func:`set_survival_stats`),
        ``interval_end``, ``hazard_code`` and ``fit_record``.

    Raises
    ------
    ValueError
        If ``stats`` is not an exit table, ``hazard``, ``censoring`` or ``reference`` is unknown, a
        prior scale is not finite and > 0, or ``censoring="none"`` is given an exact table that
        holds censorings before the horizon.

    See Also
    --------
    predict_survival : Survival curves, hazard ratios and median survival from the posterior.
    set_survival_stats : Swap the table of a built model without recompiling.

    Notes
    -----
    Privacy: the model is post-processing of the release; building and sampling it spend no budget.

    Sampling: the random walks' step scales make a mild funnel; ``pm.sample(target_accept=0.9)``
    leaves few or no divergent draws where PyMC's default 0.8 leaves some.  NUTS started at the
    posterior mode with the Laplace approximation's dense mass matrix (``laplace_nuts`` and
    ``laplace_start`` of ``pm_private.released``, as ``pm-private fit`` does) tunes in far fewer
    leapfrog steps than from the initial point with the identity.

    References
    ----------
    Kalbfleisch, J. D. & Prentice, R. L. (2002). The Statistical Analysis of Failure Time Data, 2nd ed.

    Prentice, R. L. & Gloeckler, L. A. (1978). Regression analysis of grouped survival data with
    application to breast cancer data. Biometrics 34, 57–67.

    Nguyên, T. T. & Hui, S. C. (2017a). Differentially private regression for discrete-time survival analysis. CIKM.

    Examples
    --------
    >>> import numpy as np
    >>> from pm_private import release_survival_stats, survival_model
    >>> rng = np.random.default_rng(0)
    >>> arm = rng.choice(["control", "treated"], 1000)
    >>> time = rng.exponential(np.where(arm == "treated", 3.0, 2.0))
    >>> release = release_survival_stats(time, np.ones(1000), arm, edges=[1.0, 2.0, 3.0, 4.0],
    ...                                  cells=["control", "treated"], epsilon=1.0, delta=1e-6, rng=0)
    >>> model = survival_model(release)
    >>> model.named_vars_to_dims["beta"], list(model.coords["feature"])
    (('feature',), ['treated'])
    """
    _check_table(stats, hazard, censoring)
    priors = {
        name: check_positive(name, value)
        for name, value in dict(
            beta_sigma=beta_sigma,
            baseline_sigma=baseline_sigma,
            baseline_step_sigma=baseline_step_sigma,
            censoring_sigma=censoring_sigma,
            censoring_step_sigma=censoring_step_sigma,
            intercept_sigma=intercept_sigma,
            shape_sigma=shape_sigma,
            cell_share_alpha=cell_share_alpha,
        ).items()
    }
    proportional = check_bool("proportional", proportional)
    noise_aware = resolve_noise_aware(
        noise_aware, isinstance(stats, SurvivalStats), "noise_aware=True needs a release: an exact table has no noise"
    )
    cells = list(stats.cells)
    reference = cells[0] if reference is None else str(reference)
    if reference not in cells:
        raise ValueError(f"reference must be one of the cells {cells}, got {reference!r}")
    others = [c for c in cells if c != reference] if proportional else []
    K, J = stats.K, stats.J
    coords = {"cell": cells, "interval": stats.edges.tolist(), "exit": exit_labels(stats)}
    if others:
        coords["feature"] = others
    ends = np.concatenate([[0.0], stats.edges]) / stats.horizon
    width = np.diff(ends)
    discrete = hazard in ("logit", "cloglog")
    centre = -np.log(J) if discrete else 0.0
    with pm.Model(coords=coords) as model:
        record_fit(SURVIVAL, getattr(stats, "kind", "exact"))
        data = {key: pm.Data(key, value) for key, value in _arrays(stats, noise_aware).items()}
        pm.Data("interval_end", np.asarray(stats.edges, dtype=np.float64), dims="interval")
        pm.Data("hazard_code", np.int64(HAZARDS[hazard]))
        beta = pm.Normal("beta", 0.0, priors["beta_sigma"], dims="feature") if others else None
        effect = pt.set_subtensor(pt.zeros(K)[[cells.index(c) for c in others]], beta) if others else pt.zeros(K)
        share = symmetric_dirichlet("cell_share", priors["cell_share_alpha"], K, dims="cell") if K > 1 else pt.ones(1)
        censor = censoring_terms(censoring, centre, priors, (K, J), width, discrete)
        cumulative, log_increments = _hazard_exits(hazard, priors, proportional, (K, J), ends, centre, beta, effect)
        survival_deterministics(cumulative)
        exits = (log_increments, censor, share, discrete)
        laplace = getattr(stats, "noise", "gaussian") == "laplace"
        n = people_of_total(stats, data, pt.sum(data["exit_noise_var"])) if noise_aware else data["stats_n"]
        _exit_likelihood(exits, n, data, noise_aware, laplace)
    announce_compilation(model, SURVIVAL.name)
    return model


def set_survival_stats(stats, model: pm.Model | None = None) -> None:
    """Swap the exit table of a built :func:`survival_model` for another of the same cells and
    intervals, without recompiling (``pm.set_data``).

    Parameters
    ----------
    stats : SurvivalStatsRelease or SurvivalStats
        The new table; its cells and interval ends must be the model's.
    model : pymc.Model, optional
        A model of :func:`survival_model` (default: the model of the current context).

    Raises
    ------
    ValueError
        If ``stats`` is not an exit table, its cells or intervals differ from the model's, it is
        exact and the model is noise-aware, or n is private in one and public in the other.
    """
    check_stats(stats, SURVIVAL)
    model = pm.modelcontext(model)
    if list(model.coords["cell"]) != list(stats.cells) or not np.array_equal(
        np.asarray(model.coords["interval"], dtype=np.float64), stats.edges
    ):
        raise ValueError("stats must have the model's cells and interval ends")
    noise_aware = bool(np.any(model["exit_noise_var"].get_value() > 0))
    if ("n_people" in model.named_vars) != (noise_aware and stats.n is None):
        raise ValueError("stats: n is private in one of the model and the table and public in the other")
    if noise_aware and isinstance(stats, SurvivalStats):
        raise ValueError("stats: an exact table needs a model built with noise_aware=False (this one models noise)")
    pm.set_data(_arrays(stats, noise_aware), model=model)


def _check_table(stats, hazard: str, censoring: str) -> None:
    """:func:`survival_model`'s ``stats`` (an exit table), ``hazard`` and ``censoring``, checked."""
    check_stats(stats, SURVIVAL)
    if not isinstance(stats, SurvivalStats | SurvivalStatsRelease):
        raise ValueError(f"stats: survival_model takes an exit table, got {type(stats).__name__}")
    if hazard not in HAZARDS:
        raise ValueError(f"hazard must be one of {list(HAZARDS)}, got {hazard!r}")
    check_censoring(censoring)
    if censoring == "none" and isinstance(stats, SurvivalStats) and np.any(np.asarray(stats.censored) > 0):
        raise ValueError("censoring='none', but the exact table holds censorings before the horizon")


def _hazard_exits(hazard, priors, proportional, shape, ends, centre, beta, effect):
    """(cumulative hazard at the interval ends, log event increments ℓ) of each cell under
    ``hazard``: a Weibull, a piecewise-exponential or a discrete-time (logit, cloglog) baseline, with
    the cells' ``effect``; ``beta`` (None for one cell or a non-proportional model) names the AFT
    ratios.  ℓ is the log of the event's interval cumulative hazard in continuous time and
    log(−log(1 − h)) of its interval hazard h in discrete time (for the logit link
    −log(1 − h) = softplus(η))."""
    K, J = shape
    width = np.diff(ends)
    per_cell = {} if proportional else {"dims": "cell"}
    walks = (("interval",), (J,)) if proportional else (("cell", "interval"), (K, J))
    if hazard == "weibull":
        alpha = pm.Normal("intercept", 0.0, priors["intercept_sigma"], **per_cell)
        rho = pm.LogNormal("shape", 0.0, priors["shape_sigma"], **per_cell)
        if beta is not None:  # the same model as accelerated failure time: T_c = T_ref·e^{−β_c/ρ} in law
            pm.Deterministic("log_time_ratio", -beta / rho, dims="feature")
        scale, power = (alpha + effect)[:, None], rho if proportional else rho[:, None]
        cumulative = pt.exp(scale) * pt.as_tensor(ends[1:])[None, :] ** power
        increments = pt.concatenate([cumulative[:, :1], pt.diff(cumulative, axis=-1)], axis=-1)
        return cumulative, pt.log(increments)
    baseline = random_walk("baseline", centre, priors["baseline_sigma"], priors["baseline_step_sigma"], *walks)
    eta = pt.atleast_2d(baseline) + effect[:, None]
    if hazard == "piecewise_exponential":
        log_increments = eta + np.log(width)
        return pt.cumsum(pt.exp(log_increments), axis=-1), log_increments
    log_increments = pt.log(pt.softplus(eta)) if hazard == "logit" else eta
    return pt.cumsum(pt.exp(log_increments), axis=-1), log_increments


def _exit_likelihood(exits, n, data, noise_aware: bool, laplace: bool) -> None:
    """The observed exit table: multinomial (exact) or normal with the release noise (noise-aware),
    of the exits (ℓ, censoring, shares, discrete time) as one Op with its gradient."""
    *parameters, discrete = exits

    def logp(value, lei, cens, share, n, noise_var):
        return exit_table_logp(lei, cens, share, value, n, noise_var, discrete=discrete, normal=noise_aware)

    pm.CustomDist(
        "likelihood",
        *parameters,
        n,
        data["exit_noise_var"],
        logp=logp,
        dist=_replicated_table(laplace, discrete),
        signature="(c,j),(c,j),(c),(),(k)->(k)",
        observed=data["exit_table"],
        dims="exit",
    )

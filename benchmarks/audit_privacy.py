"""Statistical privacy audit: a lower bound on ε for every pure-ε mechanism (and penalty selection).

For a mechanism M claiming (ε, δ)-DP and two neighbouring data sets D, D′, every set S of outputs
satisfies P[M(D) ∈ S] ≤ e^ε·P[M(D′) ∈ S] + δ, so

    ε ≥ log((P[M(D) ∈ S] − δ) / P[M(D′) ∈ S])

for each S.  The audit draws N outputs from M(D) and N from M(D′), reduces each output to a scalar
statistic (the log-likelihood ratio of the two output densities where the auditor can compute it,
white-box, from the data and the public noise scales), and takes S = {statistic ≥ τ} or {≤ τ}.
The threshold and direction are chosen on one half of the draws; on the other half the two
probabilities get one-sided Clopper–Pearson bounds at level α/2 each (α = 0.05), so the printed
lower bound holds with probability ≥ 95 % and no multiple-testing correction is needed.  The audit
fails (exit status 1) if any lower bound exceeds the claimed ε.

The pairs are adversarial: the replaced record sits at a corner of the public clipping box (or of
the unit ball, or at the ends of the public time range) and its replacement at the opposite
corner or at zero.  The column "pair ε" is the exact privacy loss of that pair where it has a
closed form (the largest log-ratio of the two output densities), i.e. what a perfect audit of
that pair would find; "claimed ε" is what the mechanism charges, always ≥ the pair's loss.

The draws use a seeded generator (``rng`` = a seeded NoiseSource): the same transforms as the
secure mode but continuous Laplace instead of OpenDP's discrete Laplace and numpy Gumbel variates
instead of OpenDP's exact Gumbel-max, for speed (about 1 ms per release).  The audit therefore
tests the mechanisms' calibration and sensitivity analysis, not the secure samplers.  The
statistics are rounded to 9 decimals before the threshold tests: unrounded, a threshold placed
between two float roundings of the same atom of the log-likelihood ratio separates D from D′
beyond ε on the seeded path, because naive float noise leaks through its least significant bits
(Mironov 2012) — the leak the secure path's discrete Laplace removes, and not what this audit
measures.

The person-unit audits (``person_linear_stats``, ``person_exit_table``) change everything about one
person, including their number of rows, under ``unit=``.  The relation audits (``add_remove_*``)
release an exit table or logistic statistics under add/remove neighbours (n private) and audit
them on a removed person against the release's (ε, δ), and on a replaced person against the
replace-one guarantee a ledger charges for it; ``add_remove_logistic_person_of_2_rows`` removes a
person of two equal extreme rows from a release that keeps up to two rows per person, and
``add_remove_logistic_person_of_2_rows_replaced`` replaces that person by one of one row.  The DP-SGLD audit (``dp_sgld``) runs the whole published chain with a canary record
at one extreme or the other and bounds the run's ε from its chain mean.

Run ``python benchmarks/audit_privacy.py`` (5·10⁴ draws per data set, 10⁵ per mechanism;
``--jobs`` runs the data sets in parallel processes; ``--draws`` and ``--only`` select less).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import numpy as np
from scipy import stats

from pm_private.linear.release import linear_noise_plan, release_linear_stats, sensitivities
from pm_private.linear.stats import frobenius_weights, linear_stats, stat_vector
from pm_private.logistic.elastic_net import DPElasticNetLogisticRegression, convex_min, design_bounds
from pm_private.logistic.penalty_selection import select_penalty
from pm_private.logistic.release import logistic_noise_plan, logistic_sensitivity, release_logistic_stats
from pm_private.privacy.budget import NoiseEvent, implied_epsilon
from pm_private.privacy.noise import as_noise_source
from pm_private.privacy.primitives import symmetric_entry_weights
from pm_private.privacy.relations import Sensitivity
from pm_private.released.degree2 import degree2_pairs, degree2_sums, degree2_vector
from pm_private.survival import release_survival_stats, survival_noise_plan, survival_sensitivity
from pm_private.survival.data import person_histories, scale_times
from pm_private.survival.discrete.data import DiscreteTimeData
from pm_private.survival.discrete.fit import fit_discrete_time, loss_and_grad
from pm_private.survival.discrete.mechanisms import objective_perturbation, output_perturbation
from pm_private.survival.discrete.sensitivity import gradient_sensitivity, objective_regularization, output_sensitivity
from pm_private.survival.exits.outcomes import exit_counts
from pm_private.survival.weibull.mechanisms import WeibullLSP, lsp_ladder

ALPHA = 0.05
# Statistics are rounded to this many decimals before the threshold tests (module docstring).
_DIGITS = 9


@dataclass
class Audit:
    """One audited mechanism: claimed (ε, δ), the exact loss of the audited pair if known, and a
    sampler ``draw(k, n, source)`` of the statistic on neighbour k ∈ {0, 1}."""

    name: str
    epsilon: float
    delta: float
    pair_epsilon: float | None
    statistic: str
    draw: Callable[[int, int, object], np.ndarray]


# ---------------------------------------------------------------------------------------------
# Clopper–Pearson threshold test
# ---------------------------------------------------------------------------------------------


def _cp_lower(k, n, a):
    k = np.asarray(k, dtype=float)
    return np.where(k > 0, stats.beta.ppf(a, np.maximum(k, 1), n - k + 1), 0.0)


def _cp_upper(k, n, a):
    k = np.asarray(k, dtype=float)
    return np.where(k < n, stats.beta.ppf(1 - a, k + 1, np.maximum(n - k, 1)), 1.0)


def _bound(k_num, n_num, k_den, n_den, delta, alpha):
    """log((CP-lower(p) − δ)/CP-upper(q)), −inf where the numerator is ≤ 0."""
    num = _cp_lower(k_num, n_num, alpha / 2) - delta
    den = _cp_upper(k_den, n_den, alpha / 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(num > 0, np.log(num / den), -np.inf)


def _counts(sample: np.ndarray, taus: np.ndarray, side: int) -> np.ndarray:
    """#{s ≥ τ} (side +1) or #{s ≤ τ} (side −1) for every τ."""
    ordered = np.sort(sample)
    if side > 0:
        return sample.size - np.searchsorted(ordered, taus, side="left")
    return np.searchsorted(ordered, taus, side="right")


def epsilon_lower_bound(s0: np.ndarray, s1: np.ndarray, delta: float = 0.0, alpha: float = ALPHA) -> float:
    """Lower bound on ε (confidence 1 − α) from statistics of draws on D (s0) and D′ (s1).

    ``s0`` and ``s1`` are (draws,) or (draws, m) arrays of m candidate statistics.  The statistic,
    threshold and direction are chosen on the even-indexed draws, the bound is computed on the
    odd-indexed ones (module docstring).
    """
    s0, s1 = (np.round(np.asarray(s, dtype=float), _DIGITS) for s in (s0, s1))
    if s0.ndim == 1:
        s0, s1 = s0[:, None], s1[:, None]
    best, choice = -np.inf, None
    for column in range(s0.shape[1]):
        a0, a1 = s0[::2, column], s1[::2, column]
        taus = np.unique(np.quantile(np.concatenate([a0, a1]), np.linspace(0.0, 1.0, 801)))
        for order in (0, 1):
            x, y = (a0, a1) if order == 0 else (a1, a0)
            for side in (1, -1):
                values = _bound(_counts(x, taus, side), x.size, _counts(y, taus, side), y.size, delta, alpha)
                i = int(np.argmax(values))
                if values[i] > best:
                    best, choice = values[i], (column, order, side, taus[i])
    if choice is None:
        return 0.0
    column, order, side, tau = choice
    b0, b1 = s0[1::2, column], s1[1::2, column]
    x, y = (b0, b1) if order == 0 else (b1, b0)
    kx = _counts(x, np.array([tau]), side)[0]
    ky = _counts(y, np.array([tau]), side)[0]
    return max(0.0, float(_bound(kx, x.size, ky, y.size, delta, alpha)))


# ---------------------------------------------------------------------------------------------
# Mechanisms and adversarial neighbours
# ---------------------------------------------------------------------------------------------


def _suff_stats_audit(epsilon: float = 1.0) -> Audit:
    """d = 1 (no intercept column), B_x = B_y = 1: the record (1, 1) replaced by (0, 0) moves Sxx, Sxy and
    Syy by 1 each."""
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, (10, 1))
    y = rng.uniform(-1, 1, 10)
    X[0], y[0] = 1.0, 1.0
    pair = [(X, y), (np.vstack([[0.0], X[1:]]), np.r_[0.0, y[1:]])]
    split = (0.60, 0.35, 0.05)
    exact = [linear_stats(*data, intercept=False) for data in pair]
    means = [np.array([s.xx[0, 0], s.xy[0], s.yy]) for s in exact]
    scales = np.array(sensitivities(1, 1.0, 1.0)) / (np.array(split) * epsilon)

    def draw(k, n, source):
        out = np.empty(n)
        for i in range(n):
            # Statistics only, at the release's scales: this pair clips nothing, so the counts could not differ.
            r = release_linear_stats(
                *pair[k],
                noise="laplace",
                epsilon=epsilon,
                x_bound=1.0,
                y_bound=1.0,
                split=split,
                clip_share=0.0,
                rng=source,
                intercept=False,
            )
            o = np.array([r.xx[0, 0], r.xy[0], r.yy])
            out[i] = np.sum((np.abs(o - means[1]) - np.abs(o - means[0])) / scales)
        return out

    pair_eps = float(np.sum(np.abs(means[0] - means[1]) / scales))
    return Audit(
        "suff-stat Laplace release (Honkela et al. 2018)", epsilon, 0.0, pair_eps, "LLR of (Sxx, Sxy, Syy)", draw
    )


def _person_suff_stats_audit(epsilon: float = 1.0) -> Audit:
    """The same release with ``unit``: the first person has three rows (1, 1) in D and two rows
    (0, 0) in D′ (a different number of rows); one row per person is kept, so the pair's loss is
    the row-level pair's."""
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, (9, 1))
    y = rng.uniform(-1, 1, 9)
    pair = [
        (np.vstack([np.ones((3, 1)), X]), np.r_[1.0, 1.0, 1.0, y], np.r_[0, 0, 0, np.arange(1, 10)]),
        (np.vstack([np.zeros((2, 1)), X]), np.r_[0.0, 0.0, y], np.r_[0, 0, np.arange(1, 10)]),
    ]
    split = (0.60, 0.35, 0.05)
    exact = [linear_stats(Xk[-10:], yk[-10:], intercept=False) for Xk, yk, _ in pair]  # one row per person
    means = [np.array([st.xx[0, 0], st.xy[0], st.yy]) for st in exact]
    scales = np.array(sensitivities(1, 1.0, 1.0)) / (np.array(split) * epsilon)

    def draw(k, n, source):
        out = np.empty(n)
        Xk, yk, unit = pair[k]
        for i in range(n):
            r = release_linear_stats(
                Xk, yk, noise="laplace", epsilon=epsilon, x_bound=1.0, y_bound=1.0, split=split, clip_share=0.0, rng=source,
                intercept=False, unit=unit,
            )  # fmt: skip
            o = np.array([r.xx[0, 0], r.xy[0], r.yy])
            out[i] = np.sum((np.abs(o - means[1]) - np.abs(o - means[0])) / scales)
        return out

    pair_eps = float(np.sum(np.abs(means[0] - means[1]) / scales))
    return Audit("suff-stat Laplace release, person unit (3 rows vs 2)", epsilon, 0.0, pair_eps, "LLR", draw)


def _relation_linear_audit(noise: str, pair: str, epsilon: float = 1.0, delta: float = 1e-3) -> Audit:
    """Linear statistics released under add/remove neighbours (d = 2, no intercept, Bx = By = 1, n
    private: the counts' last entry).  ``pair="removed"``: the record z = ((1, 0), 1) (Gaussian:
    on the norm bounds) or ((1, 1), 1) (Laplace: every entry on its bound) is in D and not in D′,
    the claim the release's ε (its statistics move by their add/remove sensitivity: R² = 2 in the
    Frobenius norm, or (3, 2, 1) in ℓ1); ``pair="replaced"`` (Gaussian): z is replaced by the orthogonal
    z′ = ((−1, 0), 1) of the same norm, which attains the replace-one √2·R², the claim the
    replace-one guarantee the ledger charges (the vector's replace-one sensitivity)."""
    rng = np.random.default_rng(2)
    X, y = rng.uniform(-0.5, 0.5, (9, 2)), rng.uniform(-0.5, 0.5, 9)
    first = (np.vstack([[1.0, 1.0] if noise == "laplace" else [1.0, 0.0], X]), np.r_[1.0, y])
    second = (X, y) if pair == "removed" else (np.vstack([[-1.0, 0.0], X]), np.r_[1.0, y])
    options = dict(noise=noise, epsilon=epsilon, x_bound=1.0, y_bound=1.0, intercept=False, relation="add-remove")
    options |= dict(delta=delta) if noise == "gaussian" else {}
    plan = linear_noise_plan(2, **options)
    if noise == "gaussian":
        (query,) = plan.queries
        weights = np.r_[frobenius_weights(2), np.full(4, plan.weights[next(iter(plan.weights.keys() - _STATS))])]
        scales = np.full(weights.size, query.scale)
        claim = query.sensitivity if pair == "removed" else query.replace_one
        claimed = implied_epsilon((NoiseEvent("gaussian", query.scale, claim),), delta)
    else:
        weights = np.ones(9)
        scales = np.repeat([q.scale for q in plan.queries], [3, 2, 1, 3])
        claimed = epsilon

    def vector(stats, counts):
        return weights * np.r_[stat_vector(stats.xx, stats.xy, stats.yy), counts]

    def outputs(r):
        (record,) = r.releases
        counts = [record.clipped_rows, record.clipped_responses]
        counts += [record.effective_rows] if noise == "gaussian" else []
        return vector(r, [*counts, record.n_noisy])

    exact = [vector(linear_stats(*data, intercept=False), [0.0, 0.0] + [len(data[1])] * (1 + (noise == "gaussian")))
             for data in (first, second)]  # fmt: skip
    distance = (
        (lambda o, e: (o - e) ** 2 / (2 * scales**2)) if noise == "gaussian" else (lambda o, e: np.abs(o - e) / scales)
    )  # noqa: E731

    def draw(k, n, source):
        out = np.empty(n)
        for i in range(n):
            o = outputs(release_linear_stats(*(first, second)[k], rng=source, **options))
            out[i] = np.sum(distance(o, exact[1]) - distance(o, exact[0]))
        return out

    if noise == "gaussian":
        gap = float(np.linalg.norm(exact[0] - exact[1]))
        pair_eps = implied_epsilon((NoiseEvent("gaussian", scales[0], gap),), delta)
    else:
        pair_eps = float(np.sum(np.abs(exact[0] - exact[1]) / scales))
    name = f"linear statistics, {noise} add/remove release, {pair} record"
    return Audit(name, float(claimed), delta if noise == "gaussian" else 0.0, pair_eps, "LLR", draw)


#: The Gaussian plan's weight groups of the statistics (the rest is the counts').
_STATS = {"the diagonal of Sxx and Syy", "the other entries of Sxx and Sxy"}


def _person_exit_table_audit(epsilon: float = 1.0) -> Audit:
    """Laplace exit table with ``unit``: the first person's history is an event in the first
    interval in D, and three intervals ending alive at the horizon in D′ (their first exit moves
    from one entry to another: ℓ1 change 2, the pair's loss ε)."""
    edges = [0.25, 0.5, 0.75, 1.0]
    rng = np.random.default_rng(4)
    time_, event = rng.uniform(0.05, 0.95, 9), rng.integers(0, 2, 9)
    pair = [
        (np.r_[0.1, time_], np.r_[1, event], np.arange(10)),
        (np.r_[0.3, 0.6, 1.2, time_], np.r_[0, 0, 0, event], np.r_[0, 0, 0, np.arange(1, 10)]),
    ]
    tables = []
    for t, e, unit in pair:
        records, flags, _, _ = person_histories(unit, t, e)
        tables.append(np.concatenate(exit_counts(records, flags, None, np.array(edges), ("all",)), axis=None))
    scale = 2.0 / epsilon

    def draw(k, n, source):
        t, e, unit = pair[k]
        out = np.empty(n)
        for i in range(n):
            r = release_survival_stats(t, e, edges=edges, epsilon=epsilon, noise="laplace", rng=source, unit=unit)
            o = np.concatenate([r.events, r.censored, r.survivors], axis=None)
            out[i] = np.sum(np.abs(o - tables[1]) - np.abs(o - tables[0])) / scale
        return out

    pair_eps = float(np.abs(tables[0] - tables[1]).sum() / scale)
    return Audit("exit table Laplace, person unit (whole history)", epsilon, 0.0, pair_eps, "LLR", draw)


def _relation_exit_table_audit(noise: str, pair: str, epsilon: float = 1.0, delta: float = 0.0) -> Audit:
    """An exit table released under add/remove neighbours (n private).  ``pair="removed"``: the
    first person (an event in the first interval) is in D and not in D′, the claim is the
    release's (ε, δ); ``pair="replaced"``: the same person replaced by one alive at the horizon,
    the claim is the replace-one guarantee the ledger charges for it (the table's replace-one Δ:
    2 in ℓ1, √2 in ℓ2, as :func:`pm_private.privacy.as_replace_one` converts it)."""
    edges = np.array([0.25, 0.5, 0.75, 1.0])
    rng = np.random.default_rng(5)
    time_, event = rng.uniform(0.05, 0.95, 9), rng.integers(0, 2, 9)
    second = (time_, event) if pair == "removed" else (np.r_[1.2, time_], np.r_[0, event])
    data = [(np.r_[0.1, time_], np.r_[1, event]), second]
    tables = [np.concatenate(exit_counts(t, e, None, edges, ("all",)), axis=None) for t, e in data]
    options = dict(edges=edges, epsilon=epsilon, noise=noise, relation="add-remove")
    options |= {"delta": delta} if noise == "gaussian" else {}
    plan = survival_noise_plan(edges, **{k: v for k, v in options.items() if k != "edges"})
    (stated,) = plan.noise_events()
    relation = "replace-one" if pair == "replaced" else "add-remove"
    claimed = implied_epsilon((NoiseEvent(stated.kind, stated.scale, survival_sensitivity(noise, relation)),), delta)
    scale = plan.queries[0].scale

    def draw(k, n, source):
        t, e = data[k]
        out = np.empty(n)
        for i in range(n):
            o = release_survival_stats(t, e, rng=source, **options).table().ravel()
            if noise == "laplace":
                out[i] = np.sum(np.abs(o - tables[1]) - np.abs(o - tables[0])) / scale
            else:
                out[i] = np.sum((o - tables[1]) ** 2 - (o - tables[0]) ** 2) / (2 * scale**2)
        return out

    change = np.linalg.norm(tables[0] - tables[1], ord=1 if noise == "laplace" else 2)
    pair_eps = (
        float(change / scale)
        if noise == "laplace"
        else implied_epsilon((NoiseEvent("gaussian", scale, float(change)),), delta)
    )
    name = f"exit table {noise.capitalize()}, add/remove release, {pair} person"
    return Audit(name, float(claimed), delta, pair_eps, "LLR", draw)


def _relation_glm_audit(pair: str, epsilon: float = 2.0, delta: float = 1e-3, rows: int = 1) -> Audit:
    """Logistic statistics released under add/remove neighbours (n private, released first in the
    weighted vector).  ``pair="removed"``: a record on the sphere ‖x‖ = Bx, whose contribution has
    the add/remove sensitivity's norm, is in D and not in D′, the claim the release's (ε, δ);
    ``pair="replaced"``: that record replaced by one orthogonal to it with the other label, the
    claim the replace-one guarantee the ledger charges for it (the vector's replace-one Δ).  With
    ``rows`` = k > 1 the records belong to persons and the release keeps up to k rows per person
    (``max_rows=k``): the first person has k equal rows on the sphere, removed (the change the
    per-person sensitivity k·Δ allows for, which the noise must cover) or replaced by a person of
    one orthogonal row with the other label (claim: the ledger's replace-one guarantee, converted
    with ``Sensitivity.of_units_with_rows(k)``)."""
    bound = 1.0
    rng = np.random.default_rng(6)
    X, y = rng.normal(size=(9, 2)) * 0.3, rng.integers(0, 2, 9)
    first = (np.vstack([np.tile([bound, 0.0], (rows, 1)), X]), np.r_[np.ones(rows, int), y])
    second = (X, y) if pair == "removed" else (np.vstack([[0.0, bound], X]), np.r_[0, y])
    data = [first, second]
    others = np.arange(1, 10)  # the nine other persons, one row each
    kept_apart = [np.r_[np.zeros(rows, int), others], others if pair == "removed" else np.r_[0, others]]
    units = kept_apart if rows > 1 else [None, None]
    options = dict(epsilon=epsilon, delta=delta, x_bound=bound, relation="add-remove", max_rows=rows)
    weights = np.r_[1.0, symmetric_entry_weights(*degree2_pairs(2))]

    def weighted(n, x_sum, y_sum, xx, yx):
        return weights * np.r_[n, degree2_vector(x_sum, y_sum, xx, yx)]

    exact = [weighted(len(v), *degree2_sums(x, 2.0 * v - 1.0)) for x, v in data]
    scale = logistic_noise_plan(2, **options).queries[0].scale
    row = Sensitivity(logistic_sensitivity(bound, "add-remove"), logistic_sensitivity(bound, "replace-one"))
    person = row.of_units_with_rows(rows).under("replace-one" if pair == "replaced" else "add-remove")
    claimed = implied_epsilon((NoiseEvent("gaussian", scale, person),), delta)

    def draw(k, n, source):
        out = np.empty(n)
        for i in range(n):
            r = release_logistic_stats(*data[k], rng=source, unit=units[k], **options)
            o = weighted(r.n_noisy, r.x_sum, r.y_sum, r.xx, r.yx)
            out[i] = np.sum((o - exact[1]) ** 2 - (o - exact[0]) ** 2) / (2 * scale**2)
        return out

    pair_eps = implied_epsilon((NoiseEvent("gaussian", scale, float(np.linalg.norm(exact[0] - exact[1]))),), delta)
    who = f"person of {rows} rows" if rows > 1 else "record"
    return Audit(f"logistic statistics, add/remove release, {pair} {who}", float(claimed), delta, pair_eps, "LLR", draw)


def _dp_sgld_audit(epsilon: float = 2.0, delta: float = 1e-5) -> Audit:
    """The whole published chain of DP-SGLD (20 steps, q = 0.5, C = 1) on y ~ N(μ, 1), 12 records:
    a canary record at y = +5 in D and at y = −5 in D′ (its clipped gradient +1 against −1 while
    |μ| < 4); the statistic is the chain's mean."""
    import pymc as pm

    from pm_private.sampling.private_langevin import _chain, _gradient_functions, plan_dp_sgld

    rest = np.random.default_rng(6).uniform(-1, 1, 11)
    functions = []
    for canary in (5.0, -5.0):
        with pm.Model() as model:
            mu = pm.Normal("mu", 0.0, 10.0)
            pm.Normal("y", mu, 1.0, observed=np.r_[canary, rest])
        functions.append(_gradient_functions(model))
    plan = plan_dp_sgld(
        epsilon, delta, n=12, sampling_rate=0.5, clip=1.0, steps=20, clip_share=0, thin=1
    )  # the chain's ε

    def draw(k, n, source):
        gradients, _, start, _ = functions[k]
        return np.array([_chain(gradients, start, plan, source, 0, plan.steps).mean() for _ in range(n)])

    return Audit("DP-SGLD, whole chain (20 steps), canary record", plan.epsilon, delta, None, "chain mean", draw)


def _weibull_audit(epsilon: float = 2.0) -> Audit:
    """n = 12, K = 6: an event at the horizon replaced by a censoring at the floor e^−ω."""
    omega, K = 6.0, 6
    rng = np.random.default_rng(2)
    t = rng.uniform(0.05, 1.0, 12)
    d = (rng.uniform(size=12) < 0.6).astype(int)
    t[0], d[0] = 1.0, 1
    t2, d2 = t.copy(), d.copy()
    t2[0], d2[0] = math.exp(-omega), 0
    mechanisms = [WeibullLSP(tt, dd, horizon=1.0, K=K, omega=omega) for tt, dd in ((t, d), (t2, d2))]
    ladders = [
        lsp_ladder(scale_times(tt, horizon=1.0, floor=math.exp(-omega)), dd, K=K, omega=omega)
        for tt, dd in ((t, d), (t2, d2))
    ]

    def level(p, ladder):
        lower, upper = ladder
        inside = (lower[None, :] <= p[:, None]) & (p[:, None] <= upper[None, :])
        return np.argmax(inside, axis=1)

    def draw(k, n, source):
        releases = [mechanisms[k].release(epsilon=epsilon, rng=source) for _ in range(n)]
        p = np.array([r.shape for r in releases])
        lam = np.array([r.scale for r in releases])
        return np.column_stack([level(p, ladders[1]) - level(p, ladders[0]), p, p * np.log(lam)])

    return Audit("Weibull LSP + TLL (Nguyên & Hui 2017b)", epsilon, 0.0, None, "level gap of p, p, p·log λ", draw)


def _discrete_data(q=2, e=2):
    rng = np.random.default_rng(3)
    n = 10
    X = rng.uniform(-0.5, 0.5, (n, 1))
    time = rng.uniform(0, 1, n)
    event = rng.integers(0, 2, n)
    X[0], time[0], event[0] = 1.0, 1.0, 1
    X2, time2, event2 = X.copy(), time.copy(), event.copy()
    X2[0], time2[0], event2[0] = -1.0, 0.0, 0
    return [(X, time, event), (X2, time2, event2)], q, e


def _discrete_output_audit(epsilon: float = 8.0, regularization: float = 0.5) -> Audit:
    pair, q, e = _discrete_data()
    data = [DiscreteTimeData.from_times(*p, q=q, e=e) for p in pair]
    f_star = [fit_discrete_time(dd, l2=regularization).f for dd in data]
    t = output_sensitivity(data[0].basis, data[0].n, regularization)

    def draw(k, n, source):
        f = np.array(
            [
                output_perturbation(*pair[k], epsilon=epsilon, regularization=regularization, q=q, e=e, rng=source).f
                for _ in range(n)
            ]
        )
        return np.linalg.norm(f - f_star[1], axis=1) - np.linalg.norm(f - f_star[0], axis=1)

    pair_eps = epsilon * float(np.linalg.norm(f_star[0] - f_star[1])) / t
    return Audit("discrete-time output perturbation (Nguyên & Hui 2017a)", epsilon, 0.0, pair_eps, "LLR of f", draw)


def _discrete_objective_audit(epsilon: float = 8.0, regularization: float = 0.5) -> Audit:
    pair, q, e = _discrete_data()
    data = [DiscreteTimeData.from_times(*p, q=q, e=e) for p in pair]
    basis, n_rec = data[0].basis, data[0].n
    L = gradient_sensitivity(basis)
    extra, eps_noise = objective_regularization(basis, n_rec, epsilon, regularization)
    strength = regularization + extra

    def log_density(f, dd):
        """log of the output density up to a constant: −ε′‖b(f)‖/L + log det(n(H + (Λ+Δ)I))."""
        _, grad, hess = loss_and_grad(f, dd, hessian=True)
        b = -dd.n * (grad + strength * f)
        return -eps_noise * np.linalg.norm(b) / L + np.linalg.slogdet(dd.n * (hess + strength * np.eye(f.size)))[1]

    def draw(k, n, source):
        out = np.empty(n)
        for i in range(n):
            f = objective_perturbation(*pair[k], epsilon=epsilon, regularization=regularization, q=q, e=e, rng=source).f
            out[i] = log_density(f, data[0]) - log_density(f, data[1])
        return out

    return Audit("discrete-time objective perturbation (Nguyên & Hui 2017a)", epsilon, 0.0, None, "LLR of f", draw)


def _logistic_pair():
    rng = np.random.default_rng(4)
    n = 10
    X = rng.uniform(-1, 1, (n, 1))
    y = rng.integers(0, 2, n)
    X[0], y[0] = 1.0, 1
    X2, y2 = X.copy(), y.copy()
    X2[0], y2[0] = 1.0, 0  # the same corner with the opposite label: y·x flips sign
    return [(X, y), (X2, y2)]


def _elastic_net_audit(epsilon: float = 2.0, lam: float = 0.5) -> Audit:
    """Ridge case (α = 0), one feature, no intercept, B₁ noise: the output θ is a scalar."""
    pair = _logistic_pair()
    kappa = 1.0
    kappa_j, c = design_bounds(kappa, 1, False)
    n = pair[0][0].shape[0]
    strength = lam + max(0.0, convex_min(epsilon, n, c) - lam)
    phi = 2.0 * kappa_j

    def log_density(theta, X, y):
        """Output density of θ (change of variables b ↦ θ): Laplace(0, 2) noise on b(θ)."""
        s = np.where(y > 0, 1.0, -1.0)
        z = s[:, None] * X[:, 0][:, None] * theta[None, :]
        sig = 1.0 / (1.0 + np.exp(z))
        grad = -(s[:, None] * X[:, 0][:, None] * sig).mean(axis=0) + strength * theta
        hess = (X[:, 0][:, None] ** 2 * sig * (1 - sig)).mean(axis=0) + strength
        b = -(epsilon * n / phi) * grad
        return -np.abs(b) / 2.0 + np.log(hess)

    def draw(k, m, source):
        model = DPElasticNetLogisticRegression(
            epsilon=epsilon, lam=lam, alpha=0.0, x_bound=kappa, fit_intercept=False, too_weak="add_ridge", rng=source
        )
        theta = np.array([model.fit(*pair[k]).coef_[0] for _ in range(m)])
        return log_density(theta, *pair[0]) - log_density(theta, *pair[1])

    grid = np.linspace(-200.0, 200.0, 400_001)  # the output density is negligible beyond
    pair_eps = float(np.abs(log_density(grid, *pair[0]) - log_density(grid, *pair[1])).max())
    return Audit("elastic-net objective perturbation (Yu et al. 2014)", epsilon, 0.0, pair_eps, "LLR of θ", draw)


def _penalty_selection_audit(epsilon: float = 8.0, delta: float = 1e-6) -> Audit:
    """One validation record of ten, so the replaced record is usually in the training part."""
    pair = _logistic_pair()

    def draw(k, m, source):
        out = np.empty((m, 2))
        for i in range(m):
            release = select_penalty(
                *pair[k],
                lams=[0.05, 5.0],
                alpha=0.0,
                epsilon=epsilon,
                delta=delta,
                x_bound=1.0,
                fit_intercept=False,
                validation_fraction=0.1,
                rng=source,
            )
            out[i] = release.index, release.model.coef_[0]
        return out

    return Audit(
        "penalty selection (Chaudhuri & Vinterbo 2013; Yu et al. 2014)", epsilon, delta, None, "index, θ", draw
    )


AUDITS = {
    "linear_stats": _suff_stats_audit,
    "person_linear_stats": _person_suff_stats_audit,
    "person_exit_table": _person_exit_table_audit,
    "add_remove_linear_laplace_removed": lambda: _relation_linear_audit("laplace", "removed"),
    "add_remove_linear_gaussian_removed": lambda: _relation_linear_audit("gaussian", "removed", 2.0),
    "add_remove_linear_gaussian_replaced": lambda: _relation_linear_audit("gaussian", "replaced", 2.0),
    "add_remove_laplace_removed": lambda: _relation_exit_table_audit("laplace", "removed"),
    "add_remove_laplace_replaced": lambda: _relation_exit_table_audit("laplace", "replaced"),
    "add_remove_gaussian_removed": lambda: _relation_exit_table_audit("gaussian", "removed", 2.0, 1e-3),
    "add_remove_gaussian_replaced": lambda: _relation_exit_table_audit("gaussian", "replaced", 2.0, 1e-3),
    "add_remove_logistic_removed": lambda: _relation_glm_audit("removed"),
    "add_remove_logistic_replaced": lambda: _relation_glm_audit("replaced"),
    "add_remove_logistic_person_of_2_rows": lambda: _relation_glm_audit("removed", rows=2),
    "add_remove_logistic_person_of_2_rows_replaced": lambda: _relation_glm_audit("replaced", rows=2),
    "weibull": _weibull_audit,
    "dp_sgld": _dp_sgld_audit,
    "discrete_output": _discrete_output_audit,
    "discrete_objective": _discrete_objective_audit,
    "elastic_net": _elastic_net_audit,
    "penalty_selection": _penalty_selection_audit,
}


def _draw_task(task):
    name, j, k, draws, seed = task
    return AUDITS[name]().draw(k, draws, as_noise_source(np.random.default_rng([seed, j, k])))


def run(names, draws: int, seed: int = 0, jobs: int = 1):
    """Rows (audit, lower bound, seconds) for the named audits with ``draws`` per data set.

    Each data set of each audit is one task with its own seeded generator (``[seed, position of
    the audit in AUDITS, k]``), so the numbers depend neither on ``jobs`` nor on the selection.
    """
    tasks = [(name, list(AUDITS).index(name), k, draws, seed) for name in names for k in (0, 1)]
    start = time.perf_counter()
    if jobs > 1:
        with ProcessPoolExecutor(jobs) as pool:
            results = list(pool.map(_draw_task, tasks))
    else:
        results = [_draw_task(task) for task in tasks]
    seconds = time.perf_counter() - start
    rows = []
    for j, name in enumerate(names):
        audit = AUDITS[name]()
        rows.append((audit, epsilon_lower_bound(results[2 * j], results[2 * j + 1], audit.delta)))
    return rows, seconds


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--draws", type=int, default=50_000, help="draws per data set (default 50000, 10⁵ in all)")
    parser.add_argument("--only", nargs="+", choices=sorted(AUDITS), default=list(AUDITS), help="audits to run")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    args = parser.parse_args(argv)
    if args.draws < 100:
        parser.error(f"--draws must be ≥ 100, got {args.draws}")
    if args.jobs < 1:
        parser.error(f"--jobs must be ≥ 1, got {args.jobs}")
    rows, seconds = run(args.only, args.draws, args.seed, args.jobs)
    print(f"{'mechanism':62s} {'claimed ε':>9s} {'δ':>7s} {'pair ε':>7s} {'lower bound':>11s} {'draws':>9s}  statistic")
    failed = False
    for audit, bound in rows:
        pair = "—" if audit.pair_epsilon is None else f"{audit.pair_epsilon:.3f}"
        flag = "  EXCEEDS CLAIM" if bound > audit.epsilon else ""
        failed |= bound > audit.epsilon
        print(
            f"{audit.name:62s} {audit.epsilon:9.3g} {audit.delta:7.0e} {pair:>7s} {bound:11.3f} "
            f"{2 * args.draws:9d}  {audit.statistic}{flag}"
        )
    print(
        f"\nlower bounds at confidence {1 - ALPHA:.0%} (Clopper–Pearson); draws = both data sets together; {seconds:.0f} s"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

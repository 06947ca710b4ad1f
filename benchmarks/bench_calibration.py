"""Calibration of Bayesian regression on private sufficient statistics: noise-aware vs Honkela et al. (2018).

For every cell ε × n × d, ``--reps`` data sets are drawn from the model's own assumptions
(simulation-based calibration: parameters from the prior the fitted models use, then data):

    λ₀ ~ Gamma(10, 10), β ~ N(0, I/λ₀), λ ~ Gamma(10, 10), Σx ~ Wishart(d + 2, I/(d + 2)),
    xᵢ ~ N(0, Σx), yᵢ = xᵢᵀβ + N(0, 1/λ),

released with :func:`pm_private.release_linear_stats` (split (0.6, 0.35, 0.05), Bx = 4,
By = 4·√(2(d + 1)), wide enough that clipping almost never bites: the clipped fraction is
printed), or with ``--mechanism gaussian`` by :func:`pm_private.release_linear_stats`
((ε, 10⁻⁵)-DP, rows bounded in norm by Bx·√d, responses by By), or, for ε = ∞, as exact
statistics.  Both models use exactly these priors, so a
calibrated method covers β with its central q-interval a fraction q of the time.  The noise-aware
model's covariate model is :func:`pm_private.linear.model.linear_model`'s default (the
covariate covariance integrated out, ``x_cov="integrated"``, whose Wishart prior is the one that
generated Σx); ``--x-cov wishart`` keeps Σx as a parameter under that prior, ``--x-cov release``
fixes it at the release's plug-in.

* noise-aware: :func:`pm_private.linear.model.linear_model` (default, Bernstein & Sheldon
  2019), NUTS (1 chain, ``--tune`` + ``--draws``), compiled once per d and reused for every
  replicate through ``set_linear_stats`` (:class:`pm_private.sampling.RefittableNUTS`);
* Honkela et al. (2018): the same function with ``noise_aware=False``, whose posterior is
  sampled exactly by :func:`pm_private.linear.gibbs_regression` (its conditionally conjugate
  Gibbs sampler, vectorised over replicates).

A misspecified case follows: covariates uniform on [−1.5, 1.5] (not Gaussian, bounded) clipped
at Bx = 1 (a third of the entries clipped), responses clipped at By = 2·sd(y).  In the designs
whose bounds bite (misspecified, ``--clipped``) ε = ∞ is a release at ε = 500, so that the
bounding travels with the statistics.  ``--scale-response`` / ``--no-scale-response`` choose
whether the releases scale whole rows, responses included (the Gaussian release's default), or
bound the covariates alone (entrywise clipping for Laplace, the Laplace default; projection for
Gaussian).

Coverage is the fraction of (replicate, coefficient) pairs whose true βⱼ lies in the central
interval; its Monte Carlo standard error is the spread of the per-replicate fractions / √reps.

    python -m benchmarks.bench_calibration            # default sizes (reps 20 / 10 / 6 for d = 2 / 5 / 10)
    python -m benchmarks.bench_calibration --quick    # a smoke run (3 replicates, n = 500, ε ∈ {1, ∞})
    python -m benchmarks.bench_calibration --mechanism gaussian --ds 20 64 --ns 1000 10000 \
        --no-misspecified --reps-high 8                # at scale (the integrated covariate model)
    python -m benchmarks.bench_calibration --mechanism gaussian --ds 2 5 --ns 200 5000 --epsilons 1 \
        --no-misspecified --relations replace-one add-remove   # n public against n private

``--relations`` (default: replace-one alone): each cell is run once per relation, on data sets drawn
from a generator seeded by the seed and the relation's place in the list (so the relations see
independent data sets), released with ``relation=`` of :func:`pm_private.release_linear_stats`
(under add/remove n is private, released with the counts, and the default integrated model
marginalises it); the first column names the relation.
"""

from __future__ import annotations

import argparse
import itertools
import logging
import time
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

from pm_private import linear_stats, release_linear_stats
from pm_private.linear.model import gibbs_regression, linear_model, project_psd, set_linear_stats
from pm_private.sampling.refit_nuts import RefittableNUTS

PRIOR = dict(
    noise_precision_alpha=10.0, noise_precision_beta=10.0, prior_precision_alpha=10.0, prior_precision_beta=10.0
)
LEVELS = (0.5, 0.9)


def draw_dataset(rng, n, d, *, misspecified=False, clipped=False):
    """(X, y, β, x_bound, y_bound) from the benchmark prior (or the misspecified design; or, with
    ``clipped``, the prior's design with bounds that bite: per-entry Bx = 0.9·√(tr Σx / d), so
    that about a third of the rows are projected in a Gaussian release, and By = 2·sd(y))."""
    lam0 = rng.gamma(PRIOR["prior_precision_alpha"], 1 / PRIOR["prior_precision_beta"])
    beta = rng.standard_normal(d) / np.sqrt(lam0)
    lam = rng.gamma(PRIOR["noise_precision_alpha"], 1 / PRIOR["noise_precision_beta"])
    if misspecified:
        X = rng.uniform(-1.5, 1.5, (n, d))
        y = X @ beta + rng.standard_normal(n) / np.sqrt(lam)
        return X, y, beta, 1.0, 2.0 * np.sqrt(0.75 * beta @ beta + 1 / lam)
    nu = d + 2
    T = rng.standard_normal((nu, d)) / np.sqrt(nu)
    cov = T.T @ T
    X = rng.standard_normal((n, d)) @ np.linalg.cholesky(cov).T
    y = X @ beta + rng.standard_normal(n) / np.sqrt(lam)
    if clipped:
        return X, y, beta, 0.9 * np.sqrt(np.trace(cov) / d), 2.0 * np.sqrt(beta @ cov @ beta + 1 / lam)
    return X, y, beta, 4.0, 4.0 * np.sqrt(2.0 * (d + 1))


def coverage(draws, truth):
    """Per level: (coverage, MC s.e., mean width) from draws (S, R, d) and truth (R, d)."""
    result = {}
    for q in LEVELS:
        lo, hi = np.quantile(draws, [(1 - q) / 2, (1 + q) / 2], axis=0)
        inside = (lo <= truth) & (truth <= hi)
        per_rep = inside.mean(axis=1)
        se = per_rep.std(ddof=1) / np.sqrt(len(per_rep)) if len(per_rep) > 1 else np.nan
        result[q] = (inside.mean(), se, (hi - lo).mean())
    return result


def release(X, y, bx, by, eps, mechanism, scale_response, rng, relation="replace-one"):
    """The statistics of one cell's data set: the mechanism's release at ε (ε = ∞: a release at
    ε = 500, so that the bounding travels with the statistics, with noise far below the sampling
    error) under ``relation``.  ``scale_response`` None keeps the release's default."""
    options = {} if scale_response is None else {"scale_response": scale_response}
    options["relation"] = relation
    eps = 500.0 if np.isinf(eps) else eps
    d = X.shape[1]
    if mechanism == "gaussian":
        return release_linear_stats(
            X, y, epsilon=eps, delta=1e-5, x_bound=bx * np.sqrt(d), y_bound=by, rng=rng, **options
        )
    return release_linear_stats(X, y, noise="laplace", epsilon=eps, x_bound=bx, y_bound=by, rng=rng, **options)


def run_cell(
    fitter,
    rng,
    n,
    d,
    eps,
    reps,
    misspecified=False,
    mechanism="laplace",
    clipped_design=False,
    scale_response=None,
    relation="replace-one",
):
    truths, na_draws, stats_list, clipped = [], [], [], []
    for _ in range(reps):
        X, y, beta, bx, by = draw_dataset(rng, n, d, misspecified=misspecified, clipped=clipped_design)
        if mechanism == "gaussian":
            clipped.append(((np.linalg.norm(X, axis=1) > bx * np.sqrt(d)).mean(), (np.abs(y) > by).mean()))
        else:
            clipped.append(((np.abs(X) > bx).mean(), (np.abs(y) > by).mean()))
        if np.isinf(eps) and not (misspecified or clipped_design):
            stats = linear_stats(X, y)
        else:
            stats = release(X, y, bx, by, eps, mechanism, scale_response, rng, relation)
        truths.append(beta)
        stats_list.append(stats)
        set_linear_stats(stats, fitter.model)
        na_draws.append(fitter.fit().posterior["beta"].values[0])  # (draws, d)
    truths = np.array(truths)
    na = coverage(np.stack(na_draws, axis=1), truths)
    # Honkela et al.'s model needs a positive eigenvalue of the noisy augmented matrix: a release
    # whose noise leaves none (d = 2, n = 500, ε = 0.3) has no fit and is left out of its coverage.
    usable = [i for i, stats in enumerate(stats_list) if _has_fit(stats)]
    if usable:
        draws = gibbs_regression([stats_list[i] for i in usable], rng=rng, **PRIOR)
        hk = coverage(draws[..., -d:], truths[usable])  # the slopes (after the intercept, where the statistics have it)
    else:
        hk = dict.fromkeys(LEVELS, (np.nan, np.nan, np.nan))
    return na, hk, np.mean(clipped, axis=0), reps - len(usable)


def _has_fit(stats) -> bool:
    """Whether Honkela et al.'s model can be fitted: :func:`project_psd` refuses statistics without a
    positive eigenvalue (exact statistics always pass)."""
    try:
        project_psd(stats)
    except ValueError:
        return False
    return True


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 replicates, n = 500, ε ∈ {1, ∞}, d ∈ {2, 5}")
    parser.add_argument("--reps", type=int, nargs=3, default=[20, 10, 6], help="replicates for d = 2, 5, 10")
    parser.add_argument("--reps-high", type=int, default=6, help="replicates for every other d")
    parser.add_argument(
        "--x-cov",
        choices=["default", "wishart", "release", "integrated"],
        default="default",
        help="covariate model of the noise-aware fit (default: linear_model's, the integrated one)",
    )
    parser.add_argument("--tune", type=int, default=400)
    parser.add_argument("--draws", type=int, default=400)
    parser.add_argument("--ds", type=int, nargs="+", default=[2, 5, 10])
    parser.add_argument("--ns", type=int, nargs="+", default=[500, 5000])
    parser.add_argument("--epsilons", type=float, nargs="+", default=[0.3, 1.0, 3.0, np.inf])
    parser.add_argument("--mechanism", choices=["laplace", "gaussian"], default="laplace", help="release mechanism")
    parser.add_argument("--no-misspecified", action="store_true")
    parser.add_argument(
        "--clipped",
        action="store_true",
        help="only the clipped design: data from the prior, bounds that project about a third of the rows "
        "(Gaussian release; ε = ∞ is a release at ε = 500)",
    )
    parser.add_argument(
        "--clipping", choices=["ignore", "model"], default="ignore", help="the noise-aware model's clipping argument"
    )
    parser.add_argument(
        "--scale-response",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="releases scale whole rows, responses included (default: each release's own default, on for "
        "gaussian, off for laplace)",
    )
    parser.add_argument("--only-misspecified", action="store_true")
    parser.add_argument("--missp-reps", type=int, default=10, help="replicates of the misspecified case")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--relations", nargs="+", choices=["replace-one", "add-remove"], default=["replace-one"],
        help="the neighbour relations to release under, each on its own data sets",
    )  # fmt: skip
    args = parser.parse_args(argv)
    # The models' dense algebra is tiny ((d+1)(d+2)/2 ≤ 66 rows): a multi-threaded BLAS only adds
    # synchronisation, 7x slower per gradient on a loaded 2-core machine.
    threadpool_limits(1, user_api="blas")
    if args.quick:
        args.reps, args.ns, args.epsilons, args.ds = [3, 3, 3], [500], [1.0, np.inf], [2, 5]
    warnings.filterwarnings("ignore")
    logging.getLogger("pymc").setLevel(logging.ERROR)
    reps_for = dict(zip([2, 5, 10], args.reps, strict=False))
    reps_for.update(dict.fromkeys([d for d in args.ds if d not in reps_for], args.reps_high))
    header = (
        f"{'relation':<12}{'case':<6}{'d':>3}{'n':>6}{'ε':>6}{'reps':>5} | noise-aware: cov50 (se)   cov90 (se)   w50    w90"
        f"  | Honkela 2018: cov50 (se)   cov90 (se)   w50    w90   | clip x, y"
    )
    print(header)
    print("-" * len(header))
    start = time.perf_counter()
    cases = ([] if args.only_misspecified else [("model", False)]) + ([] if args.no_misspecified else [("missp", True)])
    if args.clipped:
        cases = [("clip", False)]
    for (place, relation), (case, missp) in itertools.product(enumerate(args.relations), cases):
        rng = np.random.default_rng([args.seed, place])
        for d in args.ds if not missp else [d for d in args.ds if d == 5] or args.ds[:1]:
            reps = args.missp_reps if missp else reps_for[d]
            X, y, _, bx, by = draw_dataset(np.random.default_rng(99), max(50, 2 * d), d)
            stats = release(X, y, bx, by, 1.0, args.mechanism, args.scale_response, 0)
            x_cov = None if args.x_cov == "default" else args.x_cov
            model = linear_model(
                stats, noise_aware=True, x_cov=x_cov, x_scale=1.0, x_dof=d + 2, clipping=args.clipping, **PRIOR
            )
            fitter = RefittableNUTS(model, draws=args.draws, tune=args.tune, random_seed=args.seed)
            for n in args.ns:
                for eps in args.epsilons:
                    na, hk, clip, unfit = run_cell(
                        fitter,
                        rng,
                        n,
                        d,
                        eps,
                        reps,
                        misspecified=missp,
                        mechanism=args.mechanism,
                        clipped_design=case == "clip",
                        scale_response=args.scale_response,
                        relation=relation,
                    )
                    cells = [f"{c[q][0]:.2f} ({c[q][1]:.2f})" for c in (na, hk) for q in LEVELS]
                    widths = [f"{c[q][2]:6.3f}" for c in (na, hk) for q in LEVELS]
                    print(
                        f"{relation:<12}{case:<6}{d:>3}{n:>6}{eps:>6g}{reps:>5} | {cells[0]}  {cells[1]}  {widths[0]} {widths[1]}"
                        f" | {cells[2]}  {cells[3]}  {widths[2]} {widths[3]} | {clip[0]:.3f}, {clip[1]:.3f}"
                        + (f" | Honkela: {unfit} release(s) without a fit left out" if unfit else ""),
                        flush=True,
                    )
            print(
                f"  d = {d}: NUTS fit {np.median(fitter.times):.1f} s median, {max(fitter.times):.1f} s max "
                f"(after one compilation)",
                flush=True,
            )
    print(f"total {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()

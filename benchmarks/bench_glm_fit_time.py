"""Wall time of one NUTS fit of noise-aware private logistic or Poisson regression, after compilation.

For every d a data set of standard normal covariates (labels from σ(xᵀβ + 0.3) with β evenly spread
in [−1, 1]; counts from exp(xᵀβ/2 + 0.3)) is released with (ε, 10⁻⁶)-DP, rows of norm ≤ 3√d
(:func:`pm_private.release_logistic_stats` or :func:`pm_private.release_poisson_stats`), and the
model (:func:`pm_private.logistic_model` or :func:`pm_private.poisson_model`, default priors) is
sampled with the sampler its docstring recommends: NUTS with a dense mass matrix adapted during
tuning and target_accept = 0.9, ``--chains`` chains one after the other (``cores=1``), ``--tune``
+ ``--draws`` per chain.  The NUTS step is compiled once per d and a warm-up fit (not timed)
runs first; then each n of ``--ns`` gets its own release, swapped in with ``set_*_stats``, and one
timed fit.  The model's cost per gradient does not depend on n (only the posterior does), so the
time per leapfrog step should be flat in n.

    python -m benchmarks.bench_glm_fit_time                      # logistic, d = 10, n ∈ {1000, 100000}
    python -m benchmarks.bench_glm_fit_time --family poisson --ds 5 10

Measured 2026-11-26 on a shared 2-core machine (1-min load average in the last column), d = 10,
ε = 1; ``--sampler identity`` is the sampler of the earlier library (dense adaptation started at
the identity and the model's initial point, Σx through ``pm.LKJCholeskyCov``, PyMC's ``MvNormal``
likelihood), run on that code; ``laplace`` the current default (``laplace_nuts``, chains started at
the mode by ``laplace_start``, partial-correlation parametrisation of Σx, the analytic normal
log-density):

    family    sampler   n        fits | median fit s (range)   leapfrog steps     ms/step   load
    logistic  identity  1000     5    | 109.8 (92.3-190.9)      213 180-442 964    0.41-0.43 5.7-8.2
    logistic  identity  1000     3    |  80.5 (65.2-199.5)      213 180-442 964    0.29-0.45 1.8-3.0
    logistic  laplace   1000     5    |  28.1 (26.7-31.7)       119 044-134 058    0.22-0.24 1.2-2.0
    logistic  laplace   100000   5    |  12.0 (11.4-13.0)        45 656-48 564     0.25-0.27 1.1
    poisson   identity  1000     1    | 257.9                   450 453            0.57      4.5
    poisson   laplace   1000     3    |  41.4 (37.6-41.5)       132 442-146 670    0.28-0.31 2.3-2.9
    poisson   laplace   1000     3    |  30.7 (30.4-33.2)       131 322-142 886    0.23      0.8-0.9
    poisson   laplace   1000     2    |  52.8 (51.0-54.6)       131 322-142 886    0.38-0.39 2.3-2.8

(``python -m benchmarks.bench_glm_fit_time --ns 1000 --repeats 5 --sampler identity`` on the earlier
code; ``--ns 1000 100000 --repeats 5``; ``--family poisson --ns 1000 --repeats 3``.)  The last two
Poisson rows are the current code, whose Poisson–lognormal probabilities and their derivatives
come from one quadrature per gradient instead of two (0.19 → 0.17 ms per log-density and
gradient): quiet, then with two busy-loop processes on the two cores (same seed, same releases).
The time per leapfrog step is flat in n.  At n = 1000, ε = 1 the release barely identifies β at d = 10
(posterior standard deviations close to the prior's), and NUTS still needs about 30 leapfrog steps
per iteration (tree depth 5) after tuning; at n = 10⁵ about 11.
"""

from __future__ import annotations

import argparse
import logging
import os
import time
import warnings

import numpy as np
import pymc as pm
from scipy.special import expit

from benchmarks.bench_calibration_glm import add_sampler_argument, build_step
from pm_private.logistic import logistic_model, release_logistic_stats, set_logistic_stats
from pm_private.poisson import poisson_model, release_poisson_stats, set_poisson_stats

DELTA = 1e-6


def release(rng, family: str, n: int, d: int, epsilon: float):
    """A release of a simulated data set of n rows and d covariates."""
    X = rng.normal(size=(n, d))
    beta = np.linspace(-1.0, 1.0, d)
    bound = 3.0 * np.sqrt(d)
    if family == "poisson":
        y = rng.poisson(np.exp(X @ beta / 2 + 0.3))
        return release_poisson_stats(X, y, epsilon=epsilon, delta=DELTA, x_bound=bound, y_bound=20, rng=rng)
    y = (rng.uniform(size=n) < expit(X @ beta + 0.3)).astype(int)
    return release_logistic_stats(X, y, epsilon=epsilon, delta=DELTA, x_bound=bound, rng=rng)


def fit(model, step, rng, chains: int, tune: int, draws: int, sampler: str = "identity"):
    """One NUTS run with the compiled ``step``, tuning steps kept (their leapfrog steps are counted);
    ``laplace``: every chain starts at the Laplace mode (:func:`pm_private.laplace_start`)."""
    start = {}
    if sampler == "laplace":
        from pm_private.released import laplace_start

        start = {"initvals": laplace_start(step, model)}
    with model:
        return pm.sample(
            draws,
            tune=tune,
            step=step,
            chains=chains,
            cores=1,
            progressbar=False,
            random_seed=int(rng.integers(2**30)),
            compute_convergence_checks=False,
            discard_tuned_samples=False,
            **start,
        )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--family", choices=("logistic", "poisson"), default="logistic")
    parser.add_argument("--ds", type=int, nargs="+", default=[10])
    parser.add_argument("--ns", type=int, nargs="+", default=[1000, 100000])
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--chains", type=int, default=2)
    parser.add_argument("--tune", type=int, default=1000)
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=1, help="timed fits per n (each its own release)")
    add_sampler_argument(parser)
    args = parser.parse_args(argv)
    times: dict = {}
    warnings.filterwarnings("ignore")
    logging.getLogger("pymc").setLevel(logging.ERROR)
    rng = np.random.default_rng(args.seed)
    build, swap = (
        (poisson_model, set_poisson_stats) if args.family == "poisson" else (logistic_model, set_logistic_stats)
    )
    print(
        f"{args.family}, ε = {args.epsilon:g}, {args.chains} chains × ({args.tune} + {args.draws}), cores = 1,"
        f" sampler {args.sampler}"
    )
    print(f"{'d':>3}{'n':>8} | {'fit s':>7} {'leapfrog':>9} {'ms/step':>8} {'divergent':>9} | load")
    for d in args.ds:
        model = build(release(rng, args.family, args.ns[0], d, args.epsilon))
        start = time.perf_counter()
        step = build_step(model, args.sampler)
        compiled = time.perf_counter() - start

        start = time.perf_counter()
        # warm-up: just-in-time compilation of the sampler's functions
        fit(model, step, rng, args.chains, 50, 10, args.sampler)
        print(f"  d = {d}: step built in {compiled:.1f} s, warm-up fit {time.perf_counter() - start:.1f} s")
        for n in [n for n in args.ns for _ in range(args.repeats)]:
            swap(release(rng, args.family, n, d, args.epsilon), model)
            start = time.perf_counter()
            if args.sampler == "laplace":
                step = build_step(model, args.sampler, step)  # the Laplace start of this release
            idata = fit(model, step, rng, args.chains, args.tune, args.draws, args.sampler)
            seconds = time.perf_counter() - start
            times.setdefault((d, n), []).append(seconds)
            stats = idata.sample_stats
            steps = int(stats["n_steps"].sum()) + int(idata.warmup_sample_stats["n_steps"].sum())
            per_step = 1e3 * seconds / steps
            print(
                f"{d:>3}{n:>8} | {seconds:7.1f} {steps:>9} {per_step:8.2f} {int(stats['diverging'].sum()):>9}"
                f" | {os.getloadavg()[0]:.2f}",
                flush=True,
            )

    for (d, n), values in times.items():
        print(
            f"  d = {d}, n = {n}: median fit {np.median(values):.1f} s of {len(values)} ({min(values):.1f}-{max(values):.1f})"
        )


if __name__ == "__main__":
    main()

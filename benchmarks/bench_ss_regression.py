"""ADVI fit time: Honkela et al.'s (2018) model on sufficient statistics against the same model row by row.

Models (β ~ N(0, 1/λ₀ I), λ, λ₀ ~ Gamma(2, 2), d features):

- suff-stat: ``linear_model(linear_stats(X, y))`` at n = 1,000 and n = 1,000,000;
- row-wise: ``pm.Normal("y", mu=X @ beta, sigma=1/sqrt(λ), observed=y)`` at n = 100,000.

Both are fitted with :class:`pm_private.sampling.advi.RefittableADVI` (mean-field ADVI, Adam with the same
learning-rate schedule, same number of iterations), compiled with PyTensor's C backend.  Only
``.fit(iterations)`` is timed (best of ``--repeats``): data generation, the statistics, model
building and compilation (plus a short warm-up fit) are excluded.

Goals: t(suff-stat, 10⁶) / t(suff-stat, 10³) ≤ 1.2 (cost independent of n) and
t(row-wise, 10⁵) / t(suff-stat) ≥ 50.

``--mode`` picks the PyTensor backend: ``CVM`` (C, default).  In PyTensor 3.3 ``FAST_RUN``
resolves to the Numba linker, whose ADVI step on this small graph is several times slower.
The row-wise model's matrix-vector products run on numpy's BLAS and use its threads
(``OPENBLAS_NUM_THREADS=1`` for a single-thread comparison).

        .venv/bin/python benchmarks/bench_ss_regression.py [--iterations 10000] [--d 10] [--repeats 3]
"""

import argparse
import os
import time
import warnings

import numpy as np
import pymc as pm
import pytensor.tensor as pt

from pm_private import linear_stats
from pm_private.linear.model import linear_model, set_linear_stats
from pm_private.sampling.advi import RefittableADVI

warnings.filterwarnings("ignore", message="PyTensor could not link to a BLAS")


def make_data(n, d, seed):
    rng = np.random.default_rng(seed)
    beta = rng.standard_normal(d)
    X = rng.standard_normal((n, d))
    y = X @ beta + rng.standard_normal(n)
    return X, y


def rowwise_model(X, y):
    """The same model written row by row (the usual PyMC way)."""
    with pm.Model(coords={"feature": [f"x{j}" for j in range(X.shape[1])]}) as model:
        prior_precision = pm.Gamma("prior_precision", alpha=2.0, beta=2.0)
        noise_precision = pm.Gamma("noise_precision", alpha=2.0, beta=2.0)
        beta = pm.Normal("beta", mu=0.0, sigma=1.0 / pt.sqrt(prior_precision), dims="feature")
        pm.Normal("y", mu=pt.as_tensor(X) @ beta, sigma=1.0 / pt.sqrt(noise_precision), observed=y)
    return model


def time_fits(advi, iterations, repeats):
    """Best wall time of ``advi.fit(iterations)`` over ``repeats`` runs (compilation excluded)."""
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        advi.fit(iterations)
        best = min(best, time.perf_counter() - start)
    return best


def compile_advi(model, args):
    start = time.perf_counter()
    advi = RefittableADVI(model, random_seed=args.seed, compile_kwargs={"mode": args.mode})
    advi.fit(args.warmup)  # first call: any lazy set-up happens here, not in the timed fits
    return advi, time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--d", type=int, default=10)
    parser.add_argument("--iterations", type=int, default=10_000, help="ADVI iterations per fit")
    parser.add_argument("--repeats", type=int, default=3, help="timed fits per model (best is reported)")
    parser.add_argument("--warmup", type=int, default=200, help="iterations of the untimed warm-up fit")
    parser.add_argument("--n-small", type=int, default=1_000)
    parser.add_argument("--n-large", type=int, default=1_000_000)
    parser.add_argument("--n-rowwise", type=int, default=100_000)
    parser.add_argument("--rowwise-repeats", type=int, default=1, help="timed fits of the row-wise model")
    parser.add_argument(
        "--mode", default="CVM", help="PyTensor mode: CVM (C backend, default) or FAST_RUN (Numba in PyTensor 3.3)"
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    # Statistics are computed before any timing: release / accumulation cost is not measured here.
    stats = {n: linear_stats(*make_data(n, args.d, args.seed + i)) for i, n in enumerate((args.n_small, args.n_large))}
    X_row, y_row = make_data(args.n_rowwise, args.d, args.seed + 2)

    rows = []
    # Suff-stat model: compiled once, refitted on both data sets (same shapes, set_linear_stats only).
    ss_advi, ss_compile = compile_advi(linear_model(stats[args.n_small]), args)
    for n in (args.n_small, args.n_large):
        set_linear_stats(stats[n], model=ss_advi.model)
        rows.append(("suff-stat", n, time_fits(ss_advi, args.iterations, args.repeats)))

    row_advi, row_compile = compile_advi(rowwise_model(X_row, y_row), args)
    rows.append(("row-wise", args.n_rowwise, time_fits(row_advi, args.iterations, args.rowwise_repeats)))
    row_beta = row_advi.mean("beta")

    # Sanity check that both fit the same model: suff-stat ADVI on the row-wise model's data.
    set_linear_stats(linear_stats(X_row, y_row), model=ss_advi.model)
    ss_advi.fit(args.iterations)
    beta_gap = np.abs(ss_advi.mean("beta") - row_beta).max()

    base = rows[0][2]
    print(
        f"ADVI, d = {args.d}, {args.iterations:,} iterations, mode {args.mode}, best of {args.repeats} "
        f"(row-wise: {args.rowwise_repeats}); compile + warm-up excluded "
        f"(suff-stat {ss_compile:.1f} s, row-wise {row_compile:.1f} s)"
    )
    threads = os.environ.get("OPENBLAS_NUM_THREADS") or os.environ.get("OMP_NUM_THREADS") or "default"
    print(f"{os.cpu_count()} CPUs, BLAS threads: {threads} (the row-wise X @ β uses BLAS, the suff-stat step does not)")
    print(f"{'model':<12}{'n':>12}{'seconds':>10}{'µs/iter':>10}{'ratio':>9}")
    for name, n, seconds in rows:
        print(f"{name:<12}{n:>12,}{seconds:>10.3f}{1e6 * seconds / args.iterations:>10.1f}{seconds / base:>9.2f}")

    t_small, t_large, t_row = (seconds for _, _, seconds in rows)
    goals = [
        (f"t(suff-stat, n={args.n_large:,}) / t(suff-stat, n={args.n_small:,})", t_large / t_small, "<=", 1.2),
        (f"t(row-wise, n={args.n_rowwise:,}) / t(suff-stat, n={args.n_small:,})", t_row / t_small, ">=", 50),
        (f"t(row-wise, n={args.n_rowwise:,}) / t(suff-stat, n={args.n_large:,})", t_row / t_large, ">=", 50),
    ]
    print()
    for label, value, op, goal in goals:
        ok = value <= goal if op == "<=" else value >= goal
        print(f"{label:<52}{value:>9.2f}   goal {op} {goal:<5} {'met' if ok else 'NOT met'}")
    print(f"\nmax |β mean(suff-stat) − β mean(row-wise)| on the same n={args.n_rowwise:,} data: {beta_gap:.2e}")


if __name__ == "__main__":
    main()

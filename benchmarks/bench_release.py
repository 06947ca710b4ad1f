"""Cost of linear_stats and release_linear_stats against the plain BLAS product on the same array.

Baseline: ``X.T @ X`` (numpy, BLAS syrk on all cores, same array, same run).  Goals at
n = 2,000,000, d = 64: release ≤ 1.3×, exact ``linear_stats`` ≤ 1.1× (Honkela et al. 2018's
statistics in one clipped pass).  The three are timed in turn in every repeat, so a load spike
from other processes hits them alike; the table gives the median time of each, the median
of the per-repeat ratios, and the best (minimum) times and their ratio, the least disturbed
by other processes on a shared machine.  ``X.T @ X`` on one BLAS thread is shown for
reference: a multi-threaded BLAS call degrades badly when other processes hold the cores,
the release's kernels (one single-threaded BLAS call per core) much less.  Also reports the BLAS (threadpoolctl), the load average and the peak
extra memory of the release (tracemalloc).

    .venv/bin/python benchmarks/bench_release.py [--n 2000000] [--d 64] [--repeats 5]

On machines that set OPENBLAS_CORETYPE (and OPENBLAS_L2_SIZE) to work around old OpenBLAS
builds, ``env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE`` before the command measures the
kernel numpy would pick by itself (the table's header names it); the goals are judged that way.
On a quiet 2-core machine (SkylakeX kernel) the release took 1.18× and ``linear_stats`` 0.83×;
with OPENBLAS_CORETYPE=Haswell forced, 1.34× and 0.84× (the forced kernel speeds up the one large
product more than the chunked ones).
"""

import argparse
import os
import time
import tracemalloc

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

from pm_private import linear_stats, release_linear_stats


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=2_000_000)
    parser.add_argument("--d", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    X = rng.standard_t(3, size=(args.n, args.d))
    y = rng.standard_t(3, size=args.n)

    def product_one_thread():
        with threadpool_limits(1, user_api="blas"):
            return X.T @ X

    runs = {
        "X.T @ X (baseline)": lambda: X.T @ X,
        "X.T @ X, BLAS on 1 thread": product_one_thread,
        "linear_stats (exact)": lambda: linear_stats(X, y),
        "release_linear_stats (secure noise)": lambda: release_linear_stats(
            X, y, noise="laplace", epsilon=1.0, x_bound=2.0, y_bound=2.0
        ),
    }
    for fn in runs.values():  # warm-up: OpenDP's first call, thread start-up
        fn()
    load = [os.getloadavg()[0]]
    times = {name: [] for name in runs}
    for _ in range(args.repeats):
        for name, fn in runs.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
        load.append(os.getloadavg()[0])
    baseline = np.array(times["X.T @ X (baseline)"])

    tracemalloc.start()
    release_linear_stats(X, y, noise="laplace", epsilon=1.0, x_bound=2.0, y_bound=2.0)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()

    blas = ", ".join(
        f"{lib['internal_api']} {lib['version']} {lib['architecture']} ×{lib['num_threads']}"
        for lib in threadpool_info()
        if lib["user_api"] == "blas"
    )
    print(f"n = {args.n:,}, d = {args.d}, X = {X.nbytes / 1e6:.0f} MB, median of {args.repeats}, {os.cpu_count()} CPUs")
    print(f"BLAS: {blas}; OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}")
    print(f"1-min load average during the run: {min(load):.2f} … {max(load):.2f}")
    print(f"{'what':<36}{'median s':>10}{'ratio':>8}{'best s':>9}{'ratio':>8}   per-repeat ratios")
    for name, values in times.items():
        ratios = np.array(values) / baseline
        detail = " ".join(f"{r:.2f}" for r in ratios)
        best = min(values) / baseline.min()
        print(
            f"{name:<36}{np.median(values):>10.3f}{np.median(ratios):>8.2f}{min(values):>9.3f}{best:>8.2f}   {detail}"
        )
    print(f"peak extra memory of the release: {peak / 1e6:.1f} MB ({peak / X.nbytes:.1%} of X)")


if __name__ == "__main__":
    main()

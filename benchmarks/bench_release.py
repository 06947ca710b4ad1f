"""Cost of release_suff_stats against the plain BLAS product on the same array.

Baseline: ``X.T @ X`` (numpy, same array, same run).  Goal: ratio ≤ 1.3 at
n = 2,000,000, d = 64.  Also reports the peak extra memory of the release (tracemalloc).

    .venv/bin/python benchmarks/bench_release.py [--n 2000000] [--d 64] [--repeats 3]
"""

import argparse
import time
import tracemalloc

import numpy as np

from pm_private import release_suff_stats


def best_time(fn, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=2_000_000)
    parser.add_argument("--d", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    X = rng.standard_t(3, size=(args.n, args.d))
    y = rng.standard_t(3, size=args.n)

    baseline = best_time(lambda: X.T @ X, args.repeats)
    release = best_time(
        lambda: release_suff_stats(X, y, epsilon=1.0, x_bound=2.0, y_bound=2.0), args.repeats
    )
    tracemalloc.start()
    release_suff_stats(X, y, epsilon=1.0, x_bound=2.0, y_bound=2.0)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()

    print(f"n = {args.n:,}, d = {args.d}, X = {X.nbytes / 1e6:.0f} MB, best of {args.repeats}")
    print(f"{'what':<34}{'seconds':>10}{'ratio':>8}")
    print(f"{'X.T @ X (baseline)':<34}{baseline:>10.3f}{1.0:>8.2f}")
    print(f"{'release_suff_stats (secure noise)':<34}{release:>10.3f}{release / baseline:>8.2f}")
    print(f"peak extra memory of the release: {peak / 1e6:.1f} MB ({peak / X.nbytes:.1%} of X)")


if __name__ == "__main__":
    main()

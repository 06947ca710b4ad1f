"""LSP rung bounds (K = 500) against one non-private MLE on n = 53,558 records (SB's size in Nguyên & Hui (2017b)).

Prints a ratio table: each time is divided by the time of one ``weibull_mle`` call measured in
the same run.  Run ``python benchmarks/bench_weibull_private.py``.
"""

import math
import timeit

import numpy as np

from pm_private.survival import lsp_ladder, scale_times, simulate_weibull, weibull_mle, weibull_private

N, K, OMEGA = 53_558, 500, 6.0


def main() -> None:
    sim = simulate_weibull(N, shape=1.2, scale=0.6, censor=(0.1, 1.0), horizon=1.0, rng=0)
    t = scale_times(sim.time, horizon=1.0, floor=math.exp(-OMEGA))
    d = sim.event
    cases = {
        "weibull_mle (baseline)": lambda: weibull_mle(t, d),
        f"lsp_ladder K={K}": lambda: lsp_ladder(t, d, K=K),
        f"weibull_private K={K} (seeded)": lambda: weibull_private(sim.time, d, epsilon=1.0, horizon=1.0, K=K, rng=1),
    }
    times = {name: min(timeit.repeat(fn, number=1, repeat=5)) for name, fn in cases.items()}
    base = times["weibull_mle (baseline)"]
    print(f"n = {N}, {int(d.sum())} events")
    print(f"{'case':36s} {'seconds':>9s} {'ratio':>8s}")
    for name, seconds in times.items():
        print(f"{name:36s} {seconds:9.4f} {seconds / base:8.1f}")
    print(f"rungs per second: {np.round(K / times[f'lsp_ladder K={K}']):.0f}")


if __name__ == "__main__":
    main()

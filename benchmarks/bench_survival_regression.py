"""Calibration of the noise-aware proportional-hazards regression on the exit table with covariate
moments (``release_survival_regression_stats`` + ``survival_regression_model``), next to the naive
model (the same release treated as exact).

Data per release: n people, covariates x ~ N(0, I_d) (or a misspecified law, standardised), true
log hazard ratios βⱼ ~ N(0, 0.3²), event times exponential with rate exp(xᵀβ) (or Weibull with
shape 1.5: hazards not constant inside the intervals), censoring exponential with rate 0.3 (or
uniform on (0, 2τ): random censoring whose hazard is not piecewise constant).  The interval ends
are quantiles 0.1, …, 0.9 of the event times of a separate public pilot sample of 500 people (J
of them; the last is the horizon), the row bound Bx the 99.9 % quantile of ‖x‖ under N(0, I_d)
(public: √χ²_d(0.999)), δ = 10⁻⁶.  The fit: one NUTS chain (``--tune`` + ``--draws``) with a dense
mass matrix started at the Laplace approximation (``laplace_nuts``), compiled once per (d, J).
Coverage is the share of (release, coefficient) pairs whose central 50 % / 90 % interval holds the
true β, with its Monte Carlo s.e. (the spread of the per-release shares over √releases).

One factor at a time around the centre d = 5, n = 10,000, ε = 1, J = 5: d ∈ {1, 10},
n ∈ {1000, 100,000}, ε ∈ {0.5, 4, ∞}, J = 20, the grouped (discrete-time, complementary log-log)
hazard model fitted to the same continuous-time data, the corners d = 10 and J = 20 at
n ∈ {1000, 10,000, 100,000}, and the misspecified cells (log-normal and binary covariates,
Weibull times, uniform censoring).

    python -m benchmarks.bench_survival_regression --quick
    python -m benchmarks.bench_survival_regression --reps 12 --out FILE.md
"""

from __future__ import annotations

import argparse
import logging
import os
import time
import warnings

import numpy as np
from scipy import stats as sps

from benchmarks.bench_calibration_glm import Fitter, coverage
from pm_private.survival import (
    release_survival_regression_stats,
    set_survival_regression_stats,
    survival_regression_model,
    survival_regression_stats,
)

DELTA = 1e-6
CENTRE = dict(
    d=5, n=10_000, eps=1.0, J=5, law="gaussian", times="exponential", censoring="exponential",
    hazard="piecewise_exponential",
)  # fmt: skip
CELLS = [
    ("centre", {}),
    ("d1", dict(d=1)),
    ("d10", dict(d=10)),
    ("n1000", dict(n=1000)),
    ("n100000", dict(n=100_000)),
    ("eps0.5", dict(eps=0.5)),
    ("eps4", dict(eps=4.0)),
    ("epsinf", dict(eps=np.inf)),
    ("J20", dict(J=20)),
    ("d10-J20", dict(d=10, J=20)),
    ("n100000-d10-J20", dict(n=100_000, d=10, J=20)),
    ("n1000-d10-J20", dict(n=1000, d=10, J=20)),
    ("cloglog", dict(hazard="cloglog")),
    ("lognormal", dict(law="lognormal")),
    ("binary", dict(law="binary")),
    ("weibull", dict(times="weibull")),
    ("uniform-censoring", dict(censoring="uniform")),
]
NAIVE_CELLS = ("centre", "eps0.5", "n100000")
#: The seed of the public pilot sample that fixes the interval ends of a cell (by J and the time law).
PILOT_SEED = 2026


def covariates(rng, law: str, n: int, d: int) -> np.ndarray:
    """n rows of d standardised covariates of one law."""
    if law == "gaussian":
        return rng.normal(size=(n, d))
    if law == "lognormal":
        z = np.exp(0.75 * rng.normal(size=(n, d)))
        mean, var = np.exp(0.75**2 / 2), (np.exp(0.75**2) - 1) * np.exp(0.75**2)
        return (z - mean) / np.sqrt(var)
    p = rng.uniform(0.1, 0.5, size=d)
    return ((rng.uniform(size=(n, d)) < p) - p) / np.sqrt(p * (1 - p))


def event_times(rng, X, beta, kind: str) -> np.ndarray:
    rate = np.exp(X @ beta)
    if kind == "exponential":
        return rng.exponential(1.0 / rate)
    return (rng.exponential(1.0, size=rate.size) / rate) ** (1 / 1.5)  # Weibull shape 1.5, PH in x


def draw(rng, cell: dict, edges_only: bool = False):
    d, n = cell["d"], (500 if edges_only else cell["n"])
    X = covariates(rng, cell["law"], n, d)
    beta = rng.normal(0.0, 0.3, size=d)
    t = event_times(rng, X, np.zeros(d) if edges_only else beta, cell["times"])
    if edges_only:  # public pilot: interval ends at quantiles of its event times
        return np.quantile(t, np.linspace(0.1, 0.9, cell["J"]))
    horizon = cell["edges"][-1]
    c = rng.exponential(1 / 0.3, n) if cell["censoring"] == "exponential" else rng.uniform(0, 2 * horizon, n)
    return np.minimum(t, c), t <= c, X, beta


def run_cell(name: str, cell: dict, reps: int, args, fitters: dict, rng) -> list[str]:
    cell = {**CENTRE, **cell}
    cell["edges"] = draw(np.random.default_rng(PILOT_SEED), cell, edges_only=True)  # the same for every release
    bound = float(np.sqrt(sps.chi2.ppf(0.999, cell["d"])))
    naive = name in NAIVE_CELLS and np.isfinite(cell["eps"])
    results = {"noise-aware": [], "naive": []}
    truths, times, divergent, projected = [], [], 0, []
    for _ in range(reps):
        time_, event, X, beta = draw(rng, cell)
        if np.isfinite(cell["eps"]):
            stats = release_survival_regression_stats(
                time_, event, X, edges=cell["edges"], x_bound=bound, epsilon=cell["eps"], delta=DELTA, rng=rng
            )
        else:
            stats = survival_regression_stats(time_, event, X, edges=cell["edges"], x_bound=bound)
        projected.append(np.mean(np.linalg.norm(X, axis=1) > bound))
        truths.append(beta)
        for label in ("noise-aware", "naive") if naive else ("noise-aware",):
            aware = label == "noise-aware" and np.isfinite(cell["eps"])
            key = (cell["d"], tuple(cell["edges"]), aware, cell["hazard"])
            if key not in fitters:
                model = survival_regression_model(stats, noise_aware=aware, hazard=cell["hazard"])
                fitters[key] = Fitter(model, draws=args.draws, tune=args.tune, seed=args.seed)
            fitter = fitters[key]
            set_survival_regression_stats(stats, fitter.model)  # a naive model takes the release as exact
            before = fitter.divergent
            results[label].append(fitter.fit())
            if label == "noise-aware":
                times.append(fitter.times[-1])
                divergent += fitter.divergent - before
    truth = np.array(truths)
    rows = []
    for label, draws in results.items():
        if not draws:
            continue
        cov = coverage(np.stack(draws, axis=1), truth)  # draws (S, R, d)
        rows.append(
            f"| {name} | {cell['d']} | {cell['n']} | {cell['eps']:g} | {cell['J']} | {cell['law']} | {cell['times']} | "
            f"{cell['censoring']} | {label} | {reps} | {cov[0.5][0]:.2f} ({cov[0.5][1]:.2f}) | "
            f"{cov[0.9][0]:.2f} ({cov[0.9][1]:.2f}) | {np.median(times):.1f} | {divergent / (reps * args.draws):.3f} | "
            f"{np.mean(projected):.4f} |"
        )
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=12)
    parser.add_argument("--tune", type=int, default=500)
    parser.add_argument("--draws", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cells", nargs="+", help="only these cells")
    parser.add_argument("--quick", action="store_true", help="smoke run: 2 cells, 2 releases, 150 + 150 draws")
    parser.add_argument("--out", help="also write the table as markdown to this file")
    args = parser.parse_args(argv)
    if args.quick:
        args.reps, args.tune, args.draws, args.cells = 2, 150, 150, ["centre", "epsinf"]
    warnings.filterwarnings("ignore")
    logging.getLogger("pymc").setLevel(logging.ERROR)
    rng = np.random.default_rng(args.seed)
    header = [
        f"NUTS 1 × ({args.tune} + {args.draws}), {args.reps} releases per cell, seed {args.seed}",
        "",
        "| cell | d | n | ε | J | covariates | times | censoring | model | reps | cov50 (se) | cov90 (se) | fit s "
        "| div | projected |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    print("\n".join(header), flush=True)
    lines, fitters, start = list(header), {}, time.perf_counter()
    for name, change in CELLS:
        if args.cells and name not in args.cells:
            continue
        for row in run_cell(name, change, args.reps, args, fitters, rng):
            print(row, flush=True)
            lines.append(row)
    footer = f"\ntotal {time.perf_counter() - start:.0f} s; load average {os.getloadavg()[0]:.2f}"
    print(footer)
    if args.out:
        with open(args.out, "w") as handle:
            handle.write("\n".join([*lines, footer]) + "\n")


if __name__ == "__main__":
    main()

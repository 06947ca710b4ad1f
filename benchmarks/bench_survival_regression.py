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
Weibull times, uniform censoring).  Each release's preprocessing standardises the raw covariates by
the law's own mean and s.d. (public design constants) and declares their kinds (binary 0/1
columns; the log-normal law keeps 500 public rows of it); the model takes the Gaussian covariate
law (``x_sample=None``) unless the cell's name ends in ``-reference`` (the release's reference
law, ``x_sample="public"``), at n = 10,000 and 100,000 for binary and log-normal covariates.

    python -m benchmarks.bench_survival_regression --quick
    python -m benchmarks.bench_survival_regression --reps 12 --out FILE.md
    python -m benchmarks.bench_survival_regression --cells n1000 --set d=2 --relations replace-one add-remove

``--set KEY=VALUE`` overrides a key of every cell run (d, n, eps, J, law, times, censoring,
hazard, covariate_law; the cell keeps its name, the row its actual values).  ``--relations replace-one
add-remove`` (default: replace-one alone, as before): each release's data set is released once
under each relation asked for, with independent noise (``relation=`` of the release; under
add/remove n is private, the release's ``n`` None, and the model takes n as latent,
``n_people``), and each release is fitted by the noise-aware model of its relation (one compiled
model per relation, reused through ``set_survival_regression_stats``, which refuses a release of
the other relation).  The naive model is fitted under replace-one only, and ε = ∞ (exact
statistics, n public) under replace-one only.  Each row names its relation and gives ``medw90``,
the median over releases of the mean 90 % interval width of β, ``ratio``, a noise-aware width
over replace-one's noise-aware width on the same data sets, and, under add/remove, the 50 % /
90 % coverage of the true n by ``n_people`` (Monte Carlo s.e. as for β; ``--digits 3`` prints
them to three decimals).  ``fit s`` and ``div`` are the relation's noise-aware fits' (median
time, share of divergent draws).

Neighbour relations, measured 2026-12-06 on a shared 2-core machine (other engineers' work
running: 1-minute load 2.9–4.7), d = 2, J = 5, ε = 1, δ = 10⁻⁶, the defaults otherwise (one chain
of 500 + 500 per fit, Laplace-started dense NUTS), 80 releases per relation, each data set
released under both relations with independent noise (the cell is ``n1000`` with ``--set``: its
n column is the true n)::

    python -m benchmarks.bench_survival_regression --cells n1000 --set d=2 --relations replace-one add-remove --reps 80 --seed 1 --digits 3
    python -m benchmarks.bench_survival_regression --cells n1000 --set d=2 n=5000 --relations replace-one add-remove --reps 80 --seed 2 --digits 3

run side by side (1005 s and 1113 s wall; earlier runs of the same commands without
``--digits 3``, 1143 s and 1275 s at load 1.4–5.0, printed the same table to two decimals).
Coverage of β (Monte Carlo s.e.), medw90 and its ratio to replace-one's, coverage of the true n
by ``n_people``, median fit time and share of divergent draws of the noise-aware fits:

       n  relation    | cov50 (se)     cov90 (se)     medw90  ratio | n: cov50 (se)   cov90 (se)     | fit s  div
    1000  replace-one | 0.581 (0.040)  0.963 (0.015)   0.865   1.00 |                                |  4.4  0.001
    1000  add-remove  | 0.525 (0.041)  0.906 (0.024)   0.591   0.68 | 0.487 (0.056)  0.863 (0.039)   |  5.2  0.003
    5000  replace-one | 0.406 (0.036)  0.887 (0.025)   0.152   1.00 |                                |  4.9  0.001
    5000  add-remove  | 0.544 (0.032)  0.912 (0.021)   0.120   0.79 | 0.562 (0.056)  0.912 (0.032)   |  5.2  0.002

Against replace-one, within two Monte Carlo s.e. of the add/remove figure in two of the four
comparisons (n = 1000 at 50 %: gap 0.056 against 0.082; n = 5000 at 90 %: 0.025 against 0.042)
and not in the other two: n = 1000 at 90 %, 0.906 against 0.963 (gap 0.057 against 2 × 0.024 =
0.048), where replace-one over-covers (4.2 s.e. over 0.90); and n = 5000 at 50 %, 0.544 against
0.406 (gap 0.138 against 0.064), where replace-one under-covers (2.6 s.e. under 0.50).  Against
the nominal level every add/remove coverage of β and of n is within two s.e. (the farthest:
β at 50 % for n = 5000, 1.4 s.e. over; n at 90 % for n = 1000, 0.863, 0.95 s.e. under).
Replace-one is not: 0.963 at 90 % (n = 1000) and 0.406 at 50 % (n = 5000) are outside, and 0.581
at 50 % (n = 1000) is 2.0 s.e. over, at the edge.  The widths are not like for like: at the same
ε the add/remove release adds less noise (sensitivity 2 against √7, a factor 0.76), and the
ledger charges it as the replace-one release of that noise, ε = 1.35 at δ = 10⁻⁶; its β
intervals are 0.68 (n = 1000) and 0.79 (n = 5000) of replace-one's.  About 0.1–0.3 % of the
noise-aware draws diverged (shares printed to 0.001: roughly 40–140 of a row's 40,000); no fit
failed, and the library raised no error under add/remove.
"""

from __future__ import annotations

import argparse
import logging
import os
import time
import warnings

import numpy as np
from scipy import stats as sps

from benchmarks.bench_calibration_glm import LEVELS, Fitter, add_relations_argument, coverage, median_width
from pm_private import Preprocessing
from pm_private.privacy.relations import RELATIONS, REPLACE_ONE
from pm_private.survival import (
    release_survival_regression_stats,
    set_survival_regression_stats,
    survival_regression_model,
    survival_regression_stats,
)

DELTA = 1e-6
CENTRE = dict(
    d=5, n=10_000, eps=1.0, J=5, law="gaussian", times="exponential", censoring="exponential",
    hazard="piecewise_exponential", covariate_law="gaussian",
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
    ("binary-reference", dict(law="binary", covariate_law="reference")),
    ("lognormal-reference", dict(law="lognormal", covariate_law="reference")),
    ("binary-n100000", dict(law="binary", n=100_000)),
    ("binary-n100000-reference", dict(law="binary", n=100_000, covariate_law="reference")),
    ("lognormal-n100000", dict(law="lognormal", n=100_000)),
    ("lognormal-n100000-reference", dict(law="lognormal", n=100_000, covariate_law="reference")),
    ("weibull", dict(times="weibull")),
    ("uniform-censoring", dict(censoring="uniform")),
]
NAIVE_CELLS = ("centre", "eps0.5", "n100000")
#: The seed of the public pilot sample that fixes the interval ends of a cell (by J and the time law).
PILOT_SEED = 2026


#: Public rows of the log-normal law that a release's preprocessing keeps (their marginal shape).
PUBLIC_ROWS = 500


def covariates(rng, law: str, n: int, d: int) -> tuple[np.ndarray, Preprocessing]:
    """n raw rows of d covariates of one law and the public preprocessing that standardises them
    exactly (the law's own mean and s.d.: design constants), declaring each column's kind; for the
    log-normal law it keeps ``PUBLIC_ROWS`` rows of the law (their shape)."""
    if law == "gaussian":
        return rng.normal(size=(n, d)), Preprocessing(
            x_center=np.zeros(d), x_scale=np.ones(d), x_kinds=["continuous"] * d
        )
    if law == "lognormal":
        mean, var = np.exp(0.75**2 / 2), (np.exp(0.75**2) - 1) * np.exp(0.75**2)
        public = np.exp(0.75 * rng.normal(size=(PUBLIC_ROWS, d)))
        return np.exp(0.75 * rng.normal(size=(n, d))), Preprocessing(
            x_center=np.full(d, mean), x_scale=np.full(d, np.sqrt(var)), x_public=public, x_kinds=["continuous"] * d
        )
    p = rng.uniform(0.1, 0.5, size=d)
    raw = (rng.uniform(size=(n, d)) < p).astype(float)
    return raw, Preprocessing(x_center=p, x_scale=np.sqrt(p * (1 - p)), x_kinds=["binary"] * d)


def event_times(rng, X, beta, kind: str) -> np.ndarray:
    rate = np.exp(X @ beta)
    if kind == "exponential":
        return rng.exponential(1.0 / rate)
    return (rng.exponential(1.0, size=rate.size) / rate) ** (1 / 1.5)  # Weibull shape 1.5, PH in x


def draw(rng, cell: dict, edges_only: bool = False):
    """(time, event, raw X, preprocessing, β) of one data set; β acts on the standardised rows."""
    d, n = cell["d"], (500 if edges_only else cell["n"])
    X, prep = covariates(rng, cell["law"], n, d)
    beta = rng.normal(0.0, 0.3, size=d)
    t = event_times(rng, prep.transform_x(X), np.zeros(d) if edges_only else beta, cell["times"])
    if edges_only:  # public pilot: interval ends at quantiles of its event times
        return np.quantile(t, np.linspace(0.1, 0.9, cell["J"]))
    horizon = cell["edges"][-1]
    c = rng.exponential(1 / 0.3, n) if cell["censoring"] == "exponential" else rng.uniform(0, 2 * horizon, n)
    return np.minimum(t, c), t <= c, X, prep, beta


def release(time_, event, X, prep, cell: dict, bound: float, relation: str, rng):
    """The cell's release under one relation (exact statistics, n public, at ε = ∞)."""
    if not np.isfinite(cell["eps"]):
        return survival_regression_stats(time_, event, X, edges=cell["edges"], x_bound=bound, preprocessing=prep)
    return release_survival_regression_stats(
        time_, event, X, edges=cell["edges"], x_bound=bound, epsilon=cell["eps"], delta=DELTA, rng=rng,
        relation=relation, preprocessing=prep,
    )  # fmt: skip


def fitter_for(fitters: dict, cell: dict, stats, relation: str, aware: bool, args) -> Fitter:
    """The compiled model of (d, interval ends, noise-aware, hazard, relation), built on the first
    release that needs it and reused through ``set_survival_regression_stats``."""
    key = (cell["d"], tuple(cell["edges"]), aware, cell["hazard"], relation, cell["covariate_law"])
    if key not in fitters:
        model = survival_regression_model(stats, noise_aware=aware, hazard=cell["hazard"], x_sample=_law(cell))
        fitters[key] = Fitter(model, draws=args.draws, tune=args.tune, seed=args.seed)
    return fitters[key]


def _law(cell: dict):
    """The model's ``x_sample``: the release's reference law, or the Gaussian law."""
    return "public" if cell["covariate_law"] == "reference" else None


def run_cell(name: str, cell: dict, reps: int, args, fitters: dict, rng) -> list[str]:
    """The table rows of one cell: each release's data set is released once under each relation of
    ``args.relations`` (independent noise; replace-one alone at ε = ∞), each release fitted by
    its relation's noise-aware model, and under replace-one in :data:`NAIVE_CELLS` also naively."""
    cell = {**CENTRE, **cell}
    cell["edges"] = draw(np.random.default_rng(PILOT_SEED), cell, edges_only=True)  # the same for every release
    bound = float(np.sqrt(sps.chi2.ppf(0.999, cell["d"])))
    finite = np.isfinite(cell["eps"])
    relations = [r for r in RELATIONS if r in args.relations] if finite else [REPLACE_ONE]
    naive = name in NAIVE_CELLS and finite
    labels = {r: ("noise-aware", "naive") if naive and r == REPLACE_ONE else ("noise-aware",) for r in relations}
    draws = {(r, label): [] for r in relations for label in labels[r]}
    counts, times, divergent = ({r: [] for r in relations} for _ in range(3))
    truths, projected = [], []
    for _ in range(reps):
        time_, event, X, prep, beta = draw(rng, cell)
        projected.append(np.mean(np.linalg.norm(prep.transform_x(X), axis=1) > bound))
        truths.append(beta)
        for relation in relations:
            stats = release(time_, event, X, prep, cell, bound, relation, rng)
            for label in labels[relation]:
                fitter = fitter_for(fitters, cell, stats, relation, label == "noise-aware" and finite, args)
                # a naive model takes the release as exact
                set_survival_regression_stats(stats, fitter.model, x_sample=_law(cell))
                before = fitter.divergent
                draws[relation, label].append(fitter.fit())
                if label == "noise-aware":
                    times[relation].append(fitter.times[-1])
                    divergent[relation].append(fitter.divergent - before)
                    if fitter.last_n is not None:
                        counts[relation].append(fitter.last_n)
    summary = dict(truth=np.array(truths), counts=counts, times=times, divergent=divergent, projected=projected)
    return cell_rows(name, cell, reps, args, draws, summary)


def cell_rows(name: str, cell: dict, reps: int, args, draws: dict, summary: dict) -> list[str]:
    """One markdown row per (relation, model): 50 % / 90 % coverage of β (Monte Carlo s.e.), the
    median 90 % width and, for a noise-aware model, its ratio to replace-one's on the same data
    sets, the coverage of the true n by ``n_people`` (n private), and the relation's noise-aware
    fit time (median), share of divergent draws and the share of rows projected."""

    def covered(c):
        return [f"{c[q][0]:.{args.digits}f} ({c[q][1]:.{args.digits}f})" for q in LEVELS]

    widths = {key: median_width(np.stack(d, axis=1)) for key, d in draws.items()}
    reference = widths.get((REPLACE_ONE, "noise-aware"))
    rows = []
    for (relation, label), d in draws.items():
        cov = covered(coverage(np.stack(d, axis=1), summary["truth"]))  # draws (S, R, d)
        ratio = f"{widths[relation, label] / reference:.2f}" if reference and label == "noise-aware" else "—"
        n_draws = summary["counts"][relation]
        if n_draws:
            n_cov = covered(coverage(np.stack(n_draws, axis=1)[:, :, None], np.full((reps, 1), cell["n"])))
        else:
            n_cov = ["—", "—"]
        div = sum(summary["divergent"][relation]) / (reps * args.draws)
        rows.append(
            f"| {name} | {cell['d']} | {cell['n']} | {cell['eps']:g} | {cell['J']} | {cell['law']} | {cell['times']} | "
            f"{cell['censoring']} | {relation} | {label} | {reps} | {cov[0]} | {cov[1]} | "
            f"{widths[relation, label]:.3f} | {ratio} | {n_cov[0]} | {n_cov[1]} | "
            f"{np.median(summary['times'][relation]):.1f} | {div:.3f} | {np.mean(summary['projected']):.4f} |"
        )
    return rows


def overrides(pairs) -> dict:
    """``--set`` KEY=VALUE pairs as a cell change (d, n and J integers, eps a float)."""
    change = {}
    for pair in pairs or ():
        key, _, value = pair.partition("=")
        if key not in CENTRE or not value:
            raise SystemExit(f"--set: expected KEY=VALUE with KEY one of {sorted(CENTRE)}, got {pair!r}")
        change[key] = int(value) if key in ("d", "n", "J") else float(value) if key == "eps" else value
    return change


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=12)
    parser.add_argument("--tune", type=int, default=500)
    parser.add_argument("--draws", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cells", nargs="+", help="only these cells")
    parser.add_argument("--set", nargs="+", metavar="KEY=VALUE", help="override in every cell run, e.g. d=2 n=5000")
    add_relations_argument(parser)
    parser.add_argument("--quick", action="store_true", help="smoke run: 2 cells, 2 releases, 150 + 150 draws")
    parser.add_argument("--out", help="also write the table as markdown to this file")
    parser.add_argument("--digits", type=int, default=2, help="decimals of the coverages and their s.e.")
    args = parser.parse_args(argv)
    if args.quick:
        args.reps, args.tune, args.draws, args.cells = 2, 150, 150, ["centre", "epsinf"]
    change = overrides(args.set)
    warnings.filterwarnings("ignore")
    logging.getLogger("pymc").setLevel(logging.ERROR)
    rng = np.random.default_rng(args.seed)
    header = [
        f"NUTS 1 × ({args.tune} + {args.draws}), {args.reps} releases per cell, seed {args.seed}"
        + (f", set {' '.join(args.set)}" if args.set else ""),
        "",
        "| cell | d | n | ε | J | covariates | times | censoring | relation | model | reps | cov50 (se) | cov90 (se) "
        "| medw90 | ratio | n cov50 (se) | n cov90 (se) | fit s | div | projected |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    print("\n".join(header), flush=True)
    lines, fitters, start = list(header), {}, time.perf_counter()
    for name, cell in CELLS:
        if args.cells and name not in args.cells:
            continue
        for row in run_cell(name, {**cell, **change}, args.reps, args, fitters, rng):
            print(row, flush=True)
            lines.append(row)
    footer = f"\ntotal {time.perf_counter() - start:.0f} s; load average {os.getloadavg()[0]:.2f}"
    print(footer)
    if args.out:
        with open(args.out, "w") as handle:
            handle.write("\n".join([*lines, footer]) + "\n")


if __name__ == "__main__":
    main()

"""Approximate inference against NUTS on every model kind: the Laplace approximation, PyMC's
default ADVI and ``find_MAP``.

Per model kind (those of :mod:`benchmarks.bench_samplers`): PyMC's NUTS (2 chains × (``--tune``
+ ``--draws``), the reference), :func:`pm_private.laplace_approximation` (2 × ``--draws``) and
``pm.fit()`` with its defaults (mean-field ADVI, 10,000 steps; ``--draws`` × 2 draws of the
approximation).  For each: the largest |mean − NUTS mean| over the model's scalar parameters in
NUTS posterior s.d. (``shift``), the range of sd/NUTS sd (``sd ratio``), the Laplace
approximation's own diagnostic (its importance weights' Pareto k̂), and the wall time of the
call in a process where the model's functions are compiled already (median of ``--repeats``);
and the wall time of ``pm.find_MAP`` likewise.

Run ``python -m benchmarks.bench_approximate`` (about 15 minutes on 2 cores); ``--models``
selects, ``--out`` writes the table as markdown.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from benchmarks.bench_samplers import MODELS, build


def _moments(posterior) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    return {
        name: (
            np.asarray(posterior[name].mean(("chain", "draw"))).ravel(),
            np.asarray(posterior[name].std(("chain", "draw"))).ravel(),
        )
        for name in posterior.data_vars
    }


def compare(result, reference) -> tuple[float, float, float]:
    shifts, ratios = [], []
    for name, (mean, sd) in reference.items():
        if name not in result:
            continue
        keep = sd > 0
        shifts.append(np.abs(result[name][0][keep] - mean[keep]) / sd[keep])
        ratios.append(result[name][1][keep] / sd[keep])
    shifts, ratios = np.concatenate(shifts), np.concatenate(ratios)
    return float(shifts.max()), float(ratios.min()), float(ratios.max())


def timed(fn, repeats: int):
    times, out = [], None
    for _ in range(repeats + 1):  # the first call compiles
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return out, float(np.median(times[1:]))


def run(name: str, args) -> list[dict]:
    import pymc as pm

    from pm_private import laplace_approximation

    model = build(name)
    with model:
        nuts = pm.sample(
            args.draws, tune=args.tune, chains=2, cores=1, random_seed=0, progressbar=False, nuts_sampler="pymc"
        )
    reference = _moments(nuts["posterior"])
    rows = []
    with model:
        laplace, seconds = timed(lambda: laplace_approximation(draws=args.draws, random_seed=1), args.repeats)
        rows.append(
            {
                "model": name,
                "method": f"laplace_approximation (k̂ {laplace['posterior'].attrs['pareto_k']:.2f})",
                "seconds": seconds,
                "moments": _moments(laplace["posterior"]),
            }
        )
        advi, seconds = timed(lambda: pm.fit(progressbar=False, random_seed=2).sample(2 * args.draws, random_seed=3), 1)
        rows.append(
            {
                "model": name,
                "method": "pm.fit() (ADVI, 10k steps)",
                "seconds": seconds,
                "moments": _moments(advi["posterior"]),
            }
        )
        _, seconds = timed(lambda: pm.find_MAP(progressbar=False), args.repeats)
        rows.append({"model": name, "method": "pm.find_MAP", "seconds": seconds, "moments": None})
    for row in rows:
        moments = row.pop("moments")
        row["shift"], row["sd_low"], row["sd_high"] = compare(moments, reference) if moments else (np.nan,) * 3
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", choices=MODELS, default=list(MODELS))
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--tune", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    lines = ["| model | method | shift (NUTS sd) | sd / NUTS sd | seconds (compiled) |", "|---|---|---|---|---|"]
    print("\n".join(lines), flush=True)
    for name in args.models:
        for row in run(name, args):
            sd = "–" if np.isnan(row["sd_low"]) else f"{row['sd_low']:.2f}–{row['sd_high']:.2f}"
            shift = "–" if np.isnan(row["shift"]) else f"{row['shift']:.2f}"
            line = f"| {row['model']} | {row['method']} | {shift} | {sd} | {row['seconds']:.2f} |"
            lines.append(line)
            print(line, flush=True)
    if args.out:
        with open(args.out, "w") as handle:
            handle.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()

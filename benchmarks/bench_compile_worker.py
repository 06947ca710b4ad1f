"""Time to a first draw on empty caches with and without the compile worker.

Each run is a new process on fresh PyTensor and Numba cache folders: it builds one of the first-fit
benchmark's models (``benchmarks.bench_first_fit``) and samples one chain of 5 + 5 draws with
PyMC's NUTS; the figure is the wall time from the built model to the first draw.  The two arms
(``PM_PRIVATE_COMPILE_WORKER`` 0 and 1) alternate, so that drifting load falls on both alike.

    python -m benchmarks.bench_compile_worker --models survival_regression poisson_model --repeats 5
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def child(name: str) -> dict:
    """Build ``name`` and sample to its first draw in this process: the wall times."""
    import logging
    import warnings

    import pymc as pm

    import pm_private  # noqa: F401

    from .bench_first_fit import ENTRIES

    warnings.filterwarnings("ignore")
    logging.getLogger("pm_private").setLevel(logging.WARNING)
    logging.getLogger("pymc").setLevel(logging.WARNING)
    model = ENTRIES[name][0](0)[0]
    built = time.perf_counter()
    first = []

    def callback(trace, draw):
        if not first:
            first.append(time.perf_counter())

    with model:
        pm.sample(
            draws=5, tune=5, chains=1, cores=1, nuts_sampler="pymc", progressbar=False, random_seed=1, callback=callback
        )
    return {"first_draw": first[0] - built}


def run(name: str, worker: bool) -> float | None:
    """One run of ``name`` in a new process on fresh caches: seconds to the first draw."""
    with tempfile.TemporaryDirectory(prefix="pm-worker-bench-") as folder:
        env = dict(os.environ)
        env["PM_PRIVATE_COMPILE_WORKER"] = "1" if worker else "0"
        env["PYTENSOR_FLAGS"] = f"base_compiledir={folder}/pytensor"
        env["NUMBA_CACHE_DIR"] = f"{folder}/numba"
        done = subprocess.run(
            [sys.executable, "-m", "benchmarks.bench_compile_worker", "--child", name],
            capture_output=True,
            text=True,
            env=env,
        )
        time.sleep(5)  # a worker still writing finishes before its folder goes
        lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
        return json.loads(lines[-1])["first_draw"] if done.returncode == 0 and lines else None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", default=["survival_regression", "poisson_model"])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child)))
        return
    print(f"load before: {os.getloadavg()[0]:.2f}", flush=True)
    times = {(name, arm): [] for name in args.models for arm in (False, True)}
    for repeat in range(args.repeats):
        for name in args.models:
            for arm in (False, True) if repeat % 2 == 0 else (True, False):
                seconds = run(name, arm)
                times[name, arm].append(seconds)
                print(f"repeat {repeat}: {name}, worker {'on' if arm else 'off'}: {seconds}", flush=True)
    print("| model | without the worker s, median (range) | with it s, median (range) |")
    print("|---|---|---|")
    for name in args.models:
        cells = []
        for arm in (False, True):
            ok = [t for t in times[name, arm] if t is not None]
            cells.append(f"{statistics.median(ok):.1f} ({min(ok):.1f}–{max(ok):.1f})" if ok else "failed")
        print(f"| {name} | {cells[0]} | {cells[1]} |")
    print(f"load after: {os.getloadavg()[0]:.2f}", flush=True)


if __name__ == "__main__":
    main()

"""Compilation of every model kind for PyMC's NUTS and for nutpie: on an empty cache and again
in a new process.

For each model kind (those of :mod:`benchmarks.bench_samplers`) and sampler, two new processes
share a fresh PyTensor compile directory (``PYTENSOR_FLAGS=base_compiledir=…``): the first
compiles on the empty cache, the second finds the first's cache.  Each process reports the wall
time to build the model and the time from the compile call to a first log-density and gradient:

* ``pymc``: ``model.logp_dlogp_function()`` and one evaluation (what ``pm.sample`` compiles
  before its first draw);
* ``nutpie``: ``nutpie.compile_pymc_model(model)`` (what ``pm.sample(nuts_sampler="nutpie")`` runs
  on every call).

The goals: at most 30 s on an empty cache, at most 3 s before sampling starts in a new process.
Run ``python -m benchmarks.bench_compile`` (``--models``, ``--samplers``, ``--out``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from benchmarks.bench_samplers import MODELS

SAMPLERS = ("pymc", "nutpie")


def child(name: str, sampler: str) -> dict:
    import logging
    import warnings

    import numpy as np

    warnings.filterwarnings("ignore")
    logging.getLogger("pm_private").setLevel(logging.WARNING)
    start = time.perf_counter()
    from benchmarks.bench_samplers import build

    model = build(name)
    built = time.perf_counter()
    if sampler == "pymc":
        fn = model.logp_dlogp_function(ravel_inputs=True)
        fn.set_extra_values({})
        point = model.initial_point()
        fn(np.concatenate([np.ravel(point[v.name]) for v in fn._grad_vars]))
    else:
        import nutpie

        nutpie.compile_pymc_model(model)
    done = time.perf_counter()
    return {"build": built - start, "compile": done - built}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", choices=MODELS, default=list(MODELS))
    parser.add_argument("--samplers", nargs="+", choices=SAMPLERS, default=list(SAMPLERS))
    parser.add_argument("--child", nargs=2, metavar=("MODEL", "SAMPLER"))
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(*args.child)))
        return
    lines = [
        "| model | sampler | empty cache: build s | compile s | new process: build s | compile s |",
        "|---|---|---|---|---|---|",
    ]
    print("\n".join(lines), flush=True)
    for name in args.models:
        for sampler in args.samplers:
            with tempfile.TemporaryDirectory() as cache:
                env = dict(os.environ, PYTENSOR_FLAGS=f"base_compiledir={cache}")
                runs = []
                for _ in range(2):
                    done = subprocess.run(
                        [sys.executable, "-m", "benchmarks.bench_compile", "--child", name, sampler],
                        capture_output=True,
                        text=True,
                        env=env,
                        check=False,
                    )
                    if done.returncode != 0:
                        runs.append(None)
                        print(done.stderr[-2000:], file=sys.stderr)
                        continue
                    runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
            cells = [f"{r['build']:.1f} | {r['compile']:.1f}" if r else "failed | failed" for r in runs]
            line = f"| {name} | {sampler} | {cells[0]} | {cells[1]} |"
            lines.append(line)
            print(line, flush=True)
    if args.out:
        with open(args.out, "w") as handle:
            handle.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()

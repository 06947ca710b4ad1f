"""Wall time of the CI's test command on a fresh clone with empty compile caches, and where it goes.

``.ci/run`` runs ``.venv/bin/python -m pytest -n 2`` on a fresh clone, where PyTensor's and Numba's
caches are empty.  This script clones the repository's committed HEAD into a temporary folder,
points PyTensor and Numba at new cache folders, runs the same command there (with ``-v`` and
``--durations=0`` added, which change nothing but the report) and prints:

* the wall time and the machine load (``os.getloadavg``) before and after, since the machine may
  be shared and a loaded machine stretches every number;
* each worker's busy time (the sum of its tests' setup, call and teardown) and its share of the
  wall time: two workers ending far apart mean the scheduling, not the work, sets the wall time;
* the slowest tests (``--top``).

The clone has no virtual environment of its own: the repository's ``.venv`` Python runs it, and
Python finds the clone's ``pm_private`` first (the working folder comes first on ``sys.path``).

    .venv/bin/python -m benchmarks.bench_ci_time [--workers 2] [--top 30] [--out ci_time.json]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: ``[gw0] [ 12%] PASSED <file>::<test>`` (pytest-xdist's verbose line).
WORKER_LINE = re.compile(r"^\[(gw\d+)\] \[\s*\d+%\] \w+ (.+?)\s*$")
#: ``12.34s call     <file>::<test>`` (pytest's durations report).
DURATION_LINE = re.compile(r"^(\d+\.\d+)s (setup|call|teardown)\s+(.+?)\s*$")


def run_suite(workers: int, python: Path) -> tuple[float, str, tuple, tuple]:
    """Clone HEAD, run the test command with fresh caches; (wall s, output, load before, after)."""
    with tempfile.TemporaryDirectory(prefix="pm-private-ci-") as folder:
        clone = Path(folder) / "clone"
        subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
        env = dict(os.environ)
        env["PYTENSOR_FLAGS"] = f"base_compiledir={Path(folder) / 'pytensor'}"
        env["NUMBA_CACHE_DIR"] = str(Path(folder) / "numba")
        command = [str(python), "-m", "pytest", "-n", str(workers), "-v", "--durations=0"]
        load_before = os.getloadavg()
        start = time.perf_counter()
        result = subprocess.run(command, cwd=clone, env=env, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - start
        return wall, result.stdout + result.stderr, load_before, os.getloadavg()


def summarise(output: str) -> tuple[dict, list]:
    """Busy seconds per worker and (seconds, phase, test) of every test phase, slowest first."""
    worker_of = {m.group(2): m.group(1) for m in map(WORKER_LINE.match, output.splitlines()) if m}
    phases = [(float(m.group(1)), m.group(2), m.group(3)) for m in map(DURATION_LINE.match, output.splitlines()) if m]
    busy: dict = defaultdict(float)
    for seconds, _, test in phases:
        busy[worker_of.get(test, "?")] += seconds
    return dict(sorted(busy.items())), sorted(phases, reverse=True)


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark and print (and optionally save) its report.

    Parameters
    ----------
    argv : list of str, optional
        Command-line arguments (default: ``sys.argv[1:]``).
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--python", type=Path, default=ROOT / ".venv" / "bin" / "python")
    parser.add_argument("--out", type=Path, help="write the report as JSON here")
    args = parser.parse_args(argv)

    wall, output, before, after = run_suite(args.workers, args.python)
    busy, phases = summarise(output)
    summary = [line for line in output.splitlines() if re.match(r"^=+ .*(passed|failed|error)", line)]
    print(f"wall {wall:.0f} s; load (1, 5, 15 min) before {before}, after {after}")
    print(summary[-1] if summary else output[-2000:])
    for worker, seconds in busy.items():
        print(f"{worker}: busy {seconds:.0f} s ({seconds / wall:.0%} of the wall time)")
    print(f"slowest {args.top}:")
    for seconds, phase, test in phases[: args.top]:
        print(f"{seconds:8.2f} s  {phase:8s} {test}")
    if args.out:
        report = {"wall_s": wall, "load_before": before, "load_after": after, "busy_s": busy, "phases": phases}
        args.out.write_text(json.dumps(report, indent=1))
    sys.exit(0 if summary and "failed" not in summary[-1] else 1)


if __name__ == "__main__":
    main()

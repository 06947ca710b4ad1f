"""Cost of the persistent ledger per release, next to the in-memory accountant.

Each configuration makes ``--releases`` releases against one accountant, ``--runs`` times
(fresh accountant and, for the file, a fresh ledger file each run), and reports the median
time per release.  Two workloads:

* ``charge`` — the reservation protocol alone (reserve, an empty body, commit): the pure
  bookkeeping cost;
* ``linear_stats`` — :func:`pm_private.release_linear_stats` on n × d data with the secure
  OpenDP noise (Honkela et al. 2018): the cost a data holder sees;
* ``tight`` — the reservation protocol for releases that state the Gaussian noise of
  (2/releases, 10⁻⁹) each, so that from the middle of the run on the basic total exceeds the
  budget (ε = 1, δ = 10⁻⁵) and every reservation composes the history through privacy-loss
  distributions (caches cleared before each run).

The file ledger is an SQLite database in WAL mode; each reservation is flushed to disk
(fsync) before the noise is drawn, the commit is not (a lost commit leaves the spend counted),
so the overhead is one fsync of the disk plus the bookkeeping; ``durable=False`` (no fsync:
survives kill -9, not a power loss) shows the bookkeeping alone, and the median latency of a
plain 4 KiB write + fsync in the same folder is printed for reference.  Ledger files go in
``--dir`` (default: a temporary folder; put it on the disk the ledger will live on).  Goal:
ledger overhead under 5 ms per release.

    .venv/bin/python benchmarks/bench_ledger.py [--releases 100] [--runs 7] [--n 1000] [--d 10]
        [--dir PATH]
"""

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from pm_private import PrivacyAccountant, release_linear_stats
from pm_private.privacy import budget
from pm_private.privacy.primitives import gaussian_noise_event
from pm_private.privacy.release import release_guard


def _charge_only(acct, epsilon, data):
    with release_guard(acct, "bench", epsilon):
        pass


def _suff_stats(acct, epsilon, data):
    X, y = data
    release_linear_stats(X, y, noise="laplace", epsilon=epsilon, x_bound=1.0, y_bound=1.0, accountant=acct)


#: δ of each release of the ``tight`` workload.
_TIGHT_DELTA = 1e-9


def _tight(acct, epsilon, data):
    noise = (gaussian_noise_event(1, 1.0, 4 * epsilon, _TIGHT_DELTA),)  # the noise that (4ε, δ) calls for
    with release_guard(acct, "bench", 4 * epsilon, _TIGHT_DELTA, noise=noise):
        pass


WORKLOADS = {"charge": _charge_only, "linear_stats": _suff_stats, "tight": _tight}


def time_per_release(workload, make_accountant, releases, runs, data) -> float:
    """Median over ``runs`` of the wall time per release, in seconds."""
    times = []
    for run in range(runs):
        acct = make_accountant(f"{workload.__name__}{run}")
        budget._event_pld.cache_clear()
        budget._RECENT.clear()
        epsilon = 1.0 / (2 * releases)
        start = time.perf_counter()
        for _ in range(releases):
            workload(acct, epsilon, data)
        times.append((time.perf_counter() - start) / releases)
        assert len(acct.ledger) == releases
        acct.close()
    return statistics.median(times)


def fsync_latency(folder: Path, count: int = 50) -> float:
    """Median seconds of a 4 KiB write + fsync in ``folder``."""
    times = []
    descriptor = os.open(folder / "fsync.probe", os.O_WRONLY | os.O_CREAT)
    try:
        for _ in range(count):
            os.write(descriptor, b"x" * 4096)
            start = time.perf_counter()
            os.fsync(descriptor)
            times.append(time.perf_counter() - start)
    finally:
        os.close(descriptor)
    return statistics.median(times)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--releases", type=int, default=100, help="releases per run (default 100)")
    parser.add_argument("--runs", type=int, default=7, help="runs; the median is reported (default 7, at least 5)")
    parser.add_argument("--n", type=int, default=1000, help="records for linear_stats (default 1000)")
    parser.add_argument("--d", type=int, default=10, help="features for linear_stats (default 10)")
    parser.add_argument("--dir", type=Path, help="folder for the ledger files (default: a temporary one)")
    args = parser.parse_args(argv)
    if args.runs < 5 or args.releases < 1 or args.n < 1 or args.d < 1:
        parser.error("--runs must be ≥ 5 and --releases, --n, --d ≥ 1")
    rng = np.random.default_rng(0)
    data = (rng.uniform(-1, 1, (args.n, args.d)), rng.uniform(-1, 1, args.n))
    _suff_stats(PrivacyAccountant(1.0), 0.5, data)  # warm up OpenDP

    with tempfile.TemporaryDirectory(dir=args.dir) as folder:
        accountants = {
            "memory": lambda run: PrivacyAccountant(1.0, 1e-5),
            "file": lambda run: PrivacyAccountant.open(Path(folder) / f"run{run}.ledger", 1.0, 1e-5),
            "file, durable=False": lambda run: PrivacyAccountant.open(
                Path(folder) / f"nosync{run}.ledger", 1.0, 1e-5, durable=False
            ),
        }
        print(f"median of {args.runs} runs × {args.releases} releases; linear_stats on n = {args.n}, d = {args.d}")
        print(f"plain write + fsync in {folder}: {1e3 * fsync_latency(Path(folder)):.3f} ms (median)")
        print(f"{'workload':<11} {'accountant':<20} {'ms/release':>11} {'ratio to memory':>16} {'overhead ms':>12}")
        for name, workload in WORKLOADS.items():
            results = {
                kind: time_per_release(workload, make, args.releases, args.runs, data)
                for kind, make in accountants.items()
            }
            base = results["memory"]
            for kind, seconds in results.items():
                print(
                    f"{name:<11} {kind:<20} {1e3 * seconds:>11.3f} {seconds / base:>16.2f} {1e3 * (seconds - base):>12.3f}"
                )


if __name__ == "__main__":
    main()

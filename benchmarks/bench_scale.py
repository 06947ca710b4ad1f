"""Private sufficient statistics (Honkela et al. 2018) at scale: NumPy in memory vs Dask from Parquet.

For n = 10⁶ … 5·10⁷ rows of d = 16 features and a response, written once as Parquet files of
``--file-rows`` rows (incrementally with pyarrow, never the full array in memory), each run
times ``release_linear_stats`` (clipped, secure noise) and ``linear_stats`` (exact) in a fresh
process and samples the peak resident memory of that process and all its children:

* ``numpy``: the files loaded into one in-memory array first (load not timed; only up to
  ``--memory-max-n`` rows);
* ``threads``: ``read_parquet_columns`` (one partition per row group) + Dask's threaded
  scheduler (2 threads), out of core;
* ``processes``: the same on a ``distributed.LocalCluster`` of 2 single-threaded worker
  processes (cluster start not timed).

The exact statistics of every run must agree with the NumPy ones (or, beyond
``--memory-max-n``, with the threaded run) to summation tolerance.  The files are read once
before the runs so that all of them find them in the page cache (a cold read measures the
disk); the first Dask computation on the workers (imports) is not timed.  The slope of release time
against n (least squares) tells whether the cost is linear.

    .venv/bin/python benchmarks/bench_scale.py [--sizes 1e6 5e6 2e7 5e7] [--max-n 5e7]
        [--dir /tmp/pm_private_scale] [--modes numpy threads processes]

Goals: 5·10⁷ × 16 from Parquet with peak RSS < 2 GB and ≥ 50 % of the in-memory rows/s.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

D = 16
FEATURES = [f"x{j}" for j in range(D)]
BOUNDS = {"x_bound": 2.0, "y_bound": 4.0}


def file_path(directory: Path, k: int) -> Path:
    return directory / f"part-{k:05d}.parquet"


def write_files(directory: Path, count: int, rows: int) -> None:
    """Files 0 … count−1 of ``rows`` rows each (existing ones are kept): X ~ N(0, 1), y = Xβ + ε."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    directory.mkdir(parents=True, exist_ok=True)
    beta = np.linspace(-1, 1, D)
    for k in range(count):
        path = file_path(directory, k)
        if path.exists():
            continue
        rng = np.random.default_rng(k)
        X = rng.standard_normal((rows, D))
        y = X @ beta + rng.standard_normal(rows)
        table = pa.table({**{name: X[:, j] for j, name in enumerate(FEATURES)}, "y": y})
        pq.write_table(table, path.with_suffix(".tmp"), row_group_size=rows // 4)
        path.with_suffix(".tmp").rename(path)


def run_one(mode: str, files: list[str]) -> dict:
    """One measurement in this process (called in a fresh subprocess by :func:`main`)."""
    from pm_private import linear_stats, release_linear_stats

    cluster = client = None
    if mode == "numpy":
        import pyarrow.parquet as pq

        n = sum(pq.ParquetFile(f).metadata.num_rows for f in files)
        X, y = np.empty((n, D)), np.empty(n)
        start = 0
        for f in files:
            table = pq.read_table(f)
            stop = start + table.num_rows
            for j, name in enumerate(FEATURES):
                X[start:stop, j] = table.column(name).to_numpy()
            y[start:stop] = table.column("y").to_numpy()
            start = stop
            del table
    else:
        import dask

        from pm_private._engine.parquet import read_parquet_columns

        X, y = read_parquet_columns(files, features=FEATURES, target="y")
        if mode == "threads":
            dask.config.set(scheduler="threads", num_workers=2)
        else:
            from distributed import Client, LocalCluster

            cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
            client = Client(cluster)
        linear_stats(*read_parquet_columns(files[:1], features=FEATURES, target="y"))  # warm-up: imports on the workers
    release_linear_stats(
        np.ones((2, D)), np.ones(2), noise="laplace", epsilon=1.0, **BOUNDS
    )  # warm-up: OpenDP's first call
    start = time.perf_counter()
    release = release_linear_stats(X, y, noise="laplace", epsilon=1.0, **BOUNDS)
    release_s = time.perf_counter() - start
    start = time.perf_counter()
    exact = linear_stats(X, y)
    exact_s = time.perf_counter() - start
    if client is not None:
        client.close()
        cluster.close()
    return {
        "n": exact.n,
        "release_n": release.n,
        "release_s": release_s,
        "exact_s": exact_s,
        "xx": exact.xx.tolist(),
        "xy": exact.xy.tolist(),
        "yy": exact.yy,
    }


def measure(mode: str, files: list[str]) -> dict:
    """Run :func:`run_one` in a fresh process; sample the RSS of its process tree every 20 ms."""
    import psutil

    command = [sys.executable, __file__, "--run", mode, "--files", *files]
    proc = subprocess.Popen(
        command, stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])}
    )
    root = psutil.Process(proc.pid)
    peak = 0
    while proc.poll() is None:
        try:
            tree = [root, *root.children(recursive=True)]
            peak = max(peak, sum(p.memory_info().rss for p in tree if p.is_running()))
        except psutil.Error:
            pass
        time.sleep(0.02)
    out = proc.stdout.read()
    if proc.returncode:
        raise RuntimeError(f"{mode} run failed ({proc.returncode})")
    result = json.loads(out.strip().splitlines()[-1])
    result["peak_rss"] = peak
    return result


def relative_difference(a: dict, b: dict) -> float:
    diffs = [
        np.abs(np.subtract(a[key], b[key])).max() / max(np.abs(b[key]).max(), 1e-300) for key in ("xx", "xy", "yy")
    ]
    return float(max(diffs))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=float, nargs="+", default=[1e6, 5e6, 2e7, 5e7])
    parser.add_argument("--max-n", type=float, default=5e7, help="largest n to run (what fits on disk and in time)")
    parser.add_argument("--memory-max-n", type=float, default=1e7, help="largest n loaded in memory for the numpy runs")
    parser.add_argument("--file-rows", type=int, default=1_000_000)
    parser.add_argument("--dir", default="/tmp/pm_private_scale")
    parser.add_argument("--modes", nargs="+", default=["numpy", "threads", "processes"])
    parser.add_argument("--run", help=argparse.SUPPRESS)
    parser.add_argument("--files", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run:
        print(json.dumps(run_one(args.run, args.files)))
        return

    directory = Path(args.dir)
    sizes = sorted(int(s) for s in args.sizes if s <= args.max_n)
    count = -(-max(sizes) // args.file_rows)
    directory.mkdir(parents=True, exist_ok=True)
    missing = sum(not file_path(directory, k).exists() for k in range(count))
    need = missing * args.file_rows * (D + 1) * 8 * 1.1
    free = shutil.disk_usage(directory).free
    if need > 0.8 * free:
        raise SystemExit(
            f"{need / 1e9:.1f} GB of Parquet needed, {free / 1e9:.1f} GB free in {directory}: lower --max-n"
        )
    start = time.perf_counter()
    write_files(directory, count, args.file_rows)
    print(
        f"Parquet: {count} files of {args.file_rows:,} rows in {directory} ({time.perf_counter() - start:.0f} s to write {missing})"
    )
    for k in range(count):  # warm the page cache: every run reads the files from memory, not the disk
        with open(file_path(directory, k), "rb") as f:
            while f.read(1 << 24):
                pass
    print(f"load average {os.getloadavg()[0]:.1f} at start, {os.cpu_count()} CPUs; Parquet files in the page cache")

    rows = []
    for n in sizes:
        files = [str(file_path(directory, k)) for k in range(-(-n // args.file_rows))]
        reference = None
        for mode in args.modes:
            if mode == "numpy" and n > args.memory_max_n:
                continue
            result = measure(mode, files)
            reference = reference or result
            result.update(mode=mode, load=os.getloadavg()[0], diff=relative_difference(result, reference))
            rows.append(result)
            print(
                f"n={result['n']:>11,} {mode:<10} release {result['release_s']:7.2f} s "
                f"{result['n'] / result['release_s'] / 1e6:6.2f} M rows/s  exact {result['exact_s']:7.2f} s  "
                f"peak RSS {result['peak_rss'] / 1e9:5.2f} GB  Δ {result['diff']:.1e}  load {result['load']:.1f}",
                flush=True,
            )

    print(
        f"\n{'n':>11} {'mode':<10}{'release s':>10}{'M rows/s':>10}{'exact s':>9}{'M rows/s':>10}{'peak RSS GB':>12}{'rel. Δ exact':>14}{'load':>6}"
    )
    for r in rows:
        print(
            f"{r['n']:>11,} {r['mode']:<10}{r['release_s']:>10.2f}{r['n'] / r['release_s'] / 1e6:>10.2f}"
            f"{r['exact_s']:>9.2f}{r['n'] / r['exact_s'] / 1e6:>10.2f}{r['peak_rss'] / 1e9:>12.2f}{r['diff']:>14.1e}{r['load']:>6.1f}"
        )
    in_memory = [r["n"] / r["release_s"] for r in rows if r["mode"] == "numpy"]
    for mode in ("threads", "processes"):
        runs = [r for r in rows if r["mode"] == mode]
        if len(runs) >= 2:
            n = np.array([r["n"] for r in runs], dtype=float)
            t = np.array([r["release_s"] for r in runs])
            slope, intercept = np.polyfit(n, t, 1)
            fit = slope * n + intercept
            r2 = 1 - ((t - fit) ** 2).sum() / max(((t - t.mean()) ** 2).sum(), 1e-300)
            print(f"{mode}: {slope * 1e6:.3f} s per 10⁶ rows + {intercept:.2f} s (R² {r2:.3f})", end="")
            if in_memory:
                print(
                    f"; largest n at {runs[-1]['n'] / runs[-1]['release_s'] / np.median(in_memory):.0%} of the in-memory rows/s",
                    end="",
                )
            print()


if __name__ == "__main__":
    main()

"""Private releases on Dask collections: one pass per partition where it lives, a tree sum, noise on the client.

Imported only when a release function is given a Dask collection, so pm_private imports and
runs without Dask.  The pattern of every function here (Honkela et al. 2018 for the linear
statistics, Nguyên & Hui 2017a for the discrete-time sums):

1. each partition is validated, clipped and reduced to its sums by the scheduler's workers
   (threads, processes or a cluster: whatever ``dask.compute`` uses by default, e.g. an
   active ``distributed.Client``); no row leaves its worker;
2. the partition sums are added in a tree (fan-in ``FAN_IN`` = 8) and only the total, of size
   independent of n, reaches the client;
3. the caller (the release function) draws the noise **once**, on the client, from its
   secure source and charges its accountant.  Nothing here draws noise or touches an
   accountant, and a bad partition raises on the client before anything is spent.

:func:`read_parquet_columns` turns a Parquet data set into such collections without reading
any row on the client.
"""

from __future__ import annotations

from typing import NamedTuple

import dask
import numpy as np
from dask import delayed

from .linear.suffstats import NonFiniteRow, _accumulate, single_threaded_blas
from .survival.discrete_data import BasisDimensions

__all__ = ["read_parquet_columns"]

#: Partial results added by one task of the tree reduction.
FAN_IN = 8


# ---------------------------------------------------------------------------------------------
# Partitions
# ---------------------------------------------------------------------------------------------


def _kind(obj) -> str | None:
    module = type(obj).__module__
    if module.startswith("dask.array"):
        return "array"
    if module.startswith(("dask.dataframe", "dask_expr")):
        return "frame"
    return None


def column_count(X) -> int:
    """d of a Dask collection of covariates (known without computing anything)."""
    kind = _kind(X)
    if kind is None:
        raise TypeError(f"X must be a dask.array or dask.dataframe collection, got {type(X).__name__}")
    if kind == "array":
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D (n records × d features), got {X.ndim} dimension(s)")
        d = X.shape[1]
    else:
        if X.ndim != 2:
            raise ValueError("X must be a dask DataFrame (one column per feature), got a Series")
        d = len(X.columns)
    if not d:
        raise ValueError("X must have at least one column")
    return int(d)


def _aligned_blocks(columns: dict):
    """Delayed blocks of several collections with the same rows, one tuple per partition, in row order.

    dask arrays are rechunked to the row chunks of the first (and to one chunk across
    columns), as :func:`read_parquet_columns` returns them; dask data frames and series must
    share their partitions (columns of one dask DataFrame) and are read as one frame.
    """
    names = list(columns)
    kinds = {_kind(columns[name]) for name in names}
    if len(kinds) != 1 or None in kinds:
        raise TypeError(f"{', '.join(names)} must all be dask arrays or all dask data frames/series")
    if kinds == {"array"}:
        first = columns[names[0]]
        first = first.rechunk({1: -1}) if first.ndim == 2 else first
        rows = first.chunks[0]
        blocks = [first.to_delayed().ravel()]
        for name in names[1:]:
            array = columns[name]
            if array.ndim == 2 and array.shape[1] == 1:
                array = array[:, 0]
            if array.ndim != 1:
                raise ValueError(f"{name} must be 1-D, got {array.ndim} dimensions")
            if not (np.isnan(array.shape[0]) or np.isnan(first.shape[0])) and array.shape[0] != first.shape[0]:
                raise ValueError(
                    f"{name} must have as many rows as {names[0]}, got {array.shape[0]} and {first.shape[0]}"
                )
            if array.chunks[0] != rows:
                if any(np.isnan(rows)) or any(np.isnan(array.chunks[0])):
                    raise ValueError(f"{name} must be chunked along the rows as {names[0]} (unknown chunk sizes)")
                array = array.rechunk((rows,))
            blocks.append(array.to_delayed().ravel())
        return list(zip(*blocks, strict=True)), None
    frame = columns[names[0]]
    if frame.ndim == 1:
        frame = frame.to_frame()
    width = len(frame.columns)
    extra = {}
    for k, name in enumerate(names[1:]):
        series = columns[name]
        if series.ndim != 1:
            raise ValueError(f"{name} must be a dask Series (one column)")
        extra[f"__pm_private_{k}__"] = series
    if extra:
        try:
            frame = frame.assign(**extra)
        except (ValueError, NotImplementedError) as error:  # unaligned partitions of unknown divisions
            raise ValueError(
                f"{', '.join(names[1:])} must be partitioned like {names[0]} (columns of one dask DataFrame): {error}"
            ) from None
    return [(part,) for part in frame.to_delayed()], width


def _split(block, width: int | None, count: int):
    """(X, y, …) numpy arrays of one partition (a tuple of array blocks, or one frame of all columns)."""
    if width is None:
        return tuple(np.asarray(part) for part in block)
    (frame,) = block
    X = frame.iloc[:, :width].to_numpy(dtype=np.float64)
    return (X, *(frame.iloc[:, width + k].to_numpy() for k in range(count - 1)))


def _tree(parts: list, combine):
    """Add delayed partial results in a tree of fan-in :data:`FAN_IN`, keeping their row order."""
    if not parts:
        raise ValueError("the collection has no partitions")
    while len(parts) > 1:
        parts = [delayed(combine, pure=True)(*parts[i : i + FAN_IN]) for i in range(0, len(parts), FAN_IN)]
    return parts[0]


# ---------------------------------------------------------------------------------------------
# Sufficient statistics of linear regression (Honkela et al. 2018)
# ---------------------------------------------------------------------------------------------


class _Bad(NamedTuple):
    """Where the first non-finite value is: array name, partition, row in it, rows before it."""

    name: str
    partition: int
    row: int
    offset: int


class _Sums(NamedTuple):
    n: int
    xx: np.ndarray | None
    xy: np.ndarray | None
    yy: float
    bad: _Bad | None


def _partition_suff_stats(block, width, d, x_bound, y_bound, partition) -> _Sums:
    """Check, clip and reduce one partition to (n, Sxx, Sxy, Syy), on its worker."""
    X, y = _split(block, width, 2)
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] != d:
        raise ValueError(f"partition {partition} of X has shape {X.shape}, expected (rows, {d})")
    y = np.asarray(y, dtype=np.float64)
    if y.shape != (X.shape[0],):
        raise ValueError(f"partition {partition} of y has shape {y.shape}, expected ({X.shape[0]},) as X")
    n = X.shape[0]
    if n == 0:
        return _Sums(0, None, None, 0.0, None)
    bad_y = ~np.isfinite(y)
    if bad_y.any():
        row = int(np.flatnonzero(bad_y)[0])
        return _Sums(n, None, None, 0.0, _Bad("y", partition, row, row))
    try:
        xx, xy, yy = _accumulate(X, y, x_bound, y_bound, workers=1)
    except NonFiniteRow as error:
        return _Sums(n, None, None, 0.0, _Bad("X", partition, error.row, error.row))
    return _Sums(n, xx, xy, yy, None)


def _add_suff_stats(*parts: _Sums) -> _Sums:
    """Sum of partial statistics in row order; the first bad part (and the rows before it) wins."""
    total = parts[0]
    for part in parts[1:]:
        if total.bad is not None:
            break
        if part.bad is not None:
            total = _Sums(total.n + part.n, None, None, 0.0, part.bad._replace(offset=total.n + part.bad.offset))
        elif part.xx is None:
            total = total._replace(n=total.n + part.n)
        elif total.xx is None:
            total = part._replace(n=total.n + part.n)
        else:
            total = _Sums(total.n + part.n, total.xx + part.xx, total.xy + part.xy, total.yy + part.yy, None)
    return total


def _run_suff_stats(block, width, d, x_bound, y_bound, partition) -> _Sums:
    with single_threaded_blas():  # one BLAS thread per task (worker processes): one task per core
        return _partition_suff_stats(block, width, d, x_bound, y_bound, partition)


def partitioned_suff_stats(X, y, x_bound: float | None, y_bound: float | None):
    """(Sxx, Sxy, Syy, n) of Dask collections X (n, d) and y (n,), clipped when bounds are given.

    Each partition is checked for NaN/inf, clipped to [−Bx, Bx] and [−By, By] and reduced by
    the kernel of :func:`pm_private.linear.suff_stats` on its worker; the (d×d, d, 1) sums are
    added in a tree and returned to the client.  Raises ValueError naming the first bad
    partition and row.  No noise is drawn here.
    """
    d = column_count(X)
    blocks, width = _aligned_blocks({"X": X, "y": y})
    parts = [
        delayed(_run_suff_stats, pure=True)(block, width, d, x_bound, y_bound, k) for k, block in enumerate(blocks)
    ]
    with single_threaded_blas():  # for the local schedulers, whose threads are this process's
        (total,) = dask.compute(_tree(parts, _add_suff_stats))
    if total.bad is not None:
        bad = total.bad
        raise ValueError(
            f"{bad.name} contains NaN or infinite values (first in partition {bad.partition}, "
            f"row {bad.row} of the partition, row {bad.offset} overall)"
        )
    if total.n == 0:
        raise ValueError("X must have at least one row, got 0")
    return total.xx, total.xy, total.yy, total.n


def _read_row_group(path: str, group: int, columns: list[str], filesystem) -> np.ndarray:
    """One row group's ``columns`` as a float64 array (rows, len(columns)), on its worker.

    The array is column-major (each column copied once, contiguously): the chunk kernels read
    it through cache-sized row blocks either way.
    """
    import pyarrow.parquet as pq

    table = pq.ParquetFile(path, filesystem=filesystem).read_row_group(group, columns=columns, use_threads=False)
    out = np.empty((len(columns), table.num_rows))
    for j, name in enumerate(columns):
        out[j] = table.column(name).to_numpy()
    return out.T


def read_parquet_columns(path, features, target, *, filesystem=None):
    """Covariates and response from a Parquet data set, as Dask arrays of one chunk per row group.

    Returns ``(X, y)``: a dask array (n, d) of the ``features`` columns, in that order, and the
    dask array (n,) of ``target``, chunked alike, one chunk per Parquet row group.  Only the
    files' footers are read here (row counts, column names); each row group is read by the
    worker that reduces it, straight into a float64 array (no pandas), so a task holds one row
    group in memory.  Ready for :func:`pm_private.release_suff_stats` or
    :func:`pm_private.suff_stats`, which reduce each chunk to its sufficient statistics
    (Honkela et al. 2018) where it is read.

    Parameters
    ----------
    path : str, path-like or list of them
        A Parquet file, a directory of them, or a list of files (all with the named columns).
    features : sequence of str
        Names of the covariate columns, in the order of the statistics' rows and columns.
    target : str
        Name of the response column.
    filesystem : pyarrow.fs.FileSystem, optional
        Where the files are (local by default); the workers must reach the same paths.
    """
    import dask.array as da
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq

    if isinstance(features, str) or not len(features):
        raise ValueError(f"features must be a non-empty list of column names, got {features!r}")
    features = [str(name) for name in features]
    if len(set(features)) != len(features):
        raise ValueError(f"features must not repeat a column, got {features!r}")
    if not isinstance(target, str) or target in features:
        raise ValueError(f"target must be one column name not among the features, got {target!r}")
    source = [str(p) for p in path] if isinstance(path, (list, tuple)) else str(path)
    files = sorted(ds.dataset(source, format="parquet", filesystem=filesystem).files)
    X_blocks, y_blocks = [], []
    for name in files:
        meta = pq.ParquetFile(name, filesystem=filesystem).metadata
        missing = sorted(set(features + [target]) - set(meta.schema.names))
        if missing:
            raise ValueError(f"{name} has no column(s) {missing}")
        for group in range(meta.num_row_groups):
            rows = meta.row_group(group).num_rows
            if rows == 0:
                continue
            X_blocks.append(
                da.from_delayed(
                    delayed(_read_row_group, pure=True)(name, group, features, filesystem),
                    (rows, len(features)),
                    np.float64,
                )
            )
            part = delayed(_read_row_group, pure=True)(name, group, [target], filesystem)
            y_blocks.append(da.from_delayed(part, (rows, 1), np.float64)[:, 0])
    if not X_blocks:
        raise ValueError(f"no rows in the Parquet data set {path!r}")
    return da.concatenate(X_blocks), da.concatenate(y_blocks)


# ---------------------------------------------------------------------------------------------
# Discrete-time survival sums (Nguyên & Hui 2017a)
# ---------------------------------------------------------------------------------------------


def _partition_records(block, width, q, e, partition):
    """Validated records of one partition (rows in the unit ball, times in [0, 1], events 0/1)."""
    from .survival.discrete_private import _private_records

    X, time, event = _split(block, width, 3)
    if len(X) == 0:
        return None
    try:
        return _private_records(X, time, event, q, e)
    except ValueError as error:
        raise ValueError(f"{error} (in partition {partition})") from None


def _record_count(records) -> int:
    return 0 if records is None else records.n


def _partition_loss_sums(f, records, link, hessian):
    from .survival.discrete_numpy import _loss_sums

    with single_threaded_blas():
        return _loss_sums(f, records, link, hessian)


def _add_loss_sums(*parts):
    return tuple(sum(values) for values in zip(*parts, strict=True))


class PartitionedRecords(BasisDimensions):
    """Discrete-time records held as validated Dask partitions, with the public basis A (q, e).

    Built by :func:`partitioned_records`; :func:`pm_private.survival.loss_and_grad` and
    :func:`pm_private.survival.fit_discrete_time` accept it in place of a
    :class:`pm_private.survival.DiscreteTimeData`: each evaluation is one pass in which every
    partition returns its loss, gradient (and Hessian) sums and the client adds them.
    """

    def __init__(self, parts: list, n: int, d: int, basis: np.ndarray):
        self.parts, self.n, self.d, self.basis = parts, n, d, basis

    def loss_sums(self, f, link: str, hessian: bool):
        """(Σℓᵢ, Σ∇ℓᵢ[, Σ∇²ℓᵢ]) over all partitions: per-partition sums, added in a tree."""
        f = np.asarray(f, dtype=np.float64)
        parts = [delayed(_partition_loss_sums, pure=True)(f, part, link, hessian) for part in self.parts]
        with single_threaded_blas():
            (total,) = dask.compute(_tree(parts, _add_loss_sums))
        return total


def partitioned_records(X, time, event, *, q: int, e: int) -> PartitionedRecords:
    """Validate Dask collections of discrete-time records once and keep them where they live.

    X (n, d) with rows in the unit ball, ``time`` in [0, 1] and ``event`` in {0, 1}, partitioned
    alike.  Every partition is validated as :func:`pm_private.survival.output_perturbation`
    validates an in-memory array; the validated partitions are persisted (in the workers'
    memory, or the local process's with the local schedulers) for the Newton iterations of the
    fit, each of which is one pass.  Raises ValueError naming the partition of a bad record.
    """
    from .survival.spline import interval_basis

    d = column_count(X)
    blocks, width = _aligned_blocks({"X": X, "time": time, "event": event})
    parts = [delayed(_partition_records, pure=True)(block, width, q, e, k) for k, block in enumerate(blocks)]
    parts = list(dask.persist(*parts))
    counts = dask.compute(*[delayed(_record_count, pure=True)(part) for part in parts])
    parts = [part for part, count in zip(parts, counts, strict=True) if count]
    if not parts:
        raise ValueError("X must have at least one row, got 0")
    return PartitionedRecords(parts, int(sum(counts)), d, interval_basis(int(q), int(e)))

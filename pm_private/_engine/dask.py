"""Dask plumbing with no statistics in it: the number of columns of a collection, the partitions of
several collections with the same rows as aligned numpy blocks, and a tree sum of partial results.

Imported only when a function is given a Dask collection, so pm_private runs without Dask.  The
domain reducers (the linear sufficient statistics, the discrete-time survival sums) build on it:
each partition is validated and reduced where it lives, the partial results are added in a tree
(fan-in :data:`FAN_IN`), and only the total, of size independent of n, reaches the client, where
the release function draws its noise once.
"""

from __future__ import annotations

import numpy as np

__all__ = ["FAN_IN", "aligned_blocks", "column_count", "is_dask", "split_block", "tree_sum"]

#: Partial results added by one task of the tree reduction.
FAN_IN = 8


def is_dask(obj) -> bool:
    """True for a Dask collection (dask.array, dask.dataframe, …), detected without importing Dask."""
    return hasattr(obj, "__dask_graph__")


def collection_kind(obj) -> str | None:
    module = type(obj).__module__
    if module.startswith("dask.array"):
        return "array"
    if module.startswith(("dask.dataframe", "dask_expr")):
        return "frame"
    return None


def column_count(X) -> int:
    """d of a Dask collection of covariates (known without computing anything)."""
    kind = collection_kind(X)
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


def aligned_blocks(columns: dict):
    """Delayed blocks of several collections with the same rows, one tuple per partition, in row order.

    dask arrays are rechunked to the row chunks of the first (and to one chunk across
    columns), as :func:`read_parquet_columns` returns them; dask data frames and series must
    share their partitions (columns of one dask DataFrame) and are read as one frame.
    """
    names = list(columns)
    kinds = {collection_kind(columns[name]) for name in names}
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


def split_block(block, width: int | None, count: int):
    """(X, y, …) numpy arrays of one partition (a tuple of array blocks, or one frame of all columns)."""
    if width is None:
        return tuple(np.asarray(part) for part in block)
    (frame,) = block
    X = frame.iloc[:, :width].to_numpy(dtype=np.float64)
    return (X, *(frame.iloc[:, width + k].to_numpy() for k in range(count - 1)))


def tree_sum(parts: list, combine):
    """Add delayed partial results in a tree of fan-in :data:`FAN_IN`, keeping their row order."""
    from dask import delayed

    if not parts:
        raise ValueError("the collection has no partitions")
    while len(parts) > 1:
        parts = [delayed(combine, pure=True)(*parts[i : i + FAN_IN]) for i in range(0, len(parts), FAN_IN)]
    return parts[0]

"""Parquet data sets as Dask arrays, one chunk per row group, read by the workers (no rows on the client)."""

from __future__ import annotations

import numpy as np

__all__ = ["read_parquet_columns"]


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
    group in memory.  Ready for :func:`pm_private.release_linear_stats` or
    :func:`pm_private.linear_stats`, which reduce each chunk to its sufficient statistics
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

    Returns
    -------
    X : dask.array.Array
        The covariates, shape (n, d), one chunk per row group.
    y : dask.array.Array
        The response, shape (n,), chunked alike.

    Raises
    ------
    ValueError
        If ``features`` is empty or repeats a column, ``target`` is not one column name outside
        the features, or a file lacks one of the named columns.
    """
    import dask.array as da
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq
    from dask import delayed

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

"""The statistics of survival regression, computed from the records: per cell and exit the
number of people and Σx, per cell Σxxᵀ, and the number of projected rows, of rows mapped by the
public preprocessing and projected onto the public ball; in memory or partition by partition
(:mod:`pm_private.survival.regression.release` adds the noise).
"""

from __future__ import annotations

import numpy as np

from ..._engine.dask import is_dask
from ...privacy.primitives import row_scale_factors
from ...released.preprocessing import check_glm_preprocessing, preprocessed_rows
from ..exits.outcomes import exit_outcomes

__all__ = ["statistics_of"]


def _statistics(time, event, X, cell, ends, labels, x_bound, allow_empty=False):
    """(counts, x_sums, xx, projected, n) of the records: rows projected onto the ball (when bounded);
    people whose label is not among the cells are in no cell (see ``exit_outcomes``), n counts all."""
    codes, outcome = exit_outcomes(time, event, cell, ends, labels, allow_empty=allow_empty)
    n = codes.size
    if X.shape[0] != n:
        raise ValueError(f"X must have one row per person ({n}), got {X.shape[0]}")
    if not np.isfinite(X).all():
        raise ValueError("X must be finite (no NaN or inf)")
    kept = codes >= 0  # people whose label is among the cells (exit_outcomes)
    codes, outcome, X = codes[kept], outcome[kept], X[kept]
    projected = 0
    if x_bound is not None:
        factors = row_scale_factors(X, x_bound)  # norms without overflow, however large the rows
        projected = int(np.count_nonzero(factors < 1.0))
        X = X * factors[:, None]
    K, exits, d = len(labels), 2 * ends.size + 1, X.shape[1]
    index = codes * exits + outcome
    counts = np.bincount(index, minlength=K * exits).reshape(K, exits)
    x_sums = np.stack([np.bincount(index, weights=X[:, j], minlength=K * exits) for j in range(d)], axis=-1)
    xx = np.stack([rows.T @ rows for rows in (X[codes == c] for c in range(K))])
    xx = 0.5 * (xx + np.swapaxes(xx, 1, 2))
    return counts.astype(np.float64), x_sums.reshape(K, exits, d), xx, projected, n


def _partition_statistics(block, width, ends, labels, x_bound, count, partition):
    from ..._engine.dask import split_block

    X, time, event, *cell = split_block(block, width, count)
    X = np.asarray(X, dtype=np.float64)
    if np.ravel(time).size == 0:
        K, exits = len(labels), 2 * ends.size + 1
        d = X.shape[1] if X.ndim == 2 else 0
        return np.zeros((K, exits)), np.zeros((K, exits, d)), np.zeros((K, d, d)), 0, 0
    try:
        return _statistics(np.ravel(time), np.ravel(event), X, cell[0] if cell else None, ends, labels, x_bound)
    except ValueError as error:
        raise ValueError(f"{error} (in partition {partition})") from None


def _add_statistics(*parts):
    return tuple(sum(p[i] for p in parts) for i in range(5))


def _dask_statistics(time, event, X, cell, ends, labels, x_bound):
    """The statistics of Dask collections: each partition computes its own (rows projected
    there), the client adds them; no row leaves its partition."""
    import dask
    from dask import delayed

    from ..._engine.dask import aligned_blocks, tree_sum

    if not all(is_dask(v) for v in (time, event, X) + (() if cell is None else (cell,))):
        raise ValueError("time, event, X (and cell): give all of them as Dask collections or none")
    columns = {"X": X, "time": time, "event": event} | ({} if cell is None else {"cell": cell})
    blocks, width = aligned_blocks(columns)
    count = len(columns)
    parts = [
        delayed(_partition_statistics, pure=True)(b, width, ends, labels, x_bound, count, k)
        for k, b in enumerate(blocks)
    ]
    ((counts, x_sums, xx, projected, n),) = dask.compute(tree_sum(parts, _add_statistics))
    return counts, x_sums, xx, int(projected), int(n)


def statistics_of(time, event, X, cell, ends, labels, x_bound, preprocessing, *, allow_empty: bool = False):
    """(rows' width, statistics, charged refusal or None) of in-memory or Dask records; ``allow_empty``
    takes in-memory records of no person (a release under add/remove neighbours)."""
    check_glm_preprocessing(preprocessing)
    if any(is_dask(v) for v in (time, event, X, cell)):
        if preprocessing is not None:
            raise ValueError("preprocessing is not applied to Dask collections: transform the partitions first")
        stats = _dask_statistics(time, event, X, cell, ends, labels, x_bound)
        return stats[1].shape[-1], stats, None
    rows, refusal = preprocessed_rows(preprocessing, X, allow_empty=allow_empty)
    return rows.shape[1], _statistics(time, event, rows, cell, ends, labels, x_bound, allow_empty), refusal

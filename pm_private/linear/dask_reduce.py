"""Sufficient statistics of linear regression (Honkela et al. 2018) on Dask collections.

Each partition is checked for NaN/inf, clipped and reduced to (n, Sxx, Sxy, Syy) by the kernel of
:func:`pm_private.linear.linear_stats` on its worker; the sums are added in a tree and only the
total reaches the client, where the release function draws its noise once and charges its
accountant.  Nothing here draws noise or touches an accountant.
"""

from __future__ import annotations

from typing import NamedTuple

import dask
import numpy as np
from dask import delayed

from .._engine.dask import aligned_blocks, column_count, split_block, tree_sum
from .._engine.threads import single_threaded_blas
from .accumulate import NonFiniteRow, accumulate

__all__ = ["partitioned_suff_stats"]


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
    changed: tuple[int, int] = (0, 0)


def _partition_suff_stats(block, width, d, x_bound, y_bound, scale_response, partition, intercept) -> _Sums:
    """Check, clip and reduce one partition to (n, Sxx, Sxy, Syy), on its worker."""
    X, y = split_block(block, width, 2)
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
        xx, xy, yy, changed = accumulate(
            X, y, x_bound, y_bound, scale_response=scale_response, workers=1, intercept=intercept
        )
    except NonFiniteRow as error:
        return _Sums(n, None, None, 0.0, _Bad("X", partition, error.row, error.row))
    return _Sums(n, xx, xy, yy, None, changed)


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
            changed = (total.changed[0] + part.changed[0], total.changed[1] + part.changed[1])
            total = _Sums(total.n + part.n, total.xx + part.xx, total.xy + part.xy, total.yy + part.yy, None, changed)
    return total


def _run_suff_stats(block, width, d, x_bound, y_bound, scale_response, partition, intercept) -> _Sums:
    with single_threaded_blas():  # one BLAS thread per task (worker processes): one task per core
        return _partition_suff_stats(block, width, d, x_bound, y_bound, scale_response, partition, intercept)


def partitioned_suff_stats(
    X, y, x_bound: float | None, y_bound: float | None, scale_response: bool = False, intercept: bool = False
):
    """(Sxx, Sxy, Syy, n, changed) of Dask collections X (n, d) and y (n,), clipped when bounds
    are given; ``changed`` counts the rows and the responses that the clipping changed.

    Each partition is checked for NaN/inf, clipped to [−Bx, Bx] (or, with ``scale_response``,
    scaled as whole rows, see :func:`pm_private.linear.accumulate.accumulate`) and [−By, By] and reduced by
    the kernel of :func:`pm_private.linear.linear_stats` on its worker; the (d×d, d, 1) sums are
    added in a tree and returned to the client.  Raises ValueError naming the first bad
    partition and row.  With ``intercept`` a constant column of ones is prepended to every
    partition's covariates.  No noise is drawn here.
    """
    d = column_count(X)
    blocks, width = aligned_blocks({"X": X, "y": y})
    parts = [
        delayed(_run_suff_stats, pure=True)(block, width, d, x_bound, y_bound, scale_response, k, intercept)
        for k, block in enumerate(blocks)
    ]
    with single_threaded_blas():  # for the local schedulers, whose threads are this process's
        (total,) = dask.compute(tree_sum(parts, _add_suff_stats))
    if total.bad is not None:
        bad = total.bad
        raise ValueError(
            f"{bad.name} contains NaN or infinite values (first in partition {bad.partition}, "
            f"row {bad.row} of the partition, row {bad.offset} overall)"
        )
    if total.n == 0:
        raise ValueError("X must have at least one row, got 0")
    return total.xx, total.xy, total.yy, total.n, total.changed

"""The one pass over the rows that every linear statistic uses: check finiteness, clip, accumulate
Sxx = Σ xᵢxᵢᵀ and Sxy = Σ xᵢyᵢ in cache-sized chunks, one block per core (Honkela et al. 2018)."""

from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .._engine.threads import single_threaded_blas
from ..privacy.primitives import row_scale_factors
from ..privacy.validation import first_bad_row

__all__ = ["CHUNK_VALUES", "NonFiniteRow", "accumulate", "first_non_finite_row"]

# Rows per chunk are chosen so that one chunk holds about this many float64 values (512 KiB, in L2 cache):
# clipping works in cache and peak extra memory stays bounded (one chunk per thread) whatever n is.
CHUNK_VALUES = 1 << 16


def first_non_finite_row(X, start: int, stop: int) -> int | None:
    """Index of the first row in start…stop−1 of X holding NaN or ±inf, or None (chunk by chunk)."""
    rows = max(1, CHUNK_VALUES // X.shape[1])
    for first in range(start, stop, rows):
        chunk = X[first : min(first + rows, stop)]
        if not np.isfinite(chunk).all():
            return first + first_bad_row(chunk)
    return None


class NonFiniteRow(ValueError):
    """A non-finite value in row ``row`` of ``name`` (raised before anything is released)."""

    def __init__(self, name: str, row: int):
        super().__init__(f"{name} contains NaN or infinite values (first in row {row})")
        self.name, self.row = name, row


def _accumulate_rows(X, y, x_bound, y_bound, scale_response, start: int, stop: int, intercept: bool = False):
    """Sxx, Sxy, Syy of rows start…stop−1 and how many rows and responses clipping changed, chunk by
    chunk in cache: clip (or scale) into a reused buffer, count what changed, multiply.

    With clipping every chunk is checked for NaN/inf before it is clipped (clipping would turn
    ±inf into ±Bx).  Without clipping no separate pass is made: a NaN or inf in row i makes
    Sxx_jj = Σ xᵢⱼ² non-finite, so only a non-finite result is searched for its first bad row.
    """
    d = X.shape[1] + intercept
    rows = max(1, CHUNK_VALUES // d)
    xx = np.zeros((d, d))
    xy = np.zeros(d)
    yy = 0.0
    changed = responses = 0
    buffer = np.empty((min(rows, stop - start), d)) if x_bound is not None else None
    for first in range(start, stop, rows):
        chunk = X[first : min(first + rows, stop)]
        response = y[first : first + len(chunk)]
        if intercept:  # the constant column, inside every bound Bx ≥ 1: never clipped, never scales a row
            chunk = np.column_stack([np.ones(len(chunk)), chunk])
        if x_bound is not None:
            if not np.isfinite(chunk).all():
                raise NonFiniteRow("X", first + first_bad_row(chunk))
            if scale_response:
                factors = row_scale_factors(chunk, x_bound, norm=np.inf)
                clipped = np.multiply(chunk, factors[:, None], out=buffer[: len(chunk)])
                response = response * factors
            else:
                clipped = np.clip(chunk, -x_bound, x_bound, out=buffer[: len(chunk)])
            changed += int(np.count_nonzero((clipped != chunk).any(axis=1)))
            chunk = clipped
        if y_bound is not None:
            responses += int(np.count_nonzero(np.abs(response) > y_bound))
            response = np.clip(response, -y_bound, y_bound)
        xx += chunk.T @ chunk  # numpy calls BLAS syrk for a product of a matrix with its own transpose
        xy += chunk.T @ response
        yy += float(response @ response)
    if x_bound is None and not (np.isfinite(np.diagonal(xx)).all() and np.isfinite(xy).all()):
        row = first_non_finite_row(X, start, stop)
        if row is not None:  # else finite values whose squares overflow: the sums are returned as they are
            raise NonFiniteRow("X", row)
    return xx, xy, yy, (changed, responses)


def accumulate(
    X: np.ndarray,
    y: np.ndarray,
    x_bound: float | None,
    y_bound: float | None,
    *,
    scale_response: bool = False,
    workers: int | None = None,
    intercept: bool = False,
):
    """One pass over (X, y): check finiteness, clip, accumulate Sxx, Sxy, Syy, and count what the
    clipping changed: rows with an entry |xᵢⱼ| > ``x_bound`` and responses |yᵢ| > ``y_bound``
    (0 for a bound that is None).  With ``intercept`` a constant column of ones is prepended to
    the covariates (the caller ensures ``x_bound`` ≥ 1, so that it is never clipped).  Returns ``(xx, xy, yy, (rows changed, responses changed))``.

    Covariates are clipped entrywise, xᵢⱼ ← clip(xᵢⱼ, −Bx, Bx), or, with ``scale_response``,
    each row is scaled as a whole, (xᵢ, yᵢ) ← cᵢ·(xᵢ, yᵢ) with cᵢ = min(1, Bx/maxⱼ|xᵢⱼ|), which
    keeps the regression of y on x; responses are then clipped to ±By.

    Large inputs are cut into one contiguous block per CPU (``workers`` overrides), each processed
    by its own thread in cache-sized chunks with single-threaded BLAS (numpy releases the GIL in
    the clip and the product), so the cores run one BLAS call each and peak extra memory is one
    chunk per thread.  A non-finite value raises :class:`NonFiniteRow` for the first offending
    row: the blocks are collected in order.
    """
    n = X.shape[0]
    rows = max(1, CHUNK_VALUES // X.shape[1])
    if workers is None:
        workers = max(1, min(os.cpu_count() or 1, n // (4 * rows)))
    if workers == 1:  # one kernel: BLAS may use every core (and threadpoolctl's cost is skipped)
        return _accumulate_rows(X, y, x_bound, y_bound, scale_response, 0, n, intercept)
    with single_threaded_blas():
        edges = [(n * k // workers) // rows * rows for k in range(workers)] + [n]
        with ThreadPoolExecutor(workers) as pool:
            futures = [
                pool.submit(_accumulate_rows, X, y, x_bound, y_bound, scale_response, edges[k], edges[k + 1], intercept)
                for k in range(workers)
            ]
            parts = [future.result() for future in futures]  # in order: the first bad block raises first
    xx = sum(part[0] for part in parts)
    xy = sum(part[1] for part in parts)
    yy = math.fsum(part[2] for part in parts)
    changed = tuple(sum(part[3][k] for part in parts) for k in range(2))
    return xx, xy, yy, changed

"""Public preprocessing of covariates before a release of sufficient statistics."""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["preprocess"]


def preprocess(X, *, center=None) -> np.ndarray:
    """Subtract a **public** centre, then scale each row to unit L2 norm (Honkela et al. 2018).

    Honkela et al. (2018) removes each gene's mean over the data, ``x_ij := x_ij - mean_i(x_ij)``, then
    normalises each cell line to ``||x_i||_2 = 1``.  The normalisation is a per-row map that
    depends on nothing but the row itself, so it is harmless under differential privacy (and it
    gives the public bound ``|x_ij| <= 1``).  Centring with the *private* column means is not: it
    makes every preprocessed row depend on all other rows, so replacing one record moves every
    row (the sensitivity analysis of the released statistics no longer holds) and the means
    themselves leak.  Here ``center`` must therefore come from public or non-private data (e.g.
    the non-private cell lines, or published reference means); ``None`` means no centring.

    ``X``: array-like or DataFrame, n × d, finite.  ``center``: length-d vector; a pandas Series
    is aligned to ``X``'s columns when ``X`` is a DataFrame.  Returns a new float64 array; rows
    that are zero after centring stay zero.
    """
    columns = X.columns if isinstance(X, pd.DataFrame) else None
    A = np.array(X, dtype=np.float64, copy=True)
    if A.ndim != 2:
        raise ValueError(f"X must be 2-D (rows = cell lines), got shape {A.shape}")
    if not np.isfinite(A).all():
        raise ValueError("X must be finite (no NaN or inf)")
    if center is not None:
        if isinstance(center, pd.Series) and columns is not None:
            absent = [c for c in columns if c not in center.index]
            if absent:
                raise ValueError(f"center has no value for columns {absent[:10]}")
            center = center.reindex(columns)
        c = np.asarray(center, dtype=np.float64)
        if c.shape != (A.shape[1],):
            raise ValueError(f"center must have shape ({A.shape[1]},), got {c.shape}")
        if not np.isfinite(c).all():
            raise ValueError("center must be finite")
        A -= c
    # Scale by the row's max |entry| first so that the norm cannot overflow.
    peak = np.abs(A).max(axis=1, initial=0.0)
    nonzero = peak > 0
    A[nonzero] /= peak[nonzero, None]
    A[nonzero] /= np.linalg.norm(A[nonzero], axis=1)[:, None]
    return A

"""Row projection onto a norm ball: the scale factors that bring each covariate row within a public
ℓ1 or ℓ2 bound, and the projected rows (the clipping that bounds a record's contribution)."""

from __future__ import annotations

import numpy as np

from .._engine.docstrings import parameters_from

# --------------------------------------------------------------------------------------------
# Row projection
# --------------------------------------------------------------------------------------------

# Projected rows are scaled by this much less than bound/‖x‖ so that the *computed* norm of a
# projected row never exceeds the bound (the norm's own rounding is a few ulps).
_SHRINK = 1.0 - 2.0**-48


def row_scale_factors(X, bound: float, norm: int = 2) -> np.ndarray:
    """The factors cᵢ = min(1, B/‖xᵢ‖_norm) that scale each row of X into the ball of radius B
    (for ``norm=np.inf`` the cube maxⱼ|xᵢⱼ| ≤ B).

    Norms are computed after dividing each row by its largest |entry|, so very large finite
    entries do not overflow, and factors below 1 are shrunk by a further relative 2⁻⁴⁸ so that
    the computed norm of cᵢxᵢ is ≤ B despite rounding.

    Parameters
    ----------
    X : array-like, shape (n, d)
        Finite rows.
    bound : float
        Public radius B > 0.
    norm : {1, 2, numpy.inf}
        ℓ1, ℓ2 or ℓ∞ norm.

    Returns
    -------
    numpy.ndarray, shape (n,)
        The factors, in (0, 1].

    Raises
    ------
    ValueError
        If ``norm`` is not 1, 2 or ``numpy.inf``.
    """
    if norm not in (1, 2, np.inf):
        raise ValueError(f"norm must be 1, 2 or inf, got {norm!r}")
    X = np.asarray(X, dtype=np.float64)
    absmax = np.abs(X).max(axis=1, initial=0.0)
    safe = np.where(absmax > 0, absmax, 1.0)
    scaled = X / safe[:, None]
    if norm == 2:
        root = np.sqrt(np.einsum("ij,ij->i", scaled, scaled))  # ≥ 1 for a non-zero row
    elif norm == 1:
        root = np.abs(scaled).sum(axis=1)
    else:
        root = np.ones(len(X))
    # ‖x‖ = absmax·root; factor = min(1, B/‖x‖), written to avoid overflow.  (B/safe may
    # overflow for subnormal rows, which are inside the ball and keep factor 1.)
    with np.errstate(over="ignore"):  # absmax·root overflows to inf only for rows far outside the ball
        outside = absmax * root > bound
        return np.where(outside, (bound / safe) / np.where(outside, root, 1.0) * _SHRINK, 1.0)


@parameters_from(row_scale_factors)
def project_rows(X, bound: float, norm: int = 2) -> np.ndarray:
    """Rows with ‖xᵢ‖_norm > bound scaled onto the ball of radius ``bound``; other rows unchanged.

    xᵢ ← cᵢxᵢ with cᵢ = min(1, B/‖xᵢ‖) (``row_scale_factors``; Euclidean projection onto the
    ℓ2 ball for ``norm=2``; radial scaling for ``norm=1``).  This is what bounds a record's
    contribution in every mechanism whose sensitivity assumes ‖x‖ ≤ B.  A new array.

    Parameters
    ----------
    norm : {1, 2}
        ℓ1 or ℓ2 norm.

    Returns
    -------
    numpy.ndarray, shape (n, d)
        The projected rows.

    Raises
    ------
    ValueError
        If ``norm`` is not 1 or 2.
    """
    if norm not in (1, 2):
        raise ValueError(f"norm must be 1 or 2, got {norm!r}")
    X = np.asarray(X, dtype=np.float64)
    return X * row_scale_factors(X, bound, norm)[:, None]

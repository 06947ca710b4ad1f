"""Natural cubic spline baseline of the discrete-time hazard model (Nguyên & Hui 2017a, §3.2).

With e knots 0 = k₁ < … < k_e = 1 equally spaced, the truncated-power basis of a natural cubic
spline (Hastie, Tibshirani & Friedman 2009, Eq. 5.4–5.5) is

    d_j(t) = ((t − k_j)₊³ − (t − k_e)₊³) / (k_e − k_j),   j = 1 … e−1,
    b₁(t) = 1,  b₂(t) = t,  b_{j+2}(t) = d_j(t) − d_{e−1}(t),   j = 1 … e−2,

and the baseline is γ(t) = Σⱼ αⱼ bⱼ(t).  The discrete-time model needs the basis once per
interval: row s of :func:`interval_basis` is A_s, evaluated at the **midpoint** (s + ½)/q of
interval s = (s/q, (s+1)/q] (0-based, as :func:`pm_private.survival.data.interval_index`).
The paper leaves the evaluation point of "A_s at interval s" open; the midpoint is the interval's
representative time (and t = 0, where all but b₁ vanish, is never used).  The sensitivity
bounds of Nguyên & Hui (2017a) use only the norms ‖A_s‖ (each bⱼ lies in [0, 1] on [0, 1]; for q = 200,
max ‖A_s‖ = 1.60 with e = 3).  The basis depends on (q, e) only: it is public.
"""

from __future__ import annotations

import numpy as np

from ...privacy.validation import check_count

__all__ = ["natural_spline_basis", "interval_basis", "interval_midpoints"]


def _check_knots(e) -> int:
    return check_count("e (the number of spline knots)", e, 2)


def natural_spline_basis(t, e: int) -> np.ndarray:
    """Basis (b₁(t), …, b_e(t)) at times t ∈ [0, 1], shape (len(t), e); see the module docstring.

    Parameters
    ----------
    t : array_like, shape (m,)
        Times in [0, 1].
    e : int
        The number of knots (and basis functions), ≥ 2.

    Returns
    -------
    numpy.ndarray
        The basis, shape (m, e).

    Raises
    ------
    ValueError
        If ``t`` is not 1-D or not in [0, 1], or ``e`` < 2.
    """
    e = _check_knots(e)
    t = np.asarray(t, dtype=np.float64)
    if t.ndim != 1:
        raise ValueError(f"t must be 1-D, got shape {t.shape}")
    if not (np.isfinite(t).all() and (t >= 0).all() and (t <= 1).all()):
        raise ValueError("spline times must lie in [0, 1]")
    knots = np.linspace(0.0, 1.0, e)
    cube = np.maximum(t[:, None] - knots[None, :], 0.0) ** 3  # (t − k_j)₊³, j = 1 … e
    d = (cube[:, :-1] - cube[:, -1:]) / (knots[-1] - knots[:-1])  # d_j, j = 1 … e−1
    return np.column_stack([np.ones_like(t), t, d[:, :-1] - d[:, -1:]])


def interval_midpoints(q: int) -> np.ndarray:
    """Midpoints (s + ½)/q of the q intervals s = 0 … q−1 of [0, 1].

    Parameters
    ----------
    q : int
        The number of intervals, ≥ 1.

    Returns
    -------
    numpy.ndarray
        The q midpoints.
    """
    q = check_count("q", q)
    return (np.arange(q) + 0.5) / q


def interval_basis(q: int, e: int) -> np.ndarray:
    """Matrix A of shape (q, e): row s is A_s = (b₁, …, b_e) at the midpoint (s + ½)/q.

    Parameters
    ----------
    q : int
        The number of intervals, ≥ 1.
    e : int
        The number of knots, ≥ 2.

    Returns
    -------
    numpy.ndarray
        A, shape (q, e).
    """
    return natural_spline_basis(interval_midpoints(q), e)

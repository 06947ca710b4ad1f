"""Discrete-time hazard regression (Nguyên & Hui 2017a, §2.2–3.3) in PyTensor, NumPy and PyMC.

Time [0, 1] is cut into q intervals s = 0 … q−1, s = (s/q, (s+1)/q]; record i has covariates xᵢ,
the interval kᵢ in which it died (δᵢ = 1) or was censored (δᵢ = 0), and was at risk in
intervals 0 … kᵢ.  With a link g ∈ {logit, cloglog, probit} the hazard in interval s is

    g(h_is) = z_is = γ_s + xᵢᵀβ,     γ_s = A_s α   (A = spline basis at the intervals, (q, e)),

and the per-record loss (negative log-likelihood, Nguyên & Hui (2017a) Eq. 3 for the logit link) is

    ℓ(f; dᵢ) = Σ_{s<kᵢ} c(z_is) + δᵢ a(z_ik) + (1 − δᵢ) c(z_ik),   f = (α, β),
    a(z) = −log h(z),  c(z) = −log(1 − h(z))    (logit: a(z) = log(1 + e^(−z)), c(z) = log(1 + e^z)).

Which time A_s uses is fixed by the basis passed in; :func:`pm_private.survival.discrete.spline.interval_basis`
evaluates it at the interval midpoint (s + ½)/q.  Passing the identity matrix as basis gives free
per-interval baseline effects (α = γ, e = q).

No person-period table is built.  ηᵢ = xᵢᵀβ and γ = Aα are computed once, and only
z_is = γ_s + ηᵢ is formed: for the logit link by a compiled (Numba) PyTensor Op that visits the
Σᵢ(kᵢ + 1) at-risk record-intervals in one pass with O(n + q) memory; for cloglog and probit by
an (n, q) elementwise graph masked to s < kᵢ; in NumPy by (n, q) arrays (X is never copied per
interval).  :func:`expand_person_period` builds the explicit table only for checks and benchmarks.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...privacy.primitives import project_rows, row_scale_factors
from ...privacy.validation import as_float_array, as_matrix, check_count
from .spline import interval_basis

__all__ = ["LINKS", "DiscreteTimeData"]

#: Supported links g of the hazard: g(h) = γ_s + xᵀβ.
LINKS = ("logit", "cloglog", "probit")


def check_link(link: str) -> str:
    if link not in LINKS:
        raise ValueError(f"link must be one of {LINKS}, got {link!r}")
    return link


# ---------------------------------------------------------------------------------------------
# Data container
# ---------------------------------------------------------------------------------------------


class BasisDimensions:
    """q, e and dim = e + d of records with a public basis A (q, e) and d covariates; shared by
    :class:`DiscreteTimeData` and the Dask-partitioned records of the same model."""

    @property
    def q(self) -> int:
        return self.basis.shape[0]

    @property
    def e(self) -> int:
        return self.basis.shape[1]

    @property
    def dim(self) -> int:
        """Length of f = (α, β): e + d."""
        return self.e + self.d


@dataclass(frozen=True, eq=False)
class DiscreteTimeData(BasisDimensions):
    """Records (X, interval, event) and the public basis A of the discrete-time model.

    ``X`` (n, d) float64, ``interval`` (n,) int64 in 0 … q−1, ``event`` (n,) int8 in {0, 1},
    ``basis`` (q, e).  Arrays are validated and made read-only.  Use :meth:`from_times` to build
    one from times already scaled into [0, 1].

    Parameters
    ----------
    X : array_like, shape (n, d)
        Finite covariates.
    interval : array_like, shape (n,)
        Integer intervals kᵢ in 0 … q−1.
    event : array_like, shape (n,)
        Event flags δᵢ in {0, 1}.
    basis : array_like, shape (q, e)
        The public basis A (:func:`interval_basis`).

    Raises
    ------
    ValueError
        If an array has the wrong shape or values.
    """

    X: np.ndarray
    interval: np.ndarray
    event: np.ndarray
    basis: np.ndarray

    def __post_init__(self):
        X = np.array(as_float_array(self.X, "X"))
        interval = np.asarray(self.interval)
        event = np.asarray(self.event)
        basis = np.array(as_float_array(self.basis, "basis"))
        if X.ndim != 2 or X.shape[0] == 0:
            raise ValueError(f"X must be 2-D (n records × d covariates) with n ≥ 1, got shape {X.shape}")
        n = X.shape[0]
        if not np.isfinite(X).all():
            raise ValueError("X contains NaN or infinite values")
        if basis.ndim != 2 or not np.isfinite(basis).all():
            raise ValueError(f"basis must be a finite (q, e) matrix, got shape {basis.shape}")
        if interval.shape != (n,) or event.shape != (n,):
            raise ValueError(
                f"interval and event must have shape ({n},) to match the n rows of X, got {interval.shape}, {event.shape}"
            )
        if not np.issubdtype(interval.dtype, np.integer) or interval.min() < 0 or interval.max() >= basis.shape[0]:
            raise ValueError(f"interval must hold integers in 0 … {basis.shape[0] - 1}")
        if not np.isin(event, (0, 1)).all():
            raise ValueError("event must be 0 or 1")
        arrays = {
            "X": X,
            "interval": interval.astype(np.int64),
            "event": event.astype(np.int8),
            "basis": basis,
        }
        for name, array in arrays.items():
            array.flags.writeable = False
            object.__setattr__(self, name, array)

    @classmethod
    def from_times(cls, X, time, event, *, q: int, e: int = 3, basis=None) -> DiscreteTimeData:
        """Records from scaled times in [0, 1]: interval = :func:`interval_index` (time, q),
        basis = :func:`interval_basis` (q, e) unless ``basis`` is given.

        Parameters
        ----------
        X : array_like, shape (n, d)
            Finite covariates.
        time : array_like, shape (n,)
            Times scaled into [0, 1].
        event : array_like, shape (n,)
            1 for an observed event, 0 for right-censoring.
        q : int
            The number of intervals.
        e : int, default 3
            The number of spline knots.
        basis : array_like, shape (q, e), optional
            A basis to use instead of :func:`interval_basis`.

        Returns
        -------
        DiscreteTimeData
            The records.

        Raises
        ------
        ValueError
            For invalid times, events, covariates or sizes.
        """
        from ..data import check_survival, interval_index

        time, event = check_survival(time, event)
        basis = interval_basis(q, e) if basis is None else basis
        return cls(X, interval_index(time, q), event, basis)

    @property
    def n(self) -> int:
        return self.X.shape[0]

    @property
    def d(self) -> int:
        return self.X.shape[1]

    def subset(self, index) -> DiscreteTimeData:
        """The records ``index`` (a minibatch), same basis.

        Parameters
        ----------
        index : int array, slice or bool array
            The records to keep.

        Returns
        -------
        DiscreteTimeData
            The selected records.
        """
        return DiscreteTimeData(self.X[index], self.interval[index], self.event[index], self.basis)


#: Rows with 1 < ‖x‖ ≤ 1 + this are taken as rounding of a projection and scaled back onto the ball.
NORM_ROUNDING = 1e-12


def private_records(X, time, event, q, e) -> DiscreteTimeData:
    """Validated records: finite X with rows in the unit ball, times in [0, 1], events 0/1."""
    X = as_matrix(X)
    if not np.isfinite(X).all():
        raise ValueError("X contains NaN or infinite values")
    outside = row_scale_factors(X, 1.0 + NORM_ROUNDING) < 1.0  # norms that cannot overflow
    if outside.any():  # the domain is fixed (no public argument moves it); no norm or count is named
        raise ValueError(
            f"X has rows with ‖x‖ > 1 (first in row {int(np.argmax(outside))}); "
            "project them into the unit ball with public bounds first (scale_covariates / flchain_unit_ball)"
        )
    X = project_rows(X, 1.0)
    q, e = check_count("q", q), check_count("e", e, 2)
    return DiscreteTimeData.from_times(X, time, event, q=q, e=e)

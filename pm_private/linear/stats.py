"""Sufficient statistics of linear regression (Sxx, Sxy, Syy, n), exact or released, and their layout.

For rows xᵢ ∈ ℝᵈ and responses yᵢ the Gaussian linear-regression likelihood depends on the data
only through Sxx = Σ xᵢxᵢᵀ, Sxy = Σ xᵢyᵢ, Syy = Σ yᵢ² and n (Honkela et al. 2018, §Methods).
:class:`LinearStats` holds them, exact or noisy; statistics of disjoint sets of records add.

The intercept.  A regression with an intercept, y = α + xᵀβ + e, is the regression without one
on the rows (1, xᵢ): its statistics are those of the design with a constant first column, whose
entries are n, the first moments Σxᵢ and Σyᵢ beside the second moments.  The releases and
:func:`linear_stats` prepend that column by default (``intercept=True``), so the coefficients are
those of the usual regression with an intercept whatever public centring was applied; the
column is named ``intercept`` and counts in d.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .._engine.dask import is_dask
from ..privacy.primitives import (
    symmetric_entry_weights,
)
from ..privacy.relations import ADD_REMOVE
from ..privacy.release import Release, output, public
from ..privacy.validation import (
    as_float_array,
    as_matrix,
    as_vector,
    check_bool,
    check_count,
    check_feature_names,
)
from .accumulate import accumulate

__all__ = ["LinearStats", "frobenius_weights", "stat_pairs", "stat_vector", "linear_stats"]


@dataclass(frozen=True, eq=False)
class LinearStats:
    """Sufficient statistics (Sxx, Sxy, Syy, n), exact or noisy, immutable.

    Statistics of disjoint sets of records add: ``public_stats + private_release`` combines
    non-private and private rows as Honkela et al. (2018) does.  ``releases`` lists the private releases
    the statistics contain (empty when exact); their noise scales are what a noise-aware model
    needs.  ``exact_part`` holds the exact (public) statistics contained in a sum with private
    releases (None when there are none, or when the statistics are all exact), so that a
    noise-aware model can use them exactly.  No raw rows are kept.

    Parameters
    ----------
    xx : array_like
        Sxx = Σ xᵢxᵢᵀ, d × d.
    xy : array_like
        Sxy = Σ xᵢyᵢ, length d.
    yy : float
        Syy = Σ yᵢ².
    n : int or None
        The number of records; None where a release it contains was made under add/remove
        neighbours (n private: :attr:`n_estimate` is then the noisy count).
    releases : tuple of LinearStatsLaplaceRelease or LinearStatsRelease, default ()
        The private releases the statistics contain (empty when exact).
    exact_part : LinearStats, optional
        The exact statistics contained in a sum with private releases.
    intercept : bool, optional
        True when the first column of the design is the constant 1 (the statistics then hold n,
        Σxᵢ and Σyᵢ in its row), as the releases and :func:`linear_stats` build it by default.
        Default: what the releases recorded (False for exact statistics).

    Raises
    ------
    ValueError
        If ``xx`` is not d × d for ``xy`` of length d, a statistic is not finite, ``n`` is
        not an integer ≥ 1 (or is not None exactly when a release keeps n private), or
        ``intercept`` disagrees with a release the statistics contain.
    """

    family: ClassVar[str] = "linear"

    xx: np.ndarray = output()
    xy: np.ndarray = output()
    yy: float = output()
    n: int | None = public()
    releases: tuple[Release, ...] = public(default=())
    exact_part: LinearStats | None = public(default=None, repr=False)
    intercept: bool | None = public(default=None)

    def __post_init__(self):
        xx = as_float_array(self.xx, "xx").copy()
        xy = as_float_array(self.xy, "xy").copy()
        d = xy.shape[0] if xy.ndim == 1 else -1
        if xx.shape != (d, d) or d < 1:
            raise ValueError(f"xx must be d×d and xy length d ≥ 1, got {xx.shape} and {xy.shape}")
        yy = as_float_array(self.yy, "yy")
        if yy.ndim != 0:
            raise ValueError(f"yy must be one number, got shape {yy.shape}")
        for name, value in (("xx", xx), ("xy", xy), ("yy", yy)):
            if not np.isfinite(value).all():
                raise ValueError(f"{name} must be finite (NaN or infinite entries given)")
        if not isinstance(self.releases, tuple):
            raise ValueError(f"releases must be a tuple of releases, got {type(self.releases).__name__}")
        xx.flags.writeable = False
        xy.flags.writeable = False
        object.__setattr__(self, "xx", xx)
        object.__setattr__(self, "xy", xy)
        object.__setattr__(self, "yy", float(yy))
        if self.private_n:
            if self.n is not None:
                raise ValueError("n must be None for statistics with a release under add/remove neighbours (n private)")
        else:
            object.__setattr__(self, "n", check_count("n", self.n))
        recorded = {bool(getattr(release, "intercept", False)) for release in self.releases}
        if self.intercept is None:
            if len(recorded) > 1:
                raise ValueError(
                    "the releases disagree on 'intercept' (the constant column): some have it, some do not"
                )
            object.__setattr__(self, "intercept", recorded.pop() if recorded else False)
        object.__setattr__(self, "intercept", check_bool("intercept", self.intercept))
        if self.exact_part is not None and (
            self.exact_part.releases or self.exact_part.d != d or self.exact_part.intercept != self.intercept
        ):
            raise ValueError("exact_part must be exact statistics of the same d and intercept")
        for release in self.releases:
            check_feature_names(release, d)
            if bool(getattr(release, "intercept", False)) != self.intercept:
                raise ValueError(
                    f"intercept={self.intercept} disagrees with a release whose intercept is "
                    f"{bool(getattr(release, 'intercept', False))}"
                )

    @property
    def public(self) -> LinearStats | None:
        """The exact statistics contained in these (all of them when exact; None if there are none)."""
        return self if self.is_exact else self.exact_part

    @property
    def d(self) -> int:
        """Number of features."""
        return self.xy.shape[0]

    @property
    def private_n(self) -> bool:
        """True when a release of the statistics was made under add/remove neighbours (n private)."""
        return any(getattr(r, "neighbours", None) == ADD_REMOVE for r in self.releases)

    @property
    def n_estimate(self) -> float:
        """n, or where n is private the exact part's count plus each release's noisy count (each at
        least 1): what post-processing of the statistics divides by."""
        if self.n is not None:
            return float(self.n)
        exact = self.exact_part.n if self.exact_part is not None else 0
        return float(exact) + sum(r.n_estimate for r in self.releases)

    @property
    def n_noise_var(self) -> float:
        """The noise variance of :attr:`n_estimate` (0 where n is public)."""
        return sum(r.count_sd**2 for r in self.releases if r.n is None)

    @property
    def feature_names(self) -> tuple[str, ...] | None:
        """The column names the private releases recorded (``features``, from data frames), when
        every release that recorded names recorded the same ones; None otherwise."""
        names = {r.features for r in self.releases if r.features is not None}
        return names.pop() if len(names) == 1 else None

    @property
    def is_exact(self) -> bool:
        """True when no noise was added (statistics of public data)."""
        return not self.releases

    def __add__(self, other: LinearStats) -> LinearStats:
        if not isinstance(other, LinearStats):
            return NotImplemented
        if other.d != self.d:
            raise ValueError(f"cannot add statistics with d = {self.d} and d = {other.d}")
        if other.intercept != self.intercept:
            raise ValueError("cannot add statistics with an intercept column to statistics without one")
        exact = [part for part in (self.public, other.public) if part is not None]
        releases = self.releases + other.releases
        if releases and exact:
            exact_part = exact[0] if len(exact) == 1 else exact[0] + exact[1]
        else:
            exact_part = None
        return LinearStats(
            self.xx + other.xx,
            self.xy + other.xy,
            self.yy + other.yy,
            None if self.n is None or other.n is None else self.n + other.n,
            releases,
            exact_part,
            self.intercept,
        )

    def __repr__(self) -> str:
        count = "n private" if self.n is None else f"n={self.n}"
        shape = f"{count}, d={self.d}" + (" (intercept first)" if self.intercept else "")
        if self.is_exact:
            return f"LinearStats({shape}, exact)"
        private = sum(1 for r in self.releases if r.private)
        seeded = len(self.releases) - private
        counts = [f"{private} private release(s)"] if private else []
        if seeded:  # seeded noise carries no guarantee: the statistics are not private
            counts = ["not private (seeded)", *counts, f"{seeded} seeded release(s)"]
        return f"LinearStats({shape}, {', '.join(counts)})"


def linear_stats(X, y, *, intercept: bool = True) -> LinearStats:
    """Exact statistics (Sxx, Sxy, Syy, n) of public data: no clipping, no noise, no budget.

    Sxx = Σ xᵢxᵢᵀ, Sxy = Σ xᵢyᵢ, Syy = Σ yᵢ² (Honkela et al. 2018) in one pass over the rows,
    of the design (1, xᵢ) with an intercept column (the default) or of xᵢ alone.
    Accepts numpy arrays and pandas objects, or Dask collections (``dask.array``,
    ``dask.dataframe``, e.g. Parquet columns read lazily), whose partitions
    are reduced where they live and summed in a tree.

    Parameters
    ----------
    X : array_like or dask collection, shape (n, d)
        Public covariates.
    y : array_like or dask collection, shape (n,)
        Public responses.
    intercept : bool, default True
        Prepend a constant column of ones (named ``intercept``), as the releases do by default:
        statistics to be added to a release must agree with it.

    Returns
    -------
    LinearStats
        The exact statistics (no releases), d + 1 columns with the intercept.

    Raises
    ------
    ValueError
        For a NaN or infinite value (naming the first bad row, and its partition for Dask input),
        mismatched shapes, or products that overflow.
    """
    intercept = check_bool("intercept", intercept)
    if is_dask(X) or is_dask(y):
        from .dask_reduce import partitioned_suff_stats

        return LinearStats(*partitioned_suff_stats(X, y, None, None, intercept=intercept)[:4], intercept=intercept)
    X = as_matrix(X)
    y = as_vector(y, X.shape[0])
    with np.errstate(over="ignore", invalid="ignore"):  # overflow is refused just below
        xx, xy, yy, _ = accumulate(X, y, None, None, intercept=intercept)
    if not (np.isfinite(xx).all() and np.isfinite(xy).all() and math.isfinite(yy)):
        raise ValueError("X and y are too large: their products overflow (rescale them)")
    return LinearStats(xx, xy, yy, X.shape[0], intercept=intercept)


def stat_pairs(d: int) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs (a, b) into z = (x, y) of the released statistics, in release order:
    the upper triangle of Sxx (``np.triu_indices(d)``), then Sxy (j, d), then Syy (d, d).

    Parameters
    ----------
    d : int
        The number of covariates.

    Returns
    -------
    a, b : numpy.ndarray
        The row and column indices into zzᵀ, each of length (d+1)(d+2)/2.
    """
    upper = np.triu_indices(d)
    a = np.concatenate([upper[0], np.arange(d), [d]])
    b = np.concatenate([upper[1], np.full(d, d), [d]])
    return a, b


def stat_vector(xx, xy, yy) -> np.ndarray:
    """The (d+1)(d+2)/2 statistics as one vector in release order (:func:`stat_pairs`):
    upper Sxx, Sxy, Syy.

    Parameters
    ----------
    xx : array_like
        Sxx, d × d.
    xy : numpy.ndarray
        Sxy, length d.
    yy : float
        Syy.

    Returns
    -------
    numpy.ndarray
        The statistics as one vector.
    """
    d = xy.shape[0]
    return np.concatenate([np.asarray(xx)[np.triu_indices(d)], xy, [yy]])


def frobenius_weights(d: int) -> np.ndarray:
    """Weights w of the (d+1)(d+2)/2 distinct entries of zzᵀ, z = (x, y) ∈ ℝᵈ⁺¹, in release order
    (:func:`stat_pairs`): 1 on the diagonal (Sxx diagonal, Syy), √2 off it (Sxx off-diagonal, Sxy),
    so that ‖w ⊙ upper(M)‖₂ = ‖M‖_F for every symmetric M.

    Parameters
    ----------
    d : int
        The number of covariates.

    Returns
    -------
    numpy.ndarray
        The (d+1)(d+2)/2 weights.
    """
    return symmetric_entry_weights(*stat_pairs(d))

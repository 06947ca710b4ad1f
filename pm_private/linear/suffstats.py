"""Sufficient statistics of linear regression and their private release (Honkela et al. 2018, §Methods).

For rows xᵢ ∈ ℝᵈ and responses yᵢ the statistics are Sxx = Σ xᵢxᵢᵀ, Sxy = Σ xᵢyᵢ,
Syy = Σ yᵢ² and n; the Gaussian linear-regression likelihood depends on the data only
through them.  :func:`release_suff_stats` releases them with ε-DP:

1. projection (clipping): xᵢⱼ ← clip(xᵢⱼ, −Bx, Bx), yᵢ ← clip(yᵢ, −By, By);
2. Laplace noise with budget split p₁ + p₂ + p₃ = 1 (sequential composition gives ε):
   Sxx + P, P symmetric with its d(d+1)/2 upper-triangle entries iid Laplace(0, d(d+1)Bx²/(p₁ε)),
   Sxy + Q, Qⱼ iid Laplace(0, 2dBxBy/(p₂ε)), Syy + R, R ~ Laplace(0, By²/(p₃ε)).

The noise scales are ℓ1 sensitivity / (pₖε) under replace-one neighbours: every entry of
xxᵀ lies in [−Bx², Bx²], so replacing one row moves each of the d(d+1)/2 released entries by at
most 2Bx², the paper's d(d+1)Bx²; each xⱼy ∈ [−BxBy, BxBy] gives 2dBxBy; y² ∈ [0, By²] gives
By².  The Sxx bound is valid but not tight: the exact worst case is d(d+1)Bx²/2 (a row on a
corner of the box replaced by a zero row; the test suite checks it exhaustively for
d ≤ 4), so the Sxx share is in fact (p₁ε/2)-DP.  pm_private keeps the paper's scale so that
results match Honkela et al. (2018); the stated guarantee (ε-DP) is then conservative.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from .preprocessing import Preprocessing
from ..privacy.accounting import REPLACE_ONE, PrivacyAccountant, charge
from ..privacy.noise import as_noise_source, laplace_mechanism
from ..privacy.validation import as_matrix, as_vector, check_epsilon, check_positive, raise_non_finite

__all__ = ["ReleaseInfo", "SuffStats", "suff_stats", "release_suff_stats", "sensitivities"]

# Rows per chunk are chosen so that one chunk holds about this many float64 values (512 KiB, in L2 cache):
# clipping works in cache and peak extra memory stays bounded (one chunk per thread) whatever n is.
_CHUNK_VALUES = 1 << 16


@dataclass(frozen=True)
class ReleaseInfo:
    """What one private release of sufficient statistics assumed and added.

    ``epsilon`` is the total; ``epsilon_parts`` the per-statistic ε (pₖε) and
    ``epsilon_certified`` what the noise sampler certifies for them (OpenDP's privacy map;
    equal to ``epsilon_parts`` up to rounding).  ``noise_scales`` are Δₖ/(pₖε), enlarged by a
    relative 2e-9 with secure noise to cover OpenDP's rounding to its grid.  ``private`` is False when a seeded generator
    drew the noise: such a result is for testing only.  ``preprocessing`` is the public map
    applied to (X, y) before clipping (None: none), so that predictions apply it again.
    """

    epsilon: float
    split: tuple[float, float, float]
    x_bound: float
    y_bound: float
    sensitivities: tuple[float, float, float]
    noise_scales: tuple[float, float, float]
    epsilon_parts: tuple[float, float, float]
    epsilon_certified: tuple[float, float, float]
    n: int
    private: bool
    neighbours: str = REPLACE_ONE
    mechanism: str = "clipped Laplace sufficient statistics (Honkela et al. 2018)"
    preprocessing: Preprocessing | None = None


@dataclass(frozen=True, eq=False)
class SuffStats:
    """Sufficient statistics (Sxx, Sxy, Syy, n), exact or noisy, immutable.

    Statistics of disjoint sets of records add: ``public_stats + private_release`` combines
    non-private and private rows as Honkela et al. (2018) does.  ``releases`` lists the private releases
    the statistics contain (empty when exact); their noise scales are what a noise-aware model
    needs.  ``exact_part`` holds the exact (public) statistics contained in a sum with private
    releases (None when there are none, or when the statistics are all exact), so that a
    noise-aware model can use them exactly.  No raw rows are kept.
    """

    xx: np.ndarray
    xy: np.ndarray
    yy: float
    n: int
    releases: tuple[ReleaseInfo, ...] = field(default=())
    exact_part: "SuffStats | None" = field(default=None, repr=False)

    def __post_init__(self):
        xx = np.array(self.xx, dtype=np.float64)
        xy = np.array(self.xy, dtype=np.float64)
        d = xy.shape[0] if xy.ndim == 1 else -1
        if xx.shape != (d, d):
            raise ValueError(f"xx must be d×d and xy length d, got {xx.shape} and {xy.shape}")
        xx.flags.writeable = False
        xy.flags.writeable = False
        object.__setattr__(self, "xx", xx)
        object.__setattr__(self, "xy", xy)
        object.__setattr__(self, "yy", float(self.yy))
        object.__setattr__(self, "n", int(self.n))
        if self.exact_part is not None and (self.exact_part.releases or self.exact_part.d != d):
            raise ValueError("exact_part must be exact statistics of the same d")

    @property
    def public(self) -> "SuffStats | None":
        """The exact statistics contained in these (all of them when exact; None if there are none)."""
        return self if self.is_exact else self.exact_part

    @property
    def d(self) -> int:
        """Number of features."""
        return self.xy.shape[0]

    @property
    def is_exact(self) -> bool:
        """True when no noise was added (statistics of public data)."""
        return not self.releases

    def __add__(self, other: "SuffStats") -> "SuffStats":
        if not isinstance(other, SuffStats):
            return NotImplemented
        if other.d != self.d:
            raise ValueError(f"cannot add statistics with d = {self.d} and d = {other.d}")
        exact = [part for part in (self.public, other.public) if part is not None]
        releases = self.releases + other.releases
        if releases and exact:
            exact_part = exact[0] if len(exact) == 1 else exact[0] + exact[1]
        else:
            exact_part = None
        return SuffStats(
            self.xx + other.xx,
            self.xy + other.xy,
            self.yy + other.yy,
            self.n + other.n,
            releases,
            exact_part,
        )

    def __repr__(self) -> str:
        kind = "exact" if self.is_exact else f"{len(self.releases)} private release(s)"
        return f"SuffStats(n={self.n}, d={self.d}, {kind})"


def sensitivities(d: int, x_bound: float, y_bound: float) -> tuple[float, float, float]:
    """ℓ1 sensitivities (Sxx upper triangle, Sxy, Syy) under replace-one: (d(d+1)Bx², 2dBxBy, By²)."""
    return d * (d + 1) * x_bound**2, 2 * d * x_bound * y_bound, y_bound**2


def _accumulate_rows(X, y, x_bound, start: int, stop: int):
    """Sxx and Sxy of rows start…stop−1, chunk by chunk: check finiteness, clip, multiply."""
    d = X.shape[1]
    rows = max(1, _CHUNK_VALUES // d)
    xx = np.zeros((d, d))
    xy = np.zeros(d)
    buffer = np.empty((min(rows, stop - start), d))
    for first in range(start, stop, rows):
        chunk = X[first : min(first + rows, stop)]
        if not np.isfinite(chunk).all():
            raise_non_finite(chunk, first)
        if x_bound is not None:
            chunk = np.clip(chunk, -x_bound, x_bound, out=buffer[: len(chunk)])
        xx += chunk.T @ chunk
        xy += chunk.T @ y[first : first + len(chunk)]
    return xx, xy


def _accumulate(X: np.ndarray, y: np.ndarray, x_bound: float | None, y_bound: float | None):
    """One pass over (X, y): check finiteness, clip, accumulate Sxx, Sxy, Syy.

    The rows are cut into one contiguous block per CPU (numpy releases the GIL in the clip and
    the product, so the blocks run in parallel threads, as BLAS does for a plain ``X.T @ X``);
    each block is processed in cache-sized chunks, so peak extra memory is one chunk per thread.
    A non-finite value raises for the first offending row: the blocks are collected in order.
    """
    n = X.shape[0]
    if y_bound is not None:
        y = np.clip(y, -y_bound, y_bound)
    rows = max(1, _CHUNK_VALUES // X.shape[1])
    workers = max(1, min(os.cpu_count() or 1, n // (4 * rows)))
    if workers == 1:
        xx, xy = _accumulate_rows(X, y, x_bound, 0, n)
    else:
        edges = [(n * k // workers) // rows * rows for k in range(workers)] + [n]
        with ThreadPoolExecutor(workers) as pool:
            parts = list(pool.map(lambda k: _accumulate_rows(X, y, x_bound, edges[k], edges[k + 1]), range(workers)))
        xx = sum(part[0] for part in parts)
        xy = sum(part[1] for part in parts)
    return xx, xy, float(y @ y)


def suff_stats(X, y) -> SuffStats:
    """Exact statistics (Sxx, Sxy, Syy, n) of public data: no clipping, no noise, no budget.

    Accepts numpy arrays and pandas objects; raises ValueError for NaN/inf or mismatched shapes.
    """
    X = as_matrix(X)
    y = as_vector(y, X.shape[0])
    xx, xy, yy = _accumulate(X, y, None, None)
    return SuffStats(xx, xy, yy, X.shape[0])


def _check_split(split) -> tuple[float, float, float]:
    try:
        parts = tuple(float(p) for p in split)
    except (TypeError, ValueError):
        raise ValueError(f"split must be three numbers, got {split!r}") from None
    if len(parts) != 3 or not all(np.isfinite(p) and p > 0 for p in parts):
        raise ValueError(f"split must be three finite numbers > 0, got {split!r}")
    if abs(sum(parts) - 1) > 1e-9:
        raise ValueError(f"split must sum to 1, got {split!r} (sum {sum(parts)!r})")
    return parts


def release_suff_stats(
    X,
    y,
    *,
    epsilon: float,
    x_bound: float,
    y_bound: float,
    split=(0.60, 0.35, 0.05),
    accountant: PrivacyAccountant | None = None,
    rng=None,
    preprocessing: Preprocessing | None = None,
) -> SuffStats:
    """ε-DP release of clipped sufficient statistics (Honkela et al. 2018, Eqs. 5–7).

    Privacy: ε-DP (pure) under replace-one neighbours (n is public), by sequential composition
    of three Laplace mechanisms with ε·split.  Public inputs: ``x_bound`` (Bx), ``y_bound`` (By),
    ``split``, n and d.  The guarantee is exact for the secure default ``rng=None`` (OpenDP's
    exact discrete Laplace, see :mod:`pm_private.privacy.noise`); a seeded ``rng`` gives reproducible
    noise and a result marked ``private=False``.

    Parameters
    ----------
    X : array-like, shape (n, d)
        Private covariates; entries are clipped to [−x_bound, x_bound].
    y : array-like, shape (n,)
        Private responses; clipped to [−y_bound, y_bound].
    epsilon : float
        Total privacy budget of the release, > 0.
    x_bound, y_bound : float
        Public clipping bounds Bx, By > 0 (choose them with :func:`pm_private.tune_release`,
        never from the private data).
    split : (p₁, p₂, p₃)
        Budget shares of Sxx, Sxy, Syy; positive, summing to 1.
    accountant : PrivacyAccountant, optional
        Charged ε (δ = 0) before noise is drawn; refuses with BudgetExceededError if over budget.
    rng : None, int or numpy.random.Generator
        None for the secure OS generator (private); a seed only for tests.
    preprocessing : Preprocessing, optional
        Public map applied to X and y before clipping (bounds are on the transformed scale); it
        is stored in the release metadata so that predictions apply the same map to new X.

    Returns
    -------
    SuffStats
        ``xx`` (d×d, symmetric), ``xy`` (d), ``yy``, ``n`` and ``releases[0]`` with the metadata.
    """
    epsilon = check_epsilon(epsilon)
    x_bound = check_positive("x_bound", x_bound)
    y_bound = check_positive("y_bound", y_bound)
    split = _check_split(split)
    if preprocessing is not None and not isinstance(preprocessing, Preprocessing):
        raise ValueError(f"preprocessing must be a Preprocessing, got {type(preprocessing).__name__}")
    X = as_matrix(X)
    n, d = X.shape
    y = as_vector(y, n)
    if preprocessing is not None:
        X = preprocessing.transform_x(X)
        y = preprocessing.transform_y(y)
    source = as_noise_source(rng)

    sens = sensitivities(d, x_bound, y_bound)
    eps_parts = tuple(p * epsilon for p in split)
    with charge(accountant, "release_suff_stats", epsilon, label=f"n={n}, d={d}"):
        xx, xy, yy = _accumulate(X, y, x_bound, y_bound)
        upper = np.triu_indices(d)
        parts = [
            laplace_mechanism(stat, sensitivity=s, epsilon=e, source=source)
            for stat, s, e in zip((xx[upper], xy, [yy]), sens, eps_parts)
        ]
        xx = np.zeros((d, d))
        xx[upper] = parts[0].values
        xx = xx + np.triu(xx, 1).T
        info = ReleaseInfo(
            epsilon=epsilon,
            split=split,
            x_bound=x_bound,
            y_bound=y_bound,
            sensitivities=sens,
            noise_scales=tuple(part.scale for part in parts),
            epsilon_parts=eps_parts,
            epsilon_certified=tuple(part.epsilon for part in parts),
            n=n,
            private=source.secure,
            preprocessing=preprocessing,
        )
        return SuffStats(xx, parts[1].values, parts[2].values[0], n, (info,))

"""A covariate law matched to what a release already made public: the released first and second
moments of x and each column's declared kind, as a fixed set of reference rows.

The noise-aware GLMs need expectations E[g(a)·(1, x)], a = xᵀβ + b, over the covariates' law, and
the survival regression the same of each exit's probability
(``pm_private.survival.regression.covariate_law``).  The
Gaussian law gets the part of g linear in a right and misses the rest on binary or skewed columns;
the public-rows law gets the shape from m public rows but pays for their Monte Carlo error (about
n/√m on a released sum) with intervals far wider than the private rows allow.  The reference law
takes the shape from public facts instead — which columns are binary (levels 0 and 1 before the
release's preprocessing), the release's noisy means and covariances of x, and, where the release
kept public rows, the marginal shape of each continuous column — and is integrated on N fixed
rows (N in the thousands, growing with n: :func:`~pm_private.released.reference_size`), so its integration error is
small against the statistics' spread:

* a latent Gaussian copula (Nelsen 2006, §2.10): rows uₖ of a scrambled Sobol' sequence
  (Owen 1998; fixed seed, no data), latent wₖ = L·Φ⁻¹(uₖ) with LLᵀ = R a correlation matrix;
* a binary column is 1 where wₖⱼ + Φ⁻¹(pⱼ) > 0 (increasing in wₖⱼ), with pⱼ the released mean
  mapped back to the raw scale, so its share of ones is the released one;
* the indicators of one categorical covariate's levels follow a multinomial probit: row k is in
  level l where wₖₗ + cₗ is the largest of its levels' and above 0, the reference level's
  (McFadden 1989), the offsets cₗ tuned by iterations cₗ ← cₗ + log(pₗ/p̂ₗ) to the released
  shares, so that at most one indicator is 1;
* a continuous column is the public rows' empirical quantile at Φ(wₖⱼ) (its shape; linear
  interpolation between order statistics), or Gaussian without public rows, then moved onto the
  released mean and standard deviation;
* R starts at the released correlation matrix and is corrected by fixed-point iterations
  R ← R + (R_target − R_achieved) (off the diagonal, kept positive definite) until the rows'
  correlation matches the released one (binary columns attenuate their latent correlations).

The model then moves these rows affinely onto each posterior draw's (μ, Σx), exactly as it moves
public rows, so the law's mean and covariance are the model's and only its shape is fixed.  All
inputs are released values, public constants and declarations: building the law is
post-processing, at no privacy cost.  What it cannot know — dependence beyond correlations, a
binary column's interplay with a skewed one — is an assumption, checked on data in the project's
calibration benchmarks.

References: McFadden, D. (1989). A method of simulated moments for estimation of discrete response
models without numerical integration. Econometrica 57(5), 995–1026.  Nelsen, R. B. (2006). An
Introduction to Copulas, 2nd ed. Springer.  Owen, A. B.
(1998). Scrambling Sobol' and Niederreiter–Xing points. Journal of Complexity 14(4), 466–489.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special
from scipy.stats import qmc

from ..privacy.primitives import project_rows
from .preprocessing import affine_vectors, check_column_kinds

__all__ = [
    "ReferenceLaw",
    "copula_rows",
    "rare_level_warning",
    "reference_law",
    "reference_size",
    "released_covariate_moments",
]

#: The fixed seed of the scrambled Sobol' sequence: a public constant, so the rows depend on
#: released values and declarations only.
SOBOL_SEED = 20261203

#: Fixed-point iterations of the latent correlation.
CORRELATION_ITERATIONS = 8

#: Largest latent correlation in absolute value.
CORRELATION_LIMIT = 0.995


@dataclass(frozen=True)
class ReferenceLaw:
    """The reference covariate law of a release (:func:`reference_law`): rows on the release's
    original scale, passed as ``x_sample`` to a GLM model.

    Parameters
    ----------
    rows : numpy.ndarray, shape (N, d)
        The reference rows, raw (the release's preprocessing is applied by the model).
    kinds : tuple of str
        Each column's declared kind.
    """

    rows: np.ndarray
    kinds: tuple[str, ...]

    def __len__(self) -> int:
        return self.rows.shape[0]


def _nearest_correlation(matrix: np.ndarray) -> np.ndarray:
    """A positive-definite correlation matrix near ``matrix``: eigenvalues floored at 10⁻³ of the
    largest, then rescaled to a unit diagonal."""
    sym = (matrix + matrix.T) / 2.0
    values, vectors = np.linalg.eigh(sym)
    values = np.maximum(values, 1e-3 * max(values.max(), 1e-12))
    fixed = (vectors * values) @ vectors.T
    scale = 1.0 / np.sqrt(np.diag(fixed))
    return fixed * scale[:, None] * scale[None, :]


def _marginal(latent: np.ndarray, column: np.ndarray | None) -> np.ndarray:
    """A continuous column from its latent normal values: the public column's empirical quantile at
    Φ(w) (linear between order statistics), or w itself without one; standardised."""
    if column is None:
        values = latent
    else:
        ordered = np.sort(column)
        grid = (np.arange(ordered.size) + 0.5) / ordered.size
        values = np.interp(special.ndtr(latent), grid, ordered)
    spread = values.std()
    return (values - values.mean()) / (spread if spread > 0 else 1.0)


def _levels(latent: np.ndarray, offset: np.ndarray, groups: np.ndarray, j: int) -> np.ndarray:
    """Whether each row falls in column j's level: the level of its categorical whose latent plus
    offset is the largest, against 0 for the reference level (a multinomial probit)."""
    members = np.flatnonzero(groups == groups[j])
    scores = latent[:, members] + offset[members]
    best = scores.max(axis=1)
    return (latent[:, j] + offset[j] >= best) & (best > 0.0)


def copula_rows(mean, cov, kinds, size: int = 4096, *, public=None, low=None, high=None) -> np.ndarray:
    """Rows of the Gaussian copula with these column kinds (module notes).

    Parameters
    ----------
    mean : array_like, shape (d,)
        Target means.
    cov : array_like, shape (d, d)
        Target covariance (its correlations are matched; a noisy, indefinite one is repaired).
    kinds : sequence of str, length d
        "binary", "continuous" or "categorical:<name>" (the indicator of one level of the
        categorical <name>, its reference level dropped: the columns of one name are never 1
        together).
    size : int, default 4096
        The number of rows N (a power of two keeps the Sobol' points balanced).
    public : array_like, shape (m, d), optional
        Public rows on the same scale: each continuous column takes their marginal shape.
    low, high : array_like, shape (d,), optional
        The two levels of each binary or indicator column on this scale (default 0 and 1).

    Returns
    -------
    numpy.ndarray, shape (size, d)
        Binary and indicator columns at their two levels with share of ``high``
        (mean − low)/(high − low), clipped to [2/N, 1 − 2/N]; continuous columns with the target
        mean and standard deviation; correlations matched to those of ``cov`` as nearly as the
        kinds allow.
    """
    mean, cov = np.asarray(mean, dtype=np.float64), np.asarray(cov, dtype=np.float64)
    d = mean.size
    names = sorted({kind for kind in kinds if kind.startswith("categorical:")})
    groups = np.array([names.index(kind) if kind in names else -1 for kind in kinds])
    two_level = np.array([kind != "continuous" for kind in kinds])
    low = np.zeros(d) if low is None else np.asarray(low, dtype=np.float64)
    high = np.ones(d) if high is None else np.asarray(high, dtype=np.float64)
    sd = np.sqrt(np.maximum(np.diag(cov), 1e-12))
    target = _nearest_correlation(cov / sd[:, None] / sd[None, :])
    share = np.clip((mean - low) / (high - low), 2.0 / size, 1.0 - 2.0 / size)
    offset = special.ndtri(share)  # binary: 1 where latent + offset > 0
    normals = special.ndtri(qmc.Sobol(d, scramble=True, seed=SOBOL_SEED).random(size))
    normals = (normals - normals.mean(axis=0)) / normals.std(axis=0)
    columns = [None if public is None else np.asarray(public, dtype=np.float64)[:, j] for j in range(d)]

    def rows_for(corr):
        latent = normals @ np.linalg.cholesky(corr).T
        out = np.empty_like(latent)
        for j in range(d):
            if two_level[j]:
                hit = _levels(latent, offset, groups, j) if groups[j] >= 0 else latent[:, j] + offset[j] > 0.0
                out[:, j] = np.where(hit, high[j], low[j])
            else:
                out[:, j] = mean[j] + sd[j] * _marginal(latent[:, j], columns[j])
        return out

    latent_corr = target.copy()
    for _ in range(CORRELATION_ITERATIONS):
        rows = rows_for(latent_corr)
        achieved = np.corrcoef(rows, rowvar=False) if d > 1 else np.ones((1, 1))
        step = np.nan_to_num(target - achieved)
        np.fill_diagonal(step, 0.0)
        latent_corr = _nearest_correlation(np.clip(latent_corr + step, -CORRELATION_LIMIT, CORRELATION_LIMIT))
        got = np.clip((rows.mean(axis=0) - low) / (high - low), 0.5 / size, 1.0)
        offset = np.where(groups >= 0, offset + np.log(share / got), offset)  # the levels' shares
    return rows_for(latent_corr)


def _kinds(kinds, d: int, features) -> tuple[str, ...]:
    """Each column's kind from a mapping (feature name or index → kind; others continuous) or a
    sequence of d kinds."""
    if isinstance(kinds, dict):
        names = [str(v) for v in features] if features is not None else [f"x{j}" for j in range(d)]
        out = ["continuous"] * d
        for key, kind in kinds.items():
            if isinstance(key, (int, np.integer)) and 0 <= key < d:
                out[int(key)] = kind
            elif str(key) in names:
                out[names.index(str(key))] = kind
            else:
                raise ValueError(f"kinds: {key!r} is neither a feature name {names} nor a column index below {d}")
    else:
        out = list(kinds)
        if len(out) != d:
            raise ValueError(f"kinds must name {d} columns, one kind each, got {len(out)}")
    return check_column_kinds("kinds", out)


#: A binary column's released share of ones within this many noise s.d. of 0 or 1 makes
#: :func:`rare_level_warning` warn.
RARE_LEVEL_NOISE_SDS = 2.0


def rare_level_warning(stats, law: ReferenceLaw) -> str | None:
    """The warning a GLM or survival regression fit on a reference law raises where a binary
    column's level is rarer than the release's noise can resolve, or None; from released values
    and public figures only (post-processing).

    A binary column's released share of ones is p̂ⱼ = cⱼ + sⱼ·(Σx)ⱼ/n (cⱼ, sⱼ its public centre and
    scale), with noise s.d. sⱼ·σⱼ/n (σⱼ the noise s.d. of (Σx)ⱼ).  Where min(p̂ⱼ, 1 − p̂ⱼ) is below
    ``RARE_LEVEL_NOISE_SDS`` times that s.d., the law's share of that level is mostly noise (the
    reference law clips it into [2/N, 1 − 2/N]), and so are the coefficient's interval and the
    column's part in the others'.

    Parameters
    ----------
    stats : LogisticStatsRelease, PoissonStatsRelease, SurvivalRegressionStatsRelease or exact statistics of those families
        The release the law was built from (for an exit table with covariate moments, Σx and its
        noise variance are those of the x sums added over cells and exits).
    law : ReferenceLaw
        Its reference law.

    Returns
    -------
    str or None
        The message, naming the columns and their figures.
    """
    if not hasattr(stats, "noise_variance"):
        return None
    d, n = stats.d, _released_count(stats)
    if hasattr(stats, "x_sums"):
        x_sum = np.asarray(stats.x_sums, dtype=np.float64).sum(axis=(0, 1))
        variance = np.asarray(stats.noise_variance()["x_sums"], dtype=np.float64).sum(axis=(0, 1))
    else:
        x_sum, variance = np.asarray(stats.x_sum, dtype=np.float64), np.asarray(stats.noise_variance())[:d]
    center, scale = affine_vectors(getattr(stats, "preprocessing", None), d)
    share = center + scale * x_sum / n
    noise = scale * np.sqrt(variance) / n
    features = getattr(stats, "features", None)
    names = [f"x{j}" for j in range(d)] if features is None else [str(v) for v in features]
    rare = [
        f"{names[j]} (released share {share[j]:.3g}, noise s.d. {noise[j]:.2g})"
        for j in range(d)
        if law.kinds[j] != "continuous" and min(share[j], 1.0 - share[j]) < RARE_LEVEL_NOISE_SDS * noise[j]
    ]
    if not rare:
        return None
    return (
        f"binary columns with a level rarer than the release's noise can resolve: {', '.join(rare)}; their "
        f"shares are within {RARE_LEVEL_NOISE_SDS:g} noise s.d. of 0 or 1, so the covariate law's share of that "
        "level, and the coefficient's interval, are mostly noise (merge the level, or release at a larger ε)"
    )


#: The fewest and the most reference rows of ``size="auto"``.
REFERENCE_ROWS = (2048, 32768)


def reference_size(n: int) -> int:
    """The number of reference rows N of ``size="auto"``: the power of two at or above n/6, within
    ``REFERENCE_ROWS``.

    The law's integration error on a released mean must stay small against the statistics'
    sampling s.d., which shrinks like 1/√n, while the error of N scrambled Sobol' points on these
    discontinuous integrands (binary columns) falls more slowly than 1/N.  Measured on a
    ten-column copula (three continuous, seven binary, one at 5 %): at n = 200,000 the largest
    error of E[σ(a)·(1, x)] was 3.5 sampling s.d. with N = 1,024, 3.0 with 16,384 (the 5 %
    column) and 0.3–0.5 with 32,768.

    Parameters
    ----------
    n : int
        The number of private rows.

    Returns
    -------
    int
        N.
    """
    low, high = REFERENCE_ROWS
    return int(min(high, max(low, 2 ** int(np.ceil(np.log2(max(n, 1) / 6.0))))))


def _cell_counts(stats) -> np.ndarray:
    """Each cell's noisy count of an exit table with covariate moments, at least 1."""
    return np.maximum(np.asarray(stats.counts, dtype=np.float64).sum(axis=1), 1.0)


def _released_count(stats) -> float:
    """n, or where n is private its noisy count: for an exit table with covariate moments the sum
    of :func:`_cell_counts`."""
    if hasattr(stats, "x_sums"):
        return float(stats.n) if stats.n is not None else float(_cell_counts(stats).sum())
    return stats.n_estimate


def released_covariate_moments(stats) -> tuple[np.ndarray, np.ndarray, float]:
    """The covariates' mean and covariance as a release gives them, on its scale, and its n: for a
    GLM release Σx/n and Sxx/n − x̄x̄ᵀ; for an exit table with covariate moments (cells with their own
    means and one covariance, as the survival regression models them) the pooled mean and the
    pooled within-cell covariance, Σ_c (Sxx_c − Σx_c·Σx_cᵀ/n_c)/n, each cell's n_c its noisy
    count (at least 1).  Post-processing of released values."""
    n = _released_count(stats)
    if hasattr(stats, "x_sums"):
        sums = np.asarray(stats.x_sums, dtype=np.float64).sum(axis=1)  # (K, d)
        counts = _cell_counts(stats)
        within = np.asarray(stats.xx, dtype=np.float64).sum(axis=0) - np.einsum(
            "ka,kb->ab", sums / counts[:, None], sums
        )
        return sums.sum(axis=0) / n, within / n, n
    mean = np.asarray(stats.x_sum, dtype=np.float64) / n
    return mean, np.asarray(stats.xx, dtype=np.float64) / n - np.outer(mean, mean), n


def reference_law(stats, kinds=None, *, size="auto") -> ReferenceLaw:
    """The reference covariate law of a GLM or survival regression release (module notes), to pass
    as ``x_sample`` to :func:`pm_private.logistic_model`, :func:`pm_private.poisson_model` or
    :func:`pm_private.survival_regression_model`.

    Built from the release's noisy Σx and Σxxᵀ (divided by n; ``released_covariate_moments``),
    its public preprocessing, its public
    rows (when it kept some: the continuous columns' marginal shape, after the release's
    preprocessing and projection onto its row bound, as the released rows) and the declared
    ``kinds``:
    post-processing of released values and public declarations, no privacy cost.

    Parameters
    ----------
    stats : LogisticStatsRelease, PoissonStatsRelease, SurvivalRegressionStatsRelease or exact statistics of those families
        The release.
    kinds : dict or sequence of str, optional
        Each column's kind, "binary" (raw levels 0 and 1), "continuous" or "categorical:<name>"
        (the 0/1 indicator of one level of the categorical <name>): a mapping from
        feature name (``stats.features``) or column index to kind, the others continuous; or one
        kind per column.  A public declaration about the data, not read from it.  None: the
        kinds the release's preprocessing declared (``Preprocessing.x_kinds``).
    size : int or "auto", default "auto"
        The number of reference rows N (≥ 256); the model's cost per gradient grows with it.
        ``"auto"``: :func:`~pm_private.released.reference_size` of the release's n (2,048 up to n ≈ 12,000, 32,768
        from n ≈ 100,000).

    Returns
    -------
    ReferenceLaw
        The rows (raw scale) and kinds.

    Raises
    ------
    ValueError
        Naming ``kinds`` (unknown kind or column, or none given nor declared by the release) or
        ``size`` (below 256).

    Examples
    --------
    >>> import numpy as np
    >>> import pm_private as pp
    >>> rng = np.random.default_rng(0)
    >>> X = np.column_stack([rng.normal(size=400), rng.random(400) < 0.3])
    >>> y = (rng.random(400) < 0.5).astype(float)
    >>> law = pp.reference_law(pp.logistic.logistic_stats(X, y), ["continuous", "binary"], size=512)
    >>> sorted(set(law.rows[:, 1]))
    [np.float64(0.0), np.float64(1.0)]
    """
    mean, cov, n = released_covariate_moments(stats)
    if isinstance(size, str) and size == "auto":
        size = reference_size(n)
    if not (isinstance(size, (int, np.integer)) and size >= 256):
        raise ValueError(f"size must be an integer ≥ 256 or 'auto', got {size!r}")
    d = stats.d
    prep = getattr(stats, "preprocessing", None)
    if kinds is None:
        kinds = getattr(prep, "x_kinds", None)
        if kinds is None:
            raise ValueError("kinds: give each column's kind; the release's preprocessing declares none (x_kinds)")
    declared = _kinds(kinds, d, getattr(stats, "features", None))
    center, scale = affine_vectors(prep, d)
    public = getattr(prep, "x_public", None)
    if public is not None:  # on the release's scale and, like the released rows, projected onto its ball
        public = (public - center) / scale
        public = public if stats.x_bound is None else project_rows(public, stats.x_bound)
    rows = copula_rows(mean, cov, declared, int(size), public=public, low=-center / scale, high=(1.0 - center) / scale)
    raw = center + scale * rows
    two_level = np.array([kind != "continuous" for kind in declared])
    raw[:, two_level] = np.round(raw[:, two_level])
    raw.flags.writeable = False
    return ReferenceLaw(rows=raw, kinds=declared)

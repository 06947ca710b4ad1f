"""Sufficient statistics of linear regression and their private release (Honkela et al. 2018, §Methods).

For rows xᵢ ∈ ℝᵈ and responses yᵢ the statistics are Sxx = Σ xᵢxᵢᵀ, Sxy = Σ xᵢyᵢ,
Syy = Σ yᵢ² and n; the Gaussian linear-regression likelihood depends on the data only
through them.  :func:`release_linear_stats_laplace` releases them with ε-DP (and
:func:`release_linear_stats` with (ε, δ)-DP, see its docstring):

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

How much was clipped
--------------------
Clipping is what bounds the sensitivity, and it changes the statistics: the coefficients they
describe are those of the clipped rows.  Both releases therefore also release, by default, two
counts in the same mechanism: the rows whose covariates the clipping changed and the responses
it clipped.  Each count moves by at most 1 when one record is replaced, so the pair has ℓ1 and
ℓ2 sensitivity 2 and √2.  They take the share ``clip_share`` (``CLIP_SHARE``, 5 %) of the
release's budget, so the accountant still sees one release of the caller's ε (and δ); a share
of 0 releases no counts.  :func:`clip_report` turns them into estimated fractions and warns
when they are large.

The intercept
-------------
Both releases prepend, by default, a constant column of ones to the covariates before they are
bounded (``intercept=True``): the statistics are then those of the design (1, xᵢ), holding n and
the first moments Σxᵢ, Σyᵢ besides the second moments, and a regression on them has an
intercept whatever public centring was applied.  The Gaussian release scales the constant with
its row (cᵢ·(1, xᵢ, yᵢ)), so the scaled rows keep both the intercept and the slopes; its row
then has ‖zᵢ‖² ≤ 1 + Bx² + By² and the sensitivity grows accordingly.  The Laplace release's
entrywise bound must then be at least 1 (the constant is never clipped) and its sensitivities
are those of d + 1 columns.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .._engine.dask import is_dask
from ..privacy.accountant import PrivacyAccountant, check_accountant
from ..privacy.noise import as_noise_source
from ..privacy.primitives import (
    check_gaussian_epsilon,
    check_gaussian_scale_field,
    check_noise_scale,
    gaussian_mechanism,
    laplace_mechanism,
    row_scale_factors,
)
from ..privacy.release import Release, constant, output, public, release_guard
from ..privacy.validation import (
    MIN_EPSILON,
    as_vector,
    check_bool,
    check_bound,
    check_count,
    check_delta,
    check_epsilon,
    check_release_consistent,
    check_release_field,
    check_release_guarantee,
    column_names,
    first_bad_row,
)
from ..released.noise_plan import NoisePlan, gaussian_query, laplace_query, laplace_sd
from ..released.preprocessing import Preprocessing, preprocessed_rows
from .accumulate import CHUNK_VALUES, NonFiniteRow, accumulate, first_non_finite_row
from .family import LINEAR
from .stats import LinearStats, frobenius_weights, stat_vector

__all__ = [
    "CLIP_WARNING",
    "ClipReport",
    "LINEAR",
    "CLIP_SHARE",
    "GAUSSIAN_MECHANISM",
    "LinearStatsRelease",
    "MECHANISM",
    "LinearStatsLaplaceRelease",
    "check_release_arguments",
    "finite_sensitivities",
    "gaussian_release_vector",
    "gaussian_sensitivity",
    "linear_noise_plan",
    "release_linear_stats_laplace",
    "release_linear_stats",
    "sensitivities",
]


#: Default share of a release's privacy budget spent on the two clipping counts.
CLIP_SHARE = 0.05
#: Mechanism name of :func:`release_linear_stats_laplace` (result and ledger entry).
MECHANISM = "Laplace sufficient statistics (Honkela et al. 2018)"


#: Mechanism name of :func:`release_linear_stats` (result and ledger entry).
GAUSSIAN_MECHANISM = "Gaussian sufficient statistics of norm-bounded rows, Frobenius-weighted (Sheffet 2017; Wang 2018)"


#: :func:`clip_report` warns when an estimated fraction of clipped rows or responses exceeds this.
CLIP_WARNING = 0.10


@dataclass(frozen=True)
class ClipReport:
    """How much one release's clipping changed the data, estimated from its private counts.

    Post-processing of the release (no budget): the noisy counts divided by n and kept in
    [0, 1].  Printed, it reads as one sentence.

    Parameters
    ----------
    n : int
        The number of records of the release.
    rows : float
        Estimated fraction of the rows whose covariates the clipping changed (entrywise clipping,
        or projection onto the ℓ2 ball).
    responses : float
        Estimated fraction of the responses clipped to ±By.
    sd : float
        Standard deviation of the privacy noise on each fraction.
    rows_scaled : bool, default False
        True when the release scaled whole rows (responses with their covariates), which keeps
        the regression of y on x: then only clipped responses bias the coefficients.
    """

    n: int
    rows: float
    responses: float
    sd: float
    rows_scaled: bool = False

    @property
    def large(self) -> bool:
        """True when an estimated fraction that biases the coefficients exceeds ``CLIP_WARNING``
        (10 %): clipped responses, and changed rows unless whole rows were scaled."""
        return max(0.0 if self.rows_scaled else self.rows, self.responses) > CLIP_WARNING

    def __str__(self) -> str:
        change = "scaled about" if self.rows_scaled else "changed about"
        return (
            f"clipping {change} {self.rows:.1%} of the rows' covariates and clipped {self.responses:.1%} of the "
            f"responses (n = {self.n}; privacy noise s.d. {self.sd:.1%} each)"
        )


class _ClipCounts:
    """The clipping counts a linear release carries, read as fractions (post-processing)."""

    def clip_estimate(self) -> ClipReport | None:
        """The estimated fractions of clipped rows and responses (:class:`ClipReport`; None when
        the release carries no counts: ``clip_share=0``)."""
        if self.clipped_rows is None:
            return None
        count_sd = self.clip_noise * (math.sqrt(2.0) if isinstance(self, LinearStatsLaplaceRelease) else 1.0)
        return ClipReport(
            n=self.n,
            rows=min(1.0, max(0.0, self.clipped_rows / self.n)),
            responses=min(1.0, max(0.0, self.clipped_responses / self.n)),
            sd=count_sd / self.n,
            rows_scaled=self.x_clip == "row-scaled",
        )

    def clip_lines(self) -> list[str]:
        """:meth:`clip_estimate` as a sentence (none without counts), for summaries."""
        report = self.clip_estimate()
        return [] if report is None else [str(report)]


@dataclass(frozen=True, kw_only=True)
class LinearStatsLaplaceRelease(_ClipCounts, Release, kind="linear_stats_laplace"):
    """What one private release of sufficient statistics assumed and added.

    ``epsilon`` is the total; ``epsilon_parts`` the per-statistic ε (pₖε) and
    ``epsilon_certified`` what the noise sampler certifies for them (OpenDP's privacy map;
    equal to ``epsilon_parts`` up to rounding).  ``noise_scales`` are Δₖ/(pₖε), enlarged by a
    relative 2e-9 with secure noise to cover OpenDP's rounding to its grid.  ``private`` is False when a seeded generator
    drew the noise: such a result is for testing only.  ``preprocessing`` is the public map
    applied to (X, y) before clipping (None: none), so that predictions apply it again.  The noisy
    statistics themselves are in the :class:`LinearStats` that carries this record.  The statistics
    take (1 − ``clip_share``)·ε, split by ``split``; the clipping counts ``clipped_rows`` (rows
    with an entry |xᵢⱼ| > Bx) and ``clipped_responses`` (|yᵢ| > By) take ``clip_share``·ε, with
    Laplace noise of scale 2/(``clip_share``·ε) (``clip_noise``).

    Parameters
    ----------
    epsilon : float
        The total ε of the release.
    delta : float, default 0.0
        0: the release is pure ε-DP.
    neighbours : str
        The neighbour relation of the guarantee (a constant of the mechanism).
    mechanism : str
        The mechanism's name, as written to the accountant's ledger (a constant of the mechanism).
    private : bool
        True when the noise came from secure OS randomness (``rng=None``); False for a seeded
        ``rng``, whose output carries no privacy guarantee.
    split : tuple of float
        The budget shares (p₁, p₂, p₃) of Sxx, Sxy, Syy within the statistics' (1 − ``clip_share``)·ε.
    x_bound, y_bound : float
        The public clipping bounds Bx, By.
    sensitivities : tuple of float
        The ℓ1 sensitivities Δₖ of Sxx (upper triangle), Sxy, Syy.
    noise_scales : tuple of float
        The Laplace noise scales bₖ.
    epsilon_parts : tuple of float
        The ε of each statistic, pₖ(1 − ``clip_share``)ε.
    epsilon_certified : tuple of float
        The ε OpenDP's privacy map certifies for each statistic.
    n : int
        The number of records (public).
    preprocessing : Preprocessing, optional
        The public map applied to (X, y) before clipping (None: none).
    features : tuple of str, optional
        The column names of ``X`` when it was a data frame (its public schema; None otherwise),
        the default ``feature`` coordinates of :func:`pm_private.linear.linear_model`.
    clip_share : float, default 0.0
        The share of ε spent on the clipping counts (0: no counts released).
    clip_noise : float, optional
        The Laplace noise scale on each clipping count (None when no counts are released).
    clipped_rows, clipped_responses : float, optional
        The noisy counts of rows whose covariates clipping changed and of clipped responses
        (the DP output; None when no counts are released).
    scale_response : bool, default False
        True when each row was scaled as a whole into the cube |xⱼ| ≤ ``x_bound`` with its
        response (see :func:`release_linear_stats_laplace`); False for entrywise clipping.
    intercept : bool, default False
        True when a constant column of ones was prepended to the covariates (the statistics'
        first column; its sensitivities count it among the d columns); False in files written
        before the option existed.
    """

    family: ClassVar[str] = "linear"

    split: tuple[float, float, float] = public()
    x_bound: float = public()
    y_bound: float = public()
    sensitivities: tuple[float, float, float] = public()
    noise_scales: tuple[float, float, float] = public()
    epsilon_parts: tuple[float, float, float] = public()
    epsilon_certified: tuple[float, float, float] = public()
    n: int = public()
    mechanism: str = constant(default=MECHANISM)
    preprocessing: Preprocessing | None = public(default=None)
    features: tuple[str, ...] | None = public(default=None)
    clip_share: float = public(default=0.0, range="fraction")
    clip_noise: float | None = public(default=None)
    clipped_rows: float | None = output(default=None)
    clipped_responses: float | None = output(default=None)
    scale_response: bool = public(default=False)
    intercept: bool = public(default=False)

    def __post_init__(self):
        check_release_guarantee(self, needs_delta=False)
        for name in ("x_bound", "y_bound"):
            check_release_field(name, check_bound, name, getattr(self, name))
        check_release_field("n", check_count, "n", self.n)
        _check_laplace_noise_fields(self)

    @property
    def x_clip(self) -> str:
        """How covariates were bounded: ``"entry"``, clipped entrywise (|xⱼ| ≤ ``x_bound``;
        predictions clip new rows alike), or ``"entry-scaled"``, whole rows scaled into the cube
        with their responses (predictions scale new rows' covariates into the cube alike)."""
        return "entry-scaled" if self.scale_response else "entry"

    def noise_variance(self, d: int) -> np.ndarray:
        """Variance 2bₖ² of the Laplace noise on each released entry (upper Sxx, Sxy, Syy).

        Parameters
        ----------
        d : int
            The number of covariates.

        Returns
        -------
        numpy.ndarray
            The (d+1)(d+2)/2 variances in release order (:func:`stat_pairs`).
        """
        return np.repeat(2.0 * np.square(self.noise_scales), (d * (d + 1) // 2, d, 1))


@dataclass(frozen=True, kw_only=True)
class LinearStatsRelease(_ClipCounts, Release, kind="linear_stats_gaussian"):
    """What one (ε, δ)-DP Gaussian release of sufficient statistics assumed and added.

    ``x_bound`` bounds the ℓ2 norm of each (preprocessed) covariate row, ``y_bound`` |y|;
    ``sensitivity`` is the ℓ2 sensitivity √2·(Bx² + By²) of the released vector (the entries of
    zzᵀ weighted so that its norm is the Frobenius norm, :func:`frobenius_weights`) and
    ``noise_scale`` the standard deviation σ of the Gaussian noise on each of its entries, so
    σ on the diagonal statistics (diagonal of Sxx, Syy) and σ/√2 on the others (off-diagonal
    Sxx, Sxy); ``epsilon`` is what OpenDP certifies at ``delta``.  ``preprocessing`` as for
    :class:`LinearStatsLaplaceRelease`.  With ``clip_share`` p > 0 the clipping counts ``clipped_rows``
    (rows with ‖xᵢ‖ > Bx) and ``clipped_responses`` (|yᵢ| > By) are released by the same
    mechanism, weighted by a = Δ·√(p/(q(1 − p))) (q = 2 counts, or 3 with ``effective_rows``
    below) so that they take the share p of its squared sensitivity (of ρ, its
    zero-concentrated DP cost); ``sensitivity`` is then Δ/√(1 − p) and the noise on each count
    has s.d. σ/a (``clip_noise``).  A release that scaled responses with their rows also
    releases ``effective_rows`` = Σcᵢ² (cᵢ = min(1, Bx/‖xᵢ‖)), the weight of the residuals in its
    statistics: the scaled rows' residual sum of squares has mean σ²·Σcᵢ², not
    σ²·n, and the noise-aware models use it.

    Parameters
    ----------
    epsilon : float
        The ε OpenDP certifies at ``delta``.
    delta : float, default 0.0
        The δ of the release.
    neighbours : str
        The neighbour relation of the guarantee (a constant of the mechanism).
    mechanism : str
        The mechanism's name, as written to the accountant's ledger (a constant of the mechanism).
    private : bool
        True when the noise came from secure OS randomness (``rng=None``); False for a seeded
        ``rng``, whose output carries no privacy guarantee.
    x_bound : float
        The public bound Bx on the ℓ2 norm of a covariate row.
    y_bound : float
        The public bound By on |y|.
    sensitivity : float
        The ℓ2 sensitivity of the released vector: Δ = √2·(Bx² + By²) of the statistics, or
        Δ/√(1 − ``clip_share``) with the clipping counts.
    noise_scale : float
        The noise standard deviation σ on the weighted entries.
    n : int
        The number of records (public).
    preprocessing : Preprocessing, optional
        The public map applied to (X, y) before the projection (None: none).
    features : tuple of str, optional
        The column names of ``X`` when it was a data frame (its public schema; None otherwise),
        the default ``feature`` coordinates of :func:`pm_private.linear.linear_model`.
    clip_share : float, default 0.0
        The share of the mechanism's squared sensitivity given to the clipping counts (0: none).
    clip_noise : float, optional
        The noise s.d. on each clipping count (None when no counts are released).
    clipped_rows, clipped_responses : float, optional
        The noisy counts of rows the norm projection changed and of clipped responses (the DP
        output; None when no counts are released).
    effective_rows : float, optional
        The noisy sum Σcᵢ² of the rows' squared scale factors (the DP output, noise s.d.
        ``clip_noise``), released with the counts when responses were scaled with their rows;
        None otherwise (and in files written before it existed).
    scale_response : bool, default False
        True when each response was scaled with its covariate row before it was clipped,
        yᵢ ← clip(cᵢyᵢ, −By, By) with cᵢ = min(1, Bx/‖xᵢ‖), so that the scaled rows keep the
        regression of y on x (see :func:`release_linear_stats`); False when only the
        covariates were projected (files written before this option read as False).
    intercept : bool, default False
        True when a constant column of ones was prepended to the covariates (scaled with its
        row), so that the released statistics hold n and the first moments and the sensitivity is
        :func:`gaussian_sensitivity` with the intercept; False in files written before the option
        existed.
    """

    family: ClassVar[str] = "linear"

    x_bound: float = public()
    y_bound: float = public()
    sensitivity: float = public()
    noise_scale: float = public()
    n: int = public()
    mechanism: str = constant(default=GAUSSIAN_MECHANISM)
    preprocessing: Preprocessing | None = public(default=None)
    features: tuple[str, ...] | None = public(default=None)
    clip_share: float = public(default=0.0, range="fraction")
    clip_noise: float | None = public(default=None)
    clipped_rows: float | None = output(default=None)
    clipped_responses: float | None = output(default=None)
    effective_rows: float | None = output(default=None)
    scale_response: bool = public(default=False)
    intercept: bool = public(default=False)

    def __post_init__(self):
        check_release_guarantee(self, needs_delta=True)
        for name in ("x_bound", "y_bound"):
            check_release_field(name, check_bound, name, getattr(self, name))
        check_release_field("n", check_count, "n", self.n)
        _check_gaussian_noise_fields(self)

    @property
    def x_clip(self) -> str:
        """How covariate rows were bounded: ``"row"``, projected onto the ℓ2 ball ‖x‖ ≤ ``x_bound``
        (predictions project new rows alike), or ``"row-scaled"``, scaled onto it together with
        their responses, which keeps the regression of y on x (predictions project new rows'
        covariates alike)."""
        return "row-scaled" if self.scale_response else "row"

    def noise_variance(self, d: int) -> np.ndarray:
        """Variance σ²/wₖ² of the Gaussian noise on each released entry (upper Sxx, Sxy, Syy):
        σ² on the diagonal statistics, σ²/2 on the off-diagonal ones.

        Parameters
        ----------
        d : int
            The number of covariates.

        Returns
        -------
        numpy.ndarray
            The (d+1)(d+2)/2 variances in release order (:func:`stat_pairs`).
        """
        return self.noise_scale**2 / frobenius_weights(d) ** 2


def sensitivities(d: int, x_bound: float, y_bound: float) -> tuple[float, float, float]:
    """ℓ1 sensitivities (Sxx upper triangle, Sxy, Syy) under replace-one: (d(d+1)Bx², 2dBxBy, By²).

    Bounds whose sensitivities overflow or underflow to 0 are refused (ValueError naming them).

    Parameters
    ----------
    d : int
        The number of covariates.
    x_bound, y_bound : float
        The clipping bounds Bx, By.

    Returns
    -------
    tuple of float
        The three ℓ1 sensitivities.

    Raises
    ------
    ValueError
        If a sensitivity overflows or underflows to 0.
    """
    with np.errstate(over="ignore", under="ignore"):
        values = (d * (d + 1) * (x_bound * x_bound), 2 * d * x_bound * y_bound, y_bound * y_bound)
    return finite_sensitivities(values, "x_bound and y_bound")


def finite_sensitivities(values, names: str) -> tuple:
    """``values`` (numbers or arrays of them), or ValueError if one overflows or underflows to 0."""
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        ok = all(np.all(np.isfinite(v) & (np.asarray(v) > 0)) for v in values)
    if not ok:
        raise ValueError(f"{names} give sensitivities that overflow or underflow to 0; choose bounds nearer 1")
    return tuple(values)


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


def check_release_arguments(d: int, *, epsilon, x_bound, y_bound, split=(0.60, 0.35, 0.05), clip_share=0.05) -> tuple:
    """The public arguments of :func:`release_linear_stats_laplace` for d features, checked before any work.

    The command line calls it once it knows the number of feature columns, before reading any
    record; :func:`release_linear_stats_laplace` calls it before its pass over the data.

    Parameters
    ----------
    d : int
        The number of features.
    epsilon : float
        The total ε, ≥ 10⁻⁶.
    x_bound, y_bound : float
        The clipping bounds Bx and By, each in [10⁻⁵⁰, 10⁵⁰].
    split : tuple of float, default (0.60, 0.35, 0.05)
        The budget shares of Sxx, Sxy and Syy.
    clip_share : float, default 0.05
        The share of ε spent on the counts of clipped rows and responses (0 or in [0.001, 0.5]).

    Returns
    -------
    sensitivities : tuple of float
        The three ℓ1 sensitivities (:func:`sensitivities`).
    epsilon_parts : tuple of float
        The ε of each statistic, pₖ·(1 − clip_share)·ε.

    Raises
    ------
    ValueError
        Naming the argument: ε, a bound or a split out of range, a share whose ε is below
        10⁻⁶, or a sensitivity or noise scale that overflows or underflows.
    """
    epsilon = check_epsilon(epsilon)
    x_bound = check_bound("x_bound", x_bound)
    y_bound = check_bound("y_bound", y_bound)
    split = _check_split(split)
    clip_share = _check_clip_share(clip_share, epsilon)
    sens = sensitivities(d, x_bound, y_bound)
    eps_parts = tuple(p * (1.0 - clip_share) * epsilon for p in split)
    if min(eps_parts) < MIN_EPSILON:
        raise ValueError(f"split gives a statistic an ε below {MIN_EPSILON:g} (split × epsilon); raise its share")
    for s, e in zip(sens, eps_parts, strict=True):
        try:
            check_noise_scale(s, e)
        except ValueError:
            raise ValueError("x_bound, y_bound, epsilon and split give a noise scale that overflows") from None
    return sens, eps_parts


def release_linear_stats_laplace(
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
    clip_share: float = CLIP_SHARE,
    scale_response: bool = False,
    intercept: bool = True,
) -> LinearStats:
    """ε-DP release of clipped sufficient statistics (Honkela et al. 2018, Eqs. 5–7).

    Covariates and responses are clipped entrywise to the public bounds (with
    ``scale_response=True`` each row is instead scaled as a whole into the cube, see below), and
    the upper triangle of Sxx, Sxy and Syy each get Laplace noise calibrated to their ℓ1 sensitivity with the
    budget (1 − ``clip_share``)·ε·split (see Notes); the counts of rows and responses that the
    clipping changed get Laplace noise of scale 2/(``clip_share``·ε) (:func:`clip_report`).

    Parameters
    ----------
    X : array-like, shape (n, d)
        Private covariates; entries are clipped to [−x_bound, x_bound].  A Dask collection
        (``dask.array`` or ``dask.dataframe``, with ``y`` partitioned alike) is checked,
        clipped and reduced partition by partition where it lives (out of core, or on a
        cluster); only the d×d, d and scalar sums reach the client, where the noise is drawn
        once.  A NaN or inf raises, naming its partition and row, before anything is spent.
    y : array-like, shape (n,)
        Private responses; clipped to [−y_bound, y_bound].
    epsilon : float
        Total privacy budget of the release, > 0.
    x_bound, y_bound : float
        Public clipping bounds Bx, By > 0 (choose them with :func:`pm_private.tune_bounds`,
        never from the private data).
    split : (p₁, p₂, p₃)
        Budget shares of Sxx, Sxy, Syy within the statistics' (1 − ``clip_share``)·ε; positive,
        summing to 1.
    accountant : PrivacyAccountant, optional
        Charged ε (δ = 0) before noise is drawn; refuses with BudgetExceededError if over budget.
    rng : None, int or numpy.random.Generator
        None for the secure OS generator (private); a seed only for tests.
    preprocessing : Preprocessing, optional
        Public map applied to X and y before clipping (bounds are on the transformed scale); it
        is stored in the release metadata so that predictions apply the same map to new X.
    clip_share : float, default 0.05
        Share of ε spent on the counts of rows and responses that the clipping changed; 0 or in
        [0.001, 0.5].  0 releases no counts and spends all of ε on the statistics.
    scale_response : bool, default False
        False: Honkela et al.'s (2018) entrywise clipping.  True: each row is scaled as a whole,
        (xᵢ, yᵢ) ← cᵢ·(xᵢ, yᵢ) with cᵢ = min(1, Bx/maxⱼ|xᵢⱼ|), before its response is clipped:
        the weight cᵢ depends on xᵢ alone, so the scaled rows keep the regression of y on x and a
        model fitted to them estimates the population's β where entrywise clipping biases it
        (see :func:`release_linear_stats`).  Every entry still lies in [−Bx, Bx] and every
        response in [−By, By], so the sensitivities are the same.  Public; recorded in the release.
    intercept : bool, default True
        Prepend a constant column of ones (named ``intercept``) so that the statistics hold n and
        the first moments Σxᵢ, Σyᵢ and a model of them has an intercept; the sensitivities are
        those of d + 1 columns, and ``x_bound`` must be at least 1 (the constant is never
        clipped).  False: Honkela et al.'s (2018) statistics of the covariates alone.  Public;
        recorded in the release.

    Returns
    -------
    LinearStats
        ``xx`` (d×d, symmetric), ``xy`` (d), ``yy``, ``n`` and ``releases[0]`` with the metadata.

    Raises
    ------
    ValueError
        Before anything is spent: invalid ε, bounds, split or preprocessing, input that is not
        numeric, mismatched shapes, or a NaN or infinite value.
    BudgetExceededError
        If ``accountant`` cannot afford ε (nothing is released).
    ChargedRefusal
        After the budget is spent, when the public rows kept by ``preprocessing`` include rows of
        ``X`` (the message names no row and no count; a free refusal would be a membership test).

    Notes
    -----
    Privacy: ε-DP (pure) under replace-one neighbours (n is public), by sequential composition
    of three Laplace mechanisms with (1 − ``clip_share``)·ε·split and one on the two clipping
    counts (ℓ1 sensitivity 2) with ``clip_share``·ε.  Public inputs: ``x_bound`` (Bx),
    ``y_bound`` (By), ``split``, ``clip_share``, ``scale_response``, ``intercept``,
    ``preprocessing``, n and d (the constant column counts among the d + 1 columns of the
    sensitivities).  Exact: Bayesian inference on the released statistics is post-processing.  Floating-point safe
    for the secure default ``rng=None`` (OpenDP's exact discrete Laplace on a 2^k grid, Canonne, Kamath & Steinke 2020; see
    :mod:`pm_private.privacy.noise`); a seeded ``rng`` gives reproducible noise and a result
    marked ``private=False``.  References: Honkela et al. 2018; Dwork et al. 2006.

    Examples
    --------
    >>> import numpy as np
    >>> from pm_private import PrivacyAccountant, release_linear_stats_laplace
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(200, 2))
    >>> y = X @ [1.0, -0.5] + 0.1 * rng.normal(size=200)
    >>> accountant = PrivacyAccountant(2.0, 1e-6)
    >>> stats = release_linear_stats_laplace(X, y, epsilon=1.0, x_bound=1.0, y_bound=2.0, accountant=accountant, rng=0)
    >>> stats
    LinearStats(n=200, d=3 (intercept first), not private (seeded), 1 seeded release(s))
    >>> stats.releases[0].private  # seeded: reproducible, not private
    False
    >>> accountant.spent
    Budget(epsilon=1.0, delta=0.0)
    """
    epsilon = check_epsilon(epsilon)
    x_bound = check_bound("x_bound", x_bound)
    y_bound = check_bound("y_bound", y_bound)
    split = _check_split(split)
    clip_share = _check_clip_share(clip_share, epsilon)
    scale_response = check_bool("scale_response", scale_response)
    intercept = check_bool("intercept", intercept)
    _check_laplace_intercept(x_bound, intercept)
    if preprocessing is not None and not isinstance(preprocessing, Preprocessing):
        raise ValueError(f"preprocessing must be a Preprocessing, got {type(preprocessing).__name__}")
    source = as_noise_source(rng)
    features = _with_intercept(column_names(X), intercept)
    partitioned = is_dask(X) or is_dask(y)
    if partitioned:
        if preprocessing is not None:
            raise ValueError("preprocessing is not applied to Dask collections: transform the partitions first")
        from .._engine.dask import column_count
        from .dask_reduce import partitioned_suff_stats

        d, refusal = column_count(X), None
    else:
        X, refusal = preprocessed_rows(preprocessing, X)
        n, d = X.shape
        y = as_vector(y, n)
        if preprocessing is not None:
            y = preprocessing.transform_y(y)

    plan = linear_noise_plan(
        d,
        epsilon=epsilon,
        x_bound=x_bound,
        y_bound=y_bound,
        mechanism="laplace",
        split=split,
        clip_share=clip_share,
        scale_response=scale_response,
        intercept=intercept,
    )
    stats_queries, count_queries = plan.queries[:3], plan.queries[3:]
    sens = tuple(q.sensitivity for q in stats_queries)
    eps_parts = tuple(q.epsilon for q in stats_queries)
    if check_accountant(accountant) is not None:
        accountant.check(epsilon)  # refuse before the pass over the data
    # The pass over the data (which refuses NaN or infinite records) runs before the reservation.
    if partitioned:  # partitions are checked, clipped and reduced where they live; noise is drawn here, once
        xx, xy, yy, n, changed = partitioned_suff_stats(X, y, x_bound, y_bound, scale_response, intercept)
    else:
        xx, xy, yy, changed = accumulate(X, y, x_bound, y_bound, scale_response=scale_response, intercept=intercept)
    columns = xy.shape[0]
    with release_guard(
        accountant, MECHANISM, epsilon, label=f"n={n}, d={d}", noise=plan.noise_events(), refusal=refusal
    ):
        upper = np.triu_indices(columns)
        parts = [
            laplace_mechanism(stat, sensitivity=s, epsilon=e, source=source)
            for stat, s, e in zip((xx[upper], xy, [yy]), sens, eps_parts, strict=True)
        ]
        counts = {}
        for query in count_queries:  # the two counts move by at most 1 each under replace-one: ℓ1 sensitivity 2
            noisy = laplace_mechanism(
                np.asarray(changed, float), sensitivity=query.sensitivity, epsilon=query.epsilon, source=source
            )
            counts = _count_fields(clip_share, noisy.values, noisy.scale)
        xx = np.zeros((columns, columns))
        xx[upper] = parts[0].values
        xx = xx + np.triu(xx, 1).T
        info = LinearStatsLaplaceRelease(
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
            features=features,
            scale_response=scale_response,
            intercept=intercept,
            **counts,
        )
        return LinearStats(xx, parts[1].values, parts[2].values[0], n, (info,), intercept=intercept)


def gaussian_sensitivity(x_bound: float, y_bound: float, *, intercept: bool = False) -> float:
    """ℓ2 sensitivity √2·(Bx² + By²) of the weighted upper triangle w ⊙ upper(zzᵀ), z = (x, y)
    (:func:`frobenius_weights`: its norm is the Frobenius norm), under replace-one, for
    ‖x‖₂ ≤ Bx and |y| ≤ By; √2·(1 + Bx² + By²) with an intercept, z = c·(1, x, y), c ≤ 1.

    With R² = Bx² + By² (+ 1 with the intercept) ≥ ‖z‖² and M = zzᵀ − z′z′ᵀ: ‖M‖_F² = ‖z‖⁴ + ‖z′‖⁴ − 2(zᵀz′)² ≤ 2R⁴,
    attained by orthogonal z, z′ on the sphere.  The unweighted upper triangle has the same
    sensitivity (Σ_{a≤b} M_ab² = ½(‖M‖_F² + Σ_a M_aa²) ≤ 2R⁴ too), so the weights halve the noise
    variance of the off-diagonal statistics (Sxy among them) for free.

    Parameters
    ----------
    x_bound : float
        The bound Bx on ‖x‖₂.
    y_bound : float
        The bound By on |y|.
    intercept : bool, default False
        Whether the rows carry the constant column (scaled with the row, so at most 1).

    Returns
    -------
    float
        The ℓ2 sensitivity.

    Raises
    ------
    ValueError
        If the sensitivity overflows or underflows to 0.
    """
    with np.errstate(over="ignore", under="ignore"):
        value = math.sqrt(2.0) * (x_bound * x_bound + y_bound * y_bound + (1.0 if intercept else 0.0))
    return finite_sensitivities((value,), "x_bound and y_bound")[0]


def gaussian_release_vector(
    d: int, x_bound: float, y_bound: float, clip_share: float, *, scale_response: bool, intercept: bool = False
) -> tuple[int, float, float]:
    """The vector :func:`release_linear_stats` noises: its length, ℓ2 sensitivity and count weight.

    The (d+1)(d+2)/2 Frobenius-weighted statistics (sensitivity Δ = :func:`gaussian_sensitivity`)
    and, with ``clip_share`` p > 0, the q counts (q = 2: rows scaled and responses clipped; q = 3
    with ``scale_response``, which adds Σcᵢ², each row's contribution in [0, 1]) weighted by
    a = Δ·√(p/(q(1 − p))), so that their ℓ2 sensitivity a√q takes the share p of the squared
    sensitivity: the whole vector has ℓ2 sensitivity Δ/√(1 − p).  Public: depends only on its
    arguments.

    Parameters
    ----------
    d : int
        The number of covariates.
    x_bound, y_bound : float
        The public bounds Bx (row norm) and By.
    clip_share : float
        The share p of the counts (0: no counts).
    scale_response : bool
        Whether responses are scaled with their rows (then Σcᵢ² is released too).
    intercept : bool, default False
        Whether a constant column is prepended (d + 1 columns, the larger sensitivity).

    Returns
    -------
    size : int
        The number of values noised together.
    sensitivity : float
        Their ℓ2 sensitivity.
    count_weight : float
        The weight a of the counts (0 without them).
    """
    sensitivity = gaussian_sensitivity(x_bound, y_bound, intercept=intercept)
    counts = (3 if scale_response else 2) if clip_share > 0 else 0
    columns = d + bool(intercept)
    size = (columns + 1) * (columns + 2) // 2 + counts
    weight = sensitivity * math.sqrt(clip_share / (max(counts, 1) * (1.0 - clip_share)))
    return size, sensitivity / math.sqrt(1.0 - clip_share), weight


#: The statistic groups of the plans of :func:`linear_noise_plan`.
_LAPLACE_COUNTS = "clipped-row and clipped-response counts"
_GAUSSIAN_DIAGONAL = "the diagonal of Sxx and Syy"
_GAUSSIAN_OFF_DIAGONAL = "the other entries of Sxx and Sxy"


def _gaussian_counts(scale_response: bool) -> str:
    """The name of the group of counts a Gaussian release adds (with Σcᵢ² when it scales responses)."""
    return _LAPLACE_COUNTS + (" and the rows' summed squared scale factors" if scale_response else "")


def linear_noise_plan(
    d: int,
    *,
    epsilon: float,
    delta: float | None = None,
    x_bound: float,
    y_bound: float,
    mechanism: str = "gaussian",
    split=None,
    clip_share: float = CLIP_SHARE,
    scale_response: bool | None = None,
    intercept: bool = True,
) -> NoisePlan:
    """The noise a release of linear-regression statistics of d covariates adds, before any data is read.

    ``mechanism="gaussian"`` plans :func:`release_linear_stats`: one Gaussian query on the
    Frobenius-weighted vector of ``gaussian_release_vector`` (with the clipping counts), its
    ℓ2 sensitivity and σ, and the noise s.d. σ/w of each group of statistics (σ on the diagonal of
    Sxx and on Syy, σ/√2 on the other entries of Sxx and on Sxy, σ/a on each count).
    ``mechanism="laplace"`` plans :func:`release_linear_stats_laplace`: the Laplace queries on
    Sxx (upper triangle), Sxy and Syy with their ℓ1 sensitivities (:func:`sensitivities`) at
    pₖ(1 − ``clip_share``)ε, and on the two clipping counts (ℓ1 sensitivity 2) at
    ``clip_share``·ε.  Both releases take their sensitivities, ε split and noise scales from this
    plan.  Public: it depends only on its arguments.

    Parameters
    ----------
    d : int
        The number of covariates, ≥ 1.
    epsilon : float
        The ε of the release.
    delta : float, optional
        The δ of a Gaussian release (required there); None (or 0) for the Laplace release.
    x_bound, y_bound : float
        The public bounds Bx (row norm for gaussian, each entry for laplace) and By.
    mechanism : {"gaussian", "laplace"}, default "gaussian"
        The release planned: :func:`release_linear_stats` or :func:`release_linear_stats_laplace`.
    split : tuple of float, optional
        Laplace only: the budget shares of Sxx, Sxy, Syy (default (0.60, 0.35, 0.05)).
    clip_share : float, default 0.05
        The share of the release given to the clipping counts (0: none).
    scale_response : bool, optional
        Whether responses are scaled with their rows (the Gaussian release then adds Σcᵢ² to the
        counts); None: the release's default (True for gaussian, False for laplace).
    intercept : bool, default True
        Whether the release prepends the constant column (its statistics then cover d + 1
        columns; the Laplace release needs ``x_bound`` ≥ 1).

    Returns
    -------
    NoisePlan
        The queries, their sensitivities, ε and scales, and the noise s.d. per statistic group.

    Raises
    ------
    ValueError
        Naming the argument, as the release would before spending anything: an invalid ε, δ,
        bound, split, share or mechanism, or a noise scale that overflows or underflows.

    Examples
    --------
    >>> from pm_private.linear.release import linear_noise_plan
    >>> plan = linear_noise_plan(
    ...     3, epsilon=1.0, x_bound=1.0, y_bound=2.0, mechanism="laplace", clip_share=0.0, intercept=False
    ... )
    >>> dict(plan.sensitivity)
    {'Sxx': 12.0, 'Sxy': 12.0, 'Syy': 4.0}
    >>> [round(b, 4) for b in plan.noise_scale.values()]
    [20.0, 34.2857, 80.0]
    >>> gaussian = linear_noise_plan(3, epsilon=1.0, delta=1e-6, x_bound=1.5, y_bound=2.0, intercept=False)
    >>> round(gaussian.sensitivity["weighted vector"], 5), round(gaussian.noise_sd["the diagonal of Sxx and Syy"], 3)
    (9.06845, 41.088)
    """
    if mechanism not in ("gaussian", "laplace"):
        raise ValueError(f"mechanism must be 'gaussian' or 'laplace', got {mechanism!r:.40}")
    d = check_count("d", d)
    intercept = check_bool("intercept", intercept)
    if mechanism == "laplace":
        if delta is not None and delta != 0:
            raise ValueError("delta applies to the Gaussian mechanism only (the Laplace release is pure ε-DP)")
        scale_response = check_bool("scale_response", False if scale_response is None else scale_response)
        _check_laplace_intercept(x_bound, intercept)
        sens, eps_parts = check_release_arguments(
            d + intercept,
            epsilon=epsilon,
            x_bound=x_bound,
            y_bound=y_bound,
            split=(0.60, 0.35, 0.05) if split is None else split,
            clip_share=clip_share,
        )
        epsilon, clip_share = check_epsilon(epsilon), float(clip_share)
        columns = d + intercept
        sizes = (columns * (columns + 1) // 2, columns, 1)
        queries = [
            laplace_query(name, size, s, e)
            for name, size, s, e in zip(("Sxx", "Sxy", "Syy"), sizes, sens, eps_parts, strict=True)
        ]
        if clip_share > 0:  # each count moves by at most 1 under replace-one: ℓ1 sensitivity 2
            queries.append(laplace_query(_LAPLACE_COUNTS, 2, 2.0, clip_share * epsilon))
        return NoisePlan(
            mechanism="laplace",
            epsilon=epsilon,
            queries=tuple(queries),
            noise_sd={q.name: laplace_sd(q.scale) for q in queries},
            d=d,
        )
    if split is not None:
        raise ValueError("split applies to the Laplace mechanism only (the Gaussian release adds one noise)")
    if delta is None:
        raise ValueError("the Gaussian mechanism needs delta (the δ of the release, in (0, 1))")
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    x_bound = check_bound("x_bound", x_bound)
    y_bound = check_bound("y_bound", y_bound)
    clip_share = _check_clip_share(clip_share, epsilon)
    scale_response = check_bool("scale_response", True if scale_response is None else scale_response)
    check_gaussian_epsilon(epsilon)
    size, sensitivity, count_weight = gaussian_release_vector(
        d, x_bound, y_bound, clip_share, scale_response=scale_response, intercept=intercept
    )
    check_noise_scale(sensitivity, epsilon)
    query = gaussian_query("weighted vector", size, sensitivity, epsilon, delta)
    sigma = query.scale
    weights = {_GAUSSIAN_DIAGONAL: 1.0, _GAUSSIAN_OFF_DIAGONAL: math.sqrt(2.0)}
    notes = ()
    if clip_share > 0:
        counts = _gaussian_counts(scale_response)
        weights[counts] = count_weight
        notes = (f"{counts}: {clip_share:.0%} of the privacy cost, in the same mechanism",)
    return NoisePlan(
        mechanism="gaussian",
        epsilon=epsilon,
        delta=delta,
        queries=(query,),
        noise_sd={group: sigma / w for group, w in weights.items()},
        weights=weights,
        d=d,
        notes=notes,
    )


def _projected_sums(
    X: np.ndarray, y: np.ndarray, x_bound: float, y_bound: float, scale_response: bool, intercept: bool
):
    """Sxx, Sxy, Syy of finite rows scaled onto ‖x‖₂ ≤ x_bound by cᵢ = min(1, Bx/‖xᵢ‖) (with their
    responses when ``scale_response``), responses then clipped to ±y_bound, in cache-sized chunks
    (peak extra memory: one chunk), and the counts (rows the scaling changed, responses clipped,
    and with ``scale_response`` Σcᵢ²).  With ``intercept`` the rows are (cᵢ, cᵢxᵢ) (the constant
    scaled with its row when ``scale_response``, else 1): the norm is that of xᵢ alone."""
    d = X.shape[1] + intercept
    rows = max(1, CHUNK_VALUES // d)
    xx, xy, yy = np.zeros((d, d)), np.zeros(d), 0.0
    changed = responses = 0
    weight = 0.0
    for first in range(0, X.shape[0], rows):
        raw = X[first : first + rows]
        factors = row_scale_factors(raw, x_bound)
        chunk = raw * factors[:, None]
        response = y[first : first + rows] * factors if scale_response else y[first : first + rows]
        changed += int(np.count_nonzero((chunk != raw).any(axis=1)))
        responses += int(np.count_nonzero(np.abs(response) > y_bound))
        weight += float(factors @ factors)
        if intercept:
            chunk = np.column_stack([factors if scale_response else np.ones(len(chunk)), chunk])
        response = np.clip(response, -y_bound, y_bound)
        xx += chunk.T @ chunk
        xy += chunk.T @ response
        yy += float(response @ response)
    return xx, xy, yy, (changed, responses, weight) if scale_response else (changed, responses)


def release_linear_stats(
    X,
    y,
    *,
    epsilon: float,
    delta: float,
    x_bound: float,
    y_bound: float,
    accountant: PrivacyAccountant | None = None,
    rng=None,
    preprocessing: Preprocessing | None = None,
    clip_share: float = CLIP_SHARE,
    scale_response: bool = True,
    intercept: bool = True,
) -> LinearStats:
    """(ε, δ)-DP release of the sufficient statistics of norm-bounded rows, by one Gaussian mechanism.

    Each row is scaled onto the ℓ2 ball of the covariates, (xᵢ, yᵢ) ← cᵢ·(xᵢ, yᵢ) with
    cᵢ = min(1, Bx/‖xᵢ‖), each response then clipped, yᵢ ← clip(yᵢ, −By, By) (with
    ``scale_response=False`` only xᵢ is scaled: the projection of Wang 2018), and the
    (d+1)(d+2)/2 distinct entries of S = Σ zᵢzᵢᵀ,
    zᵢ = (xᵢ, yᵢ) (upper Sxx, Sxy, Syy), are released as

        r = upper(S) + ξ / w,   ξ ~ N(0, σ² I),

    with w = 1 on the diagonal and √2 off it (:func:`frobenius_weights`), i.e. the Gaussian
    mechanism on w ⊙ upper(S), whose ℓ2 norm is ‖S‖_F, with σ calibrated to its ℓ2 sensitivity
    Δ = √2·(Bx² + By²) (:func:`gaussian_sensitivity`): sufficient statistics perturbation with the
    Gaussian mechanism (Sheffet 2017; the row-norm bound of Wang 2018).  The off-diagonal
    statistics, Sxy among them, get noise of s.d. σ/√2 at the sensitivity of iid noise on the
    unweighted triangle.  Against :func:`release_linear_stats_laplace` (Laplace, entrywise bounds) the noise grows
    with Bx² + By² instead of d²Bx², far less at d ≥ 5, and it is Gaussian, so the noise-aware
    model (:func:`pm_private.linear.linear_model`) marginalises it exactly.

    The same mechanism releases the counts of rows the projection changed and of responses
    clipped (:func:`clip_report`) and, when responses are scaled, Σcᵢ² (``effective_rows``), q = 3
    (or 2) values each changed by at most 1 between neighbours, appended to the vector with
    weight a = Δ·√(p/(q(1 − p))), p = ``clip_share``: their ℓ2 sensitivity a√q takes the share p
    of the total squared sensitivity Δ²/(1 − p), so σ grows by 1/√(1 − p) (2.6 % at p = 0.05)
    and a count's noise s.d. is σ/a.

    Why the response is scaled with its row.  If yᵢ = xᵢᵀβ + eᵢ, the scaled rows satisfy
    cᵢyᵢ = (cᵢxᵢ)ᵀβ + cᵢeᵢ with a weight cᵢ that depends on xᵢ alone, so the released statistics
    are those of a weighted regression with the same β (weights that depend only on the
    covariates, as in the GM-estimators of Mallows 1975): a model fitted to them estimates the
    population's β however many rows the bound touches, and the noise-aware model needs no model
    of the clipping.  Projecting xᵢ alone instead regresses yᵢ on cᵢxᵢ, whose slope is β/cᵢ on a
    projected row: β is biased away from zero when the bound bites (by 3–19 % on real data sets
    where a third of the rows were projected).  The residuals of scaled rows are cᵢeᵢ: their sum
    of squares has mean σ²·Σcᵢ², which the released ``effective_rows`` lets the model use (with n
    in its place σ² would come out too small by the factor Σcᵢ²/n, 0.80–0.86 on real data where a
    third of the rows are scaled), and the covariance of Σcᵢ²xᵢeᵢ is σ²Σcᵢ⁴xᵢxᵢᵀ ⪯ σ²Sxx, which
    the model bounds by σ²Sxx.  Clipped responses still bias β towards zero, and scaled rows
    estimate a weighted fit that differs from the population's least-squares fit when the truth
    is not exactly linear; both biases grow with n relative to the posterior's width, so bounds
    for inference grow with n: :func:`pm_private.linear.gaussian_bounds` chooses them.

    Parameters
    ----------
    X : array-like, shape (n, d)
        Private covariates (numpy or pandas; not Dask: use :func:`release_linear_stats_laplace` there).
    y : array-like, shape (n,)
        Private responses.
    epsilon : float
        ε > 0.
    delta : float
        δ in (0, 1); choose it well below 1/n.
    x_bound : float
        Public bound Bx > 0 on the ℓ2 norm of a (preprocessed) covariate row; √d is about the
        typical norm of standardised rows (:func:`pm_private.linear.gaussian_bounds` chooses
        Bx and By for n and ε).
    y_bound : float
        Public bound By > 0 on |y|.
    accountant : PrivacyAccountant, optional
        Charged (ε, δ) before noise is drawn; refuses with BudgetExceededError if over budget.
    rng : None, int or numpy.random.Generator
        None for the secure OS generator (private); a seed only for tests.
    preprocessing : Preprocessing, optional
        Public map applied to X and y before the projection (bounds are on the transformed
        scale); stored in the release so that predictions apply it, and the projection, to new X.
    clip_share : float, default 0.05
        Share p of the mechanism's squared sensitivity (of its zero-concentrated DP cost ρ)
        given to the clipping counts (and Σcᵢ² with ``scale_response``); 0 or in [0.001, 0.5].
        0 releases no counts.
    scale_response : bool, default True
        Scale each response with its covariate row before clipping it (keeps β the population's
        coefficient); False projects the covariates alone.  Public; recorded in the release.
    intercept : bool, default True
        Prepend a constant column of ones (named ``intercept``, scaled with its row), so that the
        statistics hold n and the first moments Σxᵢ, Σyᵢ and a model of them has an intercept;
        Δ becomes √2·(1 + Bx² + By²).  Public; recorded in the release.

    Returns
    -------
    LinearStats
        Noisy ``xx`` (symmetric), ``xy``, ``yy``, ``n`` and ``releases[0]``, a
        :class:`LinearStatsRelease`; d + 1 columns with the intercept.

    Raises
    ------
    ValueError
        Before anything is spent: invalid ε, δ, bounds or preprocessing, a Dask collection,
        input that is not numeric, mismatched shapes, or a NaN or infinite value.
    BudgetExceededError
        If ``accountant`` cannot afford (ε, δ) (nothing is released).
    ChargedRefusal
        After the budget is spent, when the public rows kept by ``preprocessing`` include rows of
        ``X`` (the message names no row and no count; a free refusal would be a membership test).

    Notes
    -----
    Privacy: (ε, δ)-DP under replace-one neighbours (n is public), for the statistics and the
    clipping counts together (one mechanism): every scaled and clipped row has ‖xᵢ‖ ≤ Bx and a
    response of absolute value ≤ By whether or not its response was scaled, so Δ is the same.
    Public inputs: ``x_bound``, ``y_bound``, ``delta``, ``clip_share``, ``scale_response``,
    ``intercept``, ``preprocessing``, n and d.  Exact: the (ε, δ) is certified by OpenDP's privacy map through
    zero-concentrated DP (:func:`pm_private.privacy.primitives.gaussian_mechanism`) for the
    returned statistics.
    Floating-point safe for the secure default ``rng=None`` (OpenDP's exact discrete Gaussian,
    Canonne, Kamath & Steinke 2020); a seeded ``rng`` gives reproducible continuous noise of the
    same σ and a result marked ``private=False``.  References: Sheffet 2017; Wang 2018;
    Bun & Steinke 2016.

    Examples
    --------
    >>> import numpy as np
    >>> from pm_private import PrivacyAccountant, release_linear_stats
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(200, 2))
    >>> y = X @ [1.0, -0.5] + 0.1 * rng.normal(size=200)
    >>> accountant = PrivacyAccountant(2.0, 1e-6)
    >>> stats = release_linear_stats(
    ...     X, y, epsilon=0.5, delta=1e-7, x_bound=1.5, y_bound=2.0, accountant=accountant, rng=0
    ... )
    >>> stats.xx.shape, stats.n, stats.intercept  # the intercept column and the two covariates
    ((3, 3), 200, True)
    >>> round(accountant.spent[0], 6)
    0.5
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    x_bound = check_bound("x_bound", x_bound)
    y_bound = check_bound("y_bound", y_bound)
    clip_share = _check_clip_share(clip_share, epsilon)
    scale_response = check_bool("scale_response", scale_response)
    intercept = check_bool("intercept", intercept)
    if preprocessing is not None and not isinstance(preprocessing, Preprocessing):
        raise ValueError(f"preprocessing must be a Preprocessing, got {type(preprocessing).__name__}")
    if is_dask(X) or is_dask(y):
        raise ValueError(
            "release_linear_stats takes in-memory arrays; for Dask collections use release_linear_stats_laplace"
        )
    features = _with_intercept(column_names(X), intercept)
    X, refusal = preprocessed_rows(preprocessing, X)
    n, d = X.shape
    y = as_vector(y, n)
    if preprocessing is not None:
        y = preprocessing.transform_y(y)
    bad = first_non_finite_row(X, 0, n)
    if bad is not None:
        raise NonFiniteRow("X", bad)
    if not np.isfinite(y).all():
        raise NonFiniteRow("y", first_bad_row(y))
    plan = linear_noise_plan(
        d,
        epsilon=epsilon,
        delta=delta,
        x_bound=x_bound,
        y_bound=y_bound,
        mechanism="gaussian",
        clip_share=clip_share,
        scale_response=scale_response,
        intercept=intercept,
    )
    (query,) = plan.queries
    total_sensitivity = query.sensitivity
    count_weight = plan.weights.get(_gaussian_counts(scale_response), 0.0)
    source = as_noise_source(rng)
    noise = plan.noise_events()
    with release_guard(
        accountant, GAUSSIAN_MECHANISM, epsilon, delta, label=f"n={n}, d={d}", noise=noise, refusal=refusal
    ):
        xx, xy, yy, changed = _projected_sums(X, y, x_bound, y_bound, scale_response, intercept)
        columns = xy.shape[0]
        upper = np.triu_indices(columns)
        weights = frobenius_weights(columns)
        m = weights.size
        vector = weights * stat_vector(xx, xy, yy)
        if clip_share > 0:
            vector = np.concatenate([vector, count_weight * np.asarray(changed, float)])
        part = gaussian_mechanism(
            vector,
            sensitivity=total_sensitivity,
            epsilon=epsilon,
            delta=delta,
            source=source,
        )
        counts = (
            _count_fields(clip_share, part.values[m:] / count_weight, part.scale / count_weight)
            if clip_share > 0
            else {}
        )
        values = part.values[:m] / weights
        noisy_xx = np.zeros((columns, columns))
        noisy_xx[upper] = values[: upper[0].size]
        noisy_xx = noisy_xx + np.triu(noisy_xx, 1).T
        info = LinearStatsRelease(
            epsilon=part.epsilon,
            delta=delta,
            x_bound=x_bound,
            y_bound=y_bound,
            sensitivity=total_sensitivity,
            noise_scale=part.scale,
            n=n,
            private=source.secure,
            preprocessing=preprocessing,
            features=features,
            scale_response=scale_response,
            intercept=intercept,
            **counts,
        )
        return LinearStats(noisy_xx, values[upper[0].size : -1], values[-1], n, (info,), intercept=intercept)


def _check_laplace_intercept(x_bound: float, intercept: bool) -> None:
    """The Laplace release's constant column must lie inside its entrywise bound (ValueError)."""
    if intercept and x_bound < 1.0:
        raise ValueError(
            f"x_bound must be at least 1 with intercept=True (the constant column is bounded entrywise "
            f"like the covariates), got {x_bound:g}; rescale the covariates or pass intercept=False"
        )


def _with_intercept(features: tuple[str, ...] | None, intercept: bool) -> tuple[str, ...] | None:
    """The released columns' names: ``intercept`` first when the constant column is prepended."""
    if not intercept or features is None:
        return features
    if "intercept" in features:
        raise ValueError("X has a column named 'intercept': rename it, or pass intercept=False")
    return ("intercept", *features)


def _check_clip_share(clip_share, epsilon: float) -> float:
    """``clip_share`` is 0 or in [0.001, 0.5], and leaves both parts of ε ≥ the smallest ε."""
    if isinstance(clip_share, bool) or not isinstance(clip_share, numbers.Real):
        raise ValueError(f"clip_share must be a number, got {clip_share!r:.40}")
    value = float(clip_share)
    if not (value == 0.0 or 0.001 <= value <= 0.5):
        raise ValueError(f"clip_share must be 0 or in [0.001, 0.5], got {clip_share!r}")
    if value > 0 and value * epsilon < MIN_EPSILON:
        raise ValueError(f"clip_share {value!r} of epsilon {epsilon!r} is below the smallest ε {MIN_EPSILON!r}")
    return value


def _count_fields(clip_share: float, counts, noise) -> dict:
    """The clipping-count fields of a release that releases them (``clip_share`` > 0): the
    counts of changed rows and clipped responses, and Σcᵢ² when a third count is given."""
    fields = dict(
        clip_share=clip_share,
        clip_noise=float(noise),
        clipped_rows=float(counts[0]),
        clipped_responses=float(counts[1]),
    )
    if len(counts) > 2:
        fields["effective_rows"] = float(counts[2])
    return fields


def _check_count_noise(release, expected: float) -> None:
    """``clip_share`` a valid share and ``clip_noise`` the noise scale of the counts it implies (None without counts)."""
    share = check_release_field("clip_share", _check_clip_share, release.clip_share, release.epsilon)
    if share == 0:
        if release.clip_noise is not None:
            raise ValueError("field 'clip_noise' must be None when 'clip_share' is 0 (no counts released)")
        return
    check_release_consistent(
        "clip_noise", release.clip_noise, expected, "the counts' noise scale implied by 'clip_share'"
    )


def _check_laplace_noise_fields(release) -> None:
    """The split, sensitivities, ε parts and noise scales of a Laplace release as
    :func:`release_linear_stats_laplace` computes them from its public inputs (ValueError naming the field)."""
    split = check_release_field("split", _check_split, release.split)
    intercept = check_release_field("intercept", check_bool, "intercept", release.intercept)
    check_release_field("intercept", _check_laplace_intercept, release.x_bound, intercept)
    d = release.sensitivities[1] / (2.0 * release.x_bound * release.y_bound) if len(release.sensitivities) == 3 else 0
    if not (d >= 1 and abs(d - round(d)) < 1e-6 * d):
        raise ValueError(
            "field 'sensitivities' must be (d(d+1)·'x_bound'², 2d·'x_bound'·'y_bound', 'y_bound'²) for an integer d ≥ 1"
        )
    expected = sensitivities(int(round(d)), release.x_bound, release.y_bound)
    share = check_release_field("clip_share", _check_clip_share, release.clip_share, release.epsilon)
    parts = tuple(p * (1.0 - share) * release.epsilon for p in split)
    for name, values, implied, how in (
        ("sensitivities", release.sensitivities, expected, "(d(d+1)·'x_bound'², 2d·'x_bound'·'y_bound', 'y_bound'²)"),
        ("epsilon_parts", release.epsilon_parts, parts, "'split' × (1 − 'clip_share') × 'epsilon'"),
        (
            "noise_scales",
            release.noise_scales,
            tuple(s / e for s, e in zip(expected, parts, strict=True)),
            "'sensitivities' / 'epsilon_parts'",
        ),
    ):
        if len(values) != 3:
            raise ValueError(f"field '{name}' must hold three numbers, got {values!r:.60}")
        for value, want in zip(values, implied, strict=True):
            # the secure sampler enlarges a Laplace scale by a relative ~2⁻⁴⁰ for its grid
            check_release_consistent(name, value, want, how, rel_tol=1e-6)
    certified = release.epsilon_certified
    if len(certified) != 3 or not all(
        isinstance(c, numbers.Real) and 0 < c <= p * (1 + 1e-6) for c, p in zip(certified, parts, strict=True)
    ):
        raise ValueError(
            f"field 'epsilon_certified' must be three numbers in (0, 'epsilon_parts'], got {certified!r:.60}"
        )
    _check_count_noise(release, 2.0 / (share * release.epsilon) if share > 0 else 0.0)


def _check_gaussian_noise_fields(release) -> None:
    """The sensitivity, noise scale and count noise of a Gaussian release as
    :func:`release_linear_stats` computes them from its public inputs (ValueError naming the field)."""
    share = check_release_field("clip_share", _check_clip_share, release.clip_share, release.epsilon)
    intercept = check_release_field("intercept", check_bool, "intercept", release.intercept)
    _, sensitivity, weight = gaussian_release_vector(
        1, release.x_bound, release.y_bound, share, scale_response=bool(release.scale_response), intercept=intercept
    )
    check_release_consistent(
        "sensitivity",
        release.sensitivity,
        sensitivity,
        "gaussian_sensitivity('x_bound', 'y_bound', intercept='intercept')/√(1 − 'clip_share')",
    )
    check_gaussian_scale_field("noise_scale", release.noise_scale, sensitivity, release.epsilon, release.delta)
    _check_count_noise(release, release.noise_scale / weight if share > 0 else 0.0)

"""What a private release of linear sufficient statistics records: the Laplace and the Gaussian
release records (:class:`LinearStatsLaplaceRelease`, :class:`LinearStatsRelease`) with the checks
of their noise fields, and the estimate of how much the clipping changed (:class:`ClipReport`)."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..privacy.primitives import (
    check_gaussian_scale_field,
)
from ..privacy.relations import ADD_REMOVE, check_public_n
from ..privacy.release import Release, constant, output, public
from ..privacy.units import check_release_rows
from ..privacy.validation import (
    check_bool,
    check_bound,
    check_clip_share,
    check_release_consistent,
    check_release_field,
    check_release_guarantee,
)
from ..released.preprocessing import Preprocessing
from .release_checks import (
    _check_laplace_intercept,
    _check_split,
    gaussian_release_vector,
    laplace_sensitivities,
)
from .stats import frobenius_weights

#: Mechanism name of ``release_linear_stats(noise="laplace")`` (result and ledger entry).
MECHANISM = "Laplace sufficient statistics (Honkela et al. 2018)"


#: Mechanism name of ``release_linear_stats(noise="gaussian")`` (result and ledger entry).
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
    n : float
        The number of records of the release (its noisy count where n is private).
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

    n: float
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
        count = f"n = {self.n:g}" if float(self.n).is_integer() else f"n private, its noisy count {self.n:.0f}"
        return (
            f"clipping {change} {self.rows:.1%} of the rows' covariates and clipped {self.responses:.1%} of the "
            f"responses ({count}; privacy noise s.d. {self.sd:.1%} each)"
        )


class _ClipCounts:
    """The clipping counts a linear release carries, read as fractions (post-processing), and its
    count of rows (n, or where n is private its noisy count)."""

    @property
    def count_sd(self) -> float:
        """The standard deviation of the privacy noise on each released count (0 without counts)."""
        if self.clip_noise is None:
            return 0.0
        return self.clip_noise * (math.sqrt(2.0) if isinstance(self, LinearStatsLaplaceRelease) else 1.0)

    @property
    def n_estimate(self) -> float:
        """n, or where n is private (add/remove neighbours) its noisy count ``n_noisy``, at least 1:
        what post-processing of the statistics divides by (noise s.d. :attr:`count_sd`)."""
        return float(self.n) if self.n is not None else max(float(self.n_noisy), 1.0)

    def clip_estimate(self) -> ClipReport | None:
        """The estimated fractions of clipped rows and responses (:class:`ClipReport`; None when
        the release carries no counts: ``clip_share=0``)."""
        if self.clipped_rows is None:
            return None
        n = self.n_estimate
        return ClipReport(
            n=n,
            rows=min(1.0, max(0.0, self.clipped_rows / n)),
            responses=min(1.0, max(0.0, self.clipped_responses / n)),
            sd=self.count_sd / n,
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
    delta : float, default 0.0
        0: the release is pure ε-DP.
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
    n : int or None
        The number of records (public); None under add/remove neighbours (n private).
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
    n_noisy : float, optional
        Under add/remove neighbours, the noisy count of records released with the clipping
        counts (the same noise); None under replace-one, where n is public.
    scale_response : bool, default False
        True when each row was scaled as a whole into the cube |xⱼ| ≤ ``x_bound`` with its
        response (see :func:`release_linear_stats`); False for entrywise clipping.
    intercept : bool, default False
        True when a constant column of ones was prepended to the covariates (the statistics'
        first column; its sensitivities count it among the d columns); False in files written
        before the option existed.
    max_rows : int, default 1
        k, the most rows kept per person (1 where the unit is the row); every sensitivity is k
        times the row's (above 1 under add/remove only).
    """

    family: ClassVar[str] = "linear"

    split: tuple[float, float, float] = public()
    x_bound: float = public()
    y_bound: float = public()
    sensitivities: tuple[float, float, float] = public()
    noise_scales: tuple[float, float, float] = public()
    epsilon_parts: tuple[float, float, float] = public()
    epsilon_certified: tuple[float, float, float] = public()
    n: int | None = public()
    mechanism: str = constant(default=MECHANISM)
    preprocessing: Preprocessing | None = public(default=None)
    features: tuple[str, ...] | None = public(default=None)
    clip_share: float = public(default=0.0, range="fraction")
    clip_noise: float | None = public(default=None)
    clipped_rows: float | None = output(default=None)
    clipped_responses: float | None = output(default=None)
    n_noisy: float | None = output(default=None)
    scale_response: bool = public(default=False)
    intercept: bool = public(default=False)
    max_rows: int = public(default=1)

    def __post_init__(self):
        check_release_guarantee(self, needs_delta=False)
        _check_bounds_and_count(self)
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
    ``sensitivity`` is the ℓ2 sensitivity √2·(Bx² + By²) (Bx² + By² under add/remove) of the
    released vector (the entries of zzᵀ weighted so that its norm is the Frobenius norm,
    :func:`frobenius_weights`) and
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
    x_bound : float
        The public bound Bx on the ℓ2 norm of a covariate row.
    y_bound : float
        The public bound By on |y|.
    sensitivity : float
        The ℓ2 sensitivity of the released vector under ``neighbours``: Δ = √2·(Bx² + By²) of the
        statistics (Bx² + By² under add/remove, and + 1 in the sum with the intercept), or
        Δ/√(1 − ``clip_share``) with the clipping counts.
    noise_scale : float
        The noise standard deviation σ on the weighted entries.
    n : int or None
        The number of records (public); None under add/remove neighbours (n private).
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
    n_noisy : float, optional
        Under add/remove neighbours, the noisy count of records, the last of the counts (noise
        s.d. ``clip_noise``); None under replace-one, where n is public.
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
    max_rows : int, default 1
        k, the most rows kept per person (1 where the unit is the row); every sensitivity is k
        times the row's (above 1 under add/remove only).
    """

    family: ClassVar[str] = "linear"

    x_bound: float = public()
    y_bound: float = public()
    sensitivity: float = public()
    noise_scale: float = public()
    n: int | None = public()
    mechanism: str = constant(default=GAUSSIAN_MECHANISM)
    preprocessing: Preprocessing | None = public(default=None)
    features: tuple[str, ...] | None = public(default=None)
    clip_share: float = public(default=0.0, range="fraction")
    clip_noise: float | None = public(default=None)
    clipped_rows: float | None = output(default=None)
    clipped_responses: float | None = output(default=None)
    effective_rows: float | None = output(default=None)
    n_noisy: float | None = output(default=None)
    scale_response: bool = public(default=False)
    intercept: bool = public(default=False)
    max_rows: int = public(default=1)

    def __post_init__(self):
        check_release_guarantee(self, needs_delta=True)
        _check_bounds_and_count(self)
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


def _check_bounds_and_count(release) -> None:
    """Check the public bounds ``x_bound``, ``y_bound`` and the record count of a linear release:
    ``n`` under replace-one, ``n_noisy`` (with ``n`` None) under add/remove.

    Parameters
    ----------
    release : LinearStatsLaplaceRelease or LinearStatsRelease
        The release whose fields are checked, in that order.

    Raises
    ------
    ValueError
        Naming the first field that is not a valid bound or count.
    """
    for name in ("x_bound", "y_bound"):
        check_release_field(name, check_bound, name, getattr(release, name))
    check_public_n(release)
    check_release_rows(release)


def _check_count_noise(release, expected: float) -> None:
    """``clip_share`` a valid share and ``clip_noise`` the noise scale of the counts it implies (None without counts)."""
    share = check_release_field("clip_share", check_clip_share, release.clip_share, release.epsilon)
    if share == 0:
        if release.clip_noise is not None:
            raise ValueError("field 'clip_noise' must be None when 'clip_share' is 0 (no counts released)")
        return
    check_release_consistent(
        "clip_noise", release.clip_noise, expected, "the counts' noise scale implied by 'clip_share'"
    )


def _check_laplace_noise_fields(release) -> None:
    """The split, sensitivities, ε parts and noise scales of a Laplace release as
    ``release_linear_stats(noise="laplace")`` computes them from its public inputs (ValueError naming the field)."""
    split = check_release_field("split", _check_split, release.split)
    intercept = check_release_field("intercept", check_bool, "intercept", release.intercept)
    check_release_field("intercept", _check_laplace_intercept, release.x_bound, intercept)
    private_n = release.neighbours == ADD_REMOVE
    stated = (
        "(d(d+1)·'x_bound'²/2, d·'x_bound'·'y_bound', 'y_bound'²) under add/remove"
        if private_n
        else "(d(d+1)·'x_bound'², 2d·'x_bound'·'y_bound', 'y_bound'²)"
    )
    per_column = (1.0 if private_n else 2.0) * release.x_bound * release.y_bound  # times k, checked below
    d = release.sensitivities[1] / per_column if len(release.sensitivities) == 3 else 0
    if not (d >= release.max_rows and abs(d - round(d)) < 1e-6 * d):
        raise ValueError(f"field 'sensitivities' must be {stated} for an integer d ≥ 1")
    d = int(round(d / release.max_rows))
    *expected, counts = (
        s.under(release.neighbours)
        for s in laplace_sensitivities(d, release.x_bound, release.y_bound, release.max_rows)
    )
    share = check_release_field("clip_share", check_clip_share, release.clip_share, release.epsilon)
    parts = tuple(p * (1.0 - share) * release.epsilon for p in split)
    for name, values, implied, how in (
        ("sensitivities", release.sensitivities, expected, stated),
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
    _check_count_noise(release, counts / (share * release.epsilon) if share > 0 else 0.0)


def _check_gaussian_noise_fields(release) -> None:
    """The sensitivity, noise scale and count noise of a Gaussian release as
    ``release_linear_stats(noise="gaussian")`` computes them from its public inputs (ValueError naming the field)."""
    share = check_release_field("clip_share", check_clip_share, release.clip_share, release.epsilon)
    intercept = check_release_field("intercept", check_bool, "intercept", release.intercept)
    _, sensitivity, weight = gaussian_release_vector(
        1,
        release.x_bound,
        release.y_bound,
        share,
        scale_response=bool(release.scale_response),
        intercept=intercept,
        relation=release.neighbours,
        max_rows=release.max_rows,
    )
    sensitivity = sensitivity.under(release.neighbours)
    check_release_consistent(
        "sensitivity",
        release.sensitivity,
        sensitivity,
        "gaussian_sensitivity('x_bound', 'y_bound', intercept='intercept')/√(1 − 'clip_share')",
    )
    check_gaussian_scale_field("noise_scale", release.noise_scale, sensitivity, release.epsilon, release.delta)
    _check_count_noise(release, release.noise_scale / weight if share > 0 else 0.0)

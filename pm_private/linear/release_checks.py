"""The sensitivities of the releases of linear sufficient statistics under replace-one and
add/remove neighbours (Honkela et al. 2018 for the entrywise bounds; Sheffet 2017 and Wang 2018 for
the row-norm bound), the checks of their public arguments, and the steps both releases share."""

from __future__ import annotations

import math

import numpy as np

from ..privacy.primitives import (
    check_noise_scale,
)
from ..privacy.relations import ADD_REMOVE, REPLACE_ONE, Sensitivity, check_relation
from ..privacy.validation import (
    MIN_EPSILON,
    check_bound,
    check_clip_share,
    check_epsilon,
)
from ..released.preprocessing import Preprocessing


def sensitivities(d: int, x_bound: float, y_bound: float, relation: str = REPLACE_ONE) -> tuple[float, float, float]:
    """ℓ1 sensitivities (Sxx upper triangle, Sxy, Syy): (d(d+1)Bx²/2, 2dBxBy, By²) under
    replace-one, (d(d+1)Bx²/2, dBxBy, By²) under add/remove; each is attained.

    Add/remove.  One row adds d(d+1)/2 entries xⱼxₖ ∈ [−Bx², Bx²] to the upper triangle of Sxx,
    d entries xⱼy ∈ [−BxBy, BxBy] to Sxy and y² ∈ [0, By²] to Syy; a row whose entries are all
    ±Bx, with y = ±By, attains all three.

    Replace-one.  Sxy: each xⱼy − x′ⱼy′ lies in [−2BxBy, 2BxBy], attained by flipping y.  Syy:
    y² − y′² ∈ [−By², By²].  Sxx: the bound 2Bx² per entry (Honkela et al. 2018, d(d+1)Bx² in
    all) is twice the exact one.  With a = x/Bx, b = x′/Bx in [−1, 1]ᵈ, u = (a − b)/2 and
    v = (a + b)/2 (so |uⱼ| + |vⱼ| ≤ 1), aⱼaₖ − bⱼbₖ = 2(uⱼvₖ + vⱼuₖ); with pⱼ = |uⱼ|, qⱼ = |vⱼ|,
    P = Σpⱼ, Q = Σqⱼ,

        Σⱼ≤ₖ |aⱼaₖ − bⱼbₖ| ≤ 4Σⱼ pⱼqⱼ + 2Σⱼ<ₖ (pⱼqₖ + qⱼpₖ) = 2Σⱼ pⱼqⱼ + 2PQ.

    Raising each qⱼ to 1 − pⱼ only raises this, and then Σⱼ pⱼ(1 − pⱼ) ≤ P − P²/d
    (Cauchy–Schwarz), so it is at most 2(d + 1)·P(1 − P/d) ≤ d(d + 1)/2 (times Bx²), at P = d/2.  A row
    on a corner of the box replaced by the zero row attains it: the add/remove value.

    Bounds whose sensitivities overflow or underflow to 0 are refused (ValueError naming them).

    Parameters
    ----------
    d : int
        The number of covariates.
    x_bound, y_bound : float
        The clipping bounds Bx, By.
    relation : {"replace-one", "add-remove"}, default "replace-one"
        The neighbour relation (:mod:`pm_private.privacy.relations`).

    Returns
    -------
    tuple of float
        The three ℓ1 sensitivities.

    Raises
    ------
    ValueError
        If a sensitivity overflows or underflows to 0, or the relation is unknown.
    """
    half = 0.5 if check_relation(relation) == ADD_REMOVE else 1.0
    with np.errstate(over="ignore", under="ignore"):
        values = (d * (d + 1) / 2 * (x_bound * x_bound), half * 2 * d * x_bound * y_bound, y_bound * y_bound)
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


def check_release_arguments(
    d: int, *, epsilon, x_bound, y_bound, split=(0.60, 0.35, 0.05), clip_share=0.05, relation=REPLACE_ONE
) -> tuple:
    """The public arguments of ``release_linear_stats(noise="laplace")`` for d features, checked before any work.

    The command line calls it once it knows the number of feature columns, before reading any
    record; the Laplace release calls it before its pass over the data.

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
        The share of ε spent on the counts of clipped rows and responses (0 or in [0.001, 0.5]);
        under add/remove it also releases n, so it must be > 0.
    relation : {"replace-one", "add-remove"}, default "replace-one"
        The neighbour relation.

    Returns
    -------
    sensitivities : tuple of float
        The three ℓ1 sensitivities (:func:`sensitivities`) under ``relation``.
    epsilon_parts : tuple of float
        The ε of each statistic, pₖ·(1 − clip_share)·ε.

    Raises
    ------
    ValueError
        Naming the argument: ε, a bound or a split out of range, a share whose ε is below
        10⁻⁶ (or 0 under add/remove), an unknown relation, or a sensitivity or noise scale that
        overflows or underflows.
    """
    epsilon = check_epsilon(epsilon)
    x_bound = check_bound("x_bound", x_bound)
    y_bound = check_bound("y_bound", y_bound)
    split = _check_split(split)
    clip_share = check_count_share(clip_share, epsilon, relation)
    sens = sensitivities(d, x_bound, y_bound, relation)
    eps_parts = tuple(p * (1.0 - clip_share) * epsilon for p in split)
    if min(eps_parts) < MIN_EPSILON:
        raise ValueError(f"split gives a statistic an ε below {MIN_EPSILON:g} (split × epsilon); raise its share")
    for s, e in zip(sens, eps_parts, strict=True):
        try:
            check_noise_scale(s, e)
        except ValueError:
            raise ValueError("x_bound, y_bound, epsilon and split give a noise scale that overflows") from None
    return sens, eps_parts


def check_count_share(clip_share, epsilon: float, relation) -> float:
    """``clip_share`` checked (:func:`pm_private.privacy.validation.check_clip_share`), and > 0 under
    add/remove neighbours, where the counts' share also releases n (ValueError naming it)."""
    clip_share = check_clip_share(clip_share, epsilon)
    if check_relation(relation) == ADD_REMOVE and clip_share == 0:
        raise ValueError(
            "clip_share must be > 0 under add/remove neighbours: n is private and released with the counts' share"
        )
    return clip_share


def gaussian_sensitivity(
    x_bound: float, y_bound: float, *, intercept: bool = False, relation: str = REPLACE_ONE
) -> float:
    """ℓ2 sensitivity of the weighted upper triangle w ⊙ upper(zzᵀ), z = (x, y)
    (:func:`frobenius_weights`: its norm is the Frobenius norm), for ‖x‖₂ ≤ Bx and |y| ≤ By:
    √2·(Bx² + By²) under replace-one, Bx² + By² under add/remove; with an intercept, z = c·(1, x, y),
    c ≤ 1, Bx² + By² + 1 in their place.

    With R² = Bx² + By² (+ 1 with the intercept) ≥ ‖z‖²: an added or removed row moves S by zzᵀ,
    ‖zzᵀ‖_F = ‖z‖² ≤ R²; a replaced one by M = zzᵀ − z′z′ᵀ, ‖M‖_F² = ‖z‖⁴ + ‖z′‖⁴ − 2(zᵀz′)² ≤ 2R⁴,
    attained by orthogonal z, z′ on the sphere (:func:`pm_private.privacy.relations.gram_sensitivity`).
    The unweighted upper triangle has the same
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
    relation : {"replace-one", "add-remove"}, default "replace-one"
        The neighbour relation.

    Returns
    -------
    float
        The ℓ2 sensitivity.

    Raises
    ------
    ValueError
        If the sensitivity overflows or underflows to 0, or the relation is unknown.
    """
    with np.errstate(over="ignore", under="ignore"):
        square = x_bound * x_bound + y_bound * y_bound + (1.0 if intercept else 0.0)
    value = gram_row_sensitivity(square).under(relation)
    return finite_sensitivities((value,), "x_bound and y_bound")[0]


def laplace_sensitivities(d: int, x_bound: float, y_bound: float, max_rows: int = 1) -> tuple[Sensitivity, ...]:
    """Each Laplace query's ℓ1 sensitivity under both relations, for a person of up to k =
    ``max_rows`` rows (:meth:`~pm_private.privacy.relations.Sensitivity.of_units_with_rows`): Sxx's
    upper triangle, Sxy and Syy (:func:`sensitivities`), then the counts: 2 under replace-one (the
    rows changed and the responses clipped, each moved by at most 1), 3 under add/remove (n too,
    moved by 1)."""
    rows = zip(sensitivities(d, x_bound, y_bound, ADD_REMOVE), sensitivities(d, x_bound, y_bound), strict=True)
    return tuple(Sensitivity(*row).of_units_with_rows(max_rows) for row in (*rows, (3.0, 2.0)))


def gram_row_sensitivity(square: float) -> Sensitivity:
    """The Frobenius sensitivity of Σ zzᵀ for ‖z‖² ≤ ``square`` = R²: R² under add/remove, √2·R²
    under replace-one."""
    return Sensitivity(square, math.sqrt(2.0) * square)


def gaussian_release_vector(
    d: int,
    x_bound: float,
    y_bound: float,
    clip_share: float,
    *,
    scale_response: bool,
    intercept: bool = False,
    relation: str = REPLACE_ONE,
    max_rows: int = 1,
) -> tuple[int, Sensitivity, float]:
    """The vector :func:`release_linear_stats` noises: its length, ℓ2 sensitivity and count weight.

    The (d+1)(d+2)/2 Frobenius-weighted statistics (sensitivity Δ = :func:`gaussian_sensitivity`)
    and, with ``clip_share`` p > 0, the q counts (q = 2: rows scaled and responses clipped; q = 3
    with ``scale_response``, which adds Σcᵢ², each row's contribution in [0, 1]; under add/remove
    one more, n, each row's contribution 1) weighted by a = Δ·√(p/(q(1 − p))), so that their ℓ2
    sensitivity a√q takes the share p of the squared sensitivity: the whole vector has ℓ2
    sensitivity Δ/√(1 − p) under the release's relation.  The same vector moves by at most
    √(R⁴ + a²q) when a row is added or removed and by at most √(2R⁴ + a²q′) when one is replaced,
    q′ the counts other than n (a replaced row leaves n as it is): a ledger converts an add/remove
    release with the second.  A person of up to k = ``max_rows`` rows moves it by k times the first
    (:meth:`pm_private.privacy.relations.Sensitivity.of_units_with_rows`).  Public: depends only on
    its arguments.

    Parameters
    ----------
    d : int
        The number of covariates.
    x_bound, y_bound : float
        The public bounds Bx (row norm) and By.
    clip_share : float
        The share p of the counts (0: no counts; > 0 under add/remove).
    scale_response : bool
        Whether responses are scaled with their rows (then Σcᵢ² is released too).
    intercept : bool, default False
        Whether a constant column is prepended (d + 1 columns, the larger sensitivity).
    relation : {"replace-one", "add-remove"}, default "replace-one"
        The neighbour relation (add/remove: n private, released as the last count).
    max_rows : int, default 1
        k, the most rows a person contributes (above 1 under add/remove only).

    Returns
    -------
    size : int
        The number of values noised together.
    sensitivity : Sensitivity
        Their ℓ2 sensitivity under both relations (``sensitivity.under(relation)`` calibrates the noise).
    count_weight : float
        The weight a of the counts (0 without them).
    """
    private_n = check_relation(relation) == ADD_REMOVE
    gram = gaussian_sensitivity(x_bound, y_bound, intercept=intercept, relation=relation)
    clip_counts = (3 if scale_response else 2) if clip_share > 0 else 0
    counts = clip_counts + (private_n and clip_share > 0)
    columns = d + bool(intercept)
    size = (columns + 1) * (columns + 2) // 2 + counts
    weight = gram * math.sqrt(clip_share / (max(counts, 1) * (1.0 - clip_share)))
    rows = gram_row_sensitivity(gaussian_sensitivity(x_bound, y_bound, intercept=intercept, relation=ADD_REMOVE))
    sensitivity = Sensitivity(
        math.hypot(rows.add_remove, weight * math.sqrt(counts)),
        math.hypot(rows.replace_one, weight * math.sqrt(clip_counts)),
    )
    return size, sensitivity.of_units_with_rows(max_rows), weight


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


def _count_fields(clip_share: float, counts, noise, private_n: bool = False) -> dict:
    """The clipping-count fields of a release that releases them (``clip_share`` > 0): the
    counts of changed rows and clipped responses, Σcᵢ² when a third count is given, and, where n
    is private, the last count as ``n_noisy``."""
    if private_n:
        return _count_fields(clip_share, counts[:-1], noise) | {"n_noisy": float(counts[-1])}
    fields = dict(
        clip_share=clip_share,
        clip_noise=float(noise),
        clipped_rows=float(counts[0]),
        clipped_responses=float(counts[1]),
    )
    if len(counts) > 2:
        fields["effective_rows"] = float(counts[2])
    return fields


def _symmetric_from_upper(values, columns: int) -> np.ndarray:
    """The symmetric columns × columns matrix whose upper triangle (row-major, as
    ``numpy.triu_indices``) is ``values``."""
    upper = np.triu_indices(columns)
    matrix = np.zeros((columns, columns))
    matrix[upper] = values
    return matrix + np.triu(matrix, 1).T


def _check_preprocessing(preprocessing) -> None:
    """None or a :class:`~pm_private.Preprocessing`, else ValueError."""
    if preprocessing is not None and not isinstance(preprocessing, Preprocessing):
        raise ValueError(f"preprocessing must be a Preprocessing, got {type(preprocessing).__name__}")

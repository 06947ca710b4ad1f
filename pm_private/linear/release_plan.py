"""The noise plan of a release of linear sufficient statistics (:func:`linear_noise_plan`): the
budget split, sensitivities and noise of each statistic, known before any data is read."""

from __future__ import annotations

import dataclasses
import math

from .._engine.keywords import renamed_keywords
from ..privacy.primitives import (
    check_gaussian_epsilon,
    check_noise_scale,
)
from ..privacy.relations import ADD_REMOVE, REPLACE_ONE, Sensitivity, check_relation
from ..privacy.units import check_max_rows
from ..privacy.validation import (
    CLIP_SHARE,
    check_bool,
    check_bound,
    check_count,
    check_delta,
    check_epsilon,
)
from ..released.noise_plan import NoisePlan, gaussian_query, laplace_query, laplace_sd
from .release_checks import (
    _check_laplace_intercept,
    check_count_share,
    check_release_arguments,
    gaussian_release_vector,
    laplace_sensitivities,
)

#: The statistic groups of the plans of :func:`linear_noise_plan`.
_LAPLACE_COUNTS = "clipped-row and clipped-response counts"


#: Under add/remove neighbours the counts end with n (private).
_WITH_N = " and n (private: add/remove neighbours)"


_GAUSSIAN_DIAGONAL = "the diagonal of Sxx and Syy"


_GAUSSIAN_OFF_DIAGONAL = "the other entries of Sxx and Sxy"


def check_gaussian_arguments(epsilon, delta, x_bound, y_bound, split, clip_share, scale_response, relation=REPLACE_ONE):
    """The Gaussian release's public arguments checked, in order, before any data is read:
    (ε, δ, Bx, By, clip share, scale_response); ValueError naming the argument (the relation first)."""
    check_relation(relation)
    if split is not None:
        raise ValueError("split applies to the Laplace mechanism only (the Gaussian release adds one noise)")
    if delta is None:
        raise ValueError("delta: the Gaussian mechanism needs the δ of the release, in (0, 1)")
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    x_bound = check_bound("x_bound", x_bound)
    y_bound = check_bound("y_bound", y_bound)
    clip_share = check_count_share(clip_share, epsilon, relation)
    scale_response = check_bool("scale_response", True if scale_response is None else scale_response)
    return epsilon, delta, x_bound, y_bound, clip_share, scale_response


def _gaussian_counts(scale_response: bool, relation: str = REPLACE_ONE) -> str:
    """The name of the group of counts a Gaussian release adds (with Σcᵢ² when it scales
    responses, and n under add/remove)."""
    name = _LAPLACE_COUNTS + (" and the rows' summed squared scale factors" if scale_response else "")
    return name + (_WITH_N if relation == ADD_REMOVE else "")


@renamed_keywords(mechanism="noise")
def linear_noise_plan(
    d: int,
    *,
    epsilon: float,
    delta: float | None = None,
    x_bound: float,
    y_bound: float,
    noise: str = "gaussian",
    split=None,
    clip_share: float = CLIP_SHARE,
    scale_response: bool | None = None,
    intercept: bool = True,
    relation: str = REPLACE_ONE,
    max_rows: int = 1,
) -> NoisePlan:
    """The noise a release of linear-regression statistics of d covariates adds, before any data is read.

    ``noise="gaussian"`` plans :func:`release_linear_stats`: one Gaussian query on the
    Frobenius-weighted vector of ``gaussian_release_vector`` (with the clipping counts), its
    ℓ2 sensitivity and σ, and the noise s.d. σ/w of each group of statistics (σ on the diagonal of
    Sxx and on Syy, σ/√2 on the other entries of Sxx and on Sxy, σ/a on each count).
    ``noise="laplace"`` plans its Laplace release: the Laplace queries on
    Sxx (upper triangle), Sxy and Syy with their ℓ1 sensitivities (:func:`sensitivities`) at
    pₖ(1 − ``clip_share``)ε, and on the two clipping counts (ℓ1 sensitivity 2) at
    ``clip_share``·ε.  Under add/remove neighbours the sensitivities are those of an added or
    removed row and n, private, is the counts' last entry (ℓ1 sensitivity 3 for the Laplace
    counts).  With ``max_rows`` = k > 1 (add/remove only: a person's up to k rows) every
    sensitivity is k times the row's.  Both releases take their sensitivities, ε split and noise
    scales from this plan.  Public: it depends only on its arguments.

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
    noise : {"gaussian", "laplace"}, default "gaussian"
        The release planned: :func:`release_linear_stats` with that ``noise``.
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
    relation : {"replace-one", "add-remove"}, default "replace-one"
        The neighbour relation (:mod:`pm_private.privacy.relations`).
    max_rows : int, default 1
        k, the most rows kept per person (:func:`pm_private.privacy.check_max_rows`).

    Returns
    -------
    NoisePlan
        The queries, their sensitivities, ε and scales, and the noise s.d. per statistic group.

    Raises
    ------
    ValueError
        Naming the argument, as the release would before spending anything: an invalid ε, δ,
        bound, split, share or noise, or a noise scale that overflows or underflows.

    Examples
    --------
    >>> from pm_private.linear.release import linear_noise_plan
    >>> plan = linear_noise_plan(
    ...     3, epsilon=1.0, x_bound=1.0, y_bound=2.0, noise="laplace", clip_share=0.0, intercept=False
    ... )
    >>> dict(plan.sensitivity)
    {'Sxx': 12.0, 'Sxy': 12.0, 'Syy': 4.0}
    >>> [round(b, 4) for b in plan.noise_scale.values()]
    [20.0, 34.2857, 80.0]
    >>> gaussian = linear_noise_plan(3, epsilon=1.0, delta=1e-6, x_bound=1.5, y_bound=2.0, intercept=False)
    >>> round(gaussian.sensitivity["weighted vector"], 5), round(gaussian.noise_sd["the diagonal of Sxx and Syy"], 3)
    (9.06845, 41.088)
    """
    if noise not in ("gaussian", "laplace"):
        raise ValueError(f"noise must be 'gaussian' or 'laplace', got {noise!r:.40}")
    max_rows = check_max_rows(max_rows, check_relation(relation))
    d = check_count("d", d)
    intercept = check_bool("intercept", intercept)
    if noise == "laplace":
        layout = (scale_response, intercept, relation, max_rows)
        return _laplace_plan(d, epsilon, delta, x_bound, y_bound, split, clip_share, layout)
    epsilon, delta, x_bound, y_bound, clip_share, scale_response = check_gaussian_arguments(
        epsilon, delta, x_bound, y_bound, split, clip_share, scale_response, relation
    )
    check_gaussian_epsilon(epsilon)
    size, sensitivity, count_weight = gaussian_release_vector(
        d, x_bound, y_bound, clip_share, scale_response=scale_response, intercept=intercept, relation=relation,
        max_rows=max_rows,
    )  # fmt: skip
    check_noise_scale(sensitivity.under(relation), epsilon)
    query = gaussian_query("weighted vector", size, sensitivity.under(relation), epsilon, delta)
    query = dataclasses.replace(query, replace_one=sensitivity.replace_one)
    sigma = query.scale
    weights = {_GAUSSIAN_DIAGONAL: 1.0, _GAUSSIAN_OFF_DIAGONAL: math.sqrt(2.0)}
    notes = ()
    if clip_share > 0:
        counts = _gaussian_counts(scale_response, relation)
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
        relation=relation,
    )


def _laplace_query(name: str, size: int, sensitivity: Sensitivity, epsilon: float, relation: str):
    """A Laplace query of the plan at its sensitivity under ``relation``, stating the replace-one one."""
    value = sensitivity.under(relation)
    check_noise_scale(value, epsilon)
    return dataclasses.replace(laplace_query(name, size, value, epsilon), replace_one=sensitivity.replace_one)


def _laplace_plan(d, epsilon, delta, x_bound, y_bound, split, clip_share, layout):
    """:func:`linear_noise_plan` of the Laplace release (its arguments checked here); ``layout`` =
    (scale_response, intercept, relation, max_rows)."""
    scale_response, intercept, relation, max_rows = layout
    if delta is not None and delta != 0:
        raise ValueError("delta applies to the Gaussian mechanism only (the Laplace release is pure ε-DP)")
    scale_response = check_bool("scale_response", False if scale_response is None else scale_response)
    _check_laplace_intercept(x_bound, intercept)
    columns = d + intercept
    sens, eps_parts = check_release_arguments(
        columns,
        epsilon=epsilon,
        x_bound=x_bound,
        y_bound=y_bound,
        split=(0.60, 0.35, 0.05) if split is None else split,
        clip_share=clip_share,
        relation=relation,
    )
    epsilon, clip_share = check_epsilon(epsilon), float(clip_share)
    *per_person, counts = laplace_sensitivities(columns, x_bound, y_bound, max_rows)
    sizes = (columns * (columns + 1) // 2, columns, 1)
    queries = [
        _laplace_query(name, size, s, e, relation)
        for name, size, s, e in zip(("Sxx", "Sxy", "Syy"), sizes, per_person, eps_parts, strict=True)
    ]
    if clip_share > 0:  # the clipping counts move by at most 1 each a row (and n by 1 under add/remove)
        name = _LAPLACE_COUNTS + (_WITH_N if relation == ADD_REMOVE else "")
        size = 3 if relation == ADD_REMOVE else 2
        queries.append(_laplace_query(name, size, counts, clip_share * epsilon, relation))
    return NoisePlan(
        mechanism="laplace",
        epsilon=epsilon,
        queries=tuple(queries),
        noise_sd={q.name: laplace_sd(q.scale) for q in queries},
        d=d,
        relation=relation,
    )

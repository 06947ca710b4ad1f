"""The steps every degree-2 GLM release shares (logistic, Poisson): the argument checks, the noise
plan of one Gaussian query on the weighted statistic vector, the rows' preparation and the release
itself, and the fields of its release beside the noisy sums; a family supplies its sensitivity,
its entry weights and what it does to the response (labels to ±1, counts clipped to a bound).
Kulkarni et al. (2021); Huggins, Adams & Broderick (2017).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .._engine.docstrings import SharedParameterDocs
from ..privacy.noise import as_noise_source
from ..privacy.primitives import check_gaussian_epsilon, check_noise_scale, project_rows
from ..privacy.relations import ADD_REMOVE, REPLACE_ONE, Sensitivity, check_relation
from ..privacy.release import output, public
from ..privacy.units import check_max_rows, rows_per_unit
from ..privacy.validation import (
    as_matrix,
    check_bound,
    check_count,
    check_delta,
    check_epsilon,
    check_finite_rows,
    column_names,
)
from .degree2 import degree2_pairs, degree2_sums, release_degree2
from .noise_plan import NoisePlan, gaussian_query
from .preprocessing import Preprocessing, check_glm_preprocessing, preprocessed_rows

__all__ = [
    "N_GROUP",
    "GLMReleaseFields",
    "RowBound",
    "GLM_EXACT_PARAMETERS",
    "GLM_PLAN_PARAMETERS",
    "GLM_RELEASE_PARAMETERS",
    "GLM_SENSITIVITY_PARAMETERS",
    "checked_gaussian",
    "degree2_noise_plan",
    "degree2_sensitivities",
    "exact_degree2",
    "prepared_rows",
    "release_glm_degree2",
]


@dataclass(frozen=True, kw_only=True)
class RowBound(SharedParameterDocs):
    """The public row bound of a GLM release (the first of its fields after the noisy sums).

    Parameters
    ----------
    x_bound : float
        The public bound Bx on the ℓ2 norm of a covariate row.
    """

    x_bound: float = public()


@dataclass(frozen=True, kw_only=True)
class GLMReleaseFields(SharedParameterDocs):
    """The fields a GLM release records after its bounds: the Gaussian mechanism's sensitivity and
    noise, and the rows' public schema and preprocessing.  A family's release lists it first among
    its bases, then its bounds (:class:`RowBound`, and a count bound), ``Degree2Sums`` and
    ``Release``: ``class LogisticStatsRelease(GLMReleaseFields, RowBound, Degree2Sums, Release,
    kind=...)``, so that its fields read sums, bounds, then these.

    Parameters
    ----------
    epsilon : float
        The ε OpenDP certifies at ``delta``.
    sensitivity : float
        The ℓ2 sensitivity of the weighted vector (the family's sensitivity function proves it).
    noise_scale : float
        The noise standard deviation σ on the weighted entries.
    features : tuple of str, optional
        The column names of ``X`` when it was a data frame (its public schema; None otherwise),
        the default ``feature`` coordinates of the family's model.
    preprocessing : Preprocessing, optional
        The public map applied to the rows before the projection (None: none).
    n_noisy : float, optional
        Under add/remove neighbours (n private), the noisy count n + ξ released with the
        statistics, noise s.d. σ; None under replace-one, where n is public.
    max_rows : int, default 1
        k, the most rows kept per person (1 where the unit is the row); ``sensitivity`` is k
        times the row's.
    """

    sensitivity: float = public()
    noise_scale: float = public()
    features: tuple[str, ...] | None = public(default=None)
    preprocessing: Preprocessing | None = public(default=None)
    n_noisy: float | None = output(default=None)
    max_rows: int = public(default=1)


#: The statistic group of a GLM noise plan under add/remove neighbours: the count, noised with the sums.
N_GROUP = "n (private: add/remove neighbours)"

#: The arguments every GLM release (``release_logistic_stats``, ``release_poisson_stats``) shares,
#: documented once: a release takes them with ``parameters_from(GLM_RELEASE_PARAMETERS)``.
GLM_RELEASE_PARAMETERS = """
Parameters
----------
X : array-like, shape (n, d)
    Private covariates (numpy or pandas).
epsilon : float
    ε > 0.
delta : float
    δ in (0, 1); choose it well below 1/n.
preprocessing : Preprocessing, optional
    Public map x ↦ (x − x_center)/x_scale applied to the rows before the projection (its
    constants fixed in advance or computed from public rows, e.g.
    :meth:`pm_private.Preprocessing.from_public`); it travels with the release, and the
    predictor applies it to new rows.  The response is not rescaled (y_center 0, y_scale 1).
accountant : PrivacyAccountant, optional
    Charged (ε, δ) before noise is drawn; refuses with BudgetExceededError if over budget.
rng : None, int or numpy.random.Generator
    None for the secure OS generator (private); a seed only for tests.
relation : {"replace-one", "add-remove"}, default "replace-one"
    The neighbour relation (:mod:`pm_private.privacy.relations`): replace-one, n public and
    recorded in the release; or add/remove, n private: the count is released with the
    statistics (weight 1, the same noise) as ``n_noisy``, the release's ``n`` is None and the
    model takes n as latent.
unit : array-like, shape (n,), optional
    The person of each row (any hashable identifiers): the release then protects a person
    with all their rows by keeping at most ``max_rows`` rows per person, chosen at random, and
    n is the number of rows kept (:func:`pm_private.privacy.rows_kept_per_unit`).  None: the
    unit is the row.
max_rows : int, default 1
    k, the most rows kept per person (with ``unit``).  Above 1 the number of rows kept is
    private, so it needs ``relation="add-remove"``; the noise is then that of k times the
    row's sensitivity (:func:`pm_private.privacy.check_max_rows`), and the model treats the
    kept rows as independent draws (rows of one person that are alike could make its
    intervals too narrow; covariate rows correlated 0.9 within a person did not, in the
    measurements of the documentation's privacy page).
"""

#: The arguments of every GLM release's noise plan, documented once.
GLM_PLAN_PARAMETERS = """
Parameters
----------
d : int
    The number of covariates, ≥ 1.
epsilon : float
    ε > 0 (at most 700).
delta : float
    δ in (0, 1).
x_bound : float
    The public bound Bx on the ℓ2 norm of a covariate row.
relation : {"replace-one", "add-remove"}, default "replace-one"
    The neighbour relation; under add/remove the count n is noised with the statistics.
max_rows : int, default 1
    k, the most rows a release keeps per person: the sensitivity is k times the row's, and k > 1
    needs add/remove.
"""

#: The arguments, result and refusals of every GLM family's sensitivity, documented once.
GLM_SENSITIVITY_PARAMETERS = """
Parameters
----------
x_bound : float
    The bound Bx > 0 on ‖x‖₂.
relation : {"replace-one", "add-remove"}, default "replace-one"
    The neighbour relation.

Returns
-------
float
    The ℓ2 sensitivity.

Raises
------
ValueError
    If ``x_bound`` is not in [10⁻⁵⁰, 10⁵⁰], the relation is unknown, or the sensitivity
    overflows.
"""

#: The arguments of every GLM family's exact statistics of public data, documented once.
GLM_EXACT_PARAMETERS = """
Parameters
----------
X : array_like, shape (n, d)
    Public covariates.
x_bound : float, optional
    Project rows onto ‖x‖₂ ≤ ``x_bound`` first (None: no projection).
"""


def degree2_sensitivities(x_bound, add_remove: Callable, replace_one: Callable) -> Sensitivity:
    """The weighted vector's sensitivity under both relations, each a function of P = Bx² (and Bx),
    after the bound's check; ValueError where either overflows."""
    x_bound = check_bound("x_bound", x_bound)
    p = x_bound * x_bound
    with np.errstate(over="ignore"):
        value = Sensitivity(add_remove(p, x_bound), replace_one(p, x_bound))
    if not (math.isfinite(value.add_remove) and math.isfinite(value.replace_one)):
        raise ValueError("x_bound gives a sensitivity that overflows; choose a bound nearer 1")
    return value


def checked_gaussian(
    epsilon,
    delta,
    x_bound,
    sensitivity: Callable[[float, str], float],
    relation: str = REPLACE_ONE,
    max_rows: int = 1,
) -> tuple[float, float, float, float]:
    """(ε, δ, Bx, Δ) checked in the order a release checks them before reading any data: ε, δ,
    the relation, ``max_rows`` (k), the bound (through ``sensitivity``; Δ is k times the row's
    under ``relation``) and the noise scale; ValueError naming the argument."""
    epsilon = check_gaussian_epsilon(check_epsilon(epsilon))
    delta = check_delta(delta)
    max_rows = check_max_rows(max_rows, check_relation(relation))
    value = max_rows * sensitivity(x_bound, relation)
    check_noise_scale(value, epsilon)
    return epsilon, delta, float(x_bound), value


def degree2_noise_plan(
    d, *, epsilon: float, delta: float, sensitivity: float, weights: dict, relation: str = REPLACE_ONE
) -> NoisePlan:
    """One Gaussian query on the weighted vector of the 2d + 1 + d(d+1)/2 statistics (and the count
    n first, weight 1, under add/remove): σ by OpenDP's privacy map for ``sensitivity``, and σ/w the
    noise s.d. of each statistic group of weight w."""
    d = check_count("d", d)
    private_n = check_relation(relation) != REPLACE_ONE
    size = degree2_pairs(d)[0].size + private_n
    query = gaussian_query("weighted vector", size, sensitivity, epsilon, delta)
    weights = {**({N_GROUP: 1.0} if private_n else {}), **weights}
    return NoisePlan(
        mechanism="gaussian",
        epsilon=epsilon,
        delta=delta,
        queries=(query,),
        noise_sd={group: query.scale / w for group, w in weights.items()},
        weights=weights,
        d=d,
        relation=relation,
    )


def prepared_rows(X, y, x_bound, response: Callable, allow_empty: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(rows projected onto ‖x‖ ≤ ``x_bound``, ``response(y, n)``) after the checks of the release
    (nothing is spent before them); no projection when ``x_bound`` is None; ``allow_empty`` takes
    no rows (a release under add/remove neighbours)."""
    X = as_matrix(X, allow_empty=allow_empty)
    values = response(y, X.shape[0])
    check_finite_rows(X)
    return (X if x_bound is None else project_rows(X, x_bound)), values


def exact_degree2(X, y, x_bound, response: Callable, *, check_y: bool = False):
    """(Σx, Σy, Sxx, Syx, n) of public rows after :func:`prepared_rows`; ValueError where the products
    overflow (``check_y``: Syx too)."""
    X, values = prepared_rows(X, y, x_bound, response)
    x_sum, y_sum, xx, yx = degree2_sums(X, values)
    sums = (xx, x_sum, yx) if check_y else (xx, x_sum)
    if not all(np.isfinite(s).all() for s in sums):
        raise ValueError("X is too large: its products overflow (rescale it)")
    return x_sum, y_sum, xx, yx, X.shape[0]


def release_glm_degree2(
    X,
    y,
    *,
    x_bound,
    response,
    plan_for,
    weights_for,
    mechanism,
    build,
    preprocessing,
    accountant,
    rng,
    unit=None,
    sensitivity=None,
    relation=REPLACE_ONE,
    max_rows=1,
):
    """The release both GLM families make: the public map of ``preprocessing``, the rows prepared,
    at most ``max_rows`` rows per person kept where ``unit`` identifies persons
    (:func:`~pm_private.privacy.rows_per_unit`), then one Gaussian release of the
    weighted statistics (``release_degree2``), charged before the noise is drawn.  ``plan_for(d)``
    and ``weights_for(d)`` give the family's plan and weights; ``build(features, **fields)`` its
    release record; ``sensitivity`` the weighted vector's under both relations (a
    :class:`~pm_private.privacy.relations.Sensitivity`, for the ledger under add/remove);
    ``relation`` the plan's, under which (add/remove) data of no row are released as any other;
    ``max_rows`` the rows kept per person (checked already), which ``build`` records."""
    features = column_names(X)
    check_glm_preprocessing(preprocessing)
    empty = relation == ADD_REMOVE
    X, refusal = preprocessed_rows(preprocessing, X, allow_empty=empty)
    X, values = prepared_rows(X, y, x_bound, response, allow_empty=empty)
    source = as_noise_source(rng)
    (X, values), unit = rows_per_unit(unit, source, X, values, max_rows=max_rows)
    plan = plan_for(X.shape[1])
    return release_degree2(
        X,
        values,
        weights=weights_for(X.shape[1]),
        plan=plan,
        mechanism=mechanism,
        accountant=accountant,
        source=source,
        build=lambda **fields: build(features, max_rows=max_rows, **fields),
        refusal=refusal,
        unit=unit,
        sensitivity=None if sensitivity is None else sensitivity.of_units_with_rows(max_rows),
    )

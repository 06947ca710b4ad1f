"""The ε-DP release of clipped sufficient statistics with the Laplace mechanism (Honkela et al. 2018,
Eqs. 5–7), in memory or partition by partition on Dask collections: ``release_linear_stats(noise=
"laplace")``; the mechanism and its sensitivities are in :mod:`pm_private.linear.release`."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from .._engine.dask import is_dask
from ..privacy.accountant import PrivacyAccountant, check_accountant
from ..privacy.noise import as_noise_source
from ..privacy.primitives import (
    laplace_mechanism,
)
from ..privacy.relations import ADD_REMOVE, REPLACE_ONE, check_relation
from ..privacy.release import release_guard
from ..privacy.units import check_max_rows, rows_per_unit
from ..privacy.validation import (
    CLIP_SHARE,
    as_vector,
    check_bool,
    check_bound,
    check_epsilon,
    column_names,
)
from ..released.preprocessing import Preprocessing, preprocessed_rows
from .accumulate import accumulate
from .release_checks import (
    _check_laplace_intercept,
    _check_preprocessing,
    _check_split,
    _count_fields,
    _symmetric_from_upper,
    _with_intercept,
    check_count_share,
)
from .release_plan import (
    linear_noise_plan,
)
from .release_records import (
    MECHANISM,
    LinearStatsLaplaceRelease,
)
from .stats import LinearStats


def laplace_linear_stats(
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
    unit=None,
    relation: str = REPLACE_ONE,
    max_rows: int = 1,
) -> LinearStats:
    """The ε-DP Laplace release of clipped sufficient statistics behind
    ``release_linear_stats(noise="laplace")`` (Honkela et al. 2018, Eqs. 5–7): the arguments, the
    guarantee and the errors are documented there (:func:`pm_private.release_linear_stats`).

    The public arguments are checked, then the accountant is asked whether ε is affordable, then one
    pass over the rows (which refuses a NaN or an infinite record, naming its row or partition)
    clips and sums them, and only then is ε reserved and the noise of the three statistics' upper
    triangles and of the clipping counts drawn (:func:`_laplace_parts`).  Under add/remove
    neighbours n is released as the counts' last entry.
    """
    private_n = check_relation(relation) == ADD_REMOVE
    max_rows = check_max_rows(max_rows, relation)
    epsilon = check_epsilon(epsilon)
    x_bound = check_bound("x_bound", x_bound)
    y_bound = check_bound("y_bound", y_bound)
    split = _check_split(split)
    clip_share = check_count_share(clip_share, epsilon, relation)
    scale_response = check_bool("scale_response", scale_response)
    intercept = check_bool("intercept", intercept)
    _check_laplace_intercept(x_bound, intercept)
    _check_preprocessing(preprocessing)
    source = as_noise_source(rng)
    features = _with_intercept(column_names(X), intercept)
    X, y, d, refusal, partitioned = _prepared_rows(X, y, preprocessing, unit=unit, private_n=private_n)
    (X, y), unit = rows_per_unit(unit, source, X, y, max_rows=max_rows)
    plan = linear_noise_plan(d, epsilon=epsilon, x_bound=x_bound, y_bound=y_bound, noise="laplace", split=split,
                             clip_share=clip_share, scale_response=scale_response, intercept=intercept,
                             relation=relation, max_rows=max_rows)  # fmt: skip
    stats_queries, count_queries = plan.queries[:3], plan.queries[3:]
    if check_accountant(accountant) is not None:
        accountant.check(epsilon)  # refuse before the pass over the data
    # The pass over the data (which refuses NaN or infinite records) runs before the reservation.
    xx, xy, yy, n, changed = _clipped_sums(X, y, partitioned, x_bound, y_bound, scale_response, intercept)
    changed = (*changed, n) if private_n else tuple(changed)
    columns = xy.shape[0]

    def record(parts, count_part):
        info = LinearStatsLaplaceRelease(
            epsilon=epsilon,
            split=split,
            x_bound=x_bound,
            y_bound=y_bound,
            sensitivities=tuple(q.sensitivity for q in stats_queries),
            noise_scales=tuple(part.scale for part in parts),
            epsilon_parts=tuple(q.epsilon for q in stats_queries),
            epsilon_certified=tuple(part.epsilon for part in parts),
            n=None if private_n else n,
            neighbours=relation,
            max_rows=max_rows,
            private=source.secure,
            preprocessing=preprocessing,
            features=features,
            scale_response=scale_response,
            intercept=intercept,
            unit=unit,
            **({} if count_part is None else _count_fields(clip_share, count_part.values, count_part.scale, private_n)),
        )
        xx = _symmetric_from_upper(parts[0].values, columns)
        return LinearStats(xx, parts[1].values, parts[2].values[0], info.n, (info,), intercept=intercept)

    sizes = (columns * (columns + 1) // 2, columns, 1, len(changed))
    placeholders = [
        SimpleNamespace(values=np.zeros(size), scale=q.scale, epsilon=q.epsilon)
        for size, q in zip(sizes, plan.queries, strict=False)
    ]
    record(placeholders[:3], placeholders[3] if count_queries else None)  # the record's own checks, before spending
    with release_guard(
        accountant, MECHANISM, epsilon, neighbours=relation, label=f"d={d}" if private_n else f"n={n}, d={d}",
        noise=plan.noise_events(), refusal=refusal, unit=unit,
    ):  # fmt: skip
        return record(*_laplace_parts((xx, xy, yy, changed), stats_queries, count_queries, source))


def _laplace_parts(sums, stats_queries, count_queries, source):
    """The Laplace releases of the upper triangle of Sxx, of Sxy and of Syy at the sensitivities
    and budgets of ``stats_queries``, and that of the clipping counts (None without
    ``count_queries``)."""
    xx, xy, yy, changed = sums
    upper = np.triu_indices(xy.shape[0])
    parts = [
        laplace_mechanism(stat, sensitivity=q.sensitivity, epsilon=q.epsilon, source=source)
        for stat, q in zip((xx[upper], xy, [yy]), stats_queries, strict=True)
    ]
    count_part = None
    for query in count_queries:  # the counts move by at most 1 each (ℓ1 sensitivity 2, or 3 with n)
        count_part = laplace_mechanism(
            np.asarray(changed, float), sensitivity=query.sensitivity, epsilon=query.epsilon, source=source
        )
    return parts, count_part


def _prepared_rows(X, y, preprocessing, *, unit=None, private_n: bool = False):
    """(X, y, d, refusal, partitioned): a Dask collection as it is (``preprocessing``, ``unit`` and a
    private n refused), else the rows after the public ``preprocessing`` (:func:`preprocessed_rows`;
    data of no row taken where n is private) and y as a vector."""
    if is_dask(X) or is_dask(y):
        if preprocessing is not None:
            raise ValueError("preprocessing is not applied to Dask collections: transform the partitions first")
        if unit is not None:
            raise ValueError("unit is not taken with Dask collections: keep one row per person before the release")
        if private_n:
            raise ValueError("relation='add-remove' is not taken with Dask collections: release in-memory arrays")
        from .._engine.dask import column_count

        return X, y, column_count(X), None, True
    X, y, refusal = _preprocessed(X, y, preprocessing, allow_empty=private_n)
    return X, y, X.shape[1], refusal, False


def _preprocessed(X, y, preprocessing, *, allow_empty: bool = False):
    """Apply the public ``preprocessing`` to in-memory covariates and responses.

    Parameters
    ----------
    X : array_like, shape (n, d)
        The private covariates.
    y : array_like, shape (n,)
        The private responses.
    preprocessing : Preprocessing or None
        The public map (None: the rows as they are).
    allow_empty : bool, default False
        Take data of no row (under add/remove neighbours, where n is private and refusing them
        would reveal n = 0).

    Returns
    -------
    X : numpy.ndarray, shape (n, d)
        The rows through :func:`preprocessed_rows`.
    y : numpy.ndarray, shape (n,)
        The responses as a vector of the rows' length, mapped by ``preprocessing``.
    refusal : str or None
        The charged refusal the public rows call for (:func:`preprocessed_rows`).
    """
    X, refusal = preprocessed_rows(preprocessing, X, allow_empty=allow_empty)
    y = as_vector(y, X.shape[0])
    if preprocessing is not None:
        y = preprocessing.transform_y(y)
    return X, y, refusal


def _clipped_sums(X, y, partitioned: bool, x_bound, y_bound, scale_response: bool, intercept: bool):
    """(Sxx, Sxy, Syy, n, clipping counts) of the clipped rows, in one pass that refuses NaN or
    infinite records; a Dask collection's partitions are checked, clipped and reduced where they
    live (:mod:`pm_private.linear.dask_reduce`)."""
    if partitioned:
        from .dask_reduce import partitioned_suff_stats

        return partitioned_suff_stats(X, y, x_bound, y_bound, scale_response, intercept)
    xx, xy, yy, changed = accumulate(X, y, x_bound, y_bound, scale_response=scale_response, intercept=intercept)
    return xx, xy, yy, X.shape[0], changed

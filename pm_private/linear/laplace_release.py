"""The ε-DP release of clipped sufficient statistics with the Laplace mechanism (Honkela et al. 2018,
Eqs. 5–7), in memory or partition by partition on Dask collections; the mechanism and its
sensitivities are in :mod:`pm_private.linear.release`."""

from __future__ import annotations

import numpy as np

from .._engine.dask import is_dask
from ..privacy.accountant import PrivacyAccountant, check_accountant
from ..privacy.noise import as_noise_source
from ..privacy.primitives import (
    laplace_mechanism,
)
from ..privacy.release import release_guard
from ..privacy.units import rows_per_unit
from ..privacy.validation import (
    as_vector,
    check_bool,
    check_bound,
    check_epsilon,
    column_names,
)
from ..released.preprocessing import Preprocessing, preprocessed_rows
from .accumulate import accumulate
from .release_checks import (
    _check_clip_share,
    _check_laplace_intercept,
    _check_preprocessing,
    _check_split,
    _count_fields,
    _symmetric_from_upper,
    _with_intercept,
)
from .release_plan import (
    linear_noise_plan,
)
from .release_records import (
    CLIP_SHARE,
    MECHANISM,
    LinearStatsLaplaceRelease,
)
from .stats import LinearStats


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
    unit=None,
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
    unit : array-like, shape (n,), optional
        The person of each row (any hashable identifiers): the release then protects a person
        with all their rows by keeping one row per person, chosen at random, and n is the number
        of persons (:func:`pm_private.privacy.one_row_per_unit`).  None: the unit is the row.  Not
        with Dask collections.

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
    Privacy: ε-DP (pure) under replace-one neighbours (n is public; the unit a row, or with
    ``unit`` a person with all their rows, n persons), by sequential composition
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
    _check_preprocessing(preprocessing)
    source = as_noise_source(rng)
    features = _with_intercept(column_names(X), intercept)
    X, y, d, refusal, partitioned = _prepared_rows(X, y, preprocessing)
    if partitioned and unit is not None:
        raise ValueError("unit is not taken with Dask collections: keep one row per person before the release")
    (X, y), unit = rows_per_unit(unit, source, X, y)
    plan = linear_noise_plan(
        d,
        epsilon=epsilon,
        x_bound=x_bound,
        y_bound=y_bound,
        noise="laplace",
        split=split,
        clip_share=clip_share,
        scale_response=scale_response,
        intercept=intercept,
    )
    stats_queries, count_queries = plan.queries[:3], plan.queries[3:]
    if check_accountant(accountant) is not None:
        accountant.check(epsilon)  # refuse before the pass over the data
    # The pass over the data (which refuses NaN or infinite records) runs before the reservation.
    xx, xy, yy, n, changed = _clipped_sums(X, y, partitioned, x_bound, y_bound, scale_response, intercept)
    columns = xy.shape[0]
    with release_guard(
        accountant, MECHANISM, epsilon, label=f"n={n}, d={d}", noise=plan.noise_events(), refusal=refusal, unit=unit
    ):
        parts, counts = _laplace_parts((xx, xy, yy, changed), stats_queries, count_queries, clip_share, source)
        xx = _symmetric_from_upper(parts[0].values, columns)
        info = LinearStatsLaplaceRelease(
            epsilon=epsilon,
            split=split,
            x_bound=x_bound,
            y_bound=y_bound,
            sensitivities=tuple(q.sensitivity for q in stats_queries),
            noise_scales=tuple(part.scale for part in parts),
            epsilon_parts=tuple(q.epsilon for q in stats_queries),
            epsilon_certified=tuple(part.epsilon for part in parts),
            n=n,
            private=source.secure,
            preprocessing=preprocessing,
            features=features,
            scale_response=scale_response,
            intercept=intercept,
            unit=unit,
            **counts,
        )
        return LinearStats(xx, parts[1].values, parts[2].values[0], n, (info,), intercept=intercept)


def _laplace_parts(sums, stats_queries, count_queries, clip_share: float, source):
    """The Laplace releases of the upper triangle of Sxx, of Sxy and of Syy at the sensitivities
    and budgets of ``stats_queries``, and the fields of the noisy clipping counts (none without
    ``count_queries``)."""
    xx, xy, yy, changed = sums
    sens = tuple(q.sensitivity for q in stats_queries)
    eps_parts = tuple(q.epsilon for q in stats_queries)
    upper = np.triu_indices(xy.shape[0])
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
    return parts, counts


def _prepared_rows(X, y, preprocessing):
    """(X, y, d, refusal, partitioned): a Dask collection as it is (``preprocessing`` refused), else
    the rows after the public ``preprocessing`` (:func:`preprocessed_rows`) and y as a vector."""
    if is_dask(X) or is_dask(y):
        if preprocessing is not None:
            raise ValueError("preprocessing is not applied to Dask collections: transform the partitions first")
        from .._engine.dask import column_count

        return X, y, column_count(X), None, True
    X, refusal = preprocessed_rows(preprocessing, X)
    n, d = X.shape
    y = as_vector(y, n)
    if preprocessing is not None:
        y = preprocessing.transform_y(y)
    return X, y, d, refusal, False


def _clipped_sums(X, y, partitioned: bool, x_bound, y_bound, scale_response: bool, intercept: bool):
    """(Sxx, Sxy, Syy, n, clipping counts) of the clipped rows, in one pass that refuses NaN or
    infinite records; a Dask collection's partitions are checked, clipped and reduced where they
    live (:mod:`pm_private.linear.dask_reduce`)."""
    if partitioned:
        from .dask_reduce import partitioned_suff_stats

        return partitioned_suff_stats(X, y, x_bound, y_bound, scale_response, intercept)
    xx, xy, yy, changed = accumulate(X, y, x_bound, y_bound, scale_response=scale_response, intercept=intercept)
    return xx, xy, yy, X.shape[0], changed

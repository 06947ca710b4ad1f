"""The (ε, δ)-DP release of the sufficient statistics of norm-bounded rows by one Gaussian mechanism
on their Frobenius-weighted upper triangle (Sheffet 2017; the row-norm bound of Wang 2018)."""

from __future__ import annotations

import numpy as np

from .._engine.dask import is_dask
from ..privacy.accountant import PrivacyAccountant
from ..privacy.noise import as_noise_source
from ..privacy.primitives import (
    gaussian_mechanism,
    row_scale_factors,
)
from ..privacy.relations import ADD_REMOVE, REPLACE_ONE
from ..privacy.release import release_guard
from ..privacy.units import check_max_rows, rows_per_unit
from ..privacy.validation import (
    CLIP_SHARE,
    check_bool,
    column_names,
    first_bad_row,
)
from ..released.preprocessing import Preprocessing
from .accumulate import CHUNK_VALUES, NonFiniteRow, first_non_finite_row
from .laplace_release import _preprocessed, laplace_linear_stats
from .release_checks import (
    _check_preprocessing,
    _count_fields,
    _symmetric_from_upper,
    _with_intercept,
)
from .release_plan import (
    _gaussian_counts,
    check_gaussian_arguments,
    linear_noise_plan,
)
from .release_records import (
    GAUSSIAN_MECHANISM,
    LinearStatsRelease,
)
from .stats import LinearStats, frobenius_weights, stat_vector


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
    delta: float | None = None,
    x_bound: float,
    y_bound: float,
    noise: str = "gaussian",
    split=None,
    accountant: PrivacyAccountant | None = None,
    rng=None,
    preprocessing: Preprocessing | None = None,
    clip_share: float = CLIP_SHARE,
    scale_response: bool | None = None,
    intercept: bool = True,
    unit=None,
    relation: str = REPLACE_ONE,
    max_rows: int = 1,
) -> LinearStats:
    """(ε, δ)-DP release of the sufficient statistics of norm-bounded rows, by one Gaussian mechanism
    (``noise="gaussian"``), or ε-DP release of entrywise-clipped ones by the Laplace mechanism
    (``noise="laplace"``, Honkela et al. 2018).

    The Gaussian release (``noise="gaussian"``, the default).  Each row is scaled onto the ℓ2 ball of the covariates, (xᵢ, yᵢ) ← cᵢ·(xᵢ, yᵢ) with
    cᵢ = min(1, Bx/‖xᵢ‖), each response then clipped, yᵢ ← clip(yᵢ, −By, By) (with
    ``scale_response=False`` only xᵢ is scaled: the projection of Wang 2018), and the
    (d+1)(d+2)/2 distinct entries of S = Σ zᵢzᵢᵀ,
    zᵢ = (xᵢ, yᵢ) (upper Sxx, Sxy, Syy), are released as

        r = upper(S) + ξ / w,   ξ ~ N(0, σ² I),

    with w = 1 on the diagonal and √2 off it (:func:`frobenius_weights`), i.e. the Gaussian
    mechanism on w ⊙ upper(S), whose ℓ2 norm is ‖S‖_F, with σ calibrated to its ℓ2 sensitivity
    Δ = √2·(Bx² + By²) under replace-one, Bx² + By² under add/remove
    (:func:`gaussian_sensitivity`): sufficient statistics perturbation with the
    Gaussian mechanism (Sheffet 2017; the row-norm bound of Wang 2018).  The off-diagonal
    statistics, Sxy among them, get noise of s.d. σ/√2 at the sensitivity of iid noise on the
    unweighted triangle.  Against the Laplace release (entrywise bounds) the noise grows
    with Bx² + By² instead of d²Bx², far less at d ≥ 5, and it is Gaussian, so the noise-aware
    model (:func:`pm_private.linear.linear_model`) marginalises it exactly.

    The same mechanism releases the counts of rows the projection changed and of responses
    clipped (:func:`clip_report`) and, when responses are scaled, Σcᵢ² (``effective_rows``), and
    under add/remove n (``n_noisy``), q = 2 to 4 values each changed by at most 1 between
    neighbours, appended to the vector with
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

    The Laplace release (``noise="laplace"``; Honkela et al. 2018, Eqs. 5–7).  Covariates and
    responses are clipped entrywise to the public bounds, xᵢⱼ ← clip(xᵢⱼ, −Bx, Bx) and
    yᵢ ← clip(yᵢ, −By, By) (with ``scale_response=True`` each row is instead scaled as a whole into
    the cube, (xᵢ, yᵢ) ← cᵢ·(xᵢ, yᵢ) with cᵢ = min(1, Bx/maxⱼ|xᵢⱼ|), before its response is
    clipped: weights that depend on the covariates alone, as above, and the same sensitivities), and the
    upper triangles of Sxx, Sxy and Syy each get Laplace noise of scale ℓ1 sensitivity /
    ((1 − ``clip_share``)·ε·pₖ) for the budget ``split`` (p₁, p₂, p₃): d(d+1)Bx²/2, 2dBxBy and By²
    (:mod:`pm_private.linear.release`).  The counts of rows and responses the clipping changed get
    Laplace noise of scale 2/(``clip_share``·ε).  Honkela et al. (2018) clip entrywise and scale no
    response, the default here; with the intercept column the entrywise bound must be at least 1
    (the constant is never clipped).  The noise-aware model takes the Laplace noise as Gaussian
    of the same variance per entry.

    Parameters
    ----------
    X : array-like, shape (n, d)
        Private covariates (numpy or pandas).  With ``noise="laplace"`` also a Dask collection
        (``dask.array`` or ``dask.dataframe``, with ``y`` partitioned alike), checked, clipped and
        reduced partition by partition where it lives (out of core, or on a cluster): only the
        d×d, d and scalar sums reach the client, where the noise is drawn once; a NaN or inf raises,
        naming its partition and row, before anything is spent.
    y : array-like, shape (n,)
        Private responses.
    epsilon : float
        ε > 0.
    delta : float
        δ in (0, 1); choose it well below 1/n.  Required by the Gaussian release; None for the
        Laplace release (pure ε-DP).
    x_bound : float
        Public bound Bx > 0 on the ℓ2 norm of a (preprocessed) covariate row; √d is about the
        typical norm of standardised rows (:func:`pm_private.linear.gaussian_bounds` chooses
        Bx and By for n and ε).  With ``noise="laplace"``, the bound on each entry
        (:func:`pm_private.tune_bounds` chooses it, the split and By).
    y_bound : float
        Public bound By > 0 on |y|.
    noise : {"gaussian", "laplace"}, default "gaussian"
        The mechanism: one Gaussian release of the Frobenius-weighted statistics, or the Laplace
        releases of the entrywise-clipped statistics (see below).
    split : tuple of float, optional
        Laplace only: the budget shares p₁, p₂, p₃ of Sxx, Sxy and Syy within the statistics'
        (1 − ``clip_share``)·ε; positive, summing to 1 (default (0.60, 0.35, 0.05)).
    accountant : PrivacyAccountant, optional
        Charged (ε, δ) before noise is drawn; refuses with BudgetExceededError if over budget.
    rng : None, int or numpy.random.Generator
        None for the secure OS generator (private); a seed only for tests.
    preprocessing : Preprocessing, optional
        Public map applied to X and y before the projection (bounds are on the transformed
        scale); stored in the release so that predictions apply it, and the projection, to new X.
    clip_share : float, default 0.05
        Share p of the mechanism's squared sensitivity (of its zero-concentrated DP cost ρ)
        given to the clipping counts (and Σcᵢ² with ``scale_response``); with ``noise="laplace"``
        the share of ε spent on the counts.  0 or in [0.001, 0.5]; 0 releases no counts.
    scale_response : bool, optional
        Scale each response with its covariate row before clipping it (keeps β the population's
        coefficient); False projects the covariates alone.  Default: True for the Gaussian release,
        False for the Laplace one.  Public; recorded in the release.
    intercept : bool, default True
        Prepend a constant column of ones (named ``intercept``, scaled with its row), so that the
        statistics hold n and the first moments Σxᵢ, Σyᵢ and a model of them has an intercept;
        Δ becomes √2·(1 + Bx² + By²).  Public; recorded in the release.
    unit : array-like, shape (n,), optional
        The person of each row (any hashable identifiers): the release then protects a person
        with all their rows by keeping one row per person, chosen at random, and n is the number
        of persons (:func:`pm_private.privacy.rows_kept_per_unit`).  None: the unit is the row.  Not
        with Dask collections.
    relation : {"replace-one", "add-remove"}, default "replace-one"
        The neighbour relation (:mod:`pm_private.privacy.relations`): replace-one, n public and
        recorded; or add/remove, n private: released as the last of the counts (``n_noisy``, so
        ``clip_share`` must be > 0), the release's and the statistics' ``n`` None, and the ledger
        entry converted to replace-one with the vector's own replace-one sensitivity.
    max_rows : int, default 1
        k, the most rows kept per person with ``unit`` (chosen at random): above 1 it needs
        ``relation="add-remove"`` (the number of rows summed is then private), and every
        sensitivity is k times the row's (:func:`pm_private.privacy.check_max_rows`); the model
        treats the kept rows as independent given their covariates.

    Returns
    -------
    LinearStats
        Noisy ``xx`` (symmetric), ``xy``, ``yy``, ``n`` and ``releases[0]``, a
        :class:`LinearStatsRelease` (:class:`LinearStatsLaplaceRelease` with ``noise="laplace"``);
        d + 1 columns with the intercept.

    Raises
    ------
    ValueError
        Before anything is spent: invalid ε, δ, bounds, split or preprocessing, a Dask collection
        for the Gaussian release, input that is not numeric, mismatched shapes, or a NaN or
        infinite value.
    BudgetExceededError
        If ``accountant`` cannot afford (ε, δ) (nothing is released).
    ChargedRefusal
        After the budget is spent, when the public rows kept by ``preprocessing`` include rows of
        ``X`` (the message names no row and no count; a free refusal would be a membership test).

    Notes
    -----
    Privacy: (ε, δ)-DP under replace-one neighbours (n is public; the unit a row, or with
    ``unit`` a person with all their rows, n persons), or with ``relation="add-remove"`` under
    add/remove neighbours (n private, released), for the statistics and the
    clipping counts together (one mechanism): every scaled and clipped row has ‖xᵢ‖ ≤ Bx and a
    response of absolute value ≤ By whether or not its response was scaled, so Δ is the same.
    Public inputs: ``x_bound``, ``y_bound``, ``delta``, ``clip_share``, ``scale_response``,
    ``intercept``, ``preprocessing``, ``relation``, d, and n under replace-one.  Exact: the (ε, δ)
    is certified by OpenDP's privacy map through zero-concentrated DP
    (:func:`pm_private.privacy.primitives.gaussian_mechanism`) for the returned statistics.
    Floating-point safe for the secure default ``rng=None`` (OpenDP's exact discrete Gaussian,
    Canonne, Kamath & Steinke 2020); a seeded ``rng`` gives reproducible continuous noise of the
    same σ and a result marked ``private=False``.  References: Sheffet 2017; Wang 2018;
    Bun & Steinke 2016.

    With ``noise="laplace"``: ε-DP (pure, δ = 0) under the same neighbours and unit, by
    sequential composition of three Laplace mechanisms with (1 − ``clip_share``)·ε·pₖ and one on
    the two clipping counts (ℓ1 sensitivity 2; under add/remove with n, 3) with ``clip_share``·ε;
    under add/remove Sxy's ℓ1 sensitivity is half its replace-one value, Sxx's and Syy's the same
    (:func:`pm_private.linear.release.sensitivities`).  Public inputs: ``x_bound``,
    ``y_bound``, ``split``, ``clip_share``, ``scale_response``, ``intercept``, ``preprocessing``,
    ``relation``, d, and n under replace-one.  Exact.  Floating-point safe for ``rng=None`` (OpenDP's exact discrete Laplace on a 2^k
    grid, Canonne, Kamath & Steinke 2020).  References: Honkela et al. 2018; Dwork et al. 2006.

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
    >>> laplace = release_linear_stats(X, y, epsilon=1.0, x_bound=1.0, y_bound=2.0, noise="laplace",
    ...                                accountant=accountant, rng=0)
    >>> laplace
    LinearStats(n=200, d=3 (intercept first), not private (seeded), 1 seeded release(s))
    >>> accountant.spent  # the Laplace release adds ε and no δ
    Budget(epsilon=1.5, delta=1e-07)
    """
    if not (isinstance(noise, str) and noise == "gaussian"):
        return _laplace(X, y, noise, delta, epsilon=epsilon, x_bound=x_bound, y_bound=y_bound, split=split,
                        accountant=accountant, rng=rng, preprocessing=preprocessing, clip_share=clip_share,
                        scale_response=scale_response, intercept=intercept, unit=unit, relation=relation,
                        max_rows=max_rows)  # fmt: skip
    epsilon, delta, x_bound, y_bound, clip_share, scale_response, intercept = _checked(
        epsilon, delta, x_bound, y_bound, split, clip_share, scale_response, intercept, preprocessing, relation
    )
    private_n, max_rows = relation == ADD_REMOVE, check_max_rows(max_rows, relation)
    features = _with_intercept(column_names(X), intercept)
    X, y, refusal = _finite_rows(X, y, preprocessing, allow_empty=private_n)
    source = as_noise_source(rng)
    (X, y), unit = rows_per_unit(unit, source, X, y, max_rows=max_rows)
    n, d = X.shape
    plan = linear_noise_plan(d, epsilon=epsilon, delta=delta, x_bound=x_bound, y_bound=y_bound, noise="gaussian",
                             clip_share=clip_share, scale_response=scale_response, intercept=intercept,
                             relation=relation, max_rows=max_rows)  # fmt: skip
    (query,) = plan.queries
    count_weight = plan.weights.get(_gaussian_counts(scale_response, relation), 0.0)
    events = plan.noise_events()
    columns = d + intercept  # the public layout of the statistics: S over (1, x, y) or (x, y)
    weights = frobenius_weights(columns)
    m, upper = weights.size, np.triu_indices(columns)

    def record(noisy, noise_scale, spent):
        values = noisy[:m] / weights
        info = LinearStatsRelease(
            epsilon=spent,
            delta=delta,
            x_bound=x_bound,
            y_bound=y_bound,
            sensitivity=query.sensitivity,
            noise_scale=noise_scale,
            n=None if private_n else n,
            neighbours=relation,
            max_rows=max_rows,
            private=source.secure,
            preprocessing=preprocessing,
            features=features,
            scale_response=scale_response,
            intercept=intercept,
            unit=unit,
            **_gaussian_counts_fields(noisy, noise_scale, m, count_weight, clip_share, private_n),
        )
        xx = _symmetric_from_upper(values[: upper[0].size], columns)
        return LinearStats(xx, values[upper[0].size : -1], values[-1], info.n, (info,), intercept=intercept)

    record(np.zeros(query.size), query.scale, epsilon)  # the record's own checks, before anything is spent
    label = f"d={d}" if private_n else f"n={n}, d={d}"
    with release_guard(
        accountant, GAUSSIAN_MECHANISM, epsilon, delta, neighbours=relation, label=label, noise=events, refusal=refusal,
        unit=unit,
    ):  # fmt: skip
        vector = _weighted_vector(
            X, y, (x_bound, y_bound), (scale_response, intercept, private_n), weights, count_weight
        )
        part = gaussian_mechanism(vector, sensitivity=query.sensitivity, epsilon=epsilon, delta=delta, source=source)
        return record(part.values, part.scale, part.epsilon)


def _finite_rows(X, y, preprocessing, *, allow_empty: bool = False):
    """(X, y, refusal) after the public ``preprocessing`` (:func:`_preprocessed`), y as a
    vector of the rows' length; NonFiniteRow names the first row with a NaN or an infinity.  A Dask
    collection is refused (the Gaussian release takes in-memory arrays) before anything is read."""
    if is_dask(X) or is_dask(y):
        raise ValueError(
            "release_linear_stats takes in-memory arrays for its Gaussian release; for Dask collections use "
            "noise='laplace'"
        )
    X, y, refusal = _preprocessed(X, y, preprocessing, allow_empty=allow_empty)
    bad = first_non_finite_row(X, 0, X.shape[0])
    if bad is not None:
        raise NonFiniteRow("X", bad)
    if not np.isfinite(y).all():
        raise NonFiniteRow("y", first_bad_row(y))
    return X, y, refusal


def _gaussian_counts_fields(
    noisy, noise_scale: float, m: int, count_weight: float, clip_share: float, private_n: bool
) -> dict:
    """The fields of the noisy clipping counts, the entries of the Gaussian release's values
    ``noisy`` (noise s.d. ``noise_scale``) after its first ``m`` (weighted by ``count_weight``),
    the last of them n where it is private (``n_noisy``); none when ``clip_share`` is 0."""
    if clip_share == 0:
        return {}
    return _count_fields(clip_share, noisy[m:] / count_weight, noise_scale / count_weight, private_n)


def _weighted_vector(X, y, bounds, layout, weights, count_weight):
    """The Frobenius-weighted upper triangle ``weights`` ⊙ upper(S) of the rows' statistics
    projected onto ``bounds`` = (Bx, By) (:func:`_projected_sums`; ``layout`` = (scale_response,
    intercept, private n)), followed, where ``count_weight`` > 0 (a clip share), by the clipping
    counts and, where n is private, n, weighted by ``count_weight``."""
    scale_response, intercept, private_n = layout
    xx, xy, yy, changed = _projected_sums(X, y, *bounds, scale_response, intercept)
    vector = weights * stat_vector(xx, xy, yy)
    if count_weight > 0:
        counts = [*changed, X.shape[0]] if private_n else changed
        vector = np.concatenate([vector, count_weight * np.asarray(counts, float)])
    return vector


def _laplace(X, y, noise: str, delta, **arguments) -> LinearStats:
    """``release_linear_stats(noise="laplace")``: the Laplace release, after refusing another noise or a δ."""
    if not (isinstance(noise, str) and noise == "laplace"):
        raise ValueError(f"noise must be 'gaussian' or 'laplace', got {noise!r:.40}")
    if delta is not None and delta != 0:
        raise ValueError("delta applies to the Gaussian mechanism only (the Laplace release is pure ε-DP)")
    split = arguments.pop("split")
    scale_response = arguments.pop("scale_response")
    return laplace_linear_stats(
        X,
        y,
        split=(0.60, 0.35, 0.05) if split is None else split,
        scale_response=False if scale_response is None else scale_response,
        **arguments,
    )


def _checked(epsilon, delta, x_bound, y_bound, split, clip_share, scale_response, intercept, preprocessing, relation):
    """The Gaussian release's public arguments checked, in order, before any data is read:
    (ε, δ, Bx, By, clip share, scale_response, intercept); ValueError naming the argument."""
    epsilon, delta, x_bound, y_bound, clip_share, scale_response = check_gaussian_arguments(
        epsilon, delta, x_bound, y_bound, split, clip_share, scale_response, relation
    )
    intercept = check_bool("intercept", intercept)
    _check_preprocessing(preprocessing)
    return epsilon, delta, x_bound, y_bound, clip_share, scale_response, intercept

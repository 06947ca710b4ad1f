"""Summary statistics of logistic regression and their private release (Kulkarni et al. 2021;
Huggins, Adams & Broderick 2017).

For rows xᵢ ∈ ℝᵈ and labels yᵢ ∈ {−1, 1} the statistics are the degree-≤ 2 sums

    Σx = Σᵢ xᵢ,  Σy = Σᵢ yᵢ,  Sxx = Σᵢ xᵢxᵢᵀ,  Syx = Σᵢ yᵢxᵢ,

i.e. the entries of Σᵢ uᵢuᵢᵀ with uᵢ = (1, xᵢ, yᵢ) ∈ ℝᵈ⁺² other than its two constant entries
(Σ 1 = Σ yᵢ² = n, public).  The quadratic (PASS-GLM) approximation of the logistic log-likelihood
depends on the data only through Sxx and Syx of the augmented rows (1, xᵢ); a model of the
statistics with an intercept and a covariate mean needs Σx and Σy as well.
:func:`release_logistic_stats` releases them with one Gaussian mechanism, weighted so that the
released vector's norm is the Frobenius norm of the matrix, as the Gaussian sufficient-statistics
release of linear regression does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .._engine.docstrings import parameters_from
from ..privacy.accountant import PrivacyAccountant
from ..privacy.primitives import (
    symmetric_entry_weights,
)
from ..privacy.relations import REPLACE_ONE, Sensitivity
from ..privacy.release import Release, constant, public
from ..privacy.validation import (
    as_vector,
    check_feature_names,
    check_positive,
)
from ..released.bounds import BOUNDS_PARAMETERS, GLMBounds, glm_bound_rule
from ..released.degree2 import Degree2Sums, check_degree2_release, degree2_pairs
from ..released.glm_release import (
    GLM_EXACT_PARAMETERS,
    GLM_PLAN_PARAMETERS,
    GLM_RELEASE_PARAMETERS,
    GLM_SENSITIVITY_PARAMETERS,
    GLMReleaseFields,
    RowBound,
    checked_gaussian,
    degree2_noise_plan,
    degree2_sensitivities,
    exact_degree2,
    release_glm_degree2,
)
from ..released.noise_plan import NoisePlan
from ..released.preprocessing import Preprocessing
from .family import LOGISTIC

__all__ = [
    "LOGISTIC",
    "LOGISTIC_MECHANISM",
    "LogisticStats",
    "LogisticStatsRelease",
    "logistic_bounds",
    "logistic_noise_plan",
    "logistic_sensitivity",
    "logistic_stats",
    "release_logistic_stats",
    "signed_labels",
]


#: Mechanism name of :func:`release_logistic_stats` (result and ledger entry).
LOGISTIC_MECHANISM = (
    "Gaussian degree-2 statistics of logistic regression, norm-bounded rows, Frobenius-weighted "
    "(Kulkarni et al. 2021; Huggins, Adams & Broderick 2017)"
)


def signed_labels(y, n: int) -> np.ndarray:
    """Labels as ±1: {0, 1} is mapped to {−1, 1}; {−1, 1} is kept.

    Parameters
    ----------
    y : array_like, shape (n,)
        Binary labels, all in {0, 1} or all in {−1, 1}.

    Returns
    -------
    numpy.ndarray
        The labels in {−1, 1}.

    Raises
    ------
    ValueError
        If ``y`` holds a value other than 0, 1 and −1, or both 0 and −1.
    """
    y = as_vector(y, n)
    zero_one = (y == 0) | (y == 1)
    signed = (y == -1) | (y == 1)
    if zero_one.all():
        return 2.0 * y - 1.0
    if signed.all():
        return y.copy()
    raise ValueError("y must hold binary labels, all in {0, 1} or all in {-1, 1}")


@dataclass(frozen=True, kw_only=True)
class LogisticStats(Degree2Sums):
    """Exact (not private) statistics of logistic regression: for public data, and the ε = ∞ case.

    Parameters
    ----------
    x_bound : float, optional
        The radius rows were projected onto (None: not projected).
    """

    family: ClassVar[str] = "logistic"

    x_bound: float | None = public(default=None)


@dataclass(frozen=True, kw_only=True)
class LogisticStatsRelease(GLMReleaseFields, RowBound, Degree2Sums, Release, kind="logistic_stats"):
    """One (ε, δ)-DP Gaussian release of the statistics of logistic regression, and what it assumed.

    The noisy statistics are the output fields; ``noise_scale`` is the standard deviation σ of the
    Gaussian noise on the Frobenius-weighted vector, so σ on the diagonal of Sxx and σ/√2 on every
    other statistic (:meth:`noise_variance`).

    Parameters
    ----------
    sensitivity : float
        The ℓ2 sensitivity of the weighted vector under the release's ``neighbours``:
        √2·(Bx² + 2), or √((Bx² + 2)² − 1) under add/remove (:func:`logistic_sensitivity`).
    """

    family: ClassVar[str] = "logistic"

    mechanism: str = constant(default=LOGISTIC_MECHANISM)

    def __post_init__(self):
        super().__post_init__()
        _check_release(self)
        check_feature_names(self, self.d)

    def noise_variance(self) -> np.ndarray:
        """Variance σ²/w² of the Gaussian noise on each statistic in release order
        (:func:`~pm_private.released.degree2.degree2_pairs`): σ² on the diagonal of Sxx, σ²/2 on the others.

        Returns
        -------
        numpy.ndarray
            One variance per statistic.
        """
        return self.noise_scale**2 / symmetric_entry_weights(*degree2_pairs(self.d)) ** 2


@parameters_from(GLM_SENSITIVITY_PARAMETERS, sections=("Returns", "Raises"))
def logistic_sensitivity(x_bound: float, relation: str = REPLACE_ONE) -> float:
    """ℓ2 sensitivity of the released vector for ‖x‖₂ ≤ Bx, y = ±1: √2·(Bx² + 2) under replace-one,
    √((Bx² + 2)² − 1) under add/remove (where the vector also holds the count n).

    Proof.  The released vector is w ⊙ (entries (a, b) of Σ uuᵀ, u = (1, x, y), listed by
    :func:`~pm_private.released.degree2.degree2_pairs`), with w = 1 on the diagonal and √2 off it, so
    its change by one record is the Frobenius norm of that record's change of the matrix, less the
    entries not released.  Replace-one: replacing u by u′ = (1, x′, y′) changes Σ uuᵀ by
    M = uuᵀ − u′u′ᵀ, whose two constant entries (1·1 and y²) are 0, and

        ‖M‖_F² = ‖u‖⁴ + ‖u′‖⁴ − 2(uᵀu′)² ≤ ‖u‖⁴ + ‖u′‖⁴ ≤ 2(Bx² + 2)²,

    since ‖u‖² = 2 + ‖x‖² ≤ Bx² + 2.  The bound is attained (for d ≥ 2) by x ⊥ x′ on the sphere
    ‖x‖ = ‖x′‖ = Bx with y′ = −y, where uᵀu′ = 1 + xᵀx′ + yy′ = 0.  Add/remove: adding or removing u
    changes Σ uuᵀ by ±uuᵀ, of which every entry but y² = 1 is released (the count n = Σ 1 among
    them), so the change has norm √(‖u‖⁴ − 1) ≤ √((Bx² + 2)² − 1), attained by any x on the sphere.
    """
    return _logistic_sensitivities(x_bound).under(relation)


def _logistic_sensitivities(x_bound: float) -> Sensitivity:
    """:func:`logistic_sensitivity` under both relations (ValueError for an invalid bound)."""
    return degree2_sensitivities(
        x_bound, lambda p, _: math.sqrt((p + 2.0) ** 2 - 1.0), lambda p, _: math.sqrt(2.0) * (p + 2.0)
    )


def _check_release(release) -> None:
    """The public fields of a release checked by the checks :func:`release_logistic_stats` applies to its
    arguments, so that a release, built or read from a file, lies within the mechanism's limits;
    ValueError naming the field."""
    check_degree2_release(release, logistic_sensitivity, "logistic_sensitivity")


def _checked(epsilon, delta, x_bound, relation=REPLACE_ONE, max_rows=1) -> tuple[float, float, float, float]:
    """(ε, δ, Bx, Δ) checked as :func:`release_logistic_stats` checks them before reading the data."""
    return checked_gaussian(epsilon, delta, x_bound, logistic_sensitivity, relation, max_rows)


#: The statistic groups of :func:`logistic_noise_plan`.
_DIAGONAL = "the diagonal of Sxx"
_OFF_DIAGONAL = "Σx and the other entries of Sxx"
_LABELS = "Σy and Σ y·x (labels as ±1)"


@parameters_from(GLM_PLAN_PARAMETERS)
def logistic_noise_plan(
    d: int, *, epsilon: float, delta: float, x_bound: float, relation: str = REPLACE_ONE, max_rows: int = 1
) -> NoisePlan:
    """The noise :func:`release_logistic_stats` adds to the statistics of d covariates, before any data is read.

    One Gaussian query on the Frobenius-weighted vector of the 2d + 1 + d(d+1)/2 statistics
    (:func:`pm_private.released.degree2.degree2_pairs`), ℓ2 sensitivity √2·(Bx² + 2)
    (:func:`logistic_sensitivity`) and σ by OpenDP's privacy map; the noise s.d. is σ on the
    diagonal of Sxx and σ/√2 on every other statistic.  Under add/remove neighbours the count n
    leads the vector (noise s.d. σ) and the sensitivity is √((Bx² + 2)² − 1).  The release takes its sensitivity, σ and
    ledger noise from this plan.  Public: it depends only on its arguments.

    Returns
    -------
    NoisePlan
        The query (``"weighted vector"``), its sensitivity and σ, and the noise s.d. per
        statistic group.

    Raises
    ------
    ValueError
        Naming the argument, as the release would before spending anything: an invalid ε, δ, d or
        ``x_bound``, or a noise scale that overflows.

    Examples
    --------
    >>> from pm_private.logistic.release import logistic_noise_plan
    >>> plan = logistic_noise_plan(2, epsilon=1.0, delta=1e-6, x_bound=3.0)
    >>> round(plan.sensitivity["weighted vector"], 4), plan.queries[0].size
    (15.5563, 8)
    >>> round(plan.noise_sd["the diagonal of Sxx"], 4)
    70.4839
    """
    epsilon, delta, x_bound, sensitivity = _checked(epsilon, delta, x_bound, relation, max_rows)
    weights = {_DIAGONAL: 1.0, _OFF_DIAGONAL: math.sqrt(2.0), _LABELS: math.sqrt(2.0)}
    return degree2_noise_plan(
        d, epsilon=epsilon, delta=delta, sensitivity=sensitivity, weights=weights, relation=relation
    )


@parameters_from(BOUNDS_PARAMETERS)
def logistic_bounds(
    n: int, d: int, epsilon: float, delta: float, *, public_X=None, max_projected: float = 0.05
) -> GLMBounds:
    """The row bound Bx of a logistic release of standardised covariates: as loose as it can be
    while the privacy noise on Σ y·x stays within the statistics' own sampling spread; no private
    data is touched and no budget is spent.

    Why loose.  :func:`release_logistic_stats` projects rows beyond Bx onto the ball, which the
    noise-aware model does not model: the projected rows' statistics describe another fit, a bias
    that is a fixed share of the statistics, O(n), against their O(√n) sampling spread, so at
    large n it dominates unless Bx grows.  A looser bound costs noise, which the model does see
    (it widens the intervals instead of biasing them).  The rule is that of
    :func:`pm_private.gaussian_bounds` for linear regression, applied to this release.

    The rule.  The covariates are standardised by public constants (a
    :class:`pm_private.Preprocessing` fitted on public rows), so a row's norm is about √d, and
    Σᵢ yᵢxᵢⱼ has sampling s.d. √n (labels ±1).  With σ(Bx) the noise s.d. of a released Σ y·x
    entry (:func:`logistic_noise_plan`; proportional to the sensitivity √2·(Bx² + 2)),
    Bx = m√d with

        m = max(1, the largest m with σ(m√d) ≤ √n),

    i.e. m² ≈ max(1, (√n/σ₁ − 2)/d), σ₁ the noise per unit sensitivity: Bx grows like
    (nε²)^(1/4).  At small n or ε, m = 1: Bx = √d, the bound of Wang's (2018) AdaSSP on
    standardised rows.  With ``public_X``, Bx is then raised so that at most ``max_projected``
    of the public rows are projected (the public rows take precedence, so the noise may then
    exceed the sampling spread; ``noise_sd`` says by how much).  This is a rule, not an optimum:
    the intervals stay within about √2 of the sampling-only width while the share of projected
    rows falls as n grows.

    Returns
    -------
    GLMBounds
        The bound, the multiplier m and the two standard deviations it balances.

    Raises
    ------
    ValueError
        For invalid n, d, ε, δ, ``public_X`` or ``max_projected``.

    See Also
    --------
    pm_private.poisson.poisson_bounds : The same rule for the Poisson release.
    pm_private.logistic.logistic_model : Its ``x_sample`` takes the public rows as the covariate law.

    References
    ----------
    Wang, Y.-X. (2018). Revisiting differentially private linear regression: optimal and adaptive
    prediction & estimation in unbounded domain. UAI.

    Kulkarni, T., Jälkö, J., Koskela, A., Kaski, S. & Honkela, A. (2021). Differentially private
    Bayesian inference for generalized linear models. ICML.

    Examples
    --------
    >>> from pm_private import logistic_bounds
    >>> logistic_bounds(1000, 10, 1.0, 1e-6).multiplier  # small n: Bx = √d
    1.0
    >>> bounds = logistic_bounds(50_000, 10, 1.0, 1e-6)
    >>> round(bounds.multiplier, 2), round(bounds.x_bound, 2), round(bounds.noise_sd / bounds.sampling_sd, 3)
    (2.18, 6.88, 1.0)
    """
    return glm_bound_rule(
        n,
        d,
        lambda x_bound: logistic_noise_plan(d, epsilon=epsilon, delta=delta, x_bound=x_bound).noise_sd[_LABELS],
        noise_shape=logistic_sensitivity,
        public_X=public_X,
        max_projected=max_projected,
    )


@parameters_from(GLM_EXACT_PARAMETERS)
def logistic_stats(X, y, *, x_bound: float | None = None) -> LogisticStats:
    """Exact statistics (Σx, Σy, Sxx, Syx, n) of public data: no noise, no budget.

    Parameters
    ----------
    y : array_like, shape (n,)
        Public binary labels, in {0, 1} or in {−1, 1}.

    Returns
    -------
    LogisticStats
        The exact statistics.

    Raises
    ------
    ValueError
        For input that is not numeric, mismatched shapes, labels that are not binary, a NaN or
        infinite value, or an invalid ``x_bound``.

    Examples
    --------
    >>> from pm_private.logistic import logistic_stats
    >>> stats = logistic_stats([[1.0, 0.0], [0.0, 2.0]], [1, 0])
    >>> stats.y_sum, stats.yx.tolist()
    (0.0, [1.0, -2.0])
    """
    if x_bound is not None:
        x_bound = check_positive("x_bound", x_bound)
    x_sum, y_sum, xx, yx, n = exact_degree2(X, y, x_bound, signed_labels)
    return LogisticStats(x_sum=x_sum, y_sum=y_sum, xx=xx, yx=yx, n=n, x_bound=x_bound)


@parameters_from(GLM_RELEASE_PARAMETERS)
def release_logistic_stats(
    X,
    y,
    *,
    epsilon: float,
    delta: float,
    x_bound: float,
    preprocessing: Preprocessing | None = None,
    accountant: PrivacyAccountant | None = None,
    rng=None,
    unit=None,
    relation: str = REPLACE_ONE,
    max_rows: int = 1,
) -> LogisticStatsRelease:
    """(ε, δ)-DP release of the degree-2 statistics of logistic regression by one Gaussian mechanism.

    Labels in {0, 1} are mapped to {−1, 1}; each row is projected onto the ℓ2 ball,
    xᵢ ← xᵢ·min(1, Bx/‖xᵢ‖).  With uᵢ = (1, xᵢ, yᵢ) the 2d + 1 + d(d+1)/2 non-constant distinct
    entries of Σ uᵢuᵢᵀ, namely Σx, Σy, the upper triangle of Sxx = Σ xxᵀ and Syx = Σ y·x
    (:func:`~pm_private.released.degree2.degree2_pairs`), are released as

        r = s + ξ / w,   ξ ~ N(0, σ² I),

    with w = 1 on the diagonal of Sxx and √2 elsewhere, i.e. the Gaussian mechanism on w ⊙ s, whose
    norm is the Frobenius norm of the matrix, with σ calibrated to its ℓ2 sensitivity
    Δ = √2·(Bx² + 2) (:func:`logistic_sensitivity`, which proves it).  These are the statistics of
    the noise-aware model :func:`pm_private.logistic_model` and of the quadratic
    approximation of the logistic likelihood (Huggins, Adams & Broderick 2017); Kulkarni et al.
    (2021) release such sums with the Gaussian mechanism for noise-aware GLM inference.

    Parameters
    ----------
    y : array-like, shape (n,)
        Private binary labels, all in {0, 1} or all in {−1, 1}.
    x_bound : float
        Public bound Bx > 0 on the ℓ2 norm of a covariate row (rows beyond are projected onto the
        ball); for standardised covariates :func:`logistic_bounds` gives the library's rule (√d at
        small n or ε, looser as n and ε grow).  Never choose it from the private data.

    Returns
    -------
    LogisticStatsRelease
        The noisy ``x_sum``, ``y_sum``, ``xx`` (symmetric), ``yx``, the public ``n`` (None under
        add/remove, with the noisy count ``n_noisy``), ``x_bound``, ``sensitivity`` and
        ``noise_scale``, and ``features``, the column names of a data frame ``X``.

    Raises
    ------
    ValueError
        Before anything is spent: invalid ε, δ, ``relation`` or ``x_bound``, input that is not
        numeric, mismatched shapes, labels that are not binary, or a NaN or infinite value.
    BudgetExceededError
        If ``accountant`` cannot afford (ε, δ) (nothing is released).
    ChargedRefusal
        After the budget is spent, when the public rows kept by ``preprocessing`` include rows of
        ``X`` (the message names no row and no count; a free refusal would be a membership test).

    Notes
    -----
    Privacy: (ε, δ)-DP under replace-one neighbours (n is public), or with ``relation="add-remove"``
    under add/remove neighbours (n private: released with the statistics, Δ = √((Bx² + 2)² − 1),
    and the ledger charges the replace-one ε of the same noise); the unit is a row, or with
    ``unit`` a person with all their rows (n persons; with ``max_rows`` = k under add/remove, up
    to k rows a person and k·Δ).  Public inputs: ``x_bound``, ``delta``, ``max_rows``, d, and n
    under replace-one.  Exact: the (ε, δ) is certified by OpenDP's privacy map through
    zero-concentrated DP (:func:`pm_private.privacy.gaussian_mechanism`) for the returned
    statistics.  Floating-point safe for the secure default ``rng=None`` (OpenDP's exact discrete
    Gaussian, Canonne, Kamath & Steinke 2020); a seeded ``rng`` gives reproducible continuous
    noise of the same σ and a result marked ``private=False``.  References: Kulkarni et al. 2021;
    Huggins, Adams & Broderick 2017; Bun & Steinke 2016.

    Examples
    --------
    >>> import numpy as np
    >>> from pm_private import PrivacyAccountant, release_logistic_stats
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(500, 2))
    >>> y = rng.uniform(size=500) < 1 / (1 + np.exp(-X @ [1.0, -0.5]))
    >>> accountant = PrivacyAccountant(2.0, 1e-6)
    >>> release = release_logistic_stats(X, y, epsilon=1.0, delta=1e-7, x_bound=3.0, accountant=accountant, rng=0)
    >>> release.xx.shape, release.n, release.private
    ((2, 2), 500, False)
    >>> round(release.sensitivity, 4)
    15.5563
    """
    epsilon, delta, x_bound, _ = _checked(epsilon, delta, x_bound, relation, max_rows)

    def build(features, **fields):
        return LogisticStatsRelease(**fields, x_bound=x_bound, features=features, preprocessing=preprocessing)

    return release_glm_degree2(
        X,
        y,
        x_bound=x_bound,
        response=signed_labels,
        plan_for=lambda d: logistic_noise_plan(
            d, epsilon=epsilon, delta=delta, x_bound=x_bound, relation=relation, max_rows=max_rows
        ),
        weights_for=lambda d: symmetric_entry_weights(*degree2_pairs(d)),
        mechanism=LOGISTIC_MECHANISM,
        build=build,
        preprocessing=preprocessing,
        accountant=accountant,
        rng=rng,
        unit=unit,
        sensitivity=_logistic_sensitivities(x_bound),
        relation=relation,
        max_rows=max_rows,
    )

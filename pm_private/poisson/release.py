"""Summary statistics of Poisson regression and their private release (Kulkarni et al. 2021;
Huggins, Adams & Broderick 2017).

For rows xᵢ ∈ ℝᵈ and counts yᵢ ∈ {0, 1, 2, …} clipped to a public bound B, ỹᵢ = min(yᵢ, B), the
statistics are the degree-≤ 2 sums

    Σx = Σᵢ xᵢ,  Σỹ = Σᵢ ỹᵢ,  Sxx = Σᵢ xᵢxᵢᵀ,  Syx = Σᵢ ỹᵢxᵢ,

in the order of :func:`pm_private.released.degree2.degree2_pairs` (uᵢ = (1, xᵢ, ỹᵢ)), as for logistic
regression.  The Poisson log-likelihood Σᵢ yᵢ(xᵢᵀβ + b) − exp(xᵢᵀβ + b) depends on the counts
only through Σy and Σ y·x; its exponential term is a function of the covariates, which the
noise-aware model describes by a Gaussian with its own prior, informed by Σx and Sxx.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import ClassVar

import numpy as np

from .._engine.docstrings import SharedParameterDocs, parameters_from
from ..privacy.accountant import PrivacyAccountant
from ..privacy.primitives import (
    symmetric_entry_weights,
)
from ..privacy.relations import REPLACE_ONE, Sensitivity
from ..privacy.release import Release, constant, public
from ..privacy.validation import (
    as_float_array,
    as_vector,
    check_count,
    check_feature_names,
    check_fraction,
    check_positive,
    check_release_field,
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
from .family import POISSON

__all__ = [
    "POISSON",
    "MAX_Y_BOUND",
    "POISSON_MECHANISM",
    "PoissonStats",
    "PoissonStatsRelease",
    "count_bound",
    "poisson_bounds",
    "poisson_entry_weights",
    "poisson_noise_plan",
    "poisson_sensitivity",
    "poisson_stats",
    "release_poisson_stats",
]

#: Mechanism name of :func:`release_poisson_stats` (result and ledger entry).
POISSON_MECHANISM = (
    "Gaussian degree-2 statistics of Poisson regression, norm-bounded rows, clipped counts "
    "(Kulkarni et al. 2021; Huggins, Adams & Broderick 2017)"
)
#: The largest count bound B (the model's moments cost O(B) per gradient).
MAX_Y_BOUND = 1000
#: The default largest share of the public counts the count bound B may clip.
MAX_CLIPPED = 0.05


@dataclass(frozen=True, kw_only=True)
class PoissonStats(Degree2Sums):
    """Exact (not private) statistics of Poisson regression: for public data, and the ε = ∞ case.

    Parameters
    ----------
    y_sum : float
        Σỹ, ỹ = min(y, B).
    yx : array_like
        Syx = Σ ỹ·x, length d.
    y_bound : int
        The count bound B the counts were clipped to.
    x_bound : float, optional
        The radius rows were projected onto (None: not projected).
    """

    family: ClassVar[str] = "poisson"

    y_bound: int = public()
    x_bound: float | None = public(default=None)

    def __post_init__(self):
        super().__post_init__()
        object.__setattr__(self, "y_bound", int(self.y_bound))


@dataclass(frozen=True, kw_only=True)
class CountBound(SharedParameterDocs):
    """The count bound of a Poisson release, its field after the row bound.

    Parameters
    ----------
    y_bound : int
        The public bound B the counts were clipped to.
    """

    y_bound: int = public()


@dataclass(frozen=True, kw_only=True)
class PoissonStatsRelease(GLMReleaseFields, CountBound, RowBound, Degree2Sums, Release, kind="poisson_stats"):
    """One (ε, δ)-DP Gaussian release of the statistics of Poisson regression, and what it assumed.

    ``noise_scale`` is the standard deviation σ of the Gaussian noise on the weighted vector
    (``poisson_entry_weights``): σ on the diagonal of Sxx, σ/√2 on Σx and on the other entries
    of Sxx, σγ/√2 on Σỹ and Syx, γ = B/Bx (:meth:`noise_variance`).

    Parameters
    ----------
    y_sum : float
        Noisy Σỹ.
    sensitivity : float
        The ℓ2 sensitivity of the weighted vector under the release's ``neighbours``
        (:func:`poisson_sensitivity`).
    """

    family: ClassVar[str] = "poisson"

    mechanism: str = constant(default=POISSON_MECHANISM)

    def __post_init__(self):
        super().__post_init__()
        _check_release(self)
        object.__setattr__(self, "y_bound", int(self.y_bound))
        check_feature_names(self, self.d)

    def noise_variance(self) -> np.ndarray:
        """Variance σ²/w² of the Gaussian noise on each statistic in release order
        (:func:`pm_private.released.degree2.degree2_pairs`, weights ``poisson_entry_weights``).

        Returns
        -------
        numpy.ndarray
            One variance per statistic.
        """
        return self.noise_scale**2 / poisson_entry_weights(self.d, self.x_bound, self.y_bound) ** 2


def poisson_entry_weights(d: int, x_bound: float, y_bound: int) -> np.ndarray:
    """Weights w of the released statistics (release order): those of the Frobenius norm (1 on the
    diagonal of Sxx, √2 elsewhere), divided by γ = B/Bx on the two count statistics Σỹ and Syx.

    The weighted vector lists the entries of Σ ûûᵀ, û = (1, x, ỹ/γ), whose scaled count lies in
    [0, Bx] like the norm of the row: the sensitivity is then the same for every B, and the noise
    on the count statistics is proportional to B.

    Parameters
    ----------
    d : int
        The number of covariates.
    x_bound : float
        The row-norm bound Bx.
    y_bound : int
        The count bound B.

    Returns
    -------
    numpy.ndarray
        One weight per statistic.
    """
    a, b = degree2_pairs(d)
    return symmetric_entry_weights(a, b) / np.where(b == d + 1, y_bound / x_bound, 1.0)


@parameters_from(GLM_SENSITIVITY_PARAMETERS, sections=("Returns", "Raises"))
def poisson_sensitivity(x_bound: float, relation: str = REPLACE_ONE) -> float:
    """ℓ2 sensitivity of the weighted Poisson statistics for ‖x‖₂ ≤ Bx and counts clipped to
    [0, B]: under replace-one Δ = Bx·√(8(1 + Bx²)) for Bx² ≥ 1/3, Bx·√(2(5 + Bx²)) below; under
    add/remove, where the vector also holds the count n, Δ = √((1 + Bx²)(1 + 3Bx²)).

    Proof.  Write P = Bx², û = (1, x, t) with t = ỹ/γ ∈ [0, Bx] (``poisson_entry_weights``).  The
    weighted vector lists the entries of Σ ûûᵀ other than the constant (0, 0) and the unreleased
    (d+1, d+1), each off-diagonal entry with weight √2, so replacing (x, t) by (x′, t′) moves it by

        ‖Δ‖² = 2‖x − x′‖² + 2(t − t′)² + ‖xxᵀ − x′x′ᵀ‖²_F + 2‖tx − t′x′‖²
             = 2(p + p′) + p² + p′² + 2t²p + 2t′²p′ + 2(t − t′)² − 4c(1 + tt′) − 2c²,

    with p = ‖x‖², p′ = ‖x′‖², c = xᵀx′, |c| ≤ √(pp′).  For fixed c this grows with p and p′, and
    the range of c widens with them: p = p′ = P.  It is concave in c with its vertex at
    c = −(1 + tt′): where 1 + tt′ ≤ P the vertex is feasible and ‖Δ‖² ≤ G₁ = 2(1 + P + t²)(1 + P + t′²);
    elsewhere c = −P and ‖Δ‖² ≤ G₂ = 8P + 2P(t + t′)² + 2(t − t′)².  Over the square [0, Bx]²:
    G₁ grows in t and t′, so its largest value on {1 + tt′ ≤ P} lies on the hyperbola tt′ = P − 1,
    where it grows with t² + (P − 1)²/t², largest at t = Bx: 2(4P³ + P + 1)/P.  G₂ is convex, so on
    {1 + tt′ ≥ P} its largest value is at an extreme point of that set's hull: the corner
    t = t′ = Bx, 8P(1 + P); the hyperbola (where G₂ = G₁); and, for P < 1, the corners (Bx, 0) and
    (0, 0), 2P(5 + P) and 8P.  Since 8P(1 + P) − 2(4P³ + P + 1)/P = (8P² − 2P − 2)/P > 0 for P ≥ 1,
    Δ² = max(8P(1 + P), 2P(5 + P)), the first for P ≥ 1/3.  Both are attained: x′ = −x with
    ‖x‖ = Bx and both counts at B (t = t′ = Bx), or, for P < 1/3, one count at B and one at 0.

    Add/remove: adding or removing (x, t) moves Σ ûûᵀ by ±ûûᵀ, of which every entry but t² is
    released (the count n = Σ 1 among them), by ‖ûûᵀ‖²_F − t⁴ = (1 + p + t²)² − t⁴ =
    (1 + p)² + 2(1 + p)t², largest at p = t² = P: Δ² = (1 + P)(1 + 3P), attained by ‖x‖ = Bx with
    the count at B.
    """
    return _poisson_sensitivities(x_bound).under(relation)


def _poisson_sensitivities(x_bound: float) -> Sensitivity:
    """:func:`poisson_sensitivity` under both relations (ValueError for an invalid bound)."""
    return degree2_sensitivities(
        x_bound,
        lambda p, _: math.sqrt((1.0 + p) * (1.0 + 3.0 * p)),
        lambda p, bound: bound * math.sqrt(max(8.0 * (1.0 + p), 2.0 * (5.0 + p))),
    )


def _check_release(release) -> None:
    """The public fields of a release checked by the checks :func:`release_poisson_stats` applies to its
    arguments, so that a release, built or read from a file, lies within the mechanism's limits;
    ValueError naming the field."""
    check_degree2_release(release, poisson_sensitivity, "poisson_sensitivity")
    check_release_field("y_bound", check_count, "y_bound", release.y_bound, 1, MAX_Y_BOUND)


def _checked(
    epsilon, delta, x_bound, y_bound, relation=REPLACE_ONE, max_rows=1
) -> tuple[float, float, float, int, float]:
    """(ε, δ, Bx, B, Δ) checked as :func:`release_poisson_stats` checks them before reading the data."""
    epsilon, delta, x_bound, sensitivity = checked_gaussian(
        epsilon, delta, x_bound, poisson_sensitivity, relation, max_rows
    )
    y_bound = check_count("y_bound", y_bound, 1, MAX_Y_BOUND)
    return epsilon, delta, x_bound, y_bound, sensitivity


@parameters_from(GLM_PLAN_PARAMETERS)
def poisson_noise_plan(
    d: int,
    *,
    epsilon: float,
    delta: float,
    x_bound: float,
    y_bound: int,
    relation: str = REPLACE_ONE,
    max_rows: int = 1,
) -> NoisePlan:
    """The noise :func:`release_poisson_stats` adds to the statistics of d covariates, before any data is read.

    One Gaussian query on the weighted vector of the 2d + 1 + d(d+1)/2 statistics
    (``poisson_entry_weights``), ℓ2 sensitivity :func:`poisson_sensitivity` and σ by OpenDP's
    privacy map; the noise s.d. is σ on the diagonal of Sxx, σ/√2 on Σx and the other entries of
    Sxx and σγ/√2 (γ = B/Bx) on Σỹ and Syx; under add/remove neighbours the count n leads the
    vector (noise s.d. σ).  The release takes its sensitivity, σ and ledger noise from this plan.  Public: it depends only on its arguments.

    Parameters
    ----------
    y_bound : int
        The public count bound B in [1, 1000].

    Returns
    -------
    NoisePlan
        The query (``"weighted vector"``), its sensitivity and σ, and the noise s.d. per
        statistic group.

    Raises
    ------
    ValueError
        Naming the argument, as the release would before spending anything: an invalid ε, δ, d,
        ``x_bound`` or ``y_bound``, or a noise scale that overflows.

    Examples
    --------
    >>> from pm_private.poisson.release import poisson_noise_plan
    >>> plan = poisson_noise_plan(2, epsilon=1.0, delta=1e-6, x_bound=3.0, y_bound=10)
    >>> round(plan.sensitivity["weighted vector"], 4), plan.queries[0].size
    (26.8328, 8)
    >>> round(plan.noise_sd["Σy and Σ y·x (counts clipped to 10)"], 3)
    286.558
    """
    epsilon, delta, x_bound, y_bound, sensitivity = _checked(epsilon, delta, x_bound, y_bound, relation, max_rows)
    d = check_count("d", d)
    weights = {
        "the diagonal of Sxx": 1.0,
        "Σx and the other entries of Sxx": math.sqrt(2.0),
        f"Σy and Σ y·x (counts clipped to {y_bound})": float(poisson_entry_weights(d, x_bound, y_bound)[d]),
    }
    return degree2_noise_plan(
        d, epsilon=epsilon, delta=delta, sensitivity=sensitivity, weights=weights, relation=relation
    )


@parameters_from(BOUNDS_PARAMETERS)
def poisson_bounds(
    n: int,
    d: int,
    epsilon: float,
    delta: float,
    *,
    y_bound: int | None = None,
    response_sd: float | None = None,
    public_X=None,
    public_y=None,
    max_projected: float = 0.05,
    max_clipped: float = MAX_CLIPPED,
) -> GLMBounds:
    """The row bound Bx of a Poisson release of standardised covariates, as loose as it can be
    while the privacy noise on Σ y·x stays within the statistics' own sampling spread, and its
    count bound B from public counts; no private data is touched and no budget is spent.

    Why loose.  :func:`release_poisson_stats` projects rows beyond Bx onto the ball, which the
    noise-aware model does not model: a bias that is a fixed share of the statistics, O(n),
    against their O(√n) sampling spread, so at large n it dominates unless Bx grows.  A looser
    bound costs noise, which the model does see.  The rule is that of
    :func:`pm_private.gaussian_bounds` for linear regression, applied to this release.

    The rule.  The covariates are standardised by public constants (a
    :class:`pm_private.Preprocessing` fitted on public rows), so a row's norm is about √d, and
    Σᵢ ỹᵢxᵢⱼ has sampling s.d. about √n·τ, τ = ``response_sd`` (√E[ỹ²] of a clipped count, a
    public guess), and an entry of Sxx about √n.  With σ_y(Bx) the noise s.d. of a released
    Σ y·x entry and σ_x(Bx) that of an off-diagonal Sxx entry (:func:`poisson_noise_plan`:
    σγ/√2 with γ = B/Bx, and σ/√2), Bx = m√d with

        m = max(1, the largest m with σ_y(m√d) ≤ √n·τ and σ_x(m√d) ≤ √n),

    the rule of :func:`pm_private.logistic.logistic_bounds` held on both groups: with a small
    count bound the covariates' statistics bind, so that a smaller B lowers the noise on the
    counts instead of loosening Bx until the covariates' noise grows in its place.

    At small n or ε, m = 1: Bx = √d, the bound of Wang's (2018) AdaSSP on standardised rows.
    With ``public_X``, Bx is then raised so that at most ``max_projected`` of the public rows are
    projected (the public rows take precedence; ``noise_sd`` says by how much the noise then
    exceeds the sampling spread).  This is a rule, not an optimum.

    The count bound.  The noise on Σỹ and Σ ỹ·x is proportional to B (:func:`poisson_noise_plan`),
    while the model describes the clipping exactly (the moments of min(y, B),
    :func:`pm_private.poisson.poisson_model`): clipping costs information, not bias.  With public
    counts (``public_y``, e.g. the outcomes of the public rows) and no ``y_bound``, B is the
    smallest count with at most ``max_clipped`` of them above it, the counterpart of
    ``max_projected`` for the rows, and τ is their root mean square after clipping at B (unless
    ``response_sd`` is given).  A bound far above the counts adds noise for nothing: on counts of
    mean 1, B = 10 puts about three times the noise of B = 3 on the count statistics.

    Parameters
    ----------
    y_bound : int, optional
        The release's count bound B in [1, 1000]; None: chosen from ``public_y``.
    response_sd : float, optional
        τ, the root mean square of a clipped count (√(μ + μ²) for Poisson counts of mean μ); a
        public guess.  Default: from ``public_y`` clipped at B where given, else 1.
    public_y : array_like, shape (m,), optional
        Public counts (non-negative integers) drawn like the private ones, for B and τ.  They
        must be public: nothing here can tell them from the private counts.
    max_clipped : float, default 0.05
        Largest share of the public counts B may clip, in (0, 1).

    Returns
    -------
    GLMBounds
        The bounds Bx and B, the multiplier m, the two standard deviations it balances and the
        shares of the public rows projected and of the public counts clipped.

    Raises
    ------
    ValueError
        For invalid n, d, ε, δ, ``y_bound``, ``response_sd``, ``public_X``, ``public_y``,
        ``max_projected`` or ``max_clipped``, or neither ``y_bound`` nor ``public_y``.

    See Also
    --------
    pm_private.logistic.logistic_bounds : The same rule for the logistic release.
    count_bound : The count bound alone, from public counts.
    pm_private.poisson.poisson_model : Its ``x_sample`` takes the public rows as the covariate law.

    References
    ----------
    Wang, Y.-X. (2018). Revisiting differentially private linear regression: optimal and adaptive
    prediction & estimation in unbounded domain. UAI.

    Kulkarni, T., Jälkö, J., Koskela, A., Kaski, S. & Honkela, A. (2021). Differentially private
    Bayesian inference for generalized linear models. ICML.

    Examples
    --------
    >>> from pm_private import poisson_bounds
    >>> poisson_bounds(1000, 5, 1.0, 1e-6, y_bound=10).multiplier  # small n: Bx = √d
    1.0
    >>> bounds = poisson_bounds(200_000, 5, 1.0, 1e-6, y_bound=10, response_sd=2.0)
    >>> round(bounds.multiplier, 2), round(bounds.x_bound, 2), round(bounds.noise_sd / bounds.sampling_sd, 3)
    (3.13, 6.99, 1.0)

    With public counts, B clips at most 5 % of them:

    >>> import numpy as np
    >>> counts = np.random.default_rng(0).poisson(1.0, size=200)
    >>> bounds = poisson_bounds(20_000, 5, 1.0, 1e-6, public_y=counts)
    >>> bounds.y_bound, bounds.clipped_share <= 0.05
    (3, True)
    """
    y_bound, response_sd, clipped_share = _count_bound(y_bound, response_sd, public_y, max_clipped)

    def noise_sd(x_bound: float) -> float:  # in the count statistics' units: τ·(noise on Sxx) beside it
        plan = poisson_noise_plan(d, epsilon=epsilon, delta=delta, x_bound=x_bound, y_bound=y_bound)
        counts = plan.noise_sd[f"Σy and Σ y·x (counts clipped to {y_bound})"]
        return max(counts, response_sd * plan.noise_sd["Σx and the other entries of Sxx"])

    rows = glm_bound_rule(
        n,
        d,
        noise_sd,
        noise_shape=lambda x_bound: poisson_sensitivity(x_bound) * max(y_bound / x_bound, response_sd),
        public_X=public_X,
        max_projected=max_projected,
        response_sd=response_sd,
    )
    return replace(rows, y_bound=y_bound, clipped_share=clipped_share)


def count_bound(public_y, *, max_clipped: float = MAX_CLIPPED) -> int:
    """The count bound B of a Poisson release from public counts alone: the smallest count with at
    most ``max_clipped`` of them above it, the rule of :func:`poisson_bounds` (which also needs n
    and d, for the row bound).  Reads public values only and spends no budget; the command line's
    ``release poisson-stats`` takes it from its public file when ``--y-bound`` is omitted.

    Parameters
    ----------
    public_y : array_like, shape (m,)
        Public counts (non-negative integers) drawn like the private ones.  They must be public:
        nothing here can tell them from the private counts.
    max_clipped : float, default 0.05
        Largest share of the public counts B may clip, in (0, 1).

    Returns
    -------
    int
        B in [1, 1000].

    Raises
    ------
    ValueError
        For ``public_y`` that are not a non-empty vector of non-negative integer counts, or
        ``max_clipped`` outside (0, 1).

    Examples
    --------
    >>> import numpy as np
    >>> from pm_private.poisson import count_bound
    >>> count_bound(np.random.default_rng(0).poisson(1.0, size=200))
    3
    """
    return _count_bound(None, 1.0, public_y, max_clipped)[0]


def _count_bound(y_bound, response_sd, public_y, max_clipped) -> tuple[int, float, float | None]:
    """(B, τ, share of the public counts above B) of :func:`poisson_bounds` from its arguments:
    B given or the smallest count with at most ``max_clipped`` of ``public_y`` above it, τ given
    or the public counts' root mean square after clipping (1 without them)."""
    max_clipped = check_fraction("max_clipped", max_clipped, closed=False)
    if public_y is None:
        if y_bound is None:
            raise ValueError("give y_bound, or public counts public_y to choose it from")
        y_bound = check_count("y_bound", y_bound, 1, MAX_Y_BOUND)
        return y_bound, check_positive("response_sd", 1.0 if response_sd is None else response_sd), None
    counts = as_float_array(public_y, "public_y")
    if counts.ndim != 1 or counts.size < 1:
        raise ValueError(f"public_y must be a non-empty vector of public counts, got shape {counts.shape}")
    counts = _counts(counts, counts.size, "public_y")
    if y_bound is None:
        quantile = float(np.quantile(counts, 1.0 - max_clipped, method="higher"))
        y_bound = int(min(max(quantile, 1.0), MAX_Y_BOUND))
    y_bound = check_count("y_bound", y_bound, 1, MAX_Y_BOUND)
    clipped = np.minimum(counts, y_bound)
    if response_sd is None:
        if not clipped.any():
            raise ValueError("public_y are all 0: give response_sd, a guess of a clipped count's root mean square")
        response_sd = float(np.sqrt(np.mean(clipped**2)))
    return y_bound, check_positive("response_sd", response_sd), float(np.mean(counts > y_bound))


def _counts(y, n: int, name: str = "y") -> np.ndarray:
    """Counts as floats, after checking they are n finite non-negative integers (ValueError naming ``name``)."""
    y = as_vector(y, n, name)
    if not ((y >= 0) & (y == np.floor(y))).all():
        raise ValueError(f"{name} must hold counts: non-negative integers")
    return y


def _clipped_counts(y_bound: int):
    """The response map of the release: counts checked, then clipped to ``y_bound``."""
    return lambda y, n: np.minimum(_counts(y, n), y_bound)


@parameters_from(GLM_EXACT_PARAMETERS)
def poisson_stats(X, y, *, y_bound: int, x_bound: float | None = None) -> PoissonStats:
    """Exact statistics (Σx, Σỹ, Sxx, Syx, n) of public data, counts clipped to ``y_bound``: no noise,
    no budget.

    Parameters
    ----------
    y : array_like, shape (n,)
        Public counts (non-negative integers).
    y_bound : int
        The count bound B ≥ 1: ỹ = min(y, B).

    Returns
    -------
    PoissonStats
        The exact statistics.

    Raises
    ------
    ValueError
        For input that is not numeric, mismatched shapes, counts that are not non-negative
        integers, a NaN or infinite value, or an invalid bound.

    Examples
    --------
    >>> from pm_private.poisson import poisson_stats
    >>> stats = poisson_stats([[1.0, 0.0], [0.0, 2.0]], [3, 9], y_bound=5)
    >>> stats.y_sum, stats.yx.tolist()
    (8.0, [3.0, 10.0])
    """
    y_bound = check_count("y_bound", y_bound, 1, MAX_Y_BOUND)
    if x_bound is not None:
        x_bound = check_positive("x_bound", x_bound)
    x_sum, y_sum, xx, yx, n = exact_degree2(X, y, x_bound, _clipped_counts(y_bound), check_y=True)
    return PoissonStats(x_sum=x_sum, y_sum=y_sum, xx=xx, yx=yx, n=n, y_bound=y_bound, x_bound=x_bound)


@parameters_from(GLM_RELEASE_PARAMETERS)
def release_poisson_stats(
    X,
    y,
    *,
    epsilon: float,
    delta: float,
    x_bound: float,
    y_bound: int,
    preprocessing: Preprocessing | None = None,
    accountant: PrivacyAccountant | None = None,
    rng=None,
    unit=None,
    relation: str = REPLACE_ONE,
    max_rows: int = 1,
) -> PoissonStatsRelease:
    """(ε, δ)-DP release of the degree-2 statistics of Poisson regression by one Gaussian mechanism.

    Each row is projected onto the ℓ2 ball, xᵢ ← xᵢ·min(1, Bx/‖xᵢ‖), and each count clipped,
    ỹᵢ = min(yᵢ, B).  The 2d + 1 + d(d+1)/2 statistics s = (Σx, Σỹ, upper(Sxx), Syx)
    (:func:`pm_private.released.degree2.degree2_pairs`) are released as

        r = s + ξ / w,   ξ ~ N(0, σ² I),

    with the weights w of ``poisson_entry_weights`` (√2 off the diagonal of Σ ûûᵀ,
    û = (1, x, ỹ·Bx/B)), i.e. the Gaussian mechanism on w ⊙ s with σ calibrated to its ℓ2
    sensitivity Δ = Bx·√(8(1 + Bx²)) (Bx² ≥ 1/3; :func:`poisson_sensitivity`, which proves it).
    These are the statistics of the noise-aware model :func:`pm_private.poisson_model`;
    Kulkarni et al. (2021) release such sums with the Gaussian mechanism for noise-aware GLM
    inference, and Huggins, Adams & Broderick (2017) approximate GLM likelihoods by them.

    Parameters
    ----------
    y : array-like, shape (n,)
        Private counts, non-negative integers.
    x_bound : float
        Public bound Bx > 0 on the ℓ2 norm of a covariate row (rows beyond are projected onto the
        ball); for standardised covariates :func:`poisson_bounds` gives the library's rule (√d at
        small n or ε, looser as n and ε grow).  Never choose it from the private data.
    y_bound : int
        Public count bound B in [1, 1000]; larger counts are clipped to it.  The noise on the count
        statistics grows with B, and the model describes the clipping exactly; with public counts
        :func:`poisson_bounds` gives the library's rule (the smallest B that clips at most 5 % of
        them).  Never choose it from the private data.

    Returns
    -------
    PoissonStatsRelease
        The noisy ``x_sum``, ``y_sum``, ``xx`` (symmetric), ``yx``, the public ``n`` (None under
        add/remove, with the noisy count ``n_noisy``), ``x_bound``, ``y_bound``, ``sensitivity`` and
        ``noise_scale``.

    Raises
    ------
    ValueError
        Before anything is spent: invalid ε, δ, ``relation``, ``x_bound`` or ``y_bound``, input
        that is not numeric, mismatched shapes, counts that are not non-negative integers, or a NaN or
        infinite value.
    BudgetExceededError
        If ``accountant`` cannot afford (ε, δ) (nothing is released).
    ChargedRefusal
        After the budget is spent, when the public rows kept by ``preprocessing`` include rows of
        ``X`` (the message names no row and no count; a free refusal would be a membership test).

    Notes
    -----
    Privacy: (ε, δ)-DP under replace-one neighbours (n is public), or with ``relation="add-remove"``
    under add/remove neighbours (n private: released with the statistics, Δ =
    √((1 + Bx²)(1 + 3Bx²)), and the ledger charges the replace-one ε of the same noise); the unit is
    a row, or with ``unit`` a person with all their rows (n persons; with ``max_rows`` = k under
    add/remove, up to k rows a person and k·Δ).  Public inputs: ``x_bound``, ``y_bound``, ``delta``,
    ``max_rows``, d, and n under replace-one.  Exact: the (ε, δ) is certified by OpenDP's privacy map
    through zero-concentrated DP (:func:`pm_private.privacy.gaussian_mechanism`) for the returned
    statistics.  Floating-point safe for the secure default ``rng=None`` (OpenDP's exact discrete
    Gaussian, Canonne, Kamath & Steinke 2020); a seeded ``rng`` gives reproducible continuous
    noise of the same σ and a result marked ``private=False``.  References: Kulkarni et al. 2021;
    Huggins, Adams & Broderick 2017; Bun & Steinke 2016.

    Examples
    --------
    >>> import numpy as np
    >>> from pm_private import PrivacyAccountant, release_poisson_stats
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(500, 2))
    >>> y = rng.poisson(np.exp(X @ [0.5, -0.3] + 0.5))
    >>> accountant = PrivacyAccountant(2.0, 1e-6)
    >>> release = release_poisson_stats(X, y, epsilon=1.0, delta=1e-7, x_bound=3.0, y_bound=10, accountant=accountant, rng=0)
    >>> release.xx.shape, release.n, release.private
    ((2, 2), 500, False)
    >>> round(release.sensitivity, 4)
    26.8328
    """
    epsilon, delta, x_bound, y_bound, _ = _checked(epsilon, delta, x_bound, y_bound, relation, max_rows)

    def build(features, **fields):
        return PoissonStatsRelease(
            **fields, x_bound=x_bound, y_bound=y_bound, features=features, preprocessing=preprocessing
        )

    return release_glm_degree2(
        X,
        y,
        x_bound=x_bound,
        response=_clipped_counts(y_bound),
        plan_for=lambda d: poisson_noise_plan(
            d, epsilon=epsilon, delta=delta, x_bound=x_bound, y_bound=y_bound, relation=relation, max_rows=max_rows
        ),
        weights_for=lambda d: poisson_entry_weights(d, x_bound, y_bound),
        mechanism=POISSON_MECHANISM,
        build=build,
        preprocessing=preprocessing,
        accountant=accountant,
        rng=rng,
        unit=unit,
        sensitivity=_poisson_sensitivities(x_bound),
        relation=relation,
        max_rows=max_rows,
    )

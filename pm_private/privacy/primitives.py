"""General DP building blocks: the Laplace and Gaussian mechanisms, Gaussian calibration, one
exponential mechanism and one row projection.  Every mechanism of pm_private is built from these.

Randomness comes from :class:`pm_private.privacy.noise.NoiseSource`: with the secure source
(``os.urandom``) the Laplace and exponential mechanisms run on OpenDP's exact samplers; a seeded
source draws the same distributions with numpy transforms and its results are marked
``private=False``.

Laplace mechanism and floating point
------------------------------------
Adding ``np.random.laplace`` to a float leaks the unnoised value through the pattern of
representable outputs (Mironov 2012, "On significance of the least significant bits").
With the secure source, :func:`laplace_mechanism` therefore uses OpenDP's ``make_laplace``:
the query is rounded to a grid of 2^k and exact discrete Laplace noise (Canonne, Kamath &
Steinke 2020) is added with OpenDP's own secure sampler, so every grid point is reachable from
every input and no bits leak.  OpenDP's privacy map accounts for the rounding; the noise scale
is enlarged by the rounding's share (relative 2e-9 for 2080 values) so that the ε OpenDP
certifies equals the requested ε.  Residual risk: the proof is OpenDP's (their v0.16 proof
document), and timing side channels of the sampler are out of scope.  :func:`gaussian_mechanism`
does the same with OpenDP's exact discrete Gaussian.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from scipy.special import log_ndtr, ndtr

from .accountant import note_noise_drawn
from .budget import GAUSSIAN, LAPLACE, NoiseEvent, gaussian_multiplier
from .noise import NoiseSource
from .release import Release, constant, output, public
from .validation import (
    as_float_array,
    check_count,
    check_delta,
    check_epsilon,
    check_memory,
    check_positive,
    check_release_field,
    check_release_guarantee,
)

__all__ = [
    "check_gaussian_scale_field",
    "GAUSSIAN_MECHANISM",
    "GaussianRelease",
    "LAPLACE_MECHANISM",
    "SENSITIVITY_BALL",
    "LaplaceRelease",
    "exponential_mechanism",
    "gaussian_delta",
    "gaussian_mechanism",
    "gaussian_noise_event",
    "gaussian_noise_multiplier",
    "GAUSSIAN_MAX_EPSILON",
    "check_gaussian_epsilon",
    "check_noise_scale",
    "laplace_mechanism",
    "laplace_noise_event",
    "project_rows",
    "row_scale_factors",
    "symmetric_entry_weights",
]

#: Mechanism name of :func:`laplace_mechanism` results.
LAPLACE_MECHANISM = "Laplace mechanism (Dwork et al. 2006) as exact discrete Laplace (Canonne, Kamath & Steinke 2020)"
#: Neighbour relation of a primitive on its own: query values that differ by at most the sensitivity.
SENSITIVITY_BALL = "query values within the stated sensitivity"


# --------------------------------------------------------------------------------------------
# Laplace mechanism
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class LaplaceRelease(Release, kind="laplace"):
    """Noisy values from :func:`laplace_mechanism`, the noise scale used and the ε certified.

    Parameters
    ----------
    epsilon : float
        The ε certified for this release.
    delta : float, default 0.0
        The δ certified (0 for pure ε-DP).
    neighbours : str
        The neighbour relation of the guarantee (a constant of the mechanism).
    mechanism : str
        The mechanism's name, as written to the accountant's ledger (a constant of the mechanism).
    private : bool
        True when the noise came from secure OS randomness (``rng=None``); False for a seeded
        ``rng``, whose output carries no privacy guarantee.
    values : numpy.ndarray
        The noisy values (the DP output), of the shape of the input.
    scale : float
        The Laplace noise scale b.
    sensitivity : float
        The ℓ1 sensitivity Δ the caller stated.
    """

    values: np.ndarray = output()
    scale: float = public()
    sensitivity: float = public()
    neighbours: str = constant(default=SENSITIVITY_BALL)
    mechanism: str = constant(default=LAPLACE_MECHANISM)

    def __post_init__(self):
        check_release_guarantee(self)
        _check_noise_fields(self)
        # b = Δ/ε for a seeded source; (Δ + m·2^k)/ε with 2^k ≤ 2⁻⁴⁰·Δ/ε for the secure one.
        size = np.size(self.values)
        low = self.sensitivity / self.epsilon
        if not (_is_number(self.scale) and low * (1 - 1e-9) <= self.scale <= low * (1 + size * 2.0**-39 + 1e-9)):
            raise ValueError(f"field 'scale' must be 'sensitivity'/'epsilon' = {low!r}, got {self.scale!r:.40}")


def _is_number(value) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def _check_noise_fields(release) -> None:
    """The sensitivity and noise scale of a primitive's release, checked as :func:`_check_query`
    checks the arguments (ValueError naming the field)."""
    check_release_field("sensitivity", check_positive, "sensitivity", release.sensitivity)
    check_release_field("sensitivity", check_noise_scale, release.sensitivity, release.epsilon)
    check_release_field("scale", check_positive, "scale", release.scale)


# The secure Laplace mechanism rounds to a grid of 2^k with k this many binary orders below
# the noise scale: the rounding adds at most m·2^k to the ℓ1 sensitivity of m values, a
# relative m·2^-40 (2e-9 for m = 2080), which the noise scale absorbs so ε stays exact.
_GRID_BITS_BELOW_SCALE = 40


def _opendp():
    import opendp.prelude as dp

    dp.enable_features("contrib")
    return dp


def _opendp_laplace(size: int, sensitivity: float, epsilon: float):
    dp = _opendp()
    k = int(np.floor(np.log2(sensitivity / epsilon))) - _GRID_BITS_BELOW_SCALE
    scale = (sensitivity + size * 2.0**k) / epsilon
    domain = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=size)
    return dp.m.make_laplace(domain, dp.l1_distance(T=float), scale=scale, k=k), scale


#: Noise beyond this many scales has probability below e⁻¹⁰⁰⁰ (0 in floating point): a scale whose
#: product with it overflows would give infinite noisy values, so it is refused before any noise.
_TAIL = 1e3


#: Smallest noise scale Δ/ε accepted: far above the subnormal range, so that the noise grid of
#: OpenDP's samplers (a power of two below the scale) is a normal floating-point number.
_MIN_SCALE = 1e-290


def _check_source(source) -> NoiseSource:
    if not isinstance(source, NoiseSource):
        raise TypeError(f"source must be a NoiseSource (see as_noise_source), got {type(source).__name__}")
    return source


#: Largest ε of the exact Gaussian mechanism: OpenDP's conversion from zero-concentrated DP to
#: (ε, δ) evaluates e^ε, which overflows a float beyond about 709.
GAUSSIAN_MAX_EPSILON = 700.0


def check_gaussian_epsilon(epsilon: float) -> float:
    """ε of an exact Gaussian release, ≤ :data:`GAUSSIAN_MAX_EPSILON` (700), or ValueError naming epsilon.

    Parameters
    ----------
    epsilon : float
        The ε of the release (already a valid ε).

    Returns
    -------
    float
        ``epsilon``.

    Raises
    ------
    ValueError
        If ``epsilon`` exceeds 700 (e^ε overflows in the privacy map).
    """
    if epsilon > GAUSSIAN_MAX_EPSILON:
        raise ValueError(
            f"epsilon must be ≤ {GAUSSIAN_MAX_EPSILON:g} for the exact Gaussian mechanism (e^ε must stay finite), "
            f"got {epsilon!r}"
        )
    return epsilon


def check_noise_scale(sensitivity: float, epsilon: float) -> None:
    """Refuse a noise scale Δ/ε that overflows (with its tail) or underflows.

    Mechanisms call it for each of their noise scales before reserving any budget.

    Parameters
    ----------
    sensitivity : float
        The sensitivity Δ > 0.
    epsilon : float
        The ε > 0 spent on it.

    Raises
    ------
    ValueError
        If Δ/ε times 10³ overflows, or Δ/ε is below 10⁻²⁹⁰.
    """
    scale = sensitivity / epsilon
    if not math.isfinite(scale * _TAIL):
        raise ValueError("sensitivity and epsilon give a noise scale Δ/ε so large that the noise overflows")
    if scale < _MIN_SCALE:
        raise ValueError(f"sensitivity and epsilon give a noise scale Δ/ε below {_MIN_SCALE:g}; rescale the query")


def _check_query(values, sensitivity, epsilon, source) -> tuple[np.ndarray, float, float]:
    """The checks every additive-noise mechanism makes before any noise: finite numeric values
    (never quoted: they are private), a finite sensitivity > 0, a valid ε, a usable noise scale
    and a noise source."""
    _check_source(source)
    values = as_float_array(values, "values")
    if not np.isfinite(values).all():
        raise ValueError("values must be finite (NaN or infinite entries given)")
    sensitivity, epsilon = check_positive("sensitivity", sensitivity), check_epsilon(epsilon)
    check_noise_scale(sensitivity, epsilon)
    return values, sensitivity, epsilon


def laplace_mechanism(values, *, sensitivity: float, epsilon: float, source: NoiseSource) -> LaplaceRelease:
    """ε-DP release of ``values`` whose ℓ1 sensitivity is ``sensitivity``: iid Laplace noise.

    The noise scale is b = Δ/ε (Dwork et al. 2006).  With a secure source the noise is OpenDP's
    exact discrete Laplace on a 2^k grid, k = ⌊log₂(Δ/ε)⌋ − 40, and b = (Δ + m·2^k)/ε covers
    the rounding of the m values to the grid; ``epsilon`` is then the ε OpenDP's privacy map
    certifies (equal to the requested ε up to float rounding).  With a seeded source the noise
    is continuous (``source.laplace``) and the result is marked not private.

    Parameters
    ----------
    values : array-like
        The query's value(s).
    sensitivity : float
        ℓ1 sensitivity Δ of ``values`` under the caller's neighbour relation, > 0.
    epsilon : float
        ε > 0.
    source : NoiseSource
        Secure (private) or seeded (reproducible, not private).

    Returns
    -------
    LaplaceRelease
        The noisy values, the noise scale and the ε certified.

    Raises
    ------
    ValueError
        If ``sensitivity`` or ``epsilon`` is not finite and > 0.
    RuntimeError
        If OpenDP certifies a larger ε than requested (nothing is drawn).

    Notes
    -----
    Privacy: ε-DP (pure) for ``values`` whose ℓ1 sensitivity under the caller's neighbour
    relation is at most ``sensitivity`` (the caller proves the sensitivity; pm_private's
    mechanisms use replace-one neighbours with n public).  Public: ``sensitivity``, ``epsilon``
    and the number of values.  Exact: the guarantee holds for the returned values.
    Floating-point safe with a secure source (OpenDP's exact discrete Laplace on a 2^k grid,
    Canonne, Kamath & Steinke 2020); a seeded source is continuous and not private.
    Reference: Dwork et al. 2006.

    Examples
    --------
    >>> from pm_private.privacy import as_noise_source, laplace_mechanism
    >>> result = laplace_mechanism([3.0, 5.0], sensitivity=1.0, epsilon=0.5, source=as_noise_source(0))
    >>> result.scale, result.private
    (2.0, False)
    >>> result.values.shape
    (2,)
    """
    values, sensitivity, epsilon = _check_query(values, sensitivity, epsilon, source)
    if not source.secure:
        scale = sensitivity / epsilon
        noisy = values + source.laplace(scale, values.shape)
        return LaplaceRelease(values=noisy, scale=scale, sensitivity=sensitivity, epsilon=epsilon, private=False)
    measurement, scale = _opendp_laplace(values.size, sensitivity, epsilon)
    certified = float(measurement.map(float(sensitivity)))
    if certified > epsilon * (1 + 1e-12):
        raise RuntimeError(f"OpenDP certifies ε = {certified!r} > requested {epsilon!r}")
    note_noise_drawn()
    noisy = np.asarray(measurement(values.ravel().tolist()), dtype=np.float64)
    return LaplaceRelease(
        values=noisy.reshape(values.shape), scale=scale, sensitivity=sensitivity, epsilon=certified, private=True
    )


# --------------------------------------------------------------------------------------------
# Gaussian mechanism
# --------------------------------------------------------------------------------------------

#: Mechanism name of :func:`gaussian_mechanism` results.
GAUSSIAN_MECHANISM = (
    "Gaussian mechanism as exact discrete Gaussian (Canonne, Kamath & Steinke 2020), "
    "(ε, δ) from zero-concentrated DP (Bun & Steinke 2016)"
)


@dataclass(frozen=True, kw_only=True)
class GaussianRelease(Release, kind="gaussian"):
    """Noisy values from :func:`gaussian_mechanism`, the noise standard deviation and the ε certified.

    Parameters
    ----------
    epsilon : float
        The ε certified for this release.
    delta : float, default 0.0
        The δ certified (0 for pure ε-DP).
    neighbours : str
        The neighbour relation of the guarantee (a constant of the mechanism).
    mechanism : str
        The mechanism's name, as written to the accountant's ledger (a constant of the mechanism).
    private : bool
        True when the noise came from secure OS randomness (``rng=None``); False for a seeded
        ``rng``, whose output carries no privacy guarantee.
    values : numpy.ndarray
        The noisy values (the DP output), of the shape of the input.
    scale : float
        The noise standard deviation σ.
    sensitivity : float
        The ℓ2 sensitivity Δ the caller stated.
    """

    values: np.ndarray = output()
    scale: float = public()
    sensitivity: float = public()
    neighbours: str = constant(default=SENSITIVITY_BALL)
    mechanism: str = constant(default=GAUSSIAN_MECHANISM)

    def __post_init__(self):
        check_release_guarantee(self, needs_delta=True)
        check_release_field("epsilon", check_gaussian_epsilon, self.epsilon)
        _check_noise_fields(self)
        check_gaussian_scale_field("scale", self.scale, self.sensitivity, self.epsilon, self.delta)


def _opendp_gaussian(size: int, sensitivity: float, scale: float, delta: float):
    """OpenDP's discrete Gaussian on a 2^k grid (k 40 binary orders below σ), as an (ε, δ) measurement."""
    dp = _opendp()
    k = int(np.floor(np.log2(scale))) - _GRID_BITS_BELOW_SCALE
    domain = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=size)
    zcdp = dp.m.make_gaussian(domain, dp.l2_distance(T=float), scale=scale, k=k)
    return dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(zcdp), delta)


def _certified_epsilon(size: int, sensitivity: float, scale: float, delta: float) -> float:
    return float(_opendp_gaussian(size, sensitivity, scale, delta).map(float(sensitivity))[0])


def gaussian_scale(size: int, sensitivity: float, epsilon: float, delta: float) -> float:
    """Smallest σ (to a relative 10⁻⁹) whose discrete Gaussian mechanism OpenDP certifies (ε, δ)-DP
    for ``size`` values of ℓ2 sensitivity ``sensitivity`` (bisection on OpenDP's privacy map).

    The map is ρ = Δ′²/(2σ²)-zCDP (Δ′ = Δ plus the grid rounding) converted to (ε, δ) by
    OpenDP's zCDP-to-approximate-DP conversion, which costs a few per cent of σ against the
    analytic Gaussian mechanism (Balle & Wang 2018) of the continuous Gaussian, in exchange for
    exact sampling.  Public: depends only on its arguments.

    Parameters
    ----------
    size : int
        The number of values released together.
    sensitivity : float
        Their ℓ2 sensitivity Δ, > 0.
    epsilon : float
        The target ε > 0.
    delta : float
        The target δ in (0, 1).

    Returns
    -------
    float
        The noise standard deviation σ.
    """
    return _gaussian_scale(int(size), float(sensitivity), float(epsilon), float(delta))


@functools.lru_cache(maxsize=256)
def _gaussian_scale(size: int, sensitivity: float, epsilon: float, delta: float) -> float:
    hi = sensitivity * gaussian_noise_multiplier(epsilon, delta)
    while math.isfinite(hi) and _certified_epsilon(size, sensitivity, hi, delta) > epsilon:
        hi *= 2.0
    if not math.isfinite(hi * _TAIL):
        raise ValueError("sensitivity, epsilon and delta give a noise scale σ so large that the noise overflows")
    lo = hi / 2.0
    while _certified_epsilon(size, sensitivity, lo, delta) <= epsilon:
        hi, lo = lo, lo / 2.0
    while hi / lo - 1.0 > 1e-9:
        mid = lo * math.sqrt(hi / lo)  # the geometric mean without overflow of lo·hi
        if _certified_epsilon(size, sensitivity, mid, delta) <= epsilon:
            hi = mid
        else:
            lo = mid
    return hi


def gaussian_mechanism(
    values, *, sensitivity: float, epsilon: float, delta: float, source: NoiseSource
) -> GaussianRelease:
    """(ε, δ)-DP release of ``values`` whose ℓ2 sensitivity is ``sensitivity``: iid Gaussian noise.

    σ is :func:`gaussian_scale`: the smallest for which OpenDP certifies (ε, δ) for its exact
    discrete Gaussian on a 2^k grid, k = ⌊log₂ σ⌋ − 40 (Canonne, Kamath & Steinke 2020), through
    zero-concentrated DP (Bun & Steinke 2016).  With a secure source the noise is that exact
    sampler's and ``epsilon`` in the result is what OpenDP certifies (≤ the requested ε); with
    a seeded source the noise is continuous N(0, σ²) with the same σ and the result is marked
    not private.

    Parameters
    ----------
    values : array-like
        The query's value(s).
    sensitivity : float
        ℓ2 sensitivity Δ of ``values`` under the caller's neighbour relation, > 0.
    epsilon : float
        ε > 0.
    delta : float
        δ in (0, 1).
    source : NoiseSource
        Secure (private) or seeded (reproducible, not private).

    Returns
    -------
    GaussianRelease
        The noisy values, the noise standard deviation and the ε certified.

    Raises
    ------
    ValueError
        If ``sensitivity`` is not finite and > 0, ``epsilon`` is invalid or ``delta`` is not in
        (0, 1).
    RuntimeError
        If OpenDP certifies a larger ε than requested (nothing is drawn).

    Notes
    -----
    Privacy: (ε, δ)-DP for ``values`` whose ℓ2 sensitivity under the caller's neighbour
    relation is at most ``sensitivity`` (the caller proves the sensitivity; pm_private's
    mechanisms use replace-one neighbours with n public).  Public: ``sensitivity``, ε, δ and
    the number of values.  Exact: ε is what OpenDP's privacy map certifies for the returned
    values.  Floating-point safe with a secure source (OpenDP's exact discrete Gaussian,
    Canonne, Kamath & Steinke 2020); a seeded source is continuous and not private.
    References: Bun & Steinke 2016; Canonne, Kamath & Steinke 2020.

    Examples
    --------
    >>> from pm_private.privacy import as_noise_source, gaussian_mechanism
    >>> result = gaussian_mechanism(
    ...     [3.0, 5.0], sensitivity=1.0, epsilon=1.0, delta=1e-5, source=as_noise_source(0)
    ... )
    >>> round(result.scale, 2), result.private
    (4.05, False)
    >>> result.values.shape
    (2,)
    """
    values, sensitivity, epsilon = _check_query(values, sensitivity, epsilon, source)
    delta = check_delta(delta)
    check_gaussian_epsilon(epsilon)
    scale = gaussian_scale(values.size, sensitivity, epsilon, delta)
    if not source.secure:
        noisy = values + scale * source.normal(values.shape)
        return GaussianRelease(
            values=noisy, scale=scale, sensitivity=sensitivity, epsilon=epsilon, delta=delta, private=False
        )
    measurement = _opendp_gaussian(values.size, sensitivity, scale, delta)
    certified = float(measurement.map(float(sensitivity))[0])
    if certified > epsilon * (1 + 1e-12):
        raise RuntimeError(f"OpenDP certifies ε = {certified!r} > requested {epsilon!r}")
    note_noise_drawn()
    noisy = np.asarray(measurement(values.ravel().tolist()), dtype=np.float64)
    return GaussianRelease(
        values=noisy.reshape(values.shape),
        scale=scale,
        sensitivity=sensitivity,
        epsilon=certified,
        delta=delta,
        private=True,
    )


def gaussian_noise_event(size: int, sensitivity: float, epsilon: float, delta: float) -> NoiseEvent:
    """The noise of :func:`gaussian_mechanism` for the ledger's tight composition.

    The sensitivity is Δ' = Δ + (size + 2)·2^k for the 2^k grid of OpenDP's discrete Gaussian
    (k = ⌊log₂ σ⌋ − 40, σ = :func:`gaussian_scale`): the rounding of ``size`` values, and one grid
    step by which the discrete Gaussian's privacy curve stays under the continuous Gaussian's
    (Canonne, Kamath & Steinke 2020).  The stated scale is σ' = m·Δ' ≤ σ, with m the noise
    multiplier whose ε at δ by the ledger's PLD code is exactly ``epsilon``
    (``pm_private.privacy.budget.gaussian_multiplier``): OpenDP's σ, calibrated through
    zero-concentrated DP, is 6–9 % larger than the PLD needs, so stating σ itself would make the
    event imply less than the ε charged, which the accountant refuses.  Stating less noise than
    was drawn is a valid, pessimistic description (N(0, σ²) is N(0, σ'²) plus independent noise, a
    post-processing), and its tight totals count exactly the (ε, δ) charged.  Public: depends only
    on its arguments.

    Parameters
    ----------
    size : int
        The number of values released together.
    sensitivity : float
        Their ℓ2 sensitivity Δ, > 0.
    epsilon : float
        The target ε > 0.
    delta : float
        The target δ in (0, 1).

    Returns
    -------
    NoiseEvent
        A Gaussian event with scale σ' ≤ σ and the enlarged sensitivity Δ'.
    """
    scale = gaussian_scale(size, sensitivity, epsilon, delta)
    grid = 2.0 ** (math.floor(math.log2(scale)) - _GRID_BITS_BELOW_SCALE)
    bound = sensitivity + (size + 2) * grid
    multiplier = gaussian_multiplier(float(epsilon), float(delta))
    return NoiseEvent(GAUSSIAN, min(scale, multiplier * bound), bound)


def laplace_noise_event(sensitivity: float, epsilon: float) -> NoiseEvent:
    """The noise of :func:`laplace_mechanism` for the ledger's tight composition.

    A Laplace event with b = Δ/ε (OpenDP enlarges b for its rounding so that ε stays exact):
    composed as randomized response with parameter ε (Kairouz, Oh & Viswanath 2015).

    Parameters
    ----------
    sensitivity : float
        The ℓ1 sensitivity Δ, > 0.
    epsilon : float
        ε > 0.

    Returns
    -------
    NoiseEvent
        A Laplace event with scale Δ/ε and sensitivity Δ.
    """
    return NoiseEvent(LAPLACE, sensitivity / epsilon, sensitivity)


def symmetric_entry_weights(a, b) -> np.ndarray:
    """Weights w of distinct entries (a, b) of a symmetric matrix: 1 on the diagonal (a = b), √2 off it.

    For a vector listing the distinct entries of a symmetric M (each pair once), ‖w ⊙ vec‖₂ is the
    Frobenius norm of M restricted to those entries, so the Gaussian mechanism on w ⊙ vec with the
    Frobenius sensitivity of M releases the off-diagonal entries with noise of s.d. σ/√2 at the
    cost of iid noise on the unweighted entries (Σ_{a≤b} M_ab² ≤ ‖M‖_F²).  The sufficient-statistics
    releases of linear and logistic regression weight their entries so.

    Parameters
    ----------
    a, b : array_like of int
        Row and column indices of the listed entries.

    Returns
    -------
    numpy.ndarray
        The weights, one per entry.

    Examples
    --------
    >>> from pm_private.privacy import symmetric_entry_weights
    >>> symmetric_entry_weights([0, 0, 1], [0, 1, 1]).round(4).tolist()
    [1.0, 1.4142, 1.0]
    """
    return np.where(np.asarray(a) != np.asarray(b), np.sqrt(2.0), 1.0)


# --------------------------------------------------------------------------------------------
# Exponential mechanism
# --------------------------------------------------------------------------------------------


def exponential_mechanism(
    scores,
    *,
    epsilon: float,
    sensitivity: float,
    source: NoiseSource,
    log_base=None,
    size: int | None = None,
):
    """Index i drawn with probability ∝ μᵢ·exp(ε·qᵢ/(2Δ)) (McSherry & Talwar 2007).

    ε-DP when every score qᵢ changes by at most Δ between neighbours and the base measure μ is
    public.  Sampled as report-noisy-max with Gumbel noise, argmaxᵢ(sᵢ/b + Gᵢ) with
    sᵢ = qᵢ + b·log μᵢ and b = 2Δ/ε, whose law is exactly the one above.

    Parameters
    ----------
    scores : array-like, shape (k,)
        Utilities qᵢ (finite).
    epsilon, sensitivity : float
        ε > 0 and the utility sensitivity Δ > 0.
    source : NoiseSource
        Secure or seeded (see below).
    log_base : array-like, shape (k,), optional
        log μᵢ of the base measure (default 0); −inf (μᵢ = 0) means never drawn.  The
        continuous exponential mechanism of Nguyên & Hui (2017b) passes the log-lengths of its
        levels here; its privacy argument is over the continuous domain (see
        :mod:`pm_private.survival.weibull.mechanisms`).
    size : int, optional
        Number of independent draws (an int array); one int when None.

    Returns
    -------
    int or numpy.ndarray
        The index drawn, or an int64 array of ``size`` indices.

    Raises
    ------
    ValueError
        If ``epsilon`` or ``sensitivity`` is invalid, ``scores`` is empty, not 1-D or not
        finite, or ``log_base`` is malformed or −inf everywhere.
    RuntimeError
        If OpenDP certifies a larger privacy loss than ε (nothing is drawn).

    Notes
    -----
    Privacy: ε-DP (pure) per draw (``size`` draws cost ``size``·ε), when every score changes by
    at most ``sensitivity`` between neighbouring data sets (the caller proves it; pm_private's
    mechanisms use replace-one neighbours with n public).  Public: the candidates, the base
    measure μ, ε and Δ.  Exact: the law of the index drawn is exactly the one above.
    Floating-point safe with a secure source (OpenDP's exact Gumbel-max sampler); a seeded
    source is not private.  Reference: McSherry & Talwar 2007.

    Secure source: OpenDP's ``make_noisy_max`` with the zero-concentrated measure, which is
    report-noisy-max with Gumbel noise, samples the argmax exactly: the float scores sᵢ and the
    float scale b are taken as exact rationals and the Gumbel comparisons are resolved to the
    precision they need, so the selection has no floating-point leak beyond the scores
    themselves.  OpenDP's privacy map of that measurement, ρ = (2Δ/b)²/8, is checked to equal
    ε²/8 (the bounded-range bound, Cesar & Rogers 2021).  What remains floating point: the
    scores qᵢ and log μᵢ as the caller computed them, and sᵢ = qᵢ + b·log μᵢ (one rounding per
    score).  A seeded source draws the Gumbel variates as −log(−log U) from 53-bit uniforms
    (floating point, reproducible, not private).

    Examples
    --------
    >>> from pm_private.privacy import as_noise_source, exponential_mechanism
    >>> pick = exponential_mechanism([0.0, 1.0, 5.0], epsilon=1.0, sensitivity=1.0, source=as_noise_source(0))
    >>> pick in (0, 1, 2)
    True
    >>> exponential_mechanism(
    ...     [0.0, 1.0, 5.0], epsilon=1.0, sensitivity=1.0, source=as_noise_source(0), size=4
    ... ).shape
    (4,)
    """
    _check_source(source)
    epsilon = check_epsilon(epsilon)
    sensitivity = check_positive("sensitivity", sensitivity)
    check_noise_scale(2.0 * sensitivity, epsilon)
    if size is not None:
        size = check_count("size", size)
    scores = as_float_array(scores, "scores")
    check_memory("size and scores", 32.0 * (1 if size is None else size) * max(scores.size, 1))
    if scores.ndim != 1 or scores.size == 0:
        raise ValueError(f"scores must be a non-empty 1-D array, got shape {scores.shape}")
    if not np.isfinite(scores).all():
        raise ValueError("scores must be finite")
    log_base = np.zeros_like(scores) if log_base is None else as_float_array(log_base, "log_base")
    if log_base.shape != scores.shape or np.isnan(log_base).any() or (log_base == np.inf).any():
        raise ValueError("log_base must have the shape of scores, with values in [−inf, inf)")
    candidates = np.flatnonzero(log_base > -np.inf)
    if candidates.size == 0:
        raise ValueError("log_base is −inf everywhere (the base measure is zero everywhere): nothing to draw")
    b = 2.0 * float(sensitivity) / epsilon
    shifted = scores[candidates] + b * log_base[candidates]
    count = 1 if size is None else int(size)
    if source.secure:
        measurement = _opendp_gumbel_max(candidates.size, b)
        rho = float(measurement.map(float(sensitivity)))
        if rho > epsilon**2 / 8 * (1 + 1e-9):
            raise RuntimeError(f"OpenDP certifies ρ = {rho!r} > ε²/8 for ε = {epsilon!r}")
        values = shifted.tolist()
        note_noise_drawn()
        picks = np.array([measurement(values) for _ in range(count)], dtype=np.int64)
    else:
        gumbel = -np.log(source.exponential((count, candidates.size)))
        picks = np.argmax(shifted / b + gumbel, axis=1)
    drawn = candidates[picks]
    return int(drawn[0]) if size is None else drawn


def _opendp_gumbel_max(k: int, scale: float):
    dp = _opendp()
    domain = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=k)
    return dp.m.make_noisy_max(domain, dp.linf_distance(T=float), dp.zero_concentrated_divergence(), scale=scale)


# --------------------------------------------------------------------------------------------
# Gaussian mechanism calibration
# --------------------------------------------------------------------------------------------


def gaussian_delta(multiplier: float, epsilon: float) -> float:
    """Smallest δ for which N(0, (multiplier·Δ)²) noise is (ε, δ)-DP for ℓ2 sensitivity Δ.

    Balle & Wang (2018), Thm 8: δ(ε) = Φ(1/(2c) − εc) − e^ε·Φ(−1/(2c) − εc) with c = σ/Δ.
    The second term is computed in log space so that large ε does not overflow.

    Parameters
    ----------
    multiplier : float
        c = σ/Δ > 0.
    epsilon : float
        ε > 0.

    Returns
    -------
    float
        The δ of the Gaussian mechanism with multiplier c at ε.
    """
    c = float(multiplier)
    a, b = 1.0 / (2.0 * c), float(epsilon) * c
    return float(ndtr(a - b) - math.exp(epsilon + float(log_ndtr(-a - b))))


def gaussian_noise_multiplier(epsilon: float, delta: float) -> float:
    """The smallest c = σ/Δ for which the Gaussian mechanism is (ε, δ)-DP (Balle & Wang 2018).

    Bisection on the exact condition :func:`gaussian_delta` ``(c, ε) ≤ δ`` (decreasing in c).
    The returned c always satisfies the condition (it is the upper end of the final bracket,
    within a relative 10⁻¹² of the minimum).

    Parameters
    ----------
    epsilon : float
        ε > 0.
    delta : float
        δ in (0, 1).

    Returns
    -------
    float
        The noise multiplier c.

    Raises
    ------
    ValueError
        If no finite noise scale achieves (ε, δ).
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    hi = 1.0
    for _ in range(2100):
        if gaussian_delta(hi, epsilon) <= delta:
            break
        hi *= 2.0
    else:  # pragma: no cover - unreachable for finite ε > 0, δ > 0
        raise ValueError(f"no Gaussian noise scale found for ε = {epsilon!r}, δ = {delta!r}")
    lo = hi
    for _ in range(2100):
        lo /= 2.0
        if gaussian_delta(lo, epsilon) > delta:
            break
    else:  # pragma: no cover
        raise ValueError(f"no Gaussian noise scale found for ε = {epsilon!r}, δ = {delta!r}")
    while hi / lo - 1.0 > 1e-12:
        mid = math.sqrt(lo * hi)
        if gaussian_delta(mid, epsilon) <= delta:
            hi = mid
        else:
            lo = mid
    return hi


# --------------------------------------------------------------------------------------------
# Row projection
# --------------------------------------------------------------------------------------------

# Projected rows are scaled by this much less than bound/‖x‖ so that the *computed* norm of a
# projected row never exceeds the bound (the norm's own rounding is a few ulps).
_SHRINK = 1.0 - 2.0**-48


def row_scale_factors(X, bound: float, norm: int = 2) -> np.ndarray:
    """The factors cᵢ = min(1, B/‖xᵢ‖_norm) that scale each row of X into the ball of radius B
    (for ``norm=np.inf`` the cube maxⱼ|xᵢⱼ| ≤ B).

    Norms are computed after dividing each row by its largest |entry|, so very large finite
    entries do not overflow, and factors below 1 are shrunk by a further relative 2⁻⁴⁸ so that
    the computed norm of cᵢxᵢ is ≤ B despite rounding.

    Parameters
    ----------
    X : array-like, shape (n, d)
        Finite rows.
    bound : float
        Public radius B > 0.
    norm : {1, 2, numpy.inf}
        ℓ1, ℓ2 or ℓ∞ norm.

    Returns
    -------
    numpy.ndarray, shape (n,)
        The factors, in (0, 1].

    Raises
    ------
    ValueError
        If ``norm`` is not 1, 2 or ``numpy.inf``.
    """
    if norm not in (1, 2, np.inf):
        raise ValueError(f"norm must be 1, 2 or inf, got {norm!r}")
    X = np.asarray(X, dtype=np.float64)
    absmax = np.abs(X).max(axis=1, initial=0.0)
    safe = np.where(absmax > 0, absmax, 1.0)
    scaled = X / safe[:, None]
    if norm == 2:
        root = np.sqrt(np.einsum("ij,ij->i", scaled, scaled))  # ≥ 1 for a non-zero row
    elif norm == 1:
        root = np.abs(scaled).sum(axis=1)
    else:
        root = np.ones(len(X))
    # ‖x‖ = absmax·root; factor = min(1, B/‖x‖), written to avoid overflow.  (B/safe may
    # overflow for subnormal rows, which are inside the ball and keep factor 1.)
    with np.errstate(over="ignore"):  # absmax·root overflows to inf only for rows far outside the ball
        outside = absmax * root > bound
        return np.where(outside, (bound / safe) / np.where(outside, root, 1.0) * _SHRINK, 1.0)


def project_rows(X, bound: float, norm: int = 2) -> np.ndarray:
    """Rows with ‖xᵢ‖_norm > bound scaled onto the ball of radius ``bound``; other rows unchanged.

    xᵢ ← cᵢxᵢ with cᵢ = min(1, B/‖xᵢ‖) (``row_scale_factors``; Euclidean projection onto the
    ℓ2 ball for ``norm=2``; radial scaling for ``norm=1``).  This is what bounds a record's
    contribution in every mechanism whose sensitivity assumes ‖x‖ ≤ B.  A new array.

    Parameters
    ----------
    X : array-like, shape (n, d)
        Finite rows.
    bound : float
        Public radius B > 0.
    norm : {1, 2}
        ℓ1 or ℓ2 norm.

    Returns
    -------
    numpy.ndarray, shape (n, d)
        The projected rows.

    Raises
    ------
    ValueError
        If ``norm`` is not 1 or 2.
    """
    if norm not in (1, 2):
        raise ValueError(f"norm must be 1 or 2, got {norm!r}")
    X = np.asarray(X, dtype=np.float64)
    return X * row_scale_factors(X, bound, norm)[:, None]


def check_gaussian_scale_field(name: str, scale, sensitivity: float, epsilon: float, delta: float) -> None:
    """ValueError naming the release field ``name`` unless the Gaussian noise s.d. it records is what
    (ε, δ) at that sensitivity calls for: at least the analytic Gaussian's Δ·c(ε, δ) (Balle & Wang
    2018; OpenDP's conversion through zCDP is looser by a few per cent) and below twice it.

    Parameters
    ----------
    name : str
        The release field (e.g. ``"noise_scale"``).
    scale : float
        Its value σ.
    sensitivity : float
        The ℓ2 sensitivity Δ the release records.
    epsilon, delta : float
        The (ε, δ) the release records.

    Raises
    ------
    ValueError
        ``field '<name>' must lie in [1, 2] × …``, or a noise that overflows.
    """
    low = sensitivity * gaussian_noise_multiplier(epsilon, delta)
    if not (_is_number(scale) and low * (1 - 1e-9) <= scale <= 2.0 * low):
        raise ValueError(
            f"field '{name}' must lie in [1, 2] × 'sensitivity'·gaussian_noise_multiplier('epsilon', 'delta') "
            f"= {low!r}, got {scale!r:.40}"
        )
    check_release_field(name, check_noise_scale, scale, 1.0)  # the noise must not overflow

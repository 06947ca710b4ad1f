"""The Gaussian mechanism on OpenDP's exact discrete Gaussian (Canonne, Kamath & Steinke 2020), its
calibration through zero-concentrated DP (Bun & Steinke 2016), the analytic Gaussian mechanism's δ
and noise multiplier (Balle & Wang 2018), its noise events for the accountant, and the Frobenius
weights of the entries of a symmetric matrix."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from scipy.special import log_ndtr, ndtr

from .._engine.docstrings import parameters_from
from .budget import GAUSSIAN, NoiseEvent, gaussian_multiplier
from .mechanism_checks import (
    _GRID_BITS_BELOW_SCALE,
    _TAIL,
    NoisyValues,
    _check_noise_fields,
    _check_query,
    _draw_certified,
    _opendp,
    check_gaussian_epsilon,
    check_noise_scale,
)
from .noise import NoiseSource
from .release import Release, constant
from .validation import (
    check_delta,
    check_epsilon,
    check_release_field,
    check_release_guarantee,
    is_number,
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
class GaussianRelease(NoisyValues, Release, kind="gaussian"):
    """Noisy values from :func:`gaussian_mechanism`, the noise standard deviation and the ε certified.

    Parameters
    ----------
    scale : float
        The noise standard deviation σ.
    sensitivity : float
        The ℓ2 sensitivity Δ the caller stated.
    """

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
    noisy = _draw_certified(measurement, values, certified, epsilon)
    return GaussianRelease(
        values=noisy, scale=scale, sensitivity=sensitivity, epsilon=certified, delta=delta, private=True
    )


@parameters_from(gaussian_scale)
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
    if not (is_number(scale) and low * (1 - 1e-9) <= scale <= 2.0 * low):
        raise ValueError(
            f"field '{name}' must lie in [1, 2] × 'sensitivity'·gaussian_noise_multiplier('epsilon', 'delta') "
            f"= {low!r}, got {scale!r:.40}"
        )
    check_release_field(name, check_noise_scale, scale, 1.0)  # the noise must not overflow

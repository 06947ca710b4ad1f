"""The Laplace mechanism (Dwork et al. 2006) as exact discrete Laplace on a 2^k grid (Canonne, Kamath
& Steinke 2020; OpenDP's sampler with the secure source), its release record and its noise event.
Why the grid: see :mod:`pm_private.privacy.primitives`."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .budget import LAPLACE, NoiseEvent
from .mechanism_checks import (
    _GRID_BITS_BELOW_SCALE,
    NoisyValues,
    _check_noise_fields,
    _check_query,
    _draw_certified,
    _opendp,
)
from .noise import NoiseSource
from .release import Release, constant
from .validation import (
    check_release_guarantee,
    is_number,
)

#: Mechanism name of :func:`laplace_mechanism` results.
LAPLACE_MECHANISM = "Laplace mechanism (Dwork et al. 2006) as exact discrete Laplace (Canonne, Kamath & Steinke 2020)"


# --------------------------------------------------------------------------------------------
# Laplace mechanism
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class LaplaceRelease(NoisyValues, Release, kind="laplace"):
    """Noisy values from :func:`laplace_mechanism`, the noise scale used and the ε certified.

    Parameters
    ----------
    scale : float
        The Laplace noise scale b.
    sensitivity : float
        The ℓ1 sensitivity Δ the caller stated.
    """

    mechanism: str = constant(default=LAPLACE_MECHANISM)

    def __post_init__(self):
        check_release_guarantee(self)
        _check_noise_fields(self)
        # b = Δ/ε for a seeded source; (Δ + m·2^k)/ε with 2^k ≤ 2⁻⁴⁰·Δ/ε for the secure one.
        size = np.size(self.values)
        low = self.sensitivity / self.epsilon
        if not (is_number(self.scale) and low * (1 - 1e-9) <= self.scale <= low * (1 + size * 2.0**-39 + 1e-9)):
            raise ValueError(f"field 'scale' must be 'sensitivity'/'epsilon' = {low!r}, got {self.scale!r:.40}")


def _opendp_laplace(size: int, sensitivity: float, epsilon: float):
    dp = _opendp()
    k = int(np.floor(np.log2(sensitivity / epsilon))) - _GRID_BITS_BELOW_SCALE
    scale = (sensitivity + size * 2.0**k) / epsilon
    domain = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=size)
    return dp.m.make_laplace(domain, dp.l1_distance(T=float), scale=scale, k=k), scale


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
    noisy = _draw_certified(measurement, values, certified, epsilon)
    return LaplaceRelease(values=noisy, scale=scale, sensitivity=sensitivity, epsilon=certified, private=True)


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

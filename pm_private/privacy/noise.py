"""Noise for DP mechanisms: a secure random source, the Laplace mechanism, ℓ1 and ℓ2 noise vectors.

Randomness
----------
``rng=None`` (the default everywhere in pm_private) draws from the operating system's
cryptographically secure generator (``os.urandom``).  Passing a seed or a
``numpy.random.Generator`` makes results reproducible for tests and Monte Carlo studies, and
the result is then marked ``private=False``: a seeded generator is predictable, so its output
carries **no** privacy guarantee.  Both modes turn uniform variates into noise with the same
code, so the transforms tested with a seed are the ones used in production.

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
document), and timing side channels of the sampler are out of scope.

The other samplers here (:func:`laplace_vector`, :func:`l2_gamma_vector`) produce noise that
is added inside an objective (objective perturbation) rather than released directly; they are
inverse-CDF transforms of 53-bit uniforms, exact up to floating-point rounding, with tails
truncated beyond probability 2^-53 per variate.  A mechanism that releases such a vector
directly must say so and account for the truncation (an additive δ of about 2^-53 per
coordinate).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from .accounting import note_noise_drawn

__all__ = [
    "NoiseSource",
    "as_noise_source",
    "laplace_mechanism",
    "laplace_vector",
    "l2_gamma_vector",
]

_TWO_POW_MINUS_53 = 2.0**-53


class NoiseSource:
    """Uniform variates from the OS CSPRNG (``secure``) or from a seeded numpy generator.

    Use :func:`as_noise_source` to build one from the ``rng`` argument of a release function.
    Every draw marks the accountant reservations open in the current thread as having drawn
    noise (:func:`~pm_private.privacy.accounting.note_noise_drawn`): a release that fails after
    this point stays spent.
    """

    def __init__(self, generator: np.random.Generator | None = None):
        self._generator = generator

    @property
    def secure(self) -> bool:
        """True when the bits come from ``os.urandom`` (the only private mode)."""
        return self._generator is None

    def uniform(self, size) -> np.ndarray:
        """Uniform variates on the open interval (0, 1) with 53-bit resolution."""
        count = int(np.prod(size, dtype=np.int64))
        note_noise_drawn()
        if self._generator is None:
            words = np.frombuffer(os.urandom(8 * count), dtype=np.uint64)
        else:
            words = self._generator.integers(0, 2**64, size=count, dtype=np.uint64, endpoint=False)
        mantissa = (words >> np.uint64(11)).astype(np.float64)  # 53 random bits
        return ((mantissa + 0.5) * _TWO_POW_MINUS_53).reshape(size)

    def exponential(self, size) -> np.ndarray:
        """Standard exponential variates, −log U."""
        return -np.log(self.uniform(size))

    def laplace(self, scale: float, size) -> np.ndarray:
        """Laplace(0, scale) variates as the difference of two exponentials."""
        return scale * (self.exponential(size) - self.exponential(size))

    def normal(self, size) -> np.ndarray:
        """Standard normal variates by the Box–Muller transform."""
        count = int(np.prod(size, dtype=np.int64))
        half = (count + 1) // 2
        radius = np.sqrt(2.0 * self.exponential(half))
        angle = 2.0 * np.pi * self.uniform(half)
        pairs = np.concatenate([radius * np.cos(angle), radius * np.sin(angle)])
        return pairs[:count].reshape(size)

    def gamma(self, shape: int, scale: float, size: tuple[int, ...] = ()) -> np.ndarray:
        """Gamma(shape, scale) for integer shape: a sum of ``shape`` exponentials (Erlang)."""
        if int(shape) != shape or shape < 1:
            raise ValueError(f"gamma shape must be a positive integer, got {shape!r}")
        return scale * self.exponential((int(shape), *size)).sum(axis=0)


def as_noise_source(rng=None) -> NoiseSource:
    """``None`` → secure OS randomness; an int or ``numpy.random.Generator`` → seeded (not private)."""
    if isinstance(rng, NoiseSource):
        return rng
    if rng is None:
        return NoiseSource()
    if isinstance(rng, np.random.Generator):
        return NoiseSource(rng)
    if isinstance(rng, (int, np.integer)):
        return NoiseSource(np.random.default_rng(int(rng)))
    raise TypeError(f"rng must be None, an int seed or a numpy Generator, got {type(rng).__name__}")


@dataclass(frozen=True)
class LaplaceRelease:
    """Noisy values from :func:`laplace_mechanism`, the noise scale used and the ε certified."""

    values: np.ndarray
    scale: float
    sensitivity: float
    epsilon: float
    private: bool


# The secure Laplace mechanism rounds to a grid of 2^k with k this many binary orders below
# the noise scale: the rounding adds at most m·2^k to the ℓ1 sensitivity of m values, a
# relative m·2^-40 (2e-9 for m = 2080), which the noise scale absorbs so ε stays exact.
_GRID_BITS_BELOW_SCALE = 40


def _opendp_laplace(size: int, sensitivity: float, epsilon: float):
    import opendp.prelude as dp

    dp.enable_features("contrib")
    k = int(np.floor(np.log2(sensitivity / epsilon))) - _GRID_BITS_BELOW_SCALE
    scale = (sensitivity + size * 2.0**k) / epsilon
    domain = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=size)
    return dp.m.make_laplace(domain, dp.l1_distance(T=float), scale=scale, k=k), scale


def laplace_mechanism(
    values, *, sensitivity: float, epsilon: float, source: NoiseSource
) -> LaplaceRelease:
    """ε-DP release of ``values`` whose ℓ1 sensitivity is ``sensitivity``: iid Laplace noise.

    The noise scale is b = Δ/ε (Dwork et al. 2006).  With a secure source the noise is OpenDP's
    exact discrete Laplace on a 2^k grid, k = ⌊log₂(Δ/ε)⌋ − 40, and b = (Δ + m·2^k)/ε covers
    the rounding of the m values to the grid; ``epsilon`` is then the ε OpenDP's privacy map
    certifies (equal to the requested ε up to float rounding).  With a seeded source the noise
    is continuous (``source.laplace``) and the result is marked not private.
    """
    values = np.asarray(values, dtype=np.float64)
    if not (np.isfinite(sensitivity) and sensitivity > 0):
        raise ValueError(f"sensitivity must be finite and > 0, got {sensitivity!r}")
    if not (np.isfinite(epsilon) and epsilon > 0):
        raise ValueError(f"epsilon must be finite and > 0, got {epsilon!r}")
    if not source.secure:
        scale = sensitivity / epsilon
        noisy = values + source.laplace(scale, values.shape)
        return LaplaceRelease(noisy, scale, sensitivity, epsilon, private=False)
    measurement, scale = _opendp_laplace(values.size, sensitivity, epsilon)
    certified = float(measurement.map(float(sensitivity)))
    if certified > epsilon * (1 + 1e-12):
        raise RuntimeError(f"OpenDP certifies ε = {certified!r} > requested {epsilon!r}")
    note_noise_drawn()
    noisy = np.asarray(measurement(values.ravel().tolist()), dtype=np.float64)
    return LaplaceRelease(noisy.reshape(values.shape), scale, sensitivity, certified, private=True)


def laplace_vector(dim: int, scale: float, source: NoiseSource) -> np.ndarray:
    """iid Laplace vector: density ∝ exp(−‖b‖₁ / scale) (Yu et al's (2014) noise B₁ with scale 2)."""
    return source.laplace(scale, (int(dim),))


def l2_gamma_vector(dim: int, scale: float, source: NoiseSource) -> np.ndarray:
    """Vector with density ∝ exp(−‖b‖₂ / scale).

    Its radius ‖b‖₂ ~ Gamma(dim, scale) and its direction is uniform on the sphere
    (Chaudhuri, Monteleoni & Sarwate 2011, Alg. 1; Nguyên & Hui (2017a) Alg. 1–2; Yu et al's (2014) B₂).
    """
    dim = int(dim)
    direction = source.normal((dim,))
    direction /= np.linalg.norm(direction)
    return source.gamma(dim, scale) * direction

"""Randomness for DP mechanisms: a secure random source and the ℓ1 and ℓ2 noise vectors of objective perturbation.

Randomness
----------
``rng=None`` (the default everywhere in pm_private) draws from the operating system's
cryptographically secure generator (``os.urandom``).  Passing a seed or a
``numpy.random.Generator`` makes results reproducible for tests and Monte Carlo studies, and
the result is then marked ``private=False``: a seeded generator is predictable, so its output
carries **no** privacy guarantee.  Both modes turn uniform variates into noise with the same
code, so the transforms tested with a seed are the ones used in production.

The mechanisms built on this source (the Laplace and exponential mechanisms, Gaussian
calibration, row projection) live in :mod:`pm_private.privacy.primitives`.

The samplers here (:func:`laplace_vector`, :func:`l2_gamma_vector`) produce noise that
is added inside an objective (objective perturbation) rather than released directly; they are
inverse-CDF transforms of 53-bit uniforms, exact up to floating-point rounding, with tails
truncated beyond probability 2^-53 per variate.  A mechanism that releases such a vector
directly must say so and account for the truncation (an additive δ of about 2^-53 per
coordinate).
"""

from __future__ import annotations

import os

import numpy as np

from .accountant import note_noise_drawn

__all__ = [
    "NoiseSource",
    "as_noise_source",
    "laplace_vector",
    "l2_gamma_vector",
]

_TWO_POW_MINUS_53 = 2.0**-53


class NoiseSource:
    """Uniform variates from the OS CSPRNG (``secure``) or from a seeded numpy generator.

    Use :func:`as_noise_source` to build one from the ``rng`` argument of a release function.
    Every draw marks the accountant reservations open in the current thread as having drawn
    noise (:func:`~pm_private.privacy.accountant.note_noise_drawn`): a release that fails after
    this point stays spent.

    Parameters
    ----------
    generator : numpy.random.Generator, optional
        None (the default): secure OS randomness.  A generator: reproducible, not private.
    """

    def __init__(self, generator: np.random.Generator | None = None):
        self._generator = generator

    @property
    def secure(self) -> bool:
        """True when the bits come from ``os.urandom`` (the only private mode)."""
        return self._generator is None

    def uniform(self, size) -> np.ndarray:
        """Uniform variates on the open interval (0, 1) with 53-bit resolution.

            Parameters
            ----------
        size : int or tuple of int
            The shape of the returned array.

            Returns
            -------
            numpy.ndarray
                float64 variates of shape ``size``.
        """
        count = int(np.prod(size, dtype=np.int64))
        note_noise_drawn()
        if self._generator is None:
            words = np.frombuffer(os.urandom(8 * count), dtype=np.uint64)
        else:
            words = self._generator.integers(0, 2**64, size=count, dtype=np.uint64, endpoint=False)
        mantissa = (words >> np.uint64(11)).astype(np.float64)  # 53 random bits
        return ((mantissa + 0.5) * _TWO_POW_MINUS_53).reshape(size)

    def exponential(self, size) -> np.ndarray:
        """Standard exponential variates, −log U.

            Parameters
            ----------
        size : int or tuple of int
            The shape of the returned array.

            Returns
            -------
            numpy.ndarray
                float64 variates of shape ``size``.
        """
        return -np.log(self.uniform(size))

    def laplace(self, scale: float, size) -> np.ndarray:
        """Laplace(0, scale) variates as the difference of two exponentials.

            Parameters
            ----------
            scale : float
                The Laplace scale b (density ∝ exp(−|x|/b)).
        size : int or tuple of int
            The shape of the returned array.

            Returns
            -------
            numpy.ndarray
                float64 variates of shape ``size``.
        """
        return scale * (self.exponential(size) - self.exponential(size))

    def normal(self, size) -> np.ndarray:
        """Standard normal variates by the Box–Muller transform.

            Parameters
            ----------
        size : int or tuple of int
            The shape of the returned array.

            Returns
            -------
            numpy.ndarray
                float64 variates of shape ``size``.
        """
        count = int(np.prod(size, dtype=np.int64))
        half = (count + 1) // 2
        radius = np.sqrt(2.0 * self.exponential(half))
        angle = 2.0 * np.pi * self.uniform(half)
        pairs = np.concatenate([radius * np.cos(angle), radius * np.sin(angle)])
        return pairs[:count].reshape(size)

    def gamma(self, shape: int, scale: float, size: tuple[int, ...] = ()) -> np.ndarray:
        """Gamma(shape, scale) for integer shape: a sum of ``shape`` exponentials (Erlang).

        Parameters
        ----------
        shape : int
            The Gamma shape, a positive integer.
        scale : float
            The Gamma scale.
        size : tuple of int, default ()
            The shape of the returned array.

        Returns
        -------
        numpy.ndarray
            float64 variates of shape ``size``.

        Raises
        ------
        ValueError
            If ``shape`` is not a positive integer.
        """
        if int(shape) != shape or shape < 1:
            raise ValueError(f"gamma shape must be a positive integer, got {shape!r}")
        return scale * self.exponential((int(shape), *size)).sum(axis=0)


def as_noise_source(rng=None) -> NoiseSource:
    """``None`` → secure OS randomness; an int or ``numpy.random.Generator`` → seeded (not private).

    Parameters
    ----------
    rng : None, int, numpy.random.Generator or NoiseSource, optional
        The ``rng`` argument of a release function; a :class:`NoiseSource` is returned as is.

    Returns
    -------
    NoiseSource
        The source to draw noise from; its ``secure`` is True only for ``rng=None``.

    Raises
    ------
    TypeError
        If ``rng`` is of any other type (a bool is not a seed).
    ValueError
        If ``rng`` is a negative seed.
    """
    if isinstance(rng, NoiseSource):
        return rng
    if rng is None:
        return NoiseSource()
    if isinstance(rng, np.random.Generator):
        return NoiseSource(rng)
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, (bool, np.bool_)):
        if rng < 0:
            raise ValueError(f"rng must be None, a seed ≥ 0 or a numpy Generator, got {rng!r}")
        return NoiseSource(np.random.default_rng(int(rng)))
    raise TypeError(f"rng must be None, an int seed or a numpy Generator, got {type(rng).__name__}")


def laplace_vector(dim: int, scale: float, source: NoiseSource) -> np.ndarray:
    """iid Laplace vector: density ∝ exp(−‖b‖₁ / scale) (Yu et al.'s (2014) noise B₁ with scale 2).

    Parameters
    ----------
    dim : int
        The length of the vector.
    scale : float
        The Laplace scale of each coordinate.
    source : NoiseSource
        Where the uniform variates come from.

    Returns
    -------
    numpy.ndarray
        A float64 vector of length ``dim``.
    """
    return source.laplace(scale, (int(dim),))


def l2_gamma_vector(dim: int, scale: float, source: NoiseSource) -> np.ndarray:
    """Vector with density ∝ exp(−‖b‖₂ / scale).

    Its radius ‖b‖₂ ~ Gamma(dim, scale) and its direction is uniform on the sphere
    (Chaudhuri, Monteleoni & Sarwate 2011, Alg. 1; Nguyên & Hui (2017a) Alg. 1–2; Yu et al.'s (2014) B₂).

    Parameters
    ----------
    dim : int
        The length of the vector.
    scale : float
        The scale of the density, the Gamma scale of the radius.
    source : NoiseSource
        Where the uniform variates come from.

    Returns
    -------
    numpy.ndarray
        A float64 vector of length ``dim``.
    """
    dim = int(dim)
    direction = source.normal((dim,))
    direction /= np.linalg.norm(direction)
    return source.gamma(dim, scale) * direction

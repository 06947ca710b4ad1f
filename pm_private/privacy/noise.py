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

:func:`add_gaussian_noise` adds Gaussian noise of a given standard deviation to released
values: with the secure source it is OpenDP's exact discrete Gaussian on a grid 2⁴⁰ times finer
than σ (Canonne, Kamath & Steinke 2020), so no floating-point pattern of the unnoised values
leaks (Mironov 2012); a seeded source uses :meth:`NoiseSource.normal` (Box–Muller).

The samplers :func:`laplace_vector` and :func:`l2_gamma_vector` produce noise that
is added inside an objective (objective perturbation) rather than released directly; they are
inverse-CDF transforms of 53-bit uniforms, exact up to floating-point rounding, with tails
truncated beyond probability 2^-53 per variate.  A mechanism that releases such a vector
directly must say so and account for the truncation (an additive δ of about 2^-53 per
coordinate).
"""

from __future__ import annotations

import os

import numpy as np

from .._engine.docstrings import parameters_from
from .reservation import note_noise_drawn, note_seeded_draw

__all__ = [
    "NoiseSource",
    "add_gaussian_noise",
    "as_noise_source",
    "secure_generator",
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
            note_seeded_draw()
            words = self._generator.integers(0, 2**64, size=count, dtype=np.uint64, endpoint=False)
        mantissa = (words >> np.uint64(11)).astype(np.float64)  # 53 random bits
        return ((mantissa + 0.5) * _TWO_POW_MINUS_53).reshape(size)

    @parameters_from(uniform, sections=("Returns",))
    def exponential(self, size) -> np.ndarray:
        """Standard exponential variates, −log U."""
        return -np.log(self.uniform(size))

    @parameters_from(uniform, sections=("Returns",))
    def laplace(self, scale: float, size) -> np.ndarray:
        """Laplace(0, scale) variates as the difference of two exponentials.

        Parameters
        ----------
        scale : float
            The Laplace scale b (density ∝ exp(−|x|/b)).
        """
        return scale * (self.exponential(size) - self.exponential(size))

    @parameters_from(uniform, sections=("Returns",))
    def normal(self, size) -> np.ndarray:
        """Standard normal variates by the Box–Muller transform."""
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


#: The exact samplers round to a grid of 2^k with k this many binary orders below the noise scale.
GRID_BITS_BELOW_SCALE = 40


def add_gaussian_noise(values, scale: float, source: NoiseSource) -> np.ndarray:
    """``values`` plus iid N(0, σ²) noise per entry; exact discrete Gaussian with the secure source.

    Secure source: OpenDP's ``make_gaussian`` rounds the values to the grid 2^k,
    k = ⌊log₂ σ⌋ − 40, and adds exact discrete Gaussian noise of scale σ on that grid, drawn by
    OpenDP's own secure sampler (Canonne, Kamath & Steinke 2020): every grid point is reachable
    from every input and its tails are not cut.  The rounding moves each value by at most
    2^(k−1) ≤ 2⁻⁴¹·σ.  Seeded source: ``values + σ·source.normal(...)`` (Box–Muller, floating
    point, reproducible, not private).

    This is a sampler, not a mechanism: the caller calibrates σ and states the guarantee.

    Parameters
    ----------
    values : array_like
        The finite values to perturb.
    scale : float
        The noise standard deviation σ > 0.
    source : NoiseSource
        Secure (OpenDP's exact sampler) or seeded (Box–Muller).

    Returns
    -------
    numpy.ndarray
        float64 array of the shape of ``values``.

    Raises
    ------
    ValueError
        If ``scale`` is not finite and > 0 (nothing is drawn).

    Examples
    --------
    >>> from pm_private.privacy.noise import add_gaussian_noise, as_noise_source
    >>> add_gaussian_noise([0.0, 10.0], 2.0, as_noise_source(0)).shape
    (2,)
    """
    if not (np.isfinite(scale) and scale > 0):
        raise ValueError(f"the noise scale must be finite and > 0, got {scale!r}")
    values = np.asarray(values, dtype=np.float64)
    if not source.secure:
        return values + scale * source.normal(values.shape)
    import opendp.prelude as dp

    dp.enable_features("contrib")
    k = int(np.floor(np.log2(scale))) - GRID_BITS_BELOW_SCALE
    domain = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=values.size)
    sampler = dp.m.make_gaussian(domain, dp.l2_distance(T=float), scale=float(scale), k=k)
    note_noise_drawn()
    return np.asarray(sampler(values.ravel().tolist()), dtype=np.float64).reshape(values.shape)


#: Bits of operating-system entropy in the seed of :func:`secure_generator`.
SECURE_SEED_BITS = 256


def secure_generator() -> np.random.Generator:
    """A numpy ``Generator`` seeded with 256 bits from ``os.urandom``, for code that needs one.

    Samplers (PyMC's step methods, :class:`~pm_private.sampling.PSGLD`) draw from a numpy
    ``Generator``, not from a :class:`NoiseSource`.  This one is PCG64 behind a ``SeedSequence``
    whose entropy is 256 fresh bits of the operating system's secure generator; the seed is not
    stored or returned, so a run cannot be replayed from a known seed (as it can from a
    ``random_seed`` given to ``pm.sample``).  PCG64 itself
    is not a cryptographic generator: a long stream of its raw outputs would reveal its state
    (Bouillaguet, Martinez & Sauvage 2020), so its raw outputs must not be published; the
    samplers publish only draws computed from them and the data.  Its normal and uniform
    variates are floating point.

    Returns
    -------
    numpy.random.Generator
        A fresh generator; ``spawn`` gives independent children (one per chain).

    Examples
    --------
    >>> from pm_private.privacy.noise import secure_generator
    >>> secure_generator().normal(size=3).shape
    (3,)
    """
    entropy = int.from_bytes(os.urandom(SECURE_SEED_BITS // 8), "little")
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(entropy)))


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


def l2_gamma_vector(dim: int, scale: float, source: NoiseSource, size: int | None = None) -> np.ndarray:
    """Vector with density ∝ exp(−‖b‖₂ / scale).

    Its radius ‖b‖₂ ~ Gamma(dim, scale) and its direction is uniform on the sphere
    (Chaudhuri, Monteleoni & Sarwate 2011, Alg. 1; Nguyên & Hui (2017a) Alg. 1–2; Yu et al.'s (2014) B₂).

    Floating point: the direction is a normalised Box–Muller vector and the radius a sum of
    ``dim`` exponentials −log U, each cut at 37.4 (no uniform below 2⁻⁵⁴).  No exact sampler
    exists for this density: OpenDP samples discrete Laplace and Gaussian coordinates, not a
    vector with a density in the ℓ2 norm on a grid, and a radius built from exact pieces would
    still be multiplied by a float direction.

    Parameters
    ----------
    dim : int
        The length of the vector.
    scale : float
        The scale of the density, the Gamma scale of the radius.
    source : NoiseSource
        Where the uniform variates come from.
    size : int, optional
        Number of independent vectors (rows of the result); one vector when None.

    Returns
    -------
    numpy.ndarray
        A float64 vector of length ``dim``, or a (``size``, ``dim``) array.
    """
    dim = int(dim)
    shape = () if size is None else (int(size),)
    direction = source.normal((*shape, dim))
    direction /= np.linalg.norm(direction, axis=-1, keepdims=True)
    return source.gamma(dim, scale, shape)[..., None] * direction if shape else source.gamma(dim, scale) * direction

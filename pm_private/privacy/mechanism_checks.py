"""Checks and fields shared by the noise mechanisms of :mod:`pm_private.privacy.primitives`: the
query, the fields of their releases, the sensitivity and noise scale, the noise source, the Gaussian mechanism's largest ε, the grid of
OpenDP's exact samplers and the OpenDP import."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._engine.docstrings import SharedParameterDocs
from .noise import NoiseSource
from .release import constant, output, public
from .reservation import note_noise_drawn
from .validation import (
    as_float_array,
    check_epsilon,
    check_positive,
    check_release_field,
)

#: Neighbour relation of a primitive on its own: query values that differ by at most the sensitivity.
SENSITIVITY_BALL = "query values within the stated sensitivity"


@dataclass(frozen=True, kw_only=True)
class NoisyValues(SharedParameterDocs):
    """The fields a noise primitive's release adds to :class:`~pm_private.privacy.release.Release`:
    the noisy ``values`` (its output), the noise ``scale``, the stated ``sensitivity`` and the
    relation of a primitive on its own (:data:`SENSITIVITY_BALL`).  A release type lists it before
    ``Release`` among its bases, declares its own ``mechanism`` and describes its ``scale`` and
    ``sensitivity``; the entries below complete its docstring.

    Parameters
    ----------
    delta : float, default 0.0
        The δ certified (0 for pure ε-DP).
    values : numpy.ndarray
        The noisy values (the DP output), of the shape of the input.
    """

    values: np.ndarray = output()
    scale: float = public()
    sensitivity: float = public()
    neighbours: str = constant(default=SENSITIVITY_BALL)


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


def _draw_certified(measurement, values: np.ndarray, certified: float, epsilon: float) -> np.ndarray:
    """The secure draw of the Laplace and Gaussian mechanisms: RuntimeError, before any noise, if
    OpenDP certifies ``certified`` > ``epsilon``; else the draw is noted and ``measurement``'s noisy
    ``values`` are returned in their shape."""
    if certified > epsilon * (1 + 1e-12):
        raise RuntimeError(f"OpenDP certifies ε = {certified!r} > requested {epsilon!r}")
    note_noise_drawn()
    return np.asarray(measurement(values.ravel().tolist()), dtype=np.float64).reshape(values.shape)


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

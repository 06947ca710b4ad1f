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

from .exponential import exponential_mechanism
from .gaussian import (
    GAUSSIAN_MECHANISM,
    GaussianRelease,
    check_gaussian_scale_field,
    gaussian_delta,
    gaussian_mechanism,
    gaussian_noise_event,
    gaussian_noise_multiplier,
    gaussian_scale,
    symmetric_entry_weights,
)
from .laplace import LAPLACE_MECHANISM, LaplaceRelease, laplace_mechanism, laplace_noise_event
from .mechanism_checks import GAUSSIAN_MAX_EPSILON, SENSITIVITY_BALL, check_gaussian_epsilon, check_noise_scale
from .projection import project_rows, row_scale_factors

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
    "gaussian_scale",
    "symmetric_entry_weights",
]

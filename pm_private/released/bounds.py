"""The row-bound rule of the GLM releases, family-agnostic: the logistic and Poisson families
apply it to their own noise plans (:func:`pm_private.logistic.logistic_bounds`,
:func:`pm_private.poisson.poisson_bounds`).

It is the rule of :func:`pm_private.gaussian_bounds` for linear regression (as loose as the
privacy noise allows while it stays within the statistics' own sampling spread; Wang's (2018)
AdaSSP bound √d at small n or ε), applied to the noise of a released Σ y·x entry.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..privacy.validation import check_count, check_fraction, check_positive

__all__ = ["BOUNDS_PARAMETERS", "GLMBounds", "glm_bound_rule"]

#: The arguments every row-bound rule (``logistic_bounds``, ``poisson_bounds``,
#: ``survival_regression_bounds``) shares, documented once.
BOUNDS_PARAMETERS = """
Parameters
----------
n : int
    Number of private rows (public).
d : int
    Number of covariates.
epsilon : float
    ε of the release (0 < ε ≤ 700).
delta : float
    δ of the release, in (0, 1).
public_X : array_like, shape (m, d), optional
    Public covariate rows on the release's standardised scale.  They must be public: nothing
    here can tell them from the private rows.
max_projected : float, default 0.05
    Largest share of the public rows Bx may project, in (0, 1).
"""


@dataclass(frozen=True)
class GLMBounds:
    """Outcome of :func:`pm_private.logistic.logistic_bounds`,
    :func:`pm_private.poisson.poisson_bounds` or
    :func:`pm_private.survival.survival_regression_bounds`: pass ``x_bound`` to the release, with
    the public :class:`pm_private.Preprocessing` that standardises the covariates.

    Parameters
    ----------
    x_bound : float
        Bx, the public bound on a covariate row's ℓ2 norm, on the standardised scale.
    multiplier : float
        m = Bx/√d ≥ 1 before the public rows raised the bound.
    noise_sd : float
        The release's noise s.d. of one Σ y·x entry at ``x_bound`` (of one exit's covariate sum
        for the survival regression; for the Poisson release the larger of that and τ times the
        noise s.d. of an off-diagonal Sxx entry).
    sampling_sd : float
        √n·τ, the sampling s.d. of Σᵢ yᵢxᵢⱼ for a standardised covariate (τ the s.d. of a
        response; τ = 1/√(K(2J + 1)) for an exit's covariate sum), the noise's target.
    projected_share : float or None
        The share of the public rows beyond ``x_bound``; None without public rows.
    y_bound : int or None
        B, the count bound of a Poisson release (given, or chosen from public counts); None for
        the other releases.
    clipped_share : float or None
        The share of the public counts above ``y_bound``; None without public counts.
    """

    x_bound: float
    multiplier: float
    noise_sd: float
    sampling_sd: float
    projected_share: float | None
    y_bound: int | None = None
    clipped_share: float | None = None


def glm_bound_rule(
    n: int,
    d: int,
    noise_sd: Callable[[float], float],
    *,
    noise_shape: Callable[[float], float] | None = None,
    public_X=None,
    max_projected: float = 0.05,
    response_sd: float = 1.0,
) -> GLMBounds:
    """Bx = m√d, m = max(1, the largest m with noise_sd(m√d) ≤ √n·τ), then raised so that at most
    ``max_projected`` of the public rows ``public_X`` lie beyond it (the public rows take
    precedence).

    ``noise_sd(Bx)`` is the release's noise s.d. of one Σ y·x entry (from its noise plan; called
    twice); ``noise_shape``, a cheap function proportional to it in Bx (the sensitivity over the
    weight of the entry), serves the bisection through noise_sd(√d)·shape(Bx)/shape(√d) (None:
    ``noise_sd`` itself).  τ = ``response_sd``.  ε and δ are checked by ``noise_sd``.
    """
    n = check_count("n", n, minimum=2)
    d = check_count("d", d)
    max_projected = check_fraction("max_projected", max_projected, closed=False)
    response_sd = check_positive("response_sd", response_sd)
    base = math.sqrt(d)
    base_sd = float(noise_sd(base))
    if noise_shape is None:
        scaled = noise_sd
    else:
        unit = base_sd / float(noise_shape(base))

        def scaled(x_bound: float) -> float:
            return unit * float(noise_shape(x_bound))

    sampling_sd = math.sqrt(n) * response_sd
    multiplier = 1.0
    if base_sd < sampling_sd:
        # σ grows with Bx: bisection on log m between 1 and an m whose noise exceeds √n·τ
        lo, hi = 0.0, 1.0
        while scaled(base * math.exp(hi)) < sampling_sd and hi < 20.0:
            lo, hi = hi, 2.0 * hi
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if scaled(base * math.exp(mid)) <= sampling_sd else (lo, mid)
        multiplier = math.exp(lo)
    x_bound = multiplier * base
    share = None
    if public_X is not None:
        P = np.asarray(public_X, dtype=np.float64)
        if P.ndim != 2 or P.shape[1] != d or P.shape[0] < 1 or not np.isfinite(P).all():
            raise ValueError(f"public_X must be a finite table of public rows with {d} columns, got shape {P.shape}")
        norms = np.linalg.norm(P, axis=1)
        x_bound = max(x_bound, float(np.quantile(norms, 1.0 - max_projected)))
        share = float(np.mean(norms > x_bound))
    return GLMBounds(x_bound, multiplier, float(noise_sd(x_bound)), sampling_sd, share)

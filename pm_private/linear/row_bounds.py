"""Row-norm and response bounds for a Gaussian release of standardised data (:func:`gaussian_bounds`),
and the public response checks that :func:`pm_private.linear.tune_bounds` shares: as loose as
the bounds can be while the privacy noise stays within the statistics' own spread."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtri

from ..privacy.primitives import check_gaussian_epsilon, gaussian_scale
from ..privacy.validation import (
    as_float_array,
    check_bool,
    check_clip_share,
    check_count,
    check_delta,
    check_epsilon,
    check_fraction,
)
from .release import CLIP_SHARE, gaussian_release_vector

__all__ = ["GaussianBounds", "gaussian_bounds"]


def _check_public_y(public_y):
    """None, or ``public_y`` as a 1-D float array: non-empty and finite, or ValueError naming it.

    A 2-D array (a table of public rows, or responses as a column) is refused rather than
    flattened: its entries are not one response per public record.
    """
    if public_y is None:
        return None
    public_y = as_float_array(public_y, "public_y")
    if public_y.ndim != 1:
        raise ValueError(f"public_y must be a 1-D array of public responses, got shape {public_y.shape}")
    if public_y.size == 0 or not np.isfinite(public_y).all():
        raise ValueError("public_y must be a non-empty array of finite numbers")
    return public_y


def _min_omega_y(max_y_clip: float, public_y, y_scale: float) -> float:
    """Smallest ωy that clips at most ``max_y_clip`` of the aux responses (N(0, σ²): ωy ≥ Φ⁻¹(1 − s/2))
    and of the public responses ``public_y`` (By = ωy·y_scale ≥ their (1 − s) quantile of |y|)."""
    floor = float(ndtri(1.0 - max_y_clip / 2.0)) if max_y_clip > 0 else math.inf
    if public_y is not None:
        magnitudes = np.sort(np.abs(public_y))
        keep = math.ceil((1.0 - max_y_clip) * magnitudes.size) - 1  # at most ⌊s·m⌋ of m values above it
        floor = max(floor, magnitudes[max(keep, 0)] / y_scale)
    return floor


@dataclass(frozen=True)
class GaussianBounds:
    """Outcome of :func:`gaussian_bounds`: pass ``x_bound`` and ``y_bound`` to
    :func:`pm_private.release_linear_stats` with the public
    :class:`pm_private.Preprocessing` that standardises the data.

    Parameters
    ----------
    x_bound, y_bound : float
        The row-norm bound Bx and the response bound By, on the standardised scale.
    multiplier : float
        m ≥ 1: Bx = m√d and By = 2m (By larger where public responses required it).
    noise_sd : float
        The release's noise s.d. on an Sxy entry (σ/√2) at these bounds.
    sampling_sd : float
        √n: the sampling s.d. of an Sxy entry of n standardised rows, the noise's target.
    """

    x_bound: float
    y_bound: float
    multiplier: float
    noise_sd: float
    sampling_sd: float


#: Largest n and d :func:`gaussian_bounds` takes (n stays exact in a float; d keeps the
#: released vector's length within OpenDP's 32-bit sizes).
_MAX_ROWS, _MAX_FEATURES = 2**53, 10_000
# m is shrunk by this relative margin so that the noise stays at or below √n although σ is
# proportional to the sensitivity only up to the grid rounding and the bisection's tolerance.
_MARGIN = 1e-7


def gaussian_bounds(
    n: int,
    d: int,
    epsilon: float,
    delta: float,
    *,
    public_y=None,
    max_y_clip: float = 0.05,
    clip_share: float = CLIP_SHARE,
    scale_response: bool = True,
    intercept: bool = True,
) -> GaussianBounds:
    """Row-norm and response bounds of a Gaussian release of standardised data for coefficient
    inference: as loose as they can be while the privacy noise stays within the statistics' own
    sampling spread; no private data is touched and no budget is spent.

    Why loose bounds.  A release scales rows beyond Bx onto the ball (with their responses) and
    clips responses beyond By (:func:`pm_private.release_linear_stats`).  The noise-aware
    model accounts for the noise exactly, but not for the bounding: scaled rows estimate a
    weighted least-squares fit, which differs from the population's when the truth is not exactly
    linear, and clipped responses pull β towards zero.  That bias is a fixed share of the
    statistics, O(n), while their sampling spread is O(√n), so at large n it dominates the
    posterior's width unless the bounds grow: on real data sets with 5,000–16,000 rows, the
    bounds √d and 2 that suit 300 rows put the weighted fit about 1.6–2 OLS standard errors away
    from the full-data OLS coefficients.  Looser bounds cost noise, σ ∝ Bx² + By², which the
    model does see: it widens the intervals instead of biasing them.

    The rule.  The data are standardised by public constants (a :class:`pm_private.Preprocessing`
    fitted on public rows), so a row's norm is about √d and a response about 1.  With the base
    bounds √d and 2, Bx = m√d and By = 2m, where m is the largest value ≥ 1 for which the noise
    s.d. of a released Sxy entry, σ(m)/√2, is at most √n, the sampling s.d. of Σᵢ xᵢⱼyᵢ for
    standardised variables:

        m = max(1, √((√(2n)/k − c)/(d + 4))),

    since σ is proportional to the sensitivity √2(c + Bx² + By²)/√(1 − p) = √2(c + m²(d + 4))/√(1 − p),
    σ = k·(c + m²(d + 4)), with c = 1 for the intercept's constant column and 0 without it
    (the Gaussian mechanism for the release's exact vector,
    :func:`pm_private.privacy.primitives.gaussian_scale`).  At small n or ε, m = 1: the bounds of
    Wang's (2018) AdaSSP on standardised rows.  Beyond, m grows with n and ε (like (nε²)^(1/4)
    while σ is about proportional to 1/ε).  Then, as in :func:`tune_bounds`, By is raised where
    needed so that at most ``max_y_clip`` of the public responses ``public_y`` are clipped; the
    public responses take precedence, so the noise may then exceed √n (``noise_sd`` says by how
    much).  This is a rule, not an optimum: it keeps the intervals within about √2 of the width
    the sampling alone would give while scaling a share of the rows that falls as n grows.

    Parameters
    ----------
    n, d : int
        Size of the private data (public) and number of features.
    epsilon, delta : float
        The budget of the release (0 < ε ≤ 700, δ in (0, 1)).
    public_y : array_like, shape (m,), optional
        Public responses on the standardised scale; By clips at most ``max_y_clip`` of them.
        They must be public: nothing here can tell them from the private responses.
    max_y_clip : float, default 0.05
        Largest share of the public responses By may clip, in (0, 1).
    clip_share : float, default 0.05
        As in :func:`pm_private.release_linear_stats` (it sets the released vector).
    scale_response : bool, default True
        As in :func:`pm_private.release_linear_stats` (it sets the released vector).
    intercept : bool, default True
        As in :func:`pm_private.release_linear_stats` (the constant column adds 1 to Bx² + By² in
        the sensitivity).

    Returns
    -------
    GaussianBounds
        The bounds, the multiplier m and the two standard deviations it balances.

    Raises
    ------
    ValueError
        For invalid n, d, ε, δ, ``public_y``, ``max_y_clip``, ``clip_share`` or
        ``scale_response``.

    Examples
    --------
    >>> from pm_private import gaussian_bounds
    >>> gaussian_bounds(300, 10, 1.0, 1e-5).multiplier  # small n: AdaSSP's bounds
    1.0
    >>> large = gaussian_bounds(16_000, 9, 2.0, 1e-5)
    >>> round(large.multiplier, 2), round(large.x_bound, 2), round(large.y_bound, 2)
    (2.1, 6.3, 4.2)
    """
    n = check_count("n", n, minimum=2, maximum=_MAX_ROWS)
    d = check_count("d", d, maximum=_MAX_FEATURES)
    epsilon = check_gaussian_epsilon(check_epsilon(epsilon))
    delta = check_delta(delta)
    max_y_clip = check_fraction("max_y_clip", max_y_clip, closed=False)
    clip_share = check_clip_share(clip_share, epsilon)
    scale_response = check_bool("scale_response", scale_response)
    intercept = check_bool("intercept", intercept)
    public_y = _check_public_y(public_y)

    def noise_sd(x_bound: float, y_bound: float) -> float:
        size, sensitivity, _ = gaussian_release_vector(
            d, x_bound, y_bound, clip_share, scale_response=scale_response, intercept=intercept
        )
        return gaussian_scale(size, sensitivity.replace_one, epsilon, delta) / math.sqrt(2.0)

    sampling_sd = math.sqrt(n)
    # noise_sd(m√d, 2m) = k·(m²(d + 4) + c), c = 1 with the intercept's constant column, else 0
    constant = 1.0 if intercept else 0.0
    per_unit = noise_sd(math.sqrt(d), 2.0) / (d + 4.0 + constant)
    squared = (sampling_sd / per_unit - constant) / (d + 4.0)
    multiplier = max(1.0, math.sqrt(max(squared, 0.0)) * (1.0 - _MARGIN))
    x_bound, y_bound = multiplier * math.sqrt(d), 2.0 * multiplier
    if public_y is not None:
        y_bound = max(y_bound, float(_min_omega_y(max_y_clip, public_y, 1.0)))
    try:
        final_sd = noise_sd(x_bound, y_bound)
    except ValueError as error:  # only public responses far off the standardised scale get here
        raise ValueError(f"public_y gives a response bound whose noise overflows ({error})") from None
    return GaussianBounds(x_bound, y_bound, multiplier, final_sd, sampling_sd)

"""The LSP ladder of the Weibull shape and the two noisy draws of LSP + TLL (Nguyên & Hui 2017b,
Alg. 1–3): the tilted power sums, the bounds of the events' mean, the rungs of the ladder, the
exponential-mechanism draw of a level and the Laplace releases of Σdᵢ and Σtᵢ^p."""

from __future__ import annotations

import math

import numpy as np

from ...privacy.noise import NoiseSource
from ...privacy.primitives import exponential_mechanism, laplace_mechanism
from ...privacy.validation import (
    check_count,
)
from ..data import check_survival
from .release import _TAYLOR_TERMS

_BISECTION_STEPS = 64


class _TiltedSums:
    """Σ_J tᵢ^p and Σ_J tᵢ^p ln tᵢ, J = all records but the k largest times, at any p ∈ (0, γ].

    t^p = e^{−c z}·Σⱼ (c − p)ʲ zʲ / j! with z = −ln t ∈ [0, ω] and c the public centre just above
    p (spacing h = 1/ω, so (c − p)·z ≤ 1): the sums are dot products of precomputed moments.
    """

    def __init__(self, z: np.ndarray, K: int, omega: float, gamma: float):
        self.h = 1.0 / omega
        self.centres = self.h * np.arange(1, math.ceil(gamma / self.h) + 1)
        powers = z[:, None] ** np.arange(_TAYLOR_TERMS + 2)
        weights = np.exp(-np.outer(z, self.centres))
        self.total = weights.T @ powers  # (centres, terms)
        top = np.argsort(z, kind="stable")[: min(K, z.size)]  # largest times first
        per_record = weights[top, :, None] * powers[top, None, :]
        self.prefix = np.concatenate([np.zeros((1, *self.total.shape)), np.cumsum(per_record, axis=0)])
        self.coef = 1.0 / np.array([math.factorial(j) for j in range(_TAYLOR_TERMS + 1)])

    def __call__(self, p: np.ndarray, k: np.ndarray):
        idx = np.clip(np.ceil(p / self.h).astype(np.int64) - 1, 0, self.centres.size - 1)
        poly = (self.centres[idx] - p)[:, None] ** np.arange(_TAYLOR_TERMS + 1) * self.coef
        moments = self.total[idx] - self.prefix[np.minimum(k, self.prefix.shape[0] - 1), idx]
        return (poly * moments[:, :-1]).sum(axis=1), -(poly * moments[:, 1:]).sum(axis=1)


def _event_mean_bounds(log_t: np.ndarray, d: np.ndarray, K: int, omega: float):
    """Exact inf and sup, over data sets within distance k = 0…K, of m = Σ dᵢ ln tᵢ / Σ dᵢ.

    Worst cases replace j events and k − j non-events, all by events at ln t = −ω (inf; the j
    events with the largest ln t) or at 0 (sup; the j most negative), optimised over j.  m is
    taken as +inf where it is undefined (no event possible: the sup for k ≥ Σd, and k = 0 with
    no event), which makes (4) rootless there.
    """
    n = log_t.size
    x = np.sort(log_t[d == 1])
    E = x.size
    k = np.minimum(np.arange(K + 1), n)[:, None]
    j = np.arange(min(K, E) + 1)[None, :]
    feasible = (j <= k) & (k - j <= n - E)
    most_negative = np.concatenate([[0.0], np.cumsum(x)])[j]
    largest = np.concatenate([[0.0], np.cumsum(x[::-1])])[j]
    count = E + k - j
    with np.errstate(invalid="ignore", divide="ignore"):
        low = np.where(feasible, (x.sum() - largest - k * omega) / count, np.inf).min(axis=1)
        high = np.where(feasible, (x.sum() - most_negative) / count, -np.inf).max(axis=1)
    high = np.where(k[:, 0] >= E, np.inf, high)
    if E == 0:
        low[0] = np.inf
    return low, high


def _first_crossing(gap, size: int, gamma: float) -> np.ndarray:
    """inf{p ∈ (0, γ] : gap(p) ≥ 0} per rung (γ if empty), by bisection; gap changes sign once."""
    lo, hi = np.zeros(size), np.full(size, gamma)
    inside = gap(hi) >= 0
    for _ in range(_BISECTION_STEPS):
        mid = 0.5 * (lo + hi)
        up = gap(mid) >= 0
        lo, hi = np.where(up, lo, mid), np.where(up, mid, hi)
    return np.where(inside, hi, gamma)


def lsp_ladder(t_scaled, event, *, K: int = 500, gamma: float = 10.0, omega: float = 6.0):
    """Rung bounds (l⁽ᵏ⁾, u⁽ᵏ⁾), k = 0…K+1, of LSP on times already scaled into [e^−ω, 1].

    **Not a release**: the bounds are functions of the private data; only the output of
    :func:`weibull_private` may be published.  Returned arrays have length K + 2 with
    l⁽⁰⁾ = u⁽⁰⁾ = the MLE of p clipped to γ, l⁽ᴷ⁺¹⁾ = 0 and u⁽ᴷ⁺¹⁾ = γ (see the module docstring for
    the bounds and why they differ from the paper's).

    Parameters
    ----------
    t_scaled : array_like, shape (n,)
        Times scaled into [e^−ω, 1] (:func:`~pm_private.survival.scale_times`).
    event : array_like, shape (n,)
        Event indicators (1 = event, 0 = censored).
    K : int, default 500
        The number of rungs, ≥ 1.
    gamma : float, default 10.0
        The public range [0, γ] of p.
    omega : float, default 6.0
        The public ω of the time floor e^−ω.

    Returns
    -------
    lower, upper : numpy.ndarray
        The rung bounds l⁽ᵏ⁾ and u⁽ᵏ⁾, each of length K + 2.

    Raises
    ------
    ValueError
        If the times are not in [e^−ω, 1], the events are invalid, or ``K`` < 1.
    """
    K = check_count("K", K)
    t, d = check_survival(t_scaled, event)
    if (t < math.exp(-omega) * (1 - 1e-12)).any() or (t > 1).any():
        raise ValueError("scaled times must lie in [e^−ω, 1]; use scale_times(time, horizon=…, floor=exp(−ω))")
    log_t = np.log(t)
    n = t.size
    k = np.arange(K + 1)
    c_low, c_high = _event_mean_bounds(log_t, d, K, omega)
    sums = _TiltedSums(-log_t, K, omega, gamma)
    kept = np.minimum(k, n)

    def lower_gap(p):  # f_U^k(p) − g_L^k(p): strictly increasing in p
        A, B = sums(p, np.zeros_like(k))
        return np.minimum(B + k / (math.e * p), 0.0) / (A + k) - 1.0 / p - c_low

    def upper_gap(p):  # ≥ 0 iff f_inf^k(p) ≥ g_U^k(p) = 1/p + c_U; one sign change in p
        with np.errstate(invalid="ignore", over="ignore"):
            A_J, B_J = sums(p, kept)
            value = B_J - (1.0 / p + c_high) * A_J - kept * np.exp(p * c_high) / p
        return np.where(np.isfinite(c_high), value, -np.inf)

    lower = np.minimum.accumulate(_first_crossing(lower_gap, K + 1, gamma))
    upper = _first_crossing(upper_gap, K + 1, gamma)
    upper[0] = lower[0]
    upper = np.maximum.accumulate(upper)
    return np.append(lower, 0.0), np.append(upper, gamma)


def _draw_lsp(lower, upper, epsilon_shape: float, source: NoiseSource, size: int = 1):
    """Exponential mechanism over the ladder (Alg. 2): level i ∈ 1…K+1 with probability ∝
    length_i·exp(−i·ε_p/2), then a uniform point of the level.  Returns (levels, p)."""
    left = lower[:-1] - lower[1:]  # [l⁽ⁱ⁾, l⁽ⁱ⁻¹⁾)
    right = upper[1:] - upper[:-1]  # (u⁽ⁱ⁻¹⁾, u⁽ⁱ⁾]
    length = left + right
    with np.errstate(divide="ignore"):
        log_length = np.log(length)
    levels = -np.arange(1.0, length.size + 1)
    index = exponential_mechanism(
        levels, epsilon=epsilon_shape, sensitivity=1.0, source=source, log_base=log_length, size=size
    )
    v = source.uniform(size) * length[index]
    p = np.where(v < left[index], lower[index + 1] + v, upper[index] + (v - left[index]))
    return index + 1, p


def _tll(t, d, p: float, epsilon_scale: float, *, omega: float, gamma: float, source: NoiseSource):
    """TLL (Alg. 3): Σdᵢ and Σtᵢ^p with ε_scale/2 each (sensitivity 1), then
    λ = min((τ̃/δ̃)^{1/p}, γ) after clipping δ̃ to [1, n] and τ̃ to [n·e^{−ωp}, n].
    Returns (λ on the scaled times, the two LaplaceReleases)."""
    n = t.size
    events = laplace_mechanism([d.sum()], sensitivity=1.0, epsilon=epsilon_scale / 2, source=source)
    powers = laplace_mechanism([np.sum(t**p)], sensitivity=1.0, epsilon=epsilon_scale / 2, source=source)
    delta = np.clip(events.values[0], 1.0, n)
    tau = np.clip(powers.values[0], n * math.exp(-omega * p), n)
    return min(math.exp(min(math.log(tau / delta) / p, math.log(gamma))), gamma), events, powers

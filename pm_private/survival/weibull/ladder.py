"""The LSP ladder of the Weibull shape and the two noisy draws of LSP + TLL (Nguyên & Hui 2017b,
Alg. 1–3): the tilted power sums, the bounds of the events' mean, the rungs of the ladder, the
exponential-mechanism draw of a level and the Laplace releases of Σdᵢ and Σtᵢ^p."""

from __future__ import annotations

import math

import numpy as np

from ...privacy.noise import NoiseSource
from ...privacy.primitives import exponential_mechanism, laplace_mechanism
from ...privacy.relations import ADD_REMOVE, REPLACE_ONE, check_relation
from ...privacy.validation import (
    check_count,
)
from ..data import check_survival
from .release import _CHUNK, _TAYLOR_TERMS

_BISECTION_STEPS = 64


class _TiltedSums:
    """Σ_J tᵢ^p and Σ_J tᵢ^p ln tᵢ, J = all records but the k largest times, at any p ∈ (0, γ].

    t^p = e^{−c z}·Σⱼ (c − p)ʲ zʲ / j! with z = −ln t ∈ [0, ω] and c the public centre just above
    p (spacing h = 1/ω, so (c − p)·z ≤ 1): the sums are dot products of precomputed moments.  The
    moments of J are the records beyond the K largest plus a suffix sum over the K largest, sums of
    non-negative terms only: subtracting the removed records from a total would cancel
    catastrophically where the records left weigh e^{−pz} ~ 10⁻¹⁷ of those removed.
    """

    def __init__(self, z: np.ndarray, K: int, omega: float, gamma: float):
        self.h = 1.0 / omega
        self.centres = self.h * np.arange(1, math.ceil(gamma / self.h) + 1)
        ordered = np.sort(z, kind="stable")  # largest times first
        self.top, beyond = ordered[: min(K, z.size)], ordered[min(K, z.size) :]
        self.rest = sum(
            (self._moments(beyond[i : i + _CHUNK]) for i in range(_CHUNK, beyond.size, _CHUNK)),
            start=self._moments(beyond[:_CHUNK]),
        )  # (centres, terms), in chunks of records: memory independent of n
        weights = np.exp(-np.outer(self.top, self.centres))
        per_record = weights[:, :, None] * (self.top[:, None] ** np.arange(_TAYLOR_TERMS + 2))[:, None, :]
        suffix = np.cumsum(per_record[::-1], axis=0)[::-1]  # suffix[b] = Σ_{i ≥ b} over the K largest
        self.suffix = np.concatenate([suffix, np.zeros((1, *self.rest.shape))])
        self.coef = 1.0 / np.array([math.factorial(j) for j in range(_TAYLOR_TERMS + 1)])

    def _moments(self, z: np.ndarray) -> np.ndarray:
        """Σ e^{−c zᵢ} zᵢʲ over the records z, per centre c and power j."""
        return np.exp(-np.outer(z, self.centres)).T @ (z[:, None] ** np.arange(_TAYLOR_TERMS + 2))

    def __call__(self, p: np.ndarray, k: np.ndarray):
        idx = np.clip(np.ceil(p / self.h).astype(np.int64) - 1, 0, self.centres.size - 1)
        poly = (self.centres[idx] - p)[:, None] ** np.arange(_TAYLOR_TERMS + 1) * self.coef
        moments = self.rest[idx] + self.suffix[np.minimum(k, self.top.size), idx]
        return (poly * moments[:, :-1]).sum(axis=1), -(poly * moments[:, 1:]).sum(axis=1)


def _event_mean_bounds(log_t: np.ndarray, d: np.ndarray, K: int, omega: float, relation: str = REPLACE_ONE):
    """Exact inf and sup, over data sets within distance k = 0…K, of m = Σ dᵢ ln tᵢ / Σ dᵢ.

    Replace-one: the worst cases replace j events and k − j non-events, all by events at
    ln t = −ω (inf; the j events with the largest ln t) or at 0 (sup; the j most negative).
    Add/remove: they remove those j events and add k − j events at −ω or 0 (adding or removing a
    non-event leaves m as it is).  Optimised over j.  m is taken as +inf where it is undefined (no
    event possible: the sup for k ≥ Σd, and k = 0 with no event), which makes (4) rootless there.
    """
    n = log_t.size
    x = np.sort(log_t[d == 1])
    E = x.size
    add_remove = relation == ADD_REMOVE
    k = (np.arange(K + 1) if add_remove else np.minimum(np.arange(K + 1), n))[:, None]
    j = np.arange(min(K, E) + 1)[None, :]
    count = E + k - 2 * j if add_remove else E + k - j
    feasible = (j <= k) & ((count > 0) if add_remove else (k - j <= n - E))
    most_negative = np.concatenate([[0.0], np.cumsum(x)])[j]
    largest = np.concatenate([[0.0], np.cumsum(x[::-1])])[j]
    floor_events = k - j if add_remove else k
    with np.errstate(invalid="ignore", divide="ignore"):
        low = np.where(feasible, (x.sum() - largest - floor_events * omega) / count, np.inf).min(axis=1)
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


def _removals_and_additions(sums: _TiltedSums, p, c_high, k, n: int):
    """min over b ≤ k of Σ_{all but the b largest times} tᵢ^p(ln tᵢ − c) − (k − b)·e^{p·c_U}/p,
    c = 1/p + c_U: the add/remove test of f_inf^k(p) ≥ c (remove b records, add k − b at the
    minimiser of t^p(ln t − c)), a data set of no record excluded."""
    c = 1.0 / p + c_high
    A, B = sums(p, np.full_like(k, sums.top.size))  # the records beyond the K largest times
    terms = np.exp(-p[:, None] * sums.top) * (-sums.top - c[:, None])  # the largest times' terms
    kept = np.concatenate([np.cumsum(terms[:, ::-1], axis=1)[:, ::-1], np.zeros((p.size, 1))], axis=1)
    b = np.arange(sums.top.size + 1)
    value = (B - c * A)[:, None] + kept - (k[:, None] - b) * (np.exp(p * c_high) / p)[:, None]
    allowed = (b <= k[:, None]) & ~((b == n) & (k[:, None] == n))
    return np.where(allowed, value, np.inf).min(axis=1)


def lsp_ladder(t_scaled, event, *, K: int = 500, gamma: float = 10.0, omega: float = 6.0, relation: str = REPLACE_ONE):
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
    relation : {"replace-one", "add-remove"}, default "replace-one"
        The neighbour relation whose distance k the rungs bound (add/remove: data of no record
        are taken).

    Returns
    -------
    lower, upper : numpy.ndarray
        The rung bounds l⁽ᵏ⁾ and u⁽ᵏ⁾, each of length K + 2.

    Raises
    ------
    ValueError
        If the times are not in [e^−ω, 1], the events are invalid, ``K`` < 1 or ``relation`` is
        not a relation.
    """
    K = check_count("K", K)
    add_remove = check_relation(relation) == ADD_REMOVE
    t, d = check_survival(t_scaled, event, allow_empty=add_remove)
    if (t < math.exp(-omega) * (1 - 1e-12)).any() or (t > 1).any():
        raise ValueError("scaled times must lie in [e^−ω, 1]; use scale_times(time, horizon=…, floor=exp(−ω))")
    log_t = np.log(t)
    n = t.size
    k = np.arange(K + 1)
    c_low, c_high = _event_mean_bounds(log_t, d, K, omega, relation)
    sums = _TiltedSums(-log_t, K, omega, gamma)
    kept = np.minimum(k, n)

    def lower_gap(p):  # f_U^k(p) − g_L^k(p): strictly increasing in p
        A, B = sums(p, np.zeros_like(k))
        with np.errstate(invalid="ignore"):  # 0/0 for k = 0 and no record: no root
            return np.minimum(B + k / (math.e * p), 0.0) / (A + k) - 1.0 / p - c_low

    def upper_gap(p):  # ≥ 0 iff f_inf^k(p) ≥ g_U^k(p) = 1/p + c_U; one sign change in p
        with np.errstate(invalid="ignore", over="ignore"):
            if add_remove:
                value = _removals_and_additions(sums, p, c_high, k, n)
            else:
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


def _tll(t, d, p: float, epsilon_scale: float, *, omega: float, gamma: float, source: NoiseSource, n: int | None):
    """TLL (Alg. 3): Σdᵢ and Σtᵢ^p with ε_scale/2 each (sensitivity 1 under either relation), then
    λ = min((τ̃/δ̃)^{1/p}, γ) after clipping δ̃ to [1, n] and τ̃ to [n·e^{−ωp}, n], their public
    ranges; with ``n=None`` (n private, add/remove) δ̃ to [1, ∞) and τ̃ to [δ̃·e^{−ωp}, ∞)
    (τ ≥ δ·e^{−ωp} always), which reads only the released values.  Returns (λ on the scaled
    times, the two LaplaceReleases)."""
    events = laplace_mechanism([d.sum()], sensitivity=1.0, epsilon=epsilon_scale / 2, source=source)
    powers = laplace_mechanism([np.sum(t**p)], sensitivity=1.0, epsilon=epsilon_scale / 2, source=source)
    most = math.inf if n is None else n  # the public range's top: none where n is private
    delta = np.clip(events.values[0], 1.0, most)
    tau = np.clip(powers.values[0], (delta if n is None else n) * math.exp(-omega * p), most)
    return min(math.exp(min(math.log(tau / delta) / p, math.log(gamma))), gamma), events, powers

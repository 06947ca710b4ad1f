"""Private Weibull parameters: LSP for the shape, TLL for the scale, and two baselines
(Nguyên & Hui 2017b, §IV–§VI).

Setting.  Records (tᵢ, dᵢ); times are divided by the public ``horizon`` and raised to the public
floor e^(−ω) (:func:`pm_private.survival.data.scale_times`), so tᵢ ∈ [e^(−ω), 1] and
ln tᵢ ∈ [−ω, 0].  Neighbours differ by **replacing one record** (n is public).  Public inputs:
horizon, ω, γ (outputs and the MLE are clipped to [0, γ] for p and for λ in horizon units), K.
λ is returned in the units of t (λ_scaled·horizon).

LSP (ε/2).  f(p, D) = Σ tᵢ^p ln tᵢ / Σ tᵢ^p and g(p, D) = 1/p + m(D), m = Σ dᵢ ln tᵢ / Σ dᵢ,
so (4) reads f = g; f is non-decreasing in p, g decreasing.  Rung k is S⁽ᵏ⁾ = [l⁽ᵏ⁾, u⁽ᵏ⁾] with

    l⁽ᵏ⁾ = inf{p ∈ (0, γ] : f_U^k(p) ≥ g_L^k(p)},   u⁽ᵏ⁾ = inf{p ∈ (0, γ] : f_inf^k(p) ≥ g_U^k(p)}

(γ when the set is empty), l⁽ᴷ⁺¹⁾ = 0, u⁽ᴷ⁺¹⁾ = γ; the level i = [l⁽ⁱ⁾, l⁽ⁱ⁻¹⁾) ∪ (u⁽ⁱ⁻¹⁾, u⁽ⁱ⁾]
has weight length·exp(−iε/4) (Alg. 2, exponential mechanism with ε/2 and utility sensitivity 1).

Corrections to the transcribed bounds (paper §IV-A1), decided by property tests:

* The proof (Thm. 1, Lemma 3) needs the ladder constraint S⁽ᵏ⁾(D) ⊂ S⁽ᵏ⁺¹⁾(D′).  It holds for the
  first-crossing definitions above whenever each bound is valid over all data sets within
  distance k and ordered pointwise in p: f_U^k(D) ≤ f_U^{k+1}(D′), g_L^{k+1}(D′) ≤ g_L^k(D), etc.
  (the set where a larger function is ≥ 0 starts earlier).  It also gives S⁽⁰⁾(D″) = {MLE(D″)}
  ⊂ S⁽ᵏ⁾(D) for every D″ within distance k, so each rung contains those MLEs.
* f_U^k = (Σ tᵢ^p ln tᵢ + k/(e·p)) / (Σ tᵢ^p + k) is valid but breaks the ordering where its
  numerator is positive (the larger denominator of D′ then *lowers* it).  Since f ≤ 0 always, the
  numerator is clamped at 0: f_U^k = min(Σ tᵢ^p ln tᵢ + k/(e·p), 0)/(Σ tᵢ^p + k).  With the clamp
  f_U^k − g_L^k is strictly increasing (Cauchy–Schwarz), so l⁽ᵏ⁾ is its unique root.
* f_L^k = (Σ tᵢ^p ln tᵢ − k/(e·p)) / Σ_{i=1}^{n−k} (t*ᵢ)^p (t* ascending: the k *largest* times
  are dropped, as needed for a lower bound of a negative ratio) is valid and ordered, but it
  *decreases* in p once the dropped weights dominate, so f_L^k − g_U^k can cross zero several
  times and Newton's root is not the first crossing.  pm_private uses the exact infimum
  f_inf^k(p) = inf over D′ within distance k of f(p, D′), which is non-decreasing in p (an infimum
  of non-decreasing functions) and at least as tight.  With J = all records but the k largest
  times and c = g_U^k(p), f_inf^k(p) ≥ c ⟺ Σ_J tᵢ^p(ln tᵢ − c) + k·min_t t^p(ln t − c) ≥ 0, and at
  c = 1/p + c_U the minimum is −e^{p·c_U}/p, so the test is closed-form.
* g_L^k, g_U^k are replaced by the exact infimum / supremum of m over data sets within distance
  k (replace j events — the largest resp. most negative ln t — and k − j non-events by events at
  −ω resp. 0; optimise over j).  When k ≥ Σdᵢ a neighbour can have no event, m is undefined, (4)
  has no root and u⁽ᵏ⁾ = γ: few events degrade to the floor rung, they do not crash.  A data set
  with no event, or no root of (4) in (0, γ], has l⁽⁰⁾ = u⁽⁰⁾ = γ.
* The k/(e·p) term is right: min over t ∈ (0, 1] of t^p ln t is −1/(e·p).

Computation.  Σ_J tᵢ^p and Σ_J tᵢ^p ln tᵢ are evaluated for all K+1 rungs at once from Taylor
moments Σ e^{−c zᵢ} zᵢʲ (zᵢ = −ln tᵢ) at the public centres c = h, 2h, …, γ, h = 1/ω, whose
terms are all positive (relative error < 1e-15), and from prefix moments of the K largest times;
each bound is then found by bisection on all rungs together.  The roots are computed in floating
point; the ladder constraint holds to rounding (tested to 1e-9).

TLL (ε/2).  Σdᵢ and Σ tᵢ^p (p the private shape) have sensitivity 1 each under replace-one
(tᵢ^p ∈ (0, 1]); each gets ε/4, i.e. Laplace(4/ε), as in Alg. 3.  Post-processing of the two
released numbers (free under DP): δ̃ ← clip(δ̃, 1, n), τ̃ ← clip(τ̃, n·e^{−ωp}, n) (the public
range of the sums), λ = min((τ̃/δ̃)^{1/p}, γ).

Randomness.  With ``rng=None`` all draws come from the OS CSPRNG (:class:`NoiseSource`) and the
Laplace noise is OpenDP's exact discrete Laplace.  The exponential mechanism picks the level i
with :func:`pm_private.privacy.primitives.exponential_mechanism` (scores −i, sensitivity 1,
base measure the level's length; OpenDP's exact Gumbel-max sampler), then a uniform point of
the level.  What remains floating point: the rung bounds (bisection), the log-lengths of the
levels, and the point within the level (a 53-bit uniform times the level's length): the proof
is for exact real arithmetic.  A seeded ``rng`` makes the result ``private=False``.

Drawing many times.  The ladder depends on the data, K, γ and ω, not on ε.  :class:`WeibullLSP`
builds it once and each :meth:`WeibullLSP.release` is one ε-DP release, validated and charged
like :func:`weibull_private` (which is ``WeibullLSP(...).release(...)``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...privacy.accountant import PrivacyAccountant
from ...privacy.noise import NoiseSource, as_noise_source
from ...privacy.primitives import exponential_mechanism, laplace_mechanism
from ...privacy.release import Release, output, public, release_guard
from ...privacy.validation import (
    check_bound,
    check_count,
    check_epsilon,
    check_memory,
    check_positive,
    check_release_consistent,
    check_release_field,
    check_release_guarantee,
)
from ...released.noise_plan import NoisePlan, exponential_query, laplace_query, laplace_sd
from ..data import censor_at_horizon, check_survival, scale_times
from .fit import mle_rows

__all__ = [
    "LSP_TLL",
    "LAPLACE_MLE",
    "SAMPLE_AGGREGATE",
    "WeibullLSP",
    "WeibullRelease",
    "check_weibull_arguments",
    "ladder_bytes",
    "lsp_ladder",
    "weibull_noise_plan",
    "weibull_private",
    "weibull_laplace",
    "weibull_sample_aggregate",
]

# Taylor terms: with s·z ≤ hω = 1 the first omitted term is < 1/18! ≈ 1.6e-16 of the sum.
_TAYLOR_TERMS = 18
_BISECTION_STEPS = 64


#: Mechanism names of :func:`weibull_private` / :class:`WeibullLSP`, :func:`weibull_laplace` and
#: :func:`weibull_sample_aggregate` (results and ledger entries).
LSP_TLL = "Weibull LSP + TLL (Nguyên & Hui 2017b, Alg. 1–3)"
LAPLACE_MLE = "Weibull Laplace on the clipped MLE (Nguyên & Hui 2017b, §VI-A)"
SAMPLE_AGGREGATE = "Weibull sample-and-aggregate (Smith 2008; Nguyên & Hui 2017b, §VI-A)"


@dataclass(frozen=True, kw_only=True)
class WeibullRelease(Release, kind="weibull"):
    """Private Weibull parameters and what they assumed; no record is kept.

    ``shape`` is p, ``scale`` is λ in the units of t (``scale / horizon`` is λ on the [e^−ω, 1]
    scale the mechanism works on).  ``noise_scales`` are the Laplace scales used; ``subsets``
    is the number m of subsets of sample-and-aggregate (1 otherwise).  ``private`` is False
    when a seeded generator drew the noise (for tests and simulations only).

    Parameters
    ----------
    epsilon : float
        The total ε of the release.
    delta : float, default 0.0
        0: the release is pure ε-DP.
    neighbours : str
        The neighbour relation of the guarantee (a constant of the mechanism).
    mechanism : str
        The mechanism's name, as written to the accountant's ledger (a constant of the mechanism).
    private : bool
        True when the noise came from secure OS randomness (``rng=None``); False for a seeded
        ``rng``, whose output carries no privacy guarantee.
    shape : float
        The private shape p.
    scale : float
        The private scale λ, in the units of t.
    epsilon_shape : float
        The ε spent on the shape.
    epsilon_scale : float
        The ε spent on the scale.
    horizon : float
        The public horizon.
    omega : float
        The public ω (floor e^−ω of the scaled times).
    gamma : float
        The public range [0, γ] of p and of λ/horizon.
    n : int
        The number of records (public).
    noise_scales : tuple of float
        The Laplace scales used.
    subsets : int, default 1
        The number m of subsets of sample-and-aggregate.
    """

    shape: float = output()
    scale: float = output()
    epsilon_shape: float = public()
    epsilon_scale: float = public()
    horizon: float = public()
    omega: float = public()
    gamma: float = public()
    n: int = public()
    noise_scales: tuple[float, ...] = public()
    subsets: int = public(default=1)

    def __post_init__(self):
        check_release_guarantee(self)
        _check_release(self)


def _check_release(release: WeibullRelease) -> None:
    """The public fields of a release checked by the checks the Weibull mechanisms apply to their
    arguments (:func:`check_weibull_arguments`), and the ε split, the number of subsets and the
    Laplace scales against what the mechanism named in ``mechanism`` (one of the three Weibull
    mechanisms) derives from them; ValueError naming the field."""
    horizon = check_release_field("horizon", check_bound, "horizon", release.horizon)
    gamma = check_release_field("gamma", check_bound, "gamma", release.gamma)
    omega = check_release_field("omega", check_bound, "omega", release.omega)
    check_release_field("omega", _check_range, 1.0, 1.0, omega)
    check_release_field("gamma", _check_range, horizon, gamma, omega, release.epsilon)
    n = check_release_field("n", check_count, "n", release.n)
    subsets = check_release_field("subsets", check_count, "subsets", release.subsets, 1, n)
    parts = []
    for name in ("epsilon_shape", "epsilon_scale"):
        parts.append(check_release_field(name, check_epsilon, getattr(release, name)))
    check_release_consistent("epsilon_scale", parts[0] + parts[1], release.epsilon, "'epsilon' − 'epsilon_shape'")
    scales = release.noise_scales
    if len(scales) != 2:
        raise ValueError(f"field 'noise_scales' must hold 2 Laplace scales, got {len(scales)}")
    for scale in scales:
        check_release_field("noise_scales", check_positive, "noise_scales", scale)
    if release.mechanism == LSP_TLL:  # TLL: Laplace(1/(ε_scale/2)) on Σdᵢ and on Σtᵢ^p
        expected = (2.0 / parts[1],) * 2
    elif release.mechanism in (LAPLACE_MLE, SAMPLE_AGGREGATE):  # Laplace(γ/(m·ε/2)) on p and λ
        expected = (gamma / subsets / parts[0], gamma / subsets / parts[1])
    else:
        raise ValueError(
            f"field 'mechanism' must name one of the Weibull mechanisms {[LSP_TLL, LAPLACE_MLE, SAMPLE_AGGREGATE]}, "
            f"got {release.mechanism!r:.60}"
        )
    if release.mechanism != SAMPLE_AGGREGATE and subsets != 1:
        raise ValueError(f"field 'subsets' must be 1 for {release.mechanism}, got {subsets!r}")
    for scale, value in zip(scales, expected, strict=True):
        # the secure Laplace scale covers the noise grid: (Δ + 2^k)/ε, 2^k ≤ 2⁻⁴⁰·Δ/ε
        check_release_consistent(
            "noise_scales",
            scale,
            value,
            "the Laplace scale of 'epsilon_shape', 'epsilon_scale', 'gamma' and 'subsets'",
            rel_tol=1e-6,
        )


def _check_range(horizon: float, gamma: float, omega: float, epsilon: float | None = None) -> None:
    """Refuse public ω, γ (and ε) whose floor e^−ω, range γ·horizon or noise scale is not a usable float."""
    if not 0.0 < math.exp(-omega) < 1.0:
        raise ValueError(f"omega = {omega!r} is out of range: the floor e^−ω must lie strictly between 0 and 1")
    scale = 16.0 * gamma * max(horizon, 1.0) / (1.0 if epsilon is None else epsilon)
    if not (math.isfinite(scale) and math.isfinite(1.0 / gamma)):
        raise ValueError("gamma, horizon and epsilon give a range or noise scale that overflows")


def ladder_bytes(n: int, K: int, gamma: float, omega: float) -> float:
    """Memory (bytes) the LSP ladder of n records with K rungs needs: a function of public sizes only.

    The tilted sums hold n × ⌈γω⌉ weights and min(K, n) × ⌈γω⌉ prefix moments of
    ``_TAYLOR_TERMS + 2`` terms; the event-mean bounds a (K + 1) × (min(K, n) + 1) table (six
    arrays); each bisection step (K + 1) × (``_TAYLOR_TERMS`` + 1) temporaries.
    """
    centres = math.ceil(gamma * omega)
    kept = min(K, n)
    terms = _TAYLOR_TERMS + 2
    return 8.0 * (
        n * (centres + terms) + 2.0 * kept * centres * terms + 6.0 * (K + 1) * (kept + 1) + 4.0 * (K + 1) * terms
    )


def check_weibull_arguments(*, epsilon=None, horizon, gamma, omega, K=None, n: int = 1):
    """The public arguments of the Weibull mechanisms, checked before any work or charge.

    The command line calls it before reading any data (n = 1 gives a lower bound on the memory
    of the ladder); the mechanisms call it again with the public n.

    Parameters
    ----------
    epsilon : float, optional
        ε of the release (None: not checked).
    horizon, gamma, omega : float
        The public horizon, range γ and floor exponent ω (each in [10⁻⁵⁰, 10⁵⁰]).
    K : int, optional
        Rungs of the LSP ladder (None: no ladder).
    n : int, default 1
        The number of records.

    Returns
    -------
    tuple
        The checked (epsilon, horizon, gamma, omega, K).

    Raises
    ------
    ValueError
        Naming the argument: out of range, a floor e^−ω or noise scale that is not a usable
        float, or a ladder that needs more than half of this machine's memory.
    """
    epsilon = None if epsilon is None else check_epsilon(epsilon)
    horizon = check_bound("horizon", horizon)
    gamma = check_bound("gamma", gamma)
    omega = check_bound("omega", omega)
    _check_range(horizon, gamma, omega, epsilon)
    if K is not None:
        K = check_count("K", K)
        check_memory("K, gamma and omega", ladder_bytes(n, K, gamma, omega))
    return epsilon, horizon, gamma, omega, K


def _prepare(time, event, epsilon, horizon, gamma, omega):
    """Checked ε, γ, ω and the scaled times in [e^−ω, 1] with int events (raises before spending)."""
    epsilon, horizon, gamma, omega, _ = check_weibull_arguments(
        epsilon=epsilon, horizon=horizon, gamma=gamma, omega=omega
    )
    t, d = censor_at_horizon(time, event, horizon)  # a refusal of later times would read the private maximum
    return epsilon, gamma, omega, scale_times(t, horizon=horizon, floor=math.exp(-omega)), d


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


#: The queries of :func:`weibull_noise_plan`.
_LSP = "LSP level of the shape p"
_TLL_EVENTS = "TLL Σdᵢ"
_TLL_POWERS = "TLL Σtᵢ^p"


def weibull_noise_plan(*, epsilon: float) -> NoisePlan:
    """The budget split and noise of :func:`weibull_private` (LSP + TLL), before any data is read.

    LSP draws the shape's ladder level by the exponential mechanism with ε/2 (utility sensitivity
    1); TLL releases Σdᵢ and Σtᵢ^p (each of sensitivity 1, tᵢ ∈ [e^−ω, 1]) with Laplace noise at
    ε/4 each, scale 4/ε.  Neither depends on n, the horizon, K, γ or ω.  :class:`WeibullLSP` takes
    its ε split from this plan.  Public: it depends only on ε.

    Parameters
    ----------
    epsilon : float
        The total ε of one draw.

    Returns
    -------
    NoisePlan
        The three queries (``"LSP level of the shape p"``, ``"TLL Σdᵢ"``, ``"TLL Σtᵢ^p"``) and the
        noise s.d. √2·4/ε of the two TLL sums.

    Raises
    ------
    ValueError
        If ``epsilon`` is invalid.

    Examples
    --------
    >>> from pm_private.survival.weibull.mechanisms import weibull_noise_plan
    >>> plan = weibull_noise_plan(epsilon=1.0)
    >>> dict(plan.epsilon_parts)
    {'LSP level of the shape p': 0.5, 'TLL Σdᵢ': 0.25, 'TLL Σtᵢ^p': 0.25}
    >>> dict(plan.noise_scale)
    {'TLL Σdᵢ': 4.0, 'TLL Σtᵢ^p': 4.0}
    """
    epsilon = check_epsilon(epsilon)
    shape, scale = epsilon / 2, epsilon / 2
    queries = (
        exponential_query(_LSP, 1.0, shape),
        laplace_query(_TLL_EVENTS, 1, 1.0, scale / 2),
        laplace_query(_TLL_POWERS, 1, 1.0, scale / 2),
    )
    return NoisePlan(
        mechanism="exponential + laplace",
        epsilon=epsilon,
        queries=queries,
        noise_sd={q.name: laplace_sd(q.scale) for q in queries[1:]},
        title=f"LSP (ε/2 = {shape:g}) + TLL (ε/2 = {scale:g}), pure ε-DP, replace-one neighbours",
    )


class WeibullLSP:
    """LSP + TLL (Nguyên & Hui 2017b, Alg. 1–3) prepared on one private data set: the ladder is
    built once, and every :meth:`release` is a fresh ε-DP draw of (p, λ), validated and charged.

    **Not a release**: the object holds the private records and the ladder (a function of them),
    so it must stay with the data holder; only what :meth:`release` returns may be published.
    Its repr shows public inputs only, and it refuses to be pickled.

    Parameters
    ----------
    time, event : array-like, shape (n,)
        Private times (≥ 0; beyond ``horizon`` censored there) and event indicators (1 = event,
        0 = censored).
    horizon : float
        Public horizon; times are divided by it and raised to e^−ω.
    K : int, default 500
        Number of ladder rungs, ≥ 1.
    gamma, omega : float
        Public range [0, γ] of p and of λ/horizon, and floor e^−ω of the scaled times.

    Raises
    ------
    ValueError
        For invalid public parameters or data (times not finite or negative; events other
        than 0 or 1).

    Examples
    --------
    >>> lsp = WeibullLSP(time, event, horizon=5479.0)                       # doctest: +SKIP
    >>> releases = [lsp.release(epsilon=0.2, accountant=acct) for _ in range(5)]  # doctest: +SKIP
    """

    def __init__(self, time, event, *, horizon: float, K: int = 500, gamma: float = 10.0, omega: float = 6.0):
        _, self.horizon, self.gamma, self.omega, self.K = check_weibull_arguments(
            horizon=horizon, gamma=gamma, omega=omega, K=K
        )
        t, d = censor_at_horizon(time, event, self.horizon)
        check_weibull_arguments(horizon=horizon, gamma=gamma, omega=omega, K=K, n=t.size)
        self._t = scale_times(t, horizon=self.horizon, floor=math.exp(-self.omega))
        self._d = d
        self.n = int(self._t.size)
        self._ladder = lsp_ladder(self._t, self._d, K=self.K, gamma=self.gamma, omega=self.omega)

    def release(self, *, epsilon: float, accountant: PrivacyAccountant | None = None, rng=None) -> WeibullRelease:
        """One ε-DP draw of (p, λ): LSP with ε/2, TLL with ε/2 (see :func:`weibull_private`).

        Parameters
        ----------
        epsilon : float
            ε > 0 of this draw; draws compose (k draws cost k·ε).
        accountant : PrivacyAccountant, optional
            Charged ε before any noise is drawn; refuses with BudgetExceededError if over budget.
        rng : None, int, numpy.random.Generator or NoiseSource
            None for the secure OS generator (private); a seed only for tests and simulations.

        Returns
        -------
        WeibullRelease
            The private shape p and scale λ and what they assumed.

        Raises
        ------
        ValueError
            Before anything is spent: invalid ε, or one whose noise scale overflows.
        BudgetExceededError
            If ``accountant`` cannot afford ε (nothing is released).
        """
        epsilon = check_epsilon(epsilon)
        _check_range(self.horizon, self.gamma, self.omega, epsilon)
        plan = weibull_noise_plan(epsilon=epsilon)
        epsilon_shape = plan.epsilon_parts[_LSP]
        epsilon_scale = plan.epsilon_parts[_TLL_EVENTS] + plan.epsilon_parts[_TLL_POWERS]  # _tll halves it
        source = as_noise_source(rng)
        with release_guard(accountant, LSP_TLL, epsilon, label=f"LSP ε/2 + TLL ε/2, n={self.n}, K={self.K}"):
            lower, upper = self._ladder
            p = float(_draw_lsp(lower, upper, epsilon_shape, source)[1][0])
            lam, events, powers = _tll(
                self._t, self._d, p, epsilon_scale, omega=self.omega, gamma=self.gamma, source=source
            )
            return WeibullRelease(
                shape=p,
                scale=lam * self.horizon,
                epsilon=epsilon,
                epsilon_shape=epsilon_shape,
                epsilon_scale=events.epsilon + powers.epsilon,
                mechanism=LSP_TLL,
                horizon=self.horizon,
                omega=self.omega,
                gamma=self.gamma,
                n=self.n,
                noise_scales=(events.scale, powers.scale),
                private=source.secure,
            )

    def __repr__(self) -> str:
        return f"WeibullLSP(n={self.n}, horizon={self.horizon:g}, K={self.K}, γ={self.gamma:g}, ω={self.omega:g})"

    def __reduce__(self):
        raise TypeError("WeibullLSP holds private records and cannot be pickled; publish its releases only")


def weibull_private(
    time,
    event,
    *,
    epsilon: float,
    horizon: float,
    K: int = 500,
    gamma: float = 10.0,
    omega: float = 6.0,
    accountant: PrivacyAccountant | None = None,
    rng=None,
) -> WeibullRelease:
    """ε-DP Weibull (p, λ) by LSP (ε/2) and TLL (ε/2) (Nguyên & Hui 2017b, Alg. 1–3).

    The shape p is drawn by the exponential mechanism over a ladder of intervals around its MLE
    (LSP), then λ from two Laplace releases of Σdᵢ and Σtᵢ^p (TLL).  For many draws on the same
    data, build :class:`WeibullLSP` once.

    Degenerate data degrade rather than fail: with few events the upper rungs reach γ; with no
    event or no root of (4) below γ the ladder collapses to [·, γ] and p is drawn from it; noisy
    sums are clipped to their public ranges before λ = (τ̃/δ̃)^{1/p}, and λ/horizon to ≤ γ.

    Parameters
    ----------
    time : array_like, shape (n,)
        Private follow-up times, ≥ 0; times beyond ``horizon`` are censored there.
    event : array_like, shape (n,)
        Private event indicators (1 = event, 0 = censored).
    epsilon : float
        Total ε > 0.
    horizon : float
        Public horizon; times are divided by it, and later times are censored at it
        (administrative censoring: a refusal would tell whether anyone's time exceeds it).
    K : int, default 500
        Number of ladder rungs, ≥ 1.
    gamma : float, default 10.0
        Public range [0, γ] of p and of λ/horizon.
    omega : float, default 6.0
        Public floor e^−ω of the scaled times.
    accountant : PrivacyAccountant, optional
        Charged ε before any noise is drawn; refuses with BudgetExceededError if over budget.
    rng : None, int or numpy.random.Generator
        None for the secure OS generator (private); a seed only for tests (``private=False``).

    Returns
    -------
    WeibullRelease
        The private shape p and scale λ (in the units of ``time``) and what they assumed.

    Raises
    ------
    ValueError
        Before anything is spent: invalid ε, horizon, γ, ω, K or data (times not finite,
        negative; events other than 0 or 1).
    BudgetExceededError
        If ``accountant`` cannot afford ε (nothing is released).

    Notes
    -----
    Privacy: ε-DP (pure) under replace-one neighbours (n is public), by sequential composition
    of the exponential mechanism over the ladder (ε/2; utility sensitivity 1 by the ladder
    constraint, see the module docstring) and two Laplace releases of Σdᵢ and Σtᵢ^p with
    sensitivity 1 and ε/4 each (scale 4/ε).  Public inputs: ``horizon``, ω (times are raised to
    e^−ω·horizon), γ (range of p and of λ/horizon), K and n.  Exact.  Floating point: the two
    Laplace sums are safe (OpenDP's exact discrete Laplace) and the level is drawn by OpenDP's
    exact Gumbel-max sampler, but the rung bounds, level lengths and the point within the level
    are floating point (see the module docstring).  A seeded ``rng`` gives ``private=False``.
    References: Nguyên & Hui 2017b; McSherry & Talwar 2007.

    Examples
    --------
    >>> from pm_private import PrivacyAccountant
    >>> from pm_private.survival import simulate_weibull, weibull_private
    >>> data = simulate_weibull(400, shape=1.5, scale=100.0, horizon=250.0, rng=0)
    >>> accountant = PrivacyAccountant(1.0)
    >>> release = weibull_private(
    ...     data.time, data.event, epsilon=1.0, horizon=250.0, accountant=accountant, rng=0
    ... )
    >>> release.mechanism
    'Weibull LSP + TLL (Nguyên & Hui 2017b, Alg. 1–3)'
    >>> release.epsilon_shape, release.epsilon_scale, release.private
    (0.5, 0.5, False)
    >>> accountant.spent
    Budget(epsilon=1.0, delta=0.0)
    """
    epsilon = check_epsilon(epsilon)
    mechanism = WeibullLSP(time, event, horizon=horizon, K=K, gamma=gamma, omega=omega)
    return mechanism.release(epsilon=epsilon, accountant=accountant, rng=rng)


def _clipped_mle(log_t, d, gamma):
    """(p, λ) per row, clipped to [0, γ]; rows without a finite MLE get γ (the limit p, λ → ∞)."""
    p, lam = mle_rows(log_t, d)
    return np.minimum(p, gamma), np.minimum(lam, gamma)


def _release_pair(p, lam, *, sensitivity, epsilon, gamma, source):
    """Laplace(sensitivity/(ε/2)) on p and on λ separately, then clipped to [0, γ]."""
    releases = [laplace_mechanism([v], sensitivity=sensitivity, epsilon=epsilon / 2, source=source) for v in (p, lam)]
    shape, scale = (float(np.clip(r.values[0], 0.0, gamma)) for r in releases)
    return shape, scale, releases


def weibull_laplace(
    time,
    event,
    *,
    epsilon: float,
    horizon: float,
    gamma: float = 10.0,
    omega: float = 6.0,
    accountant: PrivacyAccountant | None = None,
    rng=None,
) -> WeibullRelease:
    """Baseline (Nguyên & Hui 2017b, §VI-A): Laplace mechanism on the MLE p and λ/horizon, each clipped
    to [0, γ] (global sensitivity γ) and released with ε/2, i.e. Laplace(2γ/ε).

    Outputs are clipped to [0, γ] (post-processing).

    Parameters
    ----------
    time : array_like, shape (n,)
        Private follow-up times, ≥ 0; times beyond ``horizon`` are censored there.
    event : array_like, shape (n,)
        Private event indicators (1 = event, 0 = censored).
    epsilon : float
        Total ε > 0.
    horizon : float
        Public horizon; times are divided by it, and later times are censored at it
        (administrative censoring: a refusal would tell whether anyone's time exceeds it).
    gamma : float, default 10.0
        Public range [0, γ] of p and of λ/horizon.
    omega : float, default 6.0
        Public floor e^−ω of the scaled times.
    accountant : PrivacyAccountant, optional
        Charged ε before any noise is drawn; refuses with BudgetExceededError if over budget.
    rng : None, int or numpy.random.Generator
        None for the secure OS generator (private); a seed only for tests (``private=False``).

    Returns
    -------
    WeibullRelease
        The private shape p and scale λ (in the units of ``time``) and what they assumed.

    Raises
    ------
    ValueError
        Before anything is spent: invalid ε, horizon, γ, ω or data (times not finite,
        negative; events other than 0 or 1).
    BudgetExceededError
        If ``accountant`` cannot afford ε (nothing is released).

    Notes
    -----
    Privacy: ε-DP (pure) under replace-one neighbours (n is public), by sequential composition
    of two Laplace mechanisms with ε/2 each on the clipped MLEs (sensitivity γ).  Public:
    ``horizon``, ω, γ, n.  Exact.  Floating-point safe (OpenDP's exact discrete Laplace) for the
    secure default ``rng=None``; a seeded ``rng`` gives ``private=False``.  Reference:
    Nguyên & Hui 2017b.

    Examples
    --------
    >>> from pm_private import PrivacyAccountant
    >>> from pm_private.survival import simulate_weibull, weibull_laplace
    >>> data = simulate_weibull(400, shape=1.5, scale=100.0, horizon=250.0, rng=0)
    >>> accountant = PrivacyAccountant(1.0)
    >>> release = weibull_laplace(
    ...     data.time, data.event, epsilon=1.0, horizon=250.0, accountant=accountant, rng=0
    ... )
    >>> release.noise_scales  # Laplace(2γ/ε)
    (20.0, 20.0)
    >>> 0.0 <= release.shape <= release.gamma
    True
    """
    epsilon, gamma, omega, t, d = _prepare(time, event, epsilon, horizon, gamma, omega)
    source = as_noise_source(rng)
    with release_guard(accountant, LAPLACE_MLE, epsilon, label=f"Laplace on p, λ; n={t.size}"):
        p, lam = _clipped_mle(np.log(t), d, gamma)
        shape, scale, releases = _release_pair(
            p[0], lam[0], sensitivity=gamma, epsilon=epsilon, gamma=gamma, source=source
        )
        return WeibullRelease(
            shape=shape,
            scale=scale * horizon,
            epsilon=epsilon,
            epsilon_shape=releases[0].epsilon,
            epsilon_scale=releases[1].epsilon,
            mechanism=LAPLACE_MLE,
            horizon=float(horizon),
            omega=omega,
            gamma=gamma,
            n=t.size,
            noise_scales=tuple(r.scale for r in releases),
            private=source.secure,
        )


def weibull_sample_aggregate(
    time,
    event,
    *,
    epsilon: float,
    horizon: float,
    subset_size: int = 500,
    gamma: float = 10.0,
    omega: float = 6.0,
    accountant: PrivacyAccountant | None = None,
    rng=None,
) -> WeibullRelease:
    """Baseline (Nguyên & Hui 2017b, §VI-A; Smith 2008): sample-and-aggregate.

    The records are randomly partitioned (a permutation drawn from the noise source, independent
    of the data) into m = max(1, round(n/subset_size)) subsets of ⌊n/m⌋ records (the n mod m left
    over are not used); the MLE of each subset is clipped to [0, γ] (γ if it does not exist); the
    means of p and of λ/horizon over the subsets have sensitivity γ/m under replace-one (one
    record is in one subset) and are released with ε/2 each, Laplace(2γ/(mε)), then clipped to
    [0, γ].

    Parameters
    ----------
    time : array_like, shape (n,)
        Private follow-up times, ≥ 0; times beyond ``horizon`` are censored there.
    event : array_like, shape (n,)
        Private event indicators (1 = event, 0 = censored).
    epsilon : float
        Total ε > 0.
    horizon : float
        Public horizon; times are divided by it, and later times are censored at it
        (administrative censoring: a refusal would tell whether anyone's time exceeds it).
    subset_size : int, default 500
        The public target number of records per subset, in [1, n].
    gamma : float, default 10.0
        Public range [0, γ] of p and of λ/horizon.
    omega : float, default 6.0
        Public floor e^−ω of the scaled times.
    accountant : PrivacyAccountant, optional
        Charged ε before any noise is drawn; refuses with BudgetExceededError if over budget.
    rng : None, int or numpy.random.Generator
        None for the secure OS generator (private); a seed only for tests (``private=False``).

    Returns
    -------
    WeibullRelease
        The private shape p and scale λ (in the units of ``time``) and what they assumed.

    Raises
    ------
    ValueError
        Before anything is spent: invalid ε, horizon, γ, ω, subset_size or data (times not finite,
        negative; events other than 0 or 1).
    BudgetExceededError
        If ``accountant`` cannot afford ε (nothing is released).

    Notes
    -----
    Privacy: ε-DP (pure) under replace-one neighbours (n is public): one record is in one
    subset, so the subset means have sensitivity γ/m, released by two Laplace mechanisms with
    ε/2 each.  Public: ``horizon``, ω, γ, ``subset_size``, n.  Exact.  Floating-point safe
    (OpenDP's exact discrete Laplace) for the secure default ``rng=None``; a seeded ``rng``
    gives ``private=False``.  References: Nguyên & Hui 2017b; Smith 2008.

    Examples
    --------
    >>> from pm_private import PrivacyAccountant
    >>> from pm_private.survival import simulate_weibull, weibull_sample_aggregate
    >>> data = simulate_weibull(400, shape=1.5, scale=100.0, horizon=250.0, rng=0)
    >>> accountant = PrivacyAccountant(1.0)
    >>> release = weibull_sample_aggregate(
    ...     data.time, data.event, epsilon=1.0, horizon=250.0, subset_size=100, accountant=accountant, rng=0
    ... )
    >>> release.subsets, release.noise_scales  # m = 4 subsets: Laplace(2γ/(mε))
    (4, (5.0, 5.0))
    """
    epsilon, gamma, omega, t, d = _prepare(time, event, epsilon, horizon, gamma, omega)
    n = t.size
    size = check_count("subset_size", subset_size, maximum=n)
    source = as_noise_source(rng)
    m = max(1, round(n / size))
    with release_guard(accountant, SAMPLE_AGGREGATE, epsilon, label=f"{m} subsets of {n // m}, n={n}"):
        order = np.argsort(source.uniform(n))[: m * (n // m)].reshape(m, n // m)
        p, lam = _clipped_mle(np.log(t)[order], d[order], gamma)
        shape, scale, releases = _release_pair(
            p.mean(), lam.mean(), sensitivity=gamma / m, epsilon=epsilon, gamma=gamma, source=source
        )
        return WeibullRelease(
            shape=shape,
            scale=scale * horizon,
            epsilon=epsilon,
            epsilon_shape=releases[0].epsilon,
            epsilon_scale=releases[1].epsilon,
            mechanism=SAMPLE_AGGREGATE,
            subsets=m,
            horizon=float(horizon),
            omega=omega,
            gamma=gamma,
            n=n,
            noise_scales=tuple(r.scale for r in releases),
            private=source.secure,
        )

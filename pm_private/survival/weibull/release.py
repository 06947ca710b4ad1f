"""What a private Weibull mechanism returns and the checks of its public arguments: the release record
:class:`WeibullRelease` with its mechanism names, the ranges of γ and ω, the memory of the LSP
ladder, and the censoring and scaling of the times before any budget is spent (Nguyên & Hui 2017b)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ...privacy.relations import check_public_n
from ...privacy.release import Release, output, public
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
from ..data import censor_at_horizon, person_records, scale_times

# Taylor terms: with s·z ≤ hω = 1 the first omitted term is < 1/18! ≈ 1.6e-16 of the sum.
_TAYLOR_TERMS = 18
# Records per block of the ladder's tilted sums: the ladder's memory does not grow with n.
_CHUNK = 2**15


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
    delta : float, default 0.0
        0: the release is pure ε-DP.
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
    n : int or None
        The number of records (public); None under add/remove neighbours (n private).
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
    n: int | None = public()
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
    check_public_n(release)
    n = None if release.n is None else check_release_field("n", check_count, "n", release.n)
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


def ladder_bytes(n: int | None, K: int, gamma: float, omega: float) -> float:
    """Memory (bytes) the LSP ladder of n records with K rungs needs: a function of public sizes only.

    The tilted sums hold a block of at most ``_CHUNK`` records' n × ⌈γω⌉ weights and
    ``_TAYLOR_TERMS + 2`` powers, and min(K, n) × ⌈γω⌉ suffix moments of as many terms; the
    event-mean bounds and, under add/remove, each bisection step a (K + 1) × (min(K, n) + 1) table
    (eight arrays); each bisection step (K + 1) × (``_TAYLOR_TERMS`` + 1) temporaries.  With
    ``n=None`` (n private) the largest value over n, which does not read n.
    """
    centres = math.ceil(gamma * omega)
    rows = _CHUNK if n is None else min(n, _CHUNK)
    kept = K if n is None else min(K, n)
    terms = _TAYLOR_TERMS + 2
    return 8.0 * (
        rows * (centres + terms) + 2.0 * kept * centres * terms + 8.0 * (K + 1) * (kept + 1) + 4.0 * (K + 1) * terms
    )


def check_weibull_arguments(*, epsilon=None, horizon, gamma, omega, K=None, n: int | None = 1):
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
    n : int or None, default 1
        The number of records; None where n is private (add/remove neighbours): the ladder's
        memory is then checked for the largest it needs whatever n.

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


def _prepare(time, event, unit, epsilon, horizon, gamma, omega, allow_empty: bool = False):
    """Checked ε, γ, ω, the scaled times in [e^−ω, 1] with int events, one record per person
    (:func:`pm_private.survival.data.person_records`), and the unit (raises before spending);
    ``allow_empty`` takes data of no record (add/remove neighbours)."""
    time, event, _, unit = person_records(unit, time, event, allow_empty=allow_empty)
    epsilon, horizon, gamma, omega, _ = check_weibull_arguments(
        epsilon=check_epsilon(epsilon), horizon=horizon, gamma=gamma, omega=omega
    )  # ε is required here (optional for the LSP's ladder)
    # censored at the horizon: a refusal of later times would read the private maximum
    t, d = censor_at_horizon(time, event, horizon, allow_empty=allow_empty)
    return epsilon, gamma, omega, scale_times(t, horizon=horizon, floor=math.exp(-omega)), d, unit

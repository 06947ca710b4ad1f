"""The budget's rules: the neighbour relation, ledger entries, composition, and when a release is
refused.

Shared by the accountant (:mod:`.accountant`) and the ledger stores (:mod:`.ledger`), which apply
``refusal()`` inside their own atomic step.

Composition
-----------
*Basic*: releases with (εᵢ, δᵢ) on the same data compose to (Σεᵢ, Σδᵢ)-DP (Dwork & Roth 2014,
Thm 3.16).  *Tight*: a release that states its noise (``NoiseEvent``) is composed through
privacy-loss distributions (Meiser & Mohammadi 2018; Koskela, Jälkö & Honkela 2020) with Google's
``dp_accounting`` PLD code, pessimistic estimates (an upper bound on δ(ε)):

* a Gaussian release with noise σ and ℓ2 sensitivity Δ (replace-one, the library's definition)
  is the pair N(0, σ²), N(Δ, σ²), i.e. ``dp_accounting``'s Gaussian with noise multiplier σ/Δ
  and sensitivity 1 (its add-or-remove relation, whose Gaussian pair is exactly this one; its
  replace-one relation would take Δ as an add/remove sensitivity and double it).  OpenDP's
  discrete Gaussian on a 2^k grid is composed as the continuous Gaussian with sensitivity Δ plus
  (m + 2)·2^k for m values: the rounding, and one grid step by which the discrete Gaussian's
  curve stays under the continuous one's (Canonne, Kamath & Steinke 2020);
* a Laplace release is ε = Δ/b-DP, composed as its dominating pair for pure ε-DP, randomized
  response with parameter ε (Kairouz, Oh & Viswanath 2015), which holds for OpenDP's discrete
  Laplace as for any ε-DP mechanism;
* a Poisson-subsampled Gaussian event (a DP-SGLD step: ``sampling_rate`` q < 1, Δ twice a record's
  clip) as dp-accounting's Poisson-subsampled Gaussian under replace-one neighbours, and an event
  with ``count`` c as c of them composed (the whole run of a sampler is one stored event);
* a release without noise parameters is composed by basic composition and added to the rest.

A release is refused only when *both* the basic and the tight totals would exceed the budget
(each is a valid guarantee for the same releases).
"""

from __future__ import annotations

import functools
import json
import math
import os
import socket
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import NamedTuple

from .validation import check_nonnegative, check_positive

__all__ = ["REPLACE_ONE", "Budget", "BudgetExceededError", "Cost", "LedgerEntry", "NoiseEvent", "implied_epsilon"]

#: Bounded DP: neighbouring data sets have the same size n and differ in one record.
REPLACE_ONE = "replace-one"

RESERVED, SPENT, RELEASED = "reserved", "spent", "released"
GAUSSIAN, LAPLACE, L2_LAPLACE, PURE = "gaussian", "laplace", "l2-laplace", "pure"
#: The kinds of pure ε-DP events, each composed as randomized response with ε = Δ/b.
PURE_KINDS = (LAPLACE, L2_LAPLACE, PURE)

# Budget shares such as 0.6·ε + 0.35·ε + 0.05·ε do not add up to ε exactly in floating
# point; sums are compared with this relative slack (far below any meaningful ε).
RELATIVE_SLACK = 1e-9

# Privacy-loss discretisation of the PLD accountant: pessimistic, so coarser only loosens the
# bound (10 Gaussian releases at (1, 10⁻⁶): ε = 3.13976 at 10⁻³, 3.13976 at 10⁻⁴, 10× faster).
_PLD_INTERVAL = 1e-3


class BudgetExceededError(RuntimeError):
    """A release would exceed the accountant's remaining budget; nothing was released."""


class Budget(NamedTuple):
    """An (ε, δ) pair: a total, an amount spent or an amount remaining.

    A tuple: it unpacks (``eps, delta = acct.spent``) and compares like ``(ε, δ)``.

    Examples
    --------
    >>> Budget(1.0, 1e-6)
    Budget(epsilon=1.0, delta=1e-06)
    """

    epsilon: float
    delta: float


class Cost(NamedTuple):
    """What the ledger would hold after one more release (:meth:`PrivacyAccountant.cost`).

    ``basic``: Σεᵢ by basic composition; ``tight``: ε at the budget's total δ by the tighter of
    basic and privacy-loss-distribution composition.  A tuple: ``basic, tight = acct.cost(...)``.
    """

    basic: float
    tight: float


@dataclass(frozen=True)
class NoiseEvent:
    """The noise of one additive-noise draw of a release, stored so the ledger can recompose it.

    Parameters
    ----------
    kind : {"gaussian", "laplace", "l2-laplace", "pure"}
        The noise distribution: Gaussian, Laplace (density ∝ exp(−‖b‖₁/b)) or ℓ2-Laplace
        (a vector with density ∝ exp(−‖b‖₂/b), e.g. :func:`pm_private.privacy.noise.l2_gamma_vector`);
        or ``"pure"``: a whole pure ε-DP mechanism whose privacy loss is not one noise draw's
        (objective perturbation's, whose ε also pays for a Jacobian factor, or an exponential
        mechanism's draw), stated as b = 1 and
        Δ = its ε, with ``replace_one_sensitivity`` its ε under replace-one.
    scale : float
        The Gaussian standard deviation σ, or the (ℓ2-)Laplace scale b, > 0.
    sensitivity : float
        The ℓ2 (Gaussian, ℓ2-Laplace) or ℓ1 (Laplace) sensitivity Δ of the noised values under the
        entry's neighbour relation, > 0 (including any rounding the sampler adds).
    replace_one_sensitivity : float, optional
        For an event of a release made under add/remove neighbours: the sensitivity of the same
        values under replace-one, in (0, 2Δ] (:mod:`pm_private.privacy.relations`); default 2Δ,
        the triangle inequality.  Not stored: a ledger keeps the converted event.
    sampling_rate : float, default 1
        q in (0, 1]: the noised value is a sum over a Poisson subsample, each record in it
        independently with probability q (Gaussian only); Δ is then twice the bound on one
        record's vector (the replace-one sensitivity of a sum of clipped vectors).
    count : int, default 1
        The number of such draws (a sampler's steps), composed with each other.

    Raises
    ------
    ValueError
        If ``kind`` is unknown, ``scale`` or ``sensitivity`` is not finite and > 0,
        ``replace_one_sensitivity`` is not in (0, 2Δ], ``sampling_rate`` not in (0, 1] (1 for
        Laplace noise) or ``count`` not a positive integer.

    Notes
    -----
    A Gaussian event is composed as the pair N(0, σ²), N(Δ, σ²) (noise multiplier σ/Δ), a
    Laplace, ℓ2-Laplace or pure event as randomized response with ε = Δ/b, which dominates every ε-DP
    mechanism (Kairouz, Oh & Viswanath 2015), a Poisson-
    subsampled Gaussian event as dp-accounting's, under replace-one neighbours, with noise
    multiplier σ/(Δ/2) (Zhu, Dong & Wang 2022).
    """

    kind: str
    scale: float
    sensitivity: float
    replace_one_sensitivity: float | None = None
    sampling_rate: float = 1.0
    count: int = 1

    def __post_init__(self):
        if self.kind not in (GAUSSIAN, *PURE_KINDS):
            raise ValueError(f"noise kind must be one of {(GAUSSIAN, *PURE_KINDS)}, got {self.kind!r}")
        object.__setattr__(self, "scale", check_positive("scale", self.scale))
        object.__setattr__(self, "sensitivity", check_positive("sensitivity", self.sensitivity))
        if self.replace_one_sensitivity is not None:
            value = check_positive("replace_one_sensitivity", self.replace_one_sensitivity)
            if value > 2.0 * self.sensitivity * (1 + RELATIVE_SLACK):
                raise ValueError(
                    f"replace_one_sensitivity must be at most twice the sensitivity ({2 * self.sensitivity:g}), "
                    f"got {value:g}"
                )
            object.__setattr__(self, "replace_one_sensitivity", value)
        rate = check_positive("sampling_rate", self.sampling_rate)
        if rate > 1 or (self.kind in PURE_KINDS and rate != 1):
            raise ValueError(f"sampling_rate must be in (0, 1] (1 for Laplace noise), got {rate!r}")
        object.__setattr__(self, "sampling_rate", rate)
        if isinstance(self.count, bool) or not isinstance(self.count, int) or self.count < 1:
            raise ValueError(f"count must be a positive integer, got {self.count!r}")

    @property
    def replace_one(self) -> float:
        """The sensitivity under replace-one of an add/remove event (2Δ unless stated)."""
        return 2.0 * self.sensitivity if self.replace_one_sensitivity is None else self.replace_one_sensitivity

    @property
    def ratio(self) -> float:
        """σ/Δ (Gaussian noise multiplier) or Δ/b (Laplace ε)."""
        if self.kind == GAUSSIAN:
            return self.scale / self.sensitivity
        return self.sensitivity / self.scale


def noise_events(noise) -> tuple[NoiseEvent, ...]:
    """``noise`` (None or an iterable of :class:`NoiseEvent`) as a tuple, else TypeError."""
    if noise is None:
        return ()
    if isinstance(noise, NoiseEvent):
        return (noise,)
    events = tuple(noise)
    for event in events:
        if not isinstance(event, NoiseEvent):
            raise TypeError(f"noise must hold NoiseEvent values, got {type(event).__name__}")
    return events


def noise_to_text(events: Sequence[NoiseEvent]) -> str:
    """[kind, σ or b, Δ] per event, with [q, count] after them where either is not 1."""
    rows = [
        [e.kind, e.scale, e.sensitivity] + ([e.sampling_rate, e.count] if (e.sampling_rate, e.count) != (1, 1) else [])
        for e in events
    ]
    return json.dumps(rows, separators=(",", ":"))


def noise_from_text(text: str) -> tuple[NoiseEvent, ...]:
    rows = json.loads(text)
    return tuple(NoiseEvent(k, b, d, None, *rest) for k, b, d, *rest in rows)


@dataclass(frozen=True)
class LedgerEntry:
    """One release recorded by an accountant.

    ``status`` is ``"spent"`` (committed), ``"reserved"`` (in progress, or left by a process
    that died: counted as spent) or ``"released"`` (failed before any noise was drawn: not
    counted).  ``process`` is ``"pid@host"`` of the process that made the reservation.

    Parameters
    ----------
    mechanism : str
        The mechanism's name, as its release states it.
    epsilon, delta : float
        The (ε, δ) charged.
    neighbours : str
        The neighbour relation of the guarantee (e.g. :data:`REPLACE_ONE`).
    label : str
        A free-text label given by the caller.
    time : datetime.datetime
        The UTC day of the reservation (midnight): the hour is not kept, so that the ledger
        does not record how long a release ran (which can depend on the data).
    status : str, default "spent"
        ``"spent"``, ``"reserved"`` or ``"released"``.
    note : str, default ""
        A note added when the entry was settled.
    process : str, default ""
        ``"pid@host"`` of the process that made the reservation.
    id : int, default 0
        The entry's number in its ledger.
    noise : tuple of NoiseEvent, default ()
        The release's noise draws, for tight composition; empty: composed by basic composition.
    """

    mechanism: str
    epsilon: float
    delta: float
    neighbours: str
    label: str
    time: datetime
    status: str = SPENT
    note: str = ""
    process: str = ""
    id: int = 0
    noise: tuple[NoiseEvent, ...] = ()

    @property
    def counted(self) -> bool:
        """True when the entry counts against the budget (spent or reserved)."""
        return self.status != RELEASED


def grown_delta(delta: float, log_factor: float) -> float:
    """δ·e^{log_factor}, at most 1: the δ of a group-privacy conversion (0 stays 0; a factor
    beyond float range gives 1)."""
    if delta == 0:
        return 0.0
    return min(1.0, math.exp(log_factor) * delta) if log_factor < 709 else 1.0


def check_total(epsilon, delta) -> tuple[float, float]:
    epsilon = check_positive("epsilon", epsilon)
    delta = check_nonnegative("delta", delta)
    if delta >= 1:
        raise ValueError(f"delta must be < 1, got {delta!r}")
    return epsilon, delta


# --------------------------------------------------------------------------------------------
# Composition


def basic_total(entries: Iterable[LedgerEntry]) -> tuple[float, float]:
    """(Σεᵢ, Σδᵢ) over ``entries`` (basic composition)."""
    entries = list(entries)
    return math.fsum(e.epsilon for e in entries), math.fsum(e.delta for e in entries)


@functools.lru_cache(maxsize=256)
def _event_pld(kind: str, ratio: float, rate: float, count: int):
    from dp_accounting import NeighboringRelation
    from dp_accounting.pld import privacy_loss_distribution as pld

    if kind == GAUSSIAN and rate < 1:  # Δ = 2·(one record's bound): dp-accounting's replace-one doubles it
        single = pld.from_gaussian_mechanism(
            2.0 * ratio,
            sampling_prob=rate,
            neighboring_relation=NeighboringRelation.REPLACE_ONE,
            value_discretization_interval=_PLD_INTERVAL,
        )
    elif kind == GAUSSIAN:
        single = pld.from_gaussian_mechanism(ratio, value_discretization_interval=_PLD_INTERVAL)
    else:  # randomized response with parameter ε: the discrete Laplace of sensitivity 1
        single = pld.from_discrete_laplace_mechanism(ratio, value_discretization_interval=_PLD_INTERVAL)
    return single if count == 1 else single.self_compose(count)


def _tally(events: Iterable[NoiseEvent]) -> Counter:
    """How many of each (kind, ratio, sampling rate) the events hold, each counted ``count`` times."""
    counts: Counter = Counter()
    for e in events:
        counts[e.kind, e.ratio, e.sampling_rate] += e.count
    return counts


def _composition(counts: Counter):
    """The privacy-loss distribution of every tallied event, composed."""
    composed = None
    for event, count in sorted(counts.items()):
        pld = _event_pld(*event, count)
        composed = pld if composed is None else composed.compose(pld)
    return composed


def _split(entries: Iterable[LedgerEntry]) -> tuple[Counter, tuple[float, float]]:
    """Noise events of the entries that state them, and the basic total of those that do not."""
    entries = list(entries)
    events = _tally(e for entry in entries for e in entry.noise)
    return events, basic_total(entry for entry in entries if not entry.noise)


# Recent compositions by their multiset of events: a history that grows by one release is
# composed from the previous one with one convolution per new event.
_RECENT: dict[frozenset, object] = {}


def _composed(events: Counter):
    key = frozenset(events.items())
    if key in _RECENT:
        return _RECENT[key]
    composed = None
    for event in events:
        previous = _RECENT.get(frozenset((events - Counter({event: 1})).items()))
        if previous is not None:
            composed = previous.compose(_event_pld(*event, 1))
            break
    if composed is None:
        composed = _composition(events)
    if len(_RECENT) >= 16:
        del _RECENT[next(iter(_RECENT))]
    _RECENT[key] = composed
    return composed


# --------------------------------------------------------------------------------------------
# A stated noise description must give the declared guarantee
#
# The tight totals compose what an entry's noise events say, not its declared (ε, δ): a caller
# could state far more noise than its ε implies (σ/Δ = 100 with ε = 5) and the tight totals would
# then count almost nothing for it.  The accountant cannot see the noise actually drawn, but it
# can refuse a description that is not the declared guarantee: composed alone, with the PLD code
# of the tight totals, the events must give the declared ε at the declared δ.
#
# Tolerance: |implied − declared| ≤ 10⁻³·declared + 10⁻⁶.  Laplace events are exact (ε = Σ Δ/b:
# only float rounding, ~10⁻¹⁶); the library's Gaussian descriptions are calibrated with this very
# code to 10⁻⁵ relative (:func:`gaussian_multiplier`).  What the tolerance lets through is at most
# 0.1 % of a release's ε per release (the tight totals can under-count a misdescribed release by no
# more), far below any ε a budget distinguishes and below the PLD code's own pessimism of up to
# ~10⁻³ relative for a Gaussian exactly calibrated elsewhere (Balle & Wang 2018) at ε ≳ 0.05.  The
# 10⁻⁶ absolute term covers sums of tiny budget shares.
NOISE_RTOL = 1e-3
NOISE_ATOL = 1e-6


@functools.lru_cache(maxsize=1024)
def implied_epsilon(events: tuple[NoiseEvent, ...], delta: float) -> float:
    """The ε that ``events`` give at ``delta`` when composed alone.

    Laplace events only: Σ Δ/b (pure ε-DP, exact).  Otherwise the privacy-loss distributions of
    the tight totals (cached per event), composed, at ``delta`` (inf when they never reach it,
    e.g. Gaussian noise at δ = 0).

    Parameters
    ----------
    events : tuple of NoiseEvent
        A release's noise draws (not empty).
    delta : float
        The release's δ.

    Returns
    -------
    float
        The implied ε.
    """
    if all(e.kind in PURE_KINDS for e in events):
        return math.fsum(e.ratio * e.count for e in events)
    return float(_composition(_tally(events)).get_epsilon_for_delta(delta))


def check_noise(mechanism: str, epsilon: float, delta: float, events: tuple[NoiseEvent, ...]) -> None:
    """ValueError unless ``events`` (if any) give the declared (ε, δ) within the tolerance above."""
    if not events:
        return
    implied = implied_epsilon(events, delta)
    if not abs(implied - epsilon) <= NOISE_RTOL * epsilon + NOISE_ATOL:
        raise ValueError(
            f"the noise stated for {mechanism!r} implies ε = {implied:.6g} at δ = {delta:g}, not the declared "
            f"ε = {epsilon:g}: a release's noise events must give its own (ε, δ) (within a relative "
            f"{NOISE_RTOL:g}); nothing was recorded"
        )


def _exact_gaussian_delta(epsilon: float, multiplier: float) -> float:
    """δ(ε) of N(0, σ²) vs N(Δ, σ²), σ/Δ = ``multiplier`` (Balle & Wang 2018, Thm 8)."""
    from scipy.special import log_ndtr, ndtr

    mu = 1.0 / multiplier
    return float(ndtr(mu / 2 - epsilon / mu) - math.exp(epsilon + log_ndtr(-mu / 2 - epsilon / mu)))


@functools.lru_cache(maxsize=256)
def gaussian_multiplier(epsilon: float, delta: float) -> float:
    """The noise multiplier σ/Δ whose ε at ``delta`` by the PLD code of the tight totals is
    ``epsilon`` (to a relative 10⁻⁵).

    Starts from the exact multiplier (Balle & Wang 2018), which the pessimistic PLD code puts at
    most ~10⁻³ above ``epsilon`` for ε ≳ 0.05, then takes secant steps in log-log space (one
    privacy-loss distribution each, usually one or two).

    Parameters
    ----------
    epsilon : float
        The target ε > 0.
    delta : float
        The δ in (0, 1).

    Returns
    -------
    float
        The multiplier (the closest one tried, should 30 steps not reach 10⁻⁵).
    """
    from dp_accounting.pld import privacy_loss_distribution as pld
    from scipy.optimize import brentq

    def log_eps(log_m: float) -> float:
        curve = pld.from_gaussian_mechanism(math.exp(log_m), value_discretization_interval=_PLD_INTERVAL)
        return math.log(float(curve.get_epsilon_for_delta(delta)))

    target = math.log(epsilon)
    try:
        x = brentq(lambda t: _exact_gaussian_delta(epsilon, math.exp(t)) - delta, -12.0, 20.0, xtol=1e-10)
    except (ValueError, OverflowError):  # no sign change in the bracket: start from ε ≈ Δ/σ
        x = -target
    points = [(x, log_eps(x))]
    low = high = None  # log multipliers known to give too large / too small an ε
    for _ in range(30):
        x, y = points[-1]
        if abs(y - target) <= 1e-5:
            return math.exp(x)
        if y > target:
            low = x if low is None else max(low, x)
        else:
            high = x if high is None else min(high, x)
        slope = -1.0  # ε ∝ 1/m for small ε; the secant of the last two points once there are two
        if len(points) > 1 and points[-2][0] != x:
            slope = min((y - points[-2][1]) / (x - points[-2][0]), -1e-3)  # ε falls as m grows
        step = x + (target - y) / slope
        if low is not None and high is not None and not low < step < high:
            step = (low + high) / 2
        points.append((step, log_eps(step)))
    return math.exp(min(points, key=lambda point: abs(point[1] - target))[0])


def tight_epsilon(entries: Iterable[LedgerEntry], delta: float) -> float:
    """The smallest ε for which ``entries`` compose to (ε, ``delta``)-DP: the better of basic
    composition and the PLD composition of the stated noise plus basic composition of the rest
    (inf when neither reaches ``delta``)."""
    entries = list(entries)
    basic = basic_total(entries)
    best = basic[0] if basic[1] <= delta * (1 + RELATIVE_SLACK) else math.inf
    events, rest = _split(entries)
    if events and rest[1] < delta:
        pld_epsilon = float(_composed(events).get_epsilon_for_delta(delta - rest[1]))
        best = min(best, rest[0] + pld_epsilon)
    return best


def _tight_fits(total: tuple[float, float], entries: list[LedgerEntry]) -> bool:
    events, rest = _split(entries)
    if not events or rest[0] > total[0] * (1 + RELATIVE_SLACK) or rest[1] > total[1] * (1 + RELATIVE_SLACK):
        return False
    room = total[0] - rest[0]
    return float(_composed(events).get_delta_for_epsilon(room)) <= (total[1] - rest[1]) * (1 + RELATIVE_SLACK)


def refusal(total: tuple[float, float], counted: Sequence[LedgerEntry], entry: LedgerEntry) -> str | None:
    """None when ``entry`` fits next to the ``counted`` entries, else the reason it does not."""
    spent = basic_total(counted)
    eps_over = spent[0] + entry.epsilon > total[0] * (1 + RELATIVE_SLACK)
    delta_over = spent[1] + entry.delta > total[1] * (1 + RELATIVE_SLACK)
    if not (eps_over or delta_over) or _tight_fits(total, [*counted, entry]):
        return None
    tight = ""
    if entry.noise or any(e.noise for e in counted):
        tight = f" (tight composition: ε = {tight_epsilon([*counted, entry], total[1]):.6g} at δ = {total[1]:g})"
    if eps_over:
        return (
            f"ε = {entry.epsilon:g} requested but only {max(0.0, total[0] - spent[0]):g} of {total[0]:g} remains{tight}"
        )
    return f"δ = {entry.delta:g} requested but only {max(0.0, total[1] - spent[1]):g} of {total[1]:g} remains{tight}"


# --------------------------------------------------------------------------------------------
# Times and processes


def now() -> datetime:
    return datetime.now(UTC)


def day(moment: datetime) -> datetime:
    """``moment`` at the UTC midnight of its day: the resolution the ledger keeps."""
    return moment.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)


_PROCESS: tuple[int, str] = (0, "")


def process_id() -> str:
    global _PROCESS
    pid = os.getpid()
    if _PROCESS[0] != pid:
        _PROCESS = (pid, f"{pid}@{socket.gethostname()}")
    return _PROCESS[1]

"""Private Weibull parameters: LSP for the shape, TLL for the scale, and two baselines
(Nguyên & Hui 2017b, §IV–§VI).

Setting.  Records (tᵢ, dᵢ); times are divided by the public ``horizon`` and raised to the public
floor e^(−ω) (:func:`pm_private.survival.data.scale_times`), so tᵢ ∈ [e^(−ω), 1] and
ln tᵢ ∈ [−ω, 0].  Neighbours differ by **replacing one record** (n is public), or with
``relation="add-remove"`` by adding or removing one (n private; see "Add/remove" below).  Public inputs:
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

Add/remove.  Distance k now counts added and removed records.  The bounds stay exact (or, for
f_U^k, valid and ordered), so the same proof holds with sensitivity 1 of the level's utility:

* f_U^k is the same formula.  A removed record raises Σ tᵢ^p ln tᵢ by at most 1/(e·p) and an added
  one lowers it; the denominator grows by at most 1 per added record; so every data set within
  distance k has f ≤ min(Σ tᵢ^p ln tᵢ + k/(e·p), 0)/(Σ tᵢ^p + k).  The bound of D′ = D ± one record
  at k + 1 is at least D's at k: its numerator is no smaller and its denominator no smaller.
* f_inf^k removes the b largest times and adds k − b records at the minimiser of t^p(ln t − c),
  minimised over b ≤ k (a data set of no record excluded).  Removing a record beats adding one
  exactly when its term exceeds −min_t t^p(ln t − c) > 0; those records hold the largest times,
  so the optimum is among these prefixes.
* g_L^k and g_U^k remove j events and add k − j events at −ω or 0, optimised over j; m is
  undefined once k ≥ Σdᵢ, as under replace-one.
* TLL's sums still have sensitivity 1.  Without a public n, δ̃ is clipped to [1, ∞) and τ̃ to
  [δ̃·e^{−ωp}, ∞) (τ ≥ δ·e^{−ωp} always), so λ ∈ [e^{−ω}, γ] on the scaled times.
* The ladder's memory does not grow with n (the tilted sums are taken over blocks of records), so
  the memory check reads no private n.
* Ledger: a replaced record is a removal and an addition, so under replace-one the level's draw
  is 2·(ε/2)-DP and the sums keep sensitivity 1: an add/remove release counts 1.5ε on a
  replace-one ledger.

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
from types import SimpleNamespace

from ..._engine.docstrings import parameters_from
from ...privacy.accountant import PrivacyAccountant
from ...privacy.budget import PURE, NoiseEvent
from ...privacy.laplace import laplace_noise_event
from ...privacy.noise import as_noise_source
from ...privacy.relations import (
    ADD_REMOVE,
    REPLACE_ONE,
    Sensitivity,
    check_relation,
    check_some_units,
    with_replace_one,
)
from ...privacy.release import release_guard
from ...privacy.validation import (
    check_epsilon,
)
from ...released.noise_plan import NoisePlan, exponential_query, laplace_query, laplace_sd
from ..data import censor_at_horizon, person_records, scale_times
from .baselines import weibull_laplace, weibull_sample_aggregate
from .ladder import _draw_lsp, _tll, lsp_ladder
from .release import (
    LAPLACE_MLE,
    LSP_TLL,
    SAMPLE_AGGREGATE,
    WeibullRelease,
    _check_range,
    check_weibull_arguments,
    ladder_bytes,
)

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
        title=f"LSP (ε/2 = {shape:g}) + TLL (ε/2 = {scale:g}), pure ε-DP",
    )


def _lsp_tll_events(epsilon_shape: float, epsilon_scale: float, relation: str) -> tuple[NoiseEvent, ...]:
    """LSP + TLL's noise for the ledger: the ladder's exponential mechanism as one pure event of
    ε_p, and TLL's two Laplace draws (sensitivity 1, ε_scale/2 each).  Under add/remove, a replaced
    record is a removal and an addition, so the level's utility moves by at most 2 and the draw is
    2ε_p-DP under replace-one: group privacy, the conversion a ledger applies to an event that
    states no replace-one ε.  The two sums move by at most 1 under either relation
    (tᵢ^p ∈ (0, 1], dᵢ ∈ {0, 1}), so their Laplace events keep their sensitivity.  Replace-one ε
    of an add/remove release: 2ε_p + ε_scale = 1.5ε."""
    shape = NoiseEvent(PURE, 1.0, epsilon_shape)
    sums = (laplace_noise_event(1.0, epsilon_scale / 2),) * 2
    return (shape, *with_replace_one(sums, Sensitivity(1.0, 1.0), relation))


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
    unit : array_like, shape (n,), optional
        The person of each row, when rows are intervals of persons' follow-up (``time`` each
        interval's end): each person's history becomes one record, their first exit
        (:func:`pm_private.survival.person_histories`), and the releases protect a person with
        all their rows.  None: each row is one person's record.
    relation : {"replace-one", "add-remove"}, default "replace-one"
        The neighbour relation (:mod:`pm_private.privacy.relations`): under add/remove n is
        private (neither the releases nor the ledger label nor the repr state it) and data of no
        record are taken; the ladder bounds add/remove distances (module docstring).

    Raises
    ------
    ValueError
        For invalid public parameters or data (times not finite or negative; events other
        than 0 or 1), or an unknown ``relation``.

    Examples
    --------
    >>> lsp = WeibullLSP(time, event, horizon=5479.0)                       # doctest: +SKIP
    >>> releases = [lsp.release(epsilon=0.2, accountant=acct) for _ in range(5)]  # doctest: +SKIP
    """

    def __init__(
        self,
        time,
        event,
        *,
        horizon: float,
        K: int = 500,
        gamma: float = 10.0,
        omega: float = 6.0,
        unit=None,
        relation: str = REPLACE_ONE,
    ):
        self.relation = check_relation(relation)
        add_remove = self.relation == ADD_REMOVE
        _, self.horizon, self.gamma, self.omega, self.K = check_weibull_arguments(
            horizon=horizon, gamma=gamma, omega=omega, K=K, n=None if add_remove else 1
        )
        time, event, _, self.unit = person_records(unit, time, event, allow_empty=add_remove)
        t, d = censor_at_horizon(time, event, self.horizon, allow_empty=add_remove)
        check_some_units(t.size, self.relation)
        if not add_remove:  # n public: the ladder's memory for this n
            check_weibull_arguments(horizon=horizon, gamma=gamma, omega=omega, K=K, n=t.size)
        self._t = scale_times(t, horizon=self.horizon, floor=math.exp(-self.omega))
        self._d = d
        self.n = None if add_remove else int(self._t.size)
        self._ladder = lsp_ladder(
            self._t, self._d, K=self.K, gamma=self.gamma, omega=self.omega, relation=self.relation
        )

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
        label = f"LSP ε/2 + TLL ε/2{'' if self.n is None else f', n={self.n}'}, K={self.K}"

        def record(p, lam, events, powers):
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
                unit=self.unit,
                neighbours=self.relation,
            )

        # The record's own checks, before anything is spent: TLL's two Laplace(2/ε_scale) draws, as planned.
        planned = SimpleNamespace(epsilon=epsilon_scale / 2, scale=2.0 / epsilon_scale)
        record(0.0, 0.0, planned, planned)
        with release_guard(
            accountant, LSP_TLL, epsilon, label=label, unit=self.unit, neighbours=self.relation,
            noise=_lsp_tll_events(epsilon_shape, epsilon_scale, self.relation),
        ):  # fmt: skip
            lower, upper = self._ladder
            p = float(_draw_lsp(lower, upper, epsilon_shape, source)[1][0])
            lam, events, powers = _tll(
                self._t, self._d, p, epsilon_scale, omega=self.omega, gamma=self.gamma, source=source, n=self.n
            )
            return record(p, lam, events, powers)

    def __repr__(self) -> str:
        size = "n private, relation='add-remove'" if self.n is None else f"n={self.n}"
        return f"WeibullLSP({size}, horizon={self.horizon:g}, K={self.K}, γ={self.gamma:g}, ω={self.omega:g})"

    def __reduce__(self):
        raise TypeError("WeibullLSP holds private records and cannot be pickled; publish its releases only")


@parameters_from(weibull_laplace, sections=("Returns",))
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
    unit=None,
    relation: str = REPLACE_ONE,
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
    K : int, default 500
        Number of ladder rungs, ≥ 1.
    unit : array_like, shape (n,), optional
        The person of each row, when rows are intervals of persons' follow-up: each person's
        history becomes one record (:class:`WeibullLSP`), n the number of persons.
    relation : {"replace-one", "add-remove"}, default "replace-one"
        The neighbour relation (:mod:`pm_private.privacy.relations`): under add/remove n is
        private and the ladder bounds add/remove distances.

    Raises
    ------
    ValueError
        Before anything is spent: invalid ε, horizon, γ, ω, K, ``relation`` or data (times not
        finite, negative; events other than 0 or 1).
    BudgetExceededError
        If ``accountant`` cannot afford ε (nothing is released).

    Notes
    -----
    Privacy: ε-DP (pure) under replace-one neighbours (n is public), or with
    ``relation="add-remove"`` under add/remove neighbours (n private; 1.5ε on a replace-one
    ledger); the unit a person's record, or with ``unit`` a person with all their rows; by sequential composition
    of the exponential mechanism over the ladder (ε/2; utility sensitivity 1 by the ladder
    constraint, see the module docstring) and two Laplace releases of Σdᵢ and Σtᵢ^p with
    sensitivity 1 and ε/4 each (scale 4/ε).  Public inputs: ``horizon``, ω (times are raised to
    e^−ω·horizon), γ (range of p and of λ/horizon), K, and n under replace-one.  Exact.  Floating point: the two
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
    mechanism = WeibullLSP(time, event, horizon=horizon, K=K, gamma=gamma, omega=omega, unit=unit, relation=relation)
    return mechanism.release(epsilon=epsilon, accountant=accountant, rng=rng)

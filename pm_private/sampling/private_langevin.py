"""Differentially private stochastic-gradient Langevin dynamics for a PyMC model whose
log-likelihood is a sum over records, every published draw under one certified guarantee.

Each step of each chain, warm-up included, is (Welling & Teh 2011; Wang, Fienberg & Smola 2015;
Li, Chen, Liu & Carin 2019)

    θ ← θ + (η/2)·(∇log p(θ) + (1/q)·Σ_{i ∈ B} clip_C(∇ℓᵢ(θ))) + √η·ξ,   ξ ~ N(0, I),

on the unconstrained parameters θ, with

* B a **Poisson subsample**: every record independently with probability q, drawn from the noise
  source (the gaps between chosen records are geometric), and the gradient sum scaled by 1/q,
  never by the realised |B|;
* clip_C(g) = g·min(1, C/‖g‖) the **per-record clip**: ∇ℓᵢ is the gradient of record i's
  log-likelihood (the sum of its observed variables' log-densities);
* the **Langevin noise as the Gaussian mechanism**: (η/2q)·Σ clip_C(∇ℓᵢ) has replace-one
  sensitivity ηC/q, and √η·ξ is Gaussian noise of s.d. √η, so a step is the Poisson-subsampled
  Gaussian mechanism with noise multiplier z = 2q/(C·√η) relative to C (dp-accounting's
  replace-one relation doubles C).  The step size is therefore η = (2q/(C·z))², fixed by the
  privacy the run must have (:func:`plan_dp_sgld`); nothing is accepted or rejected on private
  data, and the prior gradient, the initial point (the model's, from its priors, or public
  ``initvals``) and q, C, η are public.

The run is charged before any record is read, as one ledger entry: chains × steps compositions of
the Poisson-subsampled Gaussian (a ``NoiseEvent`` of :mod:`pm_private.privacy.budget` with
``sampling_rate`` q and ``count`` chains × steps, recomposed by the ledger's PLD code and by
dp-accounting from :meth:`DPSGLDPlan.dp_event`).  Every draw of the run is then publishable at no
further cost.  Heller & Fetaya (2023) show that "the chain has converged" gives no privacy
guarantee for SGLD; this one does not rest on convergence: it holds for the whole published
chain, whatever the chain's state.  How close the draws are to the posterior is a separate
question, answered by the accuracy benchmark, not by the guarantee.

A public diagonal preconditioner (``scale``): with public scales s > 0 per parameter, fixed before
the run and never taken from the data, the chain runs the steps above on u = θ/s (whose
log-likelihood gradients are s ⊙ ∇ℓᵢ, clipped to norm C in those coordinates), i.e.

    θ ← θ + s ⊙ [(η/2)·(s ⊙ ∇log p(θ) + (1/q)·Σ_{i ∈ B} clip_C(s ⊙ ∇ℓᵢ(θ))) + √η·ξ],

the Langevin dynamics preconditioned by M = diag(s²), which has the same posterior.  Each step is
the same Poisson-subsampled Gaussian mechanism on u, with the same z, and θ = s ⊙ u is
post-processing: the guarantee and the plan are unchanged.  Scales set the Langevin time per
parameter (η·sⱼ²) and how much each parameter's gradient weighs in the clip.  Where parameters live
on very different scales (coefficients of covariates in different units) one clip C and one η fit
none of them, and scales from public knowledge (the units of a data dictionary, the prior's
s.d.s, a published earlier fit) put them on one footing; a scale larger than the posterior's
lengthens the Euler steps and clips more, which biases the draws.

Steps per draw (``thin``): at the same ε, more steps mean a larger z and steps about as much
smaller over the same Langevin time, so the planner keeps the last of every ``thin`` steps, the
smallest power of two with η ≤ 1/(n·C²) (:func:`plan_dp_sgld`); without it a larger ε would allow
steps whose Euler discretisation widens the draws.  The share of clipped gradients at the chains'
ends is released within the run's (ε, δ) (:mod:`pm_private.sampling.clipped_share`).

What the privacy leaves the chain: z grows like q·√(steps)/ε, so the Langevin time a chain covers,
steps·η = 4·steps·q²/(C·z)², is about a constant times ε²/C², whatever q and the number of steps
(more steps only refine the discretisation): 0.026–0.039·ε²/C² for two chains at δ = 10⁻⁵ and
ε from 4 down to 0.5.  The draws reach the posterior only where its
variances (on the unconstrained scale) are well below that time and the start is within reach: many
records, a well-conditioned posterior, ε not small; a smaller C buys time but biases the
draws by clipping more records (:mod:`pm_private.sampling.clipped_share`).  Where that fails the chain stays near its
start, and its intervals are too narrow.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..privacy.budget import GAUSSIAN, NoiseEvent, implied_epsilon
from ..privacy.noise import as_noise_source
from ..privacy.projection import row_scale_factors
from ..privacy.release import release_guard
from ..privacy.validation import (
    CLIP_SHARE,
    check_bool,
    check_clip_share,
    check_count,
    check_delta,
    check_epsilon,
    check_positive,
)
from .clipped_share import clipped_counts, release_clipped_share, report_event, report_noise
from .langevin_inputs import scale_vector, start_point

__all__ = ["DP_SGLD_MECHANISM", "DPSGLDPlan", "dp_sgld", "plan_dp_sgld"]

#: Mechanism name of :func:`dp_sgld` (ledger entry and the result's attributes).
DP_SGLD_MECHANISM = (
    "Stochastic-gradient Langevin dynamics with Poisson subsampling and clipped per-record gradients, "
    "the Langevin noise as the Gaussian mechanism (Wang, Fienberg & Smola 2015; Li, Chen, Liu & Carin 2019)"
)


#: The most steps (per chain) and chains a run takes: far beyond any useful run, so that a typo
#: is refused rather than composed for minutes.
_MOST_STEPS, _MOST_CHAINS = 10**8, 1000


@dataclass(frozen=True)
class DPSGLDPlan:
    """What a DP-SGLD run will spend and the step size that buys it (:func:`plan_dp_sgld`).

    Parameters
    ----------
    epsilon, delta : float
        The run's (ε, δ) under replace-one neighbours, the unit a record.
    n : int
        The number of records (public).
    sampling_rate : float
        q, each record's probability of being in a step's subsample.
    clip : float
        C, the bound on a record's gradient.
    steps : int
        Steps per chain, warm-up included (thinned draws × ``thin``).
    chains : int
        The number of chains.
    noise_multiplier : float
        z, the Langevin noise's s.d. over the clipped sum's sensitivity C (before the 1/q scale).
    step_size : float
        η = (2q/(C·z))².
    clip_share : float, default 0
        The share of the run's zCDP cost that sizes the release of the share of clipped
        gradients (0: none).
    report_sd : float, optional
        σ_c, the noise s.d. of each chain's count of clipped gradients
        (:mod:`pm_private.sampling.clipped_share`); None without the report.
    thin : int, default 1
        Steps per kept draw (``steps`` counts them all).
    """

    epsilon: float
    delta: float
    n: int
    sampling_rate: float
    clip: float
    steps: int
    chains: int
    noise_multiplier: float
    step_size: float
    clip_share: float = 0.0
    report_sd: float | None = None
    thin: int = 1

    def noise_events(self, steps: int | None = None, report: bool = True) -> tuple[NoiseEvent, ...]:
        """The run's ledger events: the Gaussian noise z·C on the clipped sum (replace-one
        sensitivity 2C), Poisson-subsampled at q, composed chains × steps times (or ``steps``
        times: the steps taken so far), then the report's Gaussian noise on the chains' counts of
        clipped gradients (where the plan has it and ``report``).

        Parameters
        ----------
        steps : int, optional
            The steps to compose (default: every step of every chain).
        report : bool, default True
            Include the report's event.

        Returns
        -------
        tuple of NoiseEvent
        """
        count = self.steps * self.chains if steps is None else steps
        events = (_event(self.noise_multiplier, self.clip, self.sampling_rate, count),)
        if report and self.report_sd is not None:
            events += (report_event(self.report_sd, self.chains),)
        return events

    def dp_event(self):
        """The run as dp-accounting's event tree, for an independent recomputation:
        ``SelfComposedDpEvent(PoissonSampledDpEvent(q, GaussianDpEvent(z)), chains × steps)``,
        composed with the report's ``GaussianDpEvent(2σ_c/√chains)`` where the plan has one
        (dp-accounting's replace-one relation doubles the shift of a Gaussian event, so its
        multiplier is σ over half the replace-one sensitivity √chains).

        Returns
        -------
        dp_accounting.DpEvent
        """
        from dp_accounting import ComposedDpEvent, GaussianDpEvent, PoissonSampledDpEvent, SelfComposedDpEvent

        single = PoissonSampledDpEvent(self.sampling_rate, GaussianDpEvent(self.noise_multiplier))
        steps = SelfComposedDpEvent(single, self.steps * self.chains)
        if self.report_sd is None:
            return steps
        return ComposedDpEvent([steps, GaussianDpEvent(2.0 * self.report_sd / math.sqrt(self.chains))])


def _event(multiplier: float, clip: float, rate: float, count: int) -> NoiseEvent:
    return NoiseEvent(GAUSSIAN, multiplier * clip, 2.0 * clip, sampling_rate=rate, count=count)


def plan_dp_sgld(
    epsilon: float,
    delta: float,
    *,
    n: int,
    sampling_rate: float,
    clip: float,
    steps: int,
    chains: int = 1,
    clip_share: float = CLIP_SHARE,
    thin: int | None = None,
) -> DPSGLDPlan:
    """The noise multiplier, step size and step count of a DP-SGLD run at (ε, δ), before any
    record is read.

    The report of clipped gradients first takes its noise σ_c, the share p = ``clip_share`` of
    the run's zCDP cost (:mod:`pm_private.sampling.clipped_share`); then, for chains of
    ``steps``·k steps, the smallest noise multiplier z (to a relative 10⁻³, rounded up) whose
    Poisson-subsampled Gaussian steps, composed with the report's event, come to at most ε at δ
    under replace-one neighbours (the ledger's PLD code, pessimistic), found by bisection on
    log z; then η = (2q/(C·z))² (module notes).  With ``thin`` None, k is the smallest power of
    two with η ≤ 1/(n·C²), the step size whose Euler–Maruyama discretisation stays accurate:
    for a well-specified model the log-posterior's curvature is about the Fisher information
    n·E[ggᵀ], whose largest eigenvalue is at most n·E‖g‖² ≤ n·C² where the clip rarely binds,
    so η·L ≤ 1 (a larger ε allows larger steps; more steps at the same ε make them smaller over
    about the same Langevin time).  Public: it depends only on its arguments.

    Parameters
    ----------
    epsilon : float
        The run's ε, > 0.
    delta : float
        The run's δ, in (0, 1).
    n : int
        The number of records (public).
    sampling_rate : float
        q in (0, 1): each record's probability of being in a step's subsample (the expected
        subsample size is q·n).
    clip : float
        C > 0, the bound on a record's gradient norm.
    steps : int
        Draws per chain, warm-up included, each of ``thin`` steps (at most 10⁸ steps in all).
    chains : int, default 1
        The number of chains (at most 1000).
    clip_share : float, default 0.05
        The share p of the run's privacy loss (its zCDP cost) that sizes the release of the share
        of clipped gradients at the chains' ends: 0 (no report, the whole budget for the steps) or
        in [0.001, 0.5].
    thin : int, optional
        Steps per draw; None: the smallest power of two that brings η to 1/(n·C²) or below.

    Returns
    -------
    DPSGLDPlan
        Its ε is the composed ε of the planned noise (at most ``epsilon``); its ``steps`` are
        ``steps``·``thin`` per chain.

    Raises
    ------
    ValueError
        Naming the argument, for invalid values, or when no noise multiplier up to 10⁴ reaches ε.

    Examples
    --------
    >>> from pm_private.sampling import plan_dp_sgld
    >>> plan = plan_dp_sgld(1.0, 1e-5, n=10_000, sampling_rate=0.01, clip=1.0, steps=1000)
    >>> round(plan.noise_multiplier, 2) > 0.5, plan.step_size < 1e-3, plan.thin
    (True, True, 1)
    """
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    n, steps = check_count("n", n), check_count("steps", steps, maximum=_MOST_STEPS)
    chains = check_count("chains", chains, maximum=_MOST_CHAINS)
    rate = check_positive("sampling_rate", sampling_rate)
    if not rate < 1:
        raise ValueError(f"sampling_rate must be in (0, 1), got {sampling_rate!r}")
    clip = check_positive("clip", clip)
    share = check_clip_share(clip_share, epsilon)
    if thin is not None:
        thin = check_count("thin", thin, maximum=_MOST_STEPS // steps)
        return _planned(epsilon, delta, n, rate, clip, steps, chains, share, thin)
    thin = 1
    plan = _planned(epsilon, delta, n, rate, clip, steps, chains, share, thin)
    while plan.step_size > 1.0 / (n * clip**2) and steps * thin * 2 <= _MOST_STEPS:
        thin *= 2
        plan = _planned(epsilon, delta, n, rate, clip, steps, chains, share, thin)
    return plan


def _planned(epsilon, delta, n, rate, clip, steps, chains, share, thin) -> DPSGLDPlan:
    """The plan of chains of ``steps``·``thin`` steps (arguments checked)."""
    count = steps * thin * chains
    report_sd = report_noise(epsilon, delta, share, chains)
    report = () if report_sd is None else (report_event(report_sd, chains),)

    def spent(z):
        return implied_epsilon((_event(z, clip, rate, count), *report), delta)

    low, high = 0.05, 1e4
    if spent(high) > epsilon:
        raise ValueError(f"epsilon = {epsilon:g} is out of reach of {count} steps at δ = {delta:g} (z up to 10⁴)")
    while high / low > 1.001:
        middle = math.sqrt(low * high)
        low, high = (low, middle) if spent(middle) <= epsilon else (middle, high)
    return DPSGLDPlan(
        epsilon=spent(high),
        delta=delta,
        n=n,
        sampling_rate=rate,
        clip=clip,
        steps=steps * thin,
        chains=chains,
        noise_multiplier=high,
        step_size=(2.0 * rate / (clip * high)) ** 2,
        clip_share=share,
        report_sd=report_sd,
        thin=thin,
    )


def _record_replacements(graph, n: int, records) -> dict:
    """What a subsample changes in ``graph``: every constant or shared array whose first axis has
    length n (the observed values and the covariates) is indexed by ``records``, and every shape
    (a scalar n, or a short integer vector starting with n: an observed variable's size) takes the
    subsample's size for n.  A constant array is first held in a shared variable: a compiled
    function whose graph holds large constants is left out of the disk cache and compiled again in
    every call."""
    import pytensor
    import pytensor.tensor as pt
    from pytensor.compile.sharedvalue import SharedVariable
    from pytensor.graph.traversal import graph_inputs
    from pytensor.tensor.variable import TensorConstant

    size = records.shape[0]
    found = {}
    for var in graph_inputs([graph]):
        if isinstance(var, TensorConstant):
            value = var.data
        elif isinstance(var, SharedVariable):
            value = var.get_value(borrow=True)
        else:
            continue
        shape_like = np.issubdtype(np.asarray(value).dtype, np.integer) and np.ndim(value) <= 1 and np.size(value) <= 8
        if shape_like and np.ndim(value) == 0 and int(value) == n:
            found[var] = size.astype(var.dtype)
        elif shape_like and np.ndim(value) == 1 and np.size(value) >= 1 and int(value[0]) == n:
            found[var] = pt.concatenate([size[None], pt.as_tensor(value[1:])]).astype(var.dtype)
        elif np.ndim(value) >= 1 and np.shape(value)[0] == n:
            held = pytensor.shared(value, name=var.name) if isinstance(var, TensorConstant) else var
            found[var] = held[records]
    return found


def _per_record_loglik(model):
    """(the records' log-likelihoods, n): the observed variables' log-densities summed over all
    but their first axis, the record; ValueError where the log-likelihood does not split so."""
    observed = model.observed_RVs
    if not observed:
        raise ValueError("model: DP-SGLD needs observed variables (the records' log-likelihood)")
    values = [model.rvs_to_values[rv] for rv in observed]
    sizes = {int(np.shape(v.data if hasattr(v, "data") else v.get_value())[0]) for v in values}
    terms = model.logp(vars=observed, sum=False)
    if len(sizes) != 1 or any(t.ndim == 0 for t in terms):
        raise ValueError(
            "model: every observed variable must hold one row per record, the same n for all, with one "
            "log-density per record (a multivariate observation across records does not split over them)"
        )
    per_record = sum(t.reshape((t.shape[0], -1)).sum(axis=1) if t.ndim > 1 else t for t in terms)
    return per_record, sizes.pop()


def _gradient_functions(model, point=None):
    """(per-record gradients of a subsample, prior gradient, n, initial point, point maps); the
    initial point ``point`` (unconstrained) or the model's.

    The per-record log-likelihood is the sum of the observed variables' log-densities over all
    but their first axis (the record); every data array whose first axis has length n is indexed
    by the subsample, so a step costs O(q·n·d), not O(n·d)."""
    import pytensor
    import pytensor.tensor as pt
    from pymc.blocking import DictToArrayBijection
    from pymc.pytensorf import join_nonshared_inputs
    from pytensor.graph.replace import clone_replace
    from pytensor.graph.traversal import graph_inputs, io_toposort
    from pytensor.tensor.shape import SpecifyShape

    per_record, n = _per_record_loglik(model)
    records = pt.lvector("records")
    # shapes fixed at n (an observed variable's size) would refuse a subsample: unfix them first
    fixed = [
        node for node in io_toposort(graph_inputs([per_record]), [per_record]) if isinstance(node.op, SpecifyShape)
    ]
    per_record = clone_replace(per_record, {node.outputs[0]: node.inputs[0] for node in fixed}, rebuild_strict=False)
    batch = clone_replace(per_record, _record_replacements(per_record, n, records), rebuild_strict=False)
    prior = model.logp(vars=model.free_RVs, jacobian=True)
    point = model.initial_point() if point is None else point
    start = {v.name: point[v.name] for v in model.value_vars}
    (batch, prior), theta = join_nonshared_inputs(start, [batch, prior], model.value_vars)
    jacobian = pytensor.gradient.jacobian(batch, theta, vectorize=True)
    gradients = pytensor.function([theta, records], [jacobian, pytensor.grad(prior, theta)])
    raveled = DictToArrayBijection.map(start)
    outputs = [v for v in model.unobserved_value_vars if not v.name.endswith("__")]
    constrained = model.compile_fn(outputs, inputs=model.value_vars, on_unused_input="ignore", point_fn=False)

    def to_draw(flat):
        values = DictToArrayBijection.rmap(raveled._replace(data=flat))
        return dict(zip([v.name for v in outputs], constrained(**values), strict=True))

    return gradients, n, raveled.data.copy(), to_draw


def _subsamples(source, n: int, rate: float, steps: int) -> list[np.ndarray]:
    """The Poisson subsamples of ``steps`` steps: each of the steps·n (step, record) slots chosen
    independently with probability q.  The gaps between chosen slots are geometric, so about
    q·n·steps uniforms are drawn (from ``source``), in few calls."""
    log_stay, total = math.log1p(-rate), n * steps
    chosen, position = [], -1
    while position < total:
        gaps = np.floor(np.log(source.uniform(max(64, int(1.1 * rate * (total - position)) + 64))) / log_stay)
        slots = position + np.cumsum(gaps.astype(np.int64) + 1)
        chosen.append(slots[slots < total])
        position = int(slots[-1])
    slots = np.concatenate(chosen)
    bounds = np.searchsorted(slots, np.arange(steps + 1) * n)
    return [slots[bounds[k] : bounds[k + 1]] - k * n for k in range(steps)]


#: Relative shrink of a clipped gradient's factor: it covers the rounding of a computed norm over up
#: to thousands of parameters, so a clipped row's computed norm stays ≤ C.
_CLIP_MARGIN = 1.0 - 2.0**-40


def _clipped_sum(jacobian: np.ndarray, clip: float) -> np.ndarray:
    """Σᵢ gᵢ·min(1, C/‖gᵢ‖)·(1 − 2⁻⁴⁰ where clipped) over the rows of the per-record gradients.

    The squared norms are summed directly (one pass, a third of the time of the library's
    overflow-safe :func:`~pm_private.privacy.projection.row_scale_factors`, which serves where a
    squared norm would overflow or an entry is not finite)."""
    squares = np.einsum("ij,ij->i", jacobian, jacobian)
    if not np.isfinite(squares).all():
        return row_scale_factors(jacobian, clip) @ jacobian
    norms = np.sqrt(squares)
    return np.where(norms > clip, clip / np.where(norms > clip, norms, 1.0) * _CLIP_MARGIN, 1.0) @ jacobian


def dp_sgld(
    model=None,
    *,
    epsilon: float,
    delta: float,
    sampling_rate: float,
    clip: float,
    draws: int = 1000,
    tune: int = 1000,
    chains: int = 2,
    accountant=None,
    rng=None,
    progressbar: bool = True,
    scale: dict | None = None,
    initvals: dict | None = None,
    clip_share: float = CLIP_SHARE,
    thin: int | None = None,
):
    """Differentially private SGLD draws from a PyMC model's posterior (module notes), and the
    share of clipped gradients at the chains' ends, released within the same (ε, δ).

    Parameters
    ----------
    model : pymc.Model, optional
        The model (default: the model of the current context).  Its observed variables hold one
        row per record along their first axis (the same n for all); every data array of the
        likelihood whose first axis has length n is a column of the records.  The chains start
        at its initial point (or ``initvals``), which must be public: the priors' (the default),
        or values taken from an earlier private release (post-processing), never from the data.
    epsilon : float
        The whole run's ε, > 0.
    delta : float
        The whole run's δ, in (0, 1).
    sampling_rate : float
        q in (0, 1): each record's probability of being in a step's subsample.
    clip : float
        C > 0: each record's log-likelihood gradient (on the unconstrained parameters) is clipped
        to norm C.
    draws : int, default 1000
        Draws kept per chain.
    tune : int, default 1000
        Warm-up draws per chain, of ``thin`` steps each (charged, not kept).
    chains : int, default 2
        Chains, each from the model's initial point.
    accountant : PrivacyAccountant, optional
        Charged the whole run before any record is read.
    rng : None, int or numpy.random.Generator
        None: the secure OS generator (private).  A seed: reproducible and **not private**.
    progressbar : bool, default True
        Show the steps taken and the ε they have spent so far, out of the run's ε (the ε of the
        steps taken, composed as the plan composes them; public, as it depends on the plan and the
        step count only).  The whole run is charged before the first step, whatever the display.
    scale : dict, optional
        A public diagonal preconditioner (module notes): ``{free variable name: s}``, s a number
        or an array of the variable's shape, in [10⁻⁶, 10⁶], the scale of the variable's
        unconstrained value (of log τ for a positive τ); variables not named take 1.  Fixed
        before the run, from public knowledge only (prior scales, a published earlier fit),
        never from the data.  The guarantee and the plan do not change.
    initvals : dict, optional
        The chains' start, as ``pm.sample``'s: ``{free variable name: value}`` on the variable's
        own scale (τ, not log τ); variables not named start at the model's initial point.  Public
        values only: the posterior mean of an earlier private release's fit (post-processing of
        that release, which spent its own ε), a published estimate, never the data.
    clip_share : float, default 0.05
        The share of the run's privacy loss (its zCDP cost) that sizes the release of the share
        of records whose gradient is longer than C at the chains' last draws
        (:mod:`pm_private.sampling.clipped_share`); the steps compose with it to the run's
        (ε, δ).  0 (no report) or in [0.001, 0.5].
    thin : int, optional
        Steps per draw, warm-up included: a chain takes (``tune`` + ``draws``)·``thin`` steps and
        keeps the last of every ``thin`` after the warm-up.  All of them are planned and charged,
        so at the same ε a larger ``thin`` takes smaller steps over about the same Langevin time:
        a finer discretisation, for ``thin`` times the work.  Where ε is large the privacy allows
        steps large enough to widen and bias the draws (the Samplers page measures where).
        Default: the smallest power of two that brings the step size to 1/(n·C²) or below
        (:func:`plan_dp_sgld`).

    Returns
    -------
    xarray.DataTree
        ``posterior`` with every free and deterministic variable (chain, draw, …); its attributes
        state the guarantee (ε, δ, neighbours, mechanism, private), the plan (q, C, η, z, steps)
        and, with the report, ``clipped_share`` (the released share, in [0, 1]) and
        ``clipped_share_sd`` (its noise s.d.).

    Warns
    -----
    ClippingWarning
        When the released share of clipped gradients exceeds one half by two noise s.d.s (the
        draws then follow the clipped score, not the posterior).

    Raises
    ------
    TypeError
        If ``model`` is not a PyMC model (nothing is spent).
    ValueError
        Naming the argument, before anything is spent.
    BudgetExceededError
        If ``accountant`` cannot afford the run (nothing is drawn).

    Notes
    -----
    Privacy: (ε, δ)-DP under replace-one neighbours, the unit a record, n public, for the whole
    published chain (every step of every chain composed, warm-up included, and the noisy counts
    of clipped gradients, Gaussian noise on a vector of replace-one sensitivity √chains).  Public:
    n, q, C, η, ``thin``, ``clip_share``, the number of steps and chains, the model, its initial
    point (``initvals``) and the preconditioner's scales.  Exact up to the
    floating-point Gaussian and geometric samplers and the ledger's pessimistic PLD
    discretisation.  References: Welling & Teh 2011; Wang, Fienberg & Smola 2015; Li, Chen, Liu &
    Carin 2019; Heller & Fetaya 2023.

    Examples
    --------
    >>> import numpy as np, pymc as pm
    >>> from pm_private.sampling import dp_sgld
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 2))
    >>> y = rng.uniform(size=2000) < 1 / (1 + np.exp(-(X @ [1.0, -0.5])))
    >>> with pm.Model() as model:
    ...     beta = pm.Normal("beta", 0, 2, shape=2)
    ...     likelihood = pm.Bernoulli("y", logit_p=pm.math.dot(X, beta), observed=y)
    >>> idata = dp_sgld(model, epsilon=1.0, delta=1e-5, sampling_rate=0.05, clip=2.0,
    ...                 draws=200, tune=200, rng=1, progressbar=False)  # a seed: reproducible, not private
    >>> idata.posterior["beta"].shape, idata.attrs["private"]
    ((2, 200, 2), 0)
    """
    import pymc as pm

    model = pm.modelcontext(model)
    if not isinstance(model, pm.Model):
        raise TypeError(f"model must be a pymc.Model, got {type(model).__name__}")
    draws, tune = check_count("draws", draws, maximum=_MOST_STEPS), check_count("tune", tune, maximum=_MOST_STEPS)
    check_count("chains", chains, maximum=_MOST_CHAINS)
    progressbar = check_bool("progressbar", progressbar)
    point = start_point(model, initvals)
    scales = scale_vector(model, point, scale)
    gradients, n, start, to_draw = _gradient_functions(model, point)
    plan = plan_dp_sgld(
        epsilon, delta, n=n, sampling_rate=sampling_rate, clip=clip, steps=tune + draws, chains=chains,
        clip_share=clip_share, thin=thin,
    )  # fmt: skip
    source = as_noise_source(rng)
    label = (
        f"n={n}, q={plan.sampling_rate:g}, C={plan.clip:g}, z={plan.noise_multiplier:.4g}, "
        f"{plan.chains} × {plan.steps} Poisson-subsampled Gaussian steps"
        + ("" if scales is None else ", public diagonal preconditioner")
        + ("" if plan.report_sd is None else f", clipped share (σ {plan.report_sd:.4g} per chain's count)")
    )
    with release_guard(accountant, DP_SGLD_MECHANISM, plan.epsilon, plan.delta, label=label, noise=plan.noise_events()):
        with _Progress(plan, progressbar) as progress:
            kept = [
                _chain(gradients, start, plan, source, tune, draws, progress.advance, scales, plan.thin)
                for _ in range(plan.chains)
            ]
            report = None
            if plan.report_sd is not None:
                counts = clipped_counts(gradients, [chain[-1] for chain in kept], n, plan.clip, scales)
                report = release_clipped_share(counts, plan.report_sd, n, source, plan.clip)
                progress.reported()
    return _result(kept, to_draw, plan, source.secure, scales is not None, report)


class _Progress:
    """A display of a run's steps and of the ε its steps so far have spent: the plan's composition
    cut at the step count (its ledger event with ``count`` the steps taken).  The steps are counted
    per block; the ε, a privacy-loss composition of a few milliseconds, is recomputed once a
    hundredth of the run has passed since the last one, and at its end."""

    def __init__(self, plan: DPSGLDPlan, enabled: bool):
        self.plan, self.enabled, self.done, self.shown = plan, bool(enabled), 0, 0
        self.total = plan.steps * plan.chains

    def __enter__(self):
        if self.enabled:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            self.bar = Progress(
                TextColumn("DP-SGLD"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("steps, ε spent {task.fields[spent]:.3g} of {task.fields[planned]:.3g}"),
                TimeRemainingColumn(),
            )
            self.bar.start()
            self.task = self.bar.add_task("run", total=self.total, spent=0.0, planned=self.plan.epsilon)
        return self

    def advance(self, steps: int) -> None:
        """Count ``steps`` more steps taken and show the ε of all taken so far."""
        self.done += steps
        if not self.enabled:
            return
        if 100 * (self.done - self.shown) < self.total and self.done < self.total:
            self.bar.update(self.task, advance=steps)
            return
        self.shown = self.done
        spent = implied_epsilon(self.plan.noise_events(self.done, report=False), self.plan.delta)
        self.bar.update(self.task, advance=steps, spent=spent)

    def reported(self) -> None:
        """Show the ε of all the steps and of the report of clipped gradients: the run's."""
        if self.enabled:
            self.bar.update(self.task, spent=implied_epsilon(self.plan.noise_events(), self.plan.delta))

    def __exit__(self, *exc):
        if self.enabled:
            self.bar.stop()


def _chain(
    gradients, start, plan: DPSGLDPlan, source, tune: int, draws: int, advance=None, scale=None, thin: int = 1
) -> np.ndarray:
    """One chain's kept draws, the last of every ``thin`` steps after ``tune``·``thin`` warm-up
    steps; the noise (subsamples and Langevin noise, independent of the data) is drawn in blocks
    of steps, and ``advance(steps)`` is called after each block.  With ``scale`` s, the step is
    taken on u = θ/s (module notes)."""
    eta, rate, block = plan.step_size, plan.sampling_rate, 256
    total, warm_up = (tune + draws) * thin, tune * thin
    theta, kept = start.copy(), np.empty((draws, start.size))
    for first in range(0, total, block):
        size = min(block, total - first)
        subsamples = _subsamples(source, plan.n, rate, size)
        noise = math.sqrt(eta) * source.normal((size, theta.size))
        for k in range(size):
            jacobian, prior = gradients(theta, subsamples[k])
            if scale is not None:  # the gradients with respect to u = θ/s
                jacobian, prior = jacobian * scale, prior * scale
            step = 0.5 * eta * (prior + _clipped_sum(jacobian, plan.clip) / rate) + noise[k]
            theta = theta + (step if scale is None else scale * step)
            after = first + k + 1 - warm_up  # steps taken after the warm-up
            if after > 0 and after % thin == 0:
                kept[after // thin - 1] = theta
        if advance is not None:
            advance(size)
    return kept


def _result(kept, to_draw, plan: DPSGLDPlan, private: bool, preconditioned: bool = False, report=None):
    import arviz as az

    per_chain = [[to_draw(flat) for flat in chain] for chain in kept]
    names = list(per_chain[0][0])
    posterior = {name: np.array([[d[name] for d in chain] for chain in per_chain]) for name in names}
    attrs = dict(
        epsilon=plan.epsilon,
        delta=plan.delta,
        neighbours="replace-one",
        mechanism=DP_SGLD_MECHANISM,
        private=int(private),
        sampling_rate=plan.sampling_rate,
        clip=plan.clip,
        step_size=plan.step_size,
        noise_multiplier=plan.noise_multiplier,
        steps_per_chain=plan.steps,
        thin=plan.thin,
        preconditioned=int(preconditioned),
    )
    if report is not None:
        attrs.update(clipped_share=report[0], clipped_share_sd=report[1])
    result = az.from_dict({"posterior": posterior})
    result.attrs.update(attrs)
    return result

"""Preconditioned stochastic-gradient Langevin dynamics (pSGLD) as a PyMC step method.

One update (Li, Chen, Carlson & Carin 2016, Alg. 1; Nguyên & Hui (2017a) Alg. 4 with its line 8 corrected):

    V ← μ·V + (1 − μ)·ḡ⊙ḡ,    G = 1/(λ + √V),
    θ ← θ + (h_t/2)·G⊙ḡ + N(0, h_t·G),    h_t = a·(b + t)^(−τ),

with ḡ an unbiased minibatch estimate of ∇log p(θ).  Nguyên & Hui (2017a) line 8 moves by h_t·G⊙ḡ with the
same noise; that Langevin diffusion targets p², i.e. exp(2·εU/(2v)), twice the stated ε (a test shows the variance coming out halved).

Design choices:

* **Minibatches.**  Records of a :func:`pm_private.sanitized_loss` term sit in full-size shared
  variables; the step owns the minibatch: it draws k distinct indices per update (as Alg. 4) from
  its own generator, and its compiled gradient sees the records replaced by ``records[idx]`` and
  the record-sum multiplier by n/k.  Each record is in the batch with probability k/n, so the
  estimate of Σᵢ C_v(ℓᵢ) is unbiased; the regulariser and any prior are not scaled.  Ordinary
  models may use ``pm.Minibatch`` data with ``total_size`` (PyMC scales the observed term only):
  its in-graph generator is advanced by the compiled function's updates on every call and
  reseeded per chain from ``random_seed``.  Models with neither get the full gradient.
* **Step sizes.**  t = 1, 2, … counts updates from the start of each chain, tuning included;
  a decaying step makes the chain asymptotically exact, a constant one leaves an O(h) bias.
  Defaults a = 1, b = 10, τ = 1/3 (the decay Teh, Thiery & Vollmer 2016 find optimal for SGLD)
  pass the standard-normal test with no arguments; the paper used a = 1, b = 0, τ = 0.51.  h is
  a length: at stationarity G ≈ the posterior sd s of a Gaussian coordinate, the update is stable
  for h < 4s and its variance bias is about h/(4s), so choose a ≪ s when s ≪ 1.
* **Preconditioner.**  Li et al. drop the correction Γᵢ(θ) = Σⱼ ∂Gᵢⱼ/∂θⱼ.  With V updated at
  every update, G follows the chain's recent path and the chain targets about p(θ)/G(θ) instead
  of p: on a standard normal the variance comes out about 10 % high at μ = 0.99 for h from 0.2
  down to 0.05 (it grows as h shrinks).  That bias vanishes only when the averaging window
  1/(1 − μ) is long against the chain's mixing time (~1/h updates): μ → 1 faster than h → 0.
  PSGLD therefore learns V while tuning and freezes it when sampling starts
  (``freeze_preconditioner=True``): with G constant Γ ≡ 0 and the chain is exact as h → 0.
  ``freeze_preconditioner=False`` keeps Li et al.'s (and Alg. 4's) running V.  V starts at
  ḡ₁⊙ḡ₁ + 1: the first gradient's scale (as bias-corrected RMSprop) and unit scale, as NUTS
  starts, where the chain starts at a stationary point (ḡ₁ = 0 would give G = 1/λ).
* **Thinning.**  Each draw PyMC records is the last of ``thin`` updates (tuning draws too), so
  ``pm.sample(draws=D, tune=T)`` runs (T + D)·thin updates and stores D draws.
* **Compiled updates.**  With PyTensor's default (Numba) backend the ``thin`` updates of a draw
  run in one Numba loop that calls the compiled gradient graph directly: minibatch indices
  (Floyd's algorithm, k distinct), gradient, preconditioner, step size and noise never return to
  Python, so the per-update cost is the gradient's.  Models with an in-graph random generator
  (``pm.Minibatch``), more than one sanitized term, or another backend (``mode="CVM"``) run the
  same update in a Python loop, and so does a subclass that overrides ``_move`` or
  ``_update_preconditioner``.
* **Recorded statistics.**  By default only ``step_size`` and ``tune`` are recorded (and shown
  in the progress bar): both depend on the settings and the update count only, never on the
  data.  ``record_loss=True`` adds ``minibatch_loss`` and the range of G for diagnostics; these
  are functions of the records (with ``batch_size=1`` the loss is one record's clipped loss) and
  must not be published with a private posterior.
* **Randomness.**  The minibatch indices and the Langevin noise N(0, h·G) come from the chain's
  numpy generator, which ``pm.sample`` gives each chain through ``setup_chain`` (PCG64; numpy's
  ziggurat normals, in the Numba loop as in Python).  This noise is floating point: continuous
  normals in float64 added to a float position, with no exact (discrete) counterpart; it only
  drives the chain, whose draws are approximately private anyway.  Its seed is whatever
  ``pm.sample`` was given: a ``random_seed`` makes the chain replayable against candidate
  data sets, so draws meant for publication are sampled with
  :func:`pm_private.sampling.secure_sample`, which seeds every chain from 256 bits of
  ``os.urandom`` (:func:`pm_private.privacy.noise.secure_generator`).
* **Privacy.**  PSGLD is a sampler, not a mechanism, and charges nothing: the ε is charged by the
  sanitized-loss term, whose guarantee holds for exact sampling only (label "approximate (MCMC)"),
  and by :func:`pm_private.sampling.publishable` for every published draw beyond the first.
"""

from __future__ import annotations

import math
from dataclasses import field

import numba
import numpy as np
import pymc as pm
import pytensor
import pytensor.tensor as pt
from pymc.exceptions import SamplingError
from pymc.pytensorf import compile as compile_pymc
from pymc.pytensorf import join_nonshared_inputs, reseed_rngs, rewrite_pregrad
from pymc.step_methods.arraystep import ArrayStepShared
from pymc.step_methods.compound import StepMethodState
from pymc.step_methods.state import dataclass_state
from pymc.util import get_value_vars_from_user_vars
from pymc.vartypes import continuous_types
from pytensor.graph.replace import graph_replace
from pytensor.graph.traversal import graph_inputs
from rich.progress import TextColumn
from rich.table import Column

from ..privacy.validation import check_count, check_positive

__all__ = ["PSGLD"]

#: Records per minibatch when ``batch_size`` is not given (Nguyên & Hui 2017a, §6.2).
DEFAULT_BATCH_SIZE = 200


@dataclass_state
class PSGLDState(StepMethodState):
    t: int
    V: np.ndarray | None = field(default=None)
    precond: np.ndarray | None = field(default=None)
    tune: bool = field(default=True)


def _check_unit_interval(name: str, value) -> float:
    value = float(value)
    if not 0.0 <= value < 1.0:
        raise ValueError(f"{name} must be in [0, 1), got {value!r}")
    return value


@numba.njit(cache=True)
def _distinct_indices(rng, n, k, mark):
    """k distinct indices uniform among the k-subsets of 0 … n−1 (Floyd's algorithm); ``mark``
    is an all-False boolean work array of length n and is left all False."""
    idx = np.empty(k, dtype=np.int64)
    for m in range(k):
        j = n - k + m
        t = rng.integers(0, j + 1)
        if mark[t]:
            t = j
        mark[t] = True
        idx[m] = t
    for m in range(k):
        mark[idx[m]] = False
    return idx


def _compiled_updates(graph_fn, minibatch: bool):
    """A Numba loop of ``thin`` pSGLD updates around ``graph_fn`` (the Numba function of the
    compiled (logp, grad) graph, called as graph_fn(q, [idx,] *shared_values))."""

    @numba.njit
    def updates(q, V, precond, have_v, t, thin, a, b, tau, mu, lam, adapt, n, k, rng, mark, shared):
        loss, h = 0.0, 0.0
        for _ in range(thin):
            if minibatch:
                out = graph_fn(q, _distinct_indices(rng, n, k, mark), *shared)
            else:
                out = graph_fn(q, *shared)
            logp, grad = out[0][()], out[1]
            if not have_v or adapt:
                if have_v:
                    V = mu * V + (1.0 - mu) * grad * grad
                else:
                    V = grad * grad + 1.0
                    have_v = True
                precond = 1.0 / (lam + np.sqrt(V))
            t += 1
            h = a * (b + t) ** -tau
            q = q + (0.5 * h) * precond * grad + np.sqrt(h * precond) * rng.standard_normal(q.shape[0])
            loss -= logp
            if not (np.isfinite(logp) and np.isfinite(q).all()):
                return q, V, precond, t, h, np.nan
        return q, V, precond, t, h, loss / thin

    return updates


def _sampled_vars(model, vars):
    """The value variables PSGLD moves: ``vars`` (default: the model's continuous ones), each
    continuous, at least one."""
    if vars is None:
        vars = model.continuous_value_vars
    else:
        vars = get_value_vars_from_user_vars(vars, model)
    for var in vars:
        if var.dtype not in continuous_types:
            raise ValueError(f"PSGLD samples continuous variables only; {var.name!r} has dtype {var.dtype}")
    if not vars:
        raise ValueError("PSGLD found no continuous variables to sample")
    return vars


class PSGLD(ArrayStepShared):
    """pSGLD step method (Li et al. 2016; Nguyên & Hui (2017a) Alg. 4 with the drift (h/2)·G·ḡ).

    Parameters
    ----------
    vars : list, optional
        Continuous variables to sample (default: all continuous free variables).
    batch_size : int, optional
        k, records per update of each :func:`~pm_private.sanitized_loss` term, 1 ≤ k ≤ n
        (default min(200, n)); only for models with such terms.
    a, b, tau : float
        Step size h_t = a·(b + t)^(−τ), a > 0, b ≥ 0, τ ≥ 0 (τ = 0: constant step a·…).
    mu, lam : float
        RMSprop decay μ ∈ [0, 1) and floor λ > 0 of G = 1/(λ + √V).
    thin : int
        Updates per recorded draw, ≥ 1.
    freeze_preconditioner : bool
        Learn V while tuning only (default; exact as h → 0) or at every update (Li et al.).
    record_loss : bool
        Also record ``minibatch_loss`` (mean of the minibatch estimate of −log p over the draw's
        updates) and ``precond_min``/``precond_max`` (range of G), and show the loss in the
        progress bar.  These are computed from the records and are **not private**: with
        ``batch_size=1`` the loss is one record's clipped loss.  Default False.
    model : pymc.Model, optional
        The model (default: the model of the enclosing ``with`` block).
    blocked : bool, default True
        Passed to PyMC's step-method base class (the variables are updated together).
    rng : None, int or numpy.random.Generator
        Seed of the sampler's injected noise; ``pm.sample`` replaces it per chain with a
        generator derived from its ``random_seed`` (:func:`~pm_private.sampling.secure_sample`:
        from ``os.urandom``).  The noise is floating point (numpy normals).
    initial_point : dict, optional
        The model's initial point (default: computed from the model).
    compile_kwargs : dict, optional
        Passed to the PyTensor compilation of the gradient, e.g. ``{"mode": "CVM"}``; the
        default (Numba) backend runs each draw's updates in one compiled loop.

    Raises
    ------
    ValueError
        For a setting out of its range, a variable that is not continuous, or a model without
        continuous variables.
    TypeError
        If ``record_loss`` is not a bool.

    Notes
    -----
    Sample stats: ``step_size`` (h of the last update) and ``tune``, which depend only on the
    settings and the update count; with ``record_loss=True`` also the data-dependent
    diagnostics above.
    """

    name = "psgld"
    default_blocked = True
    _state_class = PSGLDState
    stats_dtypes_shapes = {"step_size": (np.float64, []), "tune": (bool, [])}
    #: Data-dependent statistics recorded only with ``record_loss=True`` (not private).
    diagnostic_stats = {
        "precond_min": (np.float64, []),
        "precond_max": (np.float64, []),
        "minibatch_loss": (np.float64, []),
    }

    def __init__(
        self,
        vars=None,
        *,
        batch_size: int | None = None,
        a: float = 1.0,
        b: float = 10.0,
        tau: float = 1.0 / 3.0,
        mu: float = 0.99,
        lam: float = 1e-5,
        thin: int = 1,
        freeze_preconditioner: bool = True,
        record_loss: bool = False,
        model=None,
        blocked: bool = True,
        rng=None,
        initial_point=None,
        compile_kwargs: dict | None = None,
    ):
        model = pm.modelcontext(model)
        self.a = check_positive("a", a)
        self.b = float(b)
        self.tau = float(tau)
        if not (math.isfinite(self.b) and self.b >= 0):
            raise ValueError(f"b must be finite and ≥ 0, got {b!r}")
        if not (math.isfinite(self.tau) and self.tau >= 0):
            raise ValueError(f"tau must be finite and ≥ 0, got {tau!r}")
        self.mu = _check_unit_interval("mu", mu)
        self.lam = check_positive("lam", lam)
        self.thin = check_count("thin", thin, 1)
        self.freeze_preconditioner = bool(freeze_preconditioner)
        if not isinstance(record_loss, bool | np.bool_):
            raise TypeError(f"record_loss must be True or False, got {record_loss!r}")
        self.record_loss = bool(record_loss)
        stats = dict(type(self).stats_dtypes_shapes)
        if self.record_loss:
            stats.update(self.diagnostic_stats)
        self.stats_dtypes_shapes = stats
        self.stats_dtypes = [{key: dtype for key, (dtype, _) in stats.items()}]

        vars = _sampled_vars(model, vars)
        if initial_point is None:
            initial_point = model.initial_point()

        cost, self._batches, idx_vars = self._minibatch_logp(model, batch_size)
        inputs = set(graph_inputs([cost]))
        shared = {
            var: pytensor.shared(initial_point[var.name], f"{var.name}_shared__")
            for var in model.value_vars
            if var not in vars and var in inputs
        }
        cost = rewrite_pregrad(cost)
        grad = pt.concatenate([g.ravel() for g in pt.grad(cost, vars)])
        outputs, raveled = join_nonshared_inputs(
            point=initial_point, outputs=[cost, grad], inputs=vars, make_inputs_shared=False
        )
        self._fn, rng_updates = compile_pymc(
            [raveled, *idx_vars],
            outputs,
            givens=list(shared.items()),
            return_updates=True,
            **(compile_kwargs or {}),
        )
        self._fn.trust_input = True
        self._graph_rngs = list(rng_updates)
        self._n_explicit = 1 + len(idx_vars)
        jit_fn = getattr(self._fn.vm, "jit_fn", None)
        own_update = all(getattr(type(self), m) is getattr(PSGLD, m) for m in ("_move", "_update_preconditioner"))
        if jit_fn is not None and not self._graph_rngs and len(idx_vars) <= 1 and own_update:
            self._updates = _compiled_updates(jit_fn, minibatch=bool(idx_vars))
        else:  # other backends, in-graph generators, several sanitized terms, or a subclass's update
            self._updates = None
        self._mark = None
        self.t = 0
        self.V = self.precond = None
        self.tune = True
        super().__init__(vars, shared, blocked, rng=rng)

    @staticmethod
    def _minibatch_logp(model, batch_size):
        """Model logp with each sanitized term's records → records[idx] and multiplier → n/k."""
        terms = [p.tag.minibatch_records for p in model.potentials if hasattr(p.tag, "minibatch_records")]
        if batch_size is not None and not terms:
            raise ValueError(
                "batch_size applies to the records of sanitized_loss terms and this model has "
                "none; minibatch ordinary models with pm.Minibatch(..., batch_size=k)"
            )
        replacements, batches, idx_vars = {}, [], []
        for term in terms:
            k = min(DEFAULT_BATCH_SIZE, term.n) if batch_size is None else batch_size
            k = check_count("batch_size", k, 1, term.n)
            idx = pt.lvector(f"{term.scale.name}_idx")
            replacements.update({records: records[idx] for records in term.records})
            replacements[term.scale] = pt.constant(term.n / k, dtype=term.scale.dtype)
            batches.append((term.n, k))
            idx_vars.append(idx)
        cost = model.logp()
        if replacements:
            cost = graph_replace(cost, replacements, strict=False)
        return cost, batches, idx_vars

    def setup_chain(self, rng, tune: int, draws: int) -> None:
        """Start a chain: reset the update count and the preconditioner, reseed the minibatches.

        Called by ``pm.sample`` before each chain (PyMC's step-method interface).

        Parameters
        ----------
        rng : numpy.random.Generator
            The chain's generator.
        tune : int
            The number of tuning draws.
        draws : int
            The number of draws kept.
        """
        super().setup_chain(rng, tune, draws)
        self.t = 0
        self.V = self.precond = None
        if self._graph_rngs:
            reseed_rngs(self._graph_rngs, self.rng.integers(2**63))

    def _update_preconditioner(self, grad):
        """V ← μ·V + (1 − μ)·ḡ⊙ḡ (first V = ḡ⊙ḡ + 1), G = 1/(λ + √V)."""
        square = grad * grad
        self.V = square + 1.0 if self.V is None else self.mu * self.V + (1.0 - self.mu) * square
        self.precond = 1.0 / (self.lam + np.sqrt(self.V))

    def _move(self, q, grad, precond, h, noise):
        """θ + (h/2)·G⊙ḡ + N(0, h·G) (Li et al. 2016)."""
        return q + (0.5 * h) * precond * grad + np.sqrt(h * precond) * noise

    def _python_updates(self, q):
        """``thin`` updates in Python (any backend); returns (q, h, mean minibatch loss)."""
        noise = self.rng.standard_normal((self.thin, q.size))
        adapt = self.tune or not self.freeze_preconditioner
        loss = 0.0
        for i in range(self.thin):
            idx = [self.rng.choice(n, k, replace=False, shuffle=False) for n, k in self._batches]
            logp, grad = self._fn(q, *idx)
            if self.V is None or adapt:
                self._update_preconditioner(grad)
            self.t += 1
            h = self.a * (self.b + self.t) ** -self.tau
            q = self._move(q, grad, self.precond, h, noise[i])
            loss -= float(logp)
        return q, h, loss / self.thin

    def _numba_updates(self, q):
        """``thin`` updates in one compiled loop (Numba backend); same update as :meth:`_python_updates`."""
        n, k = self._batches[0] if self._batches else (1, 1)
        if self._mark is None or self._mark.size != n:
            self._mark = np.zeros(n, dtype=np.bool_)
        have_v = self.V is not None
        V = self.V if have_v else np.ones_like(q)
        precond = self.precond if have_v else np.ones_like(q)
        shared = tuple(cell[0] for cell in self._fn.vm.inputs[self._n_explicit :])
        adapt = self.tune or not self.freeze_preconditioner
        q, self.V, self.precond, self.t, h, loss = self._updates(
            q,
            V,
            precond,
            have_v,
            self.t,
            self.thin,
            self.a,
            self.b,
            self.tau,
            self.mu,
            self.lam,
            adapt,
            n,
            k,
            self.rng,
            self._mark,
            shared,
        )
        return q, h, loss

    def astep(self, q0):
        """Advance the chain by one draw (``thin`` updates); PyMC's step-method interface.

        Parameters
        ----------
        q0 : RaveledVars
            The current position, raveled.

        Returns
        -------
        q : numpy.ndarray
            The new position, raveled.
        stats : list of dict
            The sample stats of the draw.

        Raises
        ------
        SamplingError
            If the log-density or the position becomes non-finite (lower the step size ``a``).
        """
        q = np.ascontiguousarray(q0.data, dtype=np.float64)
        update = self._numba_updates if self._updates is not None else self._python_updates
        q, h, loss = update(q)
        if not (math.isfinite(loss) and np.isfinite(q).all()):
            raise SamplingError(
                f"PSGLD diverged by update {self.t} (non-finite log-density or position); "
                f"lower the step size a (now {self.a:g})"
            )
        stats = {"step_size": h, "tune": self.tune}
        if self.record_loss:
            stats.update(
                precond_min=float(self.precond.min()),
                precond_max=float(self.precond.max()),
                minibatch_loss=loss,
            )
        return q, [stats]

    def _progress_keys(self):
        keys = [("step_size", "0.2e", "Step size")]
        if self.record_loss:
            keys += [("minibatch_loss", "0.4g", "Minibatch loss"), ("precond_max", "0.2e", "Max G")]
        return keys

    def _progressbar_config(self, n_chains=1):
        keys = self._progress_keys()
        columns = [
            TextColumn(f"{{task.fields[{key}]:{fmt}}}", table_column=Column(header, ratio=1))
            for key, fmt, header in keys
        ]
        stats = {key: [0.0] * n_chains for key, _, _ in keys}
        return columns, stats

    def _make_progressbar_update_functions(self):
        names = [key for key, _, _ in self._progress_keys()]

        def update_stats(stats):
            return {key: stats[key] for key in names}

        return (update_stats,)

    def __getstate__(self):
        # the compiled loop is a closure over the Numba graph function: rebuilt after unpickling
        state = self.__dict__.copy()
        state["_updates"] = state["_updates"] is not None
        state["_mark"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        if self._updates:
            self._updates = _compiled_updates(self._fn.vm.jit_fn, minibatch=bool(self._batches))
        else:
            self._updates = None

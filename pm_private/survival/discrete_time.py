"""Discrete-time hazard regression (paper 000 §2.2–3.3, SPEC §3) in PyTensor, NumPy and PyMC.

Time [0, 1] is cut into q intervals s = 0 … q−1, s = (s/q, (s+1)/q]; record i has covariates xᵢ,
the interval kᵢ in which it died (δᵢ = 1) or was censored (δᵢ = 0), and was at risk in
intervals 0 … kᵢ.  With a link g ∈ {logit, cloglog, probit} the hazard in interval s is

    g(h_is) = z_is = γ_s + xᵢᵀβ,     γ_s = A_s α   (A = spline basis at the intervals, (q, e)),

and the per-record loss (negative log-likelihood, paper 000 Eq. 3 for the logit link) is

    ℓ(f; dᵢ) = Σ_{s<kᵢ} c(z_is) + δᵢ a(z_ik) + (1 − δᵢ) c(z_ik),   f = (α, β),
    a(z) = −log h(z),  c(z) = −log(1 − h(z))    (logit: a(z) = log(1 + e^(−z)), c(z) = log(1 + e^z)).

Which time A_s uses is fixed by the basis passed in; :func:`pm_private.survival.spline.interval_basis`
evaluates it at the interval midpoint (s + ½)/q.  Passing the identity matrix as basis gives free
per-interval baseline effects (α = γ, e = q).

No person-period table is built.  ηᵢ = xᵢᵀβ and γ = Aα are computed once, and only
z_is = γ_s + ηᵢ is formed: for the logit link by a compiled (Numba) PyTensor Op that visits the
Σᵢ(kᵢ + 1) at-risk record-intervals in one pass with O(n + q) memory; for cloglog and probit by
an (n, q) elementwise graph masked to s < kᵢ; in NumPy by (n, q) arrays (X is never copied per
interval).  :func:`expand_person_period` builds the explicit table only for checks and benchmarks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numba
import numpy as np
import pytensor.tensor as pt
from pytensor.gradient import DisconnectedType
from pytensor.graph.basic import Apply
from pytensor.graph.op import Op
from scipy import special

from .spline import interval_basis

__all__ = [
    "LINKS",
    "DiscreteTimeData",
    "FitResult",
    "SimulatedDiscreteTime",
    "record_loss",
    "hazard_record_loss",
    "record_loss_numpy",
    "record_grad_numpy",
    "loss_and_grad",
    "fit_discrete_time",
    "DiscreteTimeHazard",
    "discrete_time_model",
    "expand_person_period",
    "simulate_discrete_time",
]

#: Supported links g of the hazard: g(h) = γ_s + xᵀβ.
LINKS = ("logit", "cloglog", "probit")


def _check_link(link: str) -> str:
    if link not in LINKS:
        raise ValueError(f"link must be one of {LINKS}, got {link!r}")
    return link


# ---------------------------------------------------------------------------------------------
# Data container
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class DiscreteTimeData:
    """Records (X, interval, event) and the public basis A of the discrete-time model.

    ``X`` (n, d) float64, ``interval`` (n,) int64 in 0 … q−1, ``event`` (n,) int8 in {0, 1},
    ``basis`` (q, e).  Arrays are validated and made read-only.  Use :meth:`from_times` to build
    one from times already scaled into [0, 1].
    """

    X: np.ndarray
    interval: np.ndarray
    event: np.ndarray
    basis: np.ndarray

    def __post_init__(self):
        X = np.array(self.X, dtype=np.float64)
        interval = np.asarray(self.interval)
        event = np.asarray(self.event)
        basis = np.array(self.basis, dtype=np.float64)
        if X.ndim != 2 or X.shape[0] == 0:
            raise ValueError(f"X must be 2-D (n records × d covariates) with n ≥ 1, got shape {X.shape}")
        n = X.shape[0]
        if not np.isfinite(X).all():
            raise ValueError("X contains NaN or infinite values")
        if basis.ndim != 2 or not np.isfinite(basis).all():
            raise ValueError(f"basis must be a finite (q, e) matrix, got shape {basis.shape}")
        if interval.shape != (n,) or event.shape != (n,):
            raise ValueError(f"interval and event must have shape ({n},), got {interval.shape}, {event.shape}")
        if not np.issubdtype(interval.dtype, np.integer) or interval.min() < 0 or interval.max() >= basis.shape[0]:
            raise ValueError(f"interval must hold integers in 0 … {basis.shape[0] - 1}")
        if not np.isin(event, (0, 1)).all():
            raise ValueError("event must be 0 or 1")
        arrays = {
            "X": X,
            "interval": interval.astype(np.int64),
            "event": event.astype(np.int8),
            "basis": basis,
        }
        for name, array in arrays.items():
            array.flags.writeable = False
            object.__setattr__(self, name, array)

    @classmethod
    def from_times(cls, X, time, event, *, q: int, e: int = 3, basis=None) -> "DiscreteTimeData":
        """Records from scaled times in [0, 1]: interval = :func:`interval_index` (time, q),
        basis = :func:`interval_basis` (q, e) unless ``basis`` is given."""
        from .data import check_survival, interval_index

        time, event = check_survival(time, event)
        basis = interval_basis(q, e) if basis is None else basis
        return cls(X, interval_index(time, q), event, basis)

    @property
    def n(self) -> int:
        return self.X.shape[0]

    @property
    def d(self) -> int:
        return self.X.shape[1]

    @property
    def q(self) -> int:
        return self.basis.shape[0]

    @property
    def e(self) -> int:
        return self.basis.shape[1]

    @property
    def dim(self) -> int:
        """Length of f = (α, β): e + d."""
        return self.e + self.d

    def subset(self, index) -> "DiscreteTimeData":
        """The records ``index`` (a minibatch), same basis."""
        return DiscreteTimeData(self.X[index], self.interval[index], self.event[index], self.basis)


# ---------------------------------------------------------------------------------------------
# PyTensor
# ---------------------------------------------------------------------------------------------


def _pt_terms(z, link: str):
    """(a(z), c(z)) = (−log h, −log(1 − h)) for cloglog and probit as PyTensor expressions."""
    if link == "cloglog":
        u = pt.exp(z)
        return -pt.log1mexp(-u), u
    # probit: log Φ(z) through erfcx in the lower tail (as pymc's normal_lcdf)
    return -_pt_log_ndtr(z), -_pt_log_ndtr(-z)


def _pt_log_ndtr(x):
    return pt.switch(
        pt.lt(x, -1.0),
        pt.log(pt.erfcx(-x / np.sqrt(2.0)) / 2.0) - pt.sqr(x) / 2.0,
        pt.log1p(-pt.erfc(x / np.sqrt(2.0)) / 2.0),
    )


@numba.njit(cache=True)
def _softplus(z):
    return max(z, 0.0) + np.log1p(np.exp(-abs(z)))


@numba.njit(cache=True)
def _sigmoid(z):
    if z >= 0.0:
        return 1.0 / (1.0 + np.exp(-z))
    u = np.exp(z)
    return u / (1.0 + u)


@numba.njit(cache=True)
def _logit_loss_kernel(gamma, eta, interval, event):
    """ℓᵢ = Σ_{s<kᵢ} softplus(γ_s + ηᵢ) + softplus(∓(γ_kᵢ + ηᵢ)), one pass over the at-risk intervals."""
    loss = np.empty(eta.shape[0])
    for i in range(eta.shape[0]):
        k, total = interval[i], 0.0
        for s in range(k):
            total += _softplus(gamma[s] + eta[i])
        z = gamma[k] + eta[i]
        loss[i] = total + _softplus(-z if event[i] == 1 else z)
    return loss


@numba.njit(cache=True)
def _logit_loss_grad_kernel(gamma, eta, interval, event, weight):
    """Σᵢ weightᵢ ∂ℓᵢ/∂γ and (weightᵢ ∂ℓᵢ/∂ηᵢ)ᵢ; ∂softplus(z)/∂z = σ(z)."""
    d_gamma, d_eta = np.zeros(gamma.shape[0]), np.empty(eta.shape[0])
    for i in range(eta.shape[0]):
        k, total, w = interval[i], 0.0, weight[i]
        for s in range(k):
            p = _sigmoid(gamma[s] + eta[i])
            total += p
            d_gamma[s] += w * p
        p = _sigmoid(gamma[k] + eta[i]) - (1.0 if event[i] == 1 else 0.0)
        d_gamma[k] += w * p
        d_eta[i] = w * (total + p)
    return d_gamma, d_eta


def _check_intervals(gamma, interval):
    if interval.size and (interval.min() < 0 or interval.max() >= gamma.shape[0]):
        raise ValueError(f"interval must lie in 0 … {gamma.shape[0] - 1}")


class _LogitHazardLoss(Op):
    """Per-record logit-link losses from (γ, η, interval, event): O(n + q) memory, one compiled
    (Numba) pass over the Σᵢ(kᵢ + 1) at-risk record-intervals, no (n, q) temporaries."""

    __props__ = ()

    def make_node(self, gamma, eta, interval, event):
        inputs = [
            pt.as_tensor(gamma).astype("float64"),
            pt.as_tensor(eta).astype("float64"),
            pt.as_tensor(interval).astype("int64"),
            pt.as_tensor(event).astype("int8"),
        ]
        return Apply(self, inputs, [pt.dvector()])

    def perform(self, node, inputs, outputs):
        _check_intervals(inputs[0], inputs[2])
        outputs[0][0] = _logit_loss_kernel(*inputs)

    def infer_shape(self, node, shapes):
        return [shapes[1]]

    def connection_pattern(self, node):
        return [[True], [True], [False], [False]]

    def pullback(self, inputs, outputs, cotangents):
        d_gamma, d_eta = _LogitHazardLossGrad()(*inputs, cotangents[0])
        return [d_gamma, d_eta, DisconnectedType()(), DisconnectedType()()]


class _LogitHazardLossGrad(Op):
    """Vector-Jacobian product of :class:`_LogitHazardLoss`: (Σᵢ wᵢ∂ℓᵢ/∂γ, wᵢ∂ℓᵢ/∂ηᵢ)."""

    __props__ = ()

    def make_node(self, gamma, eta, interval, event, weight):
        inputs = [gamma, eta, interval, event, pt.as_tensor(weight).astype("float64")]
        return Apply(self, inputs, [pt.dvector(), pt.dvector()])

    def perform(self, node, inputs, outputs):
        _check_intervals(inputs[0], inputs[2])
        d_gamma, d_eta = _logit_loss_grad_kernel(*inputs)
        outputs[0][0], outputs[1][0] = d_gamma, d_eta

    def infer_shape(self, node, shapes):
        return [shapes[0], shapes[1]]


def hazard_record_loss(gamma, eta, interval, event, link: str = "logit"):
    """Per-record losses ℓᵢ, shape (n,), from the baseline γ (q,) and linear predictors η (n,).

    ℓᵢ = Σ_{s<kᵢ} c(γ_s + ηᵢ) + [δᵢ a + (1 − δᵢ) c](γ_{kᵢ} + ηᵢ)  (module docstring).  Logit:
    a compiled Op that visits only the at-risk record-intervals (memory O(n + q); first
    derivatives only).  cloglog and probit: one fused (n, q) elementwise-and-reduce graph.
    Nothing of size n·q is stored as float data in either case.
    """
    _check_link(link)
    if link == "logit":
        return _LogitHazardLoss()(gamma, eta, interval, event)
    gamma, eta = pt.as_tensor(gamma), pt.as_tensor(eta)
    interval, event = pt.as_tensor(interval), pt.as_tensor(event)
    z = gamma[None, :] + eta[:, None]
    at_risk = pt.lt(pt.arange(gamma.shape[0])[None, :], interval[:, None])
    survived = pt.switch(at_risk, _pt_terms(z, link)[1], 0.0).sum(axis=1)
    died, censored = _pt_terms(gamma[interval] + eta, link)
    return survived + pt.switch(pt.eq(event, 1), died, censored)


def record_loss(f, X, interval, event, basis, link: str = "logit"):
    """PyTensor per-record losses ℓ(f; dᵢ) ≥ 0, shape (n,), for f = concat(α (e), β (d)).

    ``basis`` is the (q, e) matrix A (row s = A_s, see :mod:`.spline`: midpoint (s + ½)/q);
    ``interval`` holds kᵢ ∈ 0 … q−1 and ``event`` δᵢ ∈ {0, 1}.  Works for any n (minibatches):
    the loss of a record does not depend on the others.  Σᵢ ℓᵢ is the negative log-likelihood.
    """
    f, basis = pt.as_tensor(f), pt.as_tensor(basis)
    e = basis.shape[1]
    return hazard_record_loss(basis @ f[:e], pt.as_tensor(X) @ f[e:], interval, event, link)


def DiscreteTimeHazard(name: str, X, interval, event, *, beta, alpha=None, basis=None, baseline=None, link="logit"):
    """Add the discrete-time hazard log-likelihood −Σᵢ ℓᵢ to the current ``pm.Model``.

    Give either ``alpha`` (e,) with the public ``basis`` (q, e) (spline baseline γ = Aα), or
    ``baseline`` (q,), free per-interval effects γ_s.  ``beta`` (d,) are the covariate effects.
    Returns the ``pm.Potential`` named ``name``.
    """
    import pymc as pm

    if (baseline is None) == (alpha is None or basis is None):
        raise ValueError("give either alpha and basis (spline baseline) or baseline (free per-interval)")
    gamma = pt.as_tensor(basis) @ alpha if baseline is None else pt.as_tensor(baseline)
    eta = pt.as_tensor(np.asarray(X, dtype=np.float64)) @ beta
    losses = hazard_record_loss(gamma, eta, np.asarray(interval, dtype=np.int64), np.asarray(event, dtype=np.int8), link)
    return pm.Potential(name, -losses.sum())


def discrete_time_model(
    data: DiscreteTimeData, *, link: str = "logit", alpha_sigma: float = 10.0, beta_sigma: float = 10.0, feature_names=None
):
    """PyMC model α ~ N(0, alpha_sigma²)ᵉ, β ~ N(0, beta_sigma²)ᵈ with :func:`DiscreteTimeHazard`
    named ``likelihood``; dims ``knot`` and ``feature``."""
    import pymc as pm

    names = list(feature_names) if feature_names is not None else [f"x{j}" for j in range(data.d)]
    if len(names) != data.d:
        raise ValueError(f"feature_names has {len(names)} names for d = {data.d}")
    with pm.Model(coords={"knot": np.arange(data.e), "feature": names}) as model:
        alpha = pm.Normal("alpha", 0.0, alpha_sigma, dims="knot")
        beta = pm.Normal("beta", 0.0, beta_sigma, dims="feature")
        DiscreteTimeHazard("likelihood", data.X, data.interval, data.event, alpha=alpha, beta=beta, basis=data.basis, link=link)
    return model


# ---------------------------------------------------------------------------------------------
# NumPy
# ---------------------------------------------------------------------------------------------


def _log1mexp_neg(u):
    """log(1 − e^(−u)) for u > 0, accurate for small and large u (Mächler 2012)."""
    with np.errstate(divide="ignore"):  # np.where evaluates both branches
        return np.where(u < np.log(2.0), np.log(-np.expm1(-u)), np.log1p(-np.exp(-u)))


def _survive_terms(z, link: str, order: int) -> list:
    """c(z) = −log(1 − h(z)) and its derivatives in z up to ``order`` (≤ 2)."""
    if link == "logit":
        p = special.expit(z)
        out = [np.logaddexp(0.0, z), p]
        if order >= 2:
            out.append(p * (1.0 - p))
        return out[: order + 1]
    if link == "cloglog":
        u = np.exp(z)
        return [u] * (order + 1)
    # probit: c(z) = −log Φ(−z), c′ = m(−z), c″ = m(−z)(m(−z) − z), Mills ratio m(x) = φ(x)/Φ(x)
    log_cdf = special.log_ndtr(-z)
    out = [-log_cdf]
    if order >= 1:
        m = np.exp(-0.5 * z * z - 0.5 * np.log(2.0 * np.pi) - log_cdf)
        out += [m, m * (m - z)]
    return out[: order + 1]


def _event_terms(z, link: str, order: int) -> list:
    """a(z) = −log h(z) and its derivatives in z up to ``order`` (≤ 2)."""
    if link == "logit":
        p = special.expit(z)
        return [np.logaddexp(0.0, -z), p - 1.0, p * (1.0 - p)][: order + 1]
    if link == "cloglog":
        u = np.exp(z)
        with np.errstate(over="ignore"):
            em1 = np.expm1(u)
            r = u / em1  # → 0 as u → ∞, → 1 as u → 0
            return [-_log1mexp_neg(u), -r, -r + u * u / (em1 * -np.expm1(-u))][: order + 1]
    # probit: a(z) = −log Φ(z), a′ = −m(z), a″ = m(z)(z + m(z))
    log_cdf = special.log_ndtr(z)
    m = np.exp(-0.5 * z * z - 0.5 * np.log(2.0 * np.pi) - log_cdf)
    return [-log_cdf, -m, m * (z + m)][: order + 1]


def _weights(f: np.ndarray, data: DiscreteTimeData, link: str, order: int):
    """Per-(record, interval) derivative weights of ℓ in z, as (n, q) arrays, one per order 0 … order.

    Entry (i, s) is the derivative of record i's loss term at interval s (0 where s > kᵢ).
    """
    f = np.asarray(f, dtype=np.float64)
    if f.shape != (data.dim,):
        raise ValueError(f"f must have length e + d = {data.dim}, got shape {f.shape}")
    gamma = data.basis @ f[: data.e]
    eta = data.X @ f[data.e :]
    rows = np.arange(data.n)
    at_risk = np.arange(data.q)[None, :] < data.interval[:, None]
    z_end = gamma[data.interval] + eta
    died = data.event == 1
    weights = []
    survive = _survive_terms(gamma[None, :] + eta[:, None], link, order)
    for c, a_end, c_end in zip(survive, _event_terms(z_end, link, order), _survive_terms(z_end, link, order)):
        w = np.where(at_risk, c, 0.0)
        w[rows, data.interval] = np.where(died, a_end, c_end)
        weights.append(w)
    return weights


def record_loss_numpy(f, data: DiscreteTimeData, link: str = "logit") -> np.ndarray:
    """NumPy per-record losses ℓ(f; dᵢ), shape (n,); same values as :func:`record_loss`."""
    _check_link(link)
    return _weights(f, data, link, 0)[0].sum(axis=1)


def record_grad_numpy(f, data: DiscreteTimeData, link: str = "logit") -> np.ndarray:
    """Per-record gradients ∇_f ℓ(f; dᵢ), shape (n, e + d): (Σ_s w_is A_s, (Σ_s w_is) xᵢ)."""
    _check_link(link)
    w = _weights(f, data, link, 1)[1]
    return np.hstack([w @ data.basis, w.sum(axis=1)[:, None] * data.X])


def loss_and_grad(f, data: DiscreteTimeData, link: str = "logit", *, hessian: bool = False):
    """Mean loss (1/n)Σℓᵢ and its gradient (e + d,); with ``hessian=True`` also the Hessian.

    Gradient (1/n)(Aᵀ Wᵀ1, Xᵀ W1); Hessian blocks (1/n)(Aᵀ diag(Vᵀ1) A, Aᵀ VᵀX, Xᵀ diag(V1) X)
    with W, V the (n, q) first and second derivative weights.  Cost O(n·q·d), memory O(n·q).
    """
    _check_link(link)
    weights = _weights(f, data, link, 2 if hessian else 1)
    n, A, X = data.n, data.basis, data.X
    loss = weights[0].sum() / n
    w = weights[1]
    grad = np.concatenate([A.T @ w.sum(axis=0), X.T @ w.sum(axis=1)]) / n
    if not hessian:
        return loss, grad
    v = weights[2]
    h_aa = (A.T * v.sum(axis=0)) @ A
    h_ab = A.T @ (v.T @ X)
    h_bb = (X.T * v.sum(axis=1)) @ X
    return loss, grad, np.block([[h_aa, h_ab], [h_ab.T, h_bb]]) / n


class FitResult(NamedTuple):
    """Minimiser of J(f) = (1/n)Σℓᵢ + (l2/2)‖f‖² + ⟨linear, f⟩/n and how well it converged."""

    f: np.ndarray
    objective: float
    grad_norm: float
    iterations: int
    converged: bool


def fit_discrete_time(
    data: DiscreteTimeData,
    link: str = "logit",
    *,
    l2: float = 0.0,
    linear=None,
    f0=None,
    gtol: float = 1e-9,
    max_iter: int = 100,
) -> FitResult:
    """Minimise J(f) = (1/n)Σᵢ ℓ(f; dᵢ) + (l2/2)‖f‖² + ⟨linear, f⟩/n (paper 000 Eq. 5, Alg. 1–2).

    l2 = 0 and linear = None give the maximum-likelihood estimate.  Newton's method with the exact
    Hessian and backtracking line search instead of the paper's BFGS: the minimiser is the same
    (J is convex, strictly for l2 > 0) and is reached to ‖∇J‖ ≤ gtol in a few steps.
    """
    _check_link(link)
    l2 = float(l2)
    linear = np.zeros(data.dim) if linear is None else np.asarray(linear, dtype=np.float64) / data.n
    f = np.zeros(data.dim) if f0 is None else np.array(f0, dtype=np.float64)

    def evaluate(f):
        loss, grad, hess = loss_and_grad(f, data, link, hessian=True)
        return loss + 0.5 * l2 * f @ f + linear @ f, grad + l2 * f + linear, hess + l2 * np.eye(data.dim)

    value, grad, hess = evaluate(f)
    for iteration in range(1, max_iter + 1):
        step = np.linalg.solve(hess, -grad)
        size = 1.0
        while True:  # backtracking (Armijo) with a rounding slack of 1e-14·|J|
            trial = evaluate(f + size * step)
            if trial[0] <= value + 1e-4 * size * (grad @ step) + 1e-14 * abs(value) or size < 1e-12:
                break
            size /= 2
        f = f + size * step
        value, grad, hess = trial
        if np.linalg.norm(grad) <= gtol:
            break
    grad_norm = float(np.linalg.norm(grad))
    return FitResult(f, float(value), grad_norm, iteration, grad_norm <= gtol)


# ---------------------------------------------------------------------------------------------
# Person-period table (for checks and benchmarks) and a synthetic generator
# ---------------------------------------------------------------------------------------------


def expand_person_period(data: DiscreteTimeData) -> tuple[np.ndarray, np.ndarray]:
    """The explicit person-period table: one row (A_s, xᵢ) per record i and interval s ≤ kᵢ, with
    response 1 only at s = kᵢ when δᵢ = 1.  Σᵢ(kᵢ + 1) rows: use only to check or benchmark."""
    counts = data.interval + 1
    record = np.repeat(np.arange(data.n), counts)
    start = np.cumsum(counts) - counts
    period = np.arange(counts.sum()) - np.repeat(start, counts)
    design = np.hstack([data.basis[period], data.X[record]])
    response = ((period == data.interval[record]) & (data.event[record] == 1)).astype(np.float64)
    return design, response


def _inverse_link(z: np.ndarray, link: str) -> np.ndarray:
    if link == "logit":
        return special.expit(z)
    if link == "cloglog":
        return -np.expm1(-np.exp(z))
    return special.ndtr(z)


class SimulatedDiscreteTime(NamedTuple):
    """Synthetic records with the true parameters that generated them."""

    data: DiscreteTimeData
    time: np.ndarray
    alpha: np.ndarray
    beta: np.ndarray
    link: str


def simulate_discrete_time(
    n: int, *, alpha, beta, q: int = 200, link: str = "logit", censoring: float = 0.3, rng=None
) -> SimulatedDiscreteTime:
    """Draw n records from the discrete-time hazard model with known (α, β) and the spline basis
    A = interval_basis(q, len(α)).

    xᵢ uniform in the unit ball of ℝᵈ; event interval Tᵢ = first s with Uᵢₛ < h_is (none: alive
    after q intervals); censoring interval uniform on 0 … q−1 with probability ``censoring``,
    else administrative at q − 1.  ``time`` = (kᵢ + ½)/q lies in interval kᵢ.  Seeded ``rng``.
    """
    _check_link(link)
    rng = np.random.default_rng(rng)
    alpha, beta = np.asarray(alpha, dtype=np.float64), np.asarray(beta, dtype=np.float64)
    d = beta.size
    basis = interval_basis(q, alpha.size)
    direction = rng.standard_normal((n, d))
    direction /= np.linalg.norm(direction, axis=1, keepdims=True)
    X = direction * rng.uniform(size=(n, 1)) ** (1.0 / d)
    hazard = _inverse_link((basis @ alpha)[None, :] + (X @ beta)[:, None], link)
    fails = rng.uniform(size=(n, q)) < hazard
    event_at = np.where(fails.any(axis=1), fails.argmax(axis=1), q)
    censor_at = np.where(rng.uniform(size=n) < censoring, rng.integers(0, q, size=n), q - 1)
    interval = np.minimum(event_at, censor_at)
    event = (event_at <= censor_at).astype(np.int8)
    data = DiscreteTimeData(X, interval, event, basis)
    return SimulatedDiscreteTime(data, (interval + 0.5) / q, alpha, beta, link)

"""PyTensor per-record losses of the discrete-time hazard model: a compiled (Numba) Op for the
logit link with O(n + q) memory, and a masked elementwise graph for cloglog and probit."""

from __future__ import annotations

import numba
import numpy as np
import pytensor.tensor as pt
from pytensor.gradient import DisconnectedType
from pytensor.graph.basic import Apply
from pytensor.graph.op import Op
from pytensor.raise_op import CheckAndRaise

from ..privacy.validation import as_float_array
from .discrete_data import _check_link

__all__ = ["check_hazard_records", "hazard_record_loss", "record_loss"]


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


def check_hazard_records(X, interval, event, q: int | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validated records of the discrete-time hazard model (Nguyên & Hui 2017a): (X, interval, event).

    ``X`` must be a finite (n, d) array of numbers, ``interval`` n integers kᵢ in 0 … q−1 (any
    kᵢ ≥ 0 if q is None, i.e. not known before run time, where the loss checks it) and ``event``
    n flags δᵢ in {0, 1} (booleans accepted).  Returns float64 X, int64 intervals and
    int8 events; raises ValueError naming the argument (never printing a value) otherwise.
    """
    X = as_float_array(X, "X")
    if X.ndim != 2 or X.shape[0] == 0:
        raise ValueError(f"X must be 2-D (n records × d covariates) with n ≥ 1, got shape {X.shape}")
    if not np.isfinite(X).all():
        raise ValueError("X contains NaN or infinite values")
    n = X.shape[0]
    arrays = []
    for name, values in (("interval", interval), ("event", event)):
        array = as_float_array(values, name)
        if array.shape != (n,):
            raise ValueError(f"{name} must have shape ({n},) to match X, got {array.shape}")
        arrays.append(array)
    interval, event = arrays
    upper = np.inf if q is None else q
    if not (np.isfinite(interval) & (interval == np.round(interval)) & (interval >= 0) & (interval < upper)).all():
        raise ValueError("interval must hold integers ≥ 0" if q is None else f"interval must hold integers in 0 … {q - 1}")
    if not np.isin(event, (0.0, 1.0)).all():
        raise ValueError("event must be 0 or 1")
    return X, interval.astype(np.int64), event.astype(np.int8)


def _check_op_inputs(gamma, eta, interval, event):
    """Run-time checks of the compiled kernels' inputs: out-of-range reads would crash the process."""
    n = eta.shape[0]
    if interval.shape != (n,) or event.shape != (n,):
        raise ValueError(
            f"interval and event must have one entry per record (n = {n}), got shapes "
            f"{interval.shape} and {event.shape}"
        )
    if n and (interval.min() < 0 or interval.max() >= gamma.shape[0]):
        raise ValueError(f"interval must lie in 0 … {gamma.shape[0] - 1}")
    if n and not ((event == 0) | (event == 1)).all():
        raise ValueError("event must be 0 or 1")


def _check_vectors(inputs) -> None:
    names = ("gamma", "eta", "interval", "event", "weight")
    for name, variable in zip(names, inputs, strict=False):  # the cotangent weight is optional
        if variable.type.ndim != 1:
            raise ValueError(f"{name} must be a vector, got a {variable.type.ndim}-d tensor")


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
        _check_vectors(inputs)
        return Apply(self, inputs, [pt.dvector()])

    def perform(self, node, inputs, outputs):
        _check_op_inputs(*inputs)
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
        _check_vectors(inputs)
        return Apply(self, inputs, [pt.dvector(), pt.dvector()])

    def perform(self, node, inputs, outputs):
        _check_op_inputs(*inputs[:4])
        if inputs[4].shape != inputs[1].shape:
            raise ValueError("the cotangent must have one entry per record")
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
    _check_vectors([gamma, eta, interval, event])
    n = eta.shape[0]
    valid = (
        pt.eq(interval.shape[0], n)
        & pt.eq(event.shape[0], n)
        & pt.all(pt.ge(interval, 0))
        & pt.all(pt.lt(interval, gamma.shape[0]))
        & pt.all(pt.eq(event, 0) | pt.eq(event, 1))
    )
    # gamma[interval] out of range is not bounds-checked by compiled backends: check first
    interval = CheckAndRaise(
        ValueError, "interval and event need one entry per record, intervals in 0 … q−1, events in {0, 1}"
    )(interval, valid)
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

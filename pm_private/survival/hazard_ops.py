"""PyTensor per-record losses of the discrete-time hazard model: a compiled (Numba) Op for the
logit link with O(n + q) memory, and a masked elementwise graph for cloglog and probit."""

from __future__ import annotations

import numba
import numpy as np
import pytensor.tensor as pt
from pytensor.gradient import DisconnectedType
from pytensor.graph.basic import Apply
from pytensor.graph.op import Op

from .discrete_data import _check_link

__all__ = ["hazard_record_loss", "record_loss"]


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

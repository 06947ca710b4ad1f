"""PyTensor per-record losses of the discrete-time hazard model: a compiled (Numba) Op for the
logit link with O(n + q) memory, and a masked elementwise graph for cloglog and probit.

The logit Op and its gradient run the same Numba kernels in both backends: ``perform`` (C/CVM
and Python modes) calls them directly, and a registered Numba dispatch inlines them into graphs
compiled by PyTensor's default Numba backend, so no object-mode fallback occurs.  The kernels
check shapes and ranges (same length of η, interval and event; 0 ≤ interval < q; event ∈ {0, 1})
and raise ValueError instead of reading out of bounds."""

from __future__ import annotations

import numba
import numpy as np
import pytensor.tensor as pt
from pytensor.gradient import DisconnectedType
from pytensor.graph.basic import Apply
from pytensor.graph.op import Op
from pytensor.link.numba.dispatch.basic import numba_njit
from pytensor.raise_op import CheckAndRaise

from ..._engine.docstrings import parameters_from
from ..._engine.jax_dispatch import register_jax_funcify
from ..._engine.numba_cache import register_numba_funcify
from ...privacy.validation import as_float_array
from .data import check_link

__all__ = ["check_hazard_records", "hazard_record_loss", "record_loss"]


def check_hazard_records(X, interval, event, q: int | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validated records of the discrete-time hazard model (Nguyên & Hui 2017a): (X, interval, event).

    ``X`` must be a finite (n, d) array of numbers, ``interval`` n integers kᵢ in 0 … q−1 (any
    kᵢ ≥ 0 if q is None, i.e. not known before run time, where the loss checks it) and ``event``
    n flags δᵢ in {0, 1} (booleans accepted).

    Parameters
    ----------
    X : array_like, shape (n, d)
        Covariates.
    interval : array_like, shape (n,)
        Intervals kᵢ.
    event : array_like, shape (n,)
        Event flags δᵢ.
    q : int or None
        The number of intervals, or None when it is not known yet.

    Returns
    -------
    X : numpy.ndarray
        float64 covariates.
    interval : numpy.ndarray
        int64 intervals.
    event : numpy.ndarray
        int8 events.

    Raises
    ------
    ValueError
        Naming the argument (never printing a value) for a wrong shape or value.
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
        raise ValueError(
            "interval must hold integers ≥ 0" if q is None else f"interval must hold integers in 0 … {q - 1}"
        )
    if not np.isin(event, (0.0, 1.0)).all():
        raise ValueError("event must be 0 or 1")
    return X, interval.astype(np.int64), event.astype(np.int8)


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


#: |γ_s| and |ηᵢ| up to this bound give u = e^γ_s·e^ηᵢ = e^z in [e^−700, e^700]: finite, normal.
_PRODUCT_BOUND = 350.0


@numba.njit(cache=True)
def _check_records(gamma, eta, interval, event):
    """Shapes and ranges of the kernel inputs (as ValueError, never an out-of-bounds read)."""
    n, q = eta.shape[0], gamma.shape[0]
    if interval.shape[0] != n or event.shape[0] != n:
        raise ValueError("eta, interval and event must have the same length (one entry per record)")
    for i in range(n):
        if interval[i] < 0 or interval[i] >= q:
            raise ValueError("interval must lie in 0 … q − 1 (q = length of the baseline)")
        if event[i] != 0 and event[i] != 1:
            raise ValueError("event must be 0 or 1")


@numba.njit(cache=True)
def _exp_table(gamma):
    """(e^γ, whether every |γ_s| ≤ _PRODUCT_BOUND)."""
    ok = True
    for s in range(gamma.shape[0]):
        if not abs(gamma[s]) <= _PRODUCT_BOUND:
            ok = False
    return np.exp(gamma), ok


@numba.njit(cache=True)
def _log_prod_1p(exp_gamma, ue, k):
    """Σ_{s<k} log(1 + u_s), u_s = e^γ_s·e^η, as log Π(1 + u_s) in eight independent accumulators
    r = Π − 1 (r ← r + u·(1 + r): no cancellation for small u), combined pairwise by
    (1 + r)(1 + r′) − 1 = r + r′ + r·r′; one log per four pairs instead of one per interval."""
    r0 = r1 = r2 = r3 = r4 = r5 = r6 = r7 = 0.0
    s = 0
    while s + 8 <= k:
        r0 += exp_gamma[s] * ue * (1.0 + r0)
        r1 += exp_gamma[s + 1] * ue * (1.0 + r1)
        r2 += exp_gamma[s + 2] * ue * (1.0 + r2)
        r3 += exp_gamma[s + 3] * ue * (1.0 + r3)
        r4 += exp_gamma[s + 4] * ue * (1.0 + r4)
        r5 += exp_gamma[s + 5] * ue * (1.0 + r5)
        r6 += exp_gamma[s + 6] * ue * (1.0 + r6)
        r7 += exp_gamma[s + 7] * ue * (1.0 + r7)
        s += 8
    while s < k:
        r0 += exp_gamma[s] * ue * (1.0 + r0)
        s += 1
    return (
        np.log1p(r0 + r1 + r0 * r1)
        + np.log1p(r2 + r3 + r2 * r3)
        + np.log1p(r4 + r5 + r4 * r5)
        + np.log1p(r6 + r7 + r6 * r7)
    )


@numba.njit(cache=True, fastmath={"reassoc", "contract"})
def _sigmoid_sum(exp_gamma, ue, k, w, d_gamma):
    """Σ_{s<k} σ_s with σ_s = u_s/(1 + u_s), u_s = e^γ_s·e^η; adds w·σ_s to d_gamma[s] (vectorised)."""
    total = 0.0
    for s in range(k):
        u = exp_gamma[s] * ue
        p = u / (1.0 + u)
        total += p
        d_gamma[s] += w * p
    return total


@numba.njit(cache=True)
def _logit_loss_kernel(gamma, eta, interval, event):
    """ℓᵢ = Σ_{s<kᵢ} softplus(γ_s + ηᵢ) + softplus(∓(γ_kᵢ + ηᵢ)), one pass over the at-risk intervals.

    e^(γ_s + ηᵢ) = e^γ_s·e^ηᵢ: q + n exponentials in all, and the softplus sum of a record is the
    log of a product (:func:`_log_prod_1p`).  Where that could overflow (|γ_s| or |ηᵢ| above
    350, or a product beyond the float range) the record falls back to the softplus sum.
    """
    _check_records(gamma, eta, interval, event)
    exp_gamma, fast = _exp_table(gamma)
    loss = np.empty(eta.shape[0])
    for i in range(eta.shape[0]):
        k, e = interval[i], eta[i]
        z = gamma[k] + e
        total = np.inf
        if fast and abs(e) <= _PRODUCT_BOUND:
            total = _log_prod_1p(exp_gamma, np.exp(e), k)
        if not np.isfinite(total):
            total = 0.0
            for s in range(k):
                total += _softplus(gamma[s] + e)
        loss[i] = total + _softplus(-z if event[i] == 1 else z)
    return loss


@numba.njit(cache=True)
def _logit_loss_grad_kernel(gamma, eta, interval, event, weight):
    """Σᵢ weightᵢ ∂ℓᵢ/∂γ and (weightᵢ ∂ℓᵢ/∂ηᵢ)ᵢ; ∂softplus(z)/∂z = σ(z) = u/(1 + u), u = e^γ_s·e^ηᵢ."""
    _check_records(gamma, eta, interval, event)
    if weight.shape[0] != eta.shape[0]:
        raise ValueError("the cotangent must have one entry per record")
    exp_gamma, fast = _exp_table(gamma)
    d_gamma, d_eta = np.zeros(gamma.shape[0]), np.empty(eta.shape[0])
    for i in range(eta.shape[0]):
        k, e, w = interval[i], eta[i], weight[i]
        if fast and abs(e) <= _PRODUCT_BOUND:
            total = _sigmoid_sum(exp_gamma, np.exp(e), k, w, d_gamma)
        else:
            total = 0.0
            for s in range(k):
                p = _sigmoid(gamma[s] + e)
                total += p
                d_gamma[s] += w * p
        p = _sigmoid(gamma[k] + e) - (1.0 if event[i] == 1 else 0.0)
        d_gamma[k] += w * p
        d_eta[i] = w * (total + p)
    return d_gamma, d_eta


def _record_inputs(gamma, eta, interval, event):
    """(γ, η, interval, event) as float64, float64, int64, int8 vectors."""
    inputs = [
        pt.as_tensor(gamma).astype("float64"),
        pt.as_tensor(eta).astype("float64"),
        pt.as_tensor(interval).astype("int64"),
        pt.as_tensor(event).astype("int8"),
    ]
    for name, var in zip(("gamma", "eta", "interval", "event"), inputs, strict=True):
        if var.ndim != 1:
            raise ValueError(f"{name} must be a vector, got {var.ndim} dimensions")
    return inputs


class _LogitHazardLoss(Op):
    """Per-record logit-link losses from (γ, η, interval, event): O(n + q) memory, one compiled
    (Numba) pass over the Σᵢ(kᵢ + 1) at-risk record-intervals, no (n, q) temporaries."""

    __props__ = ()

    def make_node(self, gamma, eta, interval, event):
        return Apply(self, _record_inputs(gamma, eta, interval, event), [pt.dvector()])

    def perform(self, node, inputs, outputs):
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
        inputs = [*_record_inputs(gamma, eta, interval, event), pt.as_tensor(weight).astype("float64")]
        return Apply(self, inputs, [pt.dvector(), pt.dvector()])

    def perform(self, node, inputs, outputs):
        d_gamma, d_eta = _logit_loss_grad_kernel(*inputs)
        outputs[0][0], outputs[1][0] = d_gamma, d_eta

    def infer_shape(self, node, shapes):
        return [shapes[0], shapes[1]]


@register_numba_funcify(_LogitHazardLoss)
def _numba_funcify_logit_loss(op, node=None, **kwargs):
    """Numba implementation for PyTensor's default backend (no object-mode fallback)."""

    @numba_njit
    def logit_hazard_loss(gamma, eta, interval, event):
        return _logit_loss_kernel(gamma, eta, interval, event)

    return logit_hazard_loss


@register_numba_funcify(_LogitHazardLossGrad)
def _numba_funcify_logit_loss_grad(op, node=None, **kwargs):
    @numba_njit
    def logit_hazard_loss_grad(gamma, eta, interval, event, weight):
        return _logit_loss_grad_kernel(gamma, eta, interval, event, weight)

    return logit_hazard_loss_grad


def _jax_logit_loss():
    """The logit losses in JAX: the masked (n, q) softplus sum (JAX has no compiled loop over the
    at-risk intervals; memory O(n·q) there).  The records were checked when the model was built;
    JAX cannot raise inside a compiled function."""
    import jax
    import jax.numpy as jnp

    def loss(gamma, eta, interval, event):
        at_risk = jnp.arange(gamma.shape[0])[None, :] < interval[:, None]
        survived = jnp.where(at_risk, jax.nn.softplus(gamma[None, :] + eta[:, None]), 0.0).sum(axis=1)
        last = gamma[interval] + eta
        return survived + jax.nn.softplus(jnp.where(event == 1, -last, last))

    return loss


@register_jax_funcify(_LogitHazardLoss)
def _jax_funcify_logit_loss(op, node=None, **kwargs):
    """JAX implementation (numpyro, blackjax, nutpie's JAX backend), differentiable by JAX."""
    return _jax_logit_loss()


@register_jax_funcify(_LogitHazardLossGrad)
def _jax_funcify_logit_loss_grad(op, node=None, **kwargs):
    """JAX implementation of the vector-Jacobian product, by JAX's own derivative of the losses."""
    import jax

    loss = _jax_logit_loss()

    def logit_hazard_loss_grad(gamma, eta, interval, event, weight):
        _, pullback = jax.vjp(lambda g, e: loss(g, e, interval, event), gamma, eta)
        return pullback(weight)

    return logit_hazard_loss_grad


def hazard_record_loss(gamma, eta, interval, event, link: str = "logit"):
    """Per-record losses ℓᵢ, shape (n,), from the baseline γ (q,) and linear predictors η (n,).

    ℓᵢ = Σ_{s<kᵢ} c(γ_s + ηᵢ) + [δᵢ a + (1 − δᵢ) c](γ_{kᵢ} + ηᵢ)  (module docstring).  Logit:
    a compiled Op that visits only the at-risk record-intervals (memory O(n + q); first
    derivatives only).  cloglog and probit: one fused (n, q) elementwise-and-reduce graph.
    Nothing of size n·q is stored as float data in either case.

    Parameters
    ----------
    gamma : tensor_like, shape (q,)
        The baseline γ.
    eta : tensor_like, shape (n,)
        The linear predictors η.
    interval : tensor_like, shape (n,)
        Intervals kᵢ in 0 … q−1.
    event : tensor_like, shape (n,)
        Event flags δᵢ in {0, 1}.
    link : {"logit", "cloglog", "probit"}, default "logit"
        The link of the hazard.

    Returns
    -------
    pytensor.tensor.TensorVariable
        The n per-record losses.

    Raises
    ------
    ValueError
        For an unknown link (at once) or, at run time, records of the wrong length or values.
    """
    check_link(link)
    if link == "logit":
        return _LogitHazardLoss()(gamma, eta, interval, event)
    gamma, eta = pt.as_tensor(gamma), pt.as_tensor(eta)
    interval, event = pt.as_tensor(interval), pt.as_tensor(event)
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


@parameters_from(hazard_record_loss, sections=("Returns",))
def record_loss(f, X, interval, event, basis, link: str = "logit"):
    """PyTensor per-record losses ℓ(f; dᵢ) ≥ 0, shape (n,), for f = concat(α (e), β (d)).

    ``basis`` is the (q, e) matrix A (row s = A_s, see :mod:`.spline`: midpoint (s + ½)/q);
    ``interval`` holds kᵢ ∈ 0 … q−1 and ``event`` δᵢ ∈ {0, 1}.  Works for any n (minibatches):
    the loss of a record does not depend on the others.  Σᵢ ℓᵢ is the negative log-likelihood.

    Parameters
    ----------
    f : tensor_like, shape (e + d,)
        The parameters (α, β).
    X : tensor_like, shape (n, d)
        Covariates.
    basis : tensor_like, shape (q, e)
        The basis A.
    """
    f, basis = pt.as_tensor(f), pt.as_tensor(basis)
    e = basis.shape[1]
    return hazard_record_loss(basis @ f[:e], pt.as_tensor(X) @ f[e:], interval, event, link)

"""The multivariate normal log-density of the released statistics, with its analytic gradient.

The noise-aware models evaluate log N(r | μ, C) for a k-vector of statistics (k = 76 at d = 10)
whose mean μ and covariance C depend on every parameter.  Differentiating the generic
Cholesky-based graph costs several k³ triangular solves; the gradient has the closed form
(e.g. Petersen & Pedersen 2012, The Matrix Cookbook, eqs. 57 and 61)

    log N(r | μ, C) = −½ (r − μ)ᵀC⁻¹(r − μ) − ½ log det C − (k/2) log 2π,
    ∂/∂μ = α,   ∂/∂C = ½ (ααᵀ − C⁻¹),   α = C⁻¹(r − μ),

so one Cholesky factorisation C = LLᵀ (LAPACK's dpotrf; log det C = 2 Σ log Lᵢᵢ) and the
inverse from it (dpotri), k³ flops in all, give the value and both gradients.  ``NormalLogp``
computes them together in one compiled kernel, faster than PyMC's ``MvNormal`` graph and its
gradient (measured on the documentation's model-selection page); a covariance that is
not positive definite, or a non-finite input, gives −∞ (and zero gradients), as the generic
graph's failed factorisation does.  The GLMs call its kernel inside
``pm_private.released.release_normal.Degree2ReleaseLogp``, which also assembles μ and C.
"""

from __future__ import annotations

import math

import numba
import numpy as np
import pymc as pm
import pytensor.tensor as pt
from pytensor.gradient import DisconnectedType, grad_not_implemented
from pytensor.graph.basic import Apply
from pytensor.graph.op import Op
from pytensor.link.numba.dispatch.basic import numba_njit
from scipy.linalg import lapack

from .._engine.jax_dispatch import register_jax_funcify
from .._engine.numba_cache import register_numba_funcify

__all__ = ["NormalLogp", "normal_logp", "released_normal"]

_LOG_2PI = math.log(2.0 * math.pi)


def _normal_logp_numpy(value, mean, cov):
    """(log N(value | mean, cov), ∂/∂mean, ∂/∂cov) of the module notes, by LAPACK's dpotrf and
    dpotri (k³/3 + 2k³/3 flops) through SciPy."""
    k = value.size
    resid = value - mean
    if not (np.all(np.isfinite(resid)) and np.all(np.isfinite(cov))):
        return -np.inf, np.zeros(k), np.zeros((k, k))
    chol, info = lapack.dpotrf(cov, lower=1)
    if info != 0:
        return -np.inf, np.zeros(k), np.zeros((k, k))
    log_det = 2.0 * np.sum(np.log(np.diag(chol)))
    inverse, _ = lapack.dpotri(chol, lower=1)
    inverse = np.tril(inverse) + np.tril(inverse, -1).T
    alpha = inverse @ resid
    return -0.5 * (resid @ alpha + log_det + k * _LOG_2PI), alpha, 0.5 * (np.outer(alpha, alpha) - inverse)


class NormalLogp(Op):
    """(r, μ, C) ↦ (log N(r | μ, C), ∂/∂μ, ∂/∂C), the last two used only by its gradient.

    Second derivatives are not implemented.
    """

    __props__ = ()

    def make_node(self, value, mean, cov):
        value, mean, cov = (pt.as_tensor(v).astype("float64") for v in (value, mean, cov))
        if value.ndim != 1 or mean.ndim != 1 or cov.ndim != 2:
            raise ValueError("value and mean must be vectors and cov a matrix")
        return Apply(self, [value, mean, cov], [pt.dscalar(), pt.dvector(), pt.dmatrix()])

    def perform(self, node, inputs, output_storage):
        value, mean, cov = (np.ascontiguousarray(v, dtype=np.float64) for v in inputs)
        logp, grad_mean, grad_cov = _normal_logp_numpy(value, mean, cov)
        output_storage[0][0] = np.asarray(logp)
        output_storage[1][0] = grad_mean
        output_storage[2][0] = grad_cov

    def infer_shape(self, node, shapes):
        value, _, cov = shapes
        return [(), value, cov]

    def pullback(self, inputs, outputs, cotangents):
        if any(not isinstance(c.type, DisconnectedType) for c in cotangents[1:]):
            return [grad_not_implemented(self, i, v, "second derivatives") for i, v in enumerate(inputs)]
        g = cotangents[0]
        return [-g * outputs[1], g * outputs[1], g * outputs[2]]


def _numba_potri():
    """LAPACK's dpotri for Numba, its function pointer cached as PyTensor caches its own LAPACK
    calls (so that compiled graphs containing it are cached across processes)."""
    from numba.core import types
    from pytensor.link.numba.cache import _call_cached_ptr
    from pytensor.link.numba.dispatch.linalg._LAPACK import get_lapack_ptr, nb_f64p, nb_i32p

    @numba_njit
    def get_potri_pointer():
        with numba.objmode(ptr=types.intp):
            ptr = get_lapack_ptr(types.float64, "potri")
        return ptr

    potri_type = types.FunctionType(types.void(nb_i32p, nb_i32p, nb_f64p, nb_i32p, nb_i32p))

    @numba_njit
    def potri(uplo, n, a, lda, info):
        fn = _call_cached_ptr(
            get_ptr_func=get_potri_pointer,
            func_type_ref=potri_type,
            unique_func_name_lit="pm_private.likelihood.dpotri",
        )
        fn(uplo, n, a, lda, info)

    return potri


def _numba_normal_logp_core():
    """The Numba function (r, μ, C) ↦ (log N(r | μ, C), α, ½(ααᵀ − C⁻¹)), the same computation as
    ``_normal_logp_numpy`` (no object-mode fallback).  A row-major symmetric matrix is its own
    column-major transpose: LAPACK's lower triangle is the upper triangle here."""
    from numba.core import types
    from pytensor.link.numba.dispatch.linalg._LAPACK import _LAPACK, int_ptr_to_val, val_to_int_ptr

    potrf = _LAPACK().numba_xpotrf(types.float64)
    potri = _numba_potri()

    @numba_njit
    def normal_logp_op(value, mean, cov):
        k = value.size
        resid = value - mean
        work = np.empty((k, k))
        finite = True
        for i in range(k):
            finite = finite and np.isfinite(resid[i])
            for j in range(k):
                work[i, j] = cov[i, j]
                finite = finite and np.isfinite(cov[i, j])
        if not finite:
            return np.asarray(-np.inf), np.zeros(k), np.zeros((k, k))
        size = np.int32(k)
        uplo, n, lda, info = val_to_int_ptr(ord("L")), val_to_int_ptr(size), val_to_int_ptr(size), val_to_int_ptr(0)
        potrf(uplo, n, work.ctypes, lda, info)
        if int_ptr_to_val(info) != 0:
            return np.asarray(-np.inf), np.zeros(k), np.zeros((k, k))
        log_det = 0.0
        for i in range(k):
            log_det += 2.0 * math.log(work[i, i])
        potri(uplo, n, work.ctypes, lda, info)
        for i in range(k):
            for j in range(i):
                work[i, j] = work[j, i]
        alpha = np.zeros(k)  # C⁻¹(r − μ) by loops: no BLAS wrapper for Numba to compile
        quad = 0.0
        for i in range(k):
            for j in range(k):
                alpha[i] += work[i, j] * resid[j]
            quad += resid[i] * alpha[i]
        grad_cov = np.empty((k, k))
        for i in range(k):
            for j in range(k):
                grad_cov[i, j] = 0.5 * (alpha[i] * alpha[j] - work[i, j])
        return np.asarray(-0.5 * (quad + log_det + k * _LOG_2PI)), alpha, grad_cov

    return normal_logp_op


@register_numba_funcify(NormalLogp)
def _numba_funcify_normal_logp(op, node=None, **kwargs):
    """Numba implementation for PyTensor's default backend."""
    return _numba_normal_logp_core()


@register_jax_funcify(NormalLogp)
def _jax_funcify_normal_logp(op, node=None, **kwargs):
    """JAX implementation (numpyro, blackjax, nutpie's JAX backend), the same computation as
    ``_normal_logp_numpy`` with JAX's Cholesky factorisation; differentiable by JAX (its samplers
    differentiate the log-density themselves)."""
    import jax.numpy as jnp
    from jax.scipy.linalg import cho_solve

    def normal_logp_op(value, mean, cov):
        k = value.shape[0]
        resid = value - mean
        chol = jnp.linalg.cholesky(cov)
        valid = jnp.all(jnp.isfinite(chol)) & jnp.all(jnp.isfinite(resid))
        safe = jnp.where(valid, chol, jnp.eye(k))
        inverse = cho_solve((safe, True), jnp.eye(k))
        alpha = inverse @ resid
        logp = -0.5 * (resid @ alpha + 2.0 * jnp.sum(jnp.log(jnp.diag(safe))) + k * _LOG_2PI)
        return (
            jnp.where(valid, logp, -jnp.inf),
            jnp.where(valid, alpha, 0.0),
            jnp.where(valid, 0.5 * (jnp.outer(alpha, alpha) - inverse), 0.0),
        )

    return normal_logp_op


_normal_logp = NormalLogp()


def normal_logp(value, mean, cov):
    """log N(value | mean, cov) as a differentiable tensor with the analytic gradient of the module
    notes (``NormalLogp``).

    Parameters
    ----------
    value, mean : tensor (k,)
        The observed vector and the mean.
    cov : tensor (k, k)
        The covariance (symmetric; −∞ when it is not positive definite).

    Returns
    -------
    tensor ()
        The log-density.
    """
    return _normal_logp(value, mean, cov)[0]


def _normal_dist(mean, cov, size):
    """N(mean, cov), whose draws are replicated releases (prior and posterior predictive checks);
    its log-density is :func:`normal_logp`'s."""
    return pm.MvNormal.dist(mean, cov, size=size)


def released_normal(name: str, mean, cov, *, observed, dims=None):
    """A released vector r ~ N(mean, cov) as an observed variable of the current model: the
    log-density and its gradient are :func:`normal_logp`'s (one compact Op instead of PyMC's
    ``MvNormal`` graph of a Cholesky factorisation, triangular solves and their derivatives),
    and prior and posterior predictive draws are PyMC's multivariate normal's.

    Parameters
    ----------
    name : str
        The observed variable's name.
    mean : tensor (k,)
        The mean of the released vector.
    cov : tensor (k, k)
        Its covariance (the statistics' sampling covariance plus the release noise's).
    observed : tensor (k,)
        The released vector (usually ``pm.Data``, so that a new release of the same shape swaps in).
    dims : str or tuple of str, optional
        The dim of the k statistics.

    Returns
    -------
    TensorVariable
        The observed variable.
    """
    return pm.CustomDist(
        name,
        mean,
        cov,
        logp=lambda value, mean, cov: normal_logp(value, mean, cov),
        dist=_normal_dist,
        signature="(k),(k,k)->(k)",
        observed=observed,
        dims=dims,
    )

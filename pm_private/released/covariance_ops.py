"""The covariate law's Cholesky factor and covariance from its standard deviations and canonical
partial correlations, as one Op with a hand-written gradient.

:func:`pm_private.released.covariates.partial_correlation_cholesky` builds R's factor L from the
partial correlations c (Lewandowski, Kurowicka & Joe 2009): row i of L is

    Lᵢₖ = cᵢₖ·Pᵢₖ (k < i),   Lᵢᵢ = Pᵢᵢ,   Pᵢₖ = Πⱼ₍ⱼ₌₀…ₖ₋₁₎ √(1 − cᵢⱼ²),

and the covariate model uses Lx = diag(s)·L and Σx = Lx·Lxᵀ.  As a PyTensor graph (a scatter, a
cumulative sum, a matrix product and their derivatives) these cost many Numba compilations on an
empty cache; here they are two Numba loop kernels compiled with ``cache=True`` (once per machine).
The gradient: with L̄x = Ḡ_L + (Ḡ_Σ + Ḡ_Σᵀ)·Lx, s̄ᵢ = Σₖ L̄xᵢₖ·Lᵢₖ, L̄ᵢₖ = sᵢ·L̄xᵢₖ and, since
∂Lᵢₖ/∂cᵢⱼ = Lᵢₖ·(−cᵢⱼ/(1 − cᵢⱼ²)) for j < k ≤ i,

    c̄ᵢⱼ = L̄ᵢⱼ·Pᵢⱼ − cᵢⱼ/(1 − cᵢⱼ²) · Σₖ₍ₖ₌ⱼ₊₁…ᵢ₎ L̄ᵢₖ·Lᵢₖ.

Reference: Lewandowski, D., Kurowicka, D. & Joe, H. (2009). Generating random correlation matrices
based on vines and extended onion method. Journal of Multivariate Analysis 100(9), 1989–2001.
"""

from __future__ import annotations

import math

import numba
import numpy as np
import pytensor.tensor as pt
from pytensor.gradient import DisconnectedType, grad_not_implemented
from pytensor.graph.basic import Apply
from pytensor.graph.op import Op
from pytensor.link.numba.dispatch.basic import numba_njit

from .._engine.jax_dispatch import register_jax_funcify, register_jax_vjp
from .._engine.numba_cache import register_numba_funcify

__all__ = ["factor_and_covariance", "factor_kernel", "factor_vjp_kernel"]


@numba.njit(cache=True, error_model="numpy")  # c = ±1 gives inf/nan, as NumPy, not an exception
def factor_kernel(sd, partial):
    """(Lx, Σx, P) of the module notes; P holds the running products Pᵢₖ (k ≤ i)."""
    d = sd.shape[0]
    low = np.zeros((d, d))
    prod = np.zeros((d, d))
    p = 0
    for i in range(d):
        running = 1.0
        for k in range(i):
            c = partial[p]
            p += 1
            prod[i, k] = running
            low[i, k] = c * running
            running *= math.sqrt(1.0 - c * c)
        prod[i, i] = running
        low[i, i] = running
    factor = np.empty((d, d))
    for i in range(d):
        for k in range(d):
            factor[i, k] = sd[i] * low[i, k]
    cov = np.zeros((d, d))
    for i in range(d):
        for j in range(i + 1):
            t = 0.0
            for k in range(j + 1):
                t += factor[i, k] * factor[j, k]
            cov[i, j] = t
            cov[j, i] = t
    return factor, cov, low, prod


@numba.njit(cache=True, error_model="numpy")  # c = ±1 gives inf/nan, as NumPy, not an exception
def factor_vjp_kernel(sd, partial, g_factor, g_cov):
    """(∂/∂s, ∂/∂c) of ⟨Ḡ_L, Lx⟩ + ⟨Ḡ_Σ, Σx⟩ (module notes)."""
    d = sd.shape[0]
    factor, _, low, prod = factor_kernel(sd, partial)
    g_sd = np.zeros(d)
    g_low = np.zeros((d, d))
    for i in range(d):
        for k in range(i + 1):
            t = g_factor[i, k]
            for j in range(d):
                t += (g_cov[i, j] + g_cov[j, i]) * factor[j, k]
            g_sd[i] += t * low[i, k]
            g_low[i, k] = sd[i] * t
    g_partial = np.zeros(partial.shape[0])
    p = 0
    for i in range(d):
        start = p
        suffix = g_low[i, i] * low[i, i]  # Σ over k = j + 1 … i of L̄ᵢₖ·Lᵢₖ, built from k = i down
        for j in range(i - 1, -1, -1):
            c = partial[start + j]
            g_partial[start + j] = g_low[i, j] * prod[i, j] - c / (1.0 - c * c) * suffix
            suffix += g_low[i, j] * low[i, j]
        p += i
    return g_sd, g_partial


def _as_inputs(sd, partial):
    inputs = [pt.as_tensor(x).astype("float64") for x in (sd, partial)]
    if inputs[0].ndim != 1 or inputs[1].ndim != 1:
        raise ValueError("sd and partial must be vectors")
    return inputs


class PartialCorrelationFactor(Op):
    """(s, c) ↦ (Lx, Σx) of the module notes."""

    __props__ = ()

    def make_node(self, sd, partial):
        return Apply(self, _as_inputs(sd, partial), [pt.dmatrix(), pt.dmatrix()])

    def perform(self, node, inputs, output_storage):
        factor, cov, _, _ = factor_kernel(*(np.ascontiguousarray(x, dtype=np.float64) for x in inputs))
        output_storage[0][0], output_storage[1][0] = factor, cov

    def infer_shape(self, node, shapes):
        d = shapes[0][0]
        return [(d, d), (d, d)]

    def pullback(self, inputs, outputs, cotangents):
        g_factor, g_cov = (
            pt.zeros_like(out) if isinstance(g.type, DisconnectedType) else g
            for out, g in zip(outputs, cotangents, strict=True)
        )
        return _factor_vjp(*inputs, g_factor, g_cov)


class PartialCorrelationFactorVJP(Op):
    """(s, c, Ḡ_L, Ḡ_Σ) ↦ (∂/∂s, ∂/∂c).  No second derivatives."""

    __props__ = ()

    def make_node(self, sd, partial, g_factor, g_cov):
        grads = [pt.as_tensor(g).astype("float64") for g in (g_factor, g_cov)]
        return Apply(self, _as_inputs(sd, partial) + grads, [pt.dvector(), pt.dvector()])

    def perform(self, node, inputs, output_storage):
        sd, partial, g_factor, g_cov = inputs
        c = np.ascontiguousarray
        g_sd, g_partial = factor_vjp_kernel(
            c(sd, np.float64), c(partial, np.float64), np.array(g_factor, np.float64), np.array(g_cov, np.float64)
        )  # writeable cotangents, as in Numba
        output_storage[0][0], output_storage[1][0] = g_sd, g_partial

    def infer_shape(self, node, shapes):
        return [tuple(shapes[0]), tuple(shapes[1])]

    def pullback(self, inputs, outputs, cotangents):
        return [grad_not_implemented(self, i, x, "second derivatives") for i, x in enumerate(inputs)]


_factor = PartialCorrelationFactor()
_factor_vjp = PartialCorrelationFactorVJP()


@register_numba_funcify(PartialCorrelationFactor)
def _numba_funcify_factor(op, node=None, **kwargs):
    """Numba implementation for PyTensor's default backend: the cached kernel."""

    @numba_njit
    def partial_correlation_factor_op(sd, partial):
        factor, cov, _, _ = factor_kernel(sd, partial)
        return factor, cov

    return partial_correlation_factor_op


@register_numba_funcify(PartialCorrelationFactorVJP)
def _numba_funcify_factor_vjp(op, node=None, **kwargs):
    """Numba implementation for PyTensor's default backend: the cached kernel."""

    @numba_njit
    def partial_correlation_factor_vjp_op(sd, partial, g_factor, g_cov):
        # copies: a disconnected cotangent is a read-only constant here, a writeable array in perform
        return factor_vjp_kernel(sd, partial, np.copy(g_factor), np.copy(g_cov))

    return partial_correlation_factor_vjp_op


def _jax_factor(sd, partial):
    import jax.numpy as jnp

    d = sd.shape[0]
    rows, cols = np.tril_indices(d, -1)
    strict = jnp.zeros((d, d)).at[rows, cols].set(partial)
    log_rest = jnp.log1p(-(strict**2))
    before = jnp.cumsum(log_rest, axis=1) - log_rest
    factor = sd[:, None] * (strict + jnp.eye(d)) * jnp.exp(0.5 * before)
    return factor, factor @ factor.T


@register_jax_funcify(PartialCorrelationFactor)
def _jax_funcify_factor(op, node=None, **kwargs):
    """JAX implementation: the same formulas in ``jax.numpy``."""
    return _jax_factor


register_jax_vjp(PartialCorrelationFactorVJP, _jax_factor, n_inputs=2)


def factor_and_covariance(sd, partial):
    """Lx = diag(s)·L and Σx = Lx·Lxᵀ from the standard deviations and the partial correlations
    (module notes), as tensors with their gradient.

    Parameters
    ----------
    sd : tensor (d,)
        The standard deviations s, > 0.
    partial : tensor (d(d − 1)/2,)
        The canonical partial correlations c ∈ (−1, 1), in the order of
        ``numpy.tril_indices(d, -1)``.

    Returns
    -------
    factor : tensor (d, d)
        Lx, lower triangular.
    covariance : tensor (d, d)
        Σx.
    """
    return _factor(sd, partial)

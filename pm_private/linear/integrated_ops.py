"""The integrated likelihood's moments as one Op with a hand-written gradient.

:func:`pm_private.linear.integrated.integrated_moments` gives the mean E and covariance Cov of the
released (Sxy, Syy) given (β, λ) and the Gram posterior (Q, V, Ŝ).  As a PyTensor graph its value
and gradient are some sixty nodes (matrix–vector and matrix products, concatenations and their
derivatives), each a Numba compilation on an empty cache; here they are two Numba kernels of
plain loops, compiled with ``cache=True`` (once per machine), registered under a key that follows
their source.

With b = Qᵀβ, s = b⊙b, w = V·s, σ² = 1/λ and M = V⊙bbᵀ + diag(w − diag(V)⊙s) (the module notes of
:mod:`pm_private.linear.integrated`),

    E = (Ŝβ, βᵀŜβ + nσ²),
    Cov = [[σ²Ŝ + QMQᵀ + diag(τ_xy),  2σ²Ŝβ + Q(b⊙t)],
           [sym.,  4σ²βᵀŜβ + (2n + r)σ⁴ + 2sᵀw − Σₖ Vₖₖsₖ² + τ_yy]],   t = 2w − diag(V)⊙s.

The gradient of ⟨ḡ, E⟩ + ⟨Ḡ, Cov⟩ follows by the chain rule through these lines (reverse mode,
written out in :func:`integrated_moments_vjp_kernel`); with respect to the data (Q, V, Ŝ, τ, n, r)
it is not defined (they are ``pm.Data``, never sampled).
"""

from __future__ import annotations

import numba
import numpy as np
import pytensor.tensor as pt
from pytensor.gradient import DisconnectedType, grad_not_implemented, grad_undefined
from pytensor.graph.basic import Apply
from pytensor.graph.op import Op
from pytensor.link.numba.dispatch.basic import numba_njit

from .._engine.jax_dispatch import register_jax_funcify, register_jax_vjp
from .._engine.numba_cache import register_numba_funcify

__all__ = ["integrated_moments_op", "integrated_moments_kernel", "integrated_moments_vjp_kernel"]


@numba.njit(cache=True, error_model="numpy")  # 1/λ = inf at λ = 0, as NumPy, not an exception
def _forward_terms(beta, lam, basis, entry_var, gram):
    """σ², b = Qᵀβ, s = b⊙b, w = V·s, Ŝβ and βᵀŜβ."""
    d = beta.shape[0]
    s2 = 1.0 / lam
    b = np.zeros(d)
    gram_beta = np.zeros(d)
    for i in range(d):
        for k in range(d):
            b[k] += basis[i, k] * beta[i]
            gram_beta[i] += gram[i, k] * beta[k]
    sq = b * b
    w = np.zeros(d)
    quad = 0.0
    for k in range(d):
        quad += beta[k] * gram_beta[k]
        for j in range(d):
            w[k] += entry_var[k, j] * sq[j]
    return s2, b, sq, w, gram_beta, quad


@numba.njit(cache=True, error_model="numpy")  # 1/λ = inf at λ = 0, as NumPy, not an exception
def integrated_moments_kernel(beta, lam, basis, entry_var, gram, noise_var, n, residual_var):
    """(E, Cov) of the module notes."""
    d = beta.shape[0]
    s2, b, sq, w, gram_beta, quad = _forward_terms(beta, lam, basis, entry_var, gram)
    middle = np.empty((d, d))
    for k in range(d):
        for j in range(d):
            middle[k, j] = entry_var[k, j] * b[k] * b[j]
        middle[k, k] += w[k] - entry_var[k, k] * sq[k]
    qm = np.zeros((d, d))
    for i in range(d):
        for k in range(d):
            x = basis[i, k]
            for j in range(d):
                qm[i, j] += x * middle[k, j]
    mean = np.empty(d + 1)
    cov = np.empty((d + 1, d + 1))
    var_yy = 4.0 * s2 * quad + (2.0 * n + residual_var) * s2 * s2 + noise_var[d]
    for k in range(d):
        var_yy += 2.0 * sq[k] * w[k] - entry_var[k, k] * sq[k] * sq[k]
    for i in range(d):
        mean[i] = gram_beta[i]
        cross = 2.0 * s2 * gram_beta[i]
        for k in range(d):
            cross += basis[i, k] * b[k] * (2.0 * w[k] - entry_var[k, k] * sq[k])
        cov[i, d] = cross
        cov[d, i] = cross
        for j in range(d):
            t = s2 * gram[i, j]
            for k in range(d):
                t += qm[i, k] * basis[j, k]
            cov[i, j] = t
        cov[i, i] += noise_var[i]
    mean[d] = quad + n * s2
    cov[d, d] = var_yy
    return mean, cov


@numba.njit(cache=True, error_model="numpy")  # 1/λ = inf at λ = 0, as NumPy, not an exception
def integrated_moments_vjp_kernel(beta, lam, basis, entry_var, gram, noise_var, n, residual_var, g_mean, g_cov):
    """(∂/∂β, ∂/∂λ) of ⟨g_mean, E⟩ + ⟨g_cov, Cov⟩ (module notes)."""
    d = beta.shape[0]
    s2, b, sq, w, gram_beta, quad = _forward_terms(beta, lam, basis, entry_var, gram)
    g_yy = g_cov[d, d]
    g_cross = np.empty(d)
    for i in range(d):
        g_cross[i] = g_cov[i, d] + g_cov[d, i]
    g_s2 = g_mean[d] * n + g_yy * (4.0 * quad + 2.0 * (2.0 * n + residual_var) * s2)
    g_beta = np.zeros(d)
    g_quad = g_mean[d] + 4.0 * s2 * g_yy  # the coefficient of βᵀŜβ
    for i in range(d):
        g_s2 += 2.0 * g_cross[i] * gram_beta[i]
        for j in range(d):
            g_s2 += g_cov[i, j] * gram[i, j]
            # Ŝᵀ(g_mean + 2σ²·g_cross) from Ŝβ, (Ŝ + Ŝᵀ)β·g_quad from βᵀŜβ
            g_beta[j] += gram[i, j] * (g_mean[i] + 2.0 * s2 * g_cross[i])
            g_beta[j] += g_quad * (gram[i, j] + gram[j, i]) * beta[i]
    # M̄ = Qᵀ·Ḡxy·Q (the cotangent of M), u = Qᵀ·ḡ_cross
    tmp = np.zeros((d, d))
    for i in range(d):
        for j in range(d):
            x = g_cov[i, j]
            for c in range(d):
                tmp[i, c] += x * basis[j, c]
    m_bar = np.zeros((d, d))
    u = np.zeros(d)
    for i in range(d):
        for k in range(d):
            x = basis[i, k]
            u[k] += x * g_cross[i]
            for c in range(d):
                m_bar[k, c] += x * tmp[i, c]
    g_b = np.zeros(d)
    g_sq = np.zeros(d)
    t_bar = np.empty(d)  # cotangent of t = 2w − diag(V)⊙s
    for k in range(d):
        t_bar[k] = u[k] * b[k]
        g_b[k] += u[k] * (2.0 * w[k] - entry_var[k, k] * sq[k])
        g_sq[k] -= entry_var[k, k] * (m_bar[k, k] + t_bar[k] + 2.0 * g_yy * sq[k])
    for k in range(d):
        for j in range(d):
            v = entry_var[k, j]
            g_b[k] += (v * m_bar[k, j] + entry_var[j, k] * m_bar[j, k]) * b[j]
            # w = V·s enters M's diagonal, t (twice) and var_yy (2sᵀw, also through s)
            g_sq[j] += v * (m_bar[k, k] + 2.0 * t_bar[k] + 2.0 * g_yy * sq[k])
            g_sq[k] += 2.0 * g_yy * v * sq[j]
    for k in range(d):
        g_b[k] += 2.0 * b[k] * g_sq[k]
    for i in range(d):
        for k in range(d):
            g_beta[i] += basis[i, k] * g_b[k]
    return g_beta, -g_s2 * s2 * s2


_N_DATA = 6  # basis, entry_var, gram, noise_var, n, residual_var


def _as_inputs(beta, lam, basis, entry_var, gram, noise_var, n, residual_var):
    inputs = [
        pt.as_tensor(x).astype("float64") for x in (beta, lam, basis, entry_var, gram, noise_var, n, residual_var)
    ]
    ndims = [x.ndim for x in inputs]
    if ndims != [1, 0, 2, 2, 2, 1, 0, 0]:
        raise ValueError(f"integrated moments of one regression need ndims [1, 0, 2, 2, 2, 1, 0, 0], got {ndims}")
    return inputs


def _kernel_args(inputs):
    """The kernels' arguments: contiguous float64 arrays, and floats for the scalars (λ, n, r)."""
    return [float(x) if np.ndim(x) == 0 else np.ascontiguousarray(x, dtype=np.float64) for x in inputs]


class IntegratedMoments(Op):
    """(β, λ, Q, V, Ŝ, τ, n, r) ↦ (E, Cov) of the released (Sxy, Syy) (module notes)."""

    __props__ = ()

    def make_node(self, *inputs):
        return Apply(self, _as_inputs(*inputs), [pt.dvector(), pt.dmatrix()])

    def perform(self, node, inputs, output_storage):
        mean, cov = integrated_moments_kernel(*_kernel_args(inputs))
        output_storage[0][0], output_storage[1][0] = mean, cov

    def infer_shape(self, node, shapes):
        d = shapes[0][0]
        return [(d + 1,), (d + 1, d + 1)]

    def pullback(self, inputs, outputs, cotangents):
        g_mean, g_cov = cotangents
        if isinstance(g_mean.type, DisconnectedType):
            g_mean = pt.zeros_like(outputs[0])
        if isinstance(g_cov.type, DisconnectedType):
            g_cov = pt.zeros_like(outputs[1])
        g_beta, g_lam = _integrated_moments_vjp(*inputs, g_mean, g_cov)
        data = [grad_undefined(self, 2 + i, x, "the release's arrays are data") for i, x in enumerate(inputs[2:])]
        return [g_beta, g_lam, *data]


class IntegratedMomentsVJP(Op):
    """(β, λ, data…, ḡ, Ḡ) ↦ (∂/∂β, ∂/∂λ) of ⟨ḡ, E⟩ + ⟨Ḡ, Cov⟩.  No second derivatives."""

    __props__ = ()

    def make_node(self, *inputs):
        *args, g_mean, g_cov = inputs
        grads = [pt.as_tensor(g).astype("float64") for g in (g_mean, g_cov)]
        return Apply(self, _as_inputs(*args) + grads, [pt.dvector(), pt.dscalar()])

    def perform(self, node, inputs, output_storage):
        g_beta, g_lam = integrated_moments_vjp_kernel(*_kernel_args(inputs))
        output_storage[0][0], output_storage[1][0] = g_beta, np.asarray(g_lam)

    def infer_shape(self, node, shapes):
        return [tuple(shapes[0]), ()]

    def pullback(self, inputs, outputs, cotangents):
        return [grad_not_implemented(self, i, x, "second derivatives") for i, x in enumerate(inputs)]


_integrated_moments = IntegratedMoments()
_integrated_moments_vjp = IntegratedMomentsVJP()


@register_numba_funcify(IntegratedMoments)
def _numba_funcify_integrated_moments(op, node=None, **kwargs):
    """Numba implementation for PyTensor's default backend: the cached kernel."""

    @numba_njit
    def integrated_moments_op(beta, lam, basis, entry_var, gram, noise_var, n, residual_var):
        return integrated_moments_kernel(beta, lam[()], basis, entry_var, gram, noise_var, n[()], residual_var[()])

    return integrated_moments_op


@register_numba_funcify(IntegratedMomentsVJP)
def _numba_funcify_integrated_moments_vjp(op, node=None, **kwargs):
    """Numba implementation for PyTensor's default backend: the cached kernel."""

    @numba_njit
    def integrated_moments_vjp_op(beta, lam, basis, entry_var, gram, noise_var, n, residual_var, g_mean, g_cov):
        g_beta, g_lam = integrated_moments_vjp_kernel(
            beta, lam[()], basis, entry_var, gram, noise_var, n[()], residual_var[()], g_mean, g_cov
        )
        return g_beta, np.asarray(g_lam)

    return integrated_moments_vjp_op


def _jax_moments(beta, lam, basis, entry_var, gram, noise_var, n, residual_var):
    import jax.numpy as jnp

    s2 = 1.0 / lam
    b = basis.T @ beta
    sq = b * b
    w = entry_var @ sq
    var_diag = jnp.diagonal(entry_var)
    middle = entry_var * jnp.outer(b, b) + jnp.diag(w - var_diag * sq)
    gram_beta = gram @ beta
    quad = beta @ gram_beta
    cov_xy = s2 * gram + basis @ middle @ basis.T + jnp.diag(noise_var[:-1])
    cross = 2.0 * s2 * gram_beta + basis @ (b * (2.0 * w - var_diag * sq))
    var_yy = 4.0 * s2 * quad + (2.0 * n + residual_var) * s2**2 + 2.0 * sq @ w - var_diag @ sq**2 + noise_var[-1]
    top = jnp.concatenate([cov_xy, cross[:, None]], axis=1)
    bottom = jnp.concatenate([cross, var_yy[None]])[None, :]
    return jnp.concatenate([gram_beta, (quad + n * s2)[None]]), jnp.concatenate([top, bottom], axis=0)


@register_jax_funcify(IntegratedMoments)
def _jax_funcify_integrated_moments(op, node=None, **kwargs):
    """JAX implementation: the same formulas in ``jax.numpy``."""
    return _jax_moments


register_jax_vjp(IntegratedMomentsVJP, _jax_moments, n_inputs=8, n_primals=2)


def integrated_moments_op(beta, noise_precision, basis, entry_var, gram, noise_var, n, residual_var=0.0):
    """E and Cov of :func:`pm_private.linear.integrated.integrated_moments` for one regression, as
    tensors with their gradient in β and λ (``IntegratedMoments``).

    Parameters
    ----------
    beta : tensor (d,)
    noise_precision : tensor ()
        λ = 1/σ².
    basis, entry_var, gram : tensor (d, d)
        Q, V and Ŝ of :func:`pm_private.linear.integrated.gram_posterior`.
    noise_var : tensor (d + 1,)
        Noise variances of the released (Sxy, Syy).
    n : tensor ()
        The residuals' weight.
    residual_var : tensor (), default 0
        Noise variance of a released n.

    Returns
    -------
    mean : tensor (d + 1,)
    cov : tensor (d + 1, d + 1)
    """
    return _integrated_moments(beta, noise_precision, basis, entry_var, gram, noise_var, n, residual_var)

"""The degree-2 statistics' mean and covariance as one compiled Op, with its vector–Jacobian product.

:func:`pm_private.released.moments.linear_predictor_moments` assembles the mean (k entries) and
covariance (k × k, k = 2d + 1 + d(d+1)/2) of t(x, y) = (x, y, upper(xxᵀ), y·x) from the Stein
coefficients of the link, μ, Σ and v = Σβ (the formulas of that module's notes and of Isserlis'
theorem with a mean).  Written as a PyTensor graph, the assembly and its symbolic gradient are
about a thousand nodes of gathers, outer products and concatenations, whose rewriting and
compilation took minutes on a first fit.  ``Degree2Moments`` computes the same entries in one
Numba kernel, and ``Degree2MomentsVJP`` the gradient of ⟨ḡ_mean, mean⟩ + ⟨Ḡ, covariance⟩ with
respect to every input by reverse-mode differentiation written out by hand (each entry's
partial derivatives, accumulated over the entries), in O(k² + d³) operations: two small nodes in
the graph.  Both kernels are compiled with ``cache=True`` (once per machine, loaded from disk in
later processes) and registered with PyTensor under a key that follows their source
(:func:`pm_private._engine.numba_cache.register_numba_funcify`), so PyTensor's cache holds the
graphs that contain them.  Their JAX implementations (numpyro, blackjax, nutpie's JAX backend)
are the same formulas in ``jax.numpy``, differentiated by JAX.

The link enters through seven coefficients, ``coef`` = (E[g], E[g′], E[g″], E[g‴], E[h], E[h′],
E[h″]) for g(a) = E[y | a] and h(a) = E[y² | a] at a = xᵀβ + b (Stein's lemma), which the families
compute symbolically (a few nodes).
"""

from __future__ import annotations

import numba
import numpy as np
import pytensor.tensor as pt
from pytensor.gradient import DisconnectedType, grad_not_implemented
from pytensor.graph.basic import Apply
from pytensor.graph.op import Op
from pytensor.link.numba.dispatch.basic import numba_njit

from .._engine.jax_dispatch import register_jax_funcify, register_jax_vjp
from .._engine.numba_cache import register_numba_funcify

__all__ = [
    "Degree2Moments",
    "Degree2MomentsVJP",
    "degree2_moments",
    "square_covariance",
    "square_covariance_adjoint",
    "upper_pairs",
]

#: The number of link coefficients: E[g], E[g′], E[g″], E[g‴], E[h], E[h′], E[h″].
N_COEFFICIENTS = 7


@numba.njit(cache=True)
def upper_pairs(d):
    """Row and column of the upper-triangle pairs i ≤ j of a d × d matrix, row-major
    (``numpy.triu_indices``)."""
    size = d * (d + 1) // 2
    rows, cols = np.empty(size, np.int64), np.empty(size, np.int64)
    p = 0
    for i in range(d):
        for j in range(i, d):
            rows[p], cols[p] = i, j
            p += 1
    return rows, cols


@numba.njit(cache=True)
def _second_moment(mu, cov):
    """M = Σ + μμᵀ by loops (no BLAS or broadcasting code to compile)."""
    d = mu.size
    second = np.empty((d, d))
    for i in range(d):
        for j in range(d):
            second[i, j] = cov[i, j] + mu[i] * mu[j]
    return second


@numba.njit(cache=True)
def square_covariance(mu, cov, out, offset):
    """Cov(xᵢxⱼ, xₖxₗ) for x ~ N(μ, Σ) over the upper-triangle pairs (i, j) and (k, l) of
    :func:`upper_pairs`, written into the P × P block of ``out`` at (``offset``, ``offset``),
    P = d(d + 1)/2.

    By Isserlis' theorem with a mean, with M = Σ + μμᵀ,
    Cov(xᵢxⱼ, xₖxₗ) = MᵢₖMⱼₗ + MᵢₗMⱼₖ − 2μᵢμⱼμₖμₗ.
    """
    rows, cols = upper_pairs(mu.size)
    second = _second_moment(mu, cov)
    for p in range(rows.size):
        i, j = rows[p], cols[p]
        lead = 2.0 * mu[i] * mu[j]
        for q in range(rows.size):
            k, m = rows[q], cols[q]
            value = second[i, k] * second[j, m] + second[i, m] * second[j, k] - lead * mu[k] * mu[m]
            out[offset + p, offset + q] = value


@numba.njit(cache=True)
def square_covariance_adjoint(mu, cov, bar, offset, g_mu, g_cov):
    """Reverse of :func:`square_covariance`: adds the gradient of ⟨bar, Cov(xxᵀ)⟩ (the P × P block of
    ``bar`` at (``offset``, ``offset``)) with respect to μ and Σ (every entry a separate input) to
    ``g_mu`` and ``g_cov``."""
    d = mu.size
    rows, cols = upper_pairs(d)
    second = _second_moment(mu, cov)
    second_bar = np.zeros((d, d))
    lead_bar = np.zeros(rows.size)  # the adjoint of μᵢμⱼ
    for p in range(rows.size):
        i, j = rows[p], cols[p]
        for q in range(rows.size):
            k, m = rows[q], cols[q]
            t = bar[offset + p, offset + q]
            second_bar[i, k] += t * second[j, m]
            second_bar[j, m] += t * second[i, k]
            second_bar[i, m] += t * second[j, k]
            second_bar[j, k] += t * second[i, m]
            lead_bar[p] -= 2.0 * t * mu[k] * mu[m]
            lead_bar[q] -= 2.0 * t * mu[i] * mu[j]
    for p in range(rows.size):
        g_mu[rows[p]] += lead_bar[p] * mu[cols[p]]
        g_mu[cols[p]] += lead_bar[p] * mu[rows[p]]
    for i in range(d):  # M = Σ + μμᵀ
        for j in range(d):
            g_cov[i, j] += second_bar[i, j]
            g_mu[i] += second_bar[i, j] * mu[j]
            g_mu[j] += second_bar[i, j] * mu[i]


@numba.njit(cache=True)
def _second_moments(coef, mu, cov, v):
    """M₂ = Σ + μμᵀ, E[g·x], E[g·xxᵀ], E[h·x], E[h·xxᵀ] (module notes of ``released.moments``)."""
    a0, a1, a2, h0, h1, h2 = coef[0], coef[1], coef[2], coef[4], coef[5], coef[6]
    d = mu.size
    m2, egxx, ehxx = np.empty((d, d)), np.empty((d, d)), np.empty((d, d))
    for a in range(d):
        for b in range(d):
            m2[a, b] = cov[a, b] + mu[a] * mu[b]
            cross = mu[a] * v[b] + v[a] * mu[b]
            egxx[a, b] = a0 * m2[a, b] + a1 * cross + a2 * (v[a] * v[b])
            ehxx[a, b] = h0 * m2[a, b] + h1 * cross + h2 * (v[a] * v[b])
    return m2, a0 * mu + a1 * v, egxx, h0 * mu + h1 * v, ehxx


@numba.njit(cache=True)
def _third(coef, mu, cov, v, i, j, c):
    """E[g·xᵢxⱼx_c] (Stein's lemma with Isserlis' third moments)."""
    m3 = mu[i] * mu[j] * mu[c] + mu[i] * cov[j, c] + mu[j] * cov[i, c] + mu[c] * cov[i, j]
    t1 = v[i] * mu[j] * mu[c] + mu[i] * v[j] * mu[c] + mu[i] * mu[j] * v[c]
    t1 += v[i] * cov[j, c] + v[j] * cov[i, c] + v[c] * cov[i, j]
    t2 = mu[i] * v[j] * v[c] + v[i] * mu[j] * v[c] + v[i] * v[j] * mu[c]
    return coef[0] * m3 + coef[1] * t1 + coef[2] * t2 + coef[3] * (v[i] * v[j] * v[c])


@numba.njit(cache=True)
def degree2_moments_kernel(coef, mu, cov, v):
    """(mean, covariance) of t(x, y) in release order (``degree2_pairs``): blocks x, y, upper(xxᵀ), y·x."""
    d = mu.size
    rows, cols = upper_pairs(d)
    n_pairs = rows.size
    k = 2 * d + 1 + n_pairs
    y, q0, z0 = d, d + 1, d + 1 + n_pairs
    a0, h0 = coef[0], coef[4]
    m2, exg, egxx, ehx, ehxx = _second_moments(coef, mu, cov, v)
    mean, out = np.empty(k), np.empty((k, k))
    for a in range(d):  # loops, not mean[:d] = mu: an array assignment compiles its error message
        mean[a] = mu[a]
        mean[z0 + a] = exg[a]
    mean[y] = a0
    out[y, y] = h0 - a0 * a0
    for a in range(d):
        out[a, y] = out[y, a] = exg[a] - a0 * mu[a]
        out[y, z0 + a] = out[z0 + a, y] = ehx[a] - a0 * exg[a]
        for b in range(d):
            out[a, b] = cov[a, b]
            out[a, z0 + b] = out[z0 + b, a] = egxx[a, b] - mu[a] * exg[b]
            out[z0 + a, z0 + b] = ehxx[a, b] - exg[a] * exg[b]
    for p in range(n_pairs):
        i, j = rows[p], cols[p]
        mean[q0 + p] = m2[i, j]
        out[y, q0 + p] = out[q0 + p, y] = egxx[i, j] - a0 * m2[i, j]
        for a in range(d):
            out[a, q0 + p] = out[q0 + p, a] = cov[a, i] * mu[j] + cov[a, j] * mu[i]
            out[q0 + p, z0 + a] = out[z0 + a, q0 + p] = _third(coef, mu, cov, v, i, j, a) - m2[i, j] * exg[a]
    square_covariance(mu, cov, out, q0)
    return mean, out


@numba.njit(cache=True)
def _third_vjp(g, coef, mu, cov, v, i, j, c, g_coef, g_mu, g_cov, g_v):
    """Add g·∂/∂(coef, μ, Σ, v) of ``_third`` to the gradients."""
    g_coef[0] += g * (mu[i] * mu[j] * mu[c] + mu[i] * cov[j, c] + mu[j] * cov[i, c] + mu[c] * cov[i, j])
    t1 = v[i] * mu[j] * mu[c] + mu[i] * v[j] * mu[c] + mu[i] * mu[j] * v[c]
    g_coef[1] += g * (t1 + v[i] * cov[j, c] + v[j] * cov[i, c] + v[c] * cov[i, j])
    g_coef[2] += g * (mu[i] * v[j] * v[c] + v[i] * mu[j] * v[c] + v[i] * v[j] * mu[c])
    g_coef[3] += g * (v[i] * v[j] * v[c])
    w0, w1, w2, w3 = g * coef[0], g * coef[1], g * coef[2], g * coef[3]
    g_mu[i] += w0 * (mu[j] * mu[c] + cov[j, c]) + w1 * (v[j] * mu[c] + mu[j] * v[c]) + w2 * (v[j] * v[c])
    g_mu[j] += w0 * (mu[i] * mu[c] + cov[i, c]) + w1 * (v[i] * mu[c] + mu[i] * v[c]) + w2 * (v[i] * v[c])
    g_mu[c] += w0 * (mu[i] * mu[j] + cov[i, j]) + w1 * (v[i] * mu[j] + mu[i] * v[j]) + w2 * (v[i] * v[j])
    g_v[i] += w1 * (mu[j] * mu[c] + cov[j, c]) + w2 * (mu[j] * v[c] + v[j] * mu[c]) + w3 * (v[j] * v[c])
    g_v[j] += w1 * (mu[i] * mu[c] + cov[i, c]) + w2 * (mu[i] * v[c] + v[i] * mu[c]) + w3 * (v[i] * v[c])
    g_v[c] += w1 * (mu[i] * mu[j] + cov[i, j]) + w2 * (mu[i] * v[j] + v[i] * mu[j]) + w3 * (v[i] * v[j])
    g_cov[j, c] += w0 * mu[i] + w1 * v[i]
    g_cov[i, c] += w0 * mu[j] + w1 * v[j]
    g_cov[i, j] += w0 * mu[c] + w1 * v[c]


@numba.njit(cache=True)
def _blocks_vjp(coef, mu, cov, v, g_mean, g_out, g_coef, g_mu, g_cov, g_v):
    """The cotangents of M₂, E[g·x], E[g·xxᵀ], E[h·x], E[h·xxᵀ] from those of the blocks of
    ``degree2_moments_kernel`` (the direct terms added to the gradients)."""
    d = mu.size
    rows, cols = upper_pairs(d)
    n_pairs = rows.size
    y, q0, z0 = d, d + 1, d + 1 + n_pairs
    a0 = coef[0]
    m2, exg, _, _, _ = _second_moments(coef, mu, cov, v)
    g_m2, g_exg = np.zeros((d, d)), g_mean[z0:].copy()
    g_egxx, g_ehx, g_ehxx = np.zeros((d, d)), np.zeros(d), np.zeros((d, d))
    g_mu += g_mean[:d]
    g_coef[0] += g_mean[y]
    g_yy = g_out[y, y]
    g_coef[4] += g_yy
    g_coef[0] -= 2.0 * a0 * g_yy
    for a in range(d):
        g = g_out[a, y] + g_out[y, a]
        g_exg[a] += g
        g_coef[0] -= g * mu[a]
        g_mu[a] -= a0 * g
        g = g_out[y, z0 + a] + g_out[z0 + a, y]
        g_ehx[a] += g
        g_coef[0] -= g * exg[a]
        g_exg[a] -= a0 * g
        for b in range(d):
            g_cov[a, b] += g_out[a, b]
            g = g_out[a, z0 + b] + g_out[z0 + b, a]
            g_egxx[a, b] += g
            g_mu[a] -= g * exg[b]
            g_exg[b] -= g * mu[a]
            g = g_out[z0 + a, z0 + b]
            g_ehxx[a, b] += g
            g_exg[a] -= g * exg[b]
            g_exg[b] -= g * exg[a]
    for p in range(n_pairs):
        i, j = rows[p], cols[p]
        g_m2[i, j] += g_mean[q0 + p]
        g = g_out[y, q0 + p] + g_out[q0 + p, y]
        g_egxx[i, j] += g
        g_coef[0] -= g * m2[i, j]
        g_m2[i, j] -= a0 * g
        for a in range(d):
            g = g_out[a, q0 + p] + g_out[q0 + p, a]
            g_cov[a, i] += g * mu[j]
            g_mu[j] += g * cov[a, i]
            g_cov[a, j] += g * mu[i]
            g_mu[i] += g * cov[a, j]
            g = g_out[q0 + p, z0 + a] + g_out[z0 + a, q0 + p]
            _third_vjp(g, coef, mu, cov, v, i, j, a, g_coef, g_mu, g_cov, g_v)
            g_m2[i, j] -= g * exg[a]
            g_exg[a] -= g * m2[i, j]
    square_covariance_adjoint(mu, cov, g_out, q0, g_mu, g_cov)
    return m2, g_m2, g_exg, g_egxx, g_ehx, g_ehxx


@numba.njit(cache=True)
def _quadratic_vjp(g, coef, lead, m2, mu, v, a, b, g_coef, g_m2, g_mu, g_v):
    """Add g·∂/∂ of c₀M₂[a, b] + c₁(μₐv_b + vₐμ_b) + c₂vₐv_b, (c₀, c₁, c₂) = coef[lead:lead + 3]."""
    c1, c2 = coef[lead + 1], coef[lead + 2]
    g_coef[lead] += g * m2[a, b]
    g_coef[lead + 1] += g * (mu[a] * v[b] + v[a] * mu[b])
    g_coef[lead + 2] += g * (v[a] * v[b])
    g_m2[a, b] += coef[lead] * g
    g_mu[a] += c1 * g * v[b]
    g_mu[b] += c1 * g * v[a]
    g_v[b] += c1 * g * mu[a] + c2 * g * v[a]
    g_v[a] += c1 * g * mu[b] + c2 * g * v[b]


@numba.njit(cache=True)
def degree2_moments_vjp_kernel(coef, mu, cov, v, g_mean, g_out):
    """(∂/∂coef, ∂/∂μ, ∂/∂Σ, ∂/∂v) of ⟨g_mean, mean⟩ + ⟨g_out, covariance⟩ for the moments of
    ``degree2_moments_kernel``, every entry of Σ taken as a separate input (as a PyTensor graph
    of the same formulas differentiates them)."""
    d = mu.size
    a0, a1, h0, h1 = coef[0], coef[1], coef[4], coef[5]
    g_coef, g_mu, g_cov, g_v = np.zeros(N_COEFFICIENTS), np.zeros(d), np.zeros((d, d)), np.zeros(d)
    m2, g_m2, g_exg, g_egxx, g_ehx, g_ehxx = _blocks_vjp(coef, mu, cov, v, g_mean, g_out, g_coef, g_mu, g_cov, g_v)
    for a in range(d):
        g_coef[4] += g_ehx[a] * mu[a]
        g_mu[a] += h0 * g_ehx[a]
        g_coef[5] += g_ehx[a] * v[a]
        g_v[a] += h1 * g_ehx[a]
        g_coef[0] += g_exg[a] * mu[a]
        g_mu[a] += a0 * g_exg[a]
        g_coef[1] += g_exg[a] * v[a]
        g_v[a] += a1 * g_exg[a]
        for b in range(d):
            _quadratic_vjp(g_ehxx[a, b], coef, 4, m2, mu, v, a, b, g_coef, g_m2, g_mu, g_v)
            _quadratic_vjp(g_egxx[a, b], coef, 0, m2, mu, v, a, b, g_coef, g_m2, g_mu, g_v)
    for a in range(d):
        for b in range(d):
            g_cov[a, b] += g_m2[a, b]
            g_mu[a] += g_m2[a, b] * mu[b]
            g_mu[b] += g_m2[a, b] * mu[a]
    return g_coef, g_mu, g_cov, g_v


def _statistic_count(d):
    """k = 2d + 1 + d(d + 1)/2, the number of degree-2 statistics of d covariates."""
    return 2 * d + 1 + d * (d + 1) // 2


def compile_vjp_kernel() -> None:
    """Compile (or load from Numba's disk cache) :func:`degree2_moments_vjp_kernel` for the types
    the Numba implementation of ``Degree2MomentsVJP`` calls it with (C-contiguous float64 arrays):
    the task of :mod:`pm_private._engine.compile_worker` that a GLM's first fit hands to a second
    process."""
    d = 2
    k = _statistic_count(d)
    degree2_moments_vjp_kernel(
        np.zeros(N_COEFFICIENTS), np.zeros(d), np.eye(d), np.zeros(d), np.zeros(k), np.zeros((k, k))
    )


def _as_inputs(coef, mu, cov, v):
    return [pt.as_tensor(x).astype("float64") for x in (coef, mu, cov, v)]


def _check_inputs(coef, mu, cov, v):
    if coef.ndim != 1 or mu.ndim != 1 or cov.ndim != 2 or v.ndim != 1:
        raise ValueError("coef, mu and v must be vectors and cov a matrix")


class Degree2Moments(Op):
    """(coef, μ, Σ, v) ↦ (mean, covariance) of the degree-2 statistics of one record (module notes)."""

    __props__ = ()

    def make_node(self, coef, mu, cov, v):
        inputs = _as_inputs(coef, mu, cov, v)
        _check_inputs(*inputs)
        return Apply(self, inputs, [pt.dvector(), pt.dmatrix()])

    def perform(self, node, inputs, output_storage):
        mean, cov = degree2_moments_kernel(*(np.ascontiguousarray(x, dtype=np.float64) for x in inputs))
        output_storage[0][0], output_storage[1][0] = mean, cov

    def infer_shape(self, node, shapes):
        k = _statistic_count(shapes[1][0])
        return [(k,), (k, k)]

    def pullback(self, inputs, outputs, cotangents):
        g_mean, g_cov = cotangents
        if isinstance(g_mean.type, DisconnectedType):
            g_mean = pt.zeros_like(outputs[0])
        if isinstance(g_cov.type, DisconnectedType):
            g_cov = pt.zeros_like(outputs[1])
        return _degree2_moments_vjp(*inputs, g_mean, g_cov)


class Degree2MomentsVJP(Op):
    """(coef, μ, Σ, v, ḡ_mean, Ḡ) ↦ the gradients of ⟨ḡ_mean, mean⟩ + ⟨Ḡ, covariance⟩ with respect to
    (coef, μ, Σ, v).  Second derivatives are not implemented."""

    __props__ = ()

    def make_node(self, coef, mu, cov, v, g_mean, g_cov):
        inputs = _as_inputs(coef, mu, cov, v) + [pt.as_tensor(g).astype("float64") for g in (g_mean, g_cov)]
        _check_inputs(*inputs[:4])
        return Apply(self, inputs, [pt.dvector(), pt.dvector(), pt.dmatrix(), pt.dvector()])

    def perform(self, node, inputs, output_storage):
        grads = degree2_moments_vjp_kernel(*(np.ascontiguousarray(x, dtype=np.float64) for x in inputs))
        for storage, value in zip(output_storage, grads, strict=True):
            storage[0] = value

    def infer_shape(self, node, shapes):
        return [tuple(shape) for shape in shapes[:4]]

    def pullback(self, inputs, outputs, cotangents):
        return [grad_not_implemented(self, i, x, "second derivatives") for i, x in enumerate(inputs)]


_degree2_moments = Degree2Moments()
_degree2_moments_vjp = Degree2MomentsVJP()


@register_numba_funcify(Degree2Moments)
def _numba_funcify_degree2_moments(op, node=None, **kwargs):
    """Numba implementation for PyTensor's default backend: the cached kernel."""

    @numba_njit
    def degree2_moments_op(coef, mu, cov, v):
        c = np.ascontiguousarray
        return degree2_moments_kernel(c(coef), c(mu), c(cov), c(v))

    return degree2_moments_op


@register_numba_funcify(Degree2MomentsVJP)
def _numba_funcify_degree2_moments_vjp(op, node=None, **kwargs):
    """Numba implementation for PyTensor's default backend: the cached kernel."""

    @numba_njit
    def degree2_moments_vjp_op(coef, mu, cov, v, g_mean, g_cov):
        c = np.ascontiguousarray
        return degree2_moments_vjp_kernel(c(coef), c(mu), c(cov), c(v), c(g_mean), c(g_cov))

    return degree2_moments_vjp_op


def _jax_moments(coef, mu, cov, v):
    """``degree2_moments_kernel`` in ``jax.numpy`` (differentiable by JAX)."""
    import jax.numpy as jnp

    d = mu.shape[0]
    a0, a1, a2, a3, h0, h1, h2 = (coef[i] for i in range(N_COEFFICIENTS))
    i, j = np.triu_indices(d)
    m2 = cov + jnp.outer(mu, mu)
    cross = jnp.outer(mu, v) + jnp.outer(v, mu)
    exg, ehx = a0 * mu + a1 * v, h0 * mu + h1 * v
    egxx = a0 * m2 + a1 * cross + a2 * jnp.outer(v, v)
    ehxx = h0 * m2 + h1 * cross + h2 * jnp.outer(v, v)

    def sym(x, y, z):  # x_i y_j z_c + y_i x_j z_c + y_i z_j x_c at the upper pairs (i, j)
        return x[i, None] * y[j, None] * z[None, :] + y[i, None] * x[j, None] * z[None, :] + y[i, None] * z[j, None] * x

    def sym_matrix(x, m):  # x_i m_jc + x_j m_ic + x_c m_ij
        return x[i, None] * m[j] + x[j, None] * m[i] + x[None, :] * m[i, j][:, None]

    m3 = mu[i, None] * mu[j, None] * mu[None, :] + sym_matrix(mu, cov)
    third = a0 * m3 + a1 * (sym(v, mu, mu) + sym_matrix(v, cov)) + a2 * sym(mu, v, v)
    third = third + a3 * v[i, None] * v[j, None] * v[None, :]
    c13 = cov[:, i] * mu[j][None, :] + cov[:, j] * mu[i][None, :]
    c33 = (
        cov[i[:, None], i] * cov[j[:, None], j]
        + cov[i[:, None], j] * cov[j[:, None], i]
        + (mu[i][:, None] * mu[i]) * cov[j[:, None], j]
        + (mu[i][:, None] * mu[j]) * cov[j[:, None], i]
        + (mu[j][:, None] * mu[i]) * cov[i[:, None], j]
        + (mu[j][:, None] * mu[j]) * cov[i[:, None], i]
    )
    c12, c14 = exg - a0 * mu, egxx - jnp.outer(mu, exg)
    c23, c24 = egxx[i, j] - a0 * m2[i, j], ehx - a0 * exg
    c34, c44 = third - jnp.outer(m2[i, j], exg), ehxx - jnp.outer(exg, exg)
    out = jnp.block(
        [
            [cov, c12[:, None], c13, c14],
            [c12[None, :], jnp.reshape(h0 - a0 * a0, (1, 1)), c23[None, :], c24[None, :]],
            [c13.T, c23[:, None], c33, c34],
            [c14.T, c24[:, None], c34.T, c44],
        ]
    )
    return jnp.concatenate([mu, jnp.reshape(a0, (1,)), m2[i, j], exg]), out


@register_jax_funcify(Degree2Moments)
def _jax_funcify_degree2_moments(op, node=None, **kwargs):
    """JAX implementation: the same formulas in ``jax.numpy``."""
    return _jax_moments


register_jax_vjp(Degree2MomentsVJP, _jax_moments, n_inputs=4)


def degree2_moments(coef, mu, cov, v):
    """Mean and covariance of the degree-2 statistics t(x, y) = (x, y, upper(xxᵀ), y·x) of one record,
    as tensors with their gradient (``Degree2Moments``).

    Parameters
    ----------
    coef : tensor (7,)
        E[g], E[g′], E[g″], E[g‴], E[h], E[h′], E[h″] (module notes).
    mu : tensor (d,)
        The covariates' mean μ.
    cov : tensor (d, d)
        Their covariance Σ.
    v : tensor (d,)
        Σβ.

    Returns
    -------
    mean : tensor (k,)
        E[t], k = 2d + 1 + d(d+1)/2, in release order.
    covariance : tensor (k, k)
        Cov[t].
    """
    return _degree2_moments(coef, mu, cov, v)

"""The noise-aware likelihood of linear releases as two compact Ops with hand-written gradients.

As a PyTensor graph, the augmented factor L_C = [[Lx, 0], [βᵀLx, σ]] (σ = λ^(−1/2)) and the
log-likelihood of the released and public statistics given L_C are some hundred nodes with their
gradient (concatenations, triangular solves, index maps and their derivatives), each a Numba
compilation on an empty cache.  Here they are Numba kernels of plain loops compiled with
``cache=True`` (once per machine) and registered under a key that follows their source.

The log-likelihood (Bernstein & Sheldon 2019) is

    log p = on · log N(r | n·m(C_p), n·V(C_p) + diag(v)) + log p(S_pub | C),

the first term the density of the released vector r (:func:`pm_private.linear.stats.stat_pairs`)
under C_p = L_p L_pᵀ (the private rows' covariance), with the Gaussian moments m_(ab) = C_ab and
V_(ab),(ce) = C_ac·C_be + C_ae·C_bc and the release's per-entry noise variances v, in one of two
forms:

* spectral, O(d³): the form of :func:`pm_private.linear.frobenius.frobenius_stats_logp`, for noise
  isotropic in the Frobenius geometry (v = σ_R²/w², Gaussian releases; σ_R² is v's last entry);
* dense, O(k³) with k = (d+1)(d+2)/2, for any v (Laplace releases): the Cholesky factor of the
  k × k covariance Σ, α = Σ⁻¹(r − n·m) and A = ½(ααᵀ − Σ⁻¹) give the gradient in C as
  n·α at the means' entries plus n·A contracted with V's four products, then ∂/∂L_p = (G + Gᵀ)L_p;

the second term is the exact log-likelihood of n_pub public rows z ~ N(0, C) from S_pub = Σ zzᵀ,

    log p(S_pub | C) = −(n_pub/2)·((d+1)·log 2π + log|C|) − ½·tr(C⁻¹S_pub),

whose gradient in the lower triangle of L = L_C is, with W = L⁻¹S_pub L⁻ᵀ,

    ∂/∂L = tril(L⁻ᵀW) − n_pub·diag(1/Lᵢᵢ).

The gradient of the augmented factor with cotangent G is ∂/∂Lx = G_xx + β·G_yxᵀ, ∂/∂β = Lx·G_yx and
∂/∂λ = −½·λ^(−3/2)·G_yy.  With respect to the release's arrays no gradient is defined (they are
``pm.Data``, never sampled).
"""

from __future__ import annotations

from functools import partial

import numba
import numpy as np
import pytensor.tensor as pt
from pytensor.gradient import DisconnectedType, grad_not_implemented, grad_undefined
from pytensor.graph.basic import Apply
from pytensor.graph.op import Op
from pytensor.link.numba.dispatch.basic import numba_njit

from .._engine.jax_dispatch import register_jax_funcify, register_jax_vjp
from .._engine.numba_arrays import copy_into
from .._engine.numba_cache import register_numba_funcify
from .._engine.threads import single_threaded_blas
from .frobenius import frobenius_one, jax_frobenius_one
from .stats import stat_pairs

__all__ = ["augmented_cholesky", "released_stats_logp"]


@numba.njit(cache=True)
def augmented_cholesky_kernel(beta, lam, x_chol):  # pragma: no cover
    """L_C of each regression of a batch: beta (B, d), lam (B,), x_chol (B, d, d) → (B, d+1, d+1)."""
    batch, d = beta.shape
    out = np.zeros((batch, d + 1, d + 1))
    for b in range(batch):
        for i in range(d):
            for j in range(d):
                out[b, i, j] = x_chol[b, i, j]
                out[b, d, j] += beta[b, i] * x_chol[b, i, j]
        out[b, d, d] = 1.0 / np.sqrt(lam[b])
    return out


@numba.njit(cache=True)
def augmented_cholesky_vjp_kernel(beta, lam, x_chol, g):  # pragma: no cover
    """(∂/∂β, ∂/∂λ, ∂/∂Lx) of ⟨G, L_C⟩ for a batch (module notes)."""
    batch, d = beta.shape
    g_beta = np.zeros((batch, d))
    g_lam = np.empty(batch)
    g_x = np.empty((batch, d, d))
    for b in range(batch):
        for i in range(d):
            for j in range(d):
                g_x[b, i, j] = g[b, i, j] + beta[b, i] * g[b, d, j]
                g_beta[b, i] += x_chol[b, i, j] * g[b, d, j]
        g_lam[b] = -0.5 * g[b, d, d] / (lam[b] * np.sqrt(lam[b]))
    return g_beta, g_lam, g_x


@numba.njit(cache=True)
def _lower_solve(lower, rhs):  # pragma: no cover
    """L⁻¹·rhs for a lower-triangular L (forward substitution, column by column)."""
    p, m = rhs.shape
    out = np.empty((p, m))
    for c in range(m):
        for i in range(p):
            total = rhs[i, c]
            for k in range(i):
                total -= lower[i, k] * out[k, c]
            out[i, c] = total / lower[i, i]
    return out


@numba.njit(cache=True)
def _exact_one(lower, exact, exact_n):  # pragma: no cover
    """log p(S_pub | C) of one regression and its gradient in the lower triangle of L_C."""
    p = lower.shape[0]
    whitened = _lower_solve(lower, _lower_solve(lower, exact).T.copy())  # W = L⁻¹ S L⁻ᵀ
    trace = log_det = 0.0
    for i in range(p):
        trace += whitened[i, i]
        log_det += 2.0 * np.log(lower[i, i])
    grad = np.zeros((p, p))  # L⁻ᵀW by back substitution, kept in the lower triangle
    for c in range(p):
        column = np.empty(p)
        for i in range(p - 1, -1, -1):
            total = whitened[i, c]
            for k in range(i + 1, p):
                total -= lower[k, i] * column[k]
            column[i] = total / lower[i, i]
            if c <= i:
                grad[i, c] = column[i]
    for i in range(p):
        grad[i, i] -= exact_n / lower[i, i]
    return -0.5 * exact_n * (p * np.log(2 * np.pi) + log_det) - 0.5 * trace, grad


@numba.njit(cache=True)
def _release_pairs(d):  # pragma: no cover
    """The pairs (a, b) of :func:`pm_private.linear.stats.stat_pairs` (release order), in Numba."""
    k = (d + 1) * (d + 2) // 2
    a = np.empty(k, np.int64)
    b = np.empty(k, np.int64)
    entry = 0
    for i in range(d):
        for j in range(i, d):
            a[entry], b[entry] = i, j
            entry += 1
    for j in range(d):
        a[entry], b[entry] = j, d
        entry += 1
    a[entry] = b[entry] = d
    return a, b


@numba.njit(cache=True)
def dense_one(lower, value, nb, noise_var):  # pragma: no cover
    """log N(r | n·m(C), n·V(C) + diag(v)) of one regression, C = L Lᵀ, and its gradient in L
    (the dense form of the module notes)."""
    a, b = _release_pairs(lower.shape[0] - 1)
    k = a.size
    c = lower @ lower.T
    cov = np.empty((k, k))
    resid = np.empty((k, 1))
    for s in range(k):
        resid[s, 0] = value[s] - nb * c[a[s], b[s]]
        for t in range(k):
            cov[s, t] = nb * (c[a[s], a[t]] * c[b[s], b[t]] + c[a[s], b[t]] * c[b[s], a[t]])
        cov[s, s] += noise_var[s]
    chol = np.linalg.cholesky(cov)
    inverse_chol = _lower_solve(chol, np.eye(k))
    white = inverse_chol @ resid
    alpha = inverse_chol.T @ white  # Σ⁻¹(r − n·m)
    precision = inverse_chol.T @ inverse_chol
    logp = -0.5 * (np.sum(white**2) + k * np.log(2 * np.pi))
    grad = np.zeros_like(c)
    for s in range(k):
        logp -= np.log(chol[s, s])
        grad[a[s], b[s]] += nb * alpha[s, 0]
        for t in range(k):
            w = 0.5 * nb * (alpha[s, 0] * alpha[t, 0] - precision[s, t])
            grad[a[s], a[t]] += w * c[b[s], b[t]]
            grad[b[s], b[t]] += w * c[a[s], a[t]]
            grad[a[s], b[t]] += w * c[b[s], a[t]]
            grad[b[s], a[t]] += w * c[a[s], b[t]]
    return logp, (grad + grad.T) @ lower


@numba.njit(cache=True)
def spectral_stats_kernel(chol_private, chol_c, value, n, noise, on, exact, exact_n):  # pragma: no cover
    """log p of the module notes, the private term in the spectral form, and its gradients in
    (L_p, L_C) for a batch of B regressions."""
    batch, p = chol_c.shape[0], chol_c.shape[1]
    d = p - 1
    logp = np.empty(batch)
    g_private = np.empty((batch, p, p))
    g_c = np.empty((batch, p, p))
    matrix = np.empty((p, p))
    for b in range(batch):
        entry = 0
        for i in range(d):  # release order: upper Sxx, Sxy, Syy
            for j in range(i, d):
                matrix[i, j] = matrix[j, i] = value[b, entry]
                entry += 1
        for j in range(d):
            matrix[j, d] = matrix[d, j] = value[b, entry]
            entry += 1
        matrix[d, d] = value[b, entry]
        private, grad_private = frobenius_one(chol_private[b], matrix, n[b], noise[b, -1])[:2]
        public, grad_public = _exact_one(chol_c[b], exact[b], exact_n[b])
        logp[b] = on[b] * private + public
        copy_into(g_private[b], on[b] * grad_private)
        copy_into(g_c[b], grad_public)
    return logp, g_private, g_c


@numba.njit(cache=True)
def dense_stats_kernel(chol_private, chol_c, value, n, noise, on, exact, exact_n):  # pragma: no cover
    """log p of the module notes, the private term in the dense form, and its gradients in
    (L_p, L_C) for a batch of B regressions."""
    batch, p = chol_c.shape[0], chol_c.shape[1]
    logp = np.empty(batch)
    g_private = np.empty((batch, p, p))
    g_c = np.empty((batch, p, p))
    for b in range(batch):
        private, grad_private = dense_one(chol_private[b], value[b], n[b], noise[b])
        public, grad_public = _exact_one(chol_c[b], exact[b], exact_n[b])
        logp[b] = on[b] * private + public
        copy_into(g_private[b], on[b] * grad_private)
        copy_into(g_c[b], grad_public)
    return logp, g_private, g_c


#: The kernel of each form of the private term (``spectral``: True or False), separate so that a
#: model compiles only the form it uses.
STATS_KERNEL = {True: spectral_stats_kernel, False: dense_stats_kernel}


def _contiguous(arrays, core_ndims):
    """Each array flattened over the batch axes (those of the last), float64 and contiguous."""
    batch = arrays[-1].shape[: arrays[-1].ndim - core_ndims[-1]]
    size = int(np.prod(batch))
    flat = [
        np.ascontiguousarray(x, dtype=np.float64).reshape((size, *x.shape[x.ndim - core :]))
        for x, core in zip(arrays, core_ndims, strict=True)
    ]
    return batch, flat


def _checked(inputs, core_ndims, what):
    inputs = [pt.as_tensor(x).astype("float64") for x in inputs]
    batch = {x.ndim - core for x, core in zip(inputs, core_ndims, strict=True)}
    if len(batch) != 1 or min(batch) < 0:
        raise ValueError(f"{what}: the inputs must share their batch dimensions")
    return inputs


_AUGMENTED_CORE = (1, 0, 2)


class AugmentedCholesky(Op):
    """(β, λ, Lx) ↦ L_C = [[Lx, 0], [βᵀLx, λ^(−1/2)]], batched over shared leading axes."""

    __props__ = ()

    def make_node(self, beta, lam, x_chol):
        inputs = _checked([beta, lam, x_chol], _AUGMENTED_CORE, "augmented_cholesky")
        d = inputs[0].type.shape[-1]
        p = None if d is None else d + 1
        out = pt.tensor(dtype="float64", shape=(*inputs[1].type.shape, p, p))
        return Apply(self, inputs, [out])

    def perform(self, node, inputs, output_storage):
        batch, flat = _contiguous(inputs, _AUGMENTED_CORE)
        out = augmented_cholesky_kernel(*flat)
        output_storage[0][0] = out.reshape((*batch, *out.shape[1:]))

    def infer_shape(self, node, shapes):
        d = shapes[0][-1]
        return [(*shapes[1], d + 1, d + 1)]

    def pullback(self, inputs, outputs, cotangents):
        return list(_augmented_cholesky_vjp(*inputs, cotangents[0]))


class AugmentedCholeskyVJP(Op):
    """(β, λ, Lx, G) ↦ (∂/∂β, ∂/∂λ, ∂/∂Lx) of ⟨G, L_C⟩.  No second derivatives."""

    __props__ = ()

    def make_node(self, beta, lam, x_chol, g):
        inputs = _checked([beta, lam, x_chol, g], (*_AUGMENTED_CORE, 2), "augmented_cholesky")
        return Apply(self, inputs, [x.type() for x in inputs[:3]])

    def perform(self, node, inputs, output_storage):
        batch, flat = _contiguous(inputs, (*_AUGMENTED_CORE, 2))
        for storage, value in zip(output_storage, augmented_cholesky_vjp_kernel(*flat), strict=True):
            storage[0] = value.reshape((*batch, *value.shape[1:]))

    def infer_shape(self, node, shapes):
        return [tuple(s) for s in shapes[:3]]

    def pullback(self, inputs, outputs, cotangents):
        return [grad_not_implemented(self, i, x, "second derivatives") for i, x in enumerate(inputs)]


_STATS_CORE = (2, 2, 1, 0, 1, 0, 2, 0)  # L_p, L_C, released vector, n, v, on, S_pub, n_pub


class ReleasedStatsLogp(Op):
    """(L_p, L_C, release…) ↦ (log p, ∂log p/∂L_p, ∂log p/∂L_C) of the module notes, batched;
    ``spectral`` chooses the private term's form."""

    __props__ = ("spectral",)

    def __init__(self, spectral: bool):
        self.spectral = bool(spectral)

    def make_node(self, *inputs):
        inputs = _checked(inputs, _STATS_CORE, "released_stats_logp")
        batch = pt.tensor(dtype="float64", shape=inputs[3].type.shape).type
        return Apply(self, inputs, [batch(), inputs[1].type(), inputs[1].type()])

    def perform(self, node, inputs, output_storage):
        batch, flat = _contiguous(inputs, _STATS_CORE)
        with single_threaded_blas():
            results = STATS_KERNEL[self.spectral](*flat)
        for storage, value in zip(output_storage, results, strict=True):
            storage[0] = value.reshape((*batch, *value.shape[1:]))

    def infer_shape(self, node, shapes):
        return [tuple(shapes[3]), tuple(shapes[1]), tuple(shapes[1])]

    def pullback(self, inputs, outputs, cotangents):
        if any(not isinstance(c.type, DisconnectedType) for c in cotangents[1:]):
            return [grad_not_implemented(self, i, x, "second derivatives") for i, x in enumerate(inputs)]
        g = cotangents[0][..., None, None]
        data = [grad_undefined(self, 2 + i, x, "the release's arrays are data") for i, x in enumerate(inputs[2:])]
        return [g * outputs[1], g * outputs[2], *data]


_augmented_cholesky = AugmentedCholesky()
_augmented_cholesky_vjp = AugmentedCholeskyVJP()
_released_stats_logp = {form: ReleasedStatsLogp(form) for form in (True, False)}


def augmented_cholesky(beta, noise_precision, x_chol):
    """Cholesky factor L_C = [[Lx, 0], [βᵀLx, σ]] of the covariance C of z = (x, y), σ = λ^(−1/2).

    Parameters
    ----------
    beta : tensor (..., d)
        Regression coefficients.
    noise_precision : tensor (...)
        λ = 1/σ².
    x_chol : tensor (..., d, d) or (d, d)
        Cholesky factor Lx of the covariates' covariance, broadcast to beta's batch.

    Returns
    -------
    tensor (..., d + 1, d + 1)
        L_C, with the gradient of the module notes (an Op of Numba kernels).
    """
    beta = pt.as_tensor(beta, dtype="float64")
    batch = tuple(beta.shape[i] for i in range(beta.ndim - 1))
    x_chol = pt.broadcast_to(pt.as_tensor(x_chol, dtype="float64"), (*batch, beta.shape[-1], beta.shape[-1]))
    lam = pt.broadcast_to(pt.as_tensor(noise_precision, dtype="float64"), batch)
    return _augmented_cholesky(beta, lam, x_chol)


def released_stats_logp(chol_private, chol_c, value, private_n, noise_var, private_on, exact, exact_n, *, spectral):
    """log p of the module notes (the noise-aware term of the released statistics plus the exact
    term of public rows), batched over the inputs' broadcast leading axes.

    Parameters
    ----------
    chol_private, chol_c : tensor (..., d+1, d+1)
        L_p (the private rows' factor) and L_C (:func:`augmented_cholesky`).
    value : tensor (..., k)
        The released private statistics in release order, k = (d+1)(d+2)/2.
    private_n, private_on : tensor (...)
        n and the private term's switch (0 or 1).
    noise_var : tensor (..., k)
        v, the release's noise variance per entry.
    exact : tensor (..., d+1, d+1)
        S_pub, the public rows' augmented matrix (zero without public rows).
    exact_n : tensor (...)
        n_pub.
    spectral : bool
        The private term's form: spectral (O(d³); for v = σ_R²/w², Gaussian releases, which it
        reads from v's last entry) or dense (O(k³), any v).

    Returns
    -------
    tensor (...)
        The log-density, with its gradient in L_p and L_C.
    """
    inputs = [
        pt.as_tensor(x, dtype="float64")
        for x in (chol_private, chol_c, value, private_n, noise_var, private_on, exact, exact_n)
    ]
    batch = tuple(
        pt.broadcast_shape(
            *(tuple(x.shape[i] for i in range(x.ndim - core)) for x, core in zip(inputs, _STATS_CORE, strict=True)),
            arrays_are_shapes=True,
        )
    )
    inputs = [
        pt.broadcast_to(x, (*batch, *(x.shape[x.ndim - core + i] for i in range(core))))
        for x, core in zip(inputs, _STATS_CORE, strict=True)
    ]
    return _released_stats_logp[bool(spectral)](*inputs)[0]


@register_numba_funcify(AugmentedCholesky)
def _numba_funcify_augmented_cholesky(op, node=None, **kwargs):
    """Numba implementation for PyTensor's default backend: the cached kernel."""

    @numba_njit
    def augmented_cholesky_op(beta, lam, x_chol):
        d, size = beta.shape[-1], lam.size
        out = augmented_cholesky_kernel(
            np.ascontiguousarray(beta).reshape((size, d)),
            np.ascontiguousarray(lam).reshape(size),
            np.ascontiguousarray(x_chol).reshape((size, d, d)),
        )
        return out.reshape(lam.shape + (d + 1, d + 1))

    return augmented_cholesky_op


@register_numba_funcify(AugmentedCholeskyVJP)
def _numba_funcify_augmented_cholesky_vjp(op, node=None, **kwargs):
    """Numba implementation for PyTensor's default backend: the cached kernel."""

    @numba_njit
    def augmented_cholesky_vjp_op(beta, lam, x_chol, g):
        d, size = beta.shape[-1], lam.size
        g_beta, g_lam, g_x = augmented_cholesky_vjp_kernel(
            np.ascontiguousarray(beta).reshape((size, d)),
            np.ascontiguousarray(lam).reshape(size),
            np.ascontiguousarray(x_chol).reshape((size, d, d)),
            np.ascontiguousarray(g).reshape((size, d + 1, d + 1)),
        )
        return g_beta.reshape(beta.shape), g_lam.reshape(lam.shape), g_x.reshape(x_chol.shape)

    return augmented_cholesky_vjp_op


@register_numba_funcify(ReleasedStatsLogp)
def _numba_funcify_released_stats_logp(op, node=None, **kwargs):
    """Numba implementation for PyTensor's default backend: the cached kernel."""

    kernel = STATS_KERNEL[op.spectral]

    @numba_njit
    def released_stats_logp_op(chol_private, chol_c, value, n, noise, on, exact, exact_n):
        p, size = chol_c.shape[-1], n.size
        logp, g_private, g_c = kernel(
            np.ascontiguousarray(chol_private).reshape((size, p, p)),
            np.ascontiguousarray(chol_c).reshape((size, p, p)),
            np.ascontiguousarray(value).reshape((size, value.shape[-1])),
            np.ascontiguousarray(n).reshape(size),
            np.ascontiguousarray(noise).reshape((size, noise.shape[-1])),
            np.ascontiguousarray(on).reshape(size),
            np.ascontiguousarray(exact).reshape((size, p, p)),
            np.ascontiguousarray(exact_n).reshape(size),
        )
        return logp.reshape(n.shape), g_private.reshape(chol_c.shape), g_c.reshape(chol_c.shape)

    return released_stats_logp_op


def _jax_augmented_cholesky(beta, lam, x_chol):
    import jax.numpy as jnp

    bottom = jnp.einsum("...i,...ij->...j", beta, x_chol)
    top = jnp.concatenate([x_chol, jnp.zeros((*x_chol.shape[:-1], 1))], axis=-1)
    bottom = jnp.concatenate([bottom, (1.0 / jnp.sqrt(lam))[..., None]], axis=-1)[..., None, :]
    return (jnp.concatenate([top, bottom], axis=-2),)


@register_jax_funcify(AugmentedCholesky)
def _jax_funcify_augmented_cholesky(op, node=None, **kwargs):
    """JAX implementation: the same construction in ``jax.numpy``."""

    def augmented_cholesky_op(beta, lam, x_chol):
        return _jax_augmented_cholesky(beta, lam, x_chol)[0]

    return augmented_cholesky_op


register_jax_vjp(AugmentedCholeskyVJP, _jax_augmented_cholesky, n_inputs=3)


def _jax_dense_one(lower, value, n, noise_var):
    """:func:`dense_one` in ``jax.numpy``, its gradient by JAX."""
    import jax
    import jax.numpy as jnp
    from jax.scipy.linalg import solve_triangular

    a, b = stat_pairs(lower.shape[-1] - 1)

    def logp(lower):
        c = lower @ lower.T
        cov = n * (
            c[a[:, None], a[None, :]] * c[b[:, None], b[None, :]]
            + c[a[:, None], b[None, :]] * c[b[:, None], a[None, :]]
        )
        chol = jnp.linalg.cholesky(cov + jnp.diag(noise_var))
        white = solve_triangular(chol, value - n * c[a, b], lower=True)
        return -0.5 * (jnp.sum(white**2) + a.size * np.log(2 * np.pi)) - jnp.sum(jnp.log(jnp.diagonal(chol)))

    return jax.value_and_grad(logp)(lower)


def _jax_released_stats_one(chol_private, chol_c, value, n, noise, on, exact, exact_n, *, spectral):
    """The Op's log-density and gradients of one regression in ``jax.numpy``."""
    import jax.numpy as jnp
    from jax.scipy.linalg import solve_triangular

    p = chol_c.shape[-1]
    a, b = stat_pairs(p - 1)
    if spectral:
        matrix = jnp.zeros((p, p)).at[a, b].set(value).at[b, a].set(value)
        private, grad_private = jax_frobenius_one(chol_private, matrix, n, noise[-1])[:2]
    else:
        private, grad_private = _jax_dense_one(chol_private, value, n, noise)
    whitened = solve_triangular(chol_c, solve_triangular(chol_c, exact, lower=True).T, lower=True)
    diagonal = jnp.diagonal(chol_c)
    public = -0.5 * exact_n * (p * np.log(2 * np.pi) + 2.0 * jnp.sum(jnp.log(diagonal))) - 0.5 * jnp.trace(whitened)
    grad_public = jnp.tril(solve_triangular(chol_c, whitened, lower=True, trans=1)) - jnp.diag(exact_n / diagonal)
    return on * private + public, on * grad_private, grad_public


@register_jax_funcify(ReleasedStatsLogp)
def _jax_funcify_released_stats_logp(op, node=None, **kwargs):
    """JAX implementation, vectorised; JAX differentiates the log-density through the analytic
    gradients (a custom JVP in L_p and L_C; the release's arrays are data)."""
    import jax
    import jax.numpy as jnp

    def logp_and_grads(*inputs):
        inputs = [jnp.asarray(x, dtype=jnp.float64) for x in inputs]
        flat = [x.reshape((-1, *x.shape[x.ndim - core :])) for x, core in zip(inputs, _STATS_CORE, strict=True)]
        logp, g_private, g_c = jax.vmap(partial(_jax_released_stats_one, spectral=op.spectral))(*flat)
        return logp.reshape(inputs[3].shape), g_private.reshape(inputs[1].shape), g_c.reshape(inputs[1].shape)

    @jax.custom_jvp
    def logp(*inputs):
        return logp_and_grads(*inputs)[0]

    @logp.defjvp
    def _logp_jvp(primals, tangents):
        value, g_private, g_c = logp_and_grads(*primals)
        change = jnp.sum(g_private * tangents[0], axis=(-2, -1)) + jnp.sum(g_c * tangents[1], axis=(-2, -1))
        return value, change

    def released_stats_logp_op(*inputs):
        grads = logp_and_grads(*inputs)[1:]
        return (logp(*inputs), *(jax.lax.stop_gradient(g) for g in grads))

    return released_stats_logp_op

"""The public-rows law's averages and their jackknife as one Op with a hand-written gradient.

Under the public-rows law the noise-aware GLMs replace E[g(a)] and E[g(a)·x] by averages over the
whitened public rows (:func:`pm_private.released.glm.sample_law_moments`): for a set of rows zₖ
(k = 1…r) with link means gₖ = g(aₖ),

    T = (ḡ, ḡ·μ + Lₓ·g_z),   ḡ = (1/r)Σₖ gₖ,   g_z = (1/r)Σₖ gₖ·zₖ,

computed on the whitened rows (T_w) and on each of G delete-a-group jackknife replicates (T_r).
The estimate is the bias-corrected G·T_w − (G − 1)·T̄ and its variance
c·Σᵣ(T_r − T̄)(T_r − T̄)ᵀ with c = f·(G − 1)/G (Efron & Stein 1981; Quenouille 1956).  As a PyTensor
graph these averages over G·r rows and their derivatives are many reductions and broadcasts, each
a Numba compilation on an empty cache; here they are two Numba loop kernels compiled with
``cache=True`` (once per machine).  Gradient: with T̄ᵣ = −(G − 1)/G·ē + c·(C̄ + C̄ᵀ)(T_r − T̄) and
T̄_w = G·ē the cotangents of the sets' T, each set gives, with u = Lₓᵀt̄ₓ,

    ḡₖ = (t̄₀ + t̄ₓ·μ + zₖ·u)/r,   μ̄ += ḡ·t̄ₓ,   L̄ₓ += t̄ₓ·g_zᵀ;

the rows are data (no gradient).

References: Efron, B. & Stein, C. (1981). The jackknife estimate of variance. Annals of Statistics
9(3), 586–596.  Quenouille, M. H. (1956). Notes on bias in estimation. Biometrika 43, 353–360.
"""

from __future__ import annotations

import numba
import numpy as np
import pytensor.tensor as pt
from pytensor.gradient import DisconnectedType, grad_not_implemented, grad_undefined
from pytensor.graph.basic import Apply
from pytensor.graph.op import Op
from pytensor.link.numba.dispatch.basic import numba_njit

from .._engine.jax_dispatch import register_jax_funcify
from .._engine.numba_arrays import copy_into
from .._engine.numba_cache import register_numba_funcify

__all__ = ["sample_law_averages", "sample_law_kernel", "sample_law_vjp_kernel"]


@numba.njit(cache=True)
def _average(g, z, mu, x_chol, out):
    """T of one set of rows into ``out`` (d + 1,); returns (ḡ, g_z)."""
    rows, d = z.shape
    g_z = np.zeros(d)
    g_mean = 0.0
    for k in range(rows):
        g_mean += g[k]
        for j in range(d):
            g_z[j] += g[k] * z[k, j]
    g_mean /= rows
    for j in range(d):
        g_z[j] /= rows
    out[0] = g_mean
    for i in range(d):
        t = g_mean * mu[i]
        for j in range(d):
            t += x_chol[i, j] * g_z[j]
        out[1 + i] = t
    return g_mean, g_z


@numba.njit(cache=True)
def _replicates(g_rep, z_rep, mu, x_chol):
    """T of every replicate (G, d + 1), their ḡ (G,) and g_z (G, d), and their mean T̄."""
    groups, d = g_rep.shape[0], mu.shape[0]
    values = np.empty((groups, d + 1))
    g_means = np.empty(groups)
    g_zs = np.empty((groups, d))
    for r in range(groups):
        g_means[r], g_z = _average(g_rep[r], z_rep[r], mu, x_chol, values[r])
        copy_into(g_zs[r], g_z)
    mean = np.zeros(d + 1)
    for r in range(groups):
        for i in range(d + 1):
            mean[i] += values[r, i] / groups
    return values, g_means, g_zs, mean


@numba.njit(cache=True)
def sample_law_kernel(g_rep, z_rep, g_w, z_w, mu, x_chol, factor):
    """(estimate, covariance) of the module notes."""
    groups, d = g_rep.shape[0], mu.shape[0]
    values, _, _, mean = _replicates(g_rep, z_rep, mu, x_chol)
    whole = np.empty(d + 1)
    _average(g_w, z_w, mu, x_chol, whole)
    estimate = groups * whole - (groups - 1) * mean
    scale = factor * (groups - 1) / groups
    cov = np.zeros((d + 1, d + 1))
    for r in range(groups):
        for i in range(d + 1):
            a = values[r, i] - mean[i]
            for j in range(d + 1):
                cov[i, j] += scale * a * (values[r, j] - mean[j])
    return estimate, cov


@numba.njit(cache=True)
def _set_vjp(t_bar, g_mean, g_z, z, mu, x_chol, g_out, mu_bar, chol_bar):
    """Cotangents of one set's link means into ``g_out``; adds to μ̄ and L̄ₓ (module notes)."""
    rows, d = z.shape
    a0 = t_bar[0]
    u = np.zeros(d)
    for i in range(d):
        a0 += t_bar[1 + i] * mu[i]
        mu_bar[i] += g_mean * t_bar[1 + i]
        for j in range(d):
            u[j] += x_chol[i, j] * t_bar[1 + i]
            chol_bar[i, j] += t_bar[1 + i] * g_z[j]
    for k in range(rows):
        t = a0
        for j in range(d):
            t += z[k, j] * u[j]
        g_out[k] = t / rows


@numba.njit(cache=True)
def sample_law_vjp_kernel(g_rep, z_rep, g_w, z_w, mu, x_chol, factor, g_estimate, g_cov):
    """(∂/∂g_rep, ∂/∂g_w, ∂/∂μ, ∂/∂Lₓ) of ⟨ē, estimate⟩ + ⟨C̄, covariance⟩ (module notes)."""
    groups, d = g_rep.shape[0], mu.shape[0]
    values, g_means, g_zs, mean = _replicates(g_rep, z_rep, mu, x_chol)
    whole = np.empty(d + 1)
    w_mean, w_z = _average(g_w, z_w, mu, x_chol, whole)
    scale = factor * (groups - 1) / groups
    mu_bar = np.zeros(d)
    chol_bar = np.zeros((d, d))
    rep_bar = np.empty(g_rep.shape)
    t_bar = np.empty(d + 1)
    for r in range(groups):
        for i in range(d + 1):
            t = -(groups - 1) / groups * g_estimate[i]
            for j in range(d + 1):
                t += scale * (g_cov[i, j] + g_cov[j, i]) * (values[r, j] - mean[j])
            t_bar[i] = t
        _set_vjp(t_bar, g_means[r], g_zs[r], z_rep[r], mu, x_chol, rep_bar[r], mu_bar, chol_bar)
    whole_bar = np.empty(g_w.shape[0])
    _set_vjp(groups * g_estimate, w_mean, w_z, z_w, mu, x_chol, whole_bar, mu_bar, chol_bar)
    return rep_bar, whole_bar, mu_bar, chol_bar


def _as_inputs(g_rep, z_rep, g_w, z_w, mu, x_chol):
    inputs = [pt.as_tensor(x).astype("float64") for x in (g_rep, z_rep, g_w, z_w, mu, x_chol)]
    ndims = [x.ndim for x in inputs]
    if ndims != [2, 3, 1, 2, 1, 2]:
        raise ValueError(f"sample-law averages need ndims [2, 3, 1, 2, 1, 2], got {ndims}")
    return inputs


def _contiguous(inputs):
    return [np.ascontiguousarray(x, dtype=np.float64) for x in inputs]


class SampleLawAverages(Op):
    """(g_rep, z_rep, g_w, z_w, μ, Lₓ) ↦ (estimate, covariance) of the module notes; ``factor``
    is f, the multiplier of the jackknife variance."""

    __props__ = ("factor",)

    def __init__(self, factor: float):
        self.factor = float(factor)

    def make_node(self, *inputs):
        return Apply(self, _as_inputs(*inputs), [pt.dvector(), pt.dmatrix()])

    def perform(self, node, inputs, output_storage):
        estimate, cov = sample_law_kernel(*_contiguous(inputs), self.factor)
        output_storage[0][0], output_storage[1][0] = estimate, cov

    def infer_shape(self, node, shapes):
        k = shapes[4][0] + 1
        return [(k,), (k, k)]

    def pullback(self, inputs, outputs, cotangents):
        g_estimate, g_cov = (
            pt.zeros_like(out) if isinstance(g.type, DisconnectedType) else g
            for out, g in zip(outputs, cotangents, strict=True)
        )
        rep_bar, whole_bar, mu_bar, chol_bar = SampleLawAveragesVJP(self.factor)(*inputs, g_estimate, g_cov)
        z_rep, z_w = (grad_undefined(self, i, inputs[i], "the public rows are data") for i in (1, 3))
        return [rep_bar, z_rep, whole_bar, z_w, mu_bar, chol_bar]


class SampleLawAveragesVJP(Op):
    """(inputs…, ē, C̄) ↦ the gradients of ⟨ē, estimate⟩ + ⟨C̄, covariance⟩ with respect to
    (g_rep, g_w, μ, Lₓ).  No second derivatives."""

    __props__ = ("factor",)

    def __init__(self, factor: float):
        self.factor = float(factor)

    def make_node(self, *inputs):
        *args, g_estimate, g_cov = inputs
        grads = [pt.as_tensor(g).astype("float64") for g in (g_estimate, g_cov)]
        return Apply(self, _as_inputs(*args) + grads, [pt.dmatrix(), pt.dvector(), pt.dvector(), pt.dmatrix()])

    def perform(self, node, inputs, output_storage):
        *args, g_estimate, g_cov = _contiguous(inputs)
        grads = sample_law_vjp_kernel(*args, self.factor, g_estimate, g_cov)
        for storage, value in zip(output_storage, grads, strict=True):
            storage[0] = value

    def infer_shape(self, node, shapes):
        return [tuple(shapes[0]), tuple(shapes[2]), tuple(shapes[4]), tuple(shapes[5])]

    def pullback(self, inputs, outputs, cotangents):
        return [grad_not_implemented(self, i, x, "second derivatives") for i, x in enumerate(inputs)]


@register_numba_funcify(SampleLawAverages)
def _numba_funcify_sample_law(op, node=None, **kwargs):
    """Numba implementation for PyTensor's default backend: the cached kernel."""
    factor = op.factor

    @numba_njit
    def sample_law_averages_op(g_rep, z_rep, g_w, z_w, mu, x_chol):
        c = np.ascontiguousarray
        return sample_law_kernel(c(g_rep), c(z_rep), c(g_w), c(z_w), c(mu), c(x_chol), factor)

    return sample_law_averages_op


@register_numba_funcify(SampleLawAveragesVJP)
def _numba_funcify_sample_law_vjp(op, node=None, **kwargs):
    """Numba implementation for PyTensor's default backend: the cached kernel."""
    factor = op.factor

    @numba_njit
    def sample_law_averages_vjp_op(g_rep, z_rep, g_w, z_w, mu, x_chol, g_estimate, g_cov):
        c = np.ascontiguousarray
        return sample_law_vjp_kernel(
            c(g_rep), c(z_rep), c(g_w), c(z_w), c(mu), c(x_chol), factor, c(g_estimate), c(g_cov)
        )

    return sample_law_averages_vjp_op


def _jax_averages(factor):
    def averages(g_rep, z_rep, g_w, z_w, mu, x_chol):
        import jax.numpy as jnp

        def one(g, z):
            g_mean = g.mean(axis=-1)
            g_z = (g[..., None] * z).mean(axis=-2)
            return jnp.concatenate([g_mean[..., None], g_mean[..., None] * mu + g_z @ x_chol.T], axis=-1)

        values = one(g_rep, z_rep)
        groups = g_rep.shape[0]
        mean = values.mean(axis=0)
        centred = values - mean
        return groups * one(g_w, z_w) - (groups - 1) * mean, factor * (groups - 1) / groups * centred.T @ centred

    return averages


@register_jax_funcify(SampleLawAverages)
def _jax_funcify_sample_law(op, node=None, **kwargs):
    """JAX implementation: the same formulas in ``jax.numpy``."""
    return _jax_averages(op.factor)


@register_jax_funcify(SampleLawAveragesVJP)
def _jax_funcify_sample_law_vjp(op, node=None, **kwargs):
    """JAX implementation: JAX's vector–Jacobian product of the JAX averages (the rows are data)."""
    import jax

    forward = _jax_averages(op.factor)

    def sample_law_averages_vjp_op(g_rep, z_rep, g_w, z_w, mu, x_chol, g_estimate, g_cov):
        _, pull = jax.vjp(lambda a, b, c, e: forward(a, z_rep, b, z_w, c, e), g_rep, g_w, mu, x_chol)
        return pull((g_estimate, g_cov))

    return sample_law_averages_vjp_op


def sample_law_averages(g_rep, z_rep, g_w, z_w, mu, x_chol, *, factor: float):
    """The public-rows law's bias-corrected averages and their jackknife covariance (module notes),
    as tensors with their gradient in the link means, μ and Lₓ.

    Parameters
    ----------
    g_rep : tensor (G, r)
        The link means g(aₖ) on the rows of each jackknife replicate.
    z_rep : tensor (G, r, d)
        The replicates' whitened rows.
    g_w : tensor (m,)
        The link means on the whitened public rows.
    z_w : tensor (m, d)
        The whitened public rows.
    mu : tensor (d,)
        The covariates' mean μ.
    x_chol : tensor (d, d)
        Lₓ, the Cholesky factor of their covariance.
    factor : float
        f, the multiplier of the jackknife variance.

    Returns
    -------
    estimate : tensor (d + 1,)
        The bias-corrected (E[g], E[g·x]).
    covariance : tensor (d + 1, d + 1)
        Its jackknife covariance times f.
    """
    return SampleLawAverages(factor)(g_rep, z_rep, g_w, z_w, mu, x_chol)

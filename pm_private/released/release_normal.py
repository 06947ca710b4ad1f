"""The log-density of a released degree-2 vector, assembled from one record's moments, as one Op.

The noise-aware GLMs model the release r of the summed statistics t(x, y) = (x, y, upper(xxᵀ), y·x)
(k entries) as

    r ~ N(n·m̃, n·Ṽ + n²·W̃ + diag(v)),

with m, V one record's mean and covariance (``pm_private.released.moment_ops.degree2_moments``),
v the release noise's variances, and, under a sample or reference covariate law, the entries of y
and y·x (the law's block: index d, then the last d) taken from the law's averages t = (E[g], E[g·x])
(m̃ equals m with that block replaced by t) and the averages' covariance W added to that block
(W̃; the public rows' jackknife, none for a reference law).  As a PyTensor graph the assembly is a
dozen small nodes (a concatenation and its split, a diagonal, scatter-adds, products by n and n²),
each its own Numba compilation on an empty cache, and so is its gradient; ``Degree2ReleaseLogp``
assembles, factorises and differentiates in one kernel.  With α = C⁻¹(r − μ) and
G = ½(ααᵀ − C⁻¹) the gradients of the normal log-density of ``pm_private.released.likelihood``,

    ∂/∂m = n·α (0 on the law's block),   ∂/∂V = n·G,   ∂/∂t = n·α[block],   ∂/∂W = n²·G[block, block],

and, for a latent n (a release under add/remove neighbours), ∂/∂n = αᵀm̃ + ⟨G, Ṽ + 2n·W̃⟩.
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor.tensor as pt
from pytensor.gradient import DisconnectedType, grad_not_implemented
from pytensor.graph.basic import Apply
from pytensor.graph.op import Op
from pytensor.link.numba.dispatch.basic import numba_njit

from .._engine.jax_dispatch import register_jax_funcify
from .._engine.numba_cache import register_numba_funcify
from .likelihood import _jax_funcify_normal_logp, _normal_logp_numpy, _numba_normal_logp_core

__all__ = ["Degree2ReleaseLogp", "released_degree2_normal"]


def law_block(k: int, size: int) -> np.ndarray:
    """The indices of y and y·x in a degree-2 vector of k entries, d = ``size`` − 1 covariates
    (empty for ``size`` 0)."""
    if size == 0:
        return np.zeros(0, dtype=np.int64)
    d = size - 1
    return np.concatenate([[d], np.arange(k - d, k)]).astype(np.int64)


def _law_mean(mean, law, block):
    """m̃: one record's mean with the law's block replaced by the law's averages."""
    full = mean.copy()
    full[block] = law
    return full


def _assemble_numpy(mean, cov, law, law_cov, noise_var, n):
    """(n·m̃, n·Ṽ + n²·W̃ + diag(v)) of the module notes and the law's block."""
    block = law_block(mean.size, law.size)
    full_mean = n * mean
    full_mean[block] = n * law
    total = n * cov + np.diag(noise_var)
    if law_cov.size:
        total[np.ix_(block, block)] += n * n * law_cov
    return full_mean, total, block


class Degree2ReleaseLogp(Op):
    """(r, m, V, t, W, v, n) ↦ (log N(r | n·m̃, n·Ṽ + n²·W̃ + diag(v)), ∂/∂r, ∂/∂m, ∂/∂V, ∂/∂t, ∂/∂W,
    ∂/∂n) of the module notes; t of size 0 (no law) and W of size 0 (no law covariance) leave m
    and V as they are.  Second derivatives, and derivatives in v, are not implemented."""

    __props__ = ()

    def make_node(self, value, mean, cov, law, law_cov, noise_var, n):
        inputs = [pt.as_tensor(x).astype("float64") for x in (value, mean, cov, law, law_cov, noise_var, n)]
        ndims = [x.ndim for x in inputs]
        if ndims != [1, 1, 2, 1, 2, 1, 0]:
            raise ValueError(f"a degree-2 release log-density needs ndims [1, 1, 2, 1, 2, 1, 0], got {ndims}")
        outputs = [pt.dscalar(), pt.dvector(), pt.dvector(), pt.dmatrix(), pt.dvector(), pt.dmatrix(), pt.dscalar()]
        return Apply(self, inputs, outputs)

    def perform(self, node, inputs, output_storage):
        value, mean, cov, law, law_cov, noise_var, n = (np.asarray(x, dtype=np.float64) for x in inputs)
        full_mean, total, block = _assemble_numpy(mean, cov, law, law_cov, noise_var, float(n))
        logp, alpha, grad_total = _normal_logp_numpy(value, full_mean, total)
        grad_mean = n * alpha
        grad_mean[block] = 0.0
        law_cov_grad = n * n * grad_total[np.ix_(block, block)] if law_cov.size else np.zeros(law_cov.shape)
        grad_n = alpha @ _law_mean(mean, law, block) + np.sum(grad_total * cov)
        if law_cov.size:
            grad_n += 2.0 * n * np.sum(grad_total[np.ix_(block, block)] * law_cov)
        results = (
            np.asarray(logp),
            -alpha,
            grad_mean,
            n * grad_total,
            n * alpha[block],
            law_cov_grad,
            np.asarray(grad_n),
        )
        for storage, result in zip(output_storage, results, strict=True):
            storage[0] = result

    def infer_shape(self, node, shapes):
        value, mean, cov, law, law_cov, _, _ = shapes
        return [(), value, mean, cov, law, law_cov, ()]

    def pullback(self, inputs, outputs, cotangents):
        if any(not isinstance(c.type, DisconnectedType) for c in cotangents[1:]):
            return [grad_not_implemented(self, i, x, "second derivatives") for i, x in enumerate(inputs)]
        g = cotangents[0]
        grads = [g * out for out in outputs[1:6]]
        return [*grads, grad_not_implemented(self, 5, inputs[5], "the noise is data"), g * outputs[6]]


@register_numba_funcify(Degree2ReleaseLogp)
def _numba_funcify_release_logp(op, node=None, **kwargs):
    """Numba implementation for PyTensor's default backend: the assembly by loops and the normal
    log-density's kernel."""
    normal_logp = _numba_normal_logp_core()

    @numba_njit
    def degree2_release_logp(value, mean, cov, law, law_cov, noise_var, n):
        k, size = mean.size, law.size
        block = np.empty(size, dtype=np.int64)
        for a in range(size):
            block[a] = size - 1 if a == 0 else k - size + a
        full_mean = n * mean
        total = n * cov
        for i in range(k):
            total[i, i] += noise_var[i]
        for a in range(size):
            full_mean[block[a]] = n * law[a]
            if law_cov.size:
                for c in range(size):
                    total[block[a], block[c]] += n * n * law_cov[a, c]
        logp, alpha, grad_total = normal_logp(value, full_mean, total)
        grad_mean = n * alpha
        law_grad = np.empty(size)
        law_cov_grad = np.zeros(law_cov.shape)
        grad_n = 0.0
        for i in range(k):
            grad_n += alpha[i] * mean[i]
            for j in range(k):
                grad_n += grad_total[i, j] * cov[i, j]
        for a in range(size):
            grad_n += alpha[block[a]] * (law[a] - mean[block[a]])
            law_grad[a] = grad_mean[block[a]]
            grad_mean[block[a]] = 0.0
            if law_cov.size:
                for c in range(size):
                    law_cov_grad[a, c] = n * n * grad_total[block[a], block[c]]
                    grad_n += 2.0 * n * grad_total[block[a], block[c]] * law_cov[a, c]
        return logp, -alpha, grad_mean, n * grad_total, law_grad, law_cov_grad, np.asarray(grad_n)

    return degree2_release_logp


@register_jax_funcify(Degree2ReleaseLogp)
def _jax_funcify_release_logp(op, node=None, **kwargs):
    """JAX implementation (numpyro, blackjax, nutpie's JAX backend): the assembly and the normal
    log-density of ``NormalLogp``'s JAX implementation, its gradients by JAX (which differentiates the
    log-density itself)."""
    import jax
    import jax.numpy as jnp

    normal_logp = _jax_funcify_normal_logp(op)

    def logp(value, mean, cov, law, law_cov, noise_var, n):
        block = law_block(value.shape[0], law.shape[0])
        full_mean = (n * mean).at[block].set(n * law)
        total = n * cov + jnp.diag(noise_var)
        if law_cov.size:
            total = total.at[np.ix_(block, block)].add(n * n * law_cov)
        return normal_logp(value, full_mean, total)[0]

    def degree2_release_logp(value, mean, cov, law, law_cov, noise_var, n):
        args = (value, mean, cov, law, law_cov, n)
        value_and_grad = jax.value_and_grad(lambda *a: logp(*a[:5], noise_var, a[5]), argnums=(0, 1, 2, 3, 4, 5))
        result, grads = value_and_grad(*args)
        return (result, *grads)

    return degree2_release_logp


_release_logp = Degree2ReleaseLogp()


def _release_dist(has_law: bool, has_law_cov: bool):
    """The dist of :func:`released_degree2_normal`: N(n·m̃, n·Ṽ + n²·W̃ + diag(v)), whose draws are
    replicated releases (prior and posterior predictive checks)."""

    def dist(mean, cov, law, law_cov, noise_var, n, size):
        full_mean, total = n * mean, n * cov + pt.diag(noise_var)
        if has_law:
            k, d = mean.shape[0], law.shape[0] - 1
            block = pt.concatenate([d[None], pt.arange(k - d, k)])
            full_mean = pt.set_subtensor(full_mean[block], n * law)
            if has_law_cov:
                total = pt.inc_subtensor(total[block[:, None], block[None, :]], n * n * law_cov)
        return pm.MvNormal.dist(full_mean, total, size=size)

    return dist


def released_degree2_normal(name: str, mean, cov, *, n, noise_var, observed, law=None, law_cov=None, dims=None):
    """A released degree-2 vector r ~ N(n·m̃, n·Ṽ + n²·W̃ + diag(v)) (module notes) as an observed
    variable of the current model, its log-density and gradient one compiled Op
    (``Degree2ReleaseLogp``); prior and posterior predictive draws are PyMC's multivariate
    normal's.

    Parameters
    ----------
    name : str
        The observed variable's name.
    mean : tensor (k,)
        One record's mean m of the statistics.
    cov : tensor (k, k)
        One record's covariance V.
    n : tensor ()
        The number of records summed.
    noise_var : tensor (k,)
        The release noise's variances v.
    observed : tensor (k,)
        The released vector (usually ``pm.Data``, so that a new release of the same shape swaps in).
    law : tensor (d + 1,), optional
        The covariate law's (E[g], E[g·x]), replacing the entries of y and y·x of ``mean``.
    law_cov : tensor (d + 1, d + 1), optional
        The covariance of those averages (needs ``law``), added times n² to that block.
    dims : str or tuple of str, optional
        The dim of the k statistics.

    Returns
    -------
    TensorVariable
        The observed variable.
    """
    if law_cov is not None and law is None:
        raise ValueError("law_cov needs law")
    dist = _release_dist(law is not None, law_cov is not None)
    law = pt.zeros(0) if law is None else law
    law_cov = pt.zeros((0, 0)) if law_cov is None else law_cov
    return pm.CustomDist(
        name,
        mean,
        cov,
        law,
        law_cov,
        noise_var,
        n,
        logp=lambda value, *params: _release_logp(value, *params)[0],
        dist=dist,
        signature="(k),(k,k),(l),(l,l),(k),()->(k)",
        observed=observed,
        dims=dims,
    )

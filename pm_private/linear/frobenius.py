"""The spectral O(d³) form of the noise-aware likelihood, for noise isotropic in the Frobenius geometry
(Bernstein & Sheldon 2019; the derivation is in :mod:`pm_private.linear.noise_aware`): a PyTensor
Op with its closed-form gradient, its Numba and JAX implementations, and the gate that limits BLAS
to one thread in a process that unpickles a noise-aware model."""

from __future__ import annotations

import numba
import numpy as np
import pytensor.tensor as pt
from pytensor.gradient import DisconnectedType, grad_not_implemented
from pytensor.graph.basic import Apply
from pytensor.graph.op import Op

from .._engine.jax_dispatch import register_jax_funcify
from .._engine.numba_arrays import copy_into
from .._engine.numba_cache import register_numba_funcify
from .._engine.threads import hold_one_blas_thread, single_threaded_blas
from .stats import frobenius_weights

__all__ = ["FrobeniusStatsLogp", "frobenius_noise_variance", "frobenius_stats_logp"]

# BLAS threads.  OpenBLAS's default threads make the small matrix products, factorisations and
# solves of these likelihoods (and of the priors compiled beside them) 30–200× slower on a loaded
# machine, so the library runs BLAS on one thread without being asked:
#
# * building a model with :func:`pm_private.linear.noise_aware.NoisySuffStatRegression` limits BLAS (numpy's and SciPy's
#   OpenBLAS, MKL, …; threadpoolctl) to one thread for the process, so every compiled term of the
#   model is covered, whichever backend compiles it; the original thread counts come back when
#   the last such model is garbage-collected;
# * a process that receives such a model by pickling (a sampler's worker process) takes the same
#   limit when it unpickles the model's graph, and keeps it until it exits;
# * ``frobenius_stats_logp`` evaluated by the Python or C backend outside such a model limits
#   BLAS around each evaluation.
#
# The mechanics (libraries found once per process, a few microseconds per evaluation) are in
# pm_private._engine.threads.


def _unpickle_blas_gate():
    hold_one_blas_thread()
    return _blas_gate


class _BlasGate(Op):
    """Identity on a tensor of a noise-aware model's graph; unpickling it (in a sampler's worker
    process) limits that process's BLAS to one thread."""

    __props__ = ()
    view_map = {0: [0]}

    def __reduce__(self):
        return _unpickle_blas_gate, ()

    def make_node(self, x):
        x = pt.as_tensor(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0]

    def pullback(self, inputs, outputs, cotangents):
        return [cotangents[0]]


_blas_gate = _BlasGate()


def frobenius_noise_variance(noise_var, d: int) -> float | None:
    """σ² when per-entry noise variances are isotropic in the Frobenius geometry, else None.

    A Gaussian sufficient-statistics release (:func:`pm_private.release_linear_stats`)
    adds noise of variance σ² to the diagonal statistics and σ²/2 to the off-diagonal ones
    (:func:`pm_private.linear.release.frobenius_weights` w), i.e. N(0, σ²·Id) on the symmetric
    (d+1)×(d+1) matrices with the Frobenius inner product; sums of such releases keep the form.

    Parameters
    ----------
    noise_var : array_like, shape ((d+1)(d+2)/2,)
        Per-entry noise variances v of the released statistics, in release order.
    d : int
        Number of covariates.

    Returns
    -------
    float or None
        σ² = w²·v when that is the same for every entry (relative 1e-10) and finite and > 0, else
        None.
    """
    scaled = np.asarray(noise_var, dtype=np.float64) * frobenius_weights(d) ** 2
    value = float(scaled[-1])
    if not (np.isfinite(value) and value > 0 and np.allclose(scaled, value, rtol=1e-10, atol=0.0)):
        return None
    return value


@numba.njit(cache=True)
def _frobenius_kernel(chol, stats, n, noise_var, logp, grad_chol, grad_stats, grad_n, grad_var):  # pragma: no cover
    """``frobenius_stats_logp`` and its gradients for a batch (B, d+1, d+1), into the outputs."""
    for b in range(chol.shape[0]):
        logp[b], g_chol, grad_n[b], grad_var[b], x, vec = frobenius_one(chol[b], stats[b], n[b], noise_var[b])
        copy_into(grad_chol[b], g_chol)
        copy_into(grad_stats[b], -(vec @ x @ vec.T))


@numba.njit(cache=True)
def frobenius_one(lower, stats, nb, s2):  # pragma: no cover
    """``frobenius_stats_logp`` of one regression and its gradients with respect to (L_C, n, σ²); then
    X̃ and U, from which the gradient with respect to the statistics is −U X̃ Uᵀ (computed only by
    callers that need it: the statistics are data in a model)."""
    d1 = lower.shape[0]
    const = 0.25 * d1 * (d1 - 1) * np.log(2.0) - 0.25 * d1 * (d1 + 1) * np.log(2 * np.pi)
    cov = lower @ lower.T
    lam, vec = np.linalg.eigh(cov)
    resid = vec.T @ (stats - nb * cov) @ vec  # R̃ = Uᵀ(R − nC)U
    x = np.empty((d1, d1))  # X̃ = R̃ ⊘ D, so X = U X̃ Uᵀ = 𝒜⁻¹(R − nC)
    x_lam = np.empty((d1, d1))  # X̃Λ
    phi = np.zeros(d1)  # φₖ = ∂(Σ_{i≤j} log Dᵢⱼ)/∂λₖ = 2n·(Σⱼ λⱼ/Dₖⱼ + λₖ/Dₖₖ)
    quad = log_det = dquad_dn = dlogdet_dn = sum_x2 = sum_inv = 0.0
    for i in range(d1):
        for j in range(d1):
            pair = lam[i] * lam[j]
            inv = 1.0 / (2.0 * nb * pair + s2)
            xij = resid[i, j] * inv
            x[i, j] = xij
            x_lam[i, j] = xij * lam[j]
            quad += resid[i, j] * xij
            sum_x2 += xij * xij
            dquad_dn -= 2.0 * xij * xij * pair
            phi[i] += 2.0 * nb * lam[j] * inv
            if j >= i:
                log_det -= np.log(inv)
                dlogdet_dn += 2.0 * pair * inv
                sum_inv += inv
            if j == i:
                phi[i] += 2.0 * nb * lam[i] * inv
                dquad_dn -= 2.0 * lam[i] * xij
    logp = -0.5 * (quad + log_det) + const
    grad = x_lam @ x  # X̃ΛX̃, so XCX = U X̃ΛX̃ Uᵀ
    for i in range(d1):
        for j in range(d1):
            grad[i, j] = nb * x[i, j] + 2.0 * nb * grad[i, j]
        grad[i, i] -= 0.5 * phi[i]
    grad_chol = 2.0 * ((vec @ grad @ vec.T) @ lower)
    return logp, grad_chol, -0.5 * (dquad_dn + dlogdet_dn), 0.5 * sum_x2 - 0.5 * sum_inv, x, vec


def _frobenius_logp_and_grads(chol, stats, n, noise_var):
    """The log-density of ``frobenius_stats_logp`` and its gradients with respect to
    (chol, stats, n, noise_var), batched over the leading axes (shared by all four inputs)."""
    batch, d1 = chol.shape[:-2], chol.shape[-1]
    size = int(np.prod(batch))
    outputs = (np.empty(size), np.empty((size, d1, d1)), np.empty((size, d1, d1)), np.empty(size), np.empty(size))
    _frobenius_kernel(
        np.ascontiguousarray(chol, dtype=np.float64).reshape(size, d1, d1),
        np.ascontiguousarray(stats, dtype=np.float64).reshape(size, d1, d1),
        np.ascontiguousarray(n, dtype=np.float64).reshape(size),
        np.ascontiguousarray(noise_var, dtype=np.float64).reshape(size),
        *outputs,
    )
    return tuple(value.reshape(batch + value.shape[1:]) for value in outputs)


class FrobeniusStatsLogp(Op):
    """PyTensor Op of ``frobenius_stats_logp``: outputs the log-density and its gradients with
    respect to (chol_c, stats, n, σ²), computed from one eigendecomposition of C = L_C L_Cᵀ.

    The gradient needs no eigenvalue differences (it is U·G̃·Uᵀ with G̃ built from products of
    eigenvalues), so it is exact at repeated eigenvalues of C.  Second derivatives are not
    implemented.  Its linear algebra runs on one BLAS thread.
    """

    __props__ = ()

    def make_node(self, chol_c, stats, n, noise_var):
        _register_numba()
        chol_c, stats, n, noise_var = (pt.as_tensor(v, dtype="float64") for v in (chol_c, stats, n, noise_var))
        batch = chol_c.ndim - 2
        if stats.ndim != chol_c.ndim or n.ndim != batch or noise_var.ndim != batch:
            raise ValueError("chol_c, stats (…, d+1, d+1), n and noise_var (…) must share their batch dimensions")
        batch_type = pt.tensor(dtype="float64", shape=(None,) * batch).type
        outputs = [batch_type(), chol_c.type(), stats.type(), batch_type(), batch_type()]
        return Apply(self, [chol_c, stats, n, noise_var], outputs)

    def perform(self, node, inputs, output_storage):
        with single_threaded_blas():
            results = _frobenius_logp_and_grads(*inputs)
        for storage, value in zip(output_storage, results, strict=True):
            storage[0] = value

    def pullback(self, inputs, outputs, cotangents):
        if any(not isinstance(c.type, DisconnectedType) for c in cotangents[1:]):
            return [grad_not_implemented(self, i, v, "second derivatives") for i, v in enumerate(inputs)]
        g = cotangents[0]
        return [g[..., None, None] * outputs[1], g[..., None, None] * outputs[2], g * outputs[3], g * outputs[4]]


_frobenius_stats_logp = FrobeniusStatsLogp()
_numba_registered = False


def _register_numba() -> None:
    """Numba implementations of this module's Ops: the gate is the identity, the likelihood calls
    its compiled kernel directly (no object mode).

    Both carry a cache key, so PyTensor caches the compiled function of a whole model graph that
    contains them: without one, every process recompiled the model's log-density and gradient
    however often it had been compiled before.  The key includes a digest
    of this module's source (:func:`~pm_private._engine.numba_cache.register_numba_funcify`), so
    editing a kernel invalidates the cache.
    """
    global _numba_registered
    if _numba_registered:
        return
    _numba_registered = True
    from pytensor.link.numba.dispatch.basic import numba_njit

    @register_numba_funcify(_BlasGate)
    def _funcify_gate(op, node, **kwargs):
        @numba_njit
        def gate(x):
            return x

        return gate

    @register_numba_funcify(FrobeniusStatsLogp)
    def _funcify_logp(op, node, **kwargs):
        kernel = _frobenius_kernel

        @numba_njit
        def frobenius_logp(chol, stats, n, noise_var):
            d1 = chol.shape[-1]
            size = n.size
            logp, grad_n, grad_var = np.empty(size), np.empty(size), np.empty(size)
            grad_chol, grad_stats = np.empty((size, d1, d1)), np.empty((size, d1, d1))
            kernel(
                np.ascontiguousarray(chol).reshape((size, d1, d1)),
                np.ascontiguousarray(stats).reshape((size, d1, d1)),
                np.ascontiguousarray(n).reshape(size),
                np.ascontiguousarray(noise_var).reshape(size),
                logp,
                grad_chol,
                grad_stats,
                grad_n,
                grad_var,
            )
            return (
                logp.reshape(n.shape),
                grad_chol.reshape(chol.shape),
                grad_stats.reshape(chol.shape),
                grad_n.reshape(n.shape),
                grad_var.reshape(n.shape),
            )

        return frobenius_logp


@register_jax_funcify(_BlasGate)
def _jax_funcify_gate(op, node=None, **kwargs):
    """JAX implementation of the gate: the identity (JAX manages its own threads)."""

    def gate(x):
        return x

    return gate


def jax_frobenius_one(lower, stats, n, s2):
    """The log-density of one regression and its gradients with respect to (L_C, stats, n, σ²), in
    ``jax.numpy`` (the formulas of :func:`frobenius_one`)."""
    import jax.numpy as jnp

    d1 = lower.shape[-1]
    const = 0.25 * d1 * (d1 - 1) * np.log(2.0) - 0.25 * d1 * (d1 + 1) * np.log(2 * np.pi)
    cov = lower @ lower.T
    lam, vec = jnp.linalg.eigh(cov)
    resid = vec.T @ (stats - n * cov) @ vec
    pair = lam[:, None] * lam[None, :]
    inv = 1.0 / (2.0 * n * pair + s2)
    x = resid * inv
    upper = jnp.triu(jnp.ones((d1, d1), dtype=bool))
    diag_x, diag_inv = jnp.diagonal(x), jnp.diagonal(inv)
    quad = jnp.sum(resid * x)
    log_det = -jnp.sum(jnp.where(upper, jnp.log(inv), 0.0))
    dquad_dn = -2.0 * jnp.sum(x * x * pair) - 2.0 * jnp.sum(lam * diag_x)
    dlogdet_dn = 2.0 * jnp.sum(jnp.where(upper, pair * inv, 0.0))
    phi = 2.0 * n * (inv @ lam) + 2.0 * n * lam * diag_inv
    grad = n * x + 2.0 * n * ((x * lam[None, :]) @ x) - 0.5 * jnp.diag(phi)
    return (
        -0.5 * (quad + log_det) + const,
        2.0 * ((vec @ grad @ vec.T) @ lower),
        -(vec @ x @ vec.T),
        -0.5 * (dquad_dn + dlogdet_dn),
        0.5 * jnp.sum(x * x) - 0.5 * jnp.sum(jnp.where(upper, inv, 0.0)),
    )


@register_jax_funcify(FrobeniusStatsLogp)
def _jax_funcify_frobenius(op, node=None, **kwargs):
    """JAX implementation (numpyro, blackjax, nutpie's JAX backend) of ``_frobenius_kernel``,
    vectorised; JAX differentiates the log-density through the analytic gradients (a custom JVP),
    not through ``eigh``, so it stays exact at repeated eigenvalues."""
    import jax
    import jax.numpy as jnp

    def logp_and_grads(chol, stats, n, noise_var):
        chol, stats, n, noise_var = (jnp.asarray(v, dtype=jnp.float64) for v in (chol, stats, n, noise_var))
        d1 = chol.shape[-1]
        flat = jax.vmap(jax_frobenius_one)(
            chol.reshape((-1, d1, d1)), stats.reshape((-1, d1, d1)), n.reshape(-1), noise_var.reshape(-1)
        )
        shapes = (n.shape, chol.shape, chol.shape, n.shape, n.shape)
        return tuple(value.reshape(shape) for value, shape in zip(flat, shapes, strict=True))

    @jax.custom_jvp
    def logp(chol, stats, n, noise_var):
        return logp_and_grads(chol, stats, n, noise_var)[0]

    @logp.defjvp
    def _logp_jvp(primals, tangents):
        value, g_chol, g_stats, g_n, g_var = logp_and_grads(*primals)
        d_chol, d_stats, d_n, d_var = tangents
        change = jnp.sum(g_chol * d_chol, axis=(-2, -1)) + jnp.sum(g_stats * d_stats, axis=(-2, -1))
        return value, change + g_n * d_n + g_var * d_var

    def frobenius_logp(chol, stats, n, noise_var):
        grads = logp_and_grads(chol, stats, n, noise_var)[1:]
        return (logp(chol, stats, n, noise_var), *(jax.lax.stop_gradient(g) for g in grads))

    return frobenius_logp


def frobenius_stats_logp(chol_c, stats, private_n, noise_var):
    """Noise-aware log-density of statistics released with noise isotropic in the Frobenius geometry,
    in O(d³): one eigendecomposition of C.

    The model is that of ``noisy_stats_logp`` with v = σ²/w² (:func:`frobenius_noise_variance`).
    On the symmetric (d+1)×(d+1) matrices with the Frobenius inner product the released matrix is
    R = S + W with S ≈ N(nC, 𝒞), 𝒞(A) = 2n·CAC (Var⟨A, S⟩ = n·Var(zᵀAz) = 2n·tr(ACAC)), and
    W ~ N(0, σ²·Id).  With C = UΛUᵀ both covariances are diagonal in the basis
    {uᵢuⱼᵀ + uⱼuᵢᵀ}, with eigenvalues Dᵢⱼ = 2nλᵢλⱼ + σ², so with R̃ = Uᵀ(R − nC)U

        log p(r) = −½ Σᵢⱼ R̃ᵢⱼ²/Dᵢⱼ − ½ Σ_{i≤j} log Dᵢⱼ + (m/2)·log 2 − (k/2)·log 2π,

    m = d(d+1)/2 off-diagonal and k = (d+1)(d+2)/2 released entries (the log 2 term is the
    Jacobian from the released triangle to the Frobenius coordinates), equal to the dense k × k
    normal density of ``noisy_stats_logp``, not an approximation of it.  The gradient with
    respect to C is, with X = U(R̃ ⊘ D)Uᵀ = 𝒜⁻¹(R − nC), 𝒜 = 2n·C(·)C + σ²·Id,

        ∂log p/∂C = nX + 2n·XCX − ½·U diag(φ) Uᵀ,  φₖ = 2n·(Σⱼ λⱼ/Dₖⱼ + λₖ/Dₖₖ),

    (the last term is the gradient of the spectral function Σ_{i≤j} log Dᵢⱼ), and
    ∂log p/∂L_C = 2(∂log p/∂C)·L_C: no divided differences of eigenvalues, so it is exact at
    repeated eigenvalues, where differentiating through ``eigh`` is not.

    Parameters
    ----------
    chol_c : tensor (..., d+1, d+1)
        Cholesky factor L_C of C (``augmented_cholesky``); any factor with L_C L_Cᵀ = C works.
    stats : tensor (..., d+1, d+1)
        The released private statistics as the symmetric matrix [[Sxx, Sxy], [Sxyᵀ, Syy]].
    private_n : tensor (...)
        Number n of private rows.
    noise_var : tensor (...)
        σ², the noise variance of the diagonal entries (> 0).

    Returns
    -------
    tensor (...)
        The log-density, batched over the leading axes (broadcast between the inputs).
    """
    chol_c, stats, private_n, noise_var = (
        pt.as_tensor(v, dtype="float64") for v in (chol_c, stats, private_n, noise_var)
    )
    shapes = ((chol_c, 2), (stats, 2), (private_n, 0), (noise_var, 0))
    batch = tuple(
        pt.broadcast_shape(
            *(tuple(v.shape[i] for i in range(v.ndim - core)) for v, core in shapes), arrays_are_shapes=True
        )
    )
    matrix = (*batch, chol_c.shape[-1], chol_c.shape[-1])
    chol_c = pt.broadcast_to(chol_c, matrix)
    stats = pt.broadcast_to(stats, matrix)
    return _frobenius_stats_logp(chol_c, stats, pt.broadcast_to(private_n, batch), pt.broadcast_to(noise_var, batch))[0]

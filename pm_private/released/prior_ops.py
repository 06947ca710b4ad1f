"""Priors of the survival models as Ops with hand-written gradients: a Gaussian random walk built
from its standardised increments and its log-density, and the simplex of shares from their log
ratios.

Random walk.  The walk of :func:`pm_private.released.reparametrisation.random_walk` has rows
x = (x₀, …, x_{J−1}), x₀ ~ N(μ, s₀²) and xⱼ − xⱼ₋₁ ~ N(0, τ²), sampled through
z₀ = (x₀ − μ)/s₀ and zⱼ = (xⱼ − xⱼ₋₁)/τ:

    x₀ = μ + s₀z₀,   xⱼ = x₀ + τ·Σᵢ₌₁…ⱼ zᵢ,

    log p(x) = −J/2·log 2π − log s₀ − (J − 1)·log τ − ½((x₀ − μ)/s₀)² − ½ Σⱼ₌₁…J₋₁ ((xⱼ − xⱼ₋₁)/τ)².

With cⱼ = Σₖ₌ⱼ…J₋₁ x̄ₖ the suffix sums of a cotangent x̄, the walk's vector–Jacobian product is
z̄₀ = s₀c₀, z̄ⱼ = τcⱼ, μ̄ = c₀ and τ̄ = Σⱼ₌₁…J₋₁ zⱼcⱼ (per row).  As a PyTensor graph (a concatenation, a
cumulative sum, the differences of the log-density and their derivatives) a walk's log-density
and gradient hold some forty nodes, each compiled by Numba on a model's first fit; here they are
three, each a Numba loop kernel compiled with ``cache=True`` (once per machine), with JAX
implementations beside them.  The walks are rows of a matrix (R, J), with one μ and one τ per row.

Simplex.  Shares w on the simplex (K ≥ 2) are sampled through their centred log ratios
yₖ = log wₖ − (1/K)·Σⱼ log wⱼ, k < K (PyMC's transform of ``pm.Dirichlet``; Aitchison 1986,
§4.6): w = softmax(z), z = (y₁, …, y_{K−1}, −Σₖ yₖ), with log|dw/dy| = log K + Σₖ₌₁…K log wₖ and
the vector–Jacobian product ȳₖ = z̄ₖ − z̄_K, z̄ₖ = wₖ(w̄ₖ − Σⱼ wⱼw̄ⱼ).

Reference: Aitchison, J. (1986). The Statistical Analysis of Compositional Data. Chapman and Hall.
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

__all__ = [
    "simplex_from_log_ratios",
    "walk_from_increments",
    "walk_kernel",
    "walk_logp",
    "walk_logp_kernel",
    "walk_vjp_kernel",
]

_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)


@numba.njit(cache=True, error_model="numpy")  # x/0 gives inf or nan (a -inf log-density), as NumPy
def walk_kernel(z, start, step, first_sigma):
    """The walks x (R, J) of the increments z (R, J), first means μ (R,) and steps τ (R,)."""
    x = np.empty_like(z)
    for r in range(z.shape[0]):
        level = start[r] + first_sigma * z[r, 0]
        x[r, 0] = level
        for j in range(1, z.shape[1]):
            level += step[r] * z[r, j]
            x[r, j] = level
    return x


@numba.njit(cache=True, error_model="numpy")  # x/0 gives inf or nan (a -inf log-density), as NumPy
def walk_vjp_kernel(z, step, first_sigma, g_x):
    """(z̄, μ̄, τ̄) of the module notes for the cotangent x̄ = ``g_x``."""
    g_z = np.empty_like(z)
    g_start, g_step = np.empty(z.shape[0]), np.zeros(z.shape[0])
    for r in range(z.shape[0]):
        suffix = 0.0
        for j in range(z.shape[1] - 1, 0, -1):
            suffix += g_x[r, j]
            g_z[r, j] = step[r] * suffix
            g_step[r] += z[r, j] * suffix
        suffix += g_x[r, 0]
        g_z[r, 0] = first_sigma * suffix
        g_start[r] = suffix
    return g_z, g_start, g_step


@numba.njit(cache=True, error_model="numpy")  # x/0 gives inf or nan (a -inf log-density), as NumPy
def walk_logp_kernel(x, start, step, first_sigma):
    """(log p of each row, ∂/∂x, ∂/∂μ, ∂/∂τ of each row's log p) of the module notes."""
    rows, J = x.shape
    logp, g_x = np.empty(rows), np.zeros_like(x)
    g_start, g_step = np.empty(rows), np.empty(rows)
    for r in range(rows):
        u = (x[r, 0] - start[r]) / first_sigma
        tau = step[r]
        total = -J * _HALF_LOG_2PI - math.log(first_sigma) - (J - 1) * math.log(tau) - 0.5 * u * u
        g_x[r, 0] = -u / first_sigma
        g_start[r] = u / first_sigma
        tau_bar = -(J - 1) / tau
        for j in range(1, J):
            v = (x[r, j] - x[r, j - 1]) / tau
            total -= 0.5 * v * v
            g_x[r, j] -= v / tau
            g_x[r, j - 1] += v / tau
            tau_bar += v * v / tau
        logp[r], g_step[r] = total, tau_bar
    return logp, g_x, g_start, g_step


def _inputs(*args, ndims):
    inputs = [pt.as_tensor(a).astype("float64") for a in args]
    for var, ndim in zip(inputs, ndims, strict=True):
        if var.ndim != ndim:
            raise ValueError(f"a walk input has {var.ndim} dimensions, {ndim} expected")
    return inputs


class RandomWalk(Op):
    """(z, μ, τ) ↦ x of the module notes."""

    __props__ = ("first_sigma",)

    def __init__(self, first_sigma: float):
        self.first_sigma = float(first_sigma)

    def make_node(self, z, start, step):
        return Apply(self, _inputs(z, start, step, ndims=(2, 1, 1)), [pt.dmatrix()])

    def perform(self, node, inputs, output_storage):
        z, start, step = inputs
        c = np.ascontiguousarray
        output_storage[0][0] = walk_kernel(
            c(z, np.float64), np.array(start, np.float64), c(step, np.float64), self.first_sigma
        )

    def infer_shape(self, node, shapes):
        return [shapes[0]]

    def pullback(self, inputs, outputs, cotangents):
        z, start, step = inputs
        (g_x,) = cotangents
        if isinstance(g_x.type, DisconnectedType):
            g_x = pt.zeros_like(outputs[0])
        return RandomWalkVJP(self.first_sigma)(z, step, g_x)


class RandomWalkVJP(Op):
    """(z, τ, x̄) ↦ (z̄, μ̄, τ̄).  No second derivatives."""

    __props__ = ("first_sigma",)

    def __init__(self, first_sigma: float):
        self.first_sigma = float(first_sigma)

    def make_node(self, z, step, g_x):
        inputs = _inputs(z, step, g_x, ndims=(2, 1, 2))
        return Apply(self, inputs, [pt.dmatrix(), pt.dvector(), pt.dvector()])

    def perform(self, node, inputs, output_storage):
        z, step, g_x = (np.ascontiguousarray(a, dtype=np.float64) for a in inputs)
        for storage, value in zip(output_storage, walk_vjp_kernel(z, step, self.first_sigma, g_x), strict=True):
            storage[0] = value

    def infer_shape(self, node, shapes):
        rows = (shapes[0][0],)
        return [shapes[0], rows, rows]

    def pullback(self, inputs, outputs, cotangents):
        return [grad_not_implemented(self, i, x, "second derivatives") for i, x in enumerate(inputs)]


class RandomWalkLogp(Op):
    """(x, μ, τ) ↦ (log p of each row, ∂/∂x, ∂/∂μ, ∂/∂τ of each row's log p); the last three
    serve only the pullback.  No second derivatives."""

    __props__ = ("first_sigma",)

    def __init__(self, first_sigma: float):
        self.first_sigma = float(first_sigma)

    def make_node(self, x, start, step):
        inputs = _inputs(x, start, step, ndims=(2, 1, 1))
        return Apply(self, inputs, [pt.dvector(), pt.dmatrix(), pt.dvector(), pt.dvector()])

    def perform(self, node, inputs, output_storage):
        x, start, step = (np.ascontiguousarray(a, dtype=np.float64) for a in inputs)
        results = walk_logp_kernel(x, np.array(start), step, self.first_sigma)  # a writeable start, as in Numba
        for storage, value in zip(output_storage, results, strict=True):
            storage[0] = value

    def infer_shape(self, node, shapes):
        rows = (shapes[0][0],)
        return [rows, shapes[0], rows, rows]

    def pullback(self, inputs, outputs, cotangents):
        if any(not isinstance(c.type, DisconnectedType) for c in cotangents[1:]):
            return [grad_not_implemented(self, i, v, "second derivatives") for i, v in enumerate(inputs)]
        g = cotangents[0]
        _, g_x, g_start, g_step = outputs
        return [g[:, None] * g_x, g * g_start, g * g_step]


@register_numba_funcify(RandomWalk)
def _numba_funcify_walk(op, node=None, **kwargs):
    """Numba implementation for PyTensor's default backend: the cached kernel."""
    first_sigma = op.first_sigma

    @numba_njit
    def random_walk_op(z, start, step):
        c = np.ascontiguousarray
        return walk_kernel(c(z), np.copy(start), c(step), first_sigma)  # a copy: writeable, as perform's

    return random_walk_op


@register_numba_funcify(RandomWalkVJP)
def _numba_funcify_walk_vjp(op, node=None, **kwargs):
    """Numba implementation for PyTensor's default backend: the cached kernel."""
    first_sigma = op.first_sigma

    @numba_njit
    def random_walk_vjp_op(z, step, g_x):
        c = np.ascontiguousarray
        return walk_vjp_kernel(c(z), c(step), first_sigma, c(g_x))

    return random_walk_vjp_op


@register_numba_funcify(RandomWalkLogp)
def _numba_funcify_walk_logp(op, node=None, **kwargs):
    """Numba implementation for PyTensor's default backend: the cached kernel."""
    first_sigma = op.first_sigma

    @numba_njit
    def random_walk_logp_op(x, start, step):
        c = np.ascontiguousarray
        return walk_logp_kernel(c(x), np.copy(start), c(step), first_sigma)  # a copy: writeable, as perform's

    return random_walk_logp_op


def _jax_walk(first_sigma):
    import jax.numpy as jnp

    def walk(z, start, step):
        first = (start + first_sigma * z[:, 0])[:, None]
        return jnp.concatenate([first, first + step[:, None] * jnp.cumsum(z[:, 1:], axis=1)], axis=1)

    return walk


@register_jax_funcify(RandomWalk)
def _jax_funcify_walk(op, node=None, **kwargs):
    """JAX implementation: the same formulas in ``jax.numpy``."""
    return _jax_walk(op.first_sigma)


@register_jax_funcify(RandomWalkVJP)
def _jax_funcify_walk_vjp(op, node=None, **kwargs):
    """JAX implementation: JAX's VJP of the walk (μ̄ from the first level's cotangents)."""
    import jax

    walk = _jax_walk(op.first_sigma)

    def random_walk_vjp_op(z, step, g_x):
        start = 0.0 * z[:, 0]  # the VJP does not depend on μ (the walk is affine in it)
        _, pull = jax.vjp(walk, z, start, step)
        return pull(g_x)

    return random_walk_vjp_op


@register_jax_funcify(RandomWalkLogp)
def _jax_funcify_walk_logp(op, node=None, **kwargs):
    """JAX implementation: the same formulas in ``jax.numpy``."""
    import jax.numpy as jnp

    s0 = op.first_sigma

    def random_walk_logp_op(x, start, step):
        J = x.shape[1]
        u = (x[:, 0] - start) / s0
        v = jnp.diff(x, axis=1) / step[:, None]
        logp = -J * _HALF_LOG_2PI - np.log(s0) - (J - 1) * jnp.log(step) - 0.5 * u**2 - 0.5 * jnp.sum(v**2, axis=1)
        pad = jnp.zeros((x.shape[0], 1))
        g_x = jnp.concatenate([pad, -v / step[:, None]], axis=1) + jnp.concatenate([v / step[:, None], pad], axis=1)
        g_x = g_x.at[:, 0].add(-u / s0)
        g_step = -(J - 1) / step + jnp.sum(v**2, axis=1) / step
        return logp, g_x, u / s0, g_step

    return random_walk_logp_op


def walk_from_increments(z, start, step, first_sigma: float):
    """The walks x of the module notes from their standardised increments, with their gradient.

    Parameters
    ----------
    z : tensor (R, J)
        The increments.
    start : tensor (R,)
        The first levels' prior means μ.
    step : tensor (R,)
        The steps τ > 0.
    first_sigma : float
        s₀ > 0.

    Returns
    -------
    tensor (R, J)
        x.
    """
    return RandomWalk(first_sigma)(z, start, step)


def walk_logp(x, start, step, first_sigma: float):
    """The log-density of each row of x under the walk of the module notes, with its gradient.

    Parameters
    ----------
    x : tensor (R, J)
        The walks.
    start, step, first_sigma
        As for :func:`walk_from_increments`.

    Returns
    -------
    tensor (R,)
        log p of each row.
    """
    return RandomWalkLogp(first_sigma)(x, start, step)[0]


@numba.njit(cache=True, error_model="numpy")  # x/0 gives inf or nan (a -inf log-density), as NumPy
def _simplex_kernel(y):
    """w of the log ratios y (module notes), overflow-free."""
    z = np.empty(y.size + 1)
    z[y.size] = 0.0
    for k in range(y.size):
        z[k] = y[k]
        z[y.size] -= y[k]
    top = z.max()
    w = np.empty(z.size)
    total = 0.0
    for k in range(z.size):
        w[k] = math.exp(z[k] - top)
        total += w[k]
    for k in range(w.size):
        w[k] /= total
    return w


@numba.njit(cache=True, error_model="numpy")  # x/0 gives inf or nan (a -inf log-density), as NumPy
def _simplex_vjp_kernel(y, g_w):
    """ȳ of the module notes."""
    w = _simplex_kernel(y)
    mean = 0.0
    for k in range(w.size):
        mean += w[k] * g_w[k]
    last = w[y.size] * (g_w[y.size] - mean)
    g_y = np.empty(y.size)
    for k in range(y.size):
        g_y[k] = w[k] * (g_w[k] - mean) - last
    return g_y


class SimplexFromLogRatios(Op):
    """y ↦ w of the module notes (y a vector of K − 1 log ratios)."""

    __props__ = ()

    def make_node(self, y):
        return Apply(self, _inputs(y, ndims=(1,)), [pt.dvector()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = _simplex_kernel(np.ascontiguousarray(inputs[0], dtype=np.float64))

    def infer_shape(self, node, shapes):
        return [(shapes[0][0] + 1,)]

    def pullback(self, inputs, outputs, cotangents):
        (g_w,) = cotangents
        if isinstance(g_w.type, DisconnectedType):
            g_w = pt.zeros_like(outputs[0])
        return [_simplex_vjp(inputs[0], g_w)]


class SimplexFromLogRatiosVJP(Op):
    """(y, w̄) ↦ ȳ.  No second derivatives."""

    __props__ = ()

    def make_node(self, y, g_w):
        return Apply(self, _inputs(y, g_w, ndims=(1, 1)), [pt.dvector()])

    def perform(self, node, inputs, output_storage):
        y, g_w = (np.ascontiguousarray(a, dtype=np.float64) for a in inputs)
        output_storage[0][0] = _simplex_vjp_kernel(y, g_w)

    def infer_shape(self, node, shapes):
        return [shapes[0]]

    def pullback(self, inputs, outputs, cotangents):
        return [grad_not_implemented(self, i, x, "second derivatives") for i, x in enumerate(inputs)]


_simplex = SimplexFromLogRatios()
_simplex_vjp = SimplexFromLogRatiosVJP()


@register_numba_funcify(SimplexFromLogRatios)
def _numba_funcify_simplex(op, node=None, **kwargs):
    """Numba implementation for PyTensor's default backend: the cached kernel."""

    @numba_njit
    def simplex_op(y):
        return _simplex_kernel(y)

    return simplex_op


@register_numba_funcify(SimplexFromLogRatiosVJP)
def _numba_funcify_simplex_vjp(op, node=None, **kwargs):
    """Numba implementation for PyTensor's default backend: the cached kernel."""

    @numba_njit
    def simplex_vjp_op(y, g_w):
        return _simplex_vjp_kernel(y, g_w)

    return simplex_vjp_op


def _jax_simplex(y):
    import jax
    import jax.numpy as jnp

    return (jax.nn.softmax(jnp.concatenate([y, -jnp.sum(y, keepdims=True)])),)


@register_jax_funcify(SimplexFromLogRatios)
def _jax_funcify_simplex(op, node=None, **kwargs):
    """JAX implementation: the softmax of (y, −Σy)."""
    return lambda y: _jax_simplex(y)[0]


register_jax_vjp(SimplexFromLogRatiosVJP, _jax_simplex, n_inputs=1)


def simplex_from_log_ratios(y):
    """Shares w on the simplex from their centred log ratios y (module notes), with the gradient.

    Parameters
    ----------
    y : tensor (K − 1,)
        The centred log ratios yₖ, k < K.

    Returns
    -------
    tensor (K,)
        w.
    """
    return _simplex(y)

"""Weighted sums of the exit probabilities over a set of rows, as one Op with a hand-written gradient.

For linear predictors aᵢ (per cell c: a[c, i]), row vectors zᵢ and weights wᵢ, the Op computes

    T[c, k] = Σᵢ wᵢ·gₖ(a[c, i]),   U[c, k] = Σᵢ wᵢ·gₖ(a[c, i])·zᵢ,

gₖ the exit probabilities of cell c's hazards
(:func:`~pm_private.survival.regression.moments.exit_probabilities`).  The survival regression's
reference covariate law (:mod:`pm_private.survival.regression.covariate_law`) takes them over the
law's N whitened rows and over the Gauss–Hermite nodes of the Gaussian law.  As a PyTensor graph
these are (K, N, 2J + 1)-sized exponentials, cumulative sums and a contraction with their
gradients, about 10 ms per gradient at N = 2,048, J = 20, d = 10; here they are two Numba loop
kernels (:func:`~pm_private.survival.exit_kernels.exits_into` per row, and its reverse
:func:`~pm_private.survival.exit_kernels.exits_adjoint_into`), compiled once per machine.  The rows and
weights are data (no gradient); the gradient goes to a and the hazards.
"""

from __future__ import annotations

import math

import numba
import numpy as np
import pytensor.tensor as pt
from pytensor.gradient import DisconnectedType, grad_not_implemented, grad_undefined
from pytensor.graph.basic import Apply
from pytensor.graph.op import Op
from pytensor.link.numba.dispatch.basic import numba_njit

from ..._engine.jax_dispatch import register_jax_funcify
from ..._engine.numba_cache import register_numba_funcify
from ..exit_kernels import exits_adjoint_into, exits_into

__all__ = ["weighted_exit_sums"]


@numba.njit(cache=True, nogil=True)
def exit_sums_kernel(a, z, w, lei, cens, discrete):
    """(T, U) of the module notes: shapes (K, 2J + 1) and (K, 2J + 1, r)."""
    (cells, rows), width, J = a.shape, z.shape[1], lei.shape[1]
    exits = 2 * J + 1
    total, moment, g = np.zeros((cells, exits)), np.zeros((cells, exits, width)), np.empty(exits)
    for c in range(cells):
        increments = np.exp(lei[c])
        for i in range(rows):
            exits_into(math.exp(a[c, i]), increments, cens[c], discrete, g)
            for k in range(exits):
                wg = w[i] * g[k]
                total[c, k] += wg
                for j in range(width):
                    moment[c, k, j] += wg * z[i, j]
    return total, moment


@numba.njit(cache=True, nogil=True)
def exit_sums_vjp_kernel(a, z, w, lei, cens, discrete, total_bar, moment_bar):
    """(∂/∂a, ∂/∂lei, ∂/∂cens) of ⟨T̄, T⟩ + ⟨Ū, U⟩: each row's exits take the cotangent
    wᵢ·(T̄[c, k] + Ū[c, k]·zᵢ), through :func:`exits_adjoint_into`."""
    (cells, rows), width, J = a.shape, z.shape[1], lei.shape[1]
    exits = 2 * J + 1
    a_bar, lei_bar, cens_bar = np.empty((cells, rows)), np.zeros((cells, J)), np.zeros((cells, J))
    bar, scratch = np.empty(exits), np.empty((4, J))
    for c in range(cells):
        increments = np.exp(lei[c])
        for i in range(rows):
            for k in range(exits):
                t = total_bar[c, k]
                for j in range(width):
                    t += moment_bar[c, k, j] * z[i, j]
                bar[k] = w[i] * t
            a_bar[c, i] = exits_adjoint_into(
                math.exp(a[c, i]), increments, cens[c], discrete, bar, lei_bar[c], cens_bar[c], scratch
            )
    return a_bar, lei_bar, cens_bar


_NDIM = (2, 2, 1, 2, 2)


def _inputs(args):
    inputs = [pt.as_tensor(x).astype("float64") for x in args]
    ndims = tuple(x.ndim for x in inputs)
    if ndims[:5] != _NDIM:
        raise ValueError(f"weighted exit sums need (a, z, w, lei, cens) of ndims {_NDIM}, got {ndims[:5]}")
    return inputs


def _contiguous(inputs):
    return [np.ascontiguousarray(x, dtype=np.float64) for x in inputs]


class WeightedExitSums(Op):
    """(a, z, w, log λΔ, censoring) ↦ (T, U) of the module notes; ``discrete``: the grouped model."""

    __props__ = ("discrete",)

    def __init__(self, discrete: bool):
        self.discrete = bool(discrete)

    def make_node(self, *args):
        inputs = _inputs(args)
        (cells, _), (_, width), (_, J) = inputs[0].type.shape, inputs[1].type.shape, inputs[3].type.shape
        exits = None if J is None else 2 * J + 1
        outputs = [
            pt.tensor(dtype="float64", shape=(cells, exits)),
            pt.tensor(dtype="float64", shape=(cells, exits, width)),
        ]
        return Apply(self, inputs, outputs)

    def perform(self, node, inputs, output_storage):
        output_storage[0][0], output_storage[1][0] = exit_sums_kernel(*_contiguous(inputs), self.discrete)

    def infer_shape(self, node, shapes):
        (cells, _), (_, width), (_, J) = shapes[0], shapes[1], shapes[3]
        return [(cells, 2 * J + 1), (cells, 2 * J + 1, width)]

    def pullback(self, inputs, outputs, cotangents):
        total_bar, moment_bar = (
            pt.zeros_like(out) if isinstance(g.type, DisconnectedType) else g
            for out, g in zip(outputs, cotangents, strict=True)
        )
        a_bar, lei_bar, cens_bar = WeightedExitSumsVJP(self.discrete)(*inputs, total_bar, moment_bar)
        z_bar, w_bar = (grad_undefined(self, i, inputs[i], "the rows and weights are data") for i in (1, 2))
        return [a_bar, z_bar, w_bar, lei_bar, cens_bar]


class WeightedExitSumsVJP(Op):
    """(inputs…, T̄, Ū) ↦ the gradients of ⟨T̄, T⟩ + ⟨Ū, U⟩ in (a, log λΔ, censoring).  No second
    derivatives."""

    __props__ = ("discrete",)

    def __init__(self, discrete: bool):
        self.discrete = bool(discrete)

    def make_node(self, *args):
        inputs = _inputs(args)
        return Apply(self, inputs, [inputs[0].type(), inputs[3].type(), inputs[4].type()])

    def perform(self, node, inputs, output_storage):
        *args, total_bar, moment_bar = _contiguous(inputs)
        grads = exit_sums_vjp_kernel(*args, self.discrete, total_bar, moment_bar)
        for storage, value in zip(output_storage, grads, strict=True):
            storage[0] = value

    def infer_shape(self, node, shapes):
        return [tuple(shapes[0]), tuple(shapes[3]), tuple(shapes[4])]

    def pullback(self, inputs, outputs, cotangents):
        return [grad_not_implemented(self, i, x, "second derivatives") for i, x in enumerate(inputs)]


@register_numba_funcify(WeightedExitSums)
def _numba_funcify_exit_sums(op, node=None, **kwargs):
    """Numba implementation for PyTensor's default backend: the cached kernel."""
    discrete = op.discrete

    @numba_njit
    def weighted_exit_sums_op(a, z, w, lei, cens):
        c = np.ascontiguousarray
        return exit_sums_kernel(c(a), c(z), c(w), c(lei), c(cens), discrete)

    return weighted_exit_sums_op


@register_numba_funcify(WeightedExitSumsVJP)
def _numba_funcify_exit_sums_vjp(op, node=None, **kwargs):
    """Numba implementation for PyTensor's default backend: the cached kernel."""
    discrete = op.discrete

    @numba_njit
    def weighted_exit_sums_vjp_op(a, z, w, lei, cens, total_bar, moment_bar):
        c = np.ascontiguousarray
        return exit_sums_vjp_kernel(c(a), c(z), c(w), c(lei), c(cens), discrete, c(total_bar), c(moment_bar))

    return weighted_exit_sums_vjp_op


def _jax_exit_sums(discrete: bool):
    """(T, U) in ``jax.numpy``: the exit probabilities of every row at once."""

    def exit_sums(a, z, w, lei, cens):
        import jax.numpy as jnp

        event = jnp.exp(a[:, :, None] + lei[:, None, :])  # (K, N, J)
        cens = cens[:, None, :]
        if discrete:
            hazard = -jnp.expm1(-event)
            log_stay = -event + jnp.log1p(-cens)
            at_risk = jnp.exp(jnp.cumsum(log_stay, axis=-1) - log_stay)
            parts = [at_risk * hazard, at_risk * (1.0 - hazard) * cens, jnp.exp(log_stay.sum(axis=-1))[..., None]]
        else:
            rate = event + cens
            exits = jnp.exp(-(jnp.cumsum(rate, axis=-1) - rate)) * -jnp.expm1(-rate) / rate
            parts = [exits * event, exits * cens, jnp.exp(-rate.sum(axis=-1))[..., None]]
        g = jnp.concatenate(parts, axis=-1) * w[None, :, None]  # (K, N, E)
        return g.sum(axis=1), jnp.einsum("cne,nr->cer", g, z)

    return exit_sums


@register_jax_funcify(WeightedExitSums)
def _jax_funcify_exit_sums(op, node=None, **kwargs):
    """JAX implementation: the same sums in ``jax.numpy`` (JAX differentiates it itself)."""
    return _jax_exit_sums(op.discrete)


@register_jax_funcify(WeightedExitSumsVJP)
def _jax_funcify_exit_sums_vjp(op, node=None, **kwargs):
    """JAX implementation of the gradient: ``jax.vjp`` of the JAX sums."""
    import jax

    sums = _jax_exit_sums(op.discrete)

    def exit_sums_vjp(a, z, w, lei, cens, total_bar, moment_bar):
        _, pullback = jax.vjp(lambda a_, lei_, cens_: sums(a_, z, w, lei_, cens_), a, lei, cens)
        return pullback((total_bar, moment_bar))

    return exit_sums_vjp


def weighted_exit_sums(a, z, w, lei, cens, *, discrete: bool = False):
    """T[c, k] = Σᵢ wᵢ·gₖ(a[c, i]) and U[c, k] = Σᵢ wᵢ·gₖ(a[c, i])·zᵢ (module notes), one Op with
    its gradient in a and the hazards.

    Parameters
    ----------
    a : tensor (K, N)
        Linear predictors per cell and row.
    z : tensor (N, r)
        Row vectors (data).
    w : tensor (N,)
        Row weights (data).
    lei, cens : tensor (K, J)
        The cells' log event increments and censoring terms (as for
        :func:`~pm_private.survival.regression.moments.exit_probabilities`).
    discrete : bool, default False
        The grouped (discrete-time) model.

    Returns
    -------
    T : tensor (K, 2J + 1)
    U : tensor (K, 2J + 1, r)

    Raises
    ------
    ValueError
        If an argument has the wrong number of dimensions.
    """
    return WeightedExitSums(discrete)(a, z, w, lei, cens)

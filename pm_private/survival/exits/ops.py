"""The log-likelihood of an exit table as one PyTensor Op with its gradient.

The exit probabilities of each cell, the table's probabilities and the normal (noisy release) or
multinomial (exact table) log-likelihood of :mod:`pm_private.survival.exit_kernels` are computed
by one compiled kernel and their gradient by its reverse: the graph of a model holds one node for
them instead of some hundred (cumulative sums, concatenations, clips and their derivatives), each
of which Numba would compile on a model's first fit.  ``perform`` (C and Python modes) calls the
kernel directly, the registered Numba implementation calls it from graphs compiled by PyTensor's
default backend, and the JAX implementation (numpyro, blackjax, nutpie's JAX backend) is the same
computation in JAX, differentiated by JAX.
"""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt
from pytensor.gradient import DisconnectedType, grad_not_implemented
from pytensor.graph.basic import Apply
from pytensor.graph.op import Op
from pytensor.link.numba.dispatch.basic import numba_njit

from ..._engine.jax_dispatch import register_jax_funcify
from ..._engine.numba_cache import register_numba_funcify, runtime_value
from ..exit_kernels import exit_table_logp_grad, exit_table_probabilities

__all__ = ["ExitTableLogp", "ExitTableProbabilities", "exit_table_logp", "table_probabilities"]

_NAMES = ("lei", "cens", "share", "value", "n", "noise_var")
_NDIM = (2, 2, 1, 1, 0, 1)

#: The parameters that have a gradient (the others are data): ℓ, k, w and n (latent when private).
_PARAMETERS = (0, 1, 2, 4)


class ExitTableLogp(Op):
    """(ℓ, k, w, r, n, v) ↦ (log-likelihood of the table r, its gradient in ℓ, k, w and n): the
    module notes of :mod:`pm_private.survival.exit_kernels`.  The gradient outputs serve only the
    pullback; second derivatives are not implemented.

    Parameters
    ----------
    discrete : bool
        Discrete time (complementary log-log hazard) instead of continuous time.
    normal : bool
        The normal form convolved with the release's noise instead of the multinomial.
    """

    __props__ = ("discrete", "normal")

    def __init__(self, discrete: bool, normal: bool):
        self.discrete, self.normal = bool(discrete), bool(normal)

    def make_node(self, *args):
        inputs = [pt.as_tensor(a).astype("float64") for a in args]
        for name, var, ndim in zip(_NAMES, inputs, _NDIM, strict=True):
            if var.ndim != ndim:
                raise ValueError(f"{name} must have {ndim} dimensions, got {var.ndim}")
        return Apply(self, inputs, [pt.dscalar(), *(inputs[i].type() for i in _PARAMETERS)])

    def perform(self, node, inputs, output_storage):
        lei, cens, share, value, n, noise = inputs
        arrays = [np.ascontiguousarray(a, dtype=np.float64) for a in (lei, cens, share, value)]
        noise = np.ascontiguousarray(noise, dtype=np.float64)
        results = exit_table_logp_grad(*arrays, float(n), noise, self.discrete, self.normal)
        for storage, result in zip(output_storage, results, strict=True):
            storage[0] = np.asarray(result)

    def infer_shape(self, node, shapes):
        return [(), *(shapes[i] for i in _PARAMETERS)]

    def pullback(self, inputs, outputs, cotangents):
        if any(not isinstance(c.type, DisconnectedType) for c in cotangents[1:]):
            return [grad_not_implemented(self, i, v, "second derivatives") for i, v in enumerate(inputs)]
        g = cotangents[0]
        return [
            g * outputs[1 + _PARAMETERS.index(i)] if i in _PARAMETERS else grad_not_implemented(self, i, v, "data")
            for i, v in enumerate(inputs)
        ]


@register_numba_funcify(ExitTableLogp)
def _numba_funcify_exit_table_logp(op, node=None, **kwargs):
    """Numba implementation for PyTensor's default backend (no object-mode fallback)."""
    discrete, normal = op.discrete, op.normal

    @numba_njit
    def exit_table_logp_op(lei, cens, share, value, n, noise):
        logp, lei_bar, cens_bar, share_bar, n_bar = exit_table_logp_grad(
            lei, cens, share, value, n.item(), noise, runtime_value(discrete), runtime_value(normal)
        )
        return np.asarray(logp), lei_bar, cens_bar, share_bar, np.asarray(n_bar)

    return exit_table_logp_op


def _jax_probabilities(lei, cens, share, discrete: bool):
    """The table's probabilities in JAX, unclipped (the kernel's formulas, vectorised over the
    intervals)."""
    import jax.numpy as jnp

    event = jnp.exp(lei)
    if discrete:
        hazard = -jnp.expm1(-event)
        log_stay = -event + jnp.log1p(-cens)
        at_risk = jnp.exp(jnp.cumsum(log_stay, axis=-1) - log_stay)
        events, censored = at_risk * hazard, at_risk * (1.0 - hazard) * cens
        survivors = jnp.exp(jnp.sum(log_stay, axis=-1))
    else:
        rate = event + cens
        leave = -jnp.expm1(-rate) * jnp.exp(-(jnp.cumsum(rate, axis=-1) - rate)) / rate
        events, censored, survivors = leave * event, leave * cens, jnp.exp(-jnp.sum(rate, axis=-1))
    cells = jnp.concatenate([events, censored, survivors[:, None]], axis=-1) * share[:, None]
    return cells.ravel()


def _jax_table_logp(lei, cens, share, value, n, noise, discrete: bool, normal: bool):
    """The kernel's log-likelihood in JAX."""
    import jax.numpy as jnp

    p = jnp.clip(_jax_probabilities(lei, cens, share, discrete), 1e-300, 1.0)
    if not normal:
        return jnp.sum(jnp.maximum(value, 0.0) * jnp.log(p))
    diag = n * p + noise
    resid = value - n * p
    s = jnp.sum(p * noise / diag)
    q = jnp.sum(p * resid / diag)
    m = value.shape[-1]
    return -0.5 * (
        m * np.log(2.0 * np.pi) + jnp.sum(jnp.log(diag)) + jnp.log(s) + jnp.sum(resid**2 / diag) + n * q**2 / s
    )


@register_jax_funcify(ExitTableLogp)
def _jax_funcify_exit_table_logp(op, node=None, **kwargs):
    """JAX implementation: the log-likelihood and JAX's gradient of it."""
    import jax

    discrete, normal = op.discrete, op.normal

    def exit_table_logp_op(lei, cens, share, value, n, noise):
        def logp(lei_, cens_, share_, n_):
            return _jax_table_logp(lei_, cens_, share_, value, n_, noise, discrete, normal)

        value_, grads = jax.value_and_grad(logp, argnums=(0, 1, 2, 3))(lei, cens, share, n)
        return (value_, *(jax.lax.stop_gradient(g) for g in grads))

    return exit_table_logp_op


def exit_table_logp(lei, cens, share, value, n, noise_var, *, discrete: bool, normal: bool):
    """The log-likelihood of an exit table, as one Op with its gradient (:class:`ExitTableLogp`).

    Parameters
    ----------
    lei : tensor (K, J)
        Log event increments ℓ of each cell: log of the event's interval cumulative hazard
        (continuous time) or log(−log(1 − h)) of its interval hazard h (discrete time).
    cens : tensor (K, J)
        The censoring's interval cumulative hazard (continuous time) or probability (discrete time).
    share : tensor (K,)
        The cells' shares of the people.
    value : tensor (K(2J + 1),)
        The table: per cell, the events of each interval, the censorings of each interval, the
        people followed event-free to the horizon.
    n : scalar tensor
        The number of people.
    noise_var : tensor (K(2J + 1),)
        The noise variances of the entries (the normal form's).
    discrete : bool
        Discrete time instead of continuous time.
    normal : bool
        The normal form (a noisy release) instead of the multinomial (an exact table).

    Returns
    -------
    scalar tensor
        The log-likelihood; −∞ where it is not defined.
    """
    return ExitTableLogp(discrete, normal)(lei, cens, share, value, n, noise_var)[0]


class ExitTableProbabilities(Op):
    """(ℓ, k, w) ↦ the table's probabilities p = (w_c·πᶜ), K(2J + 1) of them, unclipped
    (:func:`pm_private.survival.exit_kernels.exit_table_probabilities`): the law of replicated
    tables, for predictive draws compiled in any backend.  No gradient (draws need none).

    Parameters
    ----------
    discrete : bool
        Discrete time (complementary log-log hazard) instead of continuous time.
    """

    __props__ = ("discrete",)

    def __init__(self, discrete: bool):
        self.discrete = bool(discrete)

    def make_node(self, lei, cens, share):
        inputs = [pt.as_tensor(a).astype("float64") for a in (lei, cens, share)]
        for name, var, ndim in zip(_NAMES[:3], inputs, _NDIM[:3], strict=True):
            if var.ndim != ndim:
                raise ValueError(f"{name} must have {ndim} dimensions, got {var.ndim}")
        return Apply(self, inputs, [pt.dvector()])

    def perform(self, node, inputs, output_storage):
        arrays = [np.ascontiguousarray(a, dtype=np.float64) for a in inputs]
        output_storage[0][0] = exit_table_probabilities(*arrays, self.discrete)

    def infer_shape(self, node, shapes):
        K, J = shapes[0]
        return [(K * (2 * J + 1),)]

    def pullback(self, inputs, outputs, cotangents):
        return [grad_not_implemented(self, i, v, "the probabilities serve draws only") for i, v in enumerate(inputs)]


@register_numba_funcify(ExitTableProbabilities)
def _numba_funcify_exit_table_probabilities(op, node=None, **kwargs):
    """Numba implementation for PyTensor's default backend (no object-mode fallback)."""
    discrete = op.discrete

    @numba_njit
    def exit_table_probabilities_op(lei, cens, share):
        return exit_table_probabilities(
            np.ascontiguousarray(lei), np.ascontiguousarray(cens), np.ascontiguousarray(share), runtime_value(discrete)
        )

    return exit_table_probabilities_op


@register_jax_funcify(ExitTableProbabilities)
def _jax_funcify_exit_table_probabilities(op, node=None, **kwargs):
    """JAX implementation."""
    discrete = op.discrete

    def exit_table_probabilities_op(lei, cens, share):
        return _jax_probabilities(lei, cens, share, discrete)

    return exit_table_probabilities_op


def table_probabilities(lei, cens, share, *, discrete: bool):
    """The table's probabilities as one Op (:class:`ExitTableProbabilities`).

    Parameters
    ----------
    lei, cens : tensor (K, J)
        Log event increments ℓ and censoring terms k of each cell (as :func:`exit_table_logp`).
    share : tensor (K,)
        The cells' shares of the people.
    discrete : bool
        Discrete time instead of continuous time.

    Returns
    -------
    tensor (K(2J + 1),)
        Per cell: events of each interval, censorings of each interval, survivors, times the
        cell's share.
    """
    return ExitTableProbabilities(discrete)(lei, cens, share)

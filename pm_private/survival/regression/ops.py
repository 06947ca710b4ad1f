"""PyTensor Ops of the survival regression: the log-density of a release with its gradient, and the
mean and covariance of a replicated release, each one compiled (Numba) kernel.

The symbolic graph of the moments and block likelihood
(:func:`~pm_private.survival.regression.moments.regression_stat_blocks`,
:func:`~pm_private.survival.regression.likelihood.exit_table_normal_logp`) and its reverse-mode
gradient hold some thousand nodes at d = 10 covariates and J = 20 intervals, which Numba compiled
into over a thousand functions.  These Ops compute the same values with the kernels of
:mod:`~pm_private.survival.regression.kernel_likelihood`, compiled once per machine and cached on
disk; the graph of a model holds one node for its log-density and gradient.  ``perform`` (C and
Python modes) calls the kernels directly; in graphs compiled by PyTensor's default backend (Numba),
the log-density is called through its C entry's address and the release law from object mode; the
JAX implementation (numpyro, blackjax, nutpie's JAX backend) is the symbolic graph converted by
PyTensor, differentiated there.
"""

from __future__ import annotations

import numba
import numpy as np
import pytensor
import pytensor.tensor as pt
from pytensor.gradient import DisconnectedType, grad_not_implemented
from pytensor.graph.basic import Apply
from pytensor.graph.op import Op
from pytensor.link.numba.dispatch.basic import numba_njit

from ..._engine.jax_dispatch import register_jax_funcify
from ..._engine.numba_cache import register_numba_funcify
from .kernel_likelihood import logp_grad_address, logp_grad_signature, regression_logp_grad, release_law
from .likelihood import exit_table_normal_logp
from .moments import StatBlocks, dense_moments, regression_stat_blocks

__all__ = ["regression_log_density", "regression_release_law"]

_NAMES = ("value", "n", "share", "noise_var", "beta", "mu", "chol", "lei", "cens")
_NDIM = (2, 0, 1, 2, 1, 2, 2, 2, 2)
#: The inputs whose gradient :class:`RegressionLogp` outputs, in its outputs' order: share, β, μ, L,
#: log λΔ, censoring, value.
_GRADIENT_INPUTS = (2, 4, 5, 6, 7, 8, 0)


def _inputs(args, names=_NAMES, ndims=_NDIM):
    inputs = [pt.as_tensor(a).astype("float64") for a in args]
    for name, var, ndim in zip(names, inputs, ndims, strict=True):
        if var.ndim != ndim:
            raise ValueError(f"{name} must have {ndim} dimensions, got {var.ndim}")
    return inputs


def _init_shape(op, cells: int, intervals: int, covariates: int, discrete: bool) -> None:
    """The props of both Ops: cells, intervals and covariates (for the JAX implementation, which
    rebuilds the symbolic graph) and the time scale."""
    op.cells, op.intervals, op.covariates = int(cells), int(intervals), int(covariates)
    op.discrete = bool(discrete)


class RegressionLogp(Op):
    """(value, n, share, noise_var, β, μ, L, log λΔ, censoring) ↦ (logp, its gradient in share, β,
    μ, L, log λΔ, censoring and value): the log-density of the released statistics with Σx = LLᵀ,
    as :func:`~pm_private.survival.regression.likelihood.exit_table_normal_logp` of
    :func:`~pm_private.survival.regression.moments.regression_stat_blocks`.  The gradient outputs
    serve only its pullback, which derives the gradient in n from the one in the shares (the
    gradient in the value serves a shift of the mean passed through it, a covariate law's
    correction); second derivatives are not implemented."""

    __props__ = ("cells", "intervals", "covariates", "discrete")

    def __init__(self, cells: int, intervals: int, covariates: int, discrete: bool):
        _init_shape(self, cells, intervals, covariates, discrete)

    def make_node(self, *args):
        inputs = _inputs(args)
        return Apply(self, inputs, [pt.dscalar(), *(inputs[i].type() for i in _GRADIENT_INPUTS)])

    def perform(self, node, inputs, output_storage):
        results = regression_logp_grad(*inputs, self.discrete)
        for storage, result in zip(output_storage, results, strict=True):
            storage[0] = np.asarray(result)

    def infer_shape(self, node, shapes):
        return [(), *(shapes[i] for i in _GRADIENT_INPUTS)]

    def pullback(self, inputs, outputs, cotangents):
        if any(not isinstance(c.type, DisconnectedType) for c in cotangents[1:]):
            return [grad_not_implemented(self, i, v, "second derivatives") for i, v in enumerate(inputs)]
        g = cotangents[0]
        grads = dict(zip(_GRADIENT_INPUTS, outputs[1:], strict=True))
        n, share = inputs[1], inputs[2]
        # in n, from the gradient in the shares (a latent n, under add/remove neighbours): the value is
        # F(n·π, n), and F depends on n at fixed n·π only through −½ log γ, γ = mᵀM⁻¹Dw with m = μ/n
        # (n·(mᵀM⁻¹ρ)²/γ does not move), so ∂/∂n = (πᵀ∂/∂π + ½)/n
        n_grad = g * (pt.dot(share, outputs[1]) + 0.5) / n
        return [
            g * grads[i] if i in grads else n_grad if i == 1 else grad_not_implemented(self, i, v, "data")
            for i, v in enumerate(inputs)
        ]


class RegressionReleaseLaw(Op):
    """(n, share, noise_var, β, μ, L, log λΔ, censoring) ↦ (mean, covariance) of the K·k released
    statistics (cells stacked, each in the release's order): n·m and n·(B − mmᵀ) + diag(noise_var)
    (the replicated releases of the model's random method; not differentiable)."""

    __props__ = ("cells", "intervals", "covariates", "discrete")

    def __init__(self, cells: int, intervals: int, covariates: int, discrete: bool):
        _init_shape(self, cells, intervals, covariates, discrete)

    def make_node(self, *args):
        inputs = _inputs(args, _NAMES[1:], _NDIM[1:])
        return Apply(self, inputs, [pt.dvector(), pt.dmatrix()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0], output_storage[1][0] = _release_law_from_python(*inputs, self.discrete)

    def infer_shape(self, node, shapes):
        size = shapes[2][0] * shapes[2][1]
        return [(size,), (size, size)]


def _contiguous(arrays) -> list[np.ndarray]:
    """The inputs as C-contiguous float64 arrays: the one layout the kernels are compiled for."""
    return [np.ascontiguousarray(a, dtype=np.float64) for a in arrays]


def _numba_logp_grad_entry():
    """A Numba function calling the kernel's C entry through its address, cached for the process as
    PyTensor caches its LAPACK calls: the kernel is not linked into the graph's compiled function
    (nor into nutpie's), and no call takes Python's lock after the first."""
    from numba.core import types
    from pytensor.link.numba.cache import _call_cached_ptr

    @numba_njit
    def get_entry_address():
        with numba.objmode(address=types.intp):
            address = logp_grad_address()
        return address

    entry_type = types.FunctionType(logp_grad_signature())

    @numba_njit
    def entry():
        return _call_cached_ptr(
            get_ptr_func=get_entry_address,
            func_type_ref=entry_type,
            unique_func_name_lit="pm_private.survival_regression_logp_grad",
        )

    return entry


@register_numba_funcify(RegressionLogp)
def _numba_funcify_logp(op, node=None, **kwargs):
    """Numba implementation for PyTensor's default backend: a call of the kernel's C entry."""
    discrete = np.int64(op.discrete)
    entry = _numba_logp_grad_entry()

    @numba_njit
    def regression_logp_op(value, n, share, noise, beta, mu, chol, lei, cens):
        c = np.ascontiguousarray
        value, share, noise, beta = c(value), c(share), c(noise), c(beta)
        mu, chol, lei, cens = c(mu), c(chol), c(lei), c(cens)
        (K, k), (d, J) = value.shape, (beta.shape[0], lei.shape[1])
        logp, d_share, d_beta, d_mu = np.empty(1), np.empty(K), np.empty(d), np.empty((K, d))
        d_chol, d_lei, d_cens, d_value = np.empty((d, d)), np.empty((K, J)), np.empty((K, J)), np.empty((K, k))
        entry()(
            value.ctypes, share.ctypes, noise.ctypes, beta.ctypes, mu.ctypes, chol.ctypes, lei.ctypes, cens.ctypes,
            logp.ctypes, d_share.ctypes, d_beta.ctypes, d_mu.ctypes, d_chol.ctypes, d_lei.ctypes, d_cens.ctypes,
            d_value.ctypes, n.item(), K, k, d, J, discrete,
        )  # fmt: skip
        return np.asarray(logp[0]), d_share, d_beta, d_mu, d_chol, d_lei, d_cens, d_value

    return regression_logp_op


def _release_law_from_python(n, *arrays_and_discrete):
    """The release-law kernel called from Python: ``perform`` and the object-mode block of the Numba
    implementation."""
    *arrays, discrete = arrays_and_discrete
    return release_law(float(n), *_contiguous(arrays), discrete)


@register_numba_funcify(RegressionReleaseLaw)
def _numba_funcify_law(op, node=None, **kwargs):
    """Numba implementation for PyTensor's default backend: an object-mode call of the kernel."""
    discrete = op.discrete

    @numba_njit
    def regression_release_law_op(n, share, noise, beta, mu, chol, lei, cens):
        with numba.objmode(mean="float64[::1]", cov="float64[:, ::1]"):
            mean, cov = _release_law_from_python(n, share, noise, beta, mu, chol, lei, cens, discrete)
        return mean, cov

    return regression_release_law_op


def _symbolic(op, beta, mu, chol, lei, cens) -> list[StatBlocks]:
    """The moments' blocks of every cell, symbolically (the reference the kernels compute)."""
    cov = chol @ chol.T
    return [
        regression_stat_blocks(beta, mu[c], cov, lei[c], cens[c], op.covariates, op.discrete) for c in range(op.cells)
    ]


def reference_log_density(op, value, n, share, noise_var, beta, mu, chol, lei, cens):
    """The symbolic graph of :class:`RegressionLogp`'s outputs (its JAX implementation)."""
    parts = _symbolic(op, beta, mu, chol, lei, cens)
    blocks = StatBlocks(*(pt.stack(p) for p in zip(*parts, strict=True)))
    logp = exit_table_normal_logp(value, n, share, noise_var, blocks, op.intervals, op.covariates)
    return [logp, *pytensor.grad(logp, [share, beta, mu, chol, lei, cens, value])]


def reference_release_law(op, n, share, noise_var, beta, mu, chol, lei, cens):
    """The symbolic graph of :class:`RegressionReleaseLaw`'s outputs (its JAX implementation)."""
    means, seconds = [], []
    for c, blocks in enumerate(_symbolic(op, beta, mu, chol, lei, cens)):
        mean, cov = dense_moments(blocks, op.intervals, op.covariates)
        means.append(share[c] * mean)
        seconds.append(share[c] * (cov + pt.outer(mean, mean)))
    mean = pt.concatenate(means)
    cov = pt.linalg.block_diag(*seconds) - pt.outer(mean, mean)
    return [n * mean, n * cov + pt.diag(noise_var.ravel())]


def _jax_from_reference(op, node, reference):
    """A JAX function of the node's inputs: the reference graph, rewritten as the JAX mode does."""
    from pytensor.compile.mode import get_mode
    from pytensor.graph.fg import FunctionGraph
    from pytensor.link.jax.dispatch import jax_funcify

    inputs = [var.type() for var in node.inputs]
    fgraph = FunctionGraph(inputs, reference(op, *inputs), clone=False)
    get_mode("JAX").optimizer.rewrite(fgraph)
    return jax_funcify(fgraph)


@register_jax_funcify(RegressionLogp)
def _jax_funcify_logp(op, node=None, **kwargs):
    """JAX implementation: the symbolic log-density and its reverse-mode gradient."""
    return _jax_from_reference(op, node, reference_log_density)


@register_jax_funcify(RegressionReleaseLaw)
def _jax_funcify_law(op, node=None, **kwargs):
    """JAX implementation: the symbolic mean and covariance."""
    return _jax_from_reference(op, node, reference_release_law)


def regression_log_density(value, n, share, noise_var, beta, mu, chol, lei, cens, *, discrete: bool = False):
    """log N(value | n·m, n·(B − mmᵀ) + diag(noise_var)) of a release over K cells, as one Op with its
    gradient (module notes).

    Parameters
    ----------
    value, noise_var : tensor (K, k)
        The released statistics of each cell in the release's order, and their noise variances.
    n : scalar tensor
        The number of people.
    share : tensor (K,)
        The cells' shares of the people.
    beta : tensor (d,)
        Log hazard ratios.
    mu : tensor (K, d)
        The cells' covariate means.
    chol : tensor (d, d)
        A factor L of the covariate covariance Σx = LLᵀ.
    lei, cens : tensor (K, J)
        log(λⱼΔⱼ) and the censoring terms of each cell (as for
        :func:`~pm_private.survival.regression.moments.exit_probabilities`).
    discrete : bool, default False
        The grouped (discrete-time) model.

    Returns
    -------
    scalar tensor
        The log-density; −∞ where the covariance is not positive definite.

    Raises
    ------
    ValueError
        If an argument has the wrong number of dimensions, or K, J or d is not known from the
        static shapes of ``mu`` and ``lei``.
    """
    inputs = _inputs((value, n, share, noise_var, beta, mu, chol, lei, cens))
    return RegressionLogp(*_shape(inputs[5], inputs[7]), discrete)(*inputs)[0]


def regression_release_law(n, share, noise_var, beta, mu, chol, lei, cens, *, discrete: bool = False):
    """Mean and covariance of the K·k released statistics (cells stacked), as one Op.

    Parameters
    ----------
    n, share, noise_var, beta, mu, chol, lei, cens, discrete
        As for :func:`regression_log_density`.

    Returns
    -------
    mean : tensor (K·k,)
    cov : tensor (K·k, K·k)

    Raises
    ------
    ValueError
        As for :func:`regression_log_density`.
    """
    inputs = _inputs((n, share, noise_var, beta, mu, chol, lei, cens), _NAMES[1:], _NDIM[1:])
    return RegressionReleaseLaw(*_shape(inputs[4], inputs[6]), discrete)(*inputs)


def _shape(mu, lei) -> tuple[int, int, int]:
    """(K, J, d) from the static shapes of μ (K, d) and the log event increments (K, J)."""
    (cells, covariates), (_, intervals) = mu.type.shape, lei.type.shape
    if None in (cells, covariates, intervals):
        raise ValueError("mu and lei need static shapes (K, d) and (K, J)")
    return cells, intervals, covariates

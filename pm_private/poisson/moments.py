"""Moments of the clipped-count Poisson-regression statistics under a Gaussian covariate model:
Poisson–lognormal probabilities by adaptive Gauss–Hermite quadrature; the Stein-lemma forms are
in ``pm_private.released.moments``."""

from __future__ import annotations

import functools
import math

import numba
import numpy as np
import pytensor.tensor as pt
from pytensor.gradient import DisconnectedType, grad_not_implemented
from pytensor.graph.basic import Apply
from pytensor.graph.op import Op
from pytensor.link.numba.dispatch.basic import numba_njit

from .._engine.docstrings import parameters_from
from .._engine.jax_dispatch import register_jax_funcify
from .._engine.numba_cache import register_numba_funcify, runtime_value
from ..released.moments import binary_response_moments, linear_predictor_law, linear_predictor_moments

__all__ = [
    "POISSON_QUADRATURE_NODES",
    "ClippedPoissonMean",
    "clipped_count_mean",
    "PoissonLognormal",
    "clipped_count_coefficients",
    "poisson_lognormal",
    "poisson_lognormal_values",
    "poisson_stat_moments",
]


#: Gauss–Hermite nodes of each Poisson–lognormal probability (centred at the integrand's mode).
POISSON_QUADRATURE_NODES = 40


#: Log-rates above this are evaluated at it (e^60 ≫ any count bound: every probability is 0 there).
_MAX_LOG_RATE = 60.0


_NODES, _WEIGHTS = np.polynomial.hermite_e.hermegauss(POISSON_QUADRATURE_NODES)


_WEIGHTS = _WEIGHTS / _WEIGHTS.sum()
# read-only, as the Numba implementation's closed-over constants are typed: one compiled kernel
# for both backends
_NODES.setflags(write=False)
_WEIGHTS.setflags(write=False)


def clipped_count_coefficients(y_bound: int) -> np.ndarray:
    """Coefficients e with gₖ⁽ʳ⁾(a) = δᵣ₀·Bᵏ − Σⱼ e[k−1, r, j]·pⱼ(a) for the moments
    gₖ(a) = E[min(y, B)ᵏ], y ~ Poisson(eᵃ), k = 1, 2, r = 0, …, 3, j = 0, …, B + 2.

    pⱼ(a) = e^{ja − eᵃ}/j! is the Poisson probability of j.  Since min(y, B)ᵏ = Bᵏ − (Bᵏ − jᵏ) for
    y = j < B, gₖ = Bᵏ − Σ_{j<B} (Bᵏ − jᵏ)pⱼ, and pⱼ′ = j·pⱼ − (j + 1)·pⱼ₊₁ turns a derivative of
    Σⱼ eⱼpⱼ into Σⱼ j(eⱼ − eⱼ₋₁)pⱼ: constants that depend on B only.

    Parameters
    ----------
    y_bound : int
        The count bound B ≥ 1.

    Returns
    -------
    numpy.ndarray, shape (2, 4, B + 3)
        The coefficients.
    """
    j = np.arange(y_bound + 3, dtype=np.float64)
    out = np.zeros((2, 4, j.size))
    for k in (1, 2):
        e = np.where(j < y_bound, float(y_bound) ** k - j**k, 0.0)
        for r in range(4):
            out[k - 1, r] = e
            e = j * (e - np.concatenate([[0.0], e[:-1]]))
    return out


def poisson_lognormal_values(m: float, s: float, size: int) -> np.ndarray:
    """The Poisson–lognormal probabilities πⱼ = E[pⱼ(m + s·u)], u ~ N(0, 1), j < ``size`` (numpy).

    Each integral is computed by Gauss–Hermite quadrature centred at the mode u* of its integrand
    and scaled by its curvature, τ = (1 + s²e^{m+su*})^{−1/2} (adaptive quadrature, Liu & Pierce
    1994).  The mode solves u + s·e^{m+su} = j·s; Newton's method starts right of the root (the
    function is convex and increasing, so the iterates decrease to it).  No step divides by s, so
    s = 0 gives pⱼ(m).  Error below 10⁻⁹ for s ≤ 1.5 and 10⁻⁵ for s ≤ 3 (measured against adaptive
    quadrature).

    Parameters
    ----------
    m : float
        Mean of the log-rate.
    s : float
        Standard deviation of the log-rate, ≥ 0.
    size : int
        The number of probabilities.

    Returns
    -------
    numpy.ndarray
        π₀, …, π_{size−1}.
    """
    return _poisson_lognormal_kernel(float(m), float(s), int(size), _NODES, _WEIGHTS)


@numba.njit(cache=True)
def _poisson_lognormal_kernel(m, s, size, nodes, weights):
    out = np.empty(size)
    for j in range(size):
        # u + s·e^{m+su} − js ≥ 0 at u = js, and at u = max(log j − m, 0)/s (there e^{m+su} ≥ j)
        u = j * s
        if j == 0:
            u = 0.0
        elif s > 0.0:
            u = min(u, max(math.log(j) - m, 0.0) / s)
        for _ in range(200):
            e = math.exp(min(m + s * u, _MAX_LOG_RATE))
            step = (u + s * e - j * s) / (1.0 + s * s * e)
            u -= step
            if abs(step) <= 1e-13 * (1.0 + abs(u)):
                break
        tau = 1.0 / math.sqrt(1.0 + s * s * math.exp(min(m + s * u, _MAX_LOG_RATE)))
        log_factorial = math.lgamma(j + 1.0)
        total = 0.0
        for q in range(nodes.size):
            node = u + tau * nodes[q]
            a = m + s * node
            log_p = j * a - math.exp(min(a, _MAX_LOG_RATE)) - log_factorial
            total += weights[q] * math.exp(log_p - 0.5 * node * node + 0.5 * nodes[q] * nodes[q])
        out[j] = tau * total
    return out


@numba.njit(cache=True)
def _poisson_lognormal_and_derivatives(m, s, size, nodes, weights):
    """(π, ∂π/∂m, ∂π/∂s) for j < size from one quadrature of size + 2 probabilities."""
    p = _poisson_lognormal_kernel(m, s, size + 2, nodes, weights)
    d1 = np.empty(size + 1)  # (Dπ)ⱼ = j·πⱼ − (j + 1)·πⱼ₊₁
    for j in range(size + 1):
        d1[j] = j * p[j] - (j + 1.0) * p[j + 1]
    d_s = np.empty(size)  # s·(D²π)ⱼ
    for j in range(size):
        d_s[j] = s * (j * d1[j] - (j + 1.0) * d1[j + 1])
    return p[:size].copy(), d1[:size].copy(), d_s


class PoissonLognormal(Op):
    """(m, s) ↦ (π, ∂π/∂m, ∂π/∂s) for the probabilities πⱼ, j < size, of
    ``poisson_lognormal_values``; the derivatives are used only by the gradient of π.

    The derivatives are sums of the probabilities themselves: with pⱼ′ = j·pⱼ − (j + 1)·pⱼ₊₁, i.e.
    p′ = Dp, ∂πⱼ/∂m = (Dπ)ⱼ and, by Stein's lemma, ∂πⱼ/∂s = E[pⱼ′(a)·u] = s·(D²π)ⱼ.  One
    quadrature of size + 2 probabilities gives all three, so a gradient evaluation integrates
    once.  Second derivatives are not implemented (nor are they for the normal log-density the
    GLMs evaluate, :class:`pm_private.released.likelihood.NormalLogp`).
    """

    __props__ = ("size",)

    def __init__(self, size: int):
        self.size = int(size)

    def make_node(self, m, s):
        m, s = pt.as_tensor(m).astype("float64"), pt.as_tensor(s).astype("float64")
        return Apply(self, [m, s], [pt.dvector(), pt.dvector(), pt.dvector()])

    def perform(self, node, inputs, outputs):
        m, s = (float(v) for v in inputs)
        for storage, value in zip(
            outputs, _poisson_lognormal_and_derivatives(m, s, self.size, _NODES, _WEIGHTS), strict=True
        ):
            storage[0] = value

    def infer_shape(self, node, shapes):
        return [(self.size,)] * 3

    def pullback(self, inputs, outputs, cotangents):
        if any(not isinstance(c.type, DisconnectedType) for c in cotangents[1:]):
            return [grad_not_implemented(self, i, v, "second derivatives") for i, v in enumerate(inputs)]
        g = cotangents[0]
        return [(g * outputs[1]).sum(), (g * outputs[2]).sum()]  # elementwise sums: no BLAS wrapper


@register_numba_funcify(PoissonLognormal)
def _numba_funcify_poisson_lognormal(op, node=None, **kwargs):
    """Numba implementation for PyTensor's default backend (no object-mode fallback)."""
    size = op.size
    nodes, weights = _NODES, _WEIGHTS

    @numba_njit
    def poisson_lognormal_op(m, s):
        return _poisson_lognormal_and_derivatives(m.item(), s.item(), runtime_value(size), nodes, weights)

    return poisson_lognormal_op


#: Newton steps of the JAX implementation's mode search, all taken (JAX traces a fixed loop); the
#: search converges to rounding in fewer from its start (at most 200 in the Numba kernel).
_JAX_NEWTON_STEPS = 60


@register_jax_funcify(PoissonLognormal)
def _jax_funcify_poisson_lognormal(op, node=None, **kwargs):
    """JAX implementation (numpyro, blackjax, nutpie's JAX backend): the quadrature of
    ``_poisson_lognormal_kernel`` vectorised over j, its first derivatives as JAX's derivative of π
    (a custom JVP), so that JAX's samplers differentiate it as PyTensor's gradient does."""
    import jax
    import jax.numpy as jnp

    size = op.size
    nodes, weights = jnp.asarray(_NODES), jnp.asarray(_WEIGHTS)

    def kernel(m, s, count):
        j = jnp.arange(count, dtype=jnp.float64)
        start = jnp.where(j == 0, 0.0, j * s)
        floor = jnp.where(s > 0.0, jnp.maximum(jnp.log(jnp.maximum(j, 1.0)) - m, 0.0) / jnp.where(s > 0, s, 1.0), start)
        u0 = jnp.where(j == 0, 0.0, jnp.minimum(start, floor))

        def newton(_, u):
            e = jnp.exp(jnp.minimum(m + s * u, _MAX_LOG_RATE))
            return u - (u + s * e - j * s) / (1.0 + s * s * e)

        u = jax.lax.fori_loop(0, _JAX_NEWTON_STEPS, newton, u0)
        tau = 1.0 / jnp.sqrt(1.0 + s * s * jnp.exp(jnp.minimum(m + s * u, _MAX_LOG_RATE)))
        node_ = u[:, None] + tau[:, None] * nodes[None, :]
        a = m + s * node_
        log_p = j[:, None] * a - jnp.exp(jnp.minimum(a, _MAX_LOG_RATE)) - jax.scipy.special.gammaln(j + 1.0)[:, None]
        terms = weights[None, :] * jnp.exp(log_p - 0.5 * node_**2 + 0.5 * nodes[None, :] ** 2)
        return tau * terms.sum(axis=1)

    def with_derivatives(m, s):
        p = kernel(m, s, size + 2)
        j = jnp.arange(size + 1, dtype=jnp.float64)
        d1 = j * p[: size + 1] - (j + 1.0) * p[1 : size + 2]
        k = jnp.arange(size, dtype=jnp.float64)
        d_s = s * (k * d1[:size] - (k + 1.0) * d1[1 : size + 1])
        return p[:size], d1[:size], d_s

    @jax.custom_jvp
    def probabilities(m, s):
        return with_derivatives(m, s)[0]

    @probabilities.defjvp
    def _probabilities_jvp(primals, tangents):
        p, d_m, d_s = with_derivatives(*primals)
        return p, d_m * tangents[0] + d_s * tangents[1]

    def poisson_lognormal_op(m, s):
        _, d_m, d_s = with_derivatives(m, s)
        return probabilities(m, s), jax.lax.stop_gradient(d_m), jax.lax.stop_gradient(d_s)

    return poisson_lognormal_op


def poisson_lognormal(m, s, size: int):
    """The Poisson–lognormal probabilities πⱼ = E[pⱼ(m + s·u)], u ~ N(0, 1), j < ``size``, as a
    tensor with first derivatives (:class:`PoissonLognormal`).

    Parameters
    ----------
    m : tensor ()
        Mean of the log-rate.
    s : tensor ()
        Standard deviation of the log-rate, ≥ 0.
    size : int
        The number of probabilities.

    Returns
    -------
    tensor (size,)
        π₀, …, π_{size−1}.
    """
    return PoissonLognormal(size)(m, s)[0]


@functools.cache
def _clipped_poisson_tables(y_bound: int) -> tuple[np.ndarray, np.ndarray]:
    """log j! and 1/(j + 1) for j < B: the constants of :func:`_clipped_poisson_mean_kernel`
    (read-only, computed once per B: ``perform`` asks for them at every evaluation)."""
    j = np.arange(y_bound, dtype=np.float64)
    tables = np.array([math.lgamma(v + 1.0) for v in j]), 1.0 / (j + 1.0)
    for table in tables:
        table.flags.writeable = False
    return tables


@numba.njit(cache=True)
def _clipped_poisson_mean_kernel(a, log_factorial, inverse):
    """g(a) = E[min(y, B)] and g′(a) = λ·P(y < B), y ~ Poisson(λ), λ = e^{min(a, 60)}, elementwise;
    B = len(log_factorial), the tables of :func:`_clipped_poisson_tables`.

    The probabilities p_j, j < B, are taken from the largest, at j* = min(⌊λ⌋, B − 1) (one
    exponential), by p_{j+1} = p_j·λ/(j + 1) upwards and p_{j−1} = p_j·j/λ downwards: both recursions
    decrease, so nothing overflows and only negligible terms underflow."""
    flat = np.ascontiguousarray(a).reshape(-1)
    value, slope = np.empty(flat.size), np.empty(flat.size)
    y_bound = log_factorial.size
    bound = float(y_bound)
    for i in range(flat.size):
        log_rate = min(flat[i], _MAX_LOG_RATE)
        rate = math.exp(log_rate)
        top = y_bound - 1 if rate >= y_bound - 1 else int(rate)
        p_top = math.exp(top * log_rate - rate - log_factorial[top])
        below, cdf = 0.0, 0.0  # Σ (B − j)·p_j and Σ p_j over j < B
        p = p_top
        for j in range(top, y_bound):
            below += (bound - j) * p
            cdf += p
            p *= rate * inverse[j]
        if top > 0:
            p = p_top
            per_rate = 1.0 / rate
            for j in range(top, 0, -1):
                p *= j * per_rate
                below += (bound - j + 1.0) * p
                cdf += p
        value[i] = bound - below
        slope[i] = rate * cdf if flat[i] < _MAX_LOG_RATE else 0.0
    return value.reshape(a.shape), slope.reshape(a.shape)


class ClippedPoissonMean(Op):
    """a ↦ (g(a), g′(a)), elementwise over a tensor of log-rates: the mean of a count clipped at B,

        g(a) = E[min(y, B)] = B − Σ_{j<B} (B − j)·p_j,   g′(a) = λ·Σ_{j<B} p_j,

    y ~ Poisson(λ), λ = e^a, p_j = e^{−λ}λ^j/j! (d/dλ E[min(y, B)] = P(y < B), since
    E[min(y, B)] = Σ_{k=1}^{B} P(y ≥ k)).  Log-rates above 60 are evaluated at 60 (g = B, g′ = 0).
    One loop over j < B per element, in place of B exponentials per element in a graph; the
    derivative is used only by the gradient of g (second derivatives are not implemented).
    """

    __props__ = ("y_bound",)

    def __init__(self, y_bound: int):
        self.y_bound = int(y_bound)

    def make_node(self, a):
        a = pt.as_tensor(a).astype("float64")
        return Apply(self, [a], [a.type(), a.type()])

    def perform(self, node, inputs, outputs):
        a = np.asarray(inputs[0], dtype=np.float64)
        value, slope = _clipped_poisson_mean_kernel(a, *_clipped_poisson_tables(self.y_bound))
        outputs[0][0], outputs[1][0] = value, slope

    def infer_shape(self, node, shapes):
        return [shapes[0], shapes[0]]

    def pullback(self, inputs, outputs, cotangents):
        if not isinstance(cotangents[1].type, DisconnectedType):
            return [grad_not_implemented(self, 0, inputs[0], "second derivatives")]
        return [cotangents[0] * outputs[1]]


@register_numba_funcify(ClippedPoissonMean)
def _numba_funcify_clipped_poisson_mean(op, node=None, **kwargs):
    """Numba implementation for PyTensor's default backend (no object-mode fallback)."""
    log_factorial, inverse = _clipped_poisson_tables(op.y_bound)

    @numba_njit
    def clipped_poisson_mean_op(a):
        return _clipped_poisson_mean_kernel(a, log_factorial, inverse)

    return clipped_poisson_mean_op


@register_jax_funcify(ClippedPoissonMean)
def _jax_funcify_clipped_poisson_mean(op, node=None, **kwargs):
    """JAX implementation: the B probabilities of each element in log space, with g′ as JAX's
    derivative of g (a custom JVP)."""
    import jax
    import jax.numpy as jnp

    j = jnp.arange(op.y_bound, dtype=jnp.float64)
    log_factorial = jax.scipy.special.gammaln(j + 1.0)
    bound = float(op.y_bound)

    def both(a):
        log_rate = jnp.minimum(a, _MAX_LOG_RATE)
        rate = jnp.exp(log_rate)
        p = jnp.exp(j * log_rate[..., None] - rate[..., None] - log_factorial)
        slope = jnp.where(a < _MAX_LOG_RATE, rate * p.sum(axis=-1), 0.0)
        return bound - ((bound - j) * p).sum(axis=-1), slope

    @jax.custom_jvp
    def value(a):
        return both(a)[0]

    @value.defjvp
    def _value_jvp(primals, tangents):
        g, slope = both(primals[0])
        return g, slope * tangents[0]

    def clipped_poisson_mean_op(a):
        return value(a), jax.lax.stop_gradient(both(a)[1])

    return clipped_poisson_mean_op


def clipped_count_mean(a, y_bound: int):
    """E[min(y, B) | a], y ~ Poisson(eᵃ), elementwise over a tensor of log-rates
    (:class:`ClippedPoissonMean`, with its first derivative).

    Parameters
    ----------
    a : tensor
        Log-rates.
    y_bound : int
        The count bound B ≥ 1.

    Returns
    -------
    tensor
        The clipped means, of a's shape.
    """
    return ClippedPoissonMean(y_bound)(a)[0]


@parameters_from(binary_response_moments, sections=("Returns",))
def poisson_stat_moments(beta, intercept, mu, cov, d: int, y_bound: int):
    """Mean and covariance of t(x, y) = (x, ỹ, upper(xxᵀ), ỹ·x), ỹ = min(y, B), for one record
    with x ~ N(μ, Σ) and y | x ~ Poisson(exp(xᵀβ + b)).

    The conditional moments gₖ(a) = E[ỹᵏ | a] and their derivatives are sums of Poisson
    probabilities with constant coefficients (``clipped_count_coefficients``), so their
    expectations over a ~ N(m, s²), m = βᵀμ + b, s² = βᵀΣβ, are the same sums of the
    Poisson–lognormal probabilities (``poisson_lognormal``); the moments of t follow by Stein's
    lemma (``linear_predictor_moments``).  Smooth in all arguments; the cost is O(B) for the
    probabilities and does not depend on n.

    Parameters
    ----------
    y_bound : int
        The count bound B.
    """
    mu, cov, v, m, s2 = linear_predictor_law(beta, intercept, mu, cov)
    s = pt.sqrt(s2 + 1e-12)  # + 10⁻¹²: a finite gradient at β = 0, s changes by ≤ 10⁻⁶
    # the seven link coefficients (B − E[c₀₀·p], −E[c₀₁·p], −E[c₀₂·p], −E[c₀₃·p], B² − E[c₁₀·p],
    # −E[c₁₁·p], −E[c₁₂·p]) as one vector: constant rows times the probabilities, summed
    # elementwise (one fused loop and its gradient, where indexing each entry was fourteen nodes)
    rows = -clipped_count_coefficients(y_bound)[[0, 0, 0, 0, 1, 1, 1], [0, 1, 2, 3, 0, 1, 2]]
    offset = np.array([y_bound, 0.0, 0.0, 0.0, y_bound**2, 0.0, 0.0])
    coef = offset + (rows * poisson_lognormal(m, s, y_bound + 3)).sum(axis=-1)
    return linear_predictor_moments(coef, None, mu, cov, v, d)

"""Moments of the logistic- and Poisson-regression statistics under a Gaussian covariate model.

Model of one record: x ~ N(μ, Σ), P(y = 1 | x) = σ(a), a = xᵀβ + b, y ∈ {−1, 1}, so that
E[y | x] = g(a) = 2σ(a) − 1.  The statistics of :func:`pm_private.glm.release_logistic_stats` are
sums over records of t(x, y) = (x, y, upper(xxᵀ), y·x); their mean and covariance per record
need E[g], E[g·x], E[g·xxᵀ] and E[g·x⊗x⊗x] (y² = 1 removes every other dependence on the link).

The logistic sigmoid is replaced by a mixture of probits (a normal scale mixture, Monahan &
Stefanski 1992), σ(a) ≈ Σₖ wₖ Φ(κₖ a), whose four components below were fitted once by
minimising the largest error on a grid: |Σₖ wₖ Φ(κₖ a) − σ(a)| < 5.3·10⁻⁶ for every a.  For one
probit, with m = βᵀμ + b, s² = βᵀΣβ and x = μ + (Σβ/s)·z + e, z ~ N(0, 1) independent of e
(the regression of x on the one-dimensional projection a = m + s·z), Stein's lemma gives
closed forms: with cₖ = κₖ/√(1 + κₖ²s²), tₖ = cₖm and φ, Φ the standard normal density and
distribution,

    A₀ = E[g] = Σₖ wₖ (2Φ(tₖ) − 1),              A₁ = E[g·z]/s = 2 Σₖ wₖ cₖ φ(tₖ),
    A₂ = E[g·(z² − 1)]/s² = −2 Σₖ wₖ cₖ³ m φ(tₖ), A₃ = E[g·(z³ − 3z)]/s³ = 2 Σₖ wₖ cₖ³ (tₖ² − 1) φ(tₖ),

and with v = Σβ, M₂ = Σ + μμᵀ:

    E[g·x]   = A₀μ + A₁v,
    E[g·xxᵀ] = A₀M₂ + A₁(μvᵀ + vμᵀ) + A₂vvᵀ,
    E[g·x⊗x⊗x] = A₀ E[x⊗x⊗x] + A₁(sym(v⊗μ⊗μ) + sym(v⊗Σ)) + A₂ sym(v⊗v⊗μ) + A₃ v⊗v⊗v.

Every Aⱼ is smooth in (β, b, μ, Σ), including at β = 0 (no division by s), so the likelihood
built on them is smooth for NUTS, and its cost does not depend on n.  The moments are the exact
moments of the model whose link is the probit mixture: the covariance is a true covariance
(positive semi-definite), and it differs from the logistic model's by at most a constant times
5.3·10⁻⁶ in the link.

Poisson regression with counts clipped to a bound B, y | x ~ Poisson(eᵃ), ỹ = min(y, B): the same
Stein formulas hold for any link, with Aᵣ = E[g⁽ʳ⁾(a)] for g(a) = E[ỹ | a], and the terms with
y² = 1 above become E[h], E[h′], E[h″] for h(a) = E[ỹ² | a] (``linear_predictor_moments``).
g, h and their derivatives are finite sums of Poisson probabilities pⱼ(a) with constant
coefficients (``clipped_count_coefficients``), so their expectations over a ~ N(m, s²) are the
same sums of Poisson–lognormal probabilities πⱼ = E[pⱼ(a)], computed by adaptive Gauss–Hermite
quadrature (``poisson_lognormal``), whose derivatives are again such sums: smooth in
(β, b, μ, Σ), cost O(B), independent of n.  Without clipping the moments would be closed form
(E[eᵃ] = e^{m + s²/2}); the clipping keeps the release's sensitivity finite.
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

from .._engine.numba_cache import register_numba_funcify

__all__ = [
    "PROBIT_MIXTURE_SCALES",
    "PROBIT_MIXTURE_WEIGHTS",
    "POISSON_QUADRATURE_NODES",
    "clipped_count_coefficients",
    "linear_predictor_moments",
    "PoissonLognormal",
    "poisson_lognormal",
    "poisson_lognormal_values",
    "poisson_stat_moments",
    "probit_mixture",
    "stat_moments",
]

#: Weights wₖ of the probit mixture Σₖ wₖ Φ(κₖ a) ≈ σ(a) (sum to 1).
PROBIT_MIXTURE_WEIGHTS = np.array([0.05983597, 0.36942638, 0.4610234, 0.10971424])
PROBIT_MIXTURE_WEIGHTS = PROBIT_MIXTURE_WEIGHTS / PROBIT_MIXTURE_WEIGHTS.sum()
#: Scales κₖ of the probit mixture.
PROBIT_MIXTURE_SCALES = np.array([0.32049053, 0.47339164, 0.69566238, 1.01927845])


def probit_mixture(a) -> np.ndarray:
    """The probit mixture Σₖ wₖ Φ(κₖ a) that stands for the logistic sigmoid σ(a) (numpy).

    Parameters
    ----------
    a : array_like
        Linear predictors.

    Returns
    -------
    numpy.ndarray
        The approximate probabilities, within 5.3·10⁻⁶ of σ(a).
    """
    from scipy.special import ndtr

    a = np.asarray(a, dtype=np.float64)
    return (PROBIT_MIXTURE_WEIGHTS * ndtr(PROBIT_MIXTURE_SCALES * a[..., None])).sum(axis=-1)


def _link_coefficients(m, s2):
    """A₀, A₁, A₂, A₃ of the module notes for the predictor mean m and variance s²."""
    w, kappa = PROBIT_MIXTURE_WEIGHTS, PROBIT_MIXTURE_SCALES
    c = kappa / pt.sqrt(1.0 + kappa**2 * s2[..., None])
    t = c * m[..., None]
    phi = pt.exp(-0.5 * t**2) / np.sqrt(2 * np.pi)
    big_phi = 0.5 * pt.erfc(-t / np.sqrt(2.0))
    a0 = (w * (2.0 * big_phi - 1.0)).sum(axis=-1)
    a1 = 2.0 * (w * c * phi).sum(axis=-1)
    a2 = -2.0 * (w * c**3 * phi).sum(axis=-1) * m
    a3 = 2.0 * (w * c**3 * (t**2 - 1.0) * phi).sum(axis=-1)
    return a0, a1, a2, a3


def _sym3(a, b, c):
    """a⊗b⊗c summed over the three placements of a: aᵢbⱼcₖ + bᵢaⱼcₖ + bᵢcⱼaₖ (b, c vectors)."""
    return (
        a[:, None, None] * b[None, :, None] * c[None, None, :]
        + b[:, None, None] * a[None, :, None] * c[None, None, :]
        + b[:, None, None] * c[None, :, None] * a[None, None, :]
    )


def _sym_vector_matrix(v, m):
    """vᵢMⱼₖ + vⱼMᵢₖ + vₖMᵢⱼ."""
    return v[:, None, None] * m[None, :, :] + v[None, :, None] * m[:, None, :] + v[None, None, :] * m[:, :, None]


def stat_moments(beta, intercept, mu, cov, d: int):
    """Mean and covariance of t(x, y) = (x, y, upper(xxᵀ), y·x) for one record (see the module notes).

    Parameters
    ----------
    beta : tensor (d,)
        Coefficients β.
    intercept : tensor ()
        Intercept b.
    mu : tensor (d,)
        Covariate mean μ.
    cov : tensor (d, d)
        Covariate covariance Σ.
    d : int
        The number of covariates.

    Returns
    -------
    mean : tensor (k,)
        E[t], k = 2d + 1 + d(d+1)/2, in the release order of :func:`pm_private.glm.stats.stat_pairs`.
    covariance : tensor (k, k)
        Cov[t].
    """
    beta, mu, cov = pt.as_tensor(beta), pt.as_tensor(mu), pt.as_tensor(cov)
    v = cov @ beta
    m = beta @ mu + pt.as_tensor(intercept)
    first = _link_coefficients(m, beta @ v)
    return linear_predictor_moments(first, (1.0, 0.0, 0.0), mu, cov, v, d)


def linear_predictor_moments(first, second, mu, cov, v, d: int):
    """Mean and covariance of t(x, y) = (x, y, upper(xxᵀ), y·x) when y depends on x only through
    the linear predictor a = xᵀβ + b, from the Stein coefficients of its conditional moments.

    With x ~ N(μ, Σ), a = m + s·z, v = Σβ and g(a) = E[y | a], h(a) = E[y² | a]: ``first`` is
    (A₀, A₁, A₂, A₃) = (E[g(a)], E[g′(a)], E[g″(a)], E[g‴(a)]) and ``second`` is
    (E[h(a)], E[h′(a)], E[h″(a)]) (Stein's lemma: E[g(a)·Heᵣ(z)] = sʳ E[g⁽ʳ⁾(a)]); the moments of
    the module notes follow, with E[y²·x] = E[h]μ + E[h′]v and
    E[y²·xxᵀ] = E[h]M₂ + E[h′](μvᵀ + vμᵀ) + E[h″]vvᵀ.  Labels ±1 have h = 1: ``second`` = (1, 0, 0).

    Parameters
    ----------
    first : tuple of 4 tensors ()
        E[g], E[g′], E[g″], E[g‴].
    second : tuple of 3 tensors ()
        E[h], E[h′], E[h″].
    mu : tensor (d,)
        Covariate mean μ.
    cov : tensor (d, d)
        Covariate covariance Σ.
    v : tensor (d,)
        Σβ.
    d : int
        The number of covariates.

    Returns
    -------
    mean : tensor (k,)
        E[t], k = 2d + 1 + d(d+1)/2, in the release order of :func:`pm_private.glm.stats.stat_pairs`.
    covariance : tensor (k, k)
        Cov[t].
    """
    a0, a1, a2, a3 = first
    h0, h1, h2 = second
    m2 = cov + pt.outer(mu, mu)
    exg = a0 * mu + a1 * v
    egxx = a0 * m2 + a1 * (pt.outer(mu, v) + pt.outer(v, mu)) + a2 * pt.outer(v, v)
    m3 = mu[:, None, None] * mu[None, :, None] * mu[None, None, :] + _sym_vector_matrix(mu, cov)
    egxxx = (
        a0 * m3
        + a1 * (_sym3(v, mu, mu) + _sym_vector_matrix(v, cov))
        + a2 * _sym3(mu, v, v)
        + a3 * v[:, None, None] * v[None, :, None] * v[None, None, :]
    )
    ehx = h0 * mu + h1 * v
    ehxx = h0 * m2 + h1 * (pt.outer(mu, v) + pt.outer(v, mu)) + h2 * pt.outer(v, v)
    # Upper-triangle entries by one-dimensional gathers from the flattened arrays (constant
    # indices): cheaper, with their gradients, than gathers with several index arrays.
    i, j = np.triu_indices(d)
    upper = i * d + j
    flat_cov, flat_m2 = cov.reshape((d * d,)), m2.reshape((d * d,))
    # Gaussian moments: Cov(xₐ, xᵢxⱼ) and Cov(xᵢxⱼ, xₖxₗ) (Isserlis, with a mean)
    a = np.arange(d)[:, None]
    c13 = flat_cov[a * d + i[None, :]] * mu[j][None, :] + flat_cov[a * d + j[None, :]] * mu[i][None, :]
    mi, mj = mu[i], mu[j]

    def pairs(p, q):
        return flat_cov[p[:, None] * d + q[None, :]]

    c33 = (
        pairs(i, i) * pairs(j, j)
        + pairs(i, j) * pairs(j, i)
        + mi[:, None] * mi[None, :] * pairs(j, j)
        + mi[:, None] * mj[None, :] * pairs(j, i)
        + mj[:, None] * mi[None, :] * pairs(i, j)
        + mj[:, None] * mj[None, :] * pairs(i, i)
    )
    m2_upper = flat_m2[upper]
    c12 = exg - a0 * mu
    c14 = egxx - pt.outer(mu, exg)
    c22 = h0 - a0**2
    c23 = egxx.reshape((d * d,))[upper] - a0 * m2_upper
    c24 = ehx - a0 * exg
    c34 = egxxx.reshape((d * d, d))[upper] - pt.outer(m2_upper, exg)
    c44 = ehxx - pt.outer(exg, exg)
    rows = [
        pt.concatenate([cov, c12[:, None], c13, c14], axis=1),
        pt.concatenate([c12[None, :], pt.shape_padleft(c22, 2), c23[None, :], c24[None, :]], axis=1),
        pt.concatenate([c13.T, c23[:, None], c33, c34], axis=1),
        pt.concatenate([c14.T, c24[:, None], c34.T, c44], axis=1),
    ]
    mean = pt.concatenate([mu, pt.shape_padleft(a0, 1), m2_upper, exg])
    return mean, pt.concatenate(rows, axis=0)


# ------------------------------------------------------------------------------ Poisson

#: Gauss–Hermite nodes of each Poisson–lognormal probability (centred at the integrand's mode).
POISSON_QUADRATURE_NODES = 40
#: Log-rates above this are evaluated at it (e^60 ≫ any count bound: every probability is 0 there).
_MAX_LOG_RATE = 60.0
_NODES, _WEIGHTS = np.polynomial.hermite_e.hermegauss(POISSON_QUADRATURE_NODES)
_WEIGHTS = _WEIGHTS / _WEIGHTS.sum()


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
    GLMs evaluate, :class:`pm_private.glm.likelihood.NormalLogp`).
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
        return [pt.dot(g, outputs[1]), pt.dot(g, outputs[2])]


@register_numba_funcify(PoissonLognormal)
def _numba_funcify_poisson_lognormal(op, node=None, **kwargs):
    """Numba implementation for PyTensor's default backend (no object-mode fallback)."""
    size = op.size
    nodes, weights = _NODES, _WEIGHTS

    @numba_njit
    def poisson_lognormal_op(m, s):
        return _poisson_lognormal_and_derivatives(m.item(), s.item(), size, nodes, weights)

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
    beta : tensor (d,)
        Coefficients β.
    intercept : tensor ()
        Intercept b.
    mu : tensor (d,)
        Covariate mean μ.
    cov : tensor (d, d)
        Covariate covariance Σ.
    d : int
        The number of covariates.
    y_bound : int
        The count bound B.

    Returns
    -------
    mean : tensor (k,)
        E[t], k = 2d + 1 + d(d+1)/2, in the release order of :func:`pm_private.glm.stats.stat_pairs`.
    covariance : tensor (k, k)
        Cov[t].
    """
    beta, mu, cov = pt.as_tensor(beta), pt.as_tensor(mu), pt.as_tensor(cov)
    v = cov @ beta
    m = beta @ mu + pt.as_tensor(intercept)
    s = pt.sqrt(beta @ v + 1e-12)  # + 10⁻¹²: a finite gradient at β = 0, s changes by ≤ 10⁻⁶
    coefficients = clipped_count_coefficients(y_bound)
    expectations = pt.dot(coefficients, poisson_lognormal(m, s, y_bound + 3))  # (2, 4)
    bound = float(y_bound)
    first = (bound - expectations[0, 0], -expectations[0, 1], -expectations[0, 2], -expectations[0, 3])
    second = (bound**2 - expectations[1, 0], -expectations[1, 1], -expectations[1, 2])
    return linear_predictor_moments(first, second, mu, cov, v, d)

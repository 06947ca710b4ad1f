"""Moments of the logistic- and Poisson-regression statistics under a Gaussian covariate model.

Model of one record: x ~ N(μ, Σ), P(y = 1 | x) = σ(a), a = xᵀβ + b, y ∈ {−1, 1}, so that
E[y | x] = g(a) = 2σ(a) − 1.  The statistics of :func:`pm_private.release_logistic_stats` are
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

import numpy as np
import pytensor.tensor as pt

from .._engine.docstrings import parameters_from
from .moment_ops import degree2_moments

__all__ = [
    "binary_response_moments",
    "linear_predictor_law",
    "linear_predictor_moments",
    "probit_mixture_coefficients",
    "square_covariance",
    "sym3",
    "sym_vector_matrix",
]


def sym3(a, b, c):
    """a⊗b⊗c summed over the three placements of a: aᵢbⱼcₖ + bᵢaⱼcₖ + bᵢcⱼaₖ (b, c vectors)."""
    return (
        a[:, None, None] * b[None, :, None] * c[None, None, :]
        + b[:, None, None] * a[None, :, None] * c[None, None, :]
        + b[:, None, None] * c[None, :, None] * a[None, None, :]
    )


def sym_vector_matrix(v, m):
    """vᵢMⱼₖ + vⱼMᵢₖ + vₖMᵢⱼ."""
    return v[:, None, None] * m[None, :, :] + v[None, :, None] * m[:, None, :] + v[None, None, :] * m[:, :, None]


def square_covariance(mu, cov, d: int):
    """Cov(xᵢxⱼ, xₖxₗ) over the upper-triangle pairs (i ≤ j, row-major) for x ~ N(μ, Σ) (Isserlis,
    with a mean): ΣᵢₖΣⱼₗ + ΣᵢₗΣⱼₖ + μᵢμₖΣⱼₗ + μᵢμₗΣⱼₖ + μⱼμₖΣᵢₗ + μⱼμₗΣᵢₖ.

    Parameters
    ----------
    mu : tensor (d,)
        The mean μ.
    cov : tensor (d, d)
        The covariance Σ.
    d : int
        The dimension.

    Returns
    -------
    tensor (P, P)
        P = d(d + 1)/2.
    """
    i, j = np.triu_indices(d)
    flat_cov = cov.reshape((d * d,))
    mi, mj = mu[i], mu[j]

    def pairs(p, q):
        return flat_cov[p[:, None] * d + q[None, :]]

    return (
        pairs(i, i) * pairs(j, j)
        + pairs(i, j) * pairs(j, i)
        + mi[:, None] * mi[None, :] * pairs(j, j)
        + mi[:, None] * mj[None, :] * pairs(j, i)
        + mj[:, None] * mi[None, :] * pairs(i, j)
        + mj[:, None] * mj[None, :] * pairs(i, i)
    )


def linear_predictor_moments(first, second, mu, cov, v, d: int):
    """Mean and covariance of t(x, y) = (x, y, upper(xxᵀ), y·x) when y depends on x only through
    the linear predictor a = xᵀβ + b, from the Stein coefficients of its conditional moments.

    With x ~ N(μ, Σ), a = m + s·z, v = Σβ and g(a) = E[y | a], h(a) = E[y² | a]: ``first`` is
    (A₀, A₁, A₂, A₃) = (E[g(a)], E[g′(a)], E[g″(a)], E[g‴(a)]) and ``second`` is
    (E[h(a)], E[h′(a)], E[h″(a)]) (Stein's lemma: E[g(a)·Heᵣ(z)] = sʳ E[g⁽ʳ⁾(a)]); the moments of
    the module notes follow, with E[y²·x] = E[h]μ + E[h′]v and
    E[y²·xxᵀ] = E[h]M₂ + E[h′](μvᵀ + vμᵀ) + E[h″]vvᵀ.  Labels ±1 have h = 1: ``second`` = (1, 0, 0).
    The entries and their gradient are computed by one compiled Op
    (:func:`pm_private.released.moment_ops.degree2_moments`).

    Parameters
    ----------
    first : tuple of 4 tensors (), or tensor (7,)
        E[g], E[g′], E[g″], E[g‴]; or all seven coefficients as one vector (then ``second`` is
        None), which keeps a family's gradient graph free of the gathers of seven scalars.
    second : tuple of 3 tensors (), or None
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
        E[t], k = 2d + 1 + d(d+1)/2, in the release order of :func:`pm_private.released.degree2.degree2_pairs`.
    covariance : tensor (k, k)
        Cov[t].
    """
    if second is None:
        coef = pt.as_tensor(first, dtype="float64")
    else:
        coef = pt.stack([pt.as_tensor(c, dtype="float64") for c in (*first, *second)])
    return degree2_moments(coef, mu, cov, v)


@parameters_from(linear_predictor_moments)
def linear_predictor_law(beta, intercept, mu, cov):
    """The linear predictor a = xᵀβ + b under x ~ N(μ, Σ), as the moments' formulas use it.

    Parameters
    ----------
    beta : tensor (d,)
        Coefficients β.
    intercept : tensor ()
        Intercept b.

    Returns
    -------
    tuple of tensors
        μ and Σ as tensors, v = Σβ, the mean m = βᵀμ + b and the variance s² = βᵀΣβ of a, each an
        elementwise sum (no BLAS wrapper to compile).
    """
    beta, mu, cov = pt.as_tensor(beta), pt.as_tensor(mu), pt.as_tensor(cov)
    v = (cov * beta).sum(axis=-1)
    return mu, cov, v, (beta * mu).sum() + pt.as_tensor(intercept), (beta * v).sum()


def probit_mixture_coefficients(m, s2, weights, scales):
    """A₀, A₁, A₂, A₃ of the module notes for labels ±1 with P(y = 1 | a) = Σₖ wₖ Φ(κₖ a).

    Parameters
    ----------
    m : tensor
        The linear predictor's mean βᵀμ + b.
    s2 : tensor
        Its variance βᵀΣβ.
    weights : array_like
        The mixture weights wₖ (summing to 1); one weight 1 with scale 1 is the probit link.
    scales : array_like
        The scales κₖ.

    Returns
    -------
    tuple of 4 tensors
        E[g], E[g′], E[g″], E[g‴] for g(a) = 2 Σₖ wₖ Φ(κₖ a) − 1 and a ~ N(m, s²).
    """
    w, kappa = np.asarray(weights, dtype=np.float64), np.asarray(scales, dtype=np.float64)
    c = kappa / pt.sqrt(1.0 + kappa**2 * s2[..., None])
    t = c * m[..., None]
    phi = pt.exp(-0.5 * t**2) / np.sqrt(2 * np.pi)
    big_phi = 0.5 * pt.erfc(-t / np.sqrt(2.0))
    a0 = (w * (2.0 * big_phi - 1.0)).sum(axis=-1)
    a1 = 2.0 * (w * c * phi).sum(axis=-1)
    a2 = -2.0 * (w * c**3 * phi).sum(axis=-1) * m
    a3 = 2.0 * (w * c**3 * (t**2 - 1.0) * phi).sum(axis=-1)
    return a0, a1, a2, a3


@parameters_from(linear_predictor_moments, linear_predictor_law, sections=("Returns",))
def binary_response_moments(beta, intercept, mu, cov, d: int, *, weights=(1.0,), scales=(1.0,)):
    """Mean and covariance of t(x, y) = (x, y, upper(xxᵀ), y·x) for one record with labels ±1,
    P(y = 1 | x) = Σₖ wₖ Φ(κₖ a), a = xᵀβ + b, x ~ N(μ, Σ) (the module notes).

    The probit link by default; the logistic family passes the probit mixture that stands for
    the logistic sigmoid (:func:`pm_private.logistic.moments.logistic_stat_moments`).

    Parameters
    ----------
    weights, scales : array_like
        The link's mixture weights wₖ and scales κₖ (``probit_mixture_coefficients``).

    Examples
    --------
    >>> from pm_private.released.moments import binary_response_moments
    >>> mean, cov = binary_response_moments([0.0], 0.0, [0.0], [[1.0]], 1)  # β = 0: y independent of x
    >>> mean.eval(mode="FAST_COMPILE").round(6).tolist()  # E[x], E[y], E[x²], E[y·x]
    [0.0, 0.0, 1.0, 0.0]
    """
    mu, cov, v, m, s2 = linear_predictor_law(beta, intercept, mu, cov)
    first = probit_mixture_coefficients(m, s2, weights, scales)
    return linear_predictor_moments(first, (1.0, 0.0, 0.0), mu, cov, v, d)

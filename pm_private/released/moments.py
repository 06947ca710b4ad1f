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

__all__ = ["linear_predictor_moments", "square_covariance", "sym3", "sym_vector_matrix"]


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
        E[t], k = 2d + 1 + d(d+1)/2, in the release order of :func:`pm_private.released.degree2.degree2_pairs`.
    covariance : tensor (k, k)
        Cov[t].
    """
    a0, a1, a2, a3 = first
    h0, h1, h2 = second
    m2 = cov + pt.outer(mu, mu)
    exg = a0 * mu + a1 * v
    egxx = a0 * m2 + a1 * (pt.outer(mu, v) + pt.outer(v, mu)) + a2 * pt.outer(v, v)
    m3 = mu[:, None, None] * mu[None, :, None] * mu[None, None, :] + sym_vector_matrix(mu, cov)
    egxxx = (
        a0 * m3
        + a1 * (sym3(v, mu, mu) + sym_vector_matrix(v, cov))
        + a2 * sym3(mu, v, v)
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
    c33 = square_covariance(mu, cov, d)
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

"""Closed-form moments of the logistic-regression statistics under a Gaussian covariate model.

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
"""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt

__all__ = ["PROBIT_MIXTURE_SCALES", "PROBIT_MIXTURE_WEIGHTS", "probit_mixture", "stat_moments"]

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
    intercept = pt.as_tensor(intercept)
    v = cov @ beta
    m = beta @ mu + intercept
    s2 = beta @ v
    a0, a1, a2, a3 = _link_coefficients(m, s2)
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
    i, j = np.triu_indices(d)
    # Gaussian moments: Cov(xₐ, xᵢxⱼ) and Cov(xᵢxⱼ, xₖxₗ) (Isserlis, with a mean)
    c13 = cov[:, i] * mu[j][None, :] + cov[:, j] * mu[i][None, :]
    mi, mj = mu[i], mu[j]
    c33 = (
        cov[i[:, None], i[None, :]] * cov[j[:, None], j[None, :]]
        + cov[i[:, None], j[None, :]] * cov[j[:, None], i[None, :]]
        + mi[:, None] * mi[None, :] * cov[j[:, None], j[None, :]]
        + mi[:, None] * mj[None, :] * cov[j[:, None], i[None, :]]
        + mj[:, None] * mi[None, :] * cov[i[:, None], j[None, :]]
        + mj[:, None] * mj[None, :] * cov[i[:, None], i[None, :]]
    )
    c12 = exg - a0 * mu
    c14 = egxx - pt.outer(mu, exg)
    c22 = 1.0 - a0**2
    c23 = egxx[i, j] - a0 * m2[i, j]
    c24 = mu - a0 * exg
    c34 = egxxx[i, j, :] - pt.outer(m2[i, j], exg)
    c44 = m2 - pt.outer(exg, exg)
    rows = [
        pt.concatenate([cov, c12[:, None], c13, c14], axis=1),
        pt.concatenate([c12[None, :], c22[None, None], c23[None, :], c24[None, :]], axis=1),
        pt.concatenate([c13.T, c23[:, None], c33, c34], axis=1),
        pt.concatenate([c14.T, c24[:, None], c34.T, c44], axis=1),
    ]
    mean = pt.concatenate([mu, a0[None], m2[i, j], exg])
    return mean, pt.concatenate(rows, axis=0)

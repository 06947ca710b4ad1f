"""Moments of the logistic-regression statistics under a Gaussian covariate model, with the
logistic sigmoid replaced by a mixture of probits (Monahan & Stefanski 1992); the Stein-lemma
forms are in ``pm_private.released.moments``."""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt

from ..released.moments import linear_predictor_moments

__all__ = [
    "PROBIT_MIXTURE_SCALES",
    "PROBIT_MIXTURE_WEIGHTS",
    "probit_mixture",
    "logistic_stat_moments",
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


def logistic_stat_moments(beta, intercept, mu, cov, d: int):
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
        E[t], k = 2d + 1 + d(d+1)/2, in the release order of :func:`pm_private.released.degree2.degree2_pairs`.
    covariance : tensor (k, k)
        Cov[t].
    """
    beta, mu, cov = pt.as_tensor(beta), pt.as_tensor(mu), pt.as_tensor(cov)
    v = (cov * beta).sum(axis=-1)  # Σβ, βᵀμ and βᵀv as elementwise sums: no BLAS wrapper to compile
    m = (beta * mu).sum() + pt.as_tensor(intercept)
    first = _link_coefficients(m, (beta * v).sum())
    return linear_predictor_moments(first, (1.0, 0.0, 0.0), mu, cov, v, d)

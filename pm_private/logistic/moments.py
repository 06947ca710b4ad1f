"""Moments of the logistic-regression statistics under a Gaussian covariate model, with the
logistic sigmoid replaced by a mixture of probits (Monahan & Stefanski 1992); the Stein-lemma
forms are in ``pm_private.released.moments``."""

from __future__ import annotations

import numpy as np

from .._engine.docstrings import parameters_from
from ..released.moments import binary_response_moments

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


@parameters_from(binary_response_moments, sections=("Returns",))
def logistic_stat_moments(beta, intercept, mu, cov, d: int):
    """Mean and covariance of t(x, y) = (x, y, upper(xxᵀ), y·x) for one record of the logistic model
    (:func:`pm_private.released.binary_response_moments` with the probit mixture of the
    module notes for the logistic sigmoid)."""
    return binary_response_moments(
        beta, intercept, mu, cov, d, weights=PROBIT_MIXTURE_WEIGHTS, scales=PROBIT_MIXTURE_SCALES
    )

"""Censored Weibull survival data with AFT covariates (the generator of the Weibull studies and tests)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...datasets.flchain import SurvivalDataset
from ...privacy.validation import check_count, check_positive

__all__ = ["simulate_weibull"]


def simulate_weibull(
    n: int,
    *,
    shape: float,
    scale: float,
    X=None,
    beta=None,
    censor=None,
    horizon: float | None = None,
    rng=None,
) -> SurvivalDataset:
    """Synthetic censored Weibull data with known parameters.

    Event times Tᵢ = λᵢ·(−ln Uᵢ)^{1/p} with λᵢ = scale·exp(xᵢᵀβ) (AFT; λᵢ = scale without X).
    Censoring: Cᵢ ~ Uniform(censor[0], censor[1]) if ``censor`` is given, and administrative
    censoring at ``horizon`` if given; tᵢ = min(Tᵢ, Cᵢ, horizon), dᵢ = [Tᵢ ≤ min(Cᵢ, horizon)].

    Parameters
    ----------
    n : int
        The number of records, ≥ 1.
    shape : float
        The Weibull shape p > 0.
    scale : float
        The baseline scale λ > 0.
    X : array_like or pandas.DataFrame, shape (n, d), optional
        Covariates of the accelerated-failure-time model.
    beta : array_like, shape (d,), optional
        Their coefficients (required with ``X``).
    censor : (float, float), optional
        The range of uniform random censoring times.
    horizon : float, optional
        The administrative censoring time.
    rng : None, int or numpy.random.Generator
        Seed or generator of the simulation.

    Returns
    -------
    SurvivalDataset
        The simulated data (horizon = ``horizon`` or +inf).

    Raises
    ------
    ValueError
        For invalid sizes or parameters, or covariates without matching coefficients.
    """
    n = check_count("n", n)
    shape, scale = check_positive("shape", shape), check_positive("scale", scale)
    rng = np.random.default_rng(rng)
    if X is None:
        X = pd.DataFrame(index=pd.RangeIndex(n))
        lam = np.full(n, scale)
    else:
        X = pd.DataFrame(X)
        if X.shape[0] != n or beta is None or np.shape(beta) != (X.shape[1],):
            raise ValueError(f"X must have {n} rows and beta one entry per column")
        lam = scale * np.exp(X.to_numpy(dtype=np.float64) @ np.asarray(beta, dtype=np.float64))
    T = lam * rng.exponential(size=n) ** (1.0 / shape)
    C = np.full(n, np.inf)
    if censor is not None:
        low, high = censor
        if not 0 <= low <= high:
            raise ValueError(f"censor must be (low, high) with 0 ≤ low ≤ high, got {censor!r}")
        C = rng.uniform(low, high, size=n)
    if horizon is not None:
        C = np.minimum(C, check_positive("horizon", horizon))
    return SurvivalDataset(
        X=X,
        time=np.minimum(T, C),
        event=(T <= C).astype(np.int8),
        horizon=float(np.inf if horizon is None else horizon),
    )

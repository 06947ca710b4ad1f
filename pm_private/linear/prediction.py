"""Posterior-predictive helpers for linear models: predictions with credible intervals, ranking
and Spearman evaluation (Honkela et al. 2018, Eq. 8: ŷ = (1/m) Σₖ xᵀβ⁽ᵏ⁾ over m posterior draws)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr
from scipy import stats

__all__ = ["beta_draws", "predict", "rank_by_prediction", "spearman"]


def beta_draws(posterior, var_name: str = "beta") -> np.ndarray:
    """Posterior draws of the coefficients as an (S, d) array.

    ``posterior`` may be a ``DataTree`` from ``pm.sample``/``approx.sample`` (its ``posterior``
    group is used), an ``xarray.Dataset``/``DataArray`` with ``chain`` and ``draw`` dims, or an
    array of draws (S, d).
    """
    if isinstance(posterior, xr.DataTree):
        posterior = posterior["posterior"].to_dataset()
    if isinstance(posterior, xr.Dataset):
        posterior = posterior[var_name]
    if isinstance(posterior, xr.DataArray):
        sample_dims = [dim for dim in ("chain", "draw") if dim in posterior.dims]
        posterior = posterior.stack(sample=sample_dims).transpose("sample", ...).values
    draws = np.asarray(posterior, dtype=np.float64)
    if draws.ndim != 2:
        raise ValueError(f"beta draws must be (draws, d), got shape {draws.shape}")
    return draws


def predict(posterior, X, *, var_name: str = "beta", interval: float = 0.9) -> pd.DataFrame:
    """Posterior-predictive mean of xᵀβ for each row of ``X`` with an equal-tailed interval.

    Returns a DataFrame (index = X's index if it has one) with columns ``mean``, ``lower``,
    ``upper``: the mean over draws of xᵀβ⁽ᵏ⁾ and its (1 ± interval)/2 quantiles.  The interval
    is for the regression function xᵀβ, not for a new noisy observation.
    """
    if not 0 < interval < 1:
        raise ValueError(f"interval must be in (0, 1), got {interval!r}")
    draws = beta_draws(posterior, var_name)
    index = X.index if isinstance(X, pd.DataFrame) else None
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] != draws.shape[1]:
        raise ValueError(f"X must be (n, {draws.shape[1]}), got shape {X.shape}")
    values = X @ draws.T
    tail = (1 - interval) / 2
    lower, upper = np.quantile(values, [tail, 1 - tail], axis=1)
    return pd.DataFrame({"mean": values.mean(axis=1), "lower": lower, "upper": upper}, index=index)


def spearman(y_true, y_pred) -> float:
    """Spearman rank correlation between observed and predicted responses (Honkela et al's (2018) metric)."""
    y_true, y_pred = np.asarray(y_true, float), np.asarray(y_pred, float)
    if y_true.shape != y_pred.shape or y_true.ndim != 1:
        raise ValueError(f"need two 1-D arrays of equal length, got {y_true.shape} and {y_pred.shape}")
    return float(stats.spearmanr(y_true, y_pred).statistic)


def rank_by_prediction(predictions, *, ascending: bool = True) -> pd.Series:
    """Rank (1 = first) of each item by predicted response.

    For drug responses measured as log IC50, a lower value means more sensitive, so the default
    ``ascending=True`` ranks the most sensitive cell line (or drug) first.  ``predictions`` is a
    Series or the DataFrame from :func:`predict` (its ``mean`` column is used).
    """
    if isinstance(predictions, pd.DataFrame):
        predictions = predictions["mean"]
    predictions = pd.Series(predictions)
    return predictions.rank(ascending=ascending, method="min").astype(int).sort_values()

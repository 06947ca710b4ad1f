"""Predictions of a fitted :func:`pm_private.poisson.poisson_model`."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._engine.docstrings import parameters_from
from .._engine.keywords import renamed_keywords
from ..privacy.validation import check_fraction
from ..released.glm import GLM_PREDICTOR_PARAMETERS, interval_table, linear_predictor_draws
from .release import POISSON

__all__ = ["predict_poisson"]


@parameters_from(GLM_PREDICTOR_PARAMETERS)
@renamed_keywords(posterior="idata")
def predict_poisson(idata, X, *, x_bound: float | None = None, interval: float = 0.95) -> pd.DataFrame:
    """Posterior predictive rates E[y | x] = exp(xᵀβ + b) of new rows under a fitted :func:`poisson_model`.

    Each row is projected onto the ball ‖x‖₂ ≤ Bx the release used (public; read from the
    sampled DataTree's ``constant_data``, or given), then λ⁽ˢ⁾ = exp(xᵀβ⁽ˢ⁾ + b⁽ˢ⁾) for every posterior
    draw s.  The rate is that of the unclipped count (the clipping only served the release).

    Parameters
    ----------
    interval : float, default 0.95
        Mass of the central credible interval of the rate.

    Returns
    -------
    pandas.DataFrame
        ``mean`` (the posterior predictive mean count), ``lower`` and ``upper`` (the central
        interval of λ), one row per new row.

    Raises
    ------
    ValueError
        If ``X`` is not numeric, not finite or has the wrong number of columns, ``x_bound`` is
        given but not finite and > 0, ``interval`` is not in (0, 1), or ``idata`` holds no
        ``beta``.
    """
    interval = check_fraction("interval", interval, closed=False)
    with np.errstate(over="ignore"):
        rate = POISSON.link.inverse(linear_predictor_draws(idata, X, x_bound, POISSON))
    if not np.isfinite(rate).all():
        raise ValueError("idata: its draws give rates that overflow for these rows (coefficients too large)")
    return interval_table(rate, interval)

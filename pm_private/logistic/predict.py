"""Predictions of a fitted :func:`pm_private.logistic.logistic_model`."""

from __future__ import annotations

import pandas as pd

from .._engine.docstrings import parameters_from
from .._engine.keywords import renamed_keywords
from ..privacy.validation import check_fraction
from ..released.glm import GLM_PREDICTOR_PARAMETERS, interval_table, linear_predictor_draws
from .release import LOGISTIC

__all__ = ["predict_logistic"]


@parameters_from(GLM_PREDICTOR_PARAMETERS)
@renamed_keywords(posterior="idata")
def predict_logistic(idata, X, *, x_bound: float | None = None, interval: float = 0.95) -> pd.DataFrame:
    """Posterior predictive probabilities P(y = 1 | x) of new rows under a fitted :func:`logistic_model`.

    Each row is projected onto the ball ‖x‖₂ ≤ Bx the release used (public; read from the
    sampled DataTree's ``constant_data``, or given), then p⁽ˢ⁾ = σ(xᵀβ⁽ˢ⁾ + b⁽ˢ⁾) for every
    posterior draw s.

    Parameters
    ----------
    interval : float, default 0.95
        Mass of the central credible interval of the probability.

    Returns
    -------
    pandas.DataFrame
        ``mean`` (the posterior predictive probability of y = 1), ``lower`` and ``upper`` (the
        central interval of p), one row per new row.

    Raises
    ------
    ValueError
        If ``X`` is not numeric, not finite or has the wrong number of columns, ``x_bound`` is
        given but not finite and > 0, ``interval`` is not in (0, 1), or ``idata`` holds no
        ``beta``.
    """
    interval = check_fraction("interval", interval, closed=False)
    p = LOGISTIC.link.inverse(linear_predictor_draws(idata, X, x_bound, LOGISTIC))
    return interval_table(p, interval)

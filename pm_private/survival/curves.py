"""The one table of posterior survival curves every survival family's predictor returns.

A predictor (``predict_survival`` by cell, ``predict_survival_regression``, ``predict_weibull``
and ``predict_discrete_time`` by row) computes S(t) for every posterior draw at the requested
times and hands the draws to :func:`curve_frame`, so the four read alike: one row per (cell or
row, time), the posterior mean and median of S(t) and its pointwise equal-tailed band.
Post-processing of a posterior: no records are read and no budget is spent.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..privacy.validation import check_fraction

__all__ = ["curve_frame"]


def curve_frame(by: str, labels, times, draws, interval: float) -> pd.DataFrame:
    """Posterior curves as a table indexed by (``by``, ``time``).

    Parameters
    ----------
    by : {"cell", "row"}
        What the curves are of: an exit table's cells or new covariate rows.
    labels : sequence
        One label per curve (cell names, or row numbers).
    times : array_like, shape (k,)
        The times the curves are read at.
    draws : array_like, shape (m, S, k)
        S(t) for each of the m curves, S posterior draws and k times.
    interval : float
        The probability of the pointwise equal-tailed band, in (0, 1).

    Returns
    -------
    pandas.DataFrame
        Indexed by (``by``, ``time``); columns ``mean``, ``median``, ``lower``, ``upper``;
        ``attrs["interval"]``.

    Examples
    --------
    >>> import numpy as np
    >>> draws = np.array([[[1.0, 0.5], [1.0, 0.7]]])  # one curve, two draws, two times
    >>> curve_frame("row", [0], [0.0, 1.0], draws, 0.5)["mean"].tolist()
    [1.0, 0.6]
    """
    interval = check_fraction("interval", interval, closed=False)
    draws = np.asarray(draws, dtype=np.float64)
    times = np.asarray(times, dtype=np.float64)
    lower, median, upper = np.quantile(draws, [(1 - interval) / 2, 0.5, (1 + interval) / 2], axis=1)
    index = pd.MultiIndex.from_product([list(labels), times], names=[by, "time"])
    columns = {"mean": draws.mean(axis=1), "median": median, "lower": lower, "upper": upper}
    frame = pd.DataFrame({key: value.ravel() for key, value in columns.items()}, index=index)
    frame.attrs.update(interval=interval)
    return frame

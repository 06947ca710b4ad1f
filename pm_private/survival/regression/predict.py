"""Survival curves of new covariate rows from a fitted
:func:`pm_private.survival.survival_regression_model`."""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr

from ..._engine.keywords import renamed_keywords
from ...privacy.validation import check_fraction
from ...released.glm import linear_predictor_draws, posterior_dataset
from ..curves import curve_frame
from ..exits.predict import check_times, cumulative_hazard
from .release import SURVIVAL_REGRESSION

__all__ = ["predict_survival_regression"]


@renamed_keywords(posterior="idata")
def predict_survival_regression(
    idata, X, *, times=None, cell=None, x_bound: float | None = None, interval: float = 0.95
) -> pd.DataFrame:
    """Posterior survival curves S(t | x) = exp(−H₀(t)·exp(xᵀβ)) of new rows at ``times`` (default:
    the interval ends).

    Each row goes through the release's public preprocessing and is projected onto the ball
    ‖x‖₂ ≤ Bx the release used (read from the sampled DataTree's ``constant_data``, or given), as
    the release treated the private rows; then for every posterior draw s,
    S⁽ˢ⁾(t | x) = exp(−H₀⁽ˢ⁾(t)·exp(xᵀβ⁽ˢ⁾)), H₀ the model's ``cumulative_hazard`` (at x = 0) —
    the inverse of the family's proportional-hazards link.  Between interval ends H₀ is linear in t
    for the piecewise-exponential hazard and a step for the discrete-time (cloglog) one, as
    :func:`pm_private.predict_survival` reads an exit table's fit.

    Parameters
    ----------
    idata : xarray.DataTree or xarray.Dataset
        The result of ``pm.sample`` on the model (or its ``posterior`` group; then give ``x_bound``
        if the rows should be projected, and rows already on the release's scale).
    X : array_like or pandas.DataFrame, shape (m, d)
        New covariate rows on the original scale (public).
    times : array_like, shape (k,), optional
        Times in [0, horizon] on the scale of the release's interval ends (default: the ends);
        they need the DataTree of ``pm.sample`` (its ``constant_data`` records the hazard).
    cell : str or sequence of str, optional
        The cell of every row (one label for all, or one per row); needed when the model has
        more than one cell.
    x_bound : float, optional
        The projection radius (default: the model's, when the DataTree carries it).
    interval : float, default 0.95
        Mass of the central credible band.

    Returns
    -------
    pandas.DataFrame
        Indexed by (``row``, ``time``), the row's position in ``X`` and the time; columns
        ``mean`` and ``median`` (of S(t | x) over the draws), ``lower`` and ``upper`` (the
        central band), as every survival family's predictor returns.

    Raises
    ------
    ValueError
        If ``idata`` is not a fit of :func:`survival_regression_model` or its
        ``cumulative_hazard`` draws are not finite, ≥ 0 and non-decreasing over the intervals,
        ``X`` is not numeric, finite and of the model's width, ``cell`` is missing or unknown, or ``interval`` is not
        in (0, 1).

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> from pm_private.survival import predict_survival_regression
    >>> idata = xr.Dataset(
    ...     {"beta": (("chain", "draw", "feature"), np.full((1, 4, 1), np.log(2.0))),
    ...      "cumulative_hazard": (("chain", "draw", "cell", "interval"), np.tile([0.1, 0.5], (1, 4, 1, 1)))},
    ...     coords={"feature": ["dose"], "cell": ["all"], "interval": [1.0, 2.0]})
    >>> predict_survival_regression(idata, [[0.0], [1.0]])["mean"].round(3).tolist()
    [0.905, 0.607, 0.819, 0.368]
    """
    interval = check_fraction("interval", interval, closed=False)
    eta = linear_predictor_draws(idata, X, x_bound, SURVIVAL_REGRESSION)  # (m, S)
    draws = posterior_dataset(idata)
    hazard = _cumulative_hazard(draws)
    cells = [str(c) for c in hazard.coords["cell"].values]
    m = eta.shape[0]
    if cell is None:
        if len(cells) > 1:
            raise ValueError(f"cell: the model has cells {cells}; give the cell of every row")
        cell = cells[0]
    labels = [str(cell)] * m if isinstance(cell, str) else [str(c) for c in cell]
    if len(labels) != m or not set(labels) <= set(cells):
        raise ValueError(f"cell must be one of {cells}, or one such label per row of X ({m})")
    times, hazard = _hazard_at(idata, draws, hazard, times)  # (S, cells, k)
    hazard = hazard[:, [cells.index(c) for c in labels], :]  # (S, m, k)
    # S = exp(−exp(log H₀ + η)): in [0, 1] for H₀ ≥ 0 and finite η; H₀ = 0 gives S = 1 where
    # H₀·exp(η) would be 0·∞ = NaN, and a product past the largest double gives S = 0
    with np.errstate(over="ignore"):
        survival = SURVIVAL_REGRESSION.link.inverse(eta[:, :, None], np.swapaxes(hazard, 0, 1))  # (m, S, k)
    return curve_frame("row", range(m), times, survival, interval)


def _cumulative_hazard(draws) -> xr.DataArray:
    """The draws of H₀ as (sample, cell, interval), refused unless finite, ≥ 0 and non-decreasing in time."""
    if "cumulative_hazard" not in draws:
        raise ValueError("idata holds no 'cumulative_hazard': pass the result of sampling a survival_regression_model")
    hazard = draws["cumulative_hazard"].stack(sample=("chain", "draw")).transpose("sample", "cell", "interval")
    values = hazard.values
    if not np.isfinite(values).all():
        raise ValueError("idata: its cumulative_hazard draws hold NaN or infinite values")
    if (values < 0).any() or (np.diff(values, axis=-1) < 0).any():
        raise ValueError(
            "idata: its cumulative_hazard draws must be ≥ 0 and non-decreasing over the intervals "
            "(a cumulative hazard), as survival_regression_model draws them"
        )
    return hazard


def _hazard_at(idata, draws, hazard: xr.DataArray, times) -> tuple[np.ndarray, np.ndarray]:
    """(times, H₀ at them as (sample, cell, time)): the interval ends by default, else read between
    them as the recorded hazard says (:func:`pm_private.survival.exits.predict.cumulative_hazard`)."""
    ends = np.asarray(hazard.coords["interval"].values, dtype=np.float64)
    if times is None:
        return ends, hazard.values
    if not (isinstance(idata, xr.DataTree) and "hazard_code" in idata.get("constant_data", {})):
        raise ValueError("times: reading between the interval ends needs the DataTree of pm.sample (its constant_data)")
    t = check_times(times, ends)
    code = int(idata["constant_data"]["hazard_code"].values)
    cells = hazard.coords["cell"].values
    values = [cumulative_hazard(draws, code, ends, cell, t) for cell in cells]  # each (chain, draw, k)
    return t, np.stack([v.reshape(-1, t.size) for v in values], axis=1)

"""Survival curves and median survival per cell from a posterior of
:func:`pm_private.survival.survival_model`.

The model records the event's cumulative hazard at the interval ends, H_c(tⱼ)
(``cumulative_hazard``), and which hazard it fitted (``hazard_code`` in ``constant_data``).
Between the ends, S_c(t) = exp(−H_c(t)) with H_c

* linear in t (piecewise-exponential: the hazard is constant inside an interval);
* a step that falls at the interval ends (discrete-time hazards: the model says nothing inside an interval);
* H_c(τ)·(t/τ)^ρ (Weibull, ρ = ``shape``; the only one defined beyond the horizon τ).

Post-processing of a posterior: no records are read and no budget is spent.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import xarray as xr

from ..._engine.docstrings import parameters_from
from ..._engine.keywords import renamed_keywords
from ...privacy.validation import as_float_array, check_fraction
from ...released.family import check_posterior
from ..curves import curve_frame
from .model import HAZARDS
from .release import SURVIVAL

__all__ = [
    "cell_survival_draws",
    "check_times",
    "cumulative_hazard",
    "median_draws",
    "posterior_parts",
    "median_survival",
    "predict_survival",
]

_DISCRETE = (HAZARDS["logit"], HAZARDS["cloglog"])


def posterior_parts(idata):
    """(posterior Dataset, hazard code, interval ends) of a survival_model posterior DataTree, checked."""
    check_posterior(idata, SURVIVAL)
    if not isinstance(idata, xr.DataTree) or not {"posterior", "constant_data"} <= set(idata.children):
        raise ValueError(
            "idata: the posterior must be the DataTree pm.sample returns for survival_model (with its constant_data)"
        )
    constant = idata["constant_data"]
    if "hazard_code" not in constant or "cumulative_hazard" not in idata["posterior"]:
        raise ValueError("idata holds no posterior of survival_model: no hazard_code or cumulative_hazard")
    posterior = idata["posterior"].to_dataset()
    code = int(constant["hazard_code"].values)
    checked = ["cumulative_hazard", "shape"] if code == HAZARDS["weibull"] else ["cumulative_hazard"]
    for name in checked:
        values = posterior[name].values
        if not (np.isfinite(values).all() and (values >= 0).all()):
            raise ValueError(f"idata: the posterior's {name} holds negative, NaN or infinite draws")
    return posterior, code, np.asarray(constant["interval_end"].values, dtype=np.float64)


def _cells(posterior, cells) -> list[str]:
    known = [str(c) for c in posterior["cell"].values]
    if cells is None:
        return known
    chosen = [cells] if isinstance(cells, str) else [str(c) for c in cells]
    unknown = [c for c in chosen if c not in known]
    if unknown or not chosen:
        raise ValueError(f"cells must be among the fit's cells {known}, got {chosen}")
    return chosen


def _shape(posterior, cell: str) -> np.ndarray:
    """The Weibull shape draws (chain, draw) of ``cell`` (one shape, or one per cell)."""
    shape = posterior["shape"]
    return (shape.sel(cell=cell) if "cell" in shape.dims else shape).values


def cumulative_hazard(posterior, code, ends, cell: str, t: np.ndarray) -> np.ndarray:
    """H_cell(t) for every draw of a posterior of ``posterior_parts``: (chain, draw, m)."""
    H = posterior["cumulative_hazard"].sel(cell=cell).values  # (chain, draw, J)
    horizon = ends[-1]
    if code == HAZARDS["weibull"]:
        return H[..., -1:] * (t / horizon) ** _shape(posterior, cell)[..., None]
    if (t > horizon).any():
        raise ValueError(f"times must be ≤ the horizon {horizon:g}: the table says nothing after it")
    if code in _DISCRETE:
        index = np.searchsorted(ends, t, side="right")  # the number of interval ends ≤ t
        padded = np.concatenate([np.zeros((*H.shape[:2], 1)), H], axis=-1)
        return padded[..., index]
    knots = np.concatenate([[0.0], ends])
    padded = np.concatenate([np.zeros((*H.shape[:2], 1)), H], axis=-1)
    j = np.clip(np.searchsorted(knots, t, side="right") - 1, 0, len(ends) - 1)
    frac = (t - knots[j]) / (knots[j + 1] - knots[j])
    return padded[..., j] + frac * (padded[..., j + 1] - padded[..., j])


def check_times(times, ends) -> np.ndarray:
    """``times`` as a checked 1-D float array (the interval ``ends`` when None)."""
    if times is None:
        return np.asarray(ends, dtype=np.float64)
    t = as_float_array(times, "times")
    if t.ndim != 1 or t.size == 0 or not np.isfinite(t).all() or (t < 0).any():
        raise ValueError(f"times must be a non-empty 1-D array of finite times ≥ 0, got shape {t.shape}")
    return t


def cell_survival_draws(idata, times=None, *, cell=None) -> xr.DataArray:
    """S_c(t) = exp(−H_c(t)) at ``times`` for every posterior draw of one cell.

    Parameters
    ----------
    idata : xarray.DataTree
        The result of ``pm.sample`` on a :func:`pm_private.survival.survival_model`.
    times : array_like, shape (m,), optional
        Times ≥ 0 on the scale of the release's interval ends (default: the ends); at most the
        horizon unless the fit is a Weibull one.
    cell : str, optional
        The cell (default: the first, usually the reference).

    Returns
    -------
    xarray.DataArray
        ``survival`` with dims (chain, draw, time).

    Raises
    ------
    ValueError
        If ``idata`` is not a posterior of ``survival_model``, or for invalid times or cell.
    """
    posterior, code, ends = posterior_parts(idata)
    cell = _cells(posterior, cell)[0]
    t = check_times(times, ends)
    values = np.exp(-cumulative_hazard(posterior, code, ends, cell, t))
    coords = {"chain": posterior["chain"].values, "draw": posterior["draw"].values, "time": t}
    return xr.DataArray(values, dims=("chain", "draw", "time"), coords=coords, name="survival")


@renamed_keywords(prob="interval")
def predict_survival(idata, cells=None, *, times=None, interval: float = 0.95) -> pd.DataFrame:
    """Posterior survival curves per cell, S_c(t) = exp(−H_c(t)), with pointwise equal-tailed bands.

    The signature of every survival family's predictor: the fit, what the curves are of (here
    the exit table's cells; new covariate rows for the regression families), then ``times`` and
    ``interval``.  An old call with the times second, ``predict_survival(idata, [26, 52])``, still
    works with a ``FutureWarning``.

    Parameters
    ----------
    idata : xarray.DataTree
        The result of ``pm.sample`` on a :func:`pm_private.survival.survival_model`.
    cells : str or sequence of str, optional
        The cells (default: all).
    times : array_like, shape (m,), optional
        Times ≥ 0 on the scale of the interval ends (default: the ends).
    interval : float, default 0.95
        The probability of the bands, in (0, 1).

    Returns
    -------
    pandas.DataFrame
        Indexed by (``cell``, ``time``); columns ``mean``, ``median``, ``lower``, ``upper``.
        Hazard ratios are ``exp(beta)``: ``fit_summary(idata)``.

    Raises
    ------
    ValueError
        If ``idata`` is not a posterior of ``survival_model`` (another family's is refused by
        name), or for invalid times, cells or ``interval``.

    Examples
    --------
    >>> import numpy as np, pymc as pm
    >>> from pm_private import predict_survival, release_survival_stats, survival_model
    >>> rng = np.random.default_rng(0)
    >>> release = release_survival_stats(rng.exponential(2.0, 500), np.ones(500), edges=[1.0, 2.0, 3.0],
    ...                                  epsilon=1.0, delta=1e-6, rng=0)
    >>> with survival_model(release):
    ...     prior = pm.sample_prior_predictive(50, random_seed=1)
    >>> tree = prior.copy()
    >>> tree["posterior"] = prior["prior"]
    >>> predict_survival(tree, times=[0.5, 3.0]).columns.tolist()
    ['mean', 'median', 'lower', 'upper']
    """
    if cells is not None and not isinstance(cells, str) and np.issubdtype(np.asarray(cells).dtype, np.number):
        warnings.warn(
            "predict_survival(idata, times) is now predict_survival(idata, times=times): the second argument "
            "is the cells; the old order will be refused in the next release",
            FutureWarning,
            stacklevel=2,
        )
        cells, times = None, cells
    interval = check_fraction("interval", interval, closed=False)
    posterior, code, ends = posterior_parts(idata)
    t = check_times(times, ends)
    chosen = _cells(posterior, cells)
    draws = [np.exp(-cumulative_hazard(posterior, code, ends, cell, t)).reshape(-1, t.size) for cell in chosen]
    return curve_frame("cell", chosen, t, draws, interval)


def median_draws(posterior, code: int, ends: np.ndarray, cell: str) -> np.ndarray:
    """The median survival time of ``cell`` for every draw, flattened (inf where S stays above ½
    up to the horizon, except for a Weibull fit): the reader behind :func:`median_survival`."""
    log2 = np.log(2.0)
    H = posterior["cumulative_hazard"].sel(cell=cell).values.reshape(-1, ends.size)
    if code == HAZARDS["weibull"]:
        return ends[-1] * (log2 / H[:, -1]) ** (1.0 / _shape(posterior, cell).ravel())
    crossed = H >= log2
    first = np.argmax(crossed, axis=1)
    med = np.full(H.shape[0], np.inf)
    hit = crossed.any(axis=1)
    if code in _DISCRETE:
        med[hit] = ends[first[hit]]
        return med
    knots = np.concatenate([[0.0], ends])
    padded = np.column_stack([np.zeros(H.shape[0]), H])
    j = first[hit]
    lo, hi = padded[hit, j], padded[hit, j + 1]
    med[hit] = knots[j] + (log2 - lo) / (hi - lo) * (knots[j + 1] - knots[j])
    return med


@parameters_from(predict_survival)
@renamed_keywords(prob="interval")
def median_survival(idata, *, cells=None, interval: float = 0.95) -> pd.DataFrame:
    """The median survival time per cell, the t with S_c(t) = ½, with its equal-tailed interval.

    A draw whose S_c stays above ½ up to the horizon has its median beyond it: ``inf`` (so an
    interval's upper end is ``inf`` when more than (1 − interval)/2 of the draws are such), except for
    a Weibull fit, whose curve continues.  Discrete-time fits give the first interval end where
    S ≤ ½; piecewise-exponential fits interpolate inside the interval.

    Parameters
    ----------
    interval : float, default 0.95
        The probability of the intervals, in (0, 1).

    Returns
    -------
    pandas.DataFrame
        Indexed by ``cell``; columns ``median`` (the posterior median of the median time),
        ``lower``, ``upper`` and ``beyond_horizon`` (the share of draws whose median is past τ).

    Raises
    ------
    ValueError
        As :func:`predict_survival`.
    """
    interval = check_fraction("interval", interval, closed=False)
    posterior, code, ends = posterior_parts(idata)
    rows = []
    for cell in _cells(posterior, cells):
        med = median_draws(posterior, code, ends, cell)
        lower, median, upper = np.quantile(med, [(1 - interval) / 2, 0.5, (1 + interval) / 2], method="inverted_cdf")
        rows.append((cell, median, lower, upper, float(np.mean(~np.isfinite(med)))))
    frame = pd.DataFrame(rows, columns=["cell", "median", "lower", "upper", "beyond_horizon"]).set_index("cell")
    frame.attrs.update(interval=interval)
    return frame

"""Survival curves and coefficient tables from a fitted posterior, in the style of lifelines.

A posterior from ``pm.sample`` (an ``xarray.DataTree``) of :func:`~pm_private.survival.weibull_model` (or any model
with the same variable names) or of :func:`~pm_private.survival.discrete_time_model` is summarised by

* :func:`survival_summary`: deprecated, now :func:`pm_private.fit_summary`, the one coefficient
  table of every family (lifelines' ``print_summary``);
* :func:`survival_draws`: S(t | x) for every posterior draw, an ``xarray.DataArray``;
* :func:`survival_function`: its posterior mean and credible band at the requested times
  (lifelines' ``survival_function_`` with ``confidence_interval_``);
* :func:`plot_survival_function`: the curve and its band on matplotlib axes (lifelines'
  ``plot_survival_function``).

These are post-processing of a posterior: they read no records and spend no privacy budget.  A
posterior of a private release is summarised the same way; its band then carries the
uncertainty the model assigns to the noise as well as to the sampling of the records.

Survival functions (times divided by the public ``horizon`` are the model's time scale u):

* Weibull (Nguyên & Hui 2017b; accelerated failure time): S(u | x) = exp(−(u/λ)^p) with
  ln λ = β₀ + xᵀβ (posterior variables ``p``, ``intercept``, ``beta``), or λ = ``lam`` for the
  model without covariates.
* Discrete time (Nguyên & Hui 2017a): with hazard h_s = g⁻¹(γ_s + xᵀβ) in interval s = (s/q, (s+1)/q]
  and γ = Aα (posterior ``alpha``, ``beta``; the public basis A), S(u | x) = Π_{s : (s+1)/q ≤ u} (1 − h_s):
  the probability of surviving every interval that has ended by u, a step function that falls at
  the interval ends (:func:`~pm_private.survival.interval_ends`).
* Exit tables (:func:`~pm_private.survival.survival_model`): S_c(t) per cell from the fit's
  cumulative hazard at the interval ends (:func:`~pm_private.survival.cell_survival_draws`); ``x``
  names the cell.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import xarray as xr

from .._engine.docstrings import parameters_from
from .._engine.keywords import renamed_keywords
from ..privacy.validation import as_float_array, check_fraction, check_positive
from ..released.family import check_posterior, describe_family, recorded_fit
from ..released.summary import check_interval_kind, fit_summary
from .curves import curve_frame
from .data import interval_ends
from .discrete.data import check_link
from .discrete.fit import _survive_terms

__all__ = [
    "survival_summary",
    "survival_draws",
    "survival_function",
    "plot_survival_function",
    "predict_weibull",
    "predict_discrete_time",
]


#: The families whose posteriors the survival functions read.
SURVIVAL_FAMILIES = ("weibull", "discrete_time", "survival")


def _posterior(idata) -> xr.Dataset:
    """The posterior group of a DataTree (``pm.sample``'s result) or a posterior Dataset itself."""
    record = recorded_fit(idata)
    if record is not None and record["family"] not in SURVIVAL_FAMILIES:
        raise ValueError(
            "idata: the survival functions need a posterior of weibull_model, discrete_time_model or survival_model, "
            "got one of " + describe_family(record["family"])
        )
    if isinstance(idata, xr.DataTree):
        if "posterior" not in idata.children:
            raise ValueError("idata has no posterior group; pass the result of pm.sample")
        return idata["posterior"].to_dataset()
    if isinstance(idata, xr.Dataset):
        return idata
    raise TypeError(f"idata must be an xarray DataTree (pm.sample's result) or Dataset, got {type(idata).__name__}")


def _is_exit_table_fit(idata) -> bool:
    """Whether ``idata`` is a posterior of :func:`~pm_private.survival.survival_model` (an exit table)."""
    record = recorded_fit(idata)
    return record is not None and record["family"] == "survival"


def _steps(idata) -> bool:
    """Whether a survival_model posterior's curve is a step function (a discrete-time hazard)."""
    if not _is_exit_table_fit(idata):
        return False
    from .exits.model import HAZARDS

    return int(idata["constant_data"]["hazard_code"].values) in (HAZARDS["logit"], HAZARDS["cloglog"])


def _percent(interval: float) -> str:
    return f"{100 * interval:g}%"


@renamed_keywords(prob="interval")
def survival_summary(idata, var_names=None, *, interval: float = 0.95, kind: str = "eti") -> pd.DataFrame:
    """Deprecated alias of :func:`pm_private.fit_summary` on the fitted scale; warns once per call.

    ``survival_summary(idata, var_names)`` is ``fit_summary(idata, var_names, scale="fitted")``
    with ``var_names`` defaulting to every posterior variable.  It will be removed in the next
    release.

    Parameters
    ----------
    idata : xarray.DataTree or xarray.Dataset
        The result of ``pm.sample`` (or its posterior group) of a survival model.
    var_names : str or list of str, optional
        The variables to tabulate (default: every posterior variable).
    interval : float, default 0.95
        The probability of the credible intervals, in (0, 1).
    kind : {"eti", "hdi"}, default "eti"
        Equal-tailed or highest-density intervals.

    Returns
    -------
    pandas.DataFrame
        :func:`pm_private.fit_summary`'s table.

    Examples
    --------
    >>> import warnings, numpy as np, xarray as xr
    >>> from pm_private.survival import survival_summary
    >>> draws = np.random.default_rng(0).normal([0.5, -0.2], 0.1, size=(2, 500, 2))
    >>> posterior = xr.Dataset({"beta": (("chain", "draw", "feature"), draws)}, coords={"feature": ["fin", "age"]})
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", FutureWarning)
    ...     survival_summary(posterior).index.tolist()
    ['beta[fin]', 'beta[age]']
    """
    warnings.warn(
        "survival_summary is now fit_summary(idata, var_names, scale='fitted'); survival_summary will be removed "
        "in the next release",
        FutureWarning,
        stacklevel=2,
    )
    if var_names is None:
        var_names = list(_posterior(idata).data_vars)
    return fit_summary(idata, var_names, interval=interval, kind=kind, scale="fitted")


def _profile(x, labels: list[str]) -> np.ndarray:
    """The covariate profile x as a vector in the order of ``labels`` (zeros by default)."""
    if x is None:
        return np.zeros(len(labels))
    if isinstance(x, dict | pd.Series):
        x = pd.Series(x, dtype=np.float64)
        missing = [label for label in labels if label not in x.index]
        extra = [label for label in x.index if label not in labels]
        if missing or extra:
            raise ValueError(f"x must name the covariates {labels}; missing {missing}, unknown {extra}")
        x = x[labels].to_numpy()
    vector = as_float_array(x, "x")
    if vector.shape != (len(labels),) or not np.isfinite(vector).all():
        raise ValueError(f"x must be {len(labels)} finite covariate values ({labels}), got shape {vector.shape}")
    return vector


def _draws(posterior: xr.Dataset, name: str) -> np.ndarray:
    """The draws of a scalar variable, shape (chain, draw)."""
    variable = posterior[name]
    if variable.ndim != 2:
        raise ValueError(f"{name} must be one number per draw, got dims {variable.dims}")
    return variable.transpose("chain", "draw").values


def _linear_predictor(posterior: xr.Dataset, x) -> np.ndarray:
    """xᵀβ per draw, shape (chain, draw); 0 for a posterior without ``beta`` (and then no x)."""
    if "beta" not in posterior:
        if x is not None:
            raise ValueError("x was given but the posterior has no coefficients beta")
        return np.zeros((posterior.sizes["chain"], posterior.sizes["draw"]))
    beta = posterior["beta"]
    if beta.ndim != 3:
        raise ValueError(f"beta must have one dimension besides chain and draw, got dims {beta.dims}")
    (dim,) = [d for d in beta.dims if d not in ("chain", "draw")]
    labels = [str(label) for label in beta[dim].values]
    return beta.transpose("chain", "draw", dim).values @ _profile(x, labels)


def _weibull_log_survival(posterior: xr.Dataset, u: np.ndarray, x) -> np.ndarray:
    """ln S(u | x) = −(u/λ)^p per draw, shape (chain, draw, time)."""
    if "p" not in posterior:
        raise ValueError(
            "the posterior has no Weibull shape p; a Weibull posterior needs p and lam, or p, intercept "
            "and beta (weibull_model), and a discrete-time posterior needs basis="
        )
    if "intercept" in posterior:
        log_lam = _draws(posterior, "intercept") + _linear_predictor(posterior, x)
    elif "lam" in posterior:
        if x is not None:
            raise ValueError("x was given but the posterior has a common scale lam (no covariates)")
        log_lam = np.log(_draws(posterior, "lam"))
    else:
        raise ValueError("the posterior has p but neither intercept (with beta) nor lam")
    with np.errstate(divide="ignore"):  # u = 0: ln u = −inf, S = 1
        return -np.exp(_draws(posterior, "p")[..., None] * (np.log(u) - log_lam[..., None]))


def _discrete_log_survival(posterior: xr.Dataset, u: np.ndarray, x, basis, link: str) -> np.ndarray:
    """ln S(u | x) = −Σ_{s ended by u} c(γ_s + xᵀβ), c = −log(1 − h), per draw (chain, draw, time)."""
    basis = as_float_array(basis, "basis")
    if basis.ndim != 2 or not np.isfinite(basis).all():
        raise ValueError(f"basis must be a finite (q, e) matrix, got shape {basis.shape}")
    if "alpha" not in posterior or posterior["alpha"].ndim != 3:
        raise ValueError("a discrete-time posterior needs alpha with one dimension besides chain and draw")
    alpha = posterior["alpha"]
    (dim,) = [d for d in alpha.dims if d not in ("chain", "draw")]
    alpha = alpha.transpose("chain", "draw", dim).values
    if alpha.shape[-1] != basis.shape[1]:
        raise ValueError(f"basis has {basis.shape[1]} columns but alpha has {alpha.shape[-1]} entries")
    z = alpha @ basis.T + _linear_predictor(posterior, x)[..., None]  # (chain, draw, q)
    (cost,) = _survive_terms(z, link, 0)
    cumulative = np.concatenate([np.zeros((*cost.shape[:-1], 1)), np.cumsum(cost, axis=-1)], axis=-1)
    ended = np.searchsorted(interval_ends(basis.shape[0]), u, side="right")
    return -cumulative[..., ended]


def survival_draws(idata, times, *, x=None, horizon: float = 1.0, basis=None, link: str = "logit") -> xr.DataArray:
    """S(t | x) at ``times`` for every posterior draw.

    The model is told by ``basis``: without it the posterior is a Weibull one (variables ``p``
    and ``lam``, or ``p``, ``intercept`` and ``beta`` as :func:`~pm_private.survival.weibull_model` names them),
    S(t) = exp(−(t/(H·λ))^p); with it a discrete-time one (``alpha``, ``beta`` as
    :func:`~pm_private.survival.discrete_time_model` names them), S(t) = Π over the intervals ended by t/H of
    (1 − h_s), h_s = g⁻¹((Aα)_s + xᵀβ).

    Parameters
    ----------
    idata : xarray.DataTree or xarray.Dataset
        The result of ``pm.sample`` (or its posterior group).
    times : array_like, shape (m,)
        Times ≥ 0, in the units of the data before scaling (at most ``horizon`` for the
        discrete-time model, which says nothing beyond it).
    x : array_like, dict or pandas.Series, optional
        One covariate profile, on the scale the model was fitted on: d values in the order of
        ``beta``'s coordinate, or a mapping from its labels (default: all zeros, e.g. the centre of
        the public domain for covariates from :func:`~pm_private.survival.scale_covariates`).  For
        a posterior of :func:`~pm_private.survival.survival_model`: a cell label (default: the
        first cell), the times on the scale of the release's interval ends, and ``horizon``,
        ``basis`` and ``link`` unused (the fit records them).
    horizon : float, default 1.0
        The public horizon H the times were divided by before fitting (1: the model's units).
    basis : array_like, shape (q, e), optional
        The public basis A of a discrete-time model (``DiscreteTimeData.basis``).
    link : {"logit", "cloglog", "probit"}, default "logit"
        The link of a discrete-time model.

    Returns
    -------
    xarray.DataArray
        ``survival`` with dims (chain, draw, time), values in [0, 1].

    Raises
    ------
    ValueError
        For times that are negative, not finite or (discrete time) beyond the horizon, an invalid
        horizon, basis, link or profile, or a posterior without the model's variables.
    TypeError
        If ``idata`` is not a DataTree or Dataset.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> from pm_private.survival import survival_draws
    >>> posterior = xr.Dataset({"p": (("chain", "draw"), [[1.0, 2.0]]), "lam": (("chain", "draw"), [[1.0, 1.0]])})
    >>> survival_draws(posterior, [0.0, 1.0]).values.round(3).tolist()  # exp(−t^p)
    [[[1.0, 0.368], [1.0, 0.368]]]
    """
    if _is_exit_table_fit(idata):
        from .exits.predict import cell_survival_draws

        return cell_survival_draws(idata, times, cell=x)
    posterior = _posterior(idata)
    sample_dims = [d for d in ("chain", "draw") if d in posterior.dims]
    if len(sample_dims) != 2:
        raise ValueError(f"the posterior must have dims chain and draw, got {tuple(posterior.dims)}")
    horizon = check_positive("horizon", horizon)
    t = as_float_array(times, "times")
    if t.ndim != 1 or t.size == 0 or not np.isfinite(t).all() or (t < 0).any():
        raise ValueError(f"times must be a non-empty 1-D array of finite times ≥ 0, got shape {t.shape}")
    u = t / horizon
    if basis is None:
        if link != "logit":
            raise ValueError("link is for a discrete-time posterior: pass its basis as well")
        log_s = _weibull_log_survival(posterior, u, x)
    else:
        if (u > 1).any():
            raise ValueError(f"times must be ≤ the horizon {horizon:g} for a discrete-time posterior")
        log_s = _discrete_log_survival(posterior, u, x, basis, check_link(link))
    coords = {d: posterior[d].values for d in sample_dims} | {"time": t}
    return xr.DataArray(np.exp(log_s), dims=(*sample_dims, "time"), coords=coords, name="survival")


@renamed_keywords(prob="interval")
def survival_function(
    idata,
    times,
    *,
    x=None,
    horizon: float = 1.0,
    basis=None,
    link: str = "logit",
    interval: float = 0.95,
    kind: str = "eti",
) -> pd.DataFrame:
    """Posterior mean of S(t | x) and its pointwise credible band at ``times``.

    The draws are those of :func:`survival_draws`; the band holds S(t | x) with posterior
    probability ``interval`` at each time separately (pointwise, not simultaneous).

    Parameters
    ----------
    idata : xarray.DataTree or xarray.Dataset
        The result of ``pm.sample`` (or its posterior group).
    times : array_like, shape (m,)
        Times ≥ 0 in the units of the data (see :func:`survival_draws`).
    x : array_like, dict or pandas.Series, optional
        One covariate profile (default: zeros).
    horizon : float, default 1.0
        The public horizon the times were divided by before fitting.
    basis : array_like, shape (q, e), optional
        The public basis of a discrete-time model (none: a Weibull posterior).
    link : {"logit", "cloglog", "probit"}, default "logit"
        The link of a discrete-time model.
    interval : float, default 0.95
        The probability of the band, in (0, 1).
    kind : {"eti", "hdi"}, default "eti"
        Equal-tailed (pointwise quantiles) or highest-density band.

    Returns
    -------
    pandas.DataFrame
        Indexed by ``time``, columns ``mean``, ``median``, ``lower``, ``upper``;
        ``attrs`` holds ``interval`` and ``kind``.

    Raises
    ------
    ValueError
        For an invalid ``interval`` or ``kind``, or for the reasons of :func:`survival_draws`.
    TypeError
        If ``idata`` is not a DataTree or Dataset.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> from pm_private.survival import survival_function
    >>> rng = np.random.default_rng(0)
    >>> draws = {"p": rng.normal(1.3, 0.05, (2, 500)), "lam": rng.normal(2.0, 0.1, (2, 500))}
    >>> posterior = xr.Dataset({k: (("chain", "draw"), v) for k, v in draws.items()})
    >>> curve = survival_function(posterior, [0.5, 1.0, 2.0])
    >>> curve.columns.tolist()
    ['mean', 'median', 'lower', 'upper']
    >>> bool((curve["lower"] <= curve["mean"]).all() and (curve["mean"] <= curve["upper"]).all())
    True
    """
    import arviz as az

    interval = check_fraction("interval", interval, closed=False)
    kind = check_interval_kind(kind)
    draws = survival_draws(idata, times, x=x, horizon=horizon, basis=basis, link=link)
    band = (az.eti if kind == "eti" else az.hdi)(draws, prob=interval)
    frame = pd.DataFrame(
        {
            "mean": draws.mean(("chain", "draw")).values,
            "median": draws.median(("chain", "draw")).values,
            "lower": band.sel(ci_bound="lower").values,
            "upper": band.sel(ci_bound="upper").values,
        },
        index=pd.Index(draws["time"].values, name="time"),
    )
    frame.attrs.update(interval=interval, kind=kind)
    return frame


def _profiles(X) -> list:
    """New covariate rows as the profiles :func:`survival_draws` reads: a DataFrame's rows by column
    name, an array's rows in the fit's order, one all-zero profile for ``None``."""
    if X is None:
        return [None]
    if isinstance(X, pd.DataFrame):
        return [row for _, row in X.iterrows()]
    rows = as_float_array(X, "X")
    if rows.ndim == 1:
        rows = rows[None, :]
    if rows.ndim != 2 or rows.shape[0] == 0:
        raise ValueError(f"X must be one covariate row or a (m, d) array of rows, got shape {rows.shape}")
    return list(rows)


def _row_curves(idata, X, family, times, interval: float, **reader) -> pd.DataFrame:
    """The curves of the rows of ``X`` as :func:`~pm_private.survival.curves.curve_frame` tabulates them."""
    check_posterior(idata, family)
    interval = check_fraction("interval", interval, closed=False)
    draws = [survival_draws(idata, times, x=row, **reader) for row in _profiles(X)]
    values = [curve.values.reshape(-1, curve.sizes["time"]) for curve in draws]
    return curve_frame("row", range(len(values)), draws[0]["time"].values, values, interval)


def predict_weibull(idata, X=None, *, times, horizon: float = 1.0, interval: float = 0.95) -> pd.DataFrame:
    """Posterior survival curves S(t | x) = exp(−(t/(H·λ))^p), ln λ = β₀ + xᵀβ, of new rows of a
    :func:`~pm_private.survival.weibull_model` fit, with pointwise equal-tailed bands.

    The signature and table of every survival family's predictor (the fit, the rows, then
    ``times`` and ``interval``); each row's draws are :func:`survival_draws`'.

    Parameters
    ----------
    idata : xarray.DataTree or xarray.Dataset
        The result of ``pm.sample`` on ``weibull_model`` (or its posterior group).
    X : array_like or pandas.DataFrame, shape (m, d), optional
        New covariate rows on the scale the model was fitted on (a DataFrame's columns by name);
        default one row of zeros, or the model without covariates.
    times : array_like, shape (k,)
        Times ≥ 0 in the units of the data.
    horizon : float, default 1.0
        The public horizon the times were divided by before fitting.
    interval : float, default 0.95
        The probability of the bands, in (0, 1).

    Returns
    -------
    pandas.DataFrame
        Indexed by (``row``, ``time``); columns ``mean``, ``median``, ``lower``, ``upper``.

    Raises
    ------
    ValueError
        If ``idata`` records another family, or for the reasons of :func:`survival_draws`.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> from pm_private.survival import predict_weibull
    >>> posterior = xr.Dataset({"p": (("chain", "draw"), [[1.0, 1.0]]), "intercept": (("chain", "draw"), [[0.0, 0.0]]),
    ...                         "beta": (("chain", "draw", "feature"), [[[0.5], [0.5]]])}, coords={"feature": ["age"]})
    >>> predict_weibull(posterior, [[0.0], [2.0]], times=[1.0])["mean"].round(3).tolist()  # exp(−t/λ)
    [0.368, 0.692]
    """
    from .weibull.family import WEIBULL

    return _row_curves(idata, X, WEIBULL, times, interval, horizon=horizon)


@parameters_from(predict_weibull, sections=("Returns", "Raises"))
def predict_discrete_time(
    idata, X=None, *, times, basis, horizon: float = 1.0, link: str = "logit", interval: float = 0.95
) -> pd.DataFrame:
    """Posterior survival curves S(t | x) = Π over the intervals ended by t/H of (1 − h_s),
    h_s = g⁻¹((Aα)_s + xᵀβ), of new rows of a :func:`~pm_private.survival.discrete_time_model`
    fit, with pointwise equal-tailed bands.

    The signature and table of every survival family's predictor (the fit, the rows, then
    ``times`` and ``interval``), with the public basis and link the model was built with.

    Parameters
    ----------
    idata : xarray.DataTree or xarray.Dataset
        The result of ``pm.sample`` on ``discrete_time_model`` (or its posterior group).
    X : array_like or pandas.DataFrame, shape (m, d), optional
        New covariate rows on the scale the model was fitted on (default one row of zeros).
    times : array_like, shape (k,)
        Times in [0, horizon] in the units of the data.
    basis : array_like, shape (q, e)
        The public basis A of the model (``DiscreteTimeData.basis``).
    link : {"logit", "cloglog", "probit"}, default "logit"
        The model's link.

    Examples
    --------
    >>> import numpy as np, xarray as xr
    >>> from pm_private.survival import interval_basis, predict_discrete_time
    >>> posterior = xr.Dataset({"alpha": (("chain", "draw", "knot"), np.zeros((1, 2, 2))),
    ...                         "beta": (("chain", "draw", "feature"), np.zeros((1, 2, 1)))})
    >>> curves = predict_discrete_time(posterior, [[1.0]], times=[0.5, 1.0], basis=interval_basis(2, 2))
    >>> curves["mean"].tolist()  # a hazard of ½ in each of the two intervals
    [0.5, 0.25]
    """
    from .discrete.family import DISCRETE_TIME

    return _row_curves(idata, X, DISCRETE_TIME, times, interval, horizon=horizon, basis=basis, link=link)


@parameters_from(survival_function)
@renamed_keywords(prob="interval")
def plot_survival_function(
    idata,
    times,
    *,
    ax=None,
    x=None,
    horizon: float = 1.0,
    basis=None,
    link: str = "logit",
    interval: float = 0.95,
    kind: str = "eti",
    label: str | None = None,
    band_alpha: float = 0.3,
    **line_kwargs,
):
    """Plot the posterior mean of S(t | x) and its credible band (lifelines' ``plot_survival_function``).

    The curve and band are :func:`survival_function`'s; a discrete-time curve is drawn as steps
    that fall at the interval ends.

    Parameters
    ----------
    times : array_like, shape (m,)
        Times ≥ 0 in the units of the data (a fine grid draws a smooth curve).
    ax : matplotlib.axes.Axes, optional
        The axes to draw on (default: the current axes).
    kind : {"eti", "hdi"}, default "eti"
        Equal-tailed or highest-density band.
    label : str, optional
        Legend label of the curve (default "posterior mean"); the band is labelled with its
        probability.
    band_alpha : float, default 0.3
        Opacity of the band, in [0, 1].
    **line_kwargs
        Passed to ``Axes.plot`` for the curve (``color``, ``lw``, …); the band takes its colour.

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on.

    Raises
    ------
    ValueError
        For an invalid ``band_alpha``, or for the reasons of :func:`survival_function`.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np, xarray as xr
    >>> from pm_private.survival import plot_survival_function
    >>> rng = np.random.default_rng(0)
    >>> draws = {"p": rng.normal(1.3, 0.05, (2, 500)), "lam": rng.normal(2.0, 0.1, (2, 500))}
    >>> posterior = xr.Dataset({k: (("chain", "draw"), v) for k, v in draws.items()})
    >>> ax = plot_survival_function(posterior, np.linspace(0, 3, 50))
    >>> [line.get_label() for line in ax.get_lines()]
    ['posterior mean']
    """
    import matplotlib.pyplot as plt

    band_alpha = check_fraction("band_alpha", band_alpha)
    curve = survival_function(
        idata,
        np.sort(as_float_array(times, "times")),
        x=x,
        horizon=horizon,
        basis=basis,
        link=link,
        interval=interval,
        kind=kind,
    )
    ax = plt.gca() if ax is None else ax
    step = None if basis is None and not _steps(idata) else "post"
    t = curve.index.to_numpy()
    (line,) = ax.plot(
        t,
        curve["mean"],
        drawstyle="default" if step is None else "steps-post",
        label=label or "posterior mean",
        **line_kwargs,
    )
    ax.fill_between(
        t,
        curve["lower"],
        curve["upper"],
        step=step,
        alpha=band_alpha,
        color=line.get_color(),
        label=f"{_percent(curve.attrs['interval'])} credible band ({kind.upper()})",
        linewidth=0,
    )
    ax.set(xlabel="time", ylabel="S(t)", ylim=(0.0, 1.02))
    return ax

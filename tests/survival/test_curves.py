"""Every survival family's predictor has one signature and returns one table.

``predict_survival`` (cells of an exit table), ``predict_survival_regression``, ``predict_weibull``
and ``predict_discrete_time`` (new covariate rows) take the fit, what the curves are of, then the
keyword-only ``times`` and ``interval``, and return a table indexed by (cell or row, time) with
the posterior mean, median and equal-tailed band of S(t).  Each row-wise predictor is checked
against the single-curve reader (``survival_function``) or the formula on hand-made draws."""

import inspect

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from pm_private.families import FAMILIES
from pm_private.survival import interval_basis, predict_survival, survival_function
from pm_private.survival.curves import curve_frame

SURVIVAL_FAMILIES = {"survival": "cells", "survival_regression": "X", "weibull": "X", "discrete_time": "X"}
RNG = np.random.default_rng(7)


@pytest.mark.parametrize("name", SURVIVAL_FAMILIES)
def test_the_predictor_takes_the_fit_what_to_predict_then_times_and_interval(name):
    predictor = FAMILIES[name].predictor.resolve()
    parameters = inspect.signature(predictor).parameters
    first, second = list(parameters)[:2]
    assert (first, second) == ("idata", SURVIVAL_FAMILIES[name])
    assert parameters[second].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
    for keyword in ("times", "interval"):
        assert parameters[keyword].kind is inspect.Parameter.KEYWORD_ONLY, keyword
    assert parameters["interval"].default == 0.95


def _weibull_posterior():
    return xr.Dataset(
        {
            "p": (("chain", "draw"), RNG.normal(1.3, 0.05, (2, 200))),
            "intercept": (("chain", "draw"), RNG.normal(0.2, 0.1, (2, 200))),
            "beta": (("chain", "draw", "feature"), RNG.normal([0.5, -0.3], 0.1, (2, 200, 2))),
        },
        coords={"feature": ["age", "dose"]},
    )


def _discrete_posterior():
    return xr.Dataset(
        {
            "alpha": (("chain", "draw", "knot"), RNG.normal(-1.0, 0.2, (2, 200, 3))),
            "beta": (("chain", "draw", "feature"), RNG.normal([0.5, -0.3], 0.1, (2, 200, 2))),
        },
        coords={"feature": ["age", "dose"]},
    )


@pytest.mark.parametrize("family", ["weibull", "discrete_time"])
def test_row_curves_are_the_single_curve_readers_row_by_row(family):
    rows = pd.DataFrame({"dose": [0.0, 1.0, -0.5], "age": [0.2, 0.0, 0.4]})  # columns by name, any order
    times = np.array([0.0, 0.3, 0.6, 1.0])
    if family == "weibull":
        posterior, reader = _weibull_posterior(), {"horizon": 1.0}
    else:
        posterior, reader = _discrete_posterior(), {"basis": interval_basis(8, 3), "link": "cloglog"}
    table = FAMILIES[family].predictor.resolve()(posterior, rows, times=times, interval=0.8, **reader)
    assert table.index.names == ["row", "time"] and table.columns.tolist() == ["mean", "median", "lower", "upper"]
    for i, (_, row) in enumerate(rows.iterrows()):
        curve = survival_function(posterior, times, x=row, interval=0.8, **reader)
        np.testing.assert_allclose(table.loc[i].to_numpy(), curve.to_numpy(), rtol=1e-12)
    assert table.attrs["interval"] == 0.8


def test_the_weibull_curve_is_the_formula_and_refuses_another_family():
    posterior = _weibull_posterior()
    x = np.array([[0.5, 1.0]])
    table = FAMILIES["weibull"].predictor.resolve()(posterior, x, times=[2.0], horizon=4.0)
    lam = np.exp(posterior["intercept"] + posterior["beta"].values @ x[0])
    np.testing.assert_allclose(table["mean"].iloc[0], np.exp(-((0.5 / lam) ** posterior["p"])).mean(), rtol=1e-12)
    tree = xr.DataTree.from_dict(
        {
            "posterior": posterior,
            "constant_data": xr.Dataset(
                {"fit_record": (("fit_field",), np.zeros(3))},
                coords={"fit_field": ["family=logistic", "release=logistic_stats", "transform=logit"]},
            ),
        }
    )
    with pytest.raises(ValueError, match="predict_weibull needs a posterior of weibull_model.*logistic"):
        FAMILIES["weibull"].predictor.resolve()(tree, x, times=[2.0])


def test_the_old_order_of_predict_survival_warns_and_answers_the_same():
    edges, cells = np.array([1.0, 2.0]), ["control", "treated"]
    H = np.broadcast_to((np.array([0.4, 0.7])[:, None] * edges)[None, None], (1, 3, 2, 2)).copy()
    constant = {
        "hazard_code": ((), np.int64(0)),  # piecewise exponential
        "interval_end": (("interval",), edges),
        "fit_record": (("fit_field",), np.zeros(3)),
    }
    tree = xr.DataTree.from_dict(
        {
            "posterior": xr.Dataset(
                {"cumulative_hazard": (("chain", "draw", "cell", "interval"), H)},
                coords={"cell": cells, "interval": edges},
            ),
            "constant_data": xr.Dataset(
                constant,
                coords={
                    "interval": edges,
                    "fit_field": ["family=survival", "release=survival_stats", "transform=survival"],
                },
            ),
        }
    )
    with pytest.warns(FutureWarning, match="times=times"):
        old = predict_survival(tree, [0.5, 1.0])
    new = predict_survival(tree, times=[0.5, 1.0])
    pd.testing.assert_frame_equal(old, new)
    assert new.index.names == ["cell", "time"] and new.index.get_level_values("cell").unique().tolist() == cells
    np.testing.assert_allclose(new.loc["treated", "mean"].to_numpy(), np.exp(-0.7 * np.array([0.5, 1.0])))


def test_the_table_is_the_draws_summarised():
    draws = RNG.uniform(size=(2, 500, 3))
    table = curve_frame("row", [0, 1], [1.0, 2.0, 3.0], draws, 0.5)
    np.testing.assert_allclose(table["mean"].to_numpy(), draws.mean(axis=1).ravel())
    np.testing.assert_allclose(table["lower"].to_numpy(), np.quantile(draws, 0.25, axis=1).ravel())
    np.testing.assert_allclose(table["upper"].to_numpy(), np.quantile(draws, 0.75, axis=1).ravel())
    with pytest.raises(ValueError, match="interval"):
        curve_frame("row", [0], [1.0], draws[:1], 1.0)

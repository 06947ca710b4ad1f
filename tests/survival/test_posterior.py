"""Survival curves and coefficient tables from a posterior: formulas, bands, names, and lifelines."""

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
import pymc as pm
import pytest
import xarray as xr
from lifelines import KaplanMeierFitter, WeibullAFTFitter, WeibullFitter
from lifelines.datasets import load_rossi
from scipy.special import expit, ndtr

from pm_private import fit_summary
from pm_private.survival import (
    DiscreteTimeData,
    discrete_time_model,
    interval_basis,
    interval_ends,
    plot_survival_function,
    scale_times,
    survival_draws,
    survival_function,
    survival_summary,
    weibull_model,
)

CVM = {"mode": "CVM"}
WEEKS = np.arange(0, 53, dtype=float)


def _posterior(**variables) -> xr.Dataset:
    """A posterior Dataset from arrays (chain, draw, …); a trailing axis gets the dim of its key."""
    dims = {"beta": "feature", "alpha": "knot"}
    data = {}
    for name, (values, *coords) in variables.items():
        values = np.asarray(values, dtype=float)
        names = ("chain", "draw") + ((dims[name],) if values.ndim == 3 else ())
        data[name] = xr.DataArray(values, dims=names, coords={dims[name]: coords[0]} if coords else None)
    return xr.Dataset(data)


@pytest.fixture(scope="module")
def rossi():
    return load_rossi()


# ---------------------------------------------------------------------------------------------
# Weibull
# ---------------------------------------------------------------------------------------------


def test_weibull_draws_follow_the_formula_with_and_without_covariates():
    rng = np.random.default_rng(0)
    p, b0, beta = rng.uniform(0.5, 2.0, (2, 30)), rng.normal(0, 0.5, (2, 30)), rng.normal(0, 0.3, (2, 30, 2))
    t, horizon, x = np.array([0.0, 3.0, 10.0, 52.0]), 52.0, np.array([0.4, -1.0])
    draws = survival_draws(_posterior(p=(p,), intercept=(b0,), beta=(beta, ["a", "b"])), t, x=x, horizon=horizon)
    lam = np.exp(b0 + beta @ x)
    np.testing.assert_allclose(draws.values, np.exp(-(((t / horizon) / lam[..., None]) ** p[..., None])), rtol=1e-12)
    assert draws.dims == ("chain", "draw", "time") and draws["time"].values.tolist() == t.tolist()
    # the order of the posterior's dims does not matter
    transposed = _posterior(p=(p,), intercept=(b0,), beta=(beta, ["a", "b"])).transpose("feature", "draw", "chain")
    np.testing.assert_array_equal(survival_draws(transposed, t, x=x, horizon=horizon).values, draws.values)
    # a mapping is read by the coordinate labels, in any order
    by_name = survival_draws(
        _posterior(p=(p,), intercept=(b0,), beta=(beta, ["a", "b"])), t, x={"b": -1.0, "a": 0.4}, horizon=horizon
    )
    np.testing.assert_array_equal(by_name.values, draws.values)
    # without covariates: S = exp(−(t/λ)^p) with lam from the posterior
    plain = survival_draws(_posterior(p=(p,), lam=(np.exp(b0),)), t, horizon=horizon)
    np.testing.assert_allclose(plain.values, np.exp(-(((t / horizon) / np.exp(b0)[..., None]) ** p[..., None])))


def test_weibull_curve_is_lifelines_weibull_at_its_mle(rossi):
    """A posterior concentrated at lifelines' MLE gives lifelines' curve; the Laplace approximation's
    band holds it and is close to lifelines' confidence band."""
    ref = WeibullFitter().fit(rossi["week"], rossi["arrest"])
    rng = np.random.default_rng(1)
    point = _posterior(p=(np.full((1, 2), ref.rho_),), lam=(np.full((1, 2), ref.lambda_ / 52),))
    expected = ref.survival_function_at_times(WEEKS).to_numpy()
    np.testing.assert_allclose(survival_function(point, WEEKS, horizon=52)["mean"], expected, rtol=1e-10)
    # Laplace approximation of the posterior from lifelines' covariance of (λ, ρ), in weeks
    lam_w, rho = rng.multivariate_normal([ref.lambda_, ref.rho_], ref.variance_matrix_.to_numpy(), size=(4, 1000)).T
    posterior = _posterior(p=(rho.T,), lam=(lam_w.T / 52,))  # the model's unit: horizons of 52 weeks
    curve = survival_function(posterior, WEEKS, horizon=52)
    np.testing.assert_allclose(curve["median"], expected, atol=5e-3)
    assert (curve["lower"] <= expected).all() and (expected <= curve["upper"]).all()
    # the band is close to lifelines' 95% confidence band at one year (two approximations: delta method
    # on the log-log scale there, normal draws of (λ, ρ) here)
    low, high = ref.confidence_interval_survival_function_.loc[52.0]
    assert curve.loc[52.0, "lower"] == pytest.approx(low, abs=0.02)
    assert curve.loc[52.0, "upper"] == pytest.approx(high, abs=0.02)


def test_weibull_needs_its_variables():
    with pytest.raises(ValueError, match="no Weibull shape p.*basis="):
        survival_draws(_posterior(intercept=(np.ones((1, 3)),)), [1.0])
    with pytest.raises(ValueError, match="neither intercept"):
        survival_draws(_posterior(p=(np.ones((1, 3)),)), [1.0])
    with pytest.raises(ValueError, match="x was given"):
        survival_draws(_posterior(p=(np.ones((1, 3)),), lam=(np.ones((1, 3)),)), [1.0], x=[1.0])
    with pytest.raises(ValueError, match=r"x must name the covariates \['a', 'b'\]"):
        survival_draws(
            _posterior(p=(np.ones((1, 3)),), intercept=(np.ones((1, 3)),), beta=(np.ones((1, 3, 2)), ["a", "b"])),
            [1.0],
            x={"a": 1.0, "c": 2.0},
        )
    with pytest.raises(ValueError, match="x must be 2 finite"):
        survival_draws(
            _posterior(p=(np.ones((1, 3)),), intercept=(np.ones((1, 3)),), beta=(np.ones((1, 3, 2)), ["a", "b"])),
            [1.0],
            x=[1.0, np.nan],
        )


# ---------------------------------------------------------------------------------------------
# Discrete time
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "link, inverse", [("logit", expit), ("cloglog", lambda z: -np.expm1(-np.exp(z))), ("probit", ndtr)]
)
def test_discrete_draws_are_the_product_over_ended_intervals(link, inverse):
    q, e = 10, 3
    basis = interval_basis(q, e)
    rng = np.random.default_rng(2)
    alpha, beta = rng.normal(-2.0, 0.5, (2, 20, e)), rng.normal(0, 0.3, (2, 20, 2))
    x = np.array([0.5, -0.5])
    posterior = _posterior(alpha=(alpha,), beta=(beta, ["a", "b"]))
    ends = interval_ends(q)
    # at each end k/q, and just before it, and at 0
    t = np.concatenate([[0.0], ends, np.nextafter(ends, 0.0)])
    draws = survival_draws(posterior, t, x=x, basis=basis, link=link).values
    hazard = inverse(alpha @ basis.T + (beta @ x)[..., None])
    at_ends = np.cumprod(1.0 - hazard, axis=-1)
    np.testing.assert_allclose(draws[..., 1 : q + 1], at_ends, rtol=1e-10)
    np.testing.assert_allclose(draws[..., 0], 1.0)
    # just before the end of interval k the interval has not ended: S is the value at the previous end
    np.testing.assert_allclose(draws[..., q + 1 :], np.concatenate([np.ones((2, 20, 1)), at_ends[..., :-1]], -1))


def test_discrete_curve_at_the_interval_mle_is_kaplan_meier_on_rossi(rossi):
    """Free weekly effects at their MLE (deaths / at risk per week) give Kaplan–Meier exactly.

    This holds only if every record is in the interval of its week: with the former ceil(t·q)
    rule the two week-27 arrests moved to week 28 and the curves differed from week 27 on."""
    q = 52
    data = DiscreteTimeData.from_times(
        np.zeros((len(rossi), 0)), scale_times(rossi["week"], horizon=52), rossi["arrest"], q=q, basis=np.eye(q)
    )
    deaths = np.bincount(data.interval, weights=data.event, minlength=q)
    at_risk = np.bincount(data.interval, minlength=q)[::-1].cumsum()[::-1]
    with np.errstate(divide="ignore"):
        alpha = np.maximum(np.log(deaths) - np.log(at_risk - deaths), -60.0)  # logit of the MLE hazard (≈ 0 for none)
    posterior = _posterior(alpha=(np.broadcast_to(alpha, (1, 4, q)),))
    curve = survival_function(posterior, WEEKS, horizon=52, basis=data.basis)
    km = KaplanMeierFitter().fit(rossi["week"], rossi["arrest"]).survival_function_at_times(WEEKS).to_numpy()
    np.testing.assert_allclose(curve["mean"], km, rtol=1e-12)
    assert (np.diff(curve["mean"].to_numpy()[26:29]) < 0).all()  # arrests in weeks 27 and 28


def test_discrete_time_refuses_times_beyond_the_horizon_and_a_wrong_basis():
    posterior = _posterior(alpha=(np.zeros((1, 2, 3)),))
    with pytest.raises(ValueError, match="≤ the horizon 52"):
        survival_draws(posterior, [53.0], horizon=52, basis=interval_basis(10, 3))
    with pytest.raises(ValueError, match="basis has 4 columns but alpha has 3"):
        survival_draws(posterior, [1.0], horizon=52, basis=np.ones((10, 4)))
    with pytest.raises(ValueError, match="link must be one of"):
        survival_draws(posterior, [1.0], horizon=52, basis=interval_basis(10, 3), link="log")
    with pytest.raises(ValueError, match="pass its basis"):
        survival_draws(posterior, [1.0], link="probit")


# ---------------------------------------------------------------------------------------------
# Bands and shapes
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["eti", "hdi"])
def test_band_ordering_monotone_curves_and_shapes(kind):
    rng = np.random.default_rng(3)
    posterior = _posterior(p=(rng.uniform(0.8, 1.6, (3, 200)),), lam=(rng.uniform(0.5, 2.0, (3, 200)),))
    t = np.linspace(0.0, 3.0, 31)
    curve = survival_function(posterior, t, interval=0.9, kind=kind)
    assert curve.shape == (31, 4) and curve.index.name == "time" and curve.attrs == {"interval": 0.9, "kind": kind}
    assert (curve["lower"] <= curve["median"]).all() and (curve["median"] <= curve["upper"]).all()
    assert ((curve["lower"] >= 0) & (curve["upper"] <= 1)).all()
    assert curve.loc[0.0].tolist() == [1.0, 1.0, 1.0, 1.0]
    assert (np.diff(curve["mean"]) <= 0).all() and (np.diff(curve["lower"]) <= 1e-12).all()
    if kind == "eti":  # quantile bands are nested; sample HDIs of skewed draws need not be
        wider = survival_function(posterior, t, interval=0.99, kind=kind)
        assert (wider["lower"] <= curve["lower"] + 1e-12).all() and (wider["upper"] >= curve["upper"] - 1e-12).all()
    draws = survival_draws(posterior, t).values.reshape(-1, t.size)
    inside = ((draws >= curve["lower"].to_numpy()) & (draws <= curve["upper"].to_numpy())).mean(axis=0)
    assert (inside[1:] >= 0.89).all()  # pointwise: each time holds about 90 % of the draws


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(times=[-1.0]), "times must be"),
        (dict(times=[np.nan]), "times must be"),
        (dict(times=[]), "times must be"),
        (dict(times=[1.0], horizon=0.0), "horizon"),
        (dict(times=[1.0], interval=1.0), "interval"),
        (dict(times=[1.0], kind="hpd"), "kind"),
    ],
)
def test_invalid_arguments_are_named(kwargs, message):
    posterior = _posterior(p=(np.ones((1, 3)),), lam=(np.ones((1, 3)),))
    with pytest.raises(ValueError, match=message):
        survival_function(posterior, **kwargs)


def test_idata_must_be_a_posterior():
    with pytest.raises(TypeError, match="DataTree"):
        survival_function({"p": 1}, [1.0])
    with pytest.raises(ValueError, match="no posterior group"):
        survival_function(xr.DataTree(), [1.0])


# ---------------------------------------------------------------------------------------------
# Summary table
# ---------------------------------------------------------------------------------------------


def test_summary_columns_and_values():
    rng = np.random.default_rng(4)
    beta = rng.normal([0.3, -0.5], [0.1, 0.2], size=(4, 500, 2))
    posterior = _posterior(beta=(beta, ["fin", "prio"]), p=(rng.normal(1.3, 0.05, (4, 500)),))
    table = fit_summary(xr.DataTree.from_dict({"posterior": posterior}), var_names=["beta"])
    assert table.index.tolist() == ["beta[fin]", "beta[prio]"]
    assert table.columns.tolist() == [
        "coef",
        "exp(coef)",
        "se(coef)",
        "coef lower 95%",
        "coef upper 95%",
        "exp(coef) lower 95%",
        "exp(coef) upper 95%",
        "r_hat",
        "ess_bulk",
        "ess_tail",
    ]
    flat = beta.reshape(-1, 2)
    np.testing.assert_allclose(table["coef"], flat.mean(0))
    np.testing.assert_allclose(table["exp(coef)"], np.exp(flat.mean(0)))  # exp of the coef printed, as lifelines
    np.testing.assert_allclose(table["se(coef)"], flat.std(0, ddof=1), rtol=1e-3)
    np.testing.assert_allclose(table["coef lower 95%"], np.quantile(flat, 0.025, axis=0), rtol=1e-6)
    # equal-tailed intervals commute with exp (up to the interpolation between draws)
    np.testing.assert_allclose(table["exp(coef) upper 95%"], np.exp(table["coef upper 95%"]), rtol=1e-3)
    assert (table["r_hat"] < 1.01).all() and (table["ess_bulk"] > 1000).all()
    hdi = fit_summary(posterior, "beta", interval=0.5, kind="hdi")
    assert "coef lower 50%" in hdi.columns and (hdi.attrs["interval"], hdi.attrs["kind"]) == (0.5, "hdi")
    assert (hdi["coef lower 50%"] < hdi["coef"]).all() and (hdi["coef"] < hdi["coef upper 50%"]).all()
    assert (hdi["exp(coef) lower 50%"] < hdi["exp(coef) upper 50%"]).all()
    assert fit_summary(posterior).index.tolist() == ["beta[fin]", "beta[prio]"]  # the coefficients
    assert fit_summary(posterior, ["p", "beta"]).index.tolist() == ["p", "beta[fin]", "beta[prio]"]
    with pytest.warns(FutureWarning, match="fit_summary"):
        old = survival_summary(posterior)  # the deprecated alias: every variable, on the fitted scale
    assert old.index.tolist() == ["beta[fin]", "beta[prio]", "p"]
    pd.testing.assert_frame_equal(old, fit_summary(posterior, ["beta", "p"], scale="fitted"))


def test_summary_labels_per_cell_coefficients_by_cell():
    """An intercept (or shape) per cell, as the exit-table Weibull fit without proportional hazards
    draws it, is one row per cell, labelled as ArviZ labels it; only a batch of fits is refused."""
    rng = np.random.default_rng(6)
    cells = xr.Dataset(
        {
            "intercept": (("chain", "draw", "cell"), rng.normal([0.2, -0.4], 0.1, (2, 300, 2))),
            "shape": (("chain", "draw", "cell"), rng.lognormal(0.0, 0.1, (2, 300, 2))),
        },
        coords={"cell": ["control", "treated"]},
    )
    table = fit_summary(cells, ["intercept", "shape"])
    assert table.index.tolist() == ["intercept[control]", "intercept[treated]", "shape[control]", "shape[treated]"]
    np.testing.assert_allclose(table["coef"].iloc[:2], cells["intercept"].mean(("chain", "draw")).values)
    batched = xr.Dataset({"beta": (("chain", "draw", "fit", "feature"), rng.normal(size=(2, 10, 3, 2)))})
    with pytest.raises(ValueError, match="batched fit"):
        fit_summary(batched)


def test_summary_refuses_unknown_variables_and_bad_intervals():
    posterior = _posterior(p=(np.ones((1, 3)),))
    with pytest.raises(ValueError, match=r"var_names \['beta'\] are not in the posterior"):
        fit_summary(posterior, ["beta"])
    with pytest.raises(ValueError, match="no 'intercept' or 'beta'.*var_names"):
        fit_summary(posterior)
    with pytest.raises(ValueError, match="interval"):
        fit_summary(posterior, "p", interval=0.0)
    with pytest.raises(ValueError, match="kind"):
        fit_summary(posterior, "p", kind="quantile")


# ---------------------------------------------------------------------------------------------
# The package's models: names and dims line up
# ---------------------------------------------------------------------------------------------


def _as_posterior(idata) -> xr.DataTree:
    return xr.DataTree.from_dict({"posterior": idata["prior"].to_dataset()})


def test_weibull_model_variables_are_read(rossi):
    X = rossi[["fin", "prio"]]
    with weibull_model(rossi["week"] / 52, rossi["arrest"], X):
        prior = pm.sample_prior_predictive(50, var_names=["p", "intercept", "beta"], random_seed=0, compile_kwargs=CVM)
    idata = _as_posterior(prior)
    post = idata["posterior"]
    x = pd.Series({"prio": 2.0, "fin": 1.0})
    draws = survival_draws(idata, [26.0], x=x, horizon=52).values[..., 0]
    lam = np.exp(post["intercept"] + post["beta"].sel(feature="fin") + 2.0 * post["beta"].sel(feature="prio"))
    np.testing.assert_allclose(draws, np.exp(-((0.5 / lam.values) ** post["p"].values)))
    assert fit_summary(idata, ["beta"]).index.tolist() == ["beta[fin]", "beta[prio]"]


def test_discrete_time_model_variables_are_read():
    rng = np.random.default_rng(5)
    data = DiscreteTimeData.from_times(
        rng.uniform(-0.5, 0.5, (40, 2)), rng.uniform(0, 1, 40), rng.integers(0, 2, 40), q=8, e=3
    )
    with discrete_time_model(data, feature_names=["a", "b"]):
        prior = pm.sample_prior_predictive(50, var_names=["alpha", "beta"], random_seed=0, compile_kwargs=CVM)
    idata = _as_posterior(prior)
    draws = survival_draws(idata, [1.0], x={"a": 0.2, "b": 0.1}, basis=data.basis).values[..., 0]
    post = idata["posterior"]
    z = post["alpha"].values @ data.basis.T + (post["beta"].values @ [0.2, 0.1])[..., None]
    np.testing.assert_allclose(draws, np.prod(1 - expit(z), axis=-1), rtol=1e-10, atol=1e-15)


# ---------------------------------------------------------------------------------------------
# Plot
# ---------------------------------------------------------------------------------------------


def test_plot_draws_the_curve_and_band():
    import matplotlib.pyplot as plt

    rng = np.random.default_rng(6)
    posterior = _posterior(p=(rng.uniform(1.0, 1.5, (2, 100)),), lam=(rng.uniform(1.0, 2.0, (2, 100)),))
    fig, ax = plt.subplots()
    t = np.linspace(0.0, 2.0, 21)
    assert plot_survival_function(posterior, t[::-1], ax=ax, color="C2", label="Weibull", interval=0.9) is ax
    (line,) = ax.get_lines()
    curve = survival_function(posterior, t, interval=0.9)
    np.testing.assert_allclose(line.get_ydata(), curve["mean"])  # drawn in time order
    assert line.get_label() == "Weibull" and line.get_drawstyle() == "default"
    (band,) = ax.collections
    assert band.get_label() == "90% credible band (ETI)"
    plt.close(fig)
    # a discrete-time curve falls in steps at the interval ends
    fig, ax = plt.subplots()
    discrete = _posterior(alpha=(rng.normal(-2, 0.1, (2, 10, 3)),))
    plot_survival_function(discrete, np.linspace(0, 1, 41), ax=ax, basis=interval_basis(8, 3))
    assert ax.get_lines()[0].get_drawstyle() == "steps-post"
    with pytest.raises(ValueError, match="band_alpha"):
        plot_survival_function(discrete, [0.5], ax=ax, basis=interval_basis(8, 3), band_alpha=2.0)
    plt.close(fig)


# ---------------------------------------------------------------------------------------------
# A real posterior (NUTS, exact likelihood) against lifelines on rossi
# ---------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_nuts_posterior_on_rossi_matches_lifelines(rossi):
    """Weibull AFT on rossi (fin, age, prio centred), non-private NUTS against lifelines' MLE.

    Measured (seed 3): coefficients within 0.25 of lifelines' standard errors, p = 1.34 against 1.40
    (the marginal posterior of a Weibull shape sits below the joint mode, which is biased upward
    with few events), the curve at the mean profile within 0.006 of lifelines' and within 0.028
    of Kaplan–Meier (a population curve, not one profile's: model and profile differ from it)."""
    X = rossi[["fin", "age", "prio"]]
    X = X - X.mean()
    with weibull_model(rossi["week"] / 52, rossi["arrest"], X):
        idata = pm.sample(500, tune=500, chains=2, cores=1, random_seed=3, progressbar=False, compile_kwargs=CVM)
    ref = WeibullAFTFitter().fit(X.assign(week=rossi["week"], arrest=rossi["arrest"]), "week", "arrest")
    table = fit_summary(idata, ["beta", "p"])
    mle = ref.params_["lambda_"][["fin", "age", "prio"]].to_numpy()
    se = ref.standard_errors_["lambda_"][["fin", "age", "prio"]].to_numpy()
    assert (np.abs(table["coef"].iloc[:3].to_numpy() - mle) < 0.5 * se).all()
    rho = np.exp(ref.params_[("rho_", "Intercept")])
    assert abs(table.loc["p", "coef"] - rho) < table.loc["p", "se(coef)"]
    assert (table["r_hat"] < 1.02).all()
    curve = survival_function(idata, WEEKS, horizon=52)
    expected = ref.predict_survival_function(pd.DataFrame([[0.0, 0.0, 0.0]], columns=["fin", "age", "prio"]), WEEKS)
    np.testing.assert_allclose(curve["mean"], expected.to_numpy()[:, 0], atol=0.01)
    km = KaplanMeierFitter().fit(rossi["week"], rossi["arrest"]).survival_function_at_times(WEEKS).to_numpy()
    assert np.abs(curve["mean"].to_numpy() - km).max() < 0.04

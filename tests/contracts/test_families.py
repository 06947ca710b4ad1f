"""Every model family speaks one vocabulary (as scikit-learn's ``check_estimator`` holds every
estimator to one API): ``release_<family>_stats``, ``<family>_model``, ``predict_<family>``; prior
scales named ``<variable>_<parameter>``; coefficients ``beta`` on the dim ``feature``; the
released statistics an observed ``likelihood`` with predictive draws; the fitted model records its
family, release kind and prediction transform; builders and predictors refuse another family's
statistics or posterior, naming both families."""

import inspect

import numpy as np
import pandas as pd
import pymc as pm
import pytest
import xarray as xr

import pm_private as pp
from pm_private.released.family import check_posterior, recorded_fit, registered_families
from pm_private.survival import survival_function

RNG = np.random.default_rng(0)
X = pd.DataFrame(RNG.normal(size=(400, 2)), columns=["age", "dose"])
ETA = X.to_numpy() @ [0.5, -0.3]


def _linear():
    y = ETA + RNG.normal(size=400)
    return pp.release_linear_stats(X, y, epsilon=1.0, delta=1e-6, x_bound=3.0, y_bound=3.0, rng=1)


def _logistic():
    y = RNG.uniform(size=400) < 1 / (1 + np.exp(-ETA))
    return pp.release_logistic_stats(X, y, epsilon=1.0, delta=1e-6, x_bound=3.0, rng=1)


def _poisson():
    y = RNG.poisson(np.exp(ETA))
    return pp.release_poisson_stats(X, y, epsilon=1.0, delta=1e-6, x_bound=3.0, y_bound=5, rng=1)


#: family -> (a release of it, the release kind it records, the prediction transform)
FAMILIES = {
    "linear": (_linear, "linear_stats_gaussian", "identity"),
    "logistic": (_logistic, "logistic_stats", "logit"),
    "poisson": (_poisson, "poisson_stats", "log"),
}
#: Suffixes of prior-scale keywords: the parameter of the prior, as PyMC names it.
PRIOR_PARAMETERS = ("_sigma", "_alpha", "_beta", "_eta")


@pytest.fixture(scope="module")
def fitted():
    """family -> (release, model, a posterior DataTree made of prior draws: same groups as pm.sample's)."""
    out = {}
    for name, (release, _, _) in FAMILIES.items():
        stats = release()
        model = getattr(pp, f"{name}_model")(stats)
        with model:
            prior = pm.sample_prior_predictive(draws=40, random_seed=2)
        posterior = xr.DataTree.from_dict(
            {"posterior": prior["prior"].to_dataset(), "constant_data": prior["constant_data"].to_dataset()}
        )
        out[name] = (stats, model, prior, posterior)
    return out


@pytest.mark.parametrize("name", FAMILIES)
def test_the_family_names_its_release_builder_and_predictor(name):
    release, builder, predictor = f"release_{name}_stats", f"{name}_model", f"predict_{name}"
    for function in (release, builder, predictor):
        assert callable(getattr(pp, function)), function
    family = registered_families()[name]
    assert (family.release, family.builder, family.predictor) == (release, builder, predictor)
    assert family.transform == FAMILIES[name][2]


@pytest.mark.parametrize("name", FAMILIES)
def test_prior_scales_are_named_variable_parameter(name):
    builder = getattr(pp, f"{name}_model")
    scales = [
        p.name
        for p in inspect.signature(builder).parameters.values()
        if isinstance(p.default, float) and p.name not in ("x_scale", "x_dof")
    ]
    assert scales, "the builder takes its prior scales as keywords"
    assert all(s.endswith(PRIOR_PARAMETERS) for s in scales), scales


@pytest.mark.slow
@pytest.mark.parametrize("name", FAMILIES)
def test_the_model_records_its_family_and_names_its_coefficients(name, fitted):
    stats, model, prior, posterior = fitted[name]
    record = {"family": name, "release": FAMILIES[name][1], "transform": FAMILIES[name][2]}
    assert recorded_fit(model) == record
    assert recorded_fit(posterior) == record
    assert model.named_vars_to_dims["beta"] == ("feature",)
    assert list(model.coords["feature"]) == ["age", "dose"]  # the release recorded the data frame's columns
    assert "likelihood" in model.observed_RVs[0].name
    assert prior["prior_predictive"]["likelihood"].sizes["draw"] == 40  # replicated releases


@pytest.mark.slow
@pytest.mark.parametrize("name", FAMILIES)
@pytest.mark.parametrize("other", FAMILIES)
def test_builders_and_predictors_refuse_another_family(name, other, fitted):
    stats, _, _, posterior = fitted[other]
    builder, predictor = getattr(pp, f"{name}_model"), getattr(pp, f"predict_{name}")
    if other == name:
        table = predictor(posterior, X.iloc[:3])
        assert len(table) == 3 and np.isfinite(table.to_numpy()).all()
        return
    with pytest.raises(ValueError, match=f"{name}_model needs {name} statistics.*{other} family.*{other}_model"):
        builder(stats)
    with pytest.raises(ValueError, match=f"predict_{name} needs a posterior of {name}_model.*{other} family"):
        predictor(posterior, X.iloc[:3])


@pytest.mark.slow
@pytest.mark.parametrize("name", FAMILIES)
def test_survival_functions_refuse_a_regression_posterior(name, fitted):
    posterior = fitted[name][3]
    with pytest.raises(ValueError, match=f"weibull_model or discrete_time_model.*{name} family"):
        survival_function(posterior, [0.5])


def test_a_survival_posterior_is_refused_by_the_regression_predictors():
    from pm_private.survival import weibull_model

    model = weibull_model(np.array([1.0, 2.0, 3.0]), np.array([1, 0, 1]), X.iloc[:3].to_numpy())
    assert recorded_fit(model)["family"] == "weibull"
    for name in FAMILIES:
        with pytest.raises(ValueError, match=f"predict_{name}.*weibull family"):
            check_posterior(model, registered_families()[name])


def test_a_posterior_without_a_record_is_checked_by_its_variables():
    """Draws given as a bare Dataset carry no record: the predictor checks what it needs."""
    draws = xr.Dataset({"beta": (("chain", "draw", "feature"), np.zeros((1, 5, 2)))})
    assert len(pp.predict_logistic(draws, X.iloc[:2])) == 2
    with pytest.raises(ValueError, match="no 'beta'"):
        pp.predict_poisson(xr.Dataset({"gamma": (("chain", "draw"), np.zeros((1, 5)))}), X.iloc[:2])

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
import pm_private.survival
from pm_private.families import FAMILIES as REGISTRY
from pm_private.families import family_of_kind, released_families
from pm_private.released.family import PRIOR_SUFFIXES, Hook, check_posterior, recorded_fit
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


#: The prior draws below only feed checks of records, names and dims: PyTensor's Python mode draws
#: them without compiling (the Ops' Python implementations call the same compiled kernels).
PYTHON_MODE = {"mode": "FAST_COMPILE"}


@pytest.fixture(scope="module")
def fitted():
    """family -> (release, model, a posterior DataTree made of prior draws: same groups as pm.sample's)."""
    out = {}
    for name, (release, _, _) in FAMILIES.items():
        stats = release()
        model = getattr(pp, f"{name}_model")(stats)
        with model:
            prior = pm.sample_prior_predictive(draws=40, random_seed=2, compile_kwargs=PYTHON_MODE)
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
    family = REGISTRY[name]
    assert (family.release.name, family.builder.name, family.predictor.name) == (release, builder, predictor)
    assert family.link.name == FAMILIES[name][2]


@pytest.mark.parametrize("name", FAMILIES)
def test_prior_scales_are_named_variable_parameter(name):
    builder = getattr(pp, f"{name}_model")
    scales = [
        p.name
        for p in inspect.signature(builder).parameters.values()
        if isinstance(p.default, float) and p.name not in ("x_scale", "x_dof")
    ]
    assert scales, "the builder takes its prior scales as keywords"
    assert all(s.endswith(PRIOR_SUFFIXES) for s in scales), scales


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
    with pytest.raises(ValueError, match=f"weibull_model, discrete_time_model or survival_model.*{name} family"):
        survival_function(posterior, [0.5])


def test_a_survival_posterior_is_refused_by_the_regression_predictors():
    from pm_private.survival import weibull_model

    model = weibull_model(np.array([1.0, 2.0, 3.0]), np.array([1, 0, 1]), X.iloc[:3].to_numpy())
    assert recorded_fit(model)["family"] == "weibull"
    for name in FAMILIES:
        with pytest.raises(ValueError, match=f"predict_{name}.*weibull family"):
            check_posterior(model, REGISTRY[name])


def test_a_posterior_without_a_record_is_checked_by_its_variables():
    """Draws given as a bare Dataset carry no record: the predictor checks what it needs."""
    draws = xr.Dataset({"beta": (("chain", "draw", "feature"), np.zeros((1, 5, 2)))})
    assert len(pp.predict_logistic(draws, X.iloc[:2])) == 2
    with pytest.raises(ValueError, match="no 'beta'"):
        pp.predict_poisson(xr.Dataset({"gamma": (("chain", "draw"), np.zeros((1, 5)))}), X.iloc[:2])


@pytest.mark.slow
@pytest.mark.parametrize("name", FAMILIES)
def test_predictors_take_columns_by_name_and_refuse_unknown_ones(name, fitted):
    posterior = fitted[name][3]
    predictor = getattr(pp, f"predict_{name}")
    rows = X.iloc[:4]
    expected = predictor(posterior, rows).to_numpy()
    np.testing.assert_array_equal(predictor(posterior, rows[["dose", "age"]]).to_numpy(), expected)
    np.testing.assert_array_equal(predictor(posterior, rows.to_numpy()).to_numpy(), expected)  # arrays: the fit's order
    with pytest.raises(ValueError, match=r"lacks \['dose'\].*unknown columns \['weight'\]"):
        predictor(posterior, rows.rename(columns={"dose": "weight"}))


@pytest.mark.slow
@pytest.mark.parametrize("name", FAMILIES)
def test_predictors_refuse_a_posterior_with_non_finite_draws(name, fitted):
    posterior = fitted[name][3].copy()
    beta = posterior["posterior"]["beta"].copy()
    beta[0, 0, 0] = np.nan
    posterior["posterior"] = posterior["posterior"].to_dataset().assign(beta=beta)
    with pytest.raises(ValueError, match="NaN or infinite"):
        getattr(pp, f"predict_{name}")(posterior, X.iloc[:2])


@pytest.mark.slow
@pytest.mark.parametrize("name", ["logistic", "poisson"])
def test_a_glm_release_carries_its_public_preprocessing_to_the_predictor(name, fitted, tmp_path):
    from pm_private.release_file import read_release_file, release_to_dict, write_release_file

    prep = pp.Preprocessing(x_center=[1.0, -2.0], x_scale=[2.0, 0.5])
    raw = X * [2.0, 0.5] + [1.0, -2.0]  # rows whose preprocessed values are X
    y = RNG.uniform(size=len(X)) < 0.5 if name == "logistic" else RNG.poisson(1.0, size=len(X))
    bounds = {"y_bound": 5} if name == "poisson" else {}
    release = getattr(pp, f"release_{name}_stats")(
        raw, y, epsilon=1.0, delta=1e-6, x_bound=3.0, preprocessing=prep, rng=1, **bounds
    )
    assert release.preprocessing is prep
    plain = getattr(pp, f"release_{name}_stats")(X, y, epsilon=1.0, delta=1e-6, x_bound=3.0, rng=1, **bounds)
    np.testing.assert_allclose(release.xx, plain.xx)  # the same noise on the same preprocessed rows
    path = tmp_path / "release.json"
    write_release_file(path, [release_to_dict(release)])
    back = read_release_file(path)[0]["release"]
    np.testing.assert_array_equal(back.preprocessing.x_center, prep.x_center)
    model = getattr(pp, f"{name}_model")(back)
    with model:
        prior = pm.sample_prior_predictive(draws=20, random_seed=3, compile_kwargs=PYTHON_MODE)
    posterior = xr.DataTree.from_dict(
        {"posterior": prior["prior"].to_dataset(), "constant_data": prior["constant_data"].to_dataset()}
    )
    predictor = getattr(pp, f"predict_{name}")
    bare = posterior["posterior"].to_dataset()  # no constant data: the rows are used as given
    np.testing.assert_allclose(
        predictor(posterior, raw.iloc[:3]).to_numpy(), predictor(bare, X.iloc[:3], x_bound=3.0).to_numpy()
    )
    with pytest.raises(ValueError, match="y_center"):
        getattr(pp, f"release_{name}_stats")(
            raw, y, epsilon=1.0, delta=1e-6, x_bound=3.0, preprocessing=pp.Preprocessing(y_center=1.0), **bounds
        )


def _public(hook: Hook):
    """The object of the hook's name in its family's package (``pm_private.logistic``, ``pm_private.survival``)."""
    import importlib

    return getattr(importlib.import_module(".".join(hook.module.split(".")[:2])), hook.name)


def test_every_family_with_a_release_is_held_to_the_vocabulary_here():
    """A new family joins this contract (its entry in ``FAMILIES``), its hooks are the public
    functions of its names, and ``pm-private fit`` can fit its release files."""
    released = {name for name, family in REGISTRY.items() if family.release is not None}
    # the exit-table families: their own tests below
    assert released == set(FAMILIES) | {"survival", "survival_regression"}
    for family in REGISTRY.values():
        hooks = [family.builder, family.predictor, family.release, family.release_type, family.setter]
        for hook in filter(None, hooks):
            assert _public(hook) is hook.resolve(), hook
    assert {family.name for family in released_families().values()} == released
    for family in released_families().values():
        assert family_of_kind(family.kind) is family and family.command


def _parameters(hook: Hook) -> dict[str, inspect.Parameter]:
    return dict(inspect.signature(hook.resolve()).parameters)


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_family_verb_has_the_one_signature(name):
    """One signature per verb, checked on the callables: the builder takes the statistics and
    keyword priors named ``<variable>_<parameter>``; the release takes the data then keyword-only
    ε, the accountant and the noise source; the predictor takes the fitted result first and the
    credible mass as ``interval``; the setter takes the statistics then the model (default: the
    model of the context)."""
    family = REGISTRY[name]
    KEYWORD = inspect.Parameter.KEYWORD_ONLY
    builder = _parameters(family.builder)
    priors = family.prior_defaults
    assert priors and all(builder[p].kind is KEYWORD for p in priors), "prior scales are keyword-only"
    assert all(v is None or (isinstance(v, float) and v > 0) for v in priors.values()), priors
    predictor = _parameters(family.predictor)
    assert list(predictor)[0] == "idata"
    assert "interval" in predictor and predictor["interval"].default == 0.95
    if family.release is not None:
        assert list(builder)[0] == "stats"
        assert all(p.kind is KEYWORD for p in list(builder.values())[1:]), "builder options are keyword-only"
        assert ("feature_names" in builder) == family.features
        release = _parameters(family.release)
        assert {"epsilon", "accountant", "rng"} <= {n for n, p in release.items() if p.kind is KEYWORD}
        plan = {n for n, p in _parameters(family.noise_plan).items() if p.kind is KEYWORD} - {"d"}
        assert plan <= set(release), "the noise plan reads the release's public arguments (and d)"
    if family.setter is not None:
        setter = _parameters(family.setter)
        assert list(setter)[:2] == ["stats", "model"] and setter["model"].default is None


def test_the_links_invert_what_the_predictors_apply():
    """Each family's link owns its inverse: σ for logistic, exp for Poisson, identity for linear,
    exp(−H₀·e^η) for proportional hazards."""
    eta = np.linspace(-3.0, 3.0, 7)
    np.testing.assert_allclose(REGISTRY["logistic"].link.inverse(eta), 1 / (1 + np.exp(-eta)))
    np.testing.assert_allclose(REGISTRY["poisson"].link.inverse(eta), np.exp(eta))
    np.testing.assert_array_equal(REGISTRY["linear"].link.inverse(eta), eta)
    hazard = np.array([0.0, 0.5, 2.0])
    np.testing.assert_allclose(REGISTRY["survival_regression"].link.inverse(0.3, hazard), np.exp(-hazard * np.exp(0.3)))
    surv = REGISTRY["discrete_time"].link.inverse(np.array([[0.0, 0.0]]))
    np.testing.assert_allclose(surv, [[0.5, 0.25]])


def test_reading_the_registry_imports_no_model_code():
    import subprocess
    import sys

    code = "import sys, pm_private.families as f; [str(x.builder) for x in f.FAMILIES.values()]; print('pymc' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_a_bare_linear_release_is_refused_by_name():
    """linear_model takes the LinearStats a release returns, not the Release record inside it."""
    release = _linear().releases[0]
    with pytest.raises(ValueError, match="linear_model takes LinearStats.*LinearStatsRelease"):
        pp.linear_model(release)


def _survival_release():
    rng = np.random.default_rng(3)
    arm = rng.choice(["control", "treated"], 300)
    return pp.release_survival_stats(
        rng.exponential(2.0, 300),
        rng.uniform(size=300) < 0.8,
        arm,
        edges=[1.0, 2.0, 3.0],
        cells=["control", "treated"],
        epsilon=1.0,
        delta=1e-6,
        rng=4,
    )


@pytest.mark.slow
def test_the_exit_table_family_speaks_the_vocabulary_and_refuses_the_regressions(fitted):
    """release_survival_stats, survival_model, predict_survival; beta on ``feature`` (the cells
    against the reference); the table an observed ``likelihood`` with replicated draws; regression
    statistics and posteriors refused by survival_model and predict_survival, and the other way round."""
    family = REGISTRY["survival"]
    assert (family.release.name, family.builder.name, family.predictor.name, family.link.name) == (
        "release_survival_stats",
        "survival_model",
        "predict_survival",
        "survival",
    )
    release = _survival_release()
    model = pp.survival_model(release)
    assert recorded_fit(model) == {"family": "survival", "release": "survival_stats", "transform": "survival"}
    assert model.named_vars_to_dims["beta"] == ("feature",) and list(model.coords["feature"]) == ["treated"]
    with model:
        prior = pm.sample_prior_predictive(draws=20, random_seed=1, compile_kwargs=PYTHON_MODE)
    assert prior["prior_predictive"]["likelihood"].shape[-1] == 2 * (2 * 3 + 1)
    posterior = xr.DataTree.from_dict(
        {"posterior": prior["prior"].to_dataset(), "constant_data": prior["constant_data"].to_dataset()}
    )
    assert np.isfinite(pp.predict_survival(posterior).to_numpy()).all()
    for other in FAMILIES:
        stats, _, _, other_posterior = fitted[other]
        with pytest.raises(ValueError, match=f"survival_model needs survival statistics.*{other} family"):
            pp.survival_model(stats)
        with pytest.raises(
            ValueError, match=f"{other}_model needs {other} statistics.*survival family.*survival_model"
        ):
            getattr(pp, f"{other}_model")(release)
        with pytest.raises(ValueError, match=f"predict_survival needs a posterior of survival_model.*{other} family"):
            pp.predict_survival(other_posterior)
        with pytest.raises(ValueError, match=f"predict_{other} needs a posterior of {other}_model.*survival family"):
            getattr(pp, f"predict_{other}")(posterior, X.iloc[:3])


@pytest.mark.slow
def test_the_survival_regression_family_speaks_the_vocabulary_and_refuses_the_others(fitted):
    """release_survival_regression_stats, survival_regression_model, predict_survival_regression;
    beta on ``feature`` (the covariates); the statistics an observed ``likelihood`` with replicated
    draws; the other families' statistics and posteriors refused, and the other way round."""
    family = REGISTRY["survival_regression"]
    assert (family.release.name, family.builder.name, family.predictor.name, family.link.name) == (
        "release_survival_regression_stats",
        "survival_regression_model",
        "predict_survival_regression",
        "survival",
    )
    rng = np.random.default_rng(5)
    X = pd.DataFrame(rng.normal(size=(400, 2)), columns=["age", "dose"])
    release = pp.release_survival_regression_stats(
        rng.exponential(1.0, 400), rng.uniform(size=400) < 0.8, X, edges=[0.5, 1.0, 2.0], x_bound=3.0,
        epsilon=1.0, delta=1e-6, rng=6,
    )  # fmt: skip
    model = pp.survival_regression_model(release)
    assert recorded_fit(model)["family"] == "survival_regression"
    assert model.named_vars_to_dims["beta"] == ("feature",) and list(model.coords["feature"]) == ["age", "dose"]
    with model:
        prior = pm.sample_prior_predictive(draws=20, random_seed=1, compile_kwargs=PYTHON_MODE)
    assert prior["prior_predictive"]["likelihood"].shape[-1] == 7 * 3 + 3
    posterior = xr.DataTree.from_dict(
        {"posterior": prior["prior"].to_dataset(), "constant_data": prior["constant_data"].to_dataset()}
    )
    curves = pp.predict_survival_regression(posterior, X.iloc[:3])
    assert curves.shape == (9, 4) and np.isfinite(curves[["mean", "lower", "upper"]].to_numpy()).all()
    with pytest.raises(ValueError, match="survival_model"):
        pp.survival_model(release)
    with pytest.raises(ValueError, match="predict_survival_regression needs a posterior of survival_regression_model"):
        pp.predict_survival_regression(fitted["logistic"][3], X.iloc[:3])
    for other in FAMILIES:
        stats = fitted[other][0]
        with pytest.raises(ValueError, match="survival_regression_model needs survival_regression statistics"):
            pp.survival_regression_model(stats)
        with pytest.raises(ValueError, match=f"{other}_model needs {other} statistics.*survival_regression family"):
            getattr(pp, f"{other}_model")(release)


def test_an_old_keyword_still_works_once_with_a_warning():
    """``prob`` and ``posterior`` are now ``interval`` and ``idata``: the old spellings answer the
    same, with a FutureWarning naming the new one; both at once is a TypeError."""
    draws = xr.Dataset({"beta": (("chain", "draw", "feature"), RNG.normal(size=(1, 20, 2)))})
    new = pp.predict_logistic(idata=draws, X=X.iloc[:2], interval=0.5)
    with pytest.warns(FutureWarning, match="'posterior' is now 'idata'"):
        old = pp.predict_logistic(posterior=draws, X=X.iloc[:2], interval=0.5)
    pd.testing.assert_frame_equal(old, new)
    with pytest.raises(TypeError, match="both 'posterior' and its new name 'idata'"):
        pp.predict_logistic(draws, X.iloc[:2], posterior=draws, idata=draws)


def test_the_linear_setter_takes_the_old_order_once_with_a_warning():
    """``set_linear_stats(name, stats, model)`` is now ``set_linear_stats(stats, model, name=...)``."""
    stats = _linear()
    model = pp.linear_model(stats)
    with pytest.warns(FutureWarning, match=r"set_linear_stats\(name, ...\) is now"):
        pp.set_linear_stats("likelihood", stats, model)
    pp.set_linear_stats(stats, model)  # the one order of every family's setter

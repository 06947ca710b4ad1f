"""pm_private.sample compiles a model once and refits it on new data without compiling, with
nutpie or PyMC's NUTS, and its result carries what the predictors read."""

import numpy as np
import pymc as pm
import pytest

import pm_private as pp

nutpie = pytest.importorskip("nutpie")

RNG = np.random.default_rng(0)
X = RNG.normal(size=(2000, 2))
Y = RNG.uniform(size=2000) < 1 / (1 + np.exp(-(X @ [1.0, -0.5] + 0.3)))


def _release(y, seed):
    return pp.release_logistic_stats(X, y, epsilon=3.0, delta=1e-6, x_bound=4.0, rng=seed)


@pytest.mark.slow
def test_nutpie_compiles_once_and_refits_the_new_data(monkeypatch):
    calls = []
    compile_model = nutpie.compile_pymc_model

    def counted(*args, **kwargs):
        calls.append(1)
        return compile_model(*args, **kwargs)

    monkeypatch.setattr(nutpie, "compile_pymc_model", counted)
    options, sample = [], nutpie.sample

    def recorded(*args, **kwargs):
        options.append(kwargs)
        return sample(*args, **kwargs)

    monkeypatch.setattr(nutpie, "sample", recorded)
    model = pp.logistic_model(_release(Y, 1), x_sample=None)
    first = pp.sample(model, draws=300, tune=300, random_seed=1, sampler="nutpie")
    pp.set_logistic_stats(_release(~Y, 2), model)  # labels flipped: the coefficients change sign
    second = pp.sample(model, draws=300, tune=300, random_seed=2, sampler="nutpie", adaptation="low_rank")
    assert len(calls) == 1
    assert options[0]["adaptation"] == "diag" and options[1]["adaptation"] == "low_rank"  # the family's, the caller's
    b1 = first["posterior"]["beta"].mean(("chain", "draw")).values
    b2 = second["posterior"]["beta"].mean(("chain", "draw")).values
    assert b1[0] > 0.5 and b2[0] < -0.5
    table = pp.predict_logistic(second, X[:3])  # reads fit_record and x_bound from constant_data
    assert len(table) == 3 and (table["mean"].between(0, 1)).all()


@pytest.mark.slow
def test_pymc_sampler_gives_the_same_groups():
    model = pp.logistic_model(_release(Y, 3), x_sample=None)
    idata = pp.sample(model, draws=200, tune=200, random_seed=3, sampler="pymc")
    assert {"posterior", "sample_stats", "constant_data"} <= set(idata.children)
    assert len(pp.predict_logistic(idata, X[:2])) == 2


def test_an_unknown_sampler_is_refused():
    model = pp.logistic_model(_release(Y, 4), x_sample=None)
    with pytest.raises(ValueError, match="sampler must be one of"):
        pp.sample(model, sampler="numpyro")


def test_nutpie_adapts_as_the_model_family_asks():
    """The survival regression's family asks nutpie for its low-rank mass matrix; a model no family
    built gets nutpie's default, and PyMC's NUTS in the command line a diagonal adaptation."""
    from pm_private.families import FAMILIES
    from pm_private.sampling.compiled_nuts import _family_adaptation
    from pm_private.survival import release_survival_regression_stats

    rng = np.random.default_rng(0)
    Xs = rng.normal(size=(400, 2))
    release = release_survival_regression_stats(
        rng.exponential(size=400), np.ones(400), Xs, edges=[0.5, 1.0], x_bound=4.0, epsilon=1.0, delta=1e-6, rng=0
    )
    assert _family_adaptation(pp.survival_regression_model(release)) == "low_rank"
    assert _family_adaptation(pp.logistic_model(_release(Y, 1), x_sample=None)) == "diag"
    with pm.Model() as plain:
        pm.Normal("z")
    assert _family_adaptation(plain) == "diag"
    assert FAMILIES["survival_regression"].start == "adapt_diag" and FAMILIES["linear"].start == "adapt_full"


def test_the_target_acceptance_is_the_model_family_s_unless_named(monkeypatch):
    """pm_private.sample asks NUTS for the family's target acceptance (0.9 for the survival
    regression, 0.8 elsewhere and for a model no family built); a named one wins."""
    import pm_private.sampling.compiled_nuts as compiled_nuts
    from pm_private.survival import release_survival_regression_stats

    asked = []
    monkeypatch.setattr(compiled_nuts, "_nutpie", lambda model, **options: asked.append(options["target_accept"]))
    rng = np.random.default_rng(0)
    release = release_survival_regression_stats(
        rng.exponential(size=400), np.ones(400), rng.normal(size=(400, 2)), edges=[0.5, 1.0], x_bound=4.0,
        epsilon=1.0, delta=1e-6, rng=0,
    )  # fmt: skip
    survival = pp.survival_regression_model(release)
    with pm.Model() as plain:
        pm.Normal("z")
    for model in (survival, pp.logistic_model(_release(Y, 1), x_sample=None), plain):
        pp.sample(model, sampler="nutpie")
    pp.sample(survival, sampler="nutpie", target_accept=0.95)
    assert asked == [0.9, 0.8, 0.8, 0.95]
    with pytest.raises(ValueError, match="target_accept must be in"):
        pp.sample(survival, sampler="nutpie", target_accept=1.0)


def test_a_family_refuses_an_unknown_start_or_adaptation():
    from pm_private.released.family import IDENTITY, Family, Hook

    common = dict(title="t", link=IDENTITY, builder=Hook("m:b"), predictor=Hook("m:p"))
    with pytest.raises(ValueError, match="start: 'laplace', 'adapt_full' or 'adapt_diag'"):
        Family(name="throwaway_start", start="pymc", **common)
    with pytest.raises(ValueError, match="nutpie_adaptation: 'diag' or 'low_rank'"):
        Family(name="throwaway_adaptation", nutpie_adaptation="dense", **common)
    with pytest.raises(ValueError, match=r"target_accept: in \(0, 1\)"):
        Family(name="throwaway_target", target_accept=1.5, **common)

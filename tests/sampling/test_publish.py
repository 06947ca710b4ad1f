"""publishable: only the posterior draws of the free random variables leave the data holder."""

import numpy as np
import pymc as pm
import pytest

from pm_private import publishable
from pm_private.sampling.sanitized import logistic_loss, sanitized_loss


@pytest.fixture(scope="module")
def sampled():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2)) / 2
    y = np.where(rng.random(30) < 0.5, -1.0, 1.0)
    with pm.Model(coords={"feature": ["a", "b"]}) as model:
        f = pm.Flat("f", dims="feature")
        pm.Deterministic("margin0", y[0] * (pm.math.dot(X[0], f)))  # a function of a record
        sanitized_loss("U", logistic_loss, f, (X, y), epsilon=1.0)
        idata = pm.sample(
            draws=30, tune=30, chains=1, random_seed=1, progressbar=False, compute_convergence_checks=False
        )
    return model, idata, X, y


@pytest.mark.slow
def test_raw_sampler_output_is_a_function_of_the_records(sampled):
    model, idata, X, y = sampled
    logp = model.compile_logp(mode="CVM")
    draws = idata.posterior["f"].values[0]
    lp = idata.sample_stats["lp"].values[0]
    # sample_stats.lp is the exact log-density ε/(2v)·U(f; D) at each draw: not publishable
    assert np.allclose(lp, [logp({"f": f}) for f in draws], rtol=1e-10)
    assert np.allclose(idata.posterior["margin0"].values[0], y[0] * draws @ X[0])


@pytest.mark.slow
def test_publishable_keeps_only_the_draws_of_free_random_variables(sampled):
    model, idata, _, _ = sampled
    release = publishable(idata, model=model)
    assert list(release.children) == ["posterior"]
    posterior = release["posterior"]
    assert list(posterior.data_vars) == ["f"]
    assert dict(posterior.attrs) == {} and dict(release.attrs) == {} and posterior["f"].attrs == {}
    assert posterior["f"].dims == ("chain", "draw", "feature")
    assert list(posterior["feature"].values) == ["a", "b"]
    np.testing.assert_array_equal(posterior["f"].values, idata.posterior["f"].values)
    with model:
        assert list(publishable(idata)["posterior"].data_vars) == ["f"]


@pytest.mark.slow
@pytest.mark.parametrize("var_names, match", [(["margin0"], "refused: \\['margin0'\\]"), (["U"], "refused")])
def test_publishable_refuses_deterministics_and_potentials(sampled, var_names, match):
    model, idata, _, _ = sampled
    with pytest.raises(ValueError, match=match):
        publishable(idata, var_names, model=model)


def test_publishable_needs_a_posterior():
    with pm.Model() as model:
        pm.Normal("a")
    with pytest.raises(ValueError, match="idata must be the output of pm.sample"):
        publishable({"sample_stats": None}, model=model)

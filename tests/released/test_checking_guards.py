"""release_check refuses draws that are not of the model, naming ``idata``, instead of failing
inside PyTensor or checking the model against draws from its prior."""

import warnings

import numpy as np
import pymc as pm
import pytest

from pm_private import release_survival_stats, survival_model
from pm_private.released import release_check

#: Prior draws that stand in for a posterior in checks of names, records and refusals: PyTensor's
#: Python mode draws them without compiling (the Ops' Python implementations call the same kernels).
PYTHON_MODE = {"mode": "FAST_COMPILE"}

REFUSED = r"idata: .*(not the posterior of this model|has no draws of)"


def _release(cells, edges=(1.0, 2.0), n=400):
    rng = np.random.default_rng(0)
    arm = rng.choice(cells, n)
    time = rng.exponential(2.0, n)
    return release_survival_stats(time, np.ones(n), arm, edges=list(edges), cells=cells, epsilon=1.0, delta=1e-6, rng=0)


def _draws(release):
    with survival_model(release) as model, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prior = pm.sample_prior_predictive(10, random_seed=0, compile_kwargs=PYTHON_MODE)
    return model, {"posterior": prior["prior"]}


@pytest.fixture(scope="module")
def fits():
    return {
        "two cells": _draws(_release(["a", "b"])),
        "three cells": _draws(_release(["a", "b", "c"])),
        "three intervals": _draws(_release(["a", "b"], edges=(1.0, 2.0, 3.0))),
    }


@pytest.mark.parametrize(
    "draws_of, model_of",
    [("two cells", "three cells"), ("three cells", "two cells"), ("two cells", "three intervals")],
)
def test_another_models_draws_are_refused_naming_idata(fits, draws_of, model_of):
    with pytest.raises(ValueError, match=REFUSED):
        release_check(fits[draws_of][1], fits[model_of][0], random_seed=1)


def test_draws_missing_a_free_variable_are_refused_not_drawn_from_the_prior(fits):
    model, draws = fits["two cells"]
    partial = {"posterior": draws["posterior"].to_dataset().drop_vars("beta")}
    with pytest.raises(ValueError, match=r"idata: its posterior has no draws of \['beta'\]"):
        release_check(partial, model, random_seed=1)
    with pm.Model() as other:
        pm.Normal("z")
        unrelated = pm.sample_prior_predictive(10, random_seed=0, compile_kwargs=PYTHON_MODE)
    del other
    with pytest.raises(ValueError, match=r"idata: its posterior has no draws of \["):
        release_check({"posterior": unrelated["prior"]}, model, random_seed=1)


def test_the_models_own_draws_still_pass(fits):
    model, draws = fits["two cells"]
    table = release_check(draws, model, random_seed=1)
    assert list(table.columns) == ["observed", "mean", "sd", "z", "p_value"]

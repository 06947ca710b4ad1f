"""release_check: the released statistics against replicates from the posterior."""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytest

from pm_private import release_survival_stats, survival_model
from pm_private.released import release_check

#: Prior draws that stand in for a posterior in checks of names, records and refusals: PyTensor's
#: Python mode draws them without compiling (the Ops' Python implementations call the same kernels).
PYTHON_MODE = {"mode": "FAST_COMPILE"}

CELLS = ["a", "b"]


def _release(n=3000, seed=0, crossing=False):
    """Exponential event times, hazard ratio 2/3 (proportional), or with ``crossing`` a Weibull
    shape 3 in arm b, whose survival curve crosses arm a's; uniform censoring."""
    rng = np.random.default_rng(seed)
    arm = rng.choice(CELLS, n)
    T = rng.exponential(np.where(arm == "b", 3.0, 2.0))
    if crossing:
        T = np.where(arm == "b", 2.5 * rng.weibull(3.0, n), T)
    censor = rng.uniform(0, 8, n)
    time, event = np.minimum(T, censor), T <= censor
    return release_survival_stats(
        time, event, arm, edges=[1.0, 2.0, 3.0, 4.0], cells=CELLS, epsilon=1.0, delta=1e-6, rng=seed
    )


def _check(release):
    with survival_model(release) as model:
        # PyMC's NUTS loads the compiled model from the disk cache; nutpie (PyMC's default where
        # installed) compiles it again on every call
        idata = pm.sample(
            300, tune=300, chains=1, random_seed=1, progressbar=False, target_accept=0.9, nuts_sampler="pymc"
        )
    return release_check(idata, model, random_seed=2), model


@pytest.mark.slow
def test_the_check_passes_the_model_that_made_the_release_and_flags_hazards_it_cannot_fit():
    table, model = _check(_release())
    assert list(table.index) == list(model.coords["exit"])
    np.testing.assert_allclose(table["observed"], model["exit_table"].get_value())
    assert table.attrs["p_value"] > 0.01 and (table["p_value"] < 0.01).mean() < 0.2
    crossing, _ = _check(_release(n=10_000, crossing=True))  # proportional hazards fitted to crossing curves
    assert crossing.attrs["p_value"] < 0.01
    assert np.abs(crossing["z"]).max() > 3


def test_the_check_refuses_a_variable_that_is_not_observed():
    with survival_model(_release(n=500)) as model:
        prior = pm.sample_prior_predictive(10, random_seed=0, compile_kwargs=PYTHON_MODE)
    with pytest.raises(ValueError, match="var_name"):
        release_check({"posterior": prior["prior"]}, model, var_name="beta")

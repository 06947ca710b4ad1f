"""RefittableNUTS: one compiled NUTS step, refitted after pm.set_data."""

import numpy as np
import pymc as pm
import pytest

from pm_private.sampling import RefittableNUTS


@pytest.mark.slow
def test_refit_follows_the_new_data_and_reuses_the_step():
    with pm.Model() as model:
        data = pm.Data("y", np.zeros(50))
        mu = pm.Normal("mu", 0.0, 10.0)
        pm.Normal("obs", mu, 1.0, observed=data)
    nuts = RefittableNUTS(model, draws=300, tune=300, random_seed=3)
    step = nuts.step
    first = float(nuts.fit().posterior["mu"].mean())
    pm.set_data({"y": np.full(50, 4.0)}, model=model)
    second = float(nuts.fit().posterior["mu"].mean())
    # Posterior means 0 and ≈ 4 (sd 1/√50 ≈ 0.14): each fit sees the data of its time.
    assert abs(first) < 0.1 and abs(second - 4.0) < 0.1
    assert nuts.step is step and len(nuts.times) == 2 and nuts.seed == 5
    # PyMC's convergence checks stay on for users; every fit's divergences are recorded.
    assert nuts.checks is True and nuts.divergences == [0, 0]


@pytest.mark.slow
def test_divergences_are_counted_and_reported_by_pymc(caplog):
    with pm.Model() as funnel:  # Neal's funnel: NUTS diverges in the neck
        log_scale = pm.Normal("log_scale", 0.0, 3.0)
        pm.Normal("x", 0.0, pm.math.exp(log_scale), shape=9)
    nuts = RefittableNUTS(funnel, draws=200, tune=200, target_accept=0.6, random_seed=1)
    with caplog.at_level("WARNING", logger="pymc"):
        idata = nuts.fit()
    assert nuts.divergences[0] == int(idata["sample_stats"]["diverging"].sum()) > 0
    assert "diverg" in caplog.text.lower()

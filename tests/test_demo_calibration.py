"""The demo's calibration study reports its own NUTS convergence summary (PyMC's checks are off there)."""

import numpy as np
import pytest


@pytest.mark.slow
def test_calibration_study_reports_divergences_and_split_rhat():
    from pm_private.demo import calibration_study

    coverage = calibration_study(reps=2, n=200, draws=60)
    assert {"divergent", "max_rhat"} <= set(coverage.columns)
    health = coverage.groupby("model", sort=False)[["divergent", "max_rhat"]].nunique()
    assert (health == 1).all().all()  # one summary per model, repeated on its rows
    assert coverage.divergent.between(0, 1).all() and np.isfinite(coverage.max_rhat).all()
    assert (coverage.max_rhat > 0.9).all()

"""RefittableNutpie: compiled once, each fit on the model's current data."""

from __future__ import annotations

import numpy as np
import pytest

from pm_private import release_survival_stats, survival_model
from pm_private.sampling import RefittableNutpie
from pm_private.survival import set_survival_stats

pytest.importorskip("nutpie")

EDGES, CELLS = [1.0, 2.0, 3.0], ["a", "b"]


def _release(seed: int, ratio: float):
    rng = np.random.default_rng(seed)
    arm = rng.choice(CELLS, 1500)
    time = rng.exponential(np.where(arm == "b", 2.0 * ratio, 2.0))
    return release_survival_stats(time, np.ones(1500), arm, edges=EDGES, cells=CELLS, epsilon=2.0, delta=1e-6, rng=seed)


@pytest.mark.slow
def test_a_refit_samples_the_swapped_data_as_a_model_compiled_on_them_does():
    first, second = _release(0, 1.0), _release(1, 2.0)  # hazard ratio 1, then 1/2
    fitter = RefittableNutpie(survival_model(first), draws=300, tune=300, random_seed=5)
    before = fitter.fit()["posterior"]["beta"].values
    set_survival_stats(second, fitter.model)
    after = fitter.fit()["posterior"]["beta"].values
    fresh = RefittableNutpie(survival_model(second), draws=300, tune=300, random_seed=6).fit()
    np.testing.assert_array_equal(after, fresh["posterior"]["beta"].values)  # same data, same seed
    assert abs(before.mean()) < 0.15 and abs(after.mean() + np.log(2.0)) < 0.15
    assert len(fitter.times) == 2 and fitter.compile_time > 0

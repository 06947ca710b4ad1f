"""The GLM release's public noise figure printed beside a fit's summary."""

import numpy as np
import pytest

from pm_private import logistic_bounds, release_logistic_stats
from pm_private.logistic import logistic_stats
from pm_private.released.glm import glm_signal_to_noise


def test_the_figure_is_the_release_noise_on_sigma_yx_over_root_n_and_the_bound_rule_keeps_it_at_one():
    rng = np.random.default_rng(0)
    n, d = 50_000, 4
    X, y = rng.normal(size=(n, d)), rng.uniform(size=n) < 0.3
    bounds = logistic_bounds(n, d, 1.0, 1e-6)
    release = release_logistic_stats(X, y, epsilon=1.0, delta=1e-6, x_bound=bounds.x_bound, rng=0)
    figures = glm_signal_to_noise(release)
    assert figures["sampling_sd"] == pytest.approx(np.sqrt(n))
    assert figures["yx_noise_sd"] == pytest.approx(np.sqrt(release.noise_variance()[-d:].mean()))
    assert figures["yx_noise_to_sampling"] == pytest.approx(1.0, rel=1e-3)  # the rule's balance
    looser = release_logistic_stats(X, y, epsilon=1.0, delta=1e-6, x_bound=2 * bounds.x_bound, rng=0)
    assert glm_signal_to_noise(looser)["yx_noise_to_sampling"] > 3.0  # noise ∝ Bx² + 2
    assert glm_signal_to_noise(logistic_stats(X, y))["yx_noise_to_sampling"] == 0.0

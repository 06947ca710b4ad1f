"""The GLM release's public noise figure printed beside a fit's summary, and the warning a fit raises."""

import warnings

import numpy as np
import pytest

from pm_private import logistic_bounds, logistic_model, poisson_model, release_logistic_stats, release_poisson_stats
from pm_private.logistic import logistic_stats
from pm_private.released.family import NoiseDominatedWarning
from pm_private.released.glm import VALIDATED_YX_NOISE_TO_SAMPLING, glm_signal_to_noise, glm_signal_to_noise_warning


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


def test_a_fit_warns_once_outside_the_validated_range_and_not_inside_it():
    rng = np.random.default_rng(1)
    n, d = 2000, 3
    X, y = rng.normal(size=(n, d)), rng.uniform(size=n) < 0.4
    counts = rng.poisson(2.0, size=n)
    inside = release_logistic_stats(X, y, epsilon=1.0, delta=1e-6, x_bound=3.0, rng=0)
    assert glm_signal_to_noise_warning(glm_signal_to_noise(inside)) is None
    with warnings.catch_warnings():
        warnings.simplefilter("error", NoiseDominatedWarning)
        logistic_model(inside)
        logistic_model(logistic_stats(X, y))  # exact statistics: no noise, no warning
    for build, release in (
        (logistic_model, release_logistic_stats(X, y, epsilon=0.1, delta=1e-6, x_bound=30.0, rng=0)),
        (poisson_model, release_poisson_stats(X, counts, epsilon=0.1, delta=1e-6, x_bound=30.0, y_bound=20, rng=0)),
    ):
        ratio = glm_signal_to_noise(release)["yx_noise_to_sampling"]
        assert ratio > VALIDATED_YX_NOISE_TO_SAMPLING
        with pytest.warns(NoiseDominatedWarning, match="yx_noise_to_sampling") as record:
            build(release)
        assert sum(issubclass(w.category, NoiseDominatedWarning) for w in record) == 1
        assert f"{ratio:.3g}" in str(record[0].message)
        with warnings.catch_warnings():  # the noise is the model's only when noise_aware
            warnings.simplefilter("error", NoiseDominatedWarning)
            build(release, noise_aware=False)

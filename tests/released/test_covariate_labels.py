"""The covariate law's variables are labelled by feature: ``x_sd[age]``, and each partial
correlation by its pair of features, ``x_partial_corr[age,dose]``, rather than by position."""

import numpy as np
import pandas as pd
import pymc as pm
import pytest

import pm_private as pp
from pm_private.released.covariates import lkj_cholesky

RNG = np.random.default_rng(0)
X = pd.DataFrame(RNG.normal(size=(400, 3)), columns=["age", "dose", "bmi"])


def _logistic():
    y = RNG.uniform(size=400) < 0.5
    return pp.logistic_model(pp.release_logistic_stats(X, y, epsilon=1.0, delta=1e-6, x_bound=3.0, rng=1))


def _poisson():
    y = RNG.poisson(1.0, 400)
    release = pp.release_poisson_stats(X, y, epsilon=1.0, delta=1e-6, x_bound=3.0, y_bound=5, rng=1)
    return pp.poisson_model(release)


def _survival_regression():
    release = pp.release_survival_regression_stats(
        RNG.exponential(1.0, 400), RNG.uniform(size=400) < 0.8, X, edges=[0.5, 1.0, 2.0], x_bound=3.0,
        epsilon=1.0, delta=1e-6, rng=6,
    )  # fmt: skip
    return pp.survival_regression_model(release)


@pytest.mark.parametrize("build", [_logistic, _poisson, _survival_regression])
def test_the_covariate_law_is_labelled_by_feature(build):
    model = build()
    assert model.named_vars_to_dims["x_sd"] == ("feature",)
    assert model.named_vars_to_dims["x_partial_corr"] == ("feature_pair",)
    assert list(model.coords["feature_pair"]) == ["age,dose", "age,bmi", "dose,bmi"]  # tril_indices order


def test_labels_follow_the_model_s_features_and_fall_back_to_positions():
    with pm.Model(coords={"feature": ["a"]}):
        lkj_cholesky(1, 1.0, 1.0)
        assert pm.modelcontext(None).named_vars_to_dims["x_sd"] == ("feature",)
    with pm.Model() as unnamed:  # no feature coordinate: positions, as before
        lkj_cholesky(2, 1.0, 1.0)
    assert "x_sd" not in unnamed.named_vars_to_dims and "feature_pair" not in unnamed.coords
    with pm.Model(coords={"feature": ["a,b", "c", "a", "b,c"]}) as clash:  # "a,b,c" twice: positions
        lkj_cholesky(4, 1.0, 1.0)
    assert clash.named_vars_to_dims["x_sd"] == ("feature",) and "x_partial_corr" not in clash.named_vars_to_dims

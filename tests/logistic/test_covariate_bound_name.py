"""The covariate bound is ``x_bound`` in every logistic mechanism; the former ``norm_bound`` is
accepted for one release with a FutureWarning, and release records written under it read back."""

import numpy as np
import pytest

from pm_private import DPElasticNetLogisticRegression, PrivacyAccountant, data_perturbation_sgd, select_penalty
from pm_private.release_file import release_from_dict, release_to_dict


def _data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = (X @ [1.0, -1.0, 0.5] + rng.normal(size=n) > 0).astype(int)
    return X, y


def test_data_perturbation_takes_the_old_keyword_with_a_warning_and_the_same_result():
    X, y = _data()
    new = data_perturbation_sgd(X, y, epsilon=1.0, delta=1e-5, x_bound=2.0, rng=3)
    with pytest.warns(FutureWarning, match="'norm_bound' is now 'x_bound'"):
        old = data_perturbation_sgd(X, y, epsilon=1.0, delta=1e-5, norm_bound=2.0, rng=3)
    np.testing.assert_array_equal(old.coef, new.coef)
    assert old.x_bound == new.x_bound == 2.0
    with pytest.raises(TypeError, match="both"):
        data_perturbation_sgd(X, y, epsilon=1.0, delta=1e-5, x_bound=2.0, norm_bound=2.0, rng=3)


def test_penalty_selection_takes_the_old_keyword_with_a_warning():
    X, y = _data(600)
    common = dict(lams=[0.5, 1.0], alpha=0.5, epsilon=2.0, delta=1e-5, rng=4)
    new = select_penalty(X, y, x_bound=1.5, **common)
    with pytest.warns(FutureWarning, match="'norm_bound' is now 'x_bound'"):
        old = select_penalty(X, y, norm_bound=1.5, **common)
    assert old.lam == new.lam
    np.testing.assert_array_equal(old.model.coef_, new.model.coef_)


def test_the_estimator_takes_the_old_parameter_with_a_warning_and_the_same_fit():
    X, y = _data()
    new = DPElasticNetLogisticRegression(epsilon=2.0, lam=0.5, x_bound=2.0, rng=5).fit(X, y)
    with pytest.warns(FutureWarning, match="'norm_bound' is now 'x_bound'"):
        old = DPElasticNetLogisticRegression(epsilon=2.0, lam=0.5, norm_bound=2.0, rng=5).fit(X, y)
    np.testing.assert_array_equal(old.coef_, new.coef_)
    assert old.privacy_.x_bound == 2.0
    assert "norm_bound" not in DPElasticNetLogisticRegression().__repr__()  # the default is not shown
    accountant = PrivacyAccountant(epsilon=10.0)
    both = DPElasticNetLogisticRegression(epsilon=2.0, x_bound=3.0, norm_bound=2.0, accountant=accountant, rng=5)
    with pytest.raises(TypeError, match="both 'norm_bound' and its new name 'x_bound'"):
        both.fit(X, y)
    assert accountant.spent == (0.0, 0.0)  # refused before any charge


@pytest.mark.parametrize("kind", ["data_perturbation", "elastic_net"])
def test_a_record_written_under_the_old_field_name_reads_back(kind):
    X, y = _data()
    if kind == "data_perturbation":
        release = data_perturbation_sgd(X, y, epsilon=1.0, delta=1e-5, x_bound=2.0, rng=3)
    else:
        release = DPElasticNetLogisticRegression(epsilon=2.0, lam=0.5, x_bound=2.0, rng=5).fit(X, y).privacy_
    entry = release_to_dict(release)
    assert entry["parameters"]["x_bound"] == 2.0
    entry["parameters"]["norm_bound"] = entry["parameters"].pop("x_bound")
    read = release_from_dict(entry)
    assert read.x_bound == 2.0
    np.testing.assert_array_equal(read.coef, release.coef)

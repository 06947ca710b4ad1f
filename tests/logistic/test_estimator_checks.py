"""DPElasticNetLogisticRegression is a scikit-learn classifier: ``check_estimator``, one test per check.

The instances are configured for the checks:

* ``epsilon=100.0, lam=0.01``: ``check_classifiers_train`` asks for training accuracy > 0.83 on
  about 200 standardised points whose rows are clipped to ‖x‖₁ ≤ 1.  At the defaults (ε = 1,
  λ = 1) the objective noise and the heavy penalty bring the accuracy below that: the
  privacy–utility trade-off, not a bug.  With ε = 100 the noise is small and the guarantee
  is still ε-DP (with ε = 100).
* ``rng=0``: a seeded fit is reproducible, so refits agree exactly (idempotence, sample-order
  and subset invariance, pickling).  A second instance holds an accountant with a budget that
  the checks' few hundred fits cannot exhaust; a third uses the secure default ``rng=None``.

Checks are excused only where the failure is inherent to the privacy guarantee; each is listed
below with its reason.
"""

import doctest

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import cross_val_score
from sklearn.utils.estimator_checks import parametrize_with_checks

import pm_private.logistic.data_perturbation as data_perturbation
import pm_private.logistic.elastic_net as elastic_net
import pm_private.logistic.penalty_selection as penalty_selection
from pm_private.logistic import DPElasticNetLogisticRegression
from pm_private.privacy.accountant import PrivacyAccountant
from pm_private.privacy.budget import BudgetExceededError

#: Excused for every instance.
INHERENT = {
    "check_non_transformer_estimators_n_iter": (
        "n_iter_ would publish the solver's iteration count, a function of the private data and "
        "the noise that is not part of the ε-DP output; the release holds only the coefficients"
    ),
}

#: Excused for the secure default rng=None only: every fit draws fresh noise from the OS.
SECURE_NOISE = {
    "check_fit_idempotent": (
        "with rng=None every fit is a new release with fresh secure noise: refitting the same "
        "data gives different coefficients (a reproducible fit needs a seed, which is not private)"
    ),
    "check_classifier_data_not_an_array": (
        "compares the predictions of two fits on the same data; with fresh secure noise they "
        "differ near the decision boundary of the check's tiny data set"
    ),
    "check_supervised_y_2d": (
        "compares the predictions of two fits on the same data (y as a column and as a vector); "
        "with fresh secure noise a few points near the decision boundary can flip"
    ),
}

SEEDED = DPElasticNetLogisticRegression(epsilon=100.0, lam=0.01, rng=0)
ACCOUNTED = DPElasticNetLogisticRegression(epsilon=100.0, lam=0.01, rng=0, accountant=PrivacyAccountant(1e12))
SECURE = DPElasticNetLogisticRegression(epsilon=100.0, lam=0.01)


def expected_failures(estimator) -> dict[str, str]:
    """The excused checks of an instance, with their reasons."""
    return {**INHERENT, **(SECURE_NOISE if estimator.rng is None else {})}


@parametrize_with_checks([SEEDED, ACCOUNTED, SECURE], expected_failed_checks=expected_failures)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def test_secure_instance_is_tagged_non_deterministic():
    assert SECURE.__sklearn_tags__().non_deterministic
    assert not SEEDED.__sklearn_tags__().non_deterministic
    assert not SEEDED.__sklearn_tags__().classifier_tags.multi_class


# --- behaviour the checks do not cover -----------------------------------------------------------


def _data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    return X, (X[:, 0] - X[:, 1] > 0).astype(int)


def test_clones_share_the_accountant_so_cross_validation_is_charged():
    """Each fit of a clone (grid search, cross-validation) is a release on the same data."""
    X, y = _data()
    accountant = PrivacyAccountant(2.0)
    model = DPElasticNetLogisticRegression(epsilon=0.5, lam=0.5, x_bound=3.0, accountant=accountant, rng=0)
    assert clone(model).accountant is accountant
    cross_val_score(model, X, y, cv=3)
    assert accountant.spent == (pytest.approx(1.5), 0.0)
    with pytest.raises(BudgetExceededError):
        cross_val_score(model, X, y, cv=3, error_score="raise")


def test_unfitted_use_raises_not_fitted():
    for method in ("predict", "predict_proba", "decision_function"):
        with pytest.raises(NotFittedError):
            getattr(DPElasticNetLogisticRegression(), method)(np.ones((2, 3)))


def test_fitted_attributes_and_feature_names():
    X, y = _data()
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    model = DPElasticNetLogisticRegression(epsilon=5.0, lam=0.05, x_bound=3.0, rng=0).fit(frame, y)
    assert model.n_features_in_ == 3 and list(model.feature_names_in_) == ["a", "b", "c"]
    np.testing.assert_array_equal(model.classes_, [0, 1])
    plain = DPElasticNetLogisticRegression(epsilon=5.0, lam=0.05, x_bound=3.0, rng=0).fit(X, y)
    assert not hasattr(plain, "feature_names_in_")
    np.testing.assert_array_equal(plain.coef_, model.coef_)


def test_labels_any_two_values_and_the_positive_class_is_the_second():
    X, y = _data()
    names = np.array(["no", "yes"])[y]
    model = DPElasticNetLogisticRegression(epsilon=5.0, lam=0.05, x_bound=3.0, rng=0).fit(X, names)
    reference = DPElasticNetLogisticRegression(epsilon=5.0, lam=0.05, x_bound=3.0, rng=0).fit(X, y)
    np.testing.assert_array_equal(model.coef_, reference.coef_)
    np.testing.assert_array_equal(model.predict(X), np.array(["no", "yes"])[reference.predict(X)])
    signed = DPElasticNetLogisticRegression(epsilon=5.0, lam=0.05, x_bound=3.0, rng=0).fit(X, 2 * y - 1)
    np.testing.assert_array_equal(signed.classes_, [-1, 1])
    np.testing.assert_array_equal(signed.coef_, reference.coef_)


def test_one_class_needs_the_public_label_set():
    """The label values are public: from classes, or (default) both must occur in y."""
    X = _data()[0]
    accountant = PrivacyAccountant(5.0)
    with pytest.raises(ValueError, match="one class"):
        DPElasticNetLogisticRegression(accountant=accountant, rng=0).fit(X, np.ones(len(X)))
    assert accountant.spent == (0.0, 0.0)
    model = DPElasticNetLogisticRegression(lam=0.5, classes=[0, 1], accountant=accountant, rng=0)
    model.fit(X, np.ones(len(X)))
    np.testing.assert_array_equal(model.classes_, [0, 1])
    assert accountant.spent == (1.0, 0.0)
    with pytest.raises(ValueError, match="not in classes"):
        DPElasticNetLogisticRegression(classes=[0, 1], accountant=accountant).fit(X, np.full(len(X), 2))
    with pytest.raises(ValueError, match="exactly two"):
        DPElasticNetLogisticRegression(classes=[0, 1, 2], accountant=accountant).fit(X, np.ones(len(X)))
    assert accountant.spent == (1.0, 0.0)


@pytest.mark.parametrize(
    "X, message",
    [
        ([["secret-7", "1.0"]] * 4, "X must be numeric"),
        (np.array([[1 + 7j, 1.0]] * 4), "Complex data not supported"),
        (np.array([7.123456, 1.0, 2.0, 3.0]), "Reshape your data"),
    ],
)
def test_input_errors_do_not_quote_the_data(X, message):
    accountant = PrivacyAccountant(5.0)
    with pytest.raises(ValueError, match=message) as info:
        DPElasticNetLogisticRegression(accountant=accountant).fit(X, [0, 1, 0, 1])
    assert "7" not in str(info.value) and info.value.__cause__ is None
    assert accountant.spent == (0.0, 0.0)


@pytest.mark.parametrize(
    "obj",
    [
        elastic_net.DPElasticNetLogisticRegression,
        penalty_selection.select_penalty,
        data_perturbation.data_perturbation_sgd,
    ],
    ids=lambda obj: obj.__name__,
)
def test_docstring_examples_run(obj):
    finder = doctest.DocTestFinder(recurse=False)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    (test,) = finder.find(obj, obj.__name__, globs={})
    assert test.examples, f"{obj.__name__} has no Examples"
    result = runner.run(test)
    assert result.failed == 0

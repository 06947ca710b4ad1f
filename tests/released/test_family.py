"""A family that fits another family's statistics (a model with another link on the same release)."""

import numpy as np
import pytest

import pm_private.released.family as family_module
from pm_private.families import FAMILIES
from pm_private.logistic import logistic_stats
from pm_private.poisson import poisson_stats
from pm_private.released.family import Family, Hook, Link, check_stats


@pytest.fixture
def registry(monkeypatch):
    """Families declared in a test stay out of the library's registry."""
    monkeypatch.setattr(family_module, "_REGISTRY", dict(family_module._REGISTRY))


def _probit(**fields):
    return Family(
        name="probit_in_a_test",
        title="probit regression",
        link=Link("probit", np.asarray),
        builder=Hook("pm_private.somewhere:probit_model"),
        predictor=Hook("pm_private.somewhere:predict_probit"),
        statistics_of="logistic",
        **fields,
    )


def test_a_family_of_another_familys_statistics_takes_them_and_refuses_others(registry):
    probit = _probit()
    X, rng = np.ones((4, 2)), np.random.default_rng(0)
    check_stats(logistic_stats(X, rng.integers(0, 2, 4)), probit)
    with pytest.raises(ValueError, match=r"probit_model needs logistic statistics \(from .*release_logistic_stats\)"):
        check_stats(poisson_stats(X, rng.integers(0, 3, 4), y_bound=3), probit)
    with pytest.raises(ValueError, match="logistic_model needs logistic statistics"):
        check_stats(poisson_stats(X, rng.integers(0, 3, 4), y_bound=3), FAMILIES["logistic"])


def test_a_family_of_another_familys_statistics_declares_no_release(registry):
    with pytest.raises(ValueError, match="statistics_of: a family that fits the logistic statistics has no release"):
        _probit(release=Hook("pm_private.somewhere:release_probit_stats"))

"""The real-data study's summaries (the study itself runs in the drug-sensitivity notebook)."""

import numpy as np
import pandas as pd

from pm_private import Preprocessing, release_suff_stats_gaussian
from studies.real_data_regression import METHODS, goal_check, load, public_covariance, table


def _results():
    rows = []
    for rep in range(3):
        rows.append(("toy", np.inf, rep, "OLS", 0.5, 0.7))
        for eps, base in ((0.5, 0.1), (1.0, 0.2), (2.0, 0.3)):
            for method, offset in zip(METHODS[:4], (0.0, -0.1, -0.4, -0.05), strict=True):
                rows.append(("toy", eps, rep, method, base + offset + 0.01 * rep, 0.5))
    return pd.DataFrame(rows, columns=["data", "epsilon", "release", "method", "r2", "spearman"])


def test_table_has_one_cell_per_data_set_epsilon_and_method():
    wide = table(_results())
    assert list(wide.columns) == [*METHODS[:4], "OLS (non-private)"]
    assert wide.loc[("toy", 1.0), METHODS[0]] == "+0.210 ± 0.006 / 0.500"
    assert wide.loc[("toy", 1.0), "OLS (non-private)"] == "+0.500 / 0.700"


def test_goal_check_compares_with_adassp_at_epsilon_from_one():
    check = goal_check(_results())
    assert list(check.index.get_level_values("epsilon")) == [1.0, 2.0]
    assert check[">= AdaSSP"].all() and check[">= 0"].all()
    np.testing.assert_allclose(check["difference"], 0.05)  # paired over releases: no spread
    np.testing.assert_allclose(check["difference se"], 0.0, atol=1e-12)
    worse = goal_check(_results(), method=METHODS[2])  # Honkela et al.'s model is below AdaSSP here
    assert not worse[">= AdaSSP"].any() and not worse[">= 0"].any()


def test_shipped_data_and_public_preprocessing():
    X, y, names = load("diabetes")
    assert X.shape == (442, 10) and len(names) == 10
    prep = Preprocessing.from_public(X[:30], y[:30])
    np.testing.assert_allclose(prep.transform_x(X[:30]).mean(axis=0), 0, atol=1e-12)


def test_public_covariance_uses_the_release_transform():
    X, y, _ = load("diabetes")
    prep = Preprocessing.from_public(X[:30], y[:30])
    bound = 0.5 * np.sqrt(X.shape[1])  # a projection that bites
    stats = release_suff_stats_gaussian(
        X[30:], y[30:], epsilon=1.0, delta=1e-5, x_bound=bound, y_bound=2.0, preprocessing=prep, rng=0
    )
    cov = public_covariance(stats, X[:30])
    np.testing.assert_allclose(cov, cov.T)
    assert np.linalg.eigvalsh(cov).min() > 0
    assert np.trace(cov) <= bound**2 + 1e-9  # second moments of rows projected onto the ball

"""The real-data study's summaries (the study itself runs in the drug-sensitivity notebook)."""

import numpy as np
import pandas as pd
import pytest

from models.linear_real_data import (
    COLUMNS,
    METHODS,
    goal_check,
    honkela_precision,
    inference_table,
    load,
    ols_scores,
    public_covariance,
    table,
)
from pm_private import Preprocessing, release_linear_stats


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
    stats = release_linear_stats(
        X[30:], y[30:], epsilon=1.0, delta=1e-5, x_bound=bound, y_bound=2.0, preprocessing=prep, rng=0
    )
    cov = public_covariance(stats, X[:30])
    np.testing.assert_allclose(cov, cov.T)
    assert np.linalg.eigvalsh(cov).min() > 0
    assert np.trace(cov) <= bound**2 + 1e-9  # second moments of rows projected onto the ball


def test_star98_is_a_regression_of_the_share_above_the_median():
    X, y, names = load("star98")
    assert X.shape == (303, 20) and len(names) == 20 and ((0 < y) & (y < 1)).all()


def test_ols_intervals_cover_at_their_level_on_well_specified_data():
    rng = np.random.default_rng(0)
    covers = []
    for _ in range(40):
        X = rng.normal(size=(200, 3))
        y = X @ [0.5, -1.0, 0.2] + rng.normal(size=200)
        prep = Preprocessing.from_public(X[:30], y[:30])
        truth = np.linalg.lstsq(prep.transform_x(X), prep.transform_y(y), rcond=None)[0]  # the full-data OLS
        covers.append(ols_scores(prep.transform_x(X[:150]), prep.transform_y(y[:150]), prep, X[150:], y[150:], truth))
    r2, _, coef_cover, y_cover = np.mean(covers, axis=0)
    assert r2 > 0.4 and coef_cover > 0.9 and 0.85 < y_cover < 0.95  # the 150 rows are most of the full data


def test_honkela_noise_precision_matches_the_residual_variance():
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, size=(5000, 2))
    y = X @ [1.0, -0.5] + 0.5 * rng.normal(size=5000)
    stats = release_linear_stats(X, y, epsilon=500.0, delta=1e-6, x_bound=2.0, y_bound=4.0, rng=0)
    precision = honkela_precision(stats, np.tile([1.0, -0.5], (200, 1)), rng)
    assert np.mean(precision) == pytest.approx(4.0, rel=0.05)  # 1/0.5²


def test_inference_table_averages_the_interval_columns():
    rows = [("toy", 1.0, r, METHODS[0], 0.2, 0.5, 0.8 + 0.1 * r, 0.9, 0.01, 0.3, 0.05) for r in range(2)]
    rows.append(("toy", 1.0, 0, "AdaSSP", 0.2, 0.5, *[np.nan] * 5))
    got = inference_table(pd.DataFrame(rows, columns=COLUMNS))
    assert list(got.index) == [("toy", 1.0, METHODS[0])]
    assert got.loc[("toy", 1.0, METHODS[0]), "coef_cover"] == pytest.approx(0.85)

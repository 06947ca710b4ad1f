"""The real-data study's scores and summaries (the study itself runs in the drug-sensitivity notebook)."""

import numpy as np
import pandas as pd
import pytest

from models.linear_real_data import (
    COLUMNS,
    COVERAGE,
    METHODS,
    SCORES,
    bayes_scores,
    coverage_table,
    full_data_coefficients,
    goal_check,
    honkela_precision,
    inference_table,
    load,
    ols_scores,
    public_covariance,
    r2_change,
    table,
)
from pm_private import Preprocessing, release_linear_stats
from pm_private.linear.model import gibbs_regression


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
    assert stats.intercept and stats.d == X.shape[1] + 1
    moments = public_covariance(stats, X[:30])  # the design's second moments, the constant first
    assert moments.shape == (stats.d, stats.d) and moments[0, 0] == 1.0
    np.testing.assert_allclose(moments, moments.T)
    assert np.linalg.eigvalsh(moments).min() > 0
    mean = moments[0, 1:]
    np.testing.assert_allclose(mean, stats.xx[0, 1:] / stats.n)  # the released means (post-processing)
    covariance = moments[1:, 1:] - np.outer(mean, mean)
    assert np.trace(covariance) <= bound**2 + 1e-9  # covariance of rows projected onto the ball
    exact = release_linear_stats(
        X[30:], y[30:], epsilon=1.0, delta=1e-5, x_bound=bound, y_bound=2.0, preprocessing=prep, rng=0, intercept=False
    )
    assert public_covariance(exact, X[:30]).shape == (X.shape[1], X.shape[1])  # without the constant: as before


def test_randhie_is_the_large_data_set():
    X, y, names = load("randhie")
    assert X.shape == (20190, 9) and len(names) == 9 and "mdvis" not in names
    assert (y >= 0).all() and sum(np.isin(np.unique(X[:, j]), [0, 1]).all() for j in range(9)) >= 3  # binary columns


def test_star98_is_a_regression_of_the_share_above_the_median():
    X, y, names = load("star98")
    assert X.shape == (303, 20) and len(names) == 20 and ((0 < y) & (y < 1)).all()


def test_full_data_coefficients_have_an_intercept_whatever_the_public_centring():
    rng = np.random.default_rng(2)
    X = rng.normal(3.0, 1.0, size=(5000, 2))
    y = 4.0 + X @ [0.5, -1.0] + rng.normal(size=5000)
    prep = Preprocessing.from_public(X[:5], y[:5])  # five public rows: the centring is off
    coef = full_data_coefficients(prep, X, y)
    assert coef.shape == (3,)
    Xs, ys = prep.transform_x(X), prep.transform_y(y)
    assert abs(np.mean(ys - coef[0] - Xs @ coef[1:])) < 1e-10  # residuals of a fit with an intercept
    slopes = coef[1:] * prep.y_scale / prep.x_scale  # back on the original scale
    np.testing.assert_allclose(slopes, [0.5, -1.0], atol=0.05)


def test_ols_intervals_cover_at_their_level_on_well_specified_data():
    rng = np.random.default_rng(0)
    covers = []
    for _ in range(40):
        X = rng.normal(1.0, 1.0, size=(200, 3))
        y = 2.0 + X @ [0.5, -1.0, 0.2] + rng.normal(size=200)
        prep = Preprocessing.from_public(X[:10], y[:10])
        truth = full_data_coefficients(prep, X, y)
        covers.append(ols_scores(prep.transform_x(X[:150]), prep.transform_y(y[:150]), prep, X[150:], y[150:], truth))
    scores = dict(zip(SCORES, np.mean(covers, axis=0), strict=True))
    assert scores["r2"] > 0.4 and 0.85 < scores["y_cover"] < 0.95
    # the 150 rows are most of the full data, so its coefficients lie well inside the intervals
    assert scores["coef_cover"] > 0.9 and scores["slope_cover"] > 0.9 and scores["intercept_cover"] > 0.9
    assert scores["coef_cover_50"] > 0.5


def test_bayes_scores_take_the_intercept_first_and_cover_each_part():
    rng = np.random.default_rng(3)
    X = rng.normal(2.0, 1.0, size=(3000, 2))
    y = 1.0 + X @ [1.0, -0.5] + 0.5 * rng.normal(size=3000)
    prep = Preprocessing.from_public(X[:30], y[:30])
    stats = release_linear_stats(
        X[30:], y[30:], epsilon=5.0, delta=1e-6, x_bound=6.0, y_bound=8.0, preprocessing=prep, rng=0
    )
    truth = full_data_coefficients(prep, X, y)
    coef = truth + 0.01 * rng.standard_normal((400, 3))
    precision = np.full(400, (prep.y_scale / 0.5) ** 2)
    scores = dict(zip(SCORES, bayes_scores(prep, stats, coef, precision, X, y, truth, rng), strict=True))
    assert scores["r2"] > 0.8 and scores["coef_cover"] == 1.0 and scores["intercept_cover"] == 1.0
    assert 0.85 < scores["y_cover"] < 0.95
    shifted = truth + [1.0, 0.0, 0.0]  # an intercept outside the draws, slopes inside
    scores = dict(zip(SCORES, bayes_scores(prep, stats, coef, precision, X, y, shifted, rng), strict=True))
    assert scores["intercept_cover"] == 0.0 and scores["slope_cover"] == 1.0
    assert scores["coef_cover"] == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="intercept and slopes"):
        bayes_scores(prep, stats, coef[:, 1:], precision, X, y, truth, rng)


def test_honkela_noise_precision_matches_the_residual_variance():
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, size=(5000, 2))
    y = 1.0 + X @ [1.0, -0.5] + 0.5 * rng.normal(size=5000)
    stats = release_linear_stats(X, y, epsilon=500.0, delta=1e-6, x_bound=2.0, y_bound=4.0, rng=0)
    assert stats.intercept
    precision = honkela_precision(stats, np.tile([1.0, 1.0, -0.5], (200, 1)), rng)  # the intercept first
    assert np.mean(precision) == pytest.approx(4.0, rel=0.05)  # 1/0.5²
    slopes = honkela_precision(stats, np.tile([1.0, -0.5], (200, 1)), rng, intercept=np.full(200, 1.0))
    assert np.mean(slopes) == pytest.approx(4.0, rel=0.05)
    assert np.mean(honkela_precision(stats, np.tile([0.0, 1.0, -0.5], (200, 1)), rng)) < 1.0  # α left out: 1/(0.5² + 1)
    with pytest.raises(ValueError, match=r"\(S, 3\)"):
        honkela_precision(stats, np.tile([1.0, -0.5], (200, 1)), rng)
    draws = gibbs_regression(stats, draws=200, rng=0)  # the Gibbs sampler's draws carry the intercept column
    assert draws.shape == (200, 3) and np.mean(honkela_precision(stats, draws, rng)) == pytest.approx(4.0, rel=0.05)


def _scored(rows):
    return pd.DataFrame(rows, columns=COLUMNS)


def test_inference_table_averages_the_interval_columns():
    rows = [("toy", 1.0, r, METHODS[0], 0.2, 0.5, 0.8 + 0.1 * r, 0.5, 0.8, 1.0, 0.9, 0.01, 0.3, 0.05) for r in range(2)]
    rows.append(("toy", 1.0, 0, "AdaSSP", 0.2, 0.5, *[np.nan] * (len(SCORES) - 2), *[np.nan] * 3))
    got = inference_table(_scored(rows))
    assert list(got.index) == [("toy", 1.0, METHODS[0])]
    assert got.loc[("toy", 1.0, METHODS[0]), "coef_cover"] == pytest.approx(0.85)
    assert got.loc[("toy", 1.0, METHODS[0]), "intercept_cover"] == 1.0


def test_coverage_table_reports_monte_carlo_standard_errors():
    rows = [
        ("toy", 1.0, r, METHODS[0], 0.2, 0.5, cover, cover / 2, cover, float(r % 2), 0.9, 0.0, 0.1, 0.0)
        for r, cover in enumerate([0.8, 1.0, 0.8, 1.0])
    ]
    got = coverage_table(_scored(rows))
    assert list(got.columns) == [*COVERAGE, "releases"]
    cell = got.loc[("toy", 1.0, METHODS[0])]
    assert cell["coef_cover"] == "0.900 ± 0.058" and cell["intercept_cover"] == "0.500 ± 0.289"
    assert cell["releases"] == 4


def test_r2_change_compares_with_a_previous_study():
    now = _results()
    before = now.assign(r2=now.r2 + np.where(now.epsilon == 1.0, 0.1, 0.0))  # worse now at ε = 1 only
    got = r2_change(now, before)
    assert list(got.index) == [("toy", 0.5), ("toy", 1.0), ("toy", 2.0)]
    np.testing.assert_allclose(got["difference"], [0.0, -0.1, 0.0], atol=1e-12)
    assert list(got["worse by > se before"]) == [False, True, False]

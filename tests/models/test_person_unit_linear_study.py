"""The linear person-unit study's releases and scores, on a synthetic panel (the study itself
loads linearmodels' wage panel and fits 120 releases)."""

import numpy as np
import pytest

import pm_private as pp
from benchmarks.study_person_unit_linear import ROWS, coverage, ols, release


def _panel(persons=60, seed=0):
    rng = np.random.default_rng(seed)
    person = np.repeat(np.arange(persons), ROWS)
    X = rng.normal(size=(person.size, 3)) + rng.normal(size=(persons, 3))[person]
    y = X @ [0.5, -0.2, 0.1] + rng.normal(size=person.size)
    return X, y, person


def test_each_way_releases_what_it_names_and_the_ledger_prices_the_row_release_per_person():
    X, y, person = _panel()
    prep = pp.Preprocessing.from_public(X[:40], y[:40], keep_rows=False)
    public_y = prep.transform_y(y[:40])
    made = {}
    for way in ("person, 1 row", "person, 8 rows", "row"):
        accountant = pp.PrivacyAccountant(epsilon=1e3, delta=0.5)
        made[way] = release(way, X, y, person, prep, 1.0, public_y, accountant, np.random.default_rng(1))
        made[way, "ε"] = accountant.person_epsilon(ROWS, delta=1e-5)
    one, eight, row = (made[w].releases[0] for w in ("person, 1 row", "person, 8 rows", "row"))
    assert made["person, 1 row"].n == 60 and one.unit == "person" and one.neighbours == "replace-one"
    assert made["person, 8 rows"].n is None and eight.neighbours == "add-remove" and eight.max_rows == ROWS
    assert made["row"].n == person.size and row.unit != "person"
    # a person-level release costs a person ε; the row-level one costs a person of 8 rows far more
    assert made["person, 1 row", "ε"] == pytest.approx(1.0, rel=1e-6)
    assert made["row", "ε"] > 5.0


def test_ols_and_coverage_against_a_direct_computation():
    X, y, _ = _panel(seed=2)
    prep = pp.Preprocessing.from_public(X[:40], y[:40], keep_rows=False)
    coef, width = ols(prep, X, y)
    design = np.column_stack([np.ones(len(y)), prep.transform_x(X)])
    np.testing.assert_allclose(coef, np.linalg.lstsq(design, prep.transform_y(y), rcond=None)[0])
    assert width.shape == coef.shape and np.all(width > 0)
    draws = coef + np.random.default_rng(3).normal(size=(4000, coef.size)) * width / 3.29
    c50, c90, ratio = coverage(draws, coef, width)
    assert c50 == 1.0 and c90 == 1.0 and ratio == pytest.approx(1.0, abs=0.05)
    c50, c90, _ = coverage(draws, coef + 0.4 * width, width)  # 1.3 s.d. off: outside 50 %, inside 90 %
    assert c50 == 0.0 and c90 == 1.0

"""Survival data preparation: public bounds only, clear errors, and the FL loader."""

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pm_private.datasets import FLCHAIN_DOMAIN, load_flchain
from pm_private.survival import (
    censor_at_horizon,
    check_survival,
    flchain_unit_ball,
    interval_ends,
    interval_index,
    scale_covariates,
    scale_times,
)


@pytest.mark.parametrize(
    "time, event, message",
    [
        ([1.0, np.nan], [1, 0], "NaN"),
        ([1.0, -2.0], [1, 0], "≥ 0"),
        ([1.0, 2.0], [1, 2], "event must be 0 or 1"),
        ([1.0, 2.0], [1], "same length"),
        ([], [], "non-empty"),
    ],
)
def test_check_survival_refuses_bad_records(time, event, message):
    with pytest.raises(ValueError, match=message):
        check_survival(time, event)


def test_check_survival_accepts_booleans_and_returns_int8():
    t, d = check_survival([3, 1], [True, False])
    assert t.dtype == np.float64 and d.dtype == np.int8 and d.tolist() == [1, 0]


def test_times_beyond_the_horizon_are_refused_unless_censored_there():
    t, d = np.array([1.0, 5.0, 12.0]), np.array([1, 1, 1])
    with pytest.raises(ValueError, match=r"time exceeds the public horizon 10 \(first at index 2\)"):
        scale_times(t, horizon=10.0)
    t_c, d_c = censor_at_horizon(t, d, 10.0)
    assert t_c.tolist() == [1.0, 5.0, 10.0] and d_c.tolist() == [1, 1, 0]
    np.testing.assert_allclose(scale_times(t_c, horizon=10.0), [0.1, 0.5, 1.0])


def test_scale_times_floor_is_the_paper_003_domain():
    omega = 6.0
    s = scale_times([0.0, 1e-9, 50.0, 100.0], horizon=100.0, floor=np.exp(-omega))
    assert s.min() == np.exp(-omega) and s.max() == 1.0
    with pytest.raises(ValueError, match="horizon"):
        scale_times([1.0], horizon=0.0)
    with pytest.raises(ValueError, match="floor"):
        scale_times([1.0], horizon=1.0, floor=1.0)


def test_interval_index_edges():
    q = 4
    idx = interval_index([0.0, 0.25, 0.2500001, 0.5, 0.99, 1.0], q)
    assert idx.tolist() == [0, 0, 1, 1, 3, 3]
    assert idx.dtype == np.int64
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        interval_index([1.5], q)
    with pytest.raises(ValueError, match="q must be"):
        interval_index([0.5], 0)


def test_interval_index_is_exact_on_week_boundaries():
    # 27/52·52 = 27.000000000000004 in floating point: a ceil rule put week 27 in interval 27
    assert interval_index([26 / 52, 27 / 52, 28 / 52], 52).tolist() == [25, 26, 27]
    weeks = np.arange(0, 53)
    expected = np.maximum(weeks - 1, 0)
    assert interval_index(scale_times(weeks, horizon=52), 52).tolist() == expected.tolist()
    assert interval_index(interval_ends(52), 52).tolist() == list(range(52))  # each end closes its interval


def test_rossi_weeks_land_in_their_week():
    from lifelines.datasets import load_rossi

    rossi = load_rossi()
    week = rossi["week"].to_numpy()
    idx = interval_index(scale_times(week, horizon=52), 52)
    np.testing.assert_array_equal(idx, week - 1)  # a week-w arrest (or censoring) is in interval w − 1
    # two-week intervals: weeks 2s−1 and 2s are interval s − 1
    np.testing.assert_array_equal(interval_index(scale_times(week, horizon=52), 26), (week + 1) // 2 - 1)


def _integer_rule(t: int, horizon: int, q: int) -> int:
    return max(-(-t * q // horizon) - 1, 0)  # ⌈t·q/H⌉ − 1 in integers, 0 for t = 0


@settings(max_examples=300, deadline=None)
@given(
    q=st.integers(1, 2000),
    width=st.integers(1, 10_000),
    data=st.data(),
)
def test_multiples_of_the_width_land_in_the_interval_they_close(q, width, data):
    """k·w with horizon q·w (w an integer unit) is the end of interval k − 1."""
    k = data.draw(st.integers(0, q))
    t = scale_times([k * width], horizon=q * width)
    assert interval_index(t, q)[0] == max(k - 1, 0)


@settings(max_examples=300, deadline=None)
@given(
    q=st.integers(1, 1000),
    horizon=st.integers(1, 100_000),
    unit=st.sampled_from([1.0, 0.5, 0.25, 2.0**-10, 7.0]),
    data=st.data(),
)
def test_integer_grid_times_follow_the_integer_rule(q, horizon, unit, data):
    """Times and horizon on one exact grid (integer multiples of a binary unit): ⌈t·q/H⌉ − 1."""
    t = data.draw(st.integers(0, horizon))
    scaled = scale_times([t * unit], horizon=horizon * unit)
    assert interval_index(scaled, q)[0] == _integer_rule(t, horizon, q)


@settings(max_examples=300, deadline=None)
@given(q=st.integers(1, 500), t=st.floats(0.0, 1.0))
def test_any_double_is_placed_by_exact_comparison_with_the_boundaries(q, t):
    """The documented rule, in exact rational arithmetic: the number of ends s/q (as doubles) below t."""
    ends = [Fraction(float(np.float64(s) / q)) for s in range(1, q)]
    expected = sum(end < Fraction(t) for end in ends)
    assert interval_index([t], q)[0] == expected


def test_interval_ends_are_the_nearest_doubles():
    for q in (1, 3, 7, 52, 365):
        ends = interval_ends(q)
        assert ends[-1] == 1.0 and (np.diff(ends) > 0).all()
        assert [float(Fraction(s, q)) for s in range(1, q + 1)] == ends.tolist()  # correctly rounded s/q


def test_scale_covariates_projects_into_the_unit_ball():
    rng = np.random.default_rng(0)
    X = rng.normal(scale=3.0, size=(500, 4))
    Z = scale_covariates(X, bound=2.0, center=np.ones(4))
    norms = np.linalg.norm(Z, axis=1)
    assert norms.max() <= 1 + 1e-12
    inside = np.linalg.norm((X - 1) / 2.0, axis=1) <= 1
    np.testing.assert_allclose(Z[inside], ((X - 1) / 2.0)[inside])  # rows inside are untouched
    np.testing.assert_allclose(norms[~inside], 1.0)  # rows outside land on the sphere
    # per-column bounds and pandas input
    Z2 = scale_covariates(pd.DataFrame(X), bound=[2.0, 2.0, 2.0, 2.0], center=np.ones(4))
    np.testing.assert_allclose(Z, Z2)


@pytest.mark.parametrize(
    "kwargs, message",
    [(dict(bound=0.0), "bound"), (dict(bound=[1.0, 2.0]), "bound"), (dict(bound=1.0, center=[np.nan] * 3), "center")],
)
def test_scale_covariates_refuses_bad_bounds(kwargs, message):
    with pytest.raises(ValueError, match=message):
        scale_covariates(np.zeros((2, 3)), **kwargs)


def test_scale_covariates_refuses_nan():
    X = np.zeros((3, 2))
    X[2, 1] = np.nan
    with pytest.raises(ValueError, match="row 2"):
        scale_covariates(X, bound=1.0)


def test_load_flchain_shape_and_no_outcome_leak():
    data = load_flchain()
    assert data.X.shape == (7874, 8) and int(data.event.sum()) == 2169
    assert "chapter" not in data.X.columns
    assert np.isfinite(data.X.to_numpy()).all()
    assert data.time.max() <= data.horizon  # the public horizon covers the follow-up
    assert set(np.unique(data.event)) == {0, 1}
    with_flag = load_flchain(creatinine_missing=True)
    assert int(with_flag.X["creatinine_missing"].sum()) == 1350
    assert (with_flag.X.loc[with_flag.X["creatinine_missing"] == 1, "creatinine"] == 1.0).all()


def test_flchain_unit_ball_uses_the_public_domain():
    data = load_flchain()
    Z = flchain_unit_ball(data.X)
    assert np.linalg.norm(Z, axis=1).max() <= 1 + 1e-12
    # a record at the centre of every public range maps to the origin
    centre = pd.DataFrame([{c: sum(FLCHAIN_DOMAIN[c]) / 2 for c in data.X.columns}])
    np.testing.assert_allclose(flchain_unit_ball(centre), 0.0, atol=1e-12)

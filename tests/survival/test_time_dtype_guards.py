"""Dates and durations given as datetime64 / timedelta64 are refused by their dtype (a schema check
that reads no value), not taken as nanoseconds."""

import numpy as np
import pandas as pd
import pytest

from pm_private import release_survival_regression_stats, release_survival_stats
from pm_private.survival import censor_at_horizon, check_survival, scale_times

DATES = np.array(["2020-01-01", "2020-01-03", "2020-02-01"], dtype="datetime64[D]")
TIMES = [
    DATES,
    pd.Series(pd.to_datetime(["2020-01-01", "2020-01-03", "2020-02-01"])),
    pd.Series(pd.to_datetime(["2020-01-01", "2020-01-03", "2020-02-01"]).tz_localize("UTC")),
    np.array([1, 2, 30], dtype="timedelta64[D]"),
    pd.Series(pd.to_timedelta([1, 2, 30], unit="D")),
    list(DATES),
]
IDS = ["datetime64", "series", "series-tz", "timedelta64", "series-timedelta", "list-of-datetime64"]
REFUSED = r"time holds dates or durations \(.*\): convert them to numbers, the durations in the units of"


@pytest.mark.parametrize("time", TIMES, ids=IDS)
def test_check_survival_refuses_dates_and_durations(time):
    with pytest.raises(ValueError, match=REFUSED):
        check_survival(time, [1, 0, 1])
    with pytest.raises(ValueError, match=REFUSED):
        censor_at_horizon(time, [1, 0, 1], 10.0)
    with pytest.raises(ValueError, match=REFUSED):
        scale_times(time, horizon=10.0)


@pytest.mark.parametrize("time", TIMES[::3], ids=IDS[::3])
def test_the_survival_releases_refuse_dates_and_durations(time):
    with pytest.raises(ValueError, match=REFUSED):
        release_survival_stats(time, [1, 0, 1], edges=[5.0, 10.0], epsilon=1.0, delta=1e-6, rng=0)
    with pytest.raises(ValueError, match=REFUSED):
        release_survival_regression_stats(
            time, [1, 0, 1], np.zeros((3, 1)), edges=[5.0, 10.0], x_bound=1.0, epsilon=1.0, delta=1e-6, rng=0
        )


def test_numbers_still_pass():
    time, event = check_survival(pd.Series([1.0, 2.0, 30.0]), [True, False, True])
    assert time.tolist() == [1.0, 2.0, 30.0] and event.tolist() == [1, 0, 1]

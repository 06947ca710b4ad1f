"""Survival data with several rows per person (counting-process form): each person's history made
one record, checked against lifelines; the exit table's per-person sensitivity attained and never
exceeded when one person's whole history changes; the releases record the person as their unit."""

import numpy as np
import pandas as pd
import pytest
from lifelines import KaplanMeierFitter
from lifelines.datasets import load_stanford_heart_transplants

from pm_private import PrivacyAccountant, release_survival_stats
from pm_private.survival import person_histories, release_survival_regression_stats
from pm_private.survival.exits.outcomes import exit_counts

EDGES = np.array([50.0, 200.0, 500.0, 1000.0, 2000.0])


def test_histories_of_contiguous_intervals_give_the_kaplan_meier_curve_of_lifelines():
    """Stanford heart transplants (172 intervals of 103 persons): the Kaplan–Meier curve of the
    one-record-per-person data equals lifelines' curve of the intervals with their entry times."""
    data = load_stanford_heart_transplants()
    time, event, exit_rows, baseline = person_histories(data["id"], data["stop"], data["event"])
    assert time.size == data["id"].nunique() == 103
    assert (data["start"].to_numpy()[baseline] == 0).all()  # every history starts at entry
    records = KaplanMeierFitter().fit(time, event)
    intervals = KaplanMeierFitter().fit(data["stop"], data["event"], entry=data["start"])
    grid = np.linspace(0, 1800, 91)
    np.testing.assert_allclose(records.survival_function_at_times(grid), intervals.survival_function_at_times(grid))


def test_a_history_is_its_first_exit_with_its_baseline_row():
    unit = ["a", "b", "a", "a", "b", "c"]
    time = [1.0, 2.0, 3.0, 4.0, 5.0, 0.5]
    event = [0, 1, 1, 1, 0, 0]
    t, e, exit_rows, baseline = person_histories(unit, time, event)
    assert t.tolist() == [3.0, 2.0, 0.5] and e.tolist() == [1, 1, 0]
    assert exit_rows.tolist() == [2, 1, 5] and baseline.tolist() == [0, 1, 5]


def _history(rng):
    """A random history: 1…4 contiguous intervals from 0, events anywhere, a cell at each."""
    ends = np.cumsum(rng.exponential(300.0, size=rng.integers(1, 5)))
    return ends, (rng.uniform(size=ends.size) < 0.3).astype(int), rng.choice(["x", "y"], size=ends.size)


def _tables(histories):
    """(exit table of the persons' first exits, exit table of all intervals), flattened."""
    time, event, cell = (np.concatenate(parts) for parts in zip(*histories, strict=True))
    unit = np.repeat(np.arange(len(histories)), [h[0].size for h in histories])
    t, e, _, baseline = person_histories(unit, time, event)
    persons = np.concatenate(exit_counts(t, e, cell[baseline], EDGES, ("x", "y")), axis=None)
    return persons, np.concatenate(exit_counts(time, event, cell, EDGES, ("x", "y")), axis=None)


def test_per_person_sensitivity_of_the_exit_table_holds_for_whole_histories():
    """10⁴ pairs that differ in one person's whole history (any number of intervals, any cell at
    each): the table of first exits moves by at most √2 in ℓ2 and 2 in ℓ1, and a person moved from
    one exit to another attains both; the table of the intervals moves further."""
    rng = np.random.default_rng(3)
    worst_l2 = worst_l1 = worst_rows = 0.0
    for _ in range(10_000):
        others = [_history(rng) for _ in range(3)]
        (persons, rows), (persons2, rows2) = _tables([*others, _history(rng)]), _tables([*others, _history(rng)])
        worst_l2 = max(worst_l2, np.linalg.norm(persons - persons2))
        worst_l1 = max(worst_l1, np.abs(persons - persons2).sum())
        worst_rows = max(worst_rows, np.abs(rows - rows2).sum())
    assert worst_l2 == pytest.approx(np.sqrt(2)) and worst_l1 == 2
    assert worst_rows > 2


def test_person_level_releases_count_persons_and_record_the_unit():
    data = load_stanford_heart_transplants()
    surgery = data["surgery"].map({0: "no", 1: "yes"})
    accountant = PrivacyAccountant(3.0, 1e-5)
    release = release_survival_stats(
        data["stop"], data["event"], surgery, edges=EDGES, cells=["no", "yes"], epsilon=1.0, delta=1e-6,
        rng=np.random.default_rng(4), unit=data["id"], accountant=accountant,
    )  # fmt: skip
    time, event, _, baseline = person_histories(data["id"], data["stop"], data["event"])
    records = release_survival_stats(
        time, event, surgery.to_numpy()[baseline], edges=EDGES, cells=["no", "yes"], epsilon=1.0, delta=1e-6,
        rng=np.random.default_rng(4),
    )  # fmt: skip
    assert release.n == 103 and release.unit == "person" and records.unit == "record"
    np.testing.assert_array_equal(release.events, records.events)
    X = data[["age", "year"]]
    regression = release_survival_regression_stats(
        data["stop"], data["event"], X, edges=EDGES, x_bound=30.0, epsilon=1.0, delta=1e-6, rng=0,
        unit=data["id"], accountant=accountant,
    )  # fmt: skip
    assert regression.n == 103 and regression.unit == "person" and regression.features == ("age", "year")
    assert [entry.neighbours for entry in accountant.history] == ["replace-one person"] * 2


def test_bad_identifiers_and_dask_collections_are_refused_before_any_spend():
    accountant = PrivacyAccountant(1.0, 1e-5)
    time, event = np.array([1.0, 2.0, 3.0]), np.array([0, 1, 0])
    for unit, words in (([1, None, 2], "missing"), ([1, 2], "one identifier per row")):
        with pytest.raises(ValueError, match=words):
            release_survival_stats(time, event, edges=EDGES, epsilon=1.0, delta=1e-6, unit=unit, accountant=accountant)
    dd = pytest.importorskip("dask.dataframe")
    frame = dd.from_pandas(pd.DataFrame({"time": time, "event": event}), npartitions=1)
    with pytest.raises(ValueError, match="unit is not taken with Dask"):
        release_survival_stats(
            frame["time"], frame["event"], edges=EDGES, epsilon=1.0, delta=1e-6, unit=[1, 1, 2], accountant=accountant
        )
    assert accountant.history == ()


def test_the_weibull_release_takes_a_person_history_as_one_record():
    from pm_private.survival import weibull_private

    data = load_stanford_heart_transplants()
    accountant = PrivacyAccountant(2.0)
    release = weibull_private(
        data["stop"], data["event"], epsilon=1.0, horizon=2000.0, rng=0, unit=data["id"], accountant=accountant
    )
    assert release.n == 103 and release.unit == "person"
    assert accountant.history[0].neighbours == "replace-one person"


@pytest.mark.parametrize("mechanism", ["weibull_laplace", "weibull_sample_aggregate"])
def test_the_weibull_baselines_take_a_person_history_as_one_record(mechanism):
    """With ``unit`` the release is the one of the persons' histories made records by hand (the same
    seeded noise gives the same numbers), its n the persons, its unit and the ledger's relation a person."""
    import pm_private.survival as survival

    data = load_stanford_heart_transplants()
    release = getattr(survival, mechanism)
    options = dict(epsilon=1.0, horizon=2000.0, rng=0, **({"subset_size": 20} if "aggregate" in mechanism else {}))
    accountant = PrivacyAccountant(2.0)
    by_person = release(data["stop"], data["event"], unit=data["id"], accountant=accountant, **options)
    time, event, _, _ = person_histories(data["id"], data["stop"], data["event"])
    by_hand = release(time, event, **options)
    assert by_person.n == by_hand.n == 103 and by_person.unit == "person" and by_hand.unit == "record"
    assert (by_person.shape, by_person.scale) == (by_hand.shape, by_hand.scale)
    assert accountant.history[0].neighbours == "replace-one person"
    with pytest.raises(ValueError, match="unit"):
        release(data["stop"], data["event"], unit=data["id"][:5], accountant=accountant, **options)
    assert len(accountant.history) == 1  # the refused call spent nothing


@pytest.mark.parametrize("mechanism", ["output_perturbation", "objective_perturbation"])
def test_the_discrete_time_releases_take_a_person_history_as_one_record(mechanism):
    import pm_private.survival as survival

    data = load_stanford_heart_transplants()
    X = np.clip(data[["age"]].to_numpy() / 60.0, -1.0, 1.0)
    release = getattr(survival, mechanism)(
        X, data["stop"] / 2000.0, data["event"], epsilon=1.0, regularization=0.1, q=5, e=2, rng=0, unit=data["id"]
    )
    assert release.n == 103 and release.unit == "person"

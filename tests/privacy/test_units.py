"""The person as the unit of privacy: identifiers checked, one row per person chosen uniformly,
the per-person sensitivity attained and never exceeded, and the unit recorded where the release
and the ledger say what they protect."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import pm_private as pp
from pm_private import release_file
from pm_private.logistic.release import logistic_sensitivity
from pm_private.poisson.release import poisson_entry_weights, poisson_sensitivity
from pm_private.privacy import laplace_mechanism
from pm_private.privacy.budget import NoiseEvent
from pm_private.privacy.noise import as_noise_source
from pm_private.privacy.primitives import project_rows, symmetric_entry_weights
from pm_private.privacy.units import check_unit, neighbour_text, rows_kept_per_unit, rows_per_unit
from pm_private.released.degree2 import degree2_pairs
from pm_private.released.summary import _release_lines


def _weighted(X, y, bx, weights):
    """The vector the Gaussian mechanism of the GLM releases perturbs."""
    X = project_rows(np.asarray(X, dtype=float), bx)
    u = np.column_stack([np.ones(len(X)), X, y])
    a, b = degree2_pairs(X.shape[1])
    return weights * (u.T @ u)[a, b]


def test_identifiers_of_any_hashable_kind_become_codes_by_first_appearance():
    assert check_unit(None, 3) is None
    assert check_unit(["b", "a", "b"], 3).tolist() == [0, 1, 0]
    assert check_unit(pd.Series([7, 7, 2], index=[10, 11, 12]), 3).tolist() == [0, 0, 1]
    assert check_unit(np.array([1.5, 2.5, 1.5]), 3).tolist() == [0, 1, 0]


@pytest.mark.parametrize(
    ("unit", "words"),
    [
        ("abc", "one-dimensional"),
        (np.zeros((3, 2)), "one-dimensional"),
        ([[1], [2, 3], [4]], "hashable"),
        ([1, 2], "one identifier per row"),
        ([1, None, 2], "missing"),
        ([1.0, np.nan, 2.0], "missing"),
        (pd.Series([1, pd.NA, 2], dtype="Int64"), "missing"),
        (np.array([{"a": 1}, 1, 2], dtype=object), "hashable"),
    ],
)
def test_bad_identifiers_are_refused_naming_unit(unit, words):
    with pytest.raises(ValueError, match=words) as error:
        check_unit(unit, 3)
    assert str(error.value).startswith("unit")


def test_one_row_per_person_is_chosen_uniformly_among_their_rows():
    codes = np.array([0, 1, 1, 0, 2, 1, 1, 0])  # rows 1, 2, 5, 6 are person 1's
    source = as_noise_source(np.random.default_rng(0))
    counts = np.zeros(codes.size)
    for _ in range(4000):
        kept = rows_kept_per_unit(codes, source)
        assert sorted(codes[kept].tolist()) == [0, 1, 2]
        counts[kept] += 1
    assert counts[4] == 4000
    for rows in ([0, 3, 7], [1, 2, 5, 6]):  # uniform within each person: chi-square goodness of fit
        assert stats.chisquare(counts[rows]).pvalue > 1e-4


def _persons(rng, persons, most, d):
    """Rows of ``persons`` persons with 1…``most`` rows each, some beyond the bound."""
    sizes = rng.integers(1, most + 1, size=persons)
    unit = np.repeat(np.arange(persons), sizes)
    X = rng.normal(size=(unit.size, d)) * rng.uniform(0.2, 3.0, size=(unit.size, 1))
    return unit, X


@pytest.mark.parametrize("family", ["logistic", "poisson"])
def test_per_person_sensitivity_bounds_random_person_neighbours(family):
    """10⁴ pairs of data sets that differ in everything about one person (the last, so the other
    persons' keys coincide): the statistic of the rows kept moves by at most the row-level Δ, while
    the statistic of all rows moves by up to the person's number of rows times it."""
    rng = np.random.default_rng(7 if family == "logistic" else 8)
    d, bx, cap = 2, 1.3, 4
    if family == "logistic":
        weights, bound = symmetric_entry_weights(*degree2_pairs(d)), logistic_sensitivity(bx)
    else:
        weights, bound = poisson_entry_weights(d, bx, cap), poisson_sensitivity(bx)

    def responses(size):
        return rng.choice([-1.0, 1.0], size) if family == "logistic" else np.minimum(rng.poisson(2.0, size), cap)

    worst_person = worst_rows = 0.0
    for _ in range(10_000):
        unit, X = _persons(rng, 4, 5, d)
        y = responses(unit.size)
        mine = unit == unit.max()
        m2 = int(rng.integers(1, 6))  # the changed person's rows: any number, any values
        X2 = np.vstack([X[~mine], rng.normal(size=(m2, d)) * rng.uniform(0.2, 3.0)])
        y2 = np.concatenate([y[~mine], responses(m2)])
        unit2 = np.concatenate([unit[~mine], np.full(m2, unit.max())])
        seed = int(rng.integers(2**32))
        (K, k), _ = rows_per_unit(unit, as_noise_source(seed), X, y)
        (K2, k2), _ = rows_per_unit(unit2, as_noise_source(seed), X2, y2)
        change = np.linalg.norm(_weighted(K, k, bx, weights) - _weighted(K2, k2, bx, weights))
        worst_person = max(worst_person, change)
        worst_rows = max(worst_rows, np.linalg.norm(_weighted(X, y, bx, weights) - _weighted(X2, y2, bx, weights)))
    assert worst_person <= bound * (1 + 1e-12)
    assert worst_rows > 1.5 * bound  # without the unit a person moves the statistic further


def test_per_person_sensitivity_is_attained_by_a_person_with_copies_of_the_extreme_row():
    """Whichever of the person's rows is kept, it is the row that attains the row-level Δ."""
    bx = 1.0
    others = np.array([[0.2, 0.1, -0.3], [0.1, 0.0, 0.2]])
    X = np.vstack([others, np.tile([bx, 0.0, 0.0], (3, 1))])
    X2 = np.vstack([others, np.tile([0.0, bx, 0.0], (5, 1))])
    y, y2 = np.array([1.0, -1.0, 1.0, 1.0, 1.0]), np.array([1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0])
    unit, unit2 = [0, 1, 2, 2, 2], [0, 1, 2, 2, 2, 2, 2]
    weights = symmetric_entry_weights(*degree2_pairs(3))
    (K, k), kind = rows_per_unit(unit, as_noise_source(3), X, y)
    (K2, k2), _ = rows_per_unit(unit2, as_noise_source(3), X2, y2)
    change = np.linalg.norm(_weighted(K, k, bx, weights) - _weighted(K2, k2, bx, weights))
    assert kind == "person" and change == pytest.approx(logistic_sensitivity(bx), rel=1e-12)


def test_a_person_level_release_is_the_row_level_release_of_one_row_per_person():
    """Persons whose rows are copies: the release is the row-level one of the distinct rows, with
    the same noise once the keys are drawn, n the number of persons and the unit recorded."""
    rng = np.random.default_rng(1)
    X1 = rng.normal(size=(60, 2))
    y1 = (rng.uniform(size=60) < 0.5).astype(int)
    copies = rng.integers(1, 4, size=60)
    X, y, unit = np.repeat(X1, copies, axis=0), np.repeat(y1, copies), np.repeat(np.arange(60), copies)
    accountant = pp.PrivacyAccountant(2.0, 1e-5)
    person = pp.release_logistic_stats(
        X, y, epsilon=1.0, delta=1e-6, x_bound=2.0, unit=unit, rng=np.random.default_rng(5), accountant=accountant
    )
    generator = np.random.default_rng(5)
    as_noise_source(generator).uniform(unit.size)  # the keys the person-level release drew first
    rows = pp.release_logistic_stats(X1, y1, epsilon=1.0, delta=1e-6, x_bound=2.0, rng=generator)
    assert person.n == 60 and person.unit == "person" and rows.unit == "record"
    np.testing.assert_array_equal(person.xx, rows.xx)
    np.testing.assert_array_equal(person.yx, rows.yx)
    (entry,) = accountant.ledger
    assert entry.neighbours == "replace-one person" and entry.label.startswith("n=60,")
    lines = dict(_release_lines(person))
    assert lines["privacy"].endswith("neighbours: replace-one person")
    assert lines["n"] == "60 persons (public)"


@pytest.mark.parametrize("noise", ["gaussian", "laplace"])
def test_linear_releases_keep_one_row_per_person(noise):
    rng = np.random.default_rng(2)
    unit = np.repeat(np.arange(80), 3)
    X = rng.normal(size=(240, 2))
    y = X @ [1.0, -1.0] + rng.normal(size=240)
    delta = 1e-6 if noise == "gaussian" else None
    stats_ = pp.release_linear_stats(
        X, y, epsilon=1.0, delta=delta, x_bound=3.0, y_bound=4.0, noise=noise, unit=unit, rng=0
    )
    assert stats_.n == 80 and stats_.releases[0].unit == "person"
    file_entry = release_file.release_to_dict(stats_)
    assert file_entry["releases"][0]["unit"] == "person"
    assert release_file.release_from_dict(file_entry).releases[0].unit == "person"


def test_the_recorded_unit_is_checked_when_a_release_is_read_back():
    X = np.random.default_rng(0).normal(size=(30, 2))
    release = pp.release_poisson_stats(X, np.arange(30) % 4, epsilon=1.0, delta=1e-6, x_bound=2.0, y_bound=3, rng=0)
    entry = release_file.release_to_dict(release)
    assert entry["parameters"]["unit"] == "record"
    entry["parameters"]["unit"] = "household"
    with pytest.raises(ValueError, match="field 'unit' must be one of"):
        release_file.release_from_dict(entry)


def test_neighbour_text_keeps_the_record_level_text_of_earlier_entries():
    assert neighbour_text("replace-one", "record") == "replace-one"
    assert neighbour_text("replace-one", "person") == "replace-one person"
    with pytest.raises(ValueError, match="unit must be one of"):
        neighbour_text("replace-one", "family")


def test_a_ledger_states_the_epsilon_of_a_person_as_dp_accounting_recomputes_it():
    """A person-level and a record-level Gaussian release, and a record-level Laplace count: for a
    person with 4 rows the record-level events' sensitivities grow 4-fold, and the composition of
    the three events by dp-accounting's PLD accountant, written here from the stored events,
    gives the accountant's ε."""
    from dp_accounting.pld import privacy_loss_distribution as pld

    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 2))
    y = (rng.uniform(size=400) < 0.5).astype(int)
    accountant = pp.PrivacyAccountant(30.0, 1e-4)
    pp.release_logistic_stats(X, y, epsilon=1.0, delta=1e-6, x_bound=2.0, rng=0, accountant=accountant)
    pp.release_logistic_stats(
        X, y, epsilon=1.0, delta=1e-6, x_bound=2.0, rng=0, accountant=accountant, unit=np.arange(400) // 4
    )
    count = laplace_mechanism(np.array([400.0]), sensitivity=1.0, epsilon=0.5, source=as_noise_source(0))
    accountant.record("a count", 0.5, noise=(NoiseEvent("laplace", count.scale, 1.0),))
    rows_entry, person_entry, count_entry = accountant.ledger
    assert [e.neighbours for e in accountant.ledger] == ["replace-one", "replace-one person", "replace-one"]
    m, delta = 4, 1e-4
    distributions = [
        pld.from_gaussian_mechanism(rows_entry.noise[0].scale / (m * rows_entry.noise[0].sensitivity),
                                    value_discretization_interval=1e-3),
        pld.from_gaussian_mechanism(person_entry.noise[0].scale / person_entry.noise[0].sensitivity,
                                    value_discretization_interval=1e-3),
        pld.from_discrete_laplace_mechanism(m * 1.0 / count.scale, value_discretization_interval=1e-3),
    ]  # fmt: skip
    composed = distributions[0].compose(distributions[1]).compose(distributions[2])
    expected = composed.get_epsilon_for_delta(delta)
    assert accountant.person_epsilon(m) == pytest.approx(expected, rel=1e-9)
    assert accountant.person_epsilon(1) == pytest.approx(accountant.tight_epsilon(), rel=1e-12)
    assert accountant.person_epsilon(m) > accountant.tight_epsilon()


def test_group_privacy_converts_an_entry_without_noise_events():
    accountant = pp.PrivacyAccountant(10.0, 1e-3)
    accountant.record("an approximate release", 0.5, 1e-6)
    (entry,) = accountant.ledger
    converted = pp.privacy.person_entry(entry, 3)
    assert converted.epsilon == pytest.approx(1.5) and converted.delta == pytest.approx(3 * np.exp(1.0) * 1e-6)
    assert converted.neighbours == "replace-one person"
    assert accountant.person_epsilon(3) == pytest.approx(1.5)
    with pytest.raises(ValueError, match="rows"):
        accountant.person_epsilon(0)


def test_adassp_keeps_one_row_per_person():
    rng = np.random.default_rng(6)
    X = rng.uniform(-1, 1, size=(300, 2))
    y = X @ [1.0, -0.5] + 0.1 * rng.normal(size=300)
    result = pp.adassp(X, y, epsilon=1.0, delta=1e-7, x_bound=1.5, y_bound=2.0, rng=0, unit=np.arange(300) % 75)
    assert result.n == 75 and result.unit == "person"

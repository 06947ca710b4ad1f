"""Up to k rows per person (``max_rows``) in the logistic and Poisson releases: the rows kept, the
per-person sensitivity k·Δ under both relations (attained by a person of k equal extreme rows and
never exceeded by random persons of 1…k rows), the release's noise and ledger charge against
dp-accounting, the release file, and the refusals, all before anything is spent."""

import numpy as np
import pytest
from dp_accounting import GaussianDpEvent, NeighboringRelation
from dp_accounting.pld.pld_privacy_accountant import PLDAccountant

from pm_private import PrivacyAccountant, release_logistic_stats, release_poisson_stats
from pm_private.logistic import logistic_sensitivity
from pm_private.poisson import poisson_sensitivity
from pm_private.poisson.release import poisson_entry_weights
from pm_private.privacy.noise import as_noise_source
from pm_private.privacy.primitives import symmetric_entry_weights
from pm_private.privacy.relations import ADD_REMOVE, REPLACE_ONE, Sensitivity
from pm_private.privacy.units import check_unit, rows_kept_per_unit
from pm_private.release_file import release_from_dict, release_to_dict
from pm_private.released.degree2 import degree2_pairs, degree2_sums, degree2_vector

D, X_BOUND, Y_BOUND = 2, 1.5, 4


def _rows(rng, n, family):
    x = rng.normal(size=(n, D))
    x *= np.minimum(1.0, X_BOUND / np.linalg.norm(x, axis=1))[:, None] * rng.uniform(0.5, 1.0, size=(n, 1))
    y = rng.choice([-1.0, 1.0], size=n) if family == "logistic" else rng.integers(0, Y_BOUND + 1, size=n) * 1.0
    return x, y


FAMILIES = {
    "logistic": (symmetric_entry_weights(*degree2_pairs(D)), logistic_sensitivity, 1.0),
    "poisson": (poisson_entry_weights(D, X_BOUND, Y_BOUND), poisson_sensitivity, float(Y_BOUND)),
}


def _weighted(x, y, weights):
    """The vector the add/remove mechanism noises: the count (weight 1), then w ⊙ s."""
    return np.concatenate([[float(len(y))], weights * degree2_vector(*degree2_sums(x, y))])


def test_at_most_k_rows_are_kept_per_person_by_the_smallest_keys():
    rng = np.random.default_rng(0)
    codes = check_unit(rng.integers(0, 40, size=300), 300)
    for k in (1, 2, 5):
        kept = rows_kept_per_unit(codes, as_noise_source(3), k)
        per_person = np.bincount(codes[kept], minlength=codes.max() + 1)
        np.testing.assert_array_equal(per_person, np.minimum(np.bincount(codes), k))
        keys = as_noise_source(3).uniform(codes.size)  # the same keys: the k smallest of each person
        for person in range(codes.max() + 1):
            rows = np.flatnonzero(codes == person)
            expected = rows[np.argsort(keys[rows])[:k]]
            np.testing.assert_array_equal(np.sort(expected), kept[codes[kept] == person])


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("family", FAMILIES)
def test_the_per_person_sensitivity_is_k_times_the_rows_attained_and_never_exceeded(family, k):
    weights, sensitivity, top = FAMILIES[family]
    rng = np.random.default_rng(k)
    worst = {ADD_REMOVE: 0.0, REPLACE_ONE: 0.0}
    for _ in range(500):
        x, y = _rows(rng, 20, family)
        base = _weighted(x, y, weights)
        for _ in range(20):  # a person of a ≤ k rows added; or replaced by one of b ≤ k rows
            a, b = rng.integers(1, k + 1, size=2)
            px, py = _rows(rng, a, family)
            qx, qy = _rows(rng, b, family)
            with_p = _weighted(np.vstack([x, px]), np.concatenate([y, py]), weights)
            with_q = _weighted(np.vstack([x, qx]), np.concatenate([y, qy]), weights)
            worst[ADD_REMOVE] = max(worst[ADD_REMOVE], np.linalg.norm(with_p - base))
            worst[REPLACE_ONE] = max(worst[REPLACE_ONE], np.linalg.norm(with_p - with_q))
    stated = Sensitivity(sensitivity(X_BOUND, ADD_REMOVE), sensitivity(X_BOUND, REPLACE_ONE)).of_units_with_rows(k)
    for relation, change in worst.items():
        assert change <= stated.under(relation) * (1 + 1e-12)
    assert stated.replace_one == pytest.approx(k * sensitivity(X_BOUND, REPLACE_ONE))  # at this bound
    # a person of k equal extreme rows attains k·Δ under add/remove
    x, y = _rows(rng, 20, family)
    extreme, label = np.tile([[X_BOUND, 0.0]], (k, 1)), np.full(k, top)
    added = _weighted(np.vstack([x, extreme]), np.concatenate([y, label]), weights) - _weighted(x, y, weights)
    assert np.linalg.norm(added) == pytest.approx(k * sensitivity(X_BOUND, ADD_REMOVE), rel=1e-12)


def test_at_small_poisson_bounds_the_replace_one_bound_takes_the_added_rows():
    """Bx² < 3 − √8: a removed row (with its count) moves the vector more than a replaced one, so the
    person-level replace-one bound is Δ_replace + (k − 1)·Δ_add, above k·Δ_replace; random persons
    of 1 or 2 rows stay below it."""
    bound, k = 0.3, 2
    weights = poisson_entry_weights(D, bound, Y_BOUND)
    row = Sensitivity(poisson_sensitivity(bound, ADD_REMOVE), poisson_sensitivity(bound, REPLACE_ONE))
    assert row.add_remove > row.replace_one
    stated = row.of_units_with_rows(k)
    assert stated.replace_one == pytest.approx(row.replace_one + (k - 1) * row.add_remove)
    rng = np.random.default_rng(3)
    worst = 0.0
    for _ in range(4000):
        a, b = rng.integers(1, k + 1, size=2)
        x = rng.normal(size=(a + b, D))
        x *= bound / np.linalg.norm(x, axis=1)[:, None] * rng.uniform(0.8, 1.0, size=(a + b, 1))
        y = rng.integers(0, Y_BOUND + 1, size=a + b) * 1.0
        worst = max(worst, np.linalg.norm(_weighted(x[:a], y[:a], weights) - _weighted(x[a:], y[a:], weights)))
    assert k * row.replace_one * 0.8 < worst <= stated.replace_one


def _release(family, max_rows=1, accountant=None, **kw):
    rng = np.random.default_rng(5)
    person = np.repeat(np.arange(200), 3)  # 200 persons of 3 rows
    x = rng.normal(size=(600, D))
    common = {
        **dict(epsilon=1.0, delta=1e-6, x_bound=3.0, rng=2, unit=person, accountant=accountant, max_rows=max_rows),
        **kw,
    }
    if family == "logistic":
        return release_logistic_stats(x, rng.uniform(size=600) < 0.5, **common)
    return release_poisson_stats(x, rng.poisson(1.0, size=600), y_bound=5, **common)


@pytest.mark.parametrize("family", FAMILIES)
def test_a_release_of_k_rows_per_person_is_noised_and_charged_for_k_rows(family):
    sensitivity = FAMILIES[family][1]
    accountant = PrivacyAccountant(10.0, 1e-5)
    release = _release(family, 2, accountant, relation=ADD_REMOVE)
    one_row = _release(family, 1, relation=ADD_REMOVE)
    assert release.max_rows == 2 and release.unit == "person" and release.n is None
    assert release.sensitivity == pytest.approx(2 * sensitivity(3.0, ADD_REMOVE))
    assert release.noise_scale == pytest.approx(2 * one_row.noise_scale)
    assert abs(release.n_noisy - 400) < 6 * release.noise_scale  # 2 of each person's 3 rows
    (entry,) = accountant.ledger
    assert entry.neighbours == "add-remove person as replace-one person"
    (event,) = entry.noise
    assert event.sensitivity == pytest.approx(2 * sensitivity(3.0, REPLACE_ONE))
    independent = PLDAccountant(NeighboringRelation.REPLACE_ONE)
    independent.compose(GaussianDpEvent(event.scale / (event.sensitivity / 2)))  # its replace-one doubles Δ
    assert entry.epsilon == pytest.approx(independent.get_epsilon(1e-6), rel=2e-3)
    record = release_to_dict(release)
    assert release_from_dict(record).max_rows == 2
    with pytest.raises(ValueError, match="sensitivity"):  # a file claiming fewer rows than its noise
        release_from_dict({**record, "parameters": {**record["parameters"], "max_rows": 3}})


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (dict(max_rows=0, relation=ADD_REMOVE), "max_rows must be an integer"),
        (dict(max_rows=1.5, relation=ADD_REMOVE), "max_rows must be an integer"),
        (dict(max_rows=2), "relation='add-remove'"),
        (dict(max_rows=2, relation=ADD_REMOVE, unit=None), "unit is needed"),
    ],
)
@pytest.mark.parametrize("family", FAMILIES)
def test_bad_max_rows_is_refused_before_anything_is_spent(family, options, message):
    accountant = PrivacyAccountant(10.0, 1e-5)
    with pytest.raises(ValueError, match=message):
        _release(family, accountant=accountant, **options)
    assert not accountant.ledger


def test_the_command_line_keeps_up_to_k_rows_per_person(tmp_path, monkeypatch, capsys):
    import pandas as pd

    from pm_private.cli import main
    from pm_private.release_file import read_release_file

    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 2))
    frame = pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "label": rng.integers(0, 2, 300), "id": np.repeat(range(100), 3)})
    frame.to_csv("d.csv", index=False)
    argv = ["release", "logistic-stats", "d.csv", "--target", "label", "--features", "a", "b", "--x-bound", "3"]
    argv += ["--delta", "1e-6", "--epsilon", "1", "--raw-covariates", "--max-rows", "2"]
    argv += ["--ledger", "l.db", "--total-epsilon", "3", "--total-delta", "1e-4", "--out", "r.json"]
    with pytest.raises(SystemExit):  # above 1 without a person column
        main([*argv, "--relation", "add-remove"])
    assert "--max-rows above 1 needs --unit-column" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # above 1 under replace-one
        main([*argv, "--unit-column", "id"])
    assert "relation='add-remove'" in capsys.readouterr().err
    assert not (tmp_path / "l.db").exists() and not (tmp_path / "r.json").exists()
    assert main([*argv, "--unit-column", "id", "--relation", "add-remove"]) == 0
    (entry,) = read_release_file("r.json")
    release = entry["release"]
    assert release.max_rows == 2 and release.unit == "person"
    assert release.sensitivity == pytest.approx(2 * logistic_sensitivity(3.0, ADD_REMOVE))


@pytest.mark.parametrize("family", FAMILIES)
def test_a_release_whose_record_fails_its_own_checks_spends_nothing(family, monkeypatch):
    """The release record's checks (its class's, on public fields) run before the charge: a record
    they would refuse costs no budget (here every record is refused)."""
    import pm_private.released.degree2 as degree2

    def refuse(*args, **kwargs):
        raise ValueError("field 'sensitivity': refused for the test")

    monkeypatch.setattr(degree2, "check_release_consistent", refuse)
    accountant = PrivacyAccountant(10.0, 1e-5)
    with pytest.raises(ValueError, match="refused for the test"):
        _release(family, accountant=accountant, relation=ADD_REMOVE)
    assert not accountant.ledger

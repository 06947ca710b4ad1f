"""The logistic and Poisson releases under add/remove neighbours: the count n released with the
statistics, the sensitivity under both relations (attained, never exceeded by random neighbours),
the ledger's converted charge against dp-accounting, the model's latent n, the command line and the
refusals."""

import math

import numpy as np
import pytest
from dp_accounting import GaussianDpEvent, NeighboringRelation
from dp_accounting.pld.pld_privacy_accountant import PLDAccountant

from pm_private import PrivacyAccountant, logistic_model, poisson_model, release_logistic_stats, release_poisson_stats
from pm_private.cli import main
from pm_private.logistic import logistic_noise_plan, logistic_sensitivity, set_logistic_stats
from pm_private.poisson import poisson_sensitivity
from pm_private.poisson.release import poisson_entry_weights
from pm_private.privacy.primitives import symmetric_entry_weights
from pm_private.privacy.relations import ADD_REMOVE, REPLACE_ONE
from pm_private.release_file import read_release_file, release_from_dict, release_to_dict
from pm_private.released.degree2 import degree2_pairs, degree2_sums, degree2_vector
from pm_private.released.summary import _release_lines

D, X_BOUND, Y_BOUND = 2, 1.5, 4


def _logistic_rows(rng, n):
    x = rng.normal(size=(n, D))
    x *= np.minimum(1.0, X_BOUND / np.linalg.norm(x, axis=1))[:, None] * rng.uniform(0.5, 1.0, size=(n, 1))
    return x, rng.choice([-1.0, 1.0], size=n)


def _poisson_rows(rng, n):
    x, _ = _logistic_rows(rng, n)
    return x, rng.integers(0, Y_BOUND + 1, size=n).astype(float)


FAMILIES = {
    "logistic": (_logistic_rows, symmetric_entry_weights(*degree2_pairs(D)), logistic_sensitivity),
    "poisson": (_poisson_rows, poisson_entry_weights(D, X_BOUND, Y_BOUND), poisson_sensitivity),
}


def _weighted(x, y, weights):
    """The vector the add/remove mechanism noises: the count (weight 1), then w ⊙ s."""
    return np.concatenate([[float(len(y))], weights * degree2_vector(*degree2_sums(x, y))])


@pytest.mark.parametrize("family", FAMILIES)
def test_sensitivity_per_relation_attained_and_never_exceeded(family):
    """10⁴ random neighbours of each relation never exceed the stated sensitivity, and the proofs'
    extreme records attain it."""
    rows, weights, sensitivity = FAMILIES[family]
    rng = np.random.default_rng(0)
    worst = {ADD_REMOVE: 0.0, REPLACE_ONE: 0.0}
    for _ in range(500):
        x, y = rows(rng, 30)
        base = _weighted(x, y, weights)
        for _ in range(20):
            i = rng.integers(30)
            removed = _weighted(np.delete(x, i, axis=0), np.delete(y, i), weights)
            new_x, new_y = rows(rng, 1)
            swapped = _weighted(
                np.where(np.arange(30)[:, None] == i, new_x, x), np.where(np.arange(30) == i, new_y, y), weights
            )
            worst[ADD_REMOVE] = max(worst[ADD_REMOVE], np.linalg.norm(base - removed))
            worst[REPLACE_ONE] = max(worst[REPLACE_ONE], np.linalg.norm(base - swapped))
    for relation, change in worst.items():
        assert 0.5 * sensitivity(X_BOUND, relation) < change <= sensitivity(X_BOUND, relation) * (1 + 1e-12)
    # the extreme record: ‖x‖ = Bx with the largest response, added to any data set
    extreme = np.array([[X_BOUND, 0.0]])
    top = np.array([Y_BOUND if family == "poisson" else 1.0])
    x, y = rows(rng, 30)
    added = _weighted(np.vstack([x, extreme]), np.concatenate([y, top]), weights) - _weighted(x, y, weights)
    assert np.linalg.norm(added) == pytest.approx(sensitivity(X_BOUND, ADD_REMOVE), rel=1e-12)


def _release(family, relation, accountant=None, n=300, seed=1):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, D))
    if family == "logistic":
        y = rng.uniform(size=n) < 1 / (1 + np.exp(-(x @ [1.0, -0.5])))
        return release_logistic_stats(
            x, y, epsilon=1.0, delta=1e-6, x_bound=3.0, rng=2, relation=relation, accountant=accountant
        )
    y = rng.poisson(np.exp(x @ [0.3, -0.2]))
    return release_poisson_stats(
        x, y, epsilon=1.0, delta=1e-6, x_bound=3.0, y_bound=5, rng=2, relation=relation, accountant=accountant
    )


@pytest.mark.parametrize("family", FAMILIES)
def test_add_remove_release_keeps_n_private_and_is_charged_as_replace_one(family):
    accountant = PrivacyAccountant(5.0, 1e-5)
    release = _release(family, ADD_REMOVE, accountant)
    sensitivity = FAMILIES[family][2]
    assert release.n is None and release.neighbours == ADD_REMOVE
    assert release.sensitivity == pytest.approx(sensitivity(3.0, ADD_REMOVE))
    assert abs(release.n_noisy - 300) < 6 * release.noise_scale
    (entry,) = accountant.ledger
    assert entry.neighbours == "add-remove as replace-one" and "n=" not in entry.label
    (event,) = entry.noise
    assert event.sensitivity == pytest.approx(sensitivity(3.0, REPLACE_ONE))  # the vector's own, not 2Δ
    independent = PLDAccountant(NeighboringRelation.ADD_OR_REMOVE_ONE)
    independent.compose(GaussianDpEvent(event.scale / event.sensitivity))
    assert entry.epsilon == pytest.approx(independent.get_epsilon(1e-6), rel=2e-3)
    assert 1.0 < entry.epsilon < 2.0
    assert dict(_release_lines(release))["n"] == "private (add/remove neighbours)"
    record = release_to_dict(release)
    assert release_from_dict(record).n_noisy == release.n_noisy
    with pytest.raises(ValueError, match="'n' must be None"):
        release_from_dict({**record, "parameters": {**record["parameters"], "n": 300}})
    with pytest.raises(ValueError, match="n_noisy"):
        release_from_dict({**record, "outputs": {**record["outputs"], "n_noisy": None}})
    public = _release(family, REPLACE_ONE)
    assert public.n == 300 and public.n_noisy is None


def test_a_person_level_release_under_add_remove_keeps_the_number_of_persons_private():
    rng = np.random.default_rng(4)
    person = rng.integers(0, 150, size=400)  # 400 rows of at most 150 persons
    x, y = rng.normal(size=(400, D)), rng.uniform(size=400) < 0.5
    accountant = PrivacyAccountant(5.0, 1e-5)
    release = release_logistic_stats(
        x, y, epsilon=1.0, delta=1e-6, x_bound=3.0, rng=2, relation=ADD_REMOVE, unit=person, accountant=accountant
    )
    assert release.n is None and release.unit == "person"
    assert abs(release.n_noisy - np.unique(person).size) < 6 * release.noise_scale
    (entry,) = accountant.ledger
    assert entry.neighbours == "add-remove person as replace-one person" and "n=" not in entry.label


def test_the_model_takes_n_as_latent_and_refuses_to_swap_relations():
    private_n, public_n = _release("logistic", ADD_REMOVE, n=2000), _release("logistic", REPLACE_ONE, n=2000)
    model = logistic_model(private_n, x_sample=None)
    assert "n_people" in model.named_vars and "n_noisy" in model.named_vars
    # the released count pins n: the log-density falls as n leaves it by 4 noise s.d.
    point = model.initial_point()
    logp = model.compile_logp(jacobian=False, mode="FAST_COMPILE")
    count, sd = private_n.n_noisy, private_n.noise_scale
    upper = count + 10 * sd
    n = [count + k * sd for k in (-4.0, 0.0, 4.0)]
    values = [logp({**point, "n_people_interval__": np.log(v / (upper - v))}) for v in n]
    assert values[1] > max(values[0], values[2])
    # the prior is flat from 0 to 10 noise s.d. past the count: n_noisy's density is all there is
    # of n outside the moments' likelihood, and near the count the prior does not move the posterior
    prior = model.compile_logp(vars=[model["n_people"]], jacobian=False, mode="FAST_COMPILE")
    assert len({round(float(prior({**point, "n_people_interval__": np.log(v / (upper - v))})), 9) for v in n}) == 1
    with pytest.raises(ValueError, match="n is private"):
        set_logistic_stats(public_n, model, x_sample=None)
    set_logistic_stats(_release("logistic", ADD_REMOVE, n=2000, seed=5), model, x_sample=None)
    assert "n_people" not in logistic_model(public_n, x_sample=None).named_vars
    assert "n_people" not in logistic_model(private_n, x_sample=None, noise_aware=False).named_vars
    assert "n_people" in poisson_model(_release("poisson", ADD_REMOVE, n=2000), x_sample=None).named_vars


def test_the_noise_plan_names_the_relation_and_the_count():
    plan = logistic_noise_plan(D, epsilon=1.0, delta=1e-6, x_bound=3.0, relation=ADD_REMOVE)
    lines = plan.lines()
    assert lines[0].startswith("Gaussian mechanism") and "add-remove neighbours" in lines[0]
    assert plan.queries[0].size == 2 * D + 2 + D * (D + 1) // 2
    assert plan.noise_sd["n (private: add/remove neighbours)"] == pytest.approx(plan.queries[0].scale)
    assert math.isclose(plan.sensitivity["weighted vector"], logistic_sensitivity(3.0, ADD_REMOVE))


def test_a_bad_relation_is_refused_before_anything_is_spent():
    accountant = PrivacyAccountant(5.0, 1e-5)
    with pytest.raises(ValueError, match="relation"):
        _release("logistic", "add-one", accountant)
    assert not accountant.ledger


def test_the_command_line_releases_under_add_remove(tmp_path, monkeypatch, capsys):
    import pandas as pd

    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 2))
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "label": rng.integers(0, 2, 300)}).to_csv("d.csv", index=False)
    argv = ["release", "logistic-stats", "d.csv", "--target", "label", "--features", "a", "b", "--x-bound", "3"]
    argv += ["--delta", "1e-6", "--epsilon", "1", "--raw-covariates", "--relation", "add-remove"]
    argv += ["--ledger", "l.db", "--total-epsilon", "3", "--total-delta", "1e-4", "--out", "r.json"]
    assert main([*argv, "--dry-run"]) == 0
    assert "add-remove neighbours" in capsys.readouterr().out
    assert main(argv) == 0
    (entry,) = read_release_file("r.json")
    assert entry["release"].n is None and entry["release"].neighbours == ADD_REMOVE
    (ledger_entry,) = PrivacyAccountant.open("l.db").history
    assert ledger_entry.neighbours == "add-remove as replace-one"

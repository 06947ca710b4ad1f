"""The exit table under add/remove neighbours: n private, sensitivity 1, the ledger's converted
charge against dp-accounting, the latent n of the model, and the refusals."""

import math

import numpy as np
import pytest
from dp_accounting import GaussianDpEvent, NeighboringRelation
from dp_accounting.pld.pld_privacy_accountant import PLDAccountant
from scipy import stats

from pm_private import PrivacyAccountant, release_survival_stats, survival_model
from pm_private.privacy.relations import ADD_REMOVE, REPLACE_ONE
from pm_private.release_file import release_from_dict, release_to_dict
from pm_private.released.summary import _release_lines
from pm_private.survival import set_survival_stats, survival_noise_plan, survival_sensitivity
from pm_private.survival.exits.outcomes import exit_counts

EDGES = np.array([1.0, 2.0, 3.0])
CELLS = ("a", "b")


def _study(rng, n):
    return rng.exponential(2.0, n), rng.uniform(size=n) < 0.7, rng.choice(CELLS, n)


def _table(time, event, cell):
    return np.column_stack(exit_counts(time, event, cell, EDGES, CELLS)).ravel()


def test_sensitivity_per_relation_attained_and_never_exceeded():
    """10⁴ random neighbours of each relation, and the constructed extremes."""
    rng = np.random.default_rng(0)
    worst = {(r, norm): 0.0 for r in (ADD_REMOVE, REPLACE_ONE) for norm in (1, 2)}
    for _ in range(10_000 // 20):
        time, event, cell = _study(rng, 40)
        base = _table(time, event, cell)
        for _ in range(20):
            i = rng.integers(40)
            removed = _table(np.delete(time, i), np.delete(event, i), np.delete(cell, i))
            other = _study(rng, 1)
            swapped = [
                np.where(np.arange(40) == i, new[0], old) for old, new in zip((time, event, cell), other, strict=True)
            ]
            for relation, table in ((ADD_REMOVE, removed), (REPLACE_ONE, _table(*swapped))):
                for norm in (1, 2):
                    change = np.linalg.norm(base - table, ord=norm)
                    worst[relation, norm] = max(worst[relation, norm], change)
    for (relation, norm), change in worst.items():
        assert change == pytest.approx(survival_sensitivity("laplace" if norm == 1 else "gaussian", relation))


def test_add_remove_release_keeps_n_private_and_is_charged_as_replace_one():
    rng = np.random.default_rng(1)
    time, event, cell = _study(rng, 300)
    accountant = PrivacyAccountant(5.0, 1e-5)
    release = release_survival_stats(
        time, event, cell, edges=EDGES, cells=CELLS, epsilon=1.0, delta=1e-6, rng=2, relation=ADD_REMOVE,
        accountant=accountant,
    )  # fmt: skip
    assert release.n is None and release.neighbours == ADD_REMOVE and release.sensitivity == 1.0
    (entry,) = accountant.ledger
    assert entry.neighbours == "add-remove as replace-one" and "n=" not in entry.label
    (event_,) = entry.noise
    assert event_.sensitivity == pytest.approx(math.sqrt(2.0))  # the table's replace-one ℓ2, not 2
    independent = PLDAccountant(NeighboringRelation.ADD_OR_REMOVE_ONE)
    independent.compose(GaussianDpEvent(event_.scale / math.sqrt(2.0)))
    assert entry.epsilon == pytest.approx(independent.get_epsilon(1e-6), rel=2e-3)
    assert 1.0 < entry.epsilon < 2.0
    plan = survival_noise_plan(EDGES, CELLS, epsilon=1.0, delta=1e-6, relation=ADD_REMOVE)
    assert plan.lines()[0].endswith("add-remove neighbours")
    assert dict(_release_lines(release))["n"] == "private (add/remove neighbours)"
    assert "add-remove" in dict(_release_lines(release))["privacy"]
    record = release_to_dict(release)
    assert release_from_dict(record).n is None
    with pytest.raises(ValueError, match="'n' must be None"):
        release_from_dict({**record, "parameters": {**record["parameters"], "n": 300}})


def _interval(n, upper):
    """The unconstrained value of n under a Uniform(0, upper) prior (PyMC's interval transform)."""
    return np.log(n / (upper - n))


def test_the_model_takes_n_as_latent_and_refuses_to_swap_relations():
    rng = np.random.default_rng(2)
    time, event, cell = _study(rng, 400)
    options = dict(edges=EDGES, cells=CELLS, epsilon=1.0, delta=1e-6, rng=3)
    private_n = release_survival_stats(time, event, cell, relation=ADD_REMOVE, **options)
    public_n = release_survival_stats(time, event, cell, **options)
    model = survival_model(private_n)
    assert "n_people" in model.named_vars and float(model["stats_n"].get_value()) == pytest.approx(
        private_n.table().sum()
    )
    # the likelihood's total pins n: the log-density falls as n leaves the noisy total
    point = model.initial_point()
    logp = model.compile_logp(jacobian=False, mode="FAST_COMPILE")
    total = private_n.table().sum()
    factors = (0.7, 1.0, 1.3)
    sd = np.sqrt(private_n.noise_variance().sum())
    values = [logp({**point, "n_people_interval__": _interval(total * f, total + 10 * sd)}) for f in factors]
    assert values[1] > max(values[0], values[2])
    # only the total sees n, under a flat prior: the density in n is the total's normal
    law = [stats.norm.logpdf(total, total * f, sd) for f in factors]
    np.testing.assert_allclose(np.subtract(values, values[1]), np.subtract(law, law[1]), rtol=1e-9)
    with pytest.raises(ValueError, match="n is private"):
        set_survival_stats(public_n, model)
    assert "n_people" not in survival_model(public_n).named_vars
    # the naive model takes the table as exact, its total as n: no latent n, either table swaps in
    naive = survival_model(private_n, noise_aware=False)
    assert "n_people" not in naive.named_vars and "table_total" not in naive.named_vars
    set_survival_stats(public_n, naive)
    assert float(naive["stats_n"].get_value()) == public_n.n


def test_a_bad_relation_is_refused_before_anything_is_spent():
    rng = np.random.default_rng(3)
    time, event, cell = _study(rng, 50)
    accountant = PrivacyAccountant(1.0, 1e-5)
    for bad in ("swap", "add-remove person", None, 1):
        with pytest.raises(ValueError, match="relation"):
            release_survival_stats(
                time, event, cell, edges=EDGES, cells=CELLS, epsilon=0.5, delta=1e-6, relation=bad,
                accountant=accountant,
            )  # fmt: skip
    assert accountant.history == ()

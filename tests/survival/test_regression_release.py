"""The exit table with covariate moments: counting against a loop over people, sensitivity √7
(random and adversarial neighbours), the noise law per kind of entry, accountant, release files;
under add/remove neighbours sensitivity 2, n private and latent in the model."""

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest
from dp_accounting import GaussianDpEvent, NeighboringRelation
from dp_accounting.pld.pld_privacy_accountant import PLDAccountant
from scipy import stats as st

from pm_private import Preprocessing, PrivacyAccountant
from pm_private.privacy.budget import BudgetExceededError
from pm_private.privacy.primitives import symmetric_entry_weights
from pm_private.privacy.relations import ADD_REMOVE, REPLACE_ONE
from pm_private.privacy.release import ChargedRefusal
from pm_private.release_file import read_release_file, release_from_dict, release_to_dict, write_release_file
from pm_private.released.summary import _release_lines
from pm_private.survival import (
    SurvivalRegressionStatsRelease,
    release_survival_regression_stats,
    set_survival_regression_stats,
    survival_regression_bounds,
    survival_regression_model,
    survival_regression_noise_plan,
    survival_regression_sensitivity,
    survival_regression_stats,
)
from pm_private.survival.regression.statistics import _statistics

EDGES = np.array([1.0, 2.0, 3.5, 5.0])
CELLS = ("control", "treated")
BOUND = 2.0


def _records(n, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    time = np.round(rng.exponential(2.5 * np.exp(-0.3 * X[:, 0])), 1)  # ties with the interval ends
    return time, rng.uniform(size=n) < 0.7, X, rng.choice(CELLS, n)


def _weighted(time, event, X, cell):
    """The weighted vector the mechanism noises, from the statistics of the records."""
    counts, x_sums, xx, projected, _ = _statistics(time, event, X, cell, EDGES, CELLS, BOUND)
    upper = np.triu_indices(X.shape[1])
    return np.concatenate(
        [
            counts.ravel(),
            (x_sums / BOUND).ravel(),
            (xx[:, upper[0], upper[1]] * symmetric_entry_weights(*upper) / BOUND**2).ravel(),
            [projected],
        ]
    )


def test_statistics_follow_the_definition():
    time, event, X, cell = _records(800, seed=1)
    time[:4], event[:4] = [5.0, 99.0, 1.0, 5.0], [False, True, True, True]
    stats = survival_regression_stats(time, event, X, cell, edges=EDGES, cells=CELLS, x_bound=BOUND)
    J = EDGES.size
    norms = np.linalg.norm(X, axis=1)
    Xp = X * np.minimum(1.0, BOUND / norms)[:, None]
    counts, sums, xx = np.zeros((2, 2 * J + 1)), np.zeros((2, 2 * J + 1, 3)), np.zeros((2, 3, 3))
    for t, e, x, c in zip(time, event, Xp, cell, strict=True):
        k = CELLS.index(c)
        if t > EDGES[-1] or (t == EDGES[-1] and not e):
            exit_ = 2 * J
        else:
            j = next(j for j in range(J) if t <= EDGES[j])
            exit_ = j if e else J + j
        counts[k, exit_] += 1
        sums[k, exit_] += x
        xx[k] += np.outer(x, x)
    np.testing.assert_array_equal(stats.counts, counts)
    np.testing.assert_allclose(stats.x_sums, sums, atol=1e-9)
    np.testing.assert_allclose(stats.xx, xx, atol=1e-9)
    assert stats.projected == np.sum(norms > BOUND) and stats.n == 800
    np.testing.assert_array_equal(stats.events, counts[:, :J])
    np.testing.assert_array_equal(stats.survivors, counts[:, 2 * J])


def test_sensitivity_holds_on_random_neighbours_and_is_attained_by_an_adversarial_pair():
    time, event, X, cell = _records(150, seed=2)
    base = _weighted(time, event, X, cell)
    rng = np.random.default_rng(3)
    worst = 0.0
    for _ in range(500):  # one person replaced by anyone: any time, event, cell and row (large rows too)
        i = rng.integers(150)
        t2, e2, X2, c2 = time.copy(), event.copy(), X.copy(), cell.copy()
        t2[i], e2[i], c2[i] = rng.choice([0.0, 1.0, 3.0, 5.0, 7.5]), rng.uniform() < 0.5, rng.choice(CELLS)
        X2[i] = rng.normal(size=3) * rng.choice([0.1, 1.0, 10.0])
        worst = max(worst, np.linalg.norm(_weighted(t2, e2, X2, c2) - base))
    assert worst <= survival_regression_sensitivity() + 1e-9
    # adversarial: different exits, orthogonal rows on the sphere, one projected onto it and one not
    time[0], event[0], cell[0], X[0] = 0.5, True, "control", [10.0, 0.0, 0.0]
    base = _weighted(time, event, X, cell)
    t2, e2, X2, c2 = time.copy(), event.copy(), X.copy(), cell.copy()
    t2[0], e2[0], c2[0], X2[0] = 99.0, False, "treated", [0.0, BOUND, 0.0]
    assert np.linalg.norm(_weighted(t2, e2, X2, c2) - base) == pytest.approx(math.sqrt(7.0))


def test_the_noise_has_the_stated_law_on_each_kind_of_entry():
    time, event, X, cell = _records(3000, d=4, seed=4)
    edges = np.linspace(0.2, 6.0, 25)
    exact = survival_regression_stats(time, event, X, cell, edges=edges, cells=CELLS, x_bound=BOUND)
    release = release_survival_regression_stats(
        time, event, X, cell, edges=edges, cells=CELLS, x_bound=BOUND, epsilon=0.8, delta=1e-6, rng=5
    )
    plan = survival_regression_noise_plan(edges, CELLS, d=4, x_bound=BOUND, epsilon=0.8, delta=1e-6)
    assert release.noise_scale == pytest.approx(plan.queries[0].scale)
    variance = release.noise_variance()
    i, j = np.triu_indices(4, 1)
    for name, error, var in [
        ("counts", release.counts - exact.counts, variance["counts"]),
        ("x_sums", release.x_sums - exact.x_sums, variance["x_sums"]),
        ("xx diagonal", np.diagonal(release.xx - exact.xx, axis1=1, axis2=2), variance["xx"][:, 0, 0][:, None]),
        ("xx off-diagonal", (release.xx - exact.xx)[:, i, j], variance["xx"][:, 0, 1][:, None]),
    ]:
        z = (error / np.sqrt(var)).ravel()
        assert st.kstest(z, "norm").pvalue > 1e-3, name
    assert variance["x_sums"].flat[0] == pytest.approx(release.noise_scale**2 * BOUND**2)
    assert plan.noise_sd["xx off-diagonal"] == pytest.approx(release.noise_scale * BOUND**2 / math.sqrt(2))
    assert np.array_equal(release.xx, np.swapaxes(release.xx, 1, 2))


def test_the_bound_rule_holds_the_release_noise_of_a_covariate_sum_to_its_sampling_spread():
    small = survival_regression_bounds(2000, 3, 1.0, 1e-6, edges=EDGES, cells=CELLS)
    assert small.multiplier == 1.0 and small.x_bound == pytest.approx(math.sqrt(3)) and small.projected_share is None
    large = survival_regression_bounds(400_000, 3, 1.0, 1e-6, edges=EDGES, cells=CELLS)
    exits = len(CELLS) * (2 * EDGES.size + 1)
    assert large.multiplier > 1.0 and large.sampling_sd == pytest.approx(math.sqrt(400_000 / exits))
    assert large.noise_sd == pytest.approx(large.sampling_sd, rel=1e-6)  # the balance the rule states
    assert survival_regression_bounds(400_000, 3, 3.0, 1e-6, edges=EDGES, cells=CELLS).x_bound > large.x_bound
    assert survival_regression_bounds(400_000, 3, 1.0, 1e-6, edges=EDGES).x_bound > large.x_bound  # fuller exits
    # the noise the release adds at that bound is the noise the rule states (measured, not read off the plan)
    time, event, X, cell = _records(400, seed=8)
    exact = survival_regression_stats(time, event, X, cell, edges=EDGES, cells=CELLS, x_bound=large.x_bound)
    errors = np.concatenate(
        [
            (
                release_survival_regression_stats(
                    time,
                    event,
                    X,
                    cell,
                    edges=EDGES,
                    cells=CELLS,
                    x_bound=large.x_bound,
                    epsilon=1.0,
                    delta=1e-6,
                    rng=r,
                ).x_sums
                - exact.x_sums
            ).ravel()
            for r in range(20)
        ]
    )
    assert st.kstest(errors / large.noise_sd, "norm").pvalue > 1e-3
    public = np.random.default_rng(0).normal(size=(60, 3)) * 2.0
    raised = survival_regression_bounds(2000, 3, 1.0, 1e-6, edges=EDGES, public_X=public, max_projected=0.1)
    assert raised.projected_share <= 0.1 and raised.x_bound > small.x_bound
    for kwargs, name in [
        (dict(edges=[2.0, 1.0]), "edges"),
        (dict(edges=EDGES, cells=["a", "a"]), "cells"),
        (dict(edges=EDGES, public_X=public[:, :2]), "public_X"),
        (dict(edges=EDGES, max_projected=1.5), "max_projected"),
    ]:
        with pytest.raises(ValueError, match=name):
            survival_regression_bounds(2000, 3, 1.0, 1e-6, **kwargs)
    with pytest.raises(ValueError, match="epsilon"):
        survival_regression_bounds(2000, 3, -1.0, 1e-6, edges=EDGES)


def test_secure_release_is_charged_once_refused_over_budget_and_bad_input_spends_nothing():
    time, event, X, cell = _records(300, seed=6)
    accountant = PrivacyAccountant(1.05, 1e-5)
    kwargs = dict(edges=EDGES, cells=CELLS, x_bound=BOUND, epsilon=1.0, delta=1e-6, accountant=accountant)
    for change, message in [
        (dict(x_bound=0.0), "x_bound"),
        (dict(delta=None), "delta"),
        (dict(cells=None), "cells"),
        (dict(edges=[2.0, 1.0]), "edges"),
    ]:
        with pytest.raises(ValueError, match=message):
            release_survival_regression_stats(time, event, X, cell, **(kwargs | change))
    with pytest.raises(ValueError, match="one row per person"):
        release_survival_regression_stats(time, event, X[:-1], cell, **kwargs)
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="finite"):
        release_survival_regression_stats(time, event, bad, cell, **kwargs)
    assert not accountant.history
    release = release_survival_regression_stats(time, event, X, cell, **kwargs)
    assert release.private and release.sensitivity == pytest.approx(math.sqrt(7.0))
    assert accountant.spent == pytest.approx((release.epsilon, 1e-6))
    with pytest.raises(BudgetExceededError):
        release_survival_regression_stats(time, event, X, cell, **kwargs)
    assert len(accountant.history) == 1


def test_a_release_file_reads_back_with_its_preprocessing_and_bad_fields_are_refused(tmp_path):
    time, event, X, cell = _records(400, seed=7)
    frame = pd.DataFrame(X * [1.0, 2.0, 3.0] + 5.0, columns=["age", "dose", "marker"])
    prep = Preprocessing.from_public(np.random.default_rng(8).normal(size=(30, 3)) * [1.0, 2.0, 3.0] + 5.0)
    release = release_survival_regression_stats(
        time, event, frame, cell, edges=EDGES, cells=CELLS, x_bound=BOUND, epsilon=1.0, delta=1e-6,
        preprocessing=prep, rng=9,
    )  # fmt: skip
    assert release.features == ("age", "dose", "marker")
    path = tmp_path / "release.json"
    write_release_file(path, [release_to_dict(release, time="time", event="event")])
    back = read_release_file(path)[0]["release"]
    assert isinstance(back, SurvivalRegressionStatsRelease)
    for name in ("counts", "x_sums", "xx"):
        np.testing.assert_array_equal(getattr(back, name), getattr(release, name))
    np.testing.assert_array_equal(back.preprocessing.x_public, prep.x_public)
    fields = {f.name: getattr(release, f.name) for f in dataclasses.fields(release)}
    for change, message in [
        ({"n": 1}, "'n'"),  # more counted than n
        ({"sensitivity": 2.0}, "sensitivity"),
        ({"x_sums": release.x_sums[:, :3]}, "x_sums"),
        ({"xx": release.xx + np.triu(np.ones((3, 3)), 1)}, "symmetric"),
        ({"noise_scale": release.noise_scale / 3}, "noise_scale"),
    ]:
        with pytest.raises(ValueError, match=message):
            SurvivalRegressionStatsRelease(**(fields | change))
    # a private row among the public ones is refused, charged, naming no count
    leaked = Preprocessing.from_public(np.vstack([prep.x_public, frame.to_numpy()[:1]]))
    with pytest.raises(ChargedRefusal, match="its public rows include rows of the private X"):
        release_survival_regression_stats(
            time, event, frame, cell, edges=EDGES, cells=CELLS, x_bound=BOUND, epsilon=1.0, delta=1e-6,
            preprocessing=leaked,
        )  # fmt: skip


def test_dask_partitions_give_the_in_memory_statistics_and_release():
    da = pytest.importorskip("dask.array")
    dd = pytest.importorskip("dask.dataframe")
    time, event, X, cell = _records(900, seed=7)
    kw = dict(edges=EDGES, cells=CELLS, x_bound=BOUND)
    exact = survival_regression_stats(time, event, X, cell, **kw)
    chunked = survival_regression_stats(
        da.from_array(time, chunks=250), da.from_array(event, chunks=250), da.from_array(X, chunks=(250, 3)),
        da.from_array(cell, chunks=250), **kw,
    )  # fmt: skip
    for field in ("counts", "x_sums", "xx", "projected"):
        np.testing.assert_allclose(getattr(chunked, field), getattr(exact, field), rtol=1e-12, atol=1e-10)
    frame = pd.DataFrame(X, columns=["a", "b", "c"]).assign(time=time, event=event, cell=cell)
    parts = dd.from_pandas(frame, npartitions=4)
    release = release_survival_regression_stats(
        parts["time"], parts["event"], parts[["a", "b", "c"]], parts["cell"], epsilon=1.0, delta=1e-6, rng=5, **kw
    )
    same = release_survival_regression_stats(
        time, event, frame[["a", "b", "c"]], cell, epsilon=1.0, delta=1e-6, rng=5, **kw
    )
    assert release.features == ("a", "b", "c")
    np.testing.assert_allclose(release.xx, same.xx, rtol=1e-12, atol=1e-9)
    accountant = PrivacyAccountant(10.0)
    with pytest.raises(ValueError, match="all of them as Dask"):
        release_survival_regression_stats(
            parts["time"], event, X, epsilon=1.0, delta=1e-6, accountant=accountant, edges=EDGES, x_bound=BOUND
        )
    with pytest.raises(ValueError, match="preprocessing is not applied"):
        release_survival_regression_stats(
            parts["time"], parts["event"], parts[["a", "b", "c"]], epsilon=1.0, delta=1e-6, accountant=accountant,
            edges=EDGES, x_bound=BOUND, preprocessing=Preprocessing.from_public(X[:40] + 10.0),
        )  # fmt: skip
    assert accountant.spent.epsilon == 0.0


# Under add/remove neighbours: sensitivity 2, n private and latent in the model.


def test_add_remove_sensitivity_holds_on_random_removals_and_is_attained():
    time, event, X, cell = _records(150, seed=5)
    X[:10] *= 10.0  # rows well beyond the bound: projected
    base = _weighted(time, event, X, cell)
    worst = 0.0
    for i in range(150):
        keep = np.arange(150) != i
        worst = max(worst, np.linalg.norm(_weighted(time[keep], event[keep], X[keep], cell[keep]) - base))
    sensitivity = survival_regression_sensitivity(ADD_REMOVE)
    assert worst == pytest.approx(sensitivity)  # a projected person (on the sphere, clip flag 1) attains 2
    assert sensitivity == 2.0 and survival_regression_sensitivity(REPLACE_ONE) == pytest.approx(math.sqrt(7.0))
    with pytest.raises(ValueError, match="relation"):
        survival_regression_sensitivity("add-one")


def _release(relation, accountant=None, n=600, seed=6):
    time, event, X, cell = _records(n, seed=seed)
    return release_survival_regression_stats(
        time, event, X, cell, edges=EDGES, cells=CELLS, x_bound=BOUND, epsilon=1.0, delta=1e-6, rng=7,
        relation=relation, accountant=accountant,
    )  # fmt: skip


def test_add_remove_release_keeps_n_private_and_is_charged_as_replace_one():
    accountant = PrivacyAccountant(5.0, 1e-5)
    release = _release(ADD_REMOVE, accountant)
    assert release.n is None and release.neighbours == ADD_REMOVE and release.sensitivity == 2.0
    (entry,) = accountant.ledger
    assert entry.neighbours == "add-remove as replace-one" and "n=" not in entry.label
    (event,) = entry.noise
    assert event.sensitivity == pytest.approx(math.sqrt(7.0))  # the vector's replace-one Δ, not 2·2
    independent = PLDAccountant(NeighboringRelation.ADD_OR_REMOVE_ONE)
    independent.compose(GaussianDpEvent(event.scale / event.sensitivity))
    assert entry.epsilon == pytest.approx(independent.get_epsilon(1e-6), rel=2e-3)
    assert 1.0 < entry.epsilon < 2.0
    assert dict(_release_lines(release))["n"] == "private (add/remove neighbours)"
    assert release.clip_lines()[0].startswith("about")
    record = release_to_dict(release)
    assert release_from_dict(record).n is None
    with pytest.raises(ValueError, match="'n' must be None"):
        release_from_dict({**record, "parameters": {**record["parameters"], "n": 600}})
    plan = survival_regression_noise_plan(
        EDGES, CELLS, d=3, x_bound=BOUND, epsilon=1.0, delta=1e-6, relation=ADD_REMOVE
    )
    assert "add-remove neighbours" in plan.lines()[0] and plan.notes[-1].endswith("n private")


def test_the_model_takes_n_as_latent_and_refuses_to_swap_relations():
    private_n, public_n = _release(ADD_REMOVE, n=1500), _release(REPLACE_ONE, n=1500)
    model = survival_regression_model(private_n)
    assert "n_people" in model.named_vars
    # the released counts pin n: the log-density falls as n leaves their total
    point = model.initial_point()
    logp = model.compile_logp(jacobian=False, mode="FAST_COMPILE")
    total = private_n.counts.sum()
    factors = (0.8, 1.0, 1.25)
    sd = np.sqrt(private_n.noise_variance()["counts"].sum())
    upper = total + 10 * sd
    values = [logp({**point, "n_people_interval__": np.log(total * f / (upper - total * f))}) for f in factors]
    assert values[1] > max(values[0], values[2])
    # only the counts' total sees n, under a flat prior: the density in n is its normal
    law = [st.norm.logpdf(total, total * f, sd) for f in factors]
    np.testing.assert_allclose(np.subtract(values, values[1]), np.subtract(law, law[1]), rtol=1e-9)
    with pytest.raises(ValueError, match="n is private"):
        set_survival_regression_stats(public_n, model)
    set_survival_regression_stats(_release(ADD_REMOVE, n=1500, seed=8), model)
    assert "n_people" not in survival_regression_model(public_n).named_vars


def test_a_bad_relation_is_refused_before_anything_is_spent():
    accountant = PrivacyAccountant(5.0, 1e-5)
    with pytest.raises(ValueError, match="relation"):
        _release("add-one", accountant)
    assert not accountant.ledger

"""The exit-table release: counting, sensitivity (random and adversarial neighbours), noise law,
accountant, release files, Dask input."""

import dataclasses
import itertools
import math

import numpy as np
import pytest
from scipy import stats as st

from pm_private import PrivacyAccountant, release_survival_stats
from pm_private.privacy.budget import BudgetExceededError
from pm_private.release_file import read_release_file, release_to_dict, write_release_file
from pm_private.survival import SurvivalStatsRelease, survival_noise_plan, survival_sensitivity, survival_stats
from pm_private.survival.exits.outcomes import exit_counts

EDGES = np.array([1.0, 2.0, 3.5, 5.0])
CELLS = ("control", "treated", "other")


def _records(n, seed=0):
    rng = np.random.default_rng(seed)
    time = np.round(rng.exponential(2.5, n), 1)  # ties with the interval ends on purpose
    return time, rng.uniform(size=n) < 0.7, rng.choice(CELLS, n)


def _brute_force(time, event, cell):
    """The table by a loop over people, from the definition."""
    J = EDGES.size
    table = np.zeros((len(CELLS), 2 * J + 1))
    for t, e, c in zip(time, event, cell, strict=True):
        k = CELLS.index(c)
        if t > EDGES[-1] or (t == EDGES[-1] and not e):  # followed event-free to the horizon
            table[k, 2 * J] += 1
            continue
        j = next(j for j in range(J) if t <= EDGES[j])
        table[k, j if e else J + j] += 1
    return table


def test_counts_follow_the_definition_at_the_interval_ends_and_past_the_horizon():
    time, event, cell = _records(3000)
    time[:8] = [0.0, 1.0, 2.0, 5.0, 5.0000001, 80.0, 5.0, 2.0]
    event[:6] = True  # an event past the horizon counts as event-free at it
    event[6:8] = False  # a censoring at the horizon too; one at an inner interval end does not
    stats = survival_stats(time, event, cell, edges=EDGES, cells=CELLS)
    np.testing.assert_array_equal(stats.table(), _brute_force(time, event, cell))
    assert stats.n == 3000 and stats.table().sum() == 3000


def _table(time, event, cell):
    return np.column_stack(exit_counts(time, event, cell, EDGES, CELLS))


def test_sensitivity_holds_on_random_neighbours_and_is_attained_by_an_adversarial_pair():
    time, event, cell = _records(200, seed=1)
    base = _table(time, event, cell)
    rng = np.random.default_rng(2)
    for _ in range(500):  # one person replaced by anyone: any time, any event, any cell
        i = rng.integers(200)
        t2, e2, c2 = time.copy(), event.copy(), cell.copy()
        t2[i], e2[i], c2[i] = rng.choice([0.0, 1.0, 3.0, 5.0, 7.5, 100.0]), rng.uniform() < 0.5, rng.choice(CELLS)
        change = (_table(t2, e2, c2) - base).ravel()
        assert np.abs(change).sum() <= survival_sensitivity("laplace")
        assert np.linalg.norm(change) <= survival_sensitivity("gaussian") + 1e-12
    # adversarial: an event in the first interval of one cell against survival to the horizon in another
    time[0], event[0], cell[0] = 0.5, True, "control"
    base = _table(time, event, cell)
    t2, e2, c2 = time.copy(), event.copy(), cell.copy()
    t2[0], e2[0], c2[0] = 99.0, False, "other"
    change = (_table(t2, e2, c2) - base).ravel()
    assert np.abs(change).sum() == 2.0 and np.linalg.norm(change) == pytest.approx(math.sqrt(2.0))


@pytest.mark.parametrize("noise", ["gaussian", "laplace"])
def test_the_noise_has_the_stated_law(noise):
    """(released − exact) on a large table is N(0, σ²) or Laplace(b): Kolmogorov–Smirnov."""
    time, event, cell = _records(5000, seed=3)
    edges = np.linspace(0.1, 5.0, 50)
    exact = survival_stats(time, event, cell, edges=edges, cells=CELLS).table()
    delta = 1e-6 if noise == "gaussian" else None
    release = release_survival_stats(
        time, event, cell, edges=edges, cells=CELLS, epsilon=0.7, delta=delta, noise=noise, rng=4
    )
    plan = survival_noise_plan(edges, CELLS, epsilon=0.7, delta=delta, noise=noise)
    assert release.noise_scale == pytest.approx(plan.queries[0].scale)
    error = (release.table() - exact).ravel()
    law = st.norm(0, release.noise_scale) if noise == "gaussian" else st.laplace(0, release.noise_scale)
    assert st.kstest(error, law.cdf).pvalue > 1e-3
    assert release.noise_variance()[0, 0] == pytest.approx(law.var())
    if noise == "laplace":
        assert release.noise_scale == pytest.approx(2.0 / 0.7) and release.delta == 0.0


def test_secure_release_is_private_charged_once_and_refused_over_budget():
    time, event, cell = _records(400, seed=5)
    accountant = PrivacyAccountant(1.05, 1e-5)
    release = release_survival_stats(
        time, event, cell, edges=EDGES, cells=CELLS, epsilon=1.0, delta=1e-6, accountant=accountant
    )
    assert release.private and release.noise == "gaussian" and release.sensitivity == pytest.approx(math.sqrt(2))
    assert accountant.spent == pytest.approx((release.epsilon, 1e-6))
    assert release.epsilon <= 1.0
    with pytest.raises(BudgetExceededError):
        release_survival_stats(
            time, event, cell, edges=EDGES, cells=CELLS, epsilon=1.0, delta=1e-6, accountant=accountant
        )
    assert len(accountant.history) == 1


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (dict(edges=[2.0, 1.0]), "edges"),
        (dict(cells=None), "cells"),
        (dict(delta=None), "delta"),
        (dict(noise="laplace"), "delta"),
        (dict(noise="poisson"), "noise"),
        (dict(epsilon=0.0), "epsilon"),
    ],
)
def test_bad_input_is_refused_naming_it_before_anything_is_spent(change, message):
    time, event, cell = _records(100)
    accountant = PrivacyAccountant(5.0, 1e-4)
    kwargs = dict(edges=EDGES, cells=CELLS, epsilon=1.0, delta=1e-6, accountant=accountant, rng=0) | change
    with pytest.raises(ValueError, match=message):
        release_survival_stats(time, event, cell, **kwargs)
    assert not accountant.history


def test_a_label_outside_the_public_cells_puts_its_person_in_no_cell_instead_of_refusing():
    """A refusal would answer "is anyone in the cell left out of cells" for free: the person is in no cell."""
    import pandas as pd

    time, event, cell = _records(200, seed=3)
    accountant = PrivacyAccountant(5.0, 1e-4)
    kwargs = dict(edges=EDGES, cells=CELLS[:2], epsilon=1.0, delta=1e-6, accountant=accountant, rng=0)
    released = release_survival_stats(time, event, cell, **kwargs)
    kept = cell != CELLS[2]
    exact = survival_stats(time[kept], event[kept], cell[kept], edges=EDGES, cells=CELLS[:2])
    seeded = release_survival_stats(time[kept], event[kept], cell[kept], **kwargs)  # the same noise draw
    np.testing.assert_allclose(released.table() - seeded.table(), 0.0, atol=1e-12)
    assert released.n == 200 and exact.n == kept.sum()  # n counts everyone: it is public
    assert accountant.spent.epsilon == pytest.approx(2 * released.epsilon)
    # only the schema is read: a categorical declaring a category outside cells is refused, nothing spent
    with pytest.raises(ValueError, match="cell: its categorical dtype declares categories"):
        release_survival_stats(time, event, pd.Categorical(cell), **kwargs)
    assert len(accountant.history) == 2


def test_a_release_file_reads_back_as_written_and_an_inconsistent_total_is_refused(tmp_path):
    time, event, cell = _records(300, seed=6)
    release = release_survival_stats(time, event, cell, edges=EDGES, cells=CELLS, epsilon=1.0, delta=1e-6, rng=7)
    path = tmp_path / "release.json"
    write_release_file(path, [release_to_dict(release, time="time", event="event")])
    back = read_release_file(path)[0]["release"]
    assert isinstance(back, SurvivalStatsRelease)
    np.testing.assert_array_equal(back.table(), release.table())
    assert (back.cells, back.n, back.noise_scale) == (release.cells, release.n, release.noise_scale)
    fields = {f.name: getattr(release, f.name) for f in dataclasses.fields(release)}
    with pytest.raises(ValueError, match="'n'"):
        SurvivalStatsRelease(**(fields | {"n": 1}))  # more counted than n (n may exceed them: no cell)


def test_dask_input_gives_the_table_of_the_whole_data():
    da = pytest.importorskip("dask.array")
    time, event, cell = _records(2000, seed=8)
    seeded = dict(edges=EDGES, cells=CELLS, epsilon=1.0, delta=1e-6, rng=9)
    whole = release_survival_stats(time, event, cell, **seeded)
    parts = release_survival_stats(
        da.from_array(time, chunks=300), da.from_array(event, chunks=300), da.from_array(cell, chunks=300), **seeded
    )
    np.testing.assert_allclose(parts.table(), whole.table())
    assert parts.n == 2000
    bad = time.copy()
    bad[1500] = -1.0  # outside the domain of times: refused, naming the partition
    with pytest.raises(ValueError, match="partition"):
        release_survival_stats(
            da.from_array(bad, chunks=300), da.from_array(event, chunks=300), da.from_array(cell, chunks=300), **seeded
        )


def test_without_cells_the_table_has_one_cell():
    time, event, _ = _records(500)
    stats = survival_stats(time, event, edges=EDGES)
    assert stats.cells == ("all",) and stats.table().shape == (1, 2 * EDGES.size + 1)
    for a, b in itertools.pairwise(stats.edges):
        assert a < b

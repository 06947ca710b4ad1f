"""Releases on Dask collections: same statistics as in memory, noise once on the client, errors by partition."""

import os
import subprocess
import sys
import threading

import numpy as np
import pandas as pd
import pytest

from pm_private import BudgetExceededError, PrivacyAccountant, linear_stats, release_linear_stats
from pm_private._engine.parquet import read_parquet_columns
from pm_private._engine.threads import single_threaded_blas
from pm_private.privacy.noise import NoiseSource
from pm_private.survival import loss_and_grad, objective_perturbation, output_perturbation
from pm_private.survival.discrete.data import DiscreteTimeData

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def cluster():
    """A two-worker in-process LocalCluster (starting one costs about a second)."""
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as lc,
        distributed.Client(lc) as client,
    ):
        yield client


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = rng.standard_t(3, size=(1000, 4))
    y = rng.standard_t(3, size=1000)
    return X, y


def as_dask(X, y):
    """Uneven row chunks, columns split in two: the release must regroup them."""
    return da.from_array(X, chunks=((300, 1, 450, 249), (2, 2))), da.from_array(y, chunks=200)


@pytest.mark.parametrize("scheduler", ["sync", "threads", "cluster"])
def test_exact_statistics_equal_numpy_on_every_scheduler(data, scheduler, request):
    X, y = data
    expected = linear_stats(X, y, intercept=False)
    if scheduler == "cluster":
        request.getfixturevalue("cluster")  # the active Client is dask's default scheduler
        got = linear_stats(*as_dask(X, y), intercept=False)
    else:
        with dask.config.set(scheduler=scheduler):
            got = linear_stats(*as_dask(X, y), intercept=False)
    np.testing.assert_allclose(got.xx, expected.xx, rtol=1e-12)
    np.testing.assert_allclose(got.xy, expected.xy, rtol=1e-12)
    assert got.yy == pytest.approx(expected.yy, rel=1e-12) and got.n == 1000 and got.is_exact


class CountingSource(NoiseSource):
    """Seeded source that records the thread of every Laplace draw."""

    def __init__(self, seed):
        super().__init__(np.random.default_rng(seed))
        self.threads = []

    def laplace(self, scale, size):
        self.threads.append(threading.get_ident())
        return super().laplace(scale, size)


def test_release_draws_noise_once_on_the_client_and_matches_numpy(data, cluster):
    X, y = data
    in_memory, on_dask = CountingSource(1), CountingSource(1)
    expected = release_linear_stats(
        X, y, noise="laplace", epsilon=1.0, x_bound=1.5, y_bound=2.0, rng=in_memory, intercept=False
    )
    acct = PrivacyAccountant(epsilon=1.0)
    got = release_linear_stats(
        *as_dask(X, y),
        noise="laplace",
        epsilon=1.0,
        x_bound=1.5,
        y_bound=2.0,
        rng=on_dask,
        accountant=acct,
        intercept=False,
    )
    assert len(on_dask.threads) == len(in_memory.threads) == 4  # Sxx, Sxy, Syy, clipping counts: one draw each
    assert set(on_dask.threads) == {threading.get_ident()}  # never on a worker thread
    np.testing.assert_allclose(got.xx, expected.xx, rtol=1e-9)
    np.testing.assert_allclose(got.xy, expected.xy, rtol=1e-9)
    for count in ("clipped_rows", "clipped_responses"):  # the partitions' counts add up to the in-memory ones
        assert getattr(got.releases[0], count) == pytest.approx(getattr(expected.releases[0], count))
    assert got.releases[0].n == 1000 and acct.spent[0] == pytest.approx(1.0)


def test_dataframe_columns_give_the_exact_statistics(data):
    X, y = data
    frame = dd.from_pandas(pd.DataFrame(X, columns=["a", "b", "c", "d"]).assign(target=y), npartitions=4)
    with dask.config.set(scheduler="threads"):
        got = linear_stats(frame[["a", "b", "c", "d"]], frame["target"], intercept=False)
    np.testing.assert_allclose(got.xx, X.T @ X, rtol=1e-12)
    np.testing.assert_allclose(got.xy, X.T @ y, rtol=1e-12)
    assert got.n == 1000


def test_parquet_columns_give_the_clipped_statistics(data, tmp_path):
    X, y = data
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"]).assign(target=y, other=0)
    for k in range(3):  # three files of 400, 400 and 200 rows, row groups of 150: 8 chunks
        frame.iloc[k * 400 : (k + 1) * 400].to_parquet(tmp_path / f"part-{k}.parquet", row_group_size=150)
    Xd, yd = read_parquet_columns(tmp_path, features=["c", "a", "b", "d"], target="target")
    assert Xd.chunks == ((150, 150, 100, 150, 150, 100, 150, 50), (4,)) and yd.chunks[0] == Xd.chunks[0]
    with dask.config.set(scheduler="sync"):
        got = release_linear_stats(
            Xd, yd, noise="laplace", epsilon=1e12, x_bound=1.0, y_bound=1.5, rng=0, intercept=False
        )  # noise ≈ 0
    Xc, yc = np.clip(X[:, [2, 0, 1, 3]], -1, 1), np.clip(y, -1.5, 1.5)
    np.testing.assert_allclose(got.xx, Xc.T @ Xc, rtol=1e-9, atol=1e-8)
    np.testing.assert_allclose(got.xy, Xc.T @ yc, rtol=1e-9, atol=1e-8)
    assert got.n == 1000
    with pytest.raises(ValueError, match="target must be one column"):
        read_parquet_columns(str(tmp_path), features=["a"], target="a")
    with pytest.raises(ValueError, match=r"no column\(s\) \['e'\]"):
        read_parquet_columns(str(tmp_path), features=["a", "e"], target="target")


@pytest.mark.parametrize("name, row", [("X", 460), ("y", 999)])
def test_first_bad_row_is_named_by_partition_and_nothing_is_spent(data, name, row):
    X, y = data[0].copy(), data[1].copy()
    if name == "X":
        X[[460, 700], [1, 3]] = [np.inf, np.nan]
    else:
        y[999] = np.nan
    acct = PrivacyAccountant(epsilon=1.0)
    with dask.config.set(scheduler="threads"):
        with pytest.raises(
            ValueError, match=rf"{name} contains NaN .*partition \d, row \d+ of the partition, row {row} overall"
        ):
            release_linear_stats(
                *as_dask(X, y), noise="laplace", epsilon=1.0, x_bound=1.0, y_bound=1.0, accountant=acct, intercept=False
            )
        with pytest.raises(ValueError, match=rf"row {row} overall"):
            linear_stats(*as_dask(X, y), intercept=False)
    assert acct.ledger == ()


def test_refused_budget_and_mismatched_inputs_raise_before_the_pass(data):
    X, y = data
    Xd, yd = as_dask(X, y)
    acct = PrivacyAccountant(epsilon=0.5)
    with pytest.raises(BudgetExceededError):
        release_linear_stats(
            Xd, yd, noise="laplace", epsilon=1.0, x_bound=1.0, y_bound=1.0, accountant=acct, intercept=False
        )
    with pytest.raises(TypeError, match="all be dask arrays"):
        linear_stats(Xd, pd.Series(y), intercept=False)
    with pytest.raises(ValueError, match="y must have as many rows as X, got 999 and 1000"):
        linear_stats(Xd, da.from_array(y[:-1], chunks=200), intercept=False)


def test_discrete_time_fit_on_dask_equals_the_numpy_fit():
    rng = np.random.default_rng(3)
    n = 600
    X = rng.normal(size=(n, 2))
    X /= 1.0001 * np.maximum(np.linalg.norm(X, axis=1), 1.0)[:, None]
    time, event = rng.uniform(size=n), rng.integers(0, 2, size=n)
    chunks = (150, 250, 200)
    Xd = da.from_array(X, chunks=(chunks, 2))
    td, ed = da.from_array(time, chunks=(chunks,)), da.from_array(event, chunks=(chunks,))
    expected = output_perturbation(X, time, event, epsilon=1.0, regularization=0.01, q=10, rng=7)
    acct = PrivacyAccountant(epsilon=1.0)
    with dask.config.set(scheduler="threads"):
        got = output_perturbation(Xd, td, ed, epsilon=1.0, regularization=0.01, q=10, rng=7, accountant=acct)
        from pm_private.survival.discrete.dask_reduce import partitioned_records

        records = partitioned_records(Xd, td, ed, q=10, e=3)
        f = np.linspace(-1, 1, records.dim)
        numpy_sums = loss_and_grad(f, DiscreteTimeData.from_times(X, time, event, q=10), hessian=True)
        for a, b in zip(loss_and_grad(f, records, hessian=True), numpy_sums, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-12)
        np.testing.assert_allclose(got.f, expected.f, atol=1e-9)
        assert got.n == n and acct.spent[0] == 1.0
        objective = objective_perturbation(Xd, td, ed, epsilon=2.0, regularization=0.01, q=10, rng=8)
        np.testing.assert_allclose(
            objective.f,
            objective_perturbation(X, time, event, epsilon=2.0, regularization=0.01, q=10, rng=8).f,
            atol=1e-9,
        )
        X[300, 0] = 3.0  # second partition: ‖x‖ > 1
        with pytest.raises(ValueError, match=r"‖x‖ > 1 \(first in row 150\).*\(in partition 1\)"):
            output_perturbation(
                da.from_array(X, chunks=(chunks, 2)), td, ed, epsilon=1.0, regularization=0.01, q=10, accountant=acct
            )
    assert len(acct.ledger) == 1


def test_single_threaded_blas_nests_across_threads_and_restores():
    threadpoolctl = pytest.importorskip("threadpoolctl")

    def counts():
        return {lib["num_threads"] for lib in threadpoolctl.threadpool_info() if lib["user_api"] == "blas"}

    before = counts()
    X = np.ones((64, 4))

    def kernel():  # another thread's kernel enters and leaves while this thread holds the limit
        with single_threaded_blas():
            X.T @ X

    with single_threaded_blas():
        assert counts() == {1}
        thread = threading.Thread(target=kernel)
        thread.start()
        thread.join()
        assert counts() == {1}  # the other thread's exit did not restore the limit under us
    assert counts() == before


def test_single_threaded_blas_limits_a_blas_loaded_after_the_first_search():
    """SciPy's own OpenBLAS is loaded by ``scipy.linalg``, after numpy's: the limit must reach it."""
    code = (
        "import numpy as np, threadpoolctl\n"
        "from pm_private._engine import threads\n"
        "with threads.single_threaded_blas(): pass\n"
        "import scipy.linalg\n"
        "with threads.single_threaded_blas():\n"
        "    inside = {l['num_threads'] for l in threadpoolctl.threadpool_info() if l['user_api'] == 'blas'}\n"
        "assert inside == {1}, inside\n"
    )
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "2"}
    subprocess.run(
        [sys.executable, "-c", code], check=True, env=env, cwd=str(__import__("pathlib").Path(__file__).parents[2])
    )


def test_library_works_without_dask():
    code = (
        "import sys; sys.modules['dask'] = None\n"
        "import numpy as np, pm_private\n"
        "s = pm_private.linear_stats(np.eye(3), np.ones(3), intercept=False)\n"
        "assert s.n == 3 and 'dask' not in [m for m in sys.modules if sys.modules[m] is not None]\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=str(__import__("pathlib").Path(__file__).parents[2]))

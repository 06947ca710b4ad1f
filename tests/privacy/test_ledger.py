"""Persistent ledger and reservation protocol: atomic reserve before noise, crash-safe, shared
by threads and processes (spawn, fork), kill -9 in the middle of releases."""

import multiprocessing
import os
import pickle
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from pm_private import BudgetExceededError, PrivacyAccountant, release_linear_stats
from pm_private.privacy.accountant import check_accountant
from pm_private.privacy.noise import NoiseSource
from pm_private.privacy.primitives import laplace_mechanism
from pm_private.privacy.release import release_guard
from pm_private.privacy.validation import MIN_EPSILON, check_delta, check_epsilon, check_positive

ROOT = Path(__file__).resolve().parents[2]


def _release(acct, epsilon, drawn=None):
    """A minimal mechanism: Laplace noise on one value, through the reservation protocol."""
    with release_guard(acct, "test", epsilon):
        value = laplace_mechanism([0.0], sensitivity=1.0, epsilon=epsilon, source=NoiseSource()).values
        if drawn is not None:
            drawn.append(1)
        return value


# ------------------------------------------------------------------ file ledger basics


def test_open_creates_persists_and_refuses_a_different_total(tmp_path):
    path = tmp_path / "budget.ledger"
    with pytest.raises(ValueError, match="needs the total budget"):
        PrivacyAccountant.open(path)
    assert not path.exists()
    acct = PrivacyAccountant.open(path, epsilon=1.0, delta=1e-6)
    acct.record("a", 0.25, 1e-7, label="first")
    acct.close()
    again = PrivacyAccountant.open(path)
    assert (again.epsilon, again.delta) == (1.0, 1e-6)
    assert again.spent == pytest.approx((0.25, 1e-7))
    (entry,) = again.ledger
    assert (entry.mechanism, entry.label, entry.status, entry.neighbours) == ("a", "first", "spent", "replace-one")
    assert entry.process.startswith(f"{os.getpid()}@")
    PrivacyAccountant.open(path, epsilon=1.0, delta=1e-6)  # same total: fine
    for eps, delta in [(2.0, 1e-6), (1.0, 0.0)]:
        with pytest.raises(ValueError, match="reopening it with"):
            PrivacyAccountant.open(path, epsilon=eps, delta=delta)


def test_open_refuses_files_that_are_not_ledgers(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("not a database" * 100)
    with pytest.raises(ValueError, match="not a pm_private ledger"):
        PrivacyAccountant.open(text, epsilon=1.0)
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as connection:
        connection.execute("CREATE TABLE t (x)")
    with pytest.raises(ValueError, match="not a pm_private ledger"):
        PrivacyAccountant.open(other, epsilon=1.0)
    with pytest.raises(TypeError, match="path"):
        PrivacyAccountant.open(3, epsilon=1.0)


def test_ledger_file_refuses_tampering_through_sql(tmp_path):
    path = tmp_path / "l.db"
    PrivacyAccountant.open(path, epsilon=1.0).record("a", 0.5)
    with sqlite3.connect(path) as connection:
        for statement in (
            "UPDATE budget SET epsilon = 5",
            "DELETE FROM entries",
            "UPDATE entries SET status = 'released'",
            "UPDATE entries SET epsilon = 0.1",
        ):
            with pytest.raises(sqlite3.DatabaseError):
                connection.execute(statement)
    assert PrivacyAccountant.open(path).spent == (0.5, 0.0)


@pytest.mark.parametrize("where", ["memory", "file"])
def test_reservation_protocol(where, tmp_path):
    acct = PrivacyAccountant(2.0) if where == "memory" else PrivacyAccountant.open(tmp_path / "l.db", epsilon=2.0)
    # exception before any noise: released, not counted
    with pytest.raises(ValueError), acct.charge("before", 1.0) as reservation:
        assert acct.spent == (1.0, 0.0)  # reserved = counted while in flight
        raise ValueError("bad input found before the noise")
    assert reservation.status == "released" and acct.spent == (0.0, 0.0) and acct.ledger == ()
    assert [e.status for e in acct.history] == ["released"]
    # exception after noise was drawn through a NoiseSource: stays spent
    with pytest.raises(RuntimeError), acct.charge("after", 0.5):
        NoiseSource().normal(3)
        raise RuntimeError("solver failed after the noise")
    # exception after OpenDP's Laplace: stays spent
    with pytest.raises(RuntimeError), acct.charge("opendp", 0.25):
        laplace_mechanism([1.0], sensitivity=1.0, epsilon=0.25, source=NoiseSource())
        raise RuntimeError("later failure")
    assert acct.spent == (0.75, 0.0)
    assert [e.note for e in acct.ledger] == ["failed after noise was drawn (RuntimeError)"] * 2
    # success commits; a manual reservation that drew noise cannot be released
    with acct.charge("ok", 0.25):
        pass
    reservation = acct.reserve("manual", 0.5)
    reservation.noise_drawn()
    with pytest.raises(RuntimeError, match="stays spent"):
        reservation.release()
    reservation.commit()
    with pytest.raises(RuntimeError, match="already spent"):
        reservation.commit()
    assert acct.spent == (1.5, 0.0) and [e.status for e in acct.ledger] == ["spent"] * 4
    # refusal before the body runs
    with pytest.raises(BudgetExceededError, match="nothing was released"):
        with acct.charge("too much", 0.6):
            pytest.fail("the body must not run")


def test_reservation_left_by_a_crash_stays_counted(tmp_path):
    path = tmp_path / "l.db"
    PrivacyAccountant.open(path, epsilon=1.0)
    code = textwrap.dedent(
        f"""
        import os
        from pm_private import PrivacyAccountant
        acct = PrivacyAccountant.open({str(path)!r})
        with acct.charge("dies", 0.9):
            os._exit(9)
        """
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=_env(), check=False)
    assert result.returncode == 9
    acct = PrivacyAccountant.open(path)
    assert acct.spent == (0.9, 0.0) and [e.status for e in acct.ledger] == ["reserved"]
    with pytest.raises(BudgetExceededError):
        acct.record("again", 0.2)


def test_mechanism_refused_by_the_file_ledger_draws_no_noise(tmp_path):
    X, y = np.ones((5, 2)), np.ones(5)
    acct = PrivacyAccountant.open(tmp_path / "l.db", epsilon=1.0)
    release_linear_stats(X, y, noise="laplace", epsilon=0.75, x_bound=1, y_bound=1, accountant=acct)
    generator = np.random.default_rng(5)
    state = generator.bit_generator.state
    with pytest.raises(BudgetExceededError):
        release_linear_stats(X, y, noise="laplace", epsilon=0.5, x_bound=1, y_bound=1, accountant=acct, rng=generator)
    assert generator.bit_generator.state == state
    with pytest.raises(ValueError, match="NaN"):  # found by the pass over the data, before any reservation
        release_linear_stats(
            np.full((5, 2), np.nan), y, noise="laplace", epsilon=0.25, x_bound=1, y_bound=1, accountant=acct
        )
    assert acct.spent == (0.75, 0.0) and [e.status for e in acct.history] == ["spent"]


# ------------------------------------------------------------------ argument checks


@pytest.mark.parametrize("bad", [1.0, "ledger.db", object()])
def test_accountant_of_the_wrong_type_is_a_type_error(bad):
    with pytest.raises(TypeError, match="accountant must be a PrivacyAccountant"):
        check_accountant(bad)
    with pytest.raises(TypeError, match="accountant"):
        release_linear_stats(
            np.ones((3, 2)), np.ones(3), noise="laplace", epsilon=1.0, x_bound=1, y_bound=1, accountant=bad
        )


@pytest.mark.parametrize("bad", [True, False, np.bool_(True), "1", b"1", None, [1.0]])
def test_bool_and_str_are_not_numbers(bad):
    for check in (check_epsilon, check_delta, lambda v: check_positive("x_bound", v)):
        with pytest.raises(ValueError, match="must be a number"):
            check(bad)
    with pytest.raises(ValueError, match="epsilon"):
        PrivacyAccountant(bad)
    acct = PrivacyAccountant(1.0)
    with pytest.raises(ValueError, match="epsilon"):
        acct.reserve("m", bad)
    assert acct.history == ()


@pytest.mark.parametrize("eps", [1e-320, 5e-324, 1e-7])
def test_tiny_epsilon_is_refused_before_spending(eps):
    with pytest.raises(ValueError, match="epsilon must be ≥"):
        check_epsilon(eps)
    acct = PrivacyAccountant(1.0)
    with pytest.raises(ValueError, match="epsilon"):
        release_linear_stats(
            np.ones((3, 2)), np.ones(3), noise="laplace", epsilon=eps, x_bound=1, y_bound=1, accountant=acct
        )
    assert acct.history == ()
    assert check_epsilon(MIN_EPSILON) == MIN_EPSILON


# ------------------------------------------------------------------ threads


@pytest.mark.parametrize("where", ["memory", "file"])
def test_threads_never_overspend_and_refuse_before_noise(where, tmp_path):
    acct = PrivacyAccountant(1.0) if where == "memory" else PrivacyAccountant.open(tmp_path / "l.db", epsilon=1.0)
    drawn, refused, start = [], [], threading.Barrier(8)

    def worker():
        start.wait()
        for _ in range(30):
            try:
                _release(acct, 0.1, drawn)
            except BudgetExceededError:
                refused.append(1)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # 240 attempts: exactly 10 fit; every refused attempt drew no noise
    assert len(drawn) == 10 and len(refused) == 230
    assert acct.spent[0] == pytest.approx(1.0) and len(acct.ledger) == 10


# ------------------------------------------------------------------ processes


def _spend_in_child(path, attempts, epsilon):
    acct = path if isinstance(path, PrivacyAccountant) else PrivacyAccountant.open(path)
    done = 0
    for _ in range(attempts):
        try:
            _release(acct, epsilon)
            done += 1
        except BudgetExceededError:
            pass
    return done


FORK_WARNING = "ignore:This process .* is multi-threaded:DeprecationWarning"


@pytest.mark.filterwarnings(FORK_WARNING)
@pytest.mark.parametrize("method", ["spawn", "fork"])
def test_processes_share_one_budget(method, tmp_path):
    path = tmp_path / "l.db"
    acct = PrivacyAccountant.open(path, epsilon=1.0)
    acct.record("parent", 0.2)  # the parent holds an open connection when it forks
    context = multiprocessing.get_context(method)
    with context.Pool(2) as pool:
        # the accountant itself is pickled to spawned children (it reopens the file there)
        done = pool.starmap(_spend_in_child, [(acct, 10, 0.1)] * 4)
    assert sum(done) == 8
    assert acct.spent[0] == pytest.approx(1.0) and len(acct.ledger) == 9
    assert len({e.process for e in acct.ledger}) >= 2


def _fork_children_spend(acct, total_children):
    pids = []
    for _ in range(total_children):
        pid = os.fork()
        if pid == 0:
            try:
                _release(acct, 1.0)
                code = 0
            except BudgetExceededError:
                code = 1
            except RuntimeError:
                code = 2
            os._exit(code)
        pids.append(pid)
    return [os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in pids]


@pytest.mark.filterwarnings(FORK_WARNING)
def test_fork_shares_a_file_ledger_but_not_an_in_memory_one(tmp_path):
    acct = PrivacyAccountant.open(tmp_path / "l.db", epsilon=1.0)
    assert acct.spent == (0.0, 0.0)  # connection open in the parent
    codes = _fork_children_spend(acct, 4)
    assert sorted(codes) == [0, 1, 1, 1] and acct.spent == (1.0, 0.0)
    memory = PrivacyAccountant(1.0)
    assert _fork_children_spend(memory, 4) == [2, 2, 2, 2]  # refused in every child
    assert memory.spent == (0.0, 0.0)


def test_pickled_in_memory_accountant_cannot_spend_but_a_file_one_can(tmp_path):
    memory = PrivacyAccountant(1.0)
    memory.record("a", 0.25)
    snapshot = pickle.loads(pickle.dumps(memory))
    assert snapshot.ledger == memory.ledger and snapshot.remaining == (0.75, 0.0)
    with pytest.raises(RuntimeError, match="is a copy"):
        snapshot.record("b", 0.25)
    with pytest.raises(RuntimeError, match="is a copy"):
        _release(snapshot, 0.25)
    acct = PrivacyAccountant.open(tmp_path / "l.db", epsilon=1.0)
    copy = pickle.loads(pickle.dumps(acct))
    copy.record("via copy", 0.5)
    assert acct.spent == (0.5, 0.0)
    import copy as copying

    memory = PrivacyAccountant(1.0)
    assert copying.deepcopy(memory) is memory and copying.copy(memory) is memory


# ------------------------------------------------------------------ kill -9


WORKER = """
import os, sys
from pm_private import PrivacyAccountant
from pm_private.privacy.noise import NoiseSource
from pm_private.privacy.primitives import laplace_mechanism
from pm_private.privacy.release import release_guard

path, log = sys.argv[1], os.open(sys.argv[2], os.O_WRONLY | os.O_APPEND | os.O_CREAT)

class LoggedSource(NoiseSource):
    def uniform(self, size):
        values = super().uniform(size)
        os.write(log, b"drawn\\n")  # after the draw: a kill in between only under-counts
        return values

acct = PrivacyAccountant.open(path, durable=sys.argv[3] == "durable")
os.write(log, b"ready\\n")
while True:
    try:
        with release_guard(acct, "loop", 0.01):
            laplace_mechanism([0.0, 1.0], sensitivity=1.0, epsilon=0.01, source=LoggedSource(__import__("numpy").random.default_rng()))
    except Exception as error:
        os.write(log, f"stop {type(error).__name__}\\n".encode())
        break
"""


def _env():
    return {**os.environ, "PYTHONPATH": str(ROOT)}


@pytest.mark.parametrize("durable", [True, False])
def test_kill_9_in_the_middle_of_releases_loses_nothing(tmp_path, durable):
    path, script = tmp_path / "l.db", tmp_path / "worker.py"
    script.write_text(WORKER)
    PrivacyAccountant.open(path, epsilon=1000.0, durable=durable)
    rng = np.random.default_rng(0)
    drawn_total = 0
    for round_ in range(4):
        log = tmp_path / f"log{round_}"
        mode = "durable" if durable else "fast"
        child = subprocess.Popen([sys.executable, str(script), str(path), str(log), mode], cwd=ROOT, env=_env())
        deadline = time.monotonic() + 60
        while not (log.exists() and log.read_text().count("drawn") > 20):
            assert time.monotonic() < deadline and child.poll() is None
            time.sleep(0.01)
        time.sleep(rng.uniform(0, 0.2))
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        assert child.returncode == -signal.SIGKILL
        # each release draws twice (two exponentials per Laplace value): releases with noise
        drawn_total += -(-log.read_text().count("drawn") // 2)
        acct = PrivacyAccountant.open(path)
        counted = len(acct.ledger)
        assert counted >= drawn_total  # every release whose noise was drawn is counted
        assert acct.spent[0] == pytest.approx(0.01 * counted)
        assert sum(e.status == "reserved" for e in acct.ledger) <= round_ + 1  # at most one per kill
        drawn_total = counted
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)

"""A ledger cannot fork: two copies of one ledger in use at once are detected at the next record
(refused before anything is written), a divergent history is refused naming both digests, the
recovery charges every fork's spends; and a connection inherited across fork() is never used nor
closed by the child (kill -9 of forked children, with the parent holding the ledger, loses
nothing)."""

import ctypes
import gc
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from pm_private import PrivacyAccountant
from pm_private.privacy import witness
from pm_private.privacy.ledger import LedgerForkError, LedgerRollbackError, LedgerWitnessWarning, recover_ledger
from pm_private.privacy.noise import NoiseSource
from pm_private.privacy.primitives import laplace_mechanism
from pm_private.privacy.release import release_guard

FORK_WARNING = "ignore:This process .* is multi-threaded:DeprecationWarning"

#: Set in the new Python that :func:`_forked_elsewhere` runs a forking test in.
_INNER = "PM_PRIVATE_FORK_TEST_INNER"


def _forked_elsewhere(request) -> bool:
    """Run this test in a new Python of one thread unless already there (then False: run it here).

    A test worker holds other threads (a notebook client's heartbeat, dask's pools), and a child
    forked from a process with threads can block for ever on a lock that one of them held: a run of
    the suite hung so in the fork made in C.  A new interpreter forks with one thread, as the
    scenario means."""
    if os.environ.get(_INNER):
        return False
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "COV_"))}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=", request.node.nodeid]
    result = subprocess.run(
        command, cwd=request.config.rootpath, env={**environment, _INNER: "1"}, capture_output=True, text=True,
        timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    return True


@pytest.fixture(autouse=True)
def state_dir(tmp_path, monkeypatch):
    folder = tmp_path / "state"
    monkeypatch.setenv("PM_PRIVATE_STATE_DIR", str(folder))
    return folder


def _ledger_and_copy(tmp_path: Path) -> tuple[Path, Path]:
    """A ledger with 1.0 spent (2 records), closed, and a copy of it (same identity, one witness)."""
    path, copy = tmp_path / "l.ledger", tmp_path / "copy.ledger"
    acct = PrivacyAccountant.open(path, 10.0)
    acct.record("before the copy", 1.0)
    acct.close()  # the last connection: the -wal file is checkpointed into the file
    shutil.copy(path, copy)
    return path, copy


def _rows(acct: PrivacyAccountant) -> int:
    return acct._store.head().rows


# ------------------------------------------------------------------ two copies of one ledger


@pytest.mark.parametrize("first", ["original", "copy"])
def test_two_copies_open_at_once_are_detected_at_the_next_record(tmp_path, first):
    path, copy = _ledger_and_copy(tmp_path)
    accounts = {"original": PrivacyAccountant.open(path), "copy": PrivacyAccountant.open(copy)}
    winner, loser = accounts[first], accounts["copy" if first == "original" else "original"]
    winner.record("first", 0.5)
    head, witnessed = loser._store.head(), winner._store.head()
    for attempt in range(3):  # refused every time, before anything is written
        with pytest.raises(LedgerForkError) as error:
            loser.record(f"on the other copy {attempt}", 0.5)
        assert loser.spent == (1.0, 0.0) and loser._store.head() == head
        winner.record(f"winner {attempt}", 0.5)
    message = str(error.value)
    assert isinstance(error.value, LedgerRollbackError) and str(loser.path) in message
    assert f"row {head.rows} (digest {head.digest[:12]})" in message  # both heads named
    assert f"digest {witnessed.digest[:12]}" not in message  # the witness has moved on since
    assert f"row {winner._store.head().rows - 2} (digest " in message and "nothing was written" in message
    assert winner.spent == (3.0, 0.0)
    winner.close(), loser.close()
    with pytest.raises(LedgerRollbackError):
        PrivacyAccountant.open(loser.path)
    recovery = recover_ledger(loser.path, loser.path)  # from the refused copy itself: nothing is lost
    assert recovery.carried == (2.0, 0.0)
    assert PrivacyAccountant.open(loser.path).spent == (3.0, 0.0)
    with pytest.raises(LedgerRollbackError):  # from now on the other copy is the one refused
        PrivacyAccountant.open(winner.path)


def _spend_in_a_child(path: Path, times: int, go: Path, log: Path) -> int:
    """Fork a child that opens ``path``, waits for ``go`` and records ``times`` spends of 0.5."""
    pid = os.fork()
    if pid:
        return pid
    code = 0
    try:
        descriptor = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        acct = PrivacyAccountant.open(path)
        os.write(descriptor, b"open\n")
        while not go.exists():
            time.sleep(0.0005)
        for i in range(times):
            try:
                acct.record(f"{path.name} {i}", 0.5)
                os.write(descriptor, b"ok\n")
            except LedgerForkError:
                os.write(descriptor, b"refused\n")
    except BaseException as error:  # reported to the parent, which fails the test
        os.write(descriptor, f"error {type(error).__name__}: {error}\n".encode())
        code = 1
    finally:
        os._exit(code)


@pytest.mark.filterwarnings(FORK_WARNING)
def test_concurrent_processes_on_two_copies_never_fork_the_ledger(tmp_path, state_dir, request):
    if _forked_elsewhere(request):
        return
    accepted_forks = []
    for run in range(12):
        folder = tmp_path / f"run{run}"
        folder.mkdir()
        path, copy = _ledger_and_copy(folder)
        go = folder / "go"
        logs = folder / "original.log", folder / "copy.log"
        pids = [_spend_in_a_child(path, 6, go, logs[0]), _spend_in_a_child(copy, 8, go, logs[1])]
        deadline = time.monotonic() + 60
        while not all(log.exists() and "open" in log.read_text() for log in logs):
            assert time.monotonic() < deadline
            time.sleep(0.001)
        go.touch()
        assert [os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in pids] == [0, 0], [
            log.read_text() for log in logs
        ]
        ok = [log.read_text().count("ok") for log in logs]
        if min(ok) > 0:
            accepted_forks.append((run, ok))
        winner, loser = (path, copy) if ok[0] else (copy, path)
        assert PrivacyAccountant.open(winner).spent == (1.0 + 0.5 * max(ok), 0.0)
        with pytest.raises(LedgerRollbackError):
            PrivacyAccountant.open(loser)
        recover_ledger(loser, loser)
        assert PrivacyAccountant.open(loser).spent[0] >= 1.0 + 0.5 * sum(ok)
    assert accepted_forks == []


def test_a_history_that_diverged_is_refused_naming_both_digests_and_recovery_charges_both_forks(
    tmp_path, state_dir, monkeypatch
):
    path, copy = _ledger_and_copy(tmp_path)
    original = PrivacyAccountant.open(path)
    original.record("on the original", 0.5)  # rows 3-4, witnessed
    at_four = original._store.head()
    # the copy is written where this witness cannot see it (another state folder, e.g. another machine)
    monkeypatch.setenv("PM_PRIVATE_STATE_DIR", str(tmp_path / "elsewhere"))
    with pytest.warns(LedgerWitnessWarning):
        elsewhere = PrivacyAccountant.open(copy)
    elsewhere.record("on the copy, elsewhere", 2.0)  # rows 3-4 too, another digest
    forked = elsewhere._store.head()
    elsewhere.close()
    monkeypatch.setenv("PM_PRIVATE_STATE_DIR", str(state_dir))
    assert forked.rows == at_four.rows and forked.digest != at_four.digest
    with pytest.raises(LedgerForkError, match="forked") as error:  # same length, other digest
        PrivacyAccountant.open(copy)
    assert f"{forked.digest[:12]}" in str(error.value) and f"{at_four.digest[:12]}" in str(error.value)
    original.record("on the original again", 0.5)  # the witness moves on: the fork is still named
    original.close()
    with pytest.raises(LedgerForkError) as error:
        PrivacyAccountant.open(copy)
    assert f"row 4 (digest {forked.digest[:12]})" in str(error.value)
    assert f"row 4 (digest {at_four.digest[:12]})" in str(error.value)
    recovery = recover_ledger(copy, copy)  # charges both forks: 1.0 before, 1.0 and 2.0 after
    assert recovery.carried == (1.0, 0.0)
    assert PrivacyAccountant.open(copy).spent == (4.0, 0.0)
    with pytest.raises(LedgerForkError):
        PrivacyAccountant.open(path)


def test_the_witness_keeps_the_heads_it_has_seen(tmp_path):
    path = tmp_path / "l.ledger"
    acct = PrivacyAccountant.open(path, 10.0)
    digests = [acct._store.head().digest]
    for i in range(3):
        acct.record(f"m{i}", 1.0)
        digests.append(acct._store.head().digest)
    witnessed = witness.read(acct._store.identity)
    assert [rows for rows, _ in witnessed.heads] == list(range(7))  # a reservation and a settlement each
    seen = dict(witnessed.heads)
    assert all(seen[2 * i] == digest[: witness.PREFIX] for i, digest in enumerate(digests))
    acct.close()


def test_a_long_history_is_thinned_but_keeps_its_recent_heads():
    heads = [(rows, f"{rows:064x}") for rows in range(0, 5000)]
    kept = witness.thin(heads)
    rows = [r for r, _ in kept]
    assert rows[-1] == 4999 and rows == sorted(rows)
    assert set(range(5000 - witness.RECENT, 5000)) <= set(rows)  # every recent head
    assert all(r % witness.SPACING == 0 for r in rows if r <= 4999 - witness.RECENT)  # older: spaced
    assert len(kept) < witness.RECENT + 5000 // witness.SPACING + 2


# ------------------------------------------------------------------ fork safety


def test_a_dropped_accountant_closes_its_connection(tmp_path):
    if not Path("/proc/self/fd").is_dir():
        pytest.skip("needs /proc to list open files")
    path = tmp_path / "l.ledger"
    PrivacyAccountant.open(path, 10.0).record("m", 1.0)
    assert PrivacyAccountant.open(path).spent == (1.0, 0.0)
    opened = []
    for descriptor in os.listdir("/proc/self/fd"):
        try:
            opened.append(os.readlink(f"/proc/self/fd/{descriptor}"))
        except OSError:
            pass
    assert not [name for name in opened if name.startswith(str(path))]  # not left for the garbage collector


def _fork_in_c() -> int:
    """fork() called from C: no Python fork handler runs (as in a C extension that forks)."""
    return ctypes.PyDLL(None).fork()


def test_a_connection_inherited_through_a_fork_made_in_c_is_never_used_nor_closed(tmp_path, request):
    if not hasattr(os, "register_at_fork"):
        pytest.skip("no fork")
    if _forked_elsewhere(request):
        return
    path = tmp_path / "l.ledger"
    acct = PrivacyAccountant.open(path, 10.0)
    acct.record("before the fork", 1.0)  # open, its last rows in the -wal file
    inherited = acct._store._connection
    pid = _fork_in_c()
    if pid == 0:
        code = 1
        try:
            acct.close()
            gc.collect()
            assert inherited.is_open and acct._store._connection is None  # dropped, never closed here
            for attempt in (lambda: acct.record("in the child", 1.0), lambda: PrivacyAccountant.open(path)):
                with pytest.raises(RuntimeError, match="fork made in C"):
                    attempt()
            code = 0
        finally:
            os._exit(code)
    assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
    acct.record("after the fork", 1.0)  # the parent's connection is intact
    acct.close()
    assert PrivacyAccountant.open(path).spent == (2.0, 0.0)


class _LoggedSource(NoiseSource):
    """Noise that writes ``drawn <release>`` to a log after each draw (a kill in between only
    under-counts)."""

    def __init__(self, descriptor: int, release: int):
        super().__init__(np.random.default_rng())
        self.descriptor, self.release = descriptor, release

    def uniform(self, size):
        values = super().uniform(size)
        os.write(self.descriptor, f"drawn {self.release}\n".encode())
        return values


def _releases_until_killed(acct: PrivacyAccountant | Path, log: Path, first: int) -> None:
    """In a forked child: release until killed; ``acct`` is the parent's accountant or a path."""
    descriptor = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        acct = acct if isinstance(acct, PrivacyAccountant) else PrivacyAccountant.open(acct, durable=False)
        for release in range(first, first + 10**6):
            with release_guard(acct, "loop", 0.01):
                laplace_mechanism([0.0], sensitivity=1.0, epsilon=0.01, source=_LoggedSource(descriptor, release))
    except BaseException as error:
        os.write(descriptor, f"stop {type(error).__name__}: {error}\n".encode())
    finally:
        os._exit(1)


def _drawn(log: Path) -> set[int]:
    text = log.read_text() if log.exists() else ""
    assert "stop" not in text, text
    return {int(line.split()[1]) for line in text.splitlines() if line.startswith("drawn")}


def _wait_for_draws(log: Path, count: int) -> None:
    deadline = time.monotonic() + 60
    while len(_drawn(log)) < count:
        assert time.monotonic() < deadline, "the child drew no noise for a minute"
        time.sleep(0.001)


@pytest.mark.filterwarnings(FORK_WARNING)
def test_kill_9_of_forked_children_with_the_parent_holding_the_ledger_loses_nothing(tmp_path, request):
    """24 kills.  Before each fork the parent reads the ledger through a held accountant and through
    one it drops at once; while the child spends, the parent's garbage collector runs (it used to
    close, in the parent, a connection the child had inherited the locks of, and the child's
    committed rows went to a deleted write-ahead log)."""
    if _forked_elsewhere(request):
        return
    path = tmp_path / "l.ledger"
    held = PrivacyAccountant.open(path, epsilon=1000.0, durable=False)  # no fsync: a kill -9 loses nothing
    rng = np.random.default_rng(1)
    drawn: set[int] = set()
    gc.freeze()  # the objects made so far are not scanned: each collection below is quick
    try:
        for kill in range(24):
            assert held.spent == PrivacyAccountant.open(path).spent  # the second accountant is dropped at once
            log = tmp_path / f"log{kill}"
            pid = os.fork()
            if pid == 0:
                _releases_until_killed(held if kill % 2 else path, log, 10**6 * kill)
            try:
                _wait_for_draws(log, 3)
                gc.collect()
                _wait_for_draws(log, len(_drawn(log)) + 3)
                time.sleep(rng.uniform(0, 0.02))
            finally:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            drawn |= _drawn(log)
            acct = PrivacyAccountant.open(path)  # never behind its witness: no row lost
            counted = len(acct.ledger)
            assert counted >= len(drawn)  # every release whose noise was drawn is counted
            assert acct.spent[0] == pytest.approx(0.01 * counted)
            acct.close()
    finally:
        gc.unfreeze()
    assert held.spent == PrivacyAccountant.open(path).spent
    held.close()

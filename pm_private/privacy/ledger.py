"""Where a budget's ledger lives: in memory (one process) or in an SQLite file (shared by threads and
processes, crash-safe).  Each store checks the budget (:func:`.budget.refusal`) and records the
entry in one atomic step; the accountant (:mod:`.accountant`) is the only user of these classes.
"""

from __future__ import annotations

import math
import os
import sqlite3
import threading
import weakref
from datetime import datetime
from pathlib import Path

from .budget import (
    RELEASED,
    RESERVED,
    SPENT,
    BudgetExceededError,
    LedgerEntry,
    check_total,
    now,
    refusal,
)
from .validation import check_nonnegative, check_positive

__all__ = ["MemoryStore", "SQLiteStore"]

# Seconds a ledger operation waits for another process's transaction before failing.
_BUSY_TIMEOUT = 60.0

_LEDGER_FORMAT = 1


class MemoryStore:
    def __init__(self, total: tuple[float, float]):
        self.total = total
        self._entries: list[LedgerEntry] = []
        self._lock = threading.Lock()
        self._pid = os.getpid()

    path = None

    def reserve(self, entry: LedgerEntry) -> int:
        if os.getpid() != self._pid:
            raise RuntimeError(
                "this in-memory PrivacyAccountant is a copy (made by fork or pickling) and cannot "
                "spend: the original and every copy would spend the same budget; share a ledger "
                "file instead, PrivacyAccountant.open(path, epsilon=..., delta=...)"
            )
        with self._lock:
            reason = refusal(self.total, self._spent(), entry.epsilon, entry.delta)
            if reason:
                raise BudgetExceededError(reason + "; nothing was released")
            entry_id = len(self._entries) + 1
            self._entries.append(_replace(entry, id=entry_id))
        return entry_id

    def settle(self, entry_id: int, status: str, note: str) -> None:
        with self._lock:
            self._entries[entry_id - 1] = _replace(self._entries[entry_id - 1], status=status, note=note)

    def _spent(self) -> tuple[float, float]:
        counted = [e for e in self._entries if e.counted]
        return math.fsum(e.epsilon for e in counted), math.fsum(e.delta for e in counted)

    def spent(self) -> tuple[float, float]:
        with self._lock:
            return self._spent()

    def entries(self) -> list[LedgerEntry]:
        with self._lock:
            return list(self._entries)

    def close(self) -> None:
        pass


def _replace(entry: LedgerEntry, **changes) -> LedgerEntry:
    return LedgerEntry(**{**entry.__dict__, **changes})


_SCHEMA = f"""
CREATE TABLE budget (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    epsilon REAL NOT NULL,
    delta REAL NOT NULL,
    created TEXT NOT NULL,
    format INTEGER NOT NULL
);
CREATE TABLE entries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    mechanism TEXT NOT NULL,
    epsilon REAL NOT NULL,
    delta REAL NOT NULL,
    neighbours TEXT NOT NULL,
    label TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('{RESERVED}', '{SPENT}', '{RELEASED}')),
    note TEXT NOT NULL,
    process TEXT NOT NULL,
    reserved_at TEXT NOT NULL,
    settled_at TEXT
);
CREATE TRIGGER budget_is_fixed BEFORE UPDATE ON budget
BEGIN SELECT RAISE(ABORT, 'the total budget of a ledger cannot be changed'); END;
CREATE TRIGGER entries_are_kept BEFORE DELETE ON entries
BEGIN SELECT RAISE(ABORT, 'ledger entries cannot be deleted'); END;
CREATE TRIGGER settled_entries_are_final BEFORE UPDATE ON entries
WHEN OLD.status != '{RESERVED}' OR NEW.status = '{RESERVED}'
  OR NEW.epsilon != OLD.epsilon OR NEW.delta != OLD.delta
BEGIN SELECT RAISE(ABORT, 'settled ledger entries are final'); END;
"""

# Connections inherited through a fork that bypassed os.register_at_fork: never closed in the
# child (closing could checkpoint or delete the parent's write-ahead log), only dropped.
_INHERITED: list[sqlite3.Connection] = []
_FILE_STORES: weakref.WeakSet[SQLiteStore] = weakref.WeakSet()
_FORKING: list[SQLiteStore] = []


def _before_fork() -> None:
    for store in list(_FILE_STORES):
        store._lock.acquire()
        _FORKING.append(store)
        store._disconnect()


def _after_fork_in_parent() -> None:
    while _FORKING:
        _FORKING.pop()._lock.release()


def _after_fork_in_child() -> None:
    while _FORKING:
        store = _FORKING.pop()
        store._lock = threading.Lock()


os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent, after_in_child=_after_fork_in_child)


def _connect(path: Path) -> sqlite3.Connection:
    try:
        connection = sqlite3.connect(path, timeout=_BUSY_TIMEOUT, isolation_level=None, check_same_thread=False)
        mode = connection.execute("PRAGMA journal_mode=WAL").fetchone()[0]
    except sqlite3.DatabaseError as error:
        raise ValueError(f"{path} is not a pm_private ledger file ({error})") from None
    if mode.lower() != "wal":
        connection.close()
        raise OSError(f"cannot use a write-ahead log for the ledger {path} (journal mode {mode!r})")
    connection.execute("PRAGMA synchronous=NORMAL")  # FULL only around reservations
    return connection


class SQLiteStore:
    def __init__(self, path: Path, epsilon, delta, durable: bool = True):
        self.path = path
        self.durable = durable
        self._lock = threading.Lock()
        self._connection: sqlite3.Connection | None = None
        self._pid = os.getpid()
        existed = path.exists() and path.stat().st_size > 0
        if not existed and epsilon is None:
            raise ValueError(f"no ledger at {path}: creating one needs the total budget (epsilon, and delta if any)")
        with self._lock:
            connection = self._connect()
            connection.execute("BEGIN IMMEDIATE")
            try:
                tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
                if "budget" not in tables:
                    if tables - {"sqlite_sequence"}:
                        raise ValueError(f"{path} is an SQLite file but not a pm_private ledger")
                    if epsilon is None:
                        raise ValueError(
                            f"no ledger at {path}: creating one needs the total budget (epsilon, and delta if any)"
                        )
                    total = check_total(epsilon, 0.0 if delta is None else delta)
                    for statement in _SCHEMA.split(";\n"):
                        if statement.strip():
                            connection.execute(statement)
                    connection.execute(
                        "INSERT INTO budget VALUES (1, ?, ?, ?, ?)", (*total, now().isoformat(), _LEDGER_FORMAT)
                    )
                row = connection.execute("SELECT epsilon, delta, format FROM budget").fetchone()
                connection.execute("COMMIT")
            except BaseException:
                connection.execute("ROLLBACK")
                raise
        if row[2] != _LEDGER_FORMAT:
            raise ValueError(f"{path} has ledger format {row[2]}, this version reads format {_LEDGER_FORMAT}")
        self.total = (float(row[0]), float(row[1]))
        asked = (
            self.total[0] if epsilon is None else check_positive("epsilon", epsilon),
            self.total[1] if delta is None else check_nonnegative("delta", delta),
        )
        if asked != self.total:
            raise ValueError(
                f"the ledger {path} holds a total budget of ε = {self.total[0]!r}, δ = {self.total[1]!r}; "
                f"reopening it with ε = {asked[0]!r}, δ = {asked[1]!r} is refused"
            )
        _FILE_STORES.add(self)

    def _connect(self) -> sqlite3.Connection:
        pid = os.getpid()
        if self._connection is not None and self._pid != pid:
            _INHERITED.append(self._connection)  # opened by the parent: never used nor closed here
            self._connection = None
        if self._connection is None:
            self._connection = _connect(self.path)
            self._pid = pid
        return self._connection

    def _disconnect(self) -> None:
        if self._connection is not None and self._pid == os.getpid():
            self._connection.close()
        self._connection = None

    def reserve(self, entry: LedgerEntry) -> int:
        with self._lock:
            connection = self._connect()
            # The reservation reaches the disk (fsync) before any noise is drawn; settling it
            # needs no fsync: a lost commit or release leaves it reserved, i.e. counted.
            if self.durable:
                connection.execute("PRAGMA synchronous=FULL")
            connection.execute("BEGIN IMMEDIATE")
            try:
                spent = connection.execute(
                    f"SELECT total(epsilon), total(delta) FROM entries WHERE status != '{RELEASED}'"
                ).fetchone()
                reason = refusal(self.total, spent, entry.epsilon, entry.delta)
                if reason:
                    raise BudgetExceededError(reason + "; nothing was released")
                cursor = connection.execute(
                    "INSERT INTO entries (mechanism, epsilon, delta, neighbours, label, status, note, process, reserved_at) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        entry.mechanism,
                        entry.epsilon,
                        entry.delta,
                        entry.neighbours,
                        entry.label,
                        RESERVED,
                        "",
                        entry.process,
                        entry.time.isoformat(),
                    ),
                )
                connection.execute("COMMIT")
            except BaseException:
                if connection.in_transaction:
                    connection.execute("ROLLBACK")
                raise
            finally:
                if self.durable:
                    connection.execute("PRAGMA synchronous=NORMAL")
            return cursor.lastrowid

    def settle(self, entry_id: int, status: str, note: str) -> None:
        with self._lock:
            self._connect().execute(
                f"UPDATE entries SET status = ?, note = ?, settled_at = ? WHERE id = ? AND status = '{RESERVED}'",
                (status, note, now().isoformat(), entry_id),
            )

    def spent(self) -> tuple[float, float]:
        with self._lock:
            return tuple(
                self._connect()
                .execute(f"SELECT total(epsilon), total(delta) FROM entries WHERE status != '{RELEASED}'")
                .fetchone()
            )

    def entries(self) -> list[LedgerEntry]:
        with self._lock:
            rows = (
                self._connect()
                .execute(
                    "SELECT mechanism, epsilon, delta, neighbours, label, reserved_at, status, note, process, id "
                    "FROM entries ORDER BY id"
                )
                .fetchall()
            )
        return [
            LedgerEntry(m, e, d, nb, lb, datetime.fromisoformat(t), st, nt, pr, i)
            for m, e, d, nb, lb, t, st, nt, pr, i in rows
        ]

    def close(self) -> None:
        with self._lock:
            self._disconnect()

"""Where a budget's ledger lives: in memory (one process) or in an SQLite file (shared by threads and
processes, crash-safe, damage detected).  Each store checks the budget (:func:`.budget.refusal`) and
records the entry in one atomic step; the accountant (:mod:`.accountant`) is the only user of the
store classes.

Ledger file (format 2)
----------------------
An SQLite database in write-ahead-log mode with three tables: ``budget`` (the total, the day it
was created, the number of records and the digest of the last one), ``entries`` (one row per
reservation: mechanism, (ε, δ), neighbour relation, label, process, the UTC *day*, and the noise
parameters as JSON) and ``settlements`` (one row when a reservation is committed or released).
Rows are only ever added.  Every row carries a SHA-256 digest chained over the previous one,
starting from a digest of the total budget, and ``budget.head`` holds the last digest: a
deleted, edited or reordered row, an edited total or a lost tail breaks the chain.  On every open
the file is checked (not empty, as long as its header says, SQLite's ``PRAGMA integrity_check``,
the whole chain) and a damaged file is refused with :class:`DamagedLedgerError`, never opened as
a fresh or smaller budget; while open, each transaction verifies the rows written by other
processes since the last one.  The chain detects damage and edits made without recomputing it;
it is not a signature against someone who rewrites the file and its digests on purpose.

Format 1 (earlier versions: no digests, times to the microsecond) is refused on open, with the
command that upgrades it once: :func:`upgrade_ledger` (``pm-private ledger FILE --upgrade``).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import uuid
import weakref
from datetime import UTC, datetime
from pathlib import Path

from .budget import (
    RELEASED,
    RESERVED,
    SPENT,
    BudgetExceededError,
    LedgerEntry,
    basic_total,
    check_total,
    day,
    noise_from_text,
    noise_to_text,
    now,
    refusal,
)
from .validation import check_nonnegative, check_positive

__all__ = ["DamagedLedgerError", "MemoryStore", "SQLiteStore", "upgrade_ledger"]

# Seconds a ledger operation waits for another process's transaction before failing.
_BUSY_TIMEOUT = 60.0

_LEDGER_FORMAT = 2
_SQLITE_HEADER = b"SQLite format 3\x00"


class DamagedLedgerError(ValueError):
    """A ledger file is damaged, edited or not a ledger: refused, never opened as a new budget."""


def _damaged(path: Path, what: str) -> DamagedLedgerError:
    return DamagedLedgerError(
        f"the ledger {path} is damaged: {what}.  It is refused, so that its budget is neither reset nor "
        "reduced.  Restore the file from a backup; without one, keep it for the record and account for "
        "its releases in a new ledger file (a new name) created with only the budget that remains"
    )


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
            reason = refusal(self.total, [e for e in self._entries if e.counted], entry)
            if reason:
                raise BudgetExceededError(reason + "; nothing was released")
            entry_id = len(self._entries) + 1
            self._entries.append(_replace(entry, id=entry_id, time=day(entry.time)))
        return entry_id

    def settle(self, entry_id: int, status: str, note: str) -> None:
        with self._lock:
            self._entries[entry_id - 1] = _replace(self._entries[entry_id - 1], status=status, note=note)

    def spent(self) -> tuple[float, float]:
        with self._lock:
            return basic_total(e for e in self._entries if e.counted)

    def entries(self) -> list[LedgerEntry]:
        with self._lock:
            return list(self._entries)

    def close(self) -> None:
        pass


def _replace(entry: LedgerEntry, **changes) -> LedgerEntry:
    return LedgerEntry(**{**entry.__dict__, **changes})


# --------------------------------------------------------------------------------------------
# The file format

_SCHEMA = f"""
CREATE TABLE budget (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    epsilon REAL NOT NULL,
    delta REAL NOT NULL,
    created TEXT NOT NULL,
    format INTEGER NOT NULL,
    rows INTEGER NOT NULL,
    head TEXT NOT NULL
);
CREATE TABLE entries (
    id INTEGER PRIMARY KEY,
    seq INTEGER NOT NULL UNIQUE,
    mechanism TEXT NOT NULL,
    epsilon REAL NOT NULL,
    delta REAL NOT NULL,
    neighbours TEXT NOT NULL,
    label TEXT NOT NULL,
    process TEXT NOT NULL,
    day TEXT NOT NULL,
    noise TEXT NOT NULL,
    digest TEXT NOT NULL
);
CREATE TABLE settlements (
    id INTEGER PRIMARY KEY REFERENCES entries (id),
    seq INTEGER NOT NULL UNIQUE,
    status TEXT NOT NULL CHECK (status IN ('{SPENT}', '{RELEASED}')),
    note TEXT NOT NULL,
    digest TEXT NOT NULL
);
CREATE TRIGGER budget_is_fixed BEFORE UPDATE ON budget
WHEN NEW.epsilon IS NOT OLD.epsilon OR NEW.delta IS NOT OLD.delta OR NEW.created IS NOT OLD.created
  OR NEW.format IS NOT OLD.format OR NEW.rows IS NOT OLD.rows + 1
BEGIN SELECT RAISE(ABORT, 'the total budget of a ledger cannot be changed'); END;
CREATE TRIGGER budget_is_kept BEFORE DELETE ON budget
BEGIN SELECT RAISE(ABORT, 'the total budget of a ledger cannot be deleted'); END;
CREATE TRIGGER entries_are_kept BEFORE DELETE ON entries
BEGIN SELECT RAISE(ABORT, 'ledger entries cannot be deleted'); END;
CREATE TRIGGER entries_are_final BEFORE UPDATE ON entries
BEGIN SELECT RAISE(ABORT, 'ledger entries are final'); END;
CREATE TRIGGER settlements_are_kept BEFORE DELETE ON settlements
BEGIN SELECT RAISE(ABORT, 'ledger entries cannot be deleted'); END;
CREATE TRIGGER settlements_are_final BEFORE UPDATE ON settlements
BEGIN SELECT RAISE(ABORT, 'settled ledger entries are final'); END
"""


def _digest(previous: str, row: list) -> str:
    text = json.dumps(row, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(f"{previous}\n{text}".encode()).hexdigest()


def _genesis(epsilon: float, delta: float, created: str, fmt: int) -> str:
    return _digest("pm_private ledger", ["budget", epsilon, delta, created, fmt])


def _entry_row(entry_id: int, mechanism, epsilon, delta, neighbours, label, process, day_text, noise) -> list:
    return ["entry", entry_id, mechanism, epsilon, delta, neighbours, label, process, day_text, noise]


def _settlement_row(entry_id: int, status: str, note: str) -> list:
    return ["settle", entry_id, status, note]


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


def _is_read_only(error: sqlite3.Error) -> bool:
    return "readonly" in str(error) or "read-only" in str(error)


def _read_only(path: Path) -> PermissionError:
    return PermissionError(
        f"the ledger {path} cannot be written (the file or its folder is read-only for this user): "
        "a ledger records every release, so it must be writable; fix the permissions of the file and "
        "of its folder (SQLite writes its write-ahead log next to it)"
    )


def _connect(path: Path) -> sqlite3.Connection:
    connection = None
    try:
        connection = sqlite3.connect(path, timeout=_BUSY_TIMEOUT, isolation_level=None, check_same_thread=False)
        mode = connection.execute("PRAGMA journal_mode=WAL").fetchone()[0]
    except (sqlite3.DatabaseError, UnicodeDecodeError) as error:
        if connection is not None:
            connection.close()
        if isinstance(error, sqlite3.OperationalError) and _is_read_only(error):
            raise _read_only(path) from None
        raise _damaged(path, f"SQLite cannot open it ({error})") from None
    if mode.lower() != "wal":
        connection.close()
        raise OSError(f"cannot use a write-ahead log for the ledger {path} (journal mode {mode!r})")
    connection.execute("PRAGMA synchronous=NORMAL")  # FULL only around reservations
    return connection


def _check_path(path: Path, creating: bool) -> None:
    """Errors a user can fix, raised at open time: a folder, a missing folder, permissions."""
    folder = path.absolute().parent
    if path.is_dir():
        raise IsADirectoryError(f"the ledger path {path} is a folder; give a file name")
    if not folder.is_dir():
        raise FileNotFoundError(f"the folder {folder} of the ledger {path} does not exist; create it first")
    if creating:
        if not os.access(folder, os.W_OK | os.X_OK):
            raise PermissionError(f"cannot create the ledger {path}: its folder {folder} is not writable")
        return
    if not os.access(path, os.R_OK):
        raise PermissionError(f"the ledger {path} is not readable for this user; fix its permissions")
    if not os.access(path, os.W_OK) or not os.access(folder, os.W_OK | os.X_OK):
        raise _read_only(path)


def _check_file(path: Path) -> None:
    """Damage visible before SQLite opens the file: empty, not SQLite, shorter than its header."""
    size = path.stat().st_size
    if size == 0:
        raise _damaged(path, "it is empty (0 bytes); a ledger file is never empty, so it was truncated or overwritten")
    with open(path, "rb") as file:
        header = file.read(100)
    if not header.startswith(_SQLITE_HEADER):
        if header.strip(b"\x00"):
            raise DamagedLedgerError(
                f"{path} is not a pm_private ledger file (no SQLite header).  It is refused; if it was a "
                "ledger, it was overwritten or damaged: restore it from a backup"
            )
        raise _damaged(path, "its header is zeroed")
    if len(header) < 100:
        raise _damaged(path, "it is shorter than an SQLite header (truncated)")
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    wal = path.with_name(path.name + "-wal")
    wal_in_use = wal.exists() and wal.stat().st_size > 0
    if header[92:96] == header[24:28] and not wal_in_use and size < pages * page_size:
        raise _damaged(path, f"it is {size} bytes long but its header says {pages * page_size} (truncated)")


def _create(path: Path, total: tuple[float, float]) -> None:
    """Write a new ledger beside ``path`` and link it into place (atomic: never a half-made file)."""
    temporary = path.with_name(f".{path.name}.{uuid.uuid4().hex}.new")
    try:
        connection = sqlite3.connect(temporary, isolation_level=None)
        try:
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("BEGIN")
            for statement in _SCHEMA.split(";\n"):
                connection.execute(statement)
            created = day(now()).date().isoformat()
            head = _genesis(*total, created, _LEDGER_FORMAT)
            connection.execute(
                "INSERT INTO budget VALUES (1, ?, ?, ?, ?, 0, ?)", (*total, created, _LEDGER_FORMAT, head)
            )
            connection.execute("COMMIT")
        finally:
            connection.close()
        try:
            os.link(temporary, path)
        except FileExistsError:
            pass  # another process created it first: that one is opened
        except OSError:  # a file system without hard links
            if not path.exists():
                os.replace(temporary, path)
    except sqlite3.OperationalError as error:
        if _is_read_only(error):
            raise PermissionError(f"cannot create the ledger {path}: its folder is not writable") from None
        raise
    finally:
        for leftover in (temporary, temporary.with_name(temporary.name + "-wal")):
            leftover.unlink(missing_ok=True)


class SQLiteStore:
    def __init__(self, path: Path, epsilon, delta, durable: bool = True):
        self.path = path
        self.durable = durable
        self._lock = threading.Lock()
        self._connection: sqlite3.Connection | None = None
        self._pid = os.getpid()
        self._entries: list[LedgerEntry] = []
        self._seq = 0
        self._head = ""
        creating = not path.exists()
        _check_path(path, creating)
        if creating:
            if epsilon is None:
                raise ValueError(
                    f"no ledger at {path}: creating one needs the total budget (epsilon, and delta if any)"
                )
            _create(path, check_total(epsilon, 0.0 if delta is None else delta))
        _check_file(path)
        with self._lock:
            connection = self._connect()
            try:
                check = connection.execute("PRAGMA integrity_check").fetchall()
                if check != [("ok",)]:
                    raise _damaged(path, f"SQLite's integrity check fails ({check[0][0]})")
                tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
                if "budget" not in tables:
                    raise DamagedLedgerError(
                        f"{path} is an SQLite file but not a pm_private ledger; it is left as it is"
                    )
                connection.execute("BEGIN IMMEDIATE")  # a write lock: fails now if the file is read-only
                try:
                    fmt = connection.execute("SELECT format FROM budget").fetchone()
                    if fmt is None:
                        raise _damaged(path, "its total budget is missing")
                    if fmt[0] == 1:
                        raise DamagedLedgerError(
                            f"the ledger {path} has format 1 (no integrity digests; times to the microsecond). "
                            f"Upgrade it once, when no other process uses it: pm-private ledger {path} --upgrade "
                            "(or pm_private.privacy.ledger.upgrade_ledger); the original is kept beside it"
                        )
                    if fmt[0] != _LEDGER_FORMAT:
                        raise DamagedLedgerError(
                            f"{path} has ledger format {fmt[0]!r}; this version reads format {_LEDGER_FORMAT}"
                        )
                    row = connection.execute("SELECT epsilon, delta, created FROM budget").fetchone()
                    self.total = (float(row[0]), float(row[1]))
                    self._head = _genesis(row[0], row[1], row[2], _LEDGER_FORMAT)
                    self._sync(connection)
                finally:
                    connection.execute("ROLLBACK")
            except sqlite3.OperationalError as error:
                self._disconnect()
                if _is_read_only(error):
                    raise _read_only(path) from None
                raise _damaged(path, str(error)) from None
            except (sqlite3.DatabaseError, UnicodeDecodeError) as error:
                self._disconnect()
                raise _damaged(path, str(error)) from None
            except BaseException:
                self._disconnect()
                raise
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

    def _sync(self, connection: sqlite3.Connection) -> None:
        """Read and verify the rows added since the last call (all of them on open)."""
        try:
            self._verify(connection)
        except DamagedLedgerError:
            raise
        except (TypeError, ValueError, IndexError, OverflowError) as error:  # a value of the wrong type
            raise _damaged(self.path, f"a record cannot be read ({type(error).__name__})") from None

    def _verify(self, connection: sqlite3.Connection) -> None:
        state = connection.execute("SELECT rows, head FROM budget").fetchone()
        if state is None:
            raise _damaged(self.path, "its total budget is missing")
        rows, head = state
        if rows == self._seq and head == self._head:
            return
        if not isinstance(rows, int) or rows < self._seq:
            raise _damaged(self.path, "it holds fewer records than were written (rows deleted or file replaced)")
        new = connection.execute(
            "SELECT seq, id, mechanism, epsilon, delta, neighbours, label, process, day, noise, digest "
            "FROM entries WHERE seq > ? ORDER BY seq",
            (self._seq,),
        ).fetchall()
        new += connection.execute(
            "SELECT seq, id, status, note, digest FROM settlements WHERE seq > ? ORDER BY seq", (self._seq,)
        ).fetchall()
        new.sort(key=lambda record: record[0])
        if [record[0] for record in new] != list(range(self._seq + 1, rows + 1)):
            raise _damaged(self.path, f"its records are not numbered 1 to {rows} (rows deleted, added or renumbered)")
        entries, digest = list(self._entries), self._head
        for record in new:
            if len(record) == 11:
                seq, entry_id, mechanism, epsilon, delta, neighbours, label, process, day_text, noise, stored = record
                chained = _entry_row(entry_id, mechanism, epsilon, delta, neighbours, label, process, day_text, noise)
                if entry_id != len(entries) + 1:
                    raise _damaged(self.path, f"entry {entry_id} is out of order")
            else:
                seq, entry_id, status, note, stored = record
                chained = _settlement_row(entry_id, status, note)
                if not 0 < entry_id <= len(entries) or entries[entry_id - 1].status != RESERVED:
                    raise _damaged(self.path, f"entry {entry_id} is settled twice or before it was made")
            digest = _digest(digest, chained)
            if stored != digest:
                raise _damaged(self.path, f"record {seq} (entry {entry_id}) does not match its digest (edited)")
            try:
                if len(record) == 11:
                    entries.append(
                        LedgerEntry(
                            mechanism,
                            float(epsilon),
                            float(delta),
                            neighbours,
                            label,
                            datetime.fromisoformat(day_text).replace(tzinfo=UTC),
                            RESERVED,
                            "",
                            process,
                            entry_id,
                            noise_from_text(noise),
                        )
                    )
                else:
                    entries[entry_id - 1] = _replace(entries[entry_id - 1], status=status, note=note)
            except (TypeError, ValueError) as error:
                raise _damaged(self.path, f"entry {entry_id} cannot be read ({error})") from None
        if digest != head:
            raise _damaged(self.path, "its last digest does not match its records (edited or truncated)")
        self._entries, self._seq, self._head = entries, rows, digest

    def _append(self, connection: sqlite3.Connection, table: str, values: tuple, chained: list) -> str:
        digest = _digest(self._head, chained)
        marks = ", ".join("?" * (len(values) + 2))
        connection.execute(f"INSERT INTO {table} VALUES ({marks})", (*values[:1], self._seq + 1, *values[1:], digest))
        connection.execute("UPDATE budget SET rows = ?, head = ?", (self._seq + 1, digest))
        return digest

    def _write(self, transaction) -> None:
        """Run ``transaction(connection)`` in ``BEGIN IMMEDIATE`` after verifying newer rows."""
        connection = self._connect()
        try:
            connection.execute("BEGIN IMMEDIATE")
            try:
                self._sync(connection)
                apply = transaction(connection)
                connection.execute("COMMIT")
            except BaseException:
                if connection.in_transaction:
                    connection.execute("ROLLBACK")
                raise
        except sqlite3.OperationalError as error:
            if _is_read_only(error):
                raise _read_only(self.path) from None
            raise
        apply()

    def reserve(self, entry: LedgerEntry) -> int:
        with self._lock:
            # The reservation reaches the disk (fsync) before any noise is drawn; settling it
            # needs no fsync: a lost commit or release leaves it reserved, i.e. counted.
            connection = self._connect()
            if self.durable:
                connection.execute("PRAGMA synchronous=FULL")
            entry_id = 0

            def transaction(connection):
                nonlocal entry_id
                reason = refusal(self.total, [e for e in self._entries if e.counted], entry)
                if reason:
                    raise BudgetExceededError(reason + "; nothing was released")
                entry_id = len(self._entries) + 1
                day_text = day(entry.time).date().isoformat()
                noise = noise_to_text(entry.noise)
                values = (entry_id, entry.mechanism, entry.epsilon, entry.delta, entry.neighbours, entry.label)
                values += (entry.process, day_text, noise)
                digest = self._append(connection, "entries", values, _entry_row(*values))
                stored = _replace(entry, id=entry_id, status=RESERVED, note="", time=day(entry.time))
                return lambda: self._applied(digest, stored)

            try:
                self._write(transaction)
            finally:
                if self.durable:
                    connection.execute("PRAGMA synchronous=NORMAL")
            return entry_id

    def _applied(self, digest: str, entry: LedgerEntry) -> None:
        if entry.id > len(self._entries):
            self._entries.append(entry)
        else:
            self._entries[entry.id - 1] = entry
        self._seq, self._head = self._seq + 1, digest

    def settle(self, entry_id: int, status: str, note: str) -> None:
        with self._lock:

            def transaction(connection):
                current = self._entries[entry_id - 1]
                if current.status != RESERVED:
                    return lambda: None
                digest = self._append(
                    connection, "settlements", (entry_id, status, note), _settlement_row(entry_id, status, note)
                )
                return lambda: self._applied(digest, _replace(current, status=status, note=note))

            self._write(transaction)

    def _read(self) -> list[LedgerEntry]:
        connection = self._connect()
        connection.execute("BEGIN")
        try:
            self._sync(connection)
        finally:
            connection.execute("COMMIT")
        return self._entries

    def spent(self) -> tuple[float, float]:
        with self._lock:
            return basic_total(e for e in self._read() if e.counted)

    def entries(self) -> list[LedgerEntry]:
        with self._lock:
            return list(self._read())

    def close(self) -> None:
        with self._lock:
            self._disconnect()


# --------------------------------------------------------------------------------------------
# Upgrading format 1


def upgrade_ledger(path) -> Path:
    """Convert a format-1 ledger file (no integrity digests) to the current format, once.

    The original file is copied to ``<path>.format1`` first; the entries keep their order, (ε, δ),
    status and notes, their times are cut to the UTC day, and every row gets its chained digest.
    Run it when no other process has the ledger open.

    Parameters
    ----------
    path : str or os.PathLike
        The format-1 ledger file.

    Returns
    -------
    pathlib.Path
        The copy of the original file.

    Raises
    ------
    DamagedLedgerError
        If the file is damaged, not a ledger, or not of format 1.
    FileExistsError
        If the copy ``<path>.format1`` already exists.
    """
    path = Path(path)
    _check_path(path, creating=False)
    _check_file(path)
    backup = path.with_name(path.name + ".format1")
    if backup.exists():
        raise FileExistsError(f"{backup} exists already: move it away before upgrading {path}")
    old = sqlite3.connect(path, timeout=_BUSY_TIMEOUT, isolation_level=None)
    try:
        if old.execute("PRAGMA integrity_check").fetchall() != [("ok",)]:
            raise _damaged(path, "SQLite's integrity check fails")
        budget = old.execute("SELECT epsilon, delta, created, format FROM budget").fetchone()
        if budget is None or budget[3] != 1:
            raise DamagedLedgerError(f"{path} is not a format-1 pm_private ledger; nothing was changed")
        copy = sqlite3.connect(backup)
        try:
            old.backup(copy)
        finally:
            copy.close()
        rows = old.execute(
            "SELECT id, mechanism, epsilon, delta, neighbours, label, status, note, process, reserved_at "
            "FROM entries ORDER BY id"
        ).fetchall()
    except sqlite3.OperationalError as error:
        if "no such table" in str(error):
            raise DamagedLedgerError(f"{path} is not a format-1 pm_private ledger; nothing was changed") from None
        raise _damaged(path, str(error)) from None
    except sqlite3.DatabaseError as error:
        raise _damaged(path, str(error)) from None
    finally:
        old.close()
    temporary = path.with_name(f".{path.name}.{uuid.uuid4().hex}.new")
    new = sqlite3.connect(temporary, isolation_level=None)
    try:
        new.execute("PRAGMA journal_mode=WAL")
        new.execute("BEGIN")
        for statement in _SCHEMA.split(";\n"):
            new.execute(statement)
        created = datetime.fromisoformat(budget[2]).astimezone(UTC).date().isoformat()
        head, seq = _genesis(budget[0], budget[1], created, _LEDGER_FORMAT), 0
        records = []
        for number, (_, mechanism, eps, delta, neighbours, label, status, note, process, reserved) in enumerate(
            rows, 1
        ):
            day_text = day(datetime.fromisoformat(reserved)).date().isoformat()
            values = (number, mechanism, eps, delta, neighbours, label, process, day_text, "[]")
            records.append(("entries", values, _entry_row(*values)))
            if status != RESERVED:
                records.append(("settlements", (number, status, note), _settlement_row(number, status, note)))
        for table, values, chained in records:
            seq, head = seq + 1, _digest(head, chained)
            marks = ", ".join("?" * (len(values) + 2))
            new.execute(f"INSERT INTO {table} VALUES ({marks})", (values[0], seq, *values[1:], head))
        new.execute(
            "INSERT INTO budget VALUES (1, ?, ?, ?, ?, ?, ?)",
            (budget[0], budget[1], created, _LEDGER_FORMAT, seq, head),
        )
        new.execute("COMMIT")
    finally:
        new.close()
    os.replace(temporary, path)
    return backup

"""Where a budget's ledger lives: in memory (one process) or in an SQLite file (shared by threads and
processes, crash-safe, damage detected).  Each store checks the budget (``budget.refusal``) and
records the entry in one atomic step; the accountant (``accountant``) is the only user of the
store classes.

Ledger file (format 3)
----------------------
An SQLite database in write-ahead-log mode with three tables: ``budget`` (the total, the day it
was created, the number of records, the digest of the last one and a random ledger id), ``entries`` (one row per
reservation: mechanism, (ε, δ), neighbour relation, label, process, the UTC *day*, and the noise
parameters as JSON) and ``settlements`` (one row when a reservation is committed or released).
Rows are only ever added.  Every row carries a SHA-256 digest chained over the previous one,
starting from a digest of the total budget and the ledger id (the ledger's *identity*), and
``budget.head`` holds the last digest: a
deleted, edited or reordered row, an edited total or a lost tail breaks the chain.  On every open
the file is checked (not empty, as long as its header says, SQLite's ``PRAGMA integrity_check``,
the whole chain) and a damaged file is refused with :class:`DamagedLedgerError`, never opened as
a fresh or smaller budget; while open, each transaction verifies the rows written by other
processes since the last one.  The chain detects damage and edits made without recomputing it;
it is not a signature against someone who rewrites the file and its digests on purpose.

An earlier state of the file is as consistent as the current one, so the head (number of rows,
last digest, basic (ε, δ) counted) is also *witnessed* outside the file after every committed
append, in a small file per ledger identity in the user's state folder (``pm_private.privacy.witness``).  A file
behind its witness (fewer rows, or another digest at the witnessed row) is refused with
:class:`LedgerRollbackError`; a file ahead of it (written elsewhere, witness lost) advances it.
:func:`recover_ledger` (``pm-private ledger FILE --recover-from BACKUP``) puts an earlier copy
back with one more entry that charges, as spent, what the witness recorded beyond it.

Format 2 (no ledger id) is read as before; its witness is keyed by its first digest and its
path, so a format-2 copy opened under another name is not linked to its witness.

Format 1 (earlier versions: no digests, times to the microsecond) is refused on open, with the
command that upgrades it once: ``upgrade_ledger`` (``pm-private ledger FILE --upgrade``).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import sqlite3
import threading
import uuid
import warnings
import weakref
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from . import witness as _witness
from .budget import (
    RELEASED,
    REPLACE_ONE,
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
    process_id,
    refusal,
)
from .validation import check_nonnegative, check_positive

__all__ = [
    "DamagedLedgerError",
    "DamagedWitnessError",
    "LedgerRollbackError",
    "LedgerWitnessWarning",
    "MemoryStore",
    "Recovery",
    "SQLiteStore",
    "recover_ledger",
    "upgrade_ledger",
]

# Seconds a ledger operation waits for another process's transaction before failing.
_BUSY_TIMEOUT = 60.0

_LEDGER_FORMAT = 3
_READ_FORMATS = (2, 3)  # format 2: no ledger id (its witness is keyed by its path as well)
CARRIED = "carried forward"  # the mechanism of the entry written by recover_ledger
_SQLITE_HEADER = b"SQLite format 3\x00"


class DamagedLedgerError(ValueError):
    """A ledger file is damaged, edited or not a ledger: refused, never opened as a new budget."""


class LedgerRollbackError(DamagedLedgerError):
    """A ledger file is behind its witness (an earlier state of it): refused, see :func:`recover_ledger`."""


class DamagedWitnessError(DamagedLedgerError):
    """The witness file of a ledger is damaged or witnesses another ledger: refused, never ignored."""


class LedgerWitnessWarning(UserWarning):
    """A ledger's witness was missing and has been re-created from the verified file."""


def _recover_hint(path, backup="BACKUP") -> str:
    return (
        f"pm-private ledger {path} --recover-from {backup} (pm_private.privacy.ledger.recover_ledger) carries "
        "the spends its witness recorded beyond that copy forward, as spent; never put an older copy back "
        "by hand: that forgets every spend recorded since"
    )


def _damaged(path: Path, what: str) -> DamagedLedgerError:
    return DamagedLedgerError(
        f"the ledger {path} is damaged: {what}.  It is refused, so that its budget is neither reset nor "
        f"reduced.  To recover it from an earlier copy: {_recover_hint(path)}.  Without a copy, keep it for "
        "the record and account for its releases in a new ledger file (a new name) created with only the "
        "budget that remains"
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
    head TEXT NOT NULL,
    ledger TEXT NOT NULL
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
  OR NEW.format IS NOT OLD.format OR NEW.ledger IS NOT OLD.ledger OR NEW.rows IS NOT OLD.rows + 1
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


def _genesis(epsilon: float, delta: float, created: str, fmt: int, ledger: str = "") -> str:
    if fmt == 2:
        return _digest("pm_private ledger", ["budget", epsilon, delta, created, fmt])
    return _digest("pm_private ledger", ["budget", epsilon, delta, created, fmt, ledger])


def _identity(genesis: str, fmt: int, path: Path) -> str:
    """The key of a ledger's witness: its first digest (format 2, no ledger id: with its path)."""
    if fmt == 2:
        return hashlib.sha256(f"pm_private format-2 ledger\n{genesis}\n{path.resolve()}".encode()).hexdigest()
    return genesis


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
                f"ledger, it was overwritten or damaged; to recover it from an earlier copy: {_recover_hint(path)}"
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
            ledger = uuid.uuid4().hex
            head = _genesis(*total, created, _LEDGER_FORMAT, ledger)
            connection.execute(
                "INSERT INTO budget VALUES (1, ?, ?, ?, ?, 0, ?, ?)", (*total, created, _LEDGER_FORMAT, head, ledger)
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
    def __init__(self, path: Path, epsilon, delta, durable: bool = True, *, witnessed: bool = True, named: Path = None):
        # witnessed=False, named: recover_ledger's own reading of a copy (no witness check or write;
        # ``named`` is the ledger path a format-2 copy is identified by)
        self.path = path
        self.durable = durable
        self._witnessed = witnessed
        self._lock = threading.Lock()
        self._connection: sqlite3.Connection | None = None
        self._pid = os.getpid()
        self._entries: list[LedgerEntry] = []
        self._seq = 0
        self._head = ""
        self._genesis = ""
        self.identity = ""
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
                    if fmt[0] not in _READ_FORMATS:
                        raise DamagedLedgerError(
                            f"{path} has ledger format {fmt[0]!r}; this version reads formats 2 and {_LEDGER_FORMAT}"
                        )
                    column = "''" if fmt[0] == 2 else "ledger"
                    row = connection.execute(f"SELECT epsilon, delta, created, {column} FROM budget").fetchone()
                    self.total = (float(row[0]), float(row[1]))
                    self._head = self._genesis = _genesis(row[0], row[1], row[2], fmt[0], row[3])
                    self.identity = _identity(self._genesis, fmt[0], named or path)
                    self._sync(connection)
                    if witnessed:  # under the write lock: no other process appends meanwhile
                        self._check_witness(connection, creating)
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

    # ----------------------------------------------------------------------------------------
    # The witness of the head (outside the file)

    def head(self) -> _witness.Head:
        """The verified head of the file: identity, rows, last digest, basic (ε, δ) counted."""
        spent = basic_total(e for e in self._entries if e.counted)
        return _witness.Head(self.identity, self._seq, self._head, spent, str(self.path.resolve()))

    def witness_file(self) -> Path:
        return _witness.witness_file(self.identity)

    def _digest_at(self, connection: sqlite3.Connection, rows: int) -> str | None:
        """The (verified) digest of record ``rows``, the first digest for 0; None past the head."""
        if rows == 0:
            return self._genesis
        if rows > self._seq:
            return None
        found = connection.execute(
            "SELECT digest FROM entries WHERE seq = ? UNION ALL SELECT digest FROM settlements WHERE seq = ?",
            (rows, rows),
        ).fetchone()
        return None if found is None else found[0]

    def _read_witness(self) -> _witness.Head | None:
        try:
            return _witness.read(self.identity)
        except _witness.WitnessUnreadable as error:
            raise DamagedWitnessError(
                f"the witness {error.file} of the ledger {self.path} is damaged: {error.reason}.  The ledger is "
                "refused: the witness is what shows that the file was not rolled back to an earlier state.  "
                "Keep a copy of the witness for the record; if the ledger file is known to be its newest "
                "state, delete the witness: the next open re-creates it from the verified file, with a "
                "warning (a rollback made before that cannot be detected)"
            ) from None

    def _check_witness(self, connection: sqlite3.Connection, creating: bool) -> None:
        witnessed = self._read_witness()
        head = self.head()
        if witnessed is None:
            if not creating:
                warnings.warn(
                    LedgerWitnessWarning(
                        f"the ledger {self.path} had no witness (expected {self.witness_file()}); it is "
                        f"re-created from the verified file at row {head.rows} (digest {_witness.short(head.digest)}). "
                        "Rollbacks are detected from this state on; one made while the witness was missing "
                        "(this file being an earlier copy of the ledger) cannot be detected.  If the witness "
                        f"folder moved, set {_witness.ENVIRONMENT}"
                    ),
                    stacklevel=4,
                )
            _witness.write(head, durable=self.durable)
            return
        file, mine = self.witness_file(), _witness.short(head.digest)
        theirs = _witness.short(witnessed.digest)
        recorded = f"ε {witnessed.spent[0]:g}, δ {witnessed.spent[1]:g} counted (basic composition)"
        if witnessed.rows > head.rows:
            raise LedgerRollbackError(
                f"the ledger {self.path} is behind its witness: the file ends at row {head.rows} (digest {mine}), "
                f"the witness {file} recorded row {witnessed.rows} (digest {theirs}; {recorded}).  The file is an "
                "earlier state of this ledger (an older copy put back, its newest rows cut, or a copy made "
                f"without its -wal file); opening it would forget the spends recorded after row {head.rows}, so "
                "it is refused.  If the newer file (or its -wal file) still exists, put it back in place.  "
                f"Otherwise: {_recover_hint(self.path, self.path)}"
            )
        at = self._digest_at(connection, witnessed.rows)
        if at != witnessed.digest:
            raise LedgerRollbackError(
                f"the ledger {self.path} does not continue the history its witness recorded: at row "
                f"{witnessed.rows} the file's digest is {_witness.short(at or '')}, the witness {file} recorded "
                f"{theirs} ({recorded}); the file ends at row {head.rows} (digest {mine}).  It was rolled back to "
                "an earlier state and written again, or replaced by another copy of this ledger; opening it "
                "could forget spends, so it is refused.  From a copy with fewer than "
                f"{witnessed.rows} rows: {_recover_hint(self.path)}"
            )
        if head.rows > witnessed.rows:
            _witness.write(head, durable=self.durable)  # written elsewhere, or the last write was lost

    def _witness_head(self) -> None:
        if self._witnessed:
            try:
                _witness.write(self.head(), durable=self.durable)
            except _witness.WitnessUnreadable:
                self._read_witness()  # raises DamagedWitnessError
                raise

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
        rows = self._seq
        apply()
        if self._seq != rows:
            self._witness_head()  # after the commit: a witness is never ahead of its file

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
            # Durable: flushed before the witness records it (a power loss must not leave the
            # file behind its witness).
            connection = self._connect()
            if self.durable:
                connection.execute("PRAGMA synchronous=FULL")

            def transaction(connection):
                current = self._entries[entry_id - 1]
                if current.status != RESERVED:
                    return lambda: None
                digest = self._append(
                    connection, "settlements", (entry_id, status, note), _settlement_row(entry_id, status, note)
                )
                return lambda: self._applied(digest, _replace(current, status=status, note=note))

            try:
                self._write(transaction)
            finally:
                if self.durable:
                    connection.execute("PRAGMA synchronous=NORMAL")

    def _carry_forward(self, epsilon: float, delta: float, label: str, note: str) -> None:
        """Record (ε, δ) as spent without the budget check (recover_ledger: spent already)."""
        entry_id = 0
        with self._lock:

            def transaction(connection):
                nonlocal entry_id
                entry_id = len(self._entries) + 1
                day_text = day(now()).date().isoformat()
                values = (entry_id, CARRIED, epsilon, delta, REPLACE_ONE, label, process_id(), day_text, "[]")
                digest = self._append(connection, "entries", values, _entry_row(*values))
                entry = LedgerEntry(
                    CARRIED, epsilon, delta, REPLACE_ONE, label, day(now()), RESERVED, "", process_id(), entry_id
                )
                return lambda: self._applied(digest, entry)

            self._write(transaction)
        self.settle(entry_id, SPENT, note)

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
        ledger = uuid.uuid4().hex
        head, seq = _genesis(budget[0], budget[1], created, _LEDGER_FORMAT, ledger), 0
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
            "INSERT INTO budget VALUES (1, ?, ?, ?, ?, ?, ?, ?)",
            (budget[0], budget[1], created, _LEDGER_FORMAT, seq, head, ledger),
        )
        new.execute("COMMIT")
    finally:
        new.close()
    genesis = _genesis(budget[0], budget[1], created, _LEDGER_FORMAT, ledger)
    counted = [row for row in rows if row[6] != RELEASED]
    spent = (math.fsum(row[2] for row in counted), math.fsum(row[3] for row in counted))
    os.replace(temporary, path)
    _witness.write(_witness.Head(genesis, seq, head, spent, str(path.resolve())), durable=True, forward_only=False)
    return backup


# --------------------------------------------------------------------------------------------
# Recovering from an earlier copy


@dataclass(frozen=True)
class Recovery:
    """What :func:`recover_ledger` did.

    Attributes
    ----------
    carried : tuple of float
        The (ε, δ) recorded as spent for the rows the backup lacks ((0, 0) when it lacks none).
    backup_rows, witnessed_rows : int
        The backup's number of records and the witnessed one.
    rows, digest : int, str
        The head of the recovered ledger (now witnessed).
    kept : pathlib.Path or None
        Where the replaced ledger file was moved (with its ``-wal`` file), or None if there was none.
    """

    carried: tuple[float, float]
    backup_rows: int
    witnessed_rows: int
    rows: int
    digest: str
    kept: Path | None


def _behind(store: SQLiteStore, witnessed: _witness.Head) -> bool:
    return witnessed.rows > store._seq or store._digest_at(store._connect(), witnessed.rows) != witnessed.digest


def _at_least(spent: list[float], target: float) -> float:
    """The smallest carry c ≥ target - Σ spent with fsum(spent + [c]) ≥ target (float rounding)."""
    carry = max(0.0, target - math.fsum(spent))
    while math.fsum([*spent, carry]) < target:
        carry = math.nextafter(carry, math.inf)
    return carry


def _copy_ledger(source: Path, target: Path) -> None:
    shutil.copyfile(source, target)
    wal = source.with_name(source.name + "-wal")
    if wal.exists():
        shutil.copyfile(wal, target.with_name(target.name + "-wal"))


def recover_ledger(path, backup) -> Recovery:
    """Put an earlier copy of a ledger back, carrying the spends it lacks forward as spent.

    For a ledger refused as behind its witness (:class:`LedgerRollbackError`) or damaged.  The
    backup (an earlier copy of the same ledger; it may be the refused file itself) is verified,
    copied, and given one more entry (mechanism ``"carried forward"``, status spent, no noise
    stated: basic composition) that charges the (ε, δ) the witness counted beyond the backup's
    own; the witness then records the new head.  The spent (ε, δ) afterwards is at least the one
    witnessed: nothing is returned to the budget.  The file replaced is kept beside it
    (``<name>.replaced-<UTC time>``).  Run it when no process has the ledger open.

    Parameters
    ----------
    path : str or os.PathLike
        The ledger file (refused, damaged or missing).
    backup : str or os.PathLike
        An earlier copy of the same ledger (its ``-wal`` file beside it, if any, is used too).

    Returns
    -------
    Recovery
        The (ε, δ) carried forward, the rows, the new head and where the replaced file was kept.

    Raises
    ------
    ValueError
        If the ledger opens as it is (nothing to recover), has no witness (nothing is known beyond
        the file), or the backup is a copy of another ledger.
    LedgerRollbackError
        If the backup holds more records than witnessed but not the witnessed history.
    DamagedLedgerError
        If the backup is damaged.
    """
    path, backup = Path(path), Path(backup)
    if not backup.is_file():
        raise FileNotFoundError(f"the backup {backup} does not exist or is not a file")
    _check_path(path, creating=not path.exists())
    identity, witnessed = None, None
    if path.exists():
        try:
            current = SQLiteStore(path, None, None, witnessed=False)
        except DamagedLedgerError:
            current = None  # unreadable: its witness is found by its path
        if current is not None:
            try:
                identity, witnessed = current.identity, current._read_witness()
                if witnessed is not None and not _behind(current, witnessed):
                    raise ValueError(
                        f"the ledger {path} is not behind its witness (row {witnessed.rows}, digest "
                        f"{_witness.short(witnessed.digest)}): it opens as it is, there is nothing to recover; "
                        f"{backup} was not used"
                    )
            finally:
                current.close()
            if witnessed is None:
                raise ValueError(
                    f"the ledger {path} has no witness ({_witness.witness_file(identity)}): nothing is known "
                    "beyond the file itself, so there is nothing to carry forward; open it as it is (its "
                    f"witness is then re-created).  If the witness folder moved, set {_witness.ENVIRONMENT}"
                )
    if identity is None:
        found = _witness.find(path)
        if len(found) != 1:
            raise ValueError(
                f"{'no witness' if not found else 'several witnesses'} in {_witness.state_dir()} "
                f"record{'' if found else 's'} a ledger at {path}: without its witness nothing is known "
                f"beyond the backup.  If the witness folder moved, set {_witness.ENVIRONMENT}; nothing was changed"
            )
        identity, witnessed = found[0].ledger, found[0]
    _check_file(backup)
    temporary = path.with_name(f".{path.name}.{uuid.uuid4().hex}.recovering")
    try:
        _copy_ledger(backup, temporary)
        copy = SQLiteStore(temporary, None, None, witnessed=False, named=path)
        try:
            if copy.identity != identity:
                raise ValueError(
                    f"the backup {backup} is a copy of another ledger (identity "
                    f"{_witness.short(copy.identity)}), not of {path} (identity {_witness.short(identity)}); "
                    "nothing was changed"
                )
            backup_rows = copy._seq
            carried = (0.0, 0.0)
            if backup_rows >= witnessed.rows:
                if _behind(copy, witnessed):
                    raise LedgerRollbackError(
                        f"the backup {backup} does not hold the history witnessed for {path} (row "
                        f"{witnessed.rows}, digest {_witness.short(witnessed.digest)}): it was written to after "
                        f"it was parted from the ledger.  Recover from a copy with fewer than {witnessed.rows} "
                        "records; nothing was changed"
                    )
            else:
                counted = [e for e in copy._entries if e.counted]
                carried = (
                    _at_least([e.epsilon for e in counted], witnessed.spent[0]),
                    _at_least([e.delta for e in counted], witnessed.spent[1]),
                )
                copy._carry_forward(
                    *carried,
                    f"spends of records {backup_rows + 1} to {witnessed.rows} (head "
                    f"{_witness.short(witnessed.digest)}), lost when the ledger was rolled back",
                    f"carried forward from the ledger's witness by recover_ledger from {backup}",
                )
            head = copy.head()
            connection = copy._connect()
            connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            copy.close()
        kept = None
        names = [path.with_name(path.name + suffix) for suffix in ("", "-wal", "-shm")]
        if any(name.exists() for name in names):
            stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
            kept = path.with_name(f"{path.name}.replaced-{stamp}-{uuid.uuid4().hex[:6]}")
            for suffix, name in zip(("", "-wal", "-shm"), names, strict=True):
                if name.exists():
                    os.replace(name, kept.with_name(kept.name + suffix))
        os.replace(temporary, path)
    finally:
        for leftover in ("", "-wal", "-shm"):
            temporary.with_name(temporary.name + leftover).unlink(missing_ok=True)
    _witness.write(
        _witness.Head(identity, head.rows, head.digest, head.spent, str(path.resolve())),
        durable=True,
        forward_only=False,
    )
    return Recovery(carried, backup_rows, witnessed.rows, head.rows, head.digest, kept if kept else None)

"""The ledger file: its format, its errors, and the SQLite connections to it (used by the ledger
modules only; the format is described in :mod:`pm_private.privacy.ledger`).

Fork safety.  SQLite's locks are POSIX record locks, held per process, and SQLite keeps one
record per open file in the process's memory.  A child made by ``fork()`` inherits that memory
but not the locks: a connection inherited from the parent must never be used nor closed by the
child (closing could checkpoint or delete the parent's write-ahead log), and while it is open in
the child's memory a new connection to the same file would believe it holds locks it does not
(another process could then delete the write-ahead log under it, with the rows it commits).  So
every connection remembers the process that opened it (:class:`LedgerConnection`): in any other
process it is never closed, not even by the garbage collector; before ``os.fork`` every
connection of the process is closed (those of live stores by the stores, those of stores already
dropped here); and a process that still holds an inherited connection to a ledger file (a fork
made in C, which runs no Python fork handler) is refused that ledger.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import uuid
import weakref
from pathlib import Path

from .budget import RELEASED, SPENT, day, now

# Seconds a ledger operation waits for another process's transaction before failing.
BUSY_TIMEOUT = 60.0

LEDGER_FORMAT = 3
READ_FORMATS = (2, 3)  # format 2: no ledger id (its witness is keyed by its path as well)
SQLITE_HEADER = b"SQLite format 3\x00"


# The errors are documented and imported as pm_private.privacy.ledger's (their __module__ says so:
# references, pickles and tracebacks name them there).
_PUBLIC = "pm_private.privacy.ledger"


class DamagedLedgerError(ValueError):
    """A ledger file is damaged, edited or not a ledger: refused, never opened as a new budget."""

    __module__ = _PUBLIC


class LedgerRollbackError(DamagedLedgerError):
    """A ledger file is behind its witness (an earlier state of it): refused, see :func:`recover_ledger`."""

    __module__ = _PUBLIC


class LedgerForkError(LedgerRollbackError):
    """A ledger file's history parted from the one its witness recorded (two copies written): refused.

    Raised on open, and by an append when another copy of the ledger has recorded since the
    file was opened (nothing is then written).  See :func:`recover_ledger`.
    """

    __module__ = _PUBLIC


class DamagedWitnessError(DamagedLedgerError):
    """The witness file of a ledger is damaged or witnesses another ledger: refused, never ignored."""

    __module__ = _PUBLIC


class LedgerWitnessWarning(UserWarning):
    """A ledger's witness was missing and has been re-created from the verified file."""

    __module__ = _PUBLIC


def recover_hint(path, backup="BACKUP") -> str:
    return (
        f"pm-private ledger {path} --recover-from {backup} (pm_private.privacy.ledger.recover_ledger) carries "
        "the spends its witness recorded beyond that copy forward, as spent; never put an older copy back "
        "by hand: that forgets every spend recorded since"
    )


def damaged(path: Path, what: str) -> DamagedLedgerError:
    return DamagedLedgerError(
        f"the ledger {path} is damaged: {what}.  It is refused, so that its budget is neither reset nor "
        f"reduced.  To recover it from an earlier copy: {recover_hint(path)}.  Without a copy, keep it for "
        "the record and account for its releases in a new ledger file (a new name) created with only the "
        "budget that remains"
    )


# --------------------------------------------------------------------------------------------
# The file format

SCHEMA = f"""
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


def digest(previous: str, row: list) -> str:
    text = json.dumps(row, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(f"{previous}\n{text}".encode()).hexdigest()


def genesis(epsilon: float, delta: float, created: str, fmt: int, ledger: str = "") -> str:
    if fmt == 2:
        return digest("pm_private ledger", ["budget", epsilon, delta, created, fmt])
    return digest("pm_private ledger", ["budget", epsilon, delta, created, fmt, ledger])


def identity(genesis: str, fmt: int, path: Path) -> str:
    """The key of a ledger's witness: its first digest (format 2, no ledger id: with its path)."""
    if fmt == 2:
        return hashlib.sha256(f"pm_private format-2 ledger\n{genesis}\n{path.resolve()}".encode()).hexdigest()
    return genesis


def entry_row(entry_id: int, mechanism, epsilon, delta, neighbours, label, process, day_text, noise) -> list:
    return ["entry", entry_id, mechanism, epsilon, delta, neighbours, label, process, day_text, noise]


def settlement_row(entry_id: int, status: str, note: str) -> list:
    return ["settle", entry_id, status, note]


def is_read_only(error: sqlite3.Error) -> bool:
    return "readonly" in str(error) or "read-only" in str(error)


def read_only(path: Path) -> PermissionError:
    return PermissionError(
        f"the ledger {path} cannot be written (the file or its folder is read-only for this user): "
        "a ledger records every release, so it must be writable; fix the permissions of the file and "
        "of its folder (SQLite writes its write-ahead log next to it)"
    )


# --------------------------------------------------------------------------------------------
# Connections, fork-safe

# The open connections this module made, by id (a dict: listing its values is one step for the
# interpreter, safe while other threads connect); and those of another process, kept alive.
_OPEN: dict[int, weakref.ref] = {}
_INHERITED: list[LedgerConnection] = []


class LedgerConnection(sqlite3.Connection):
    """An SQLite connection to a ledger file that is only ever used and closed by the process that
    opened it (see the module docstring)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.owner, self.is_open, self.file = os.getpid(), True, None
        key = id(self)
        _OPEN[key] = weakref.ref(self, lambda _, key=key: _OPEN.pop(key, None))

    @property
    def inherited(self) -> bool:
        """True in a process other than the one that opened it (a child made by fork)."""
        return self.owner != os.getpid()

    def close(self) -> None:
        if self.inherited:
            return  # the opener's: never closed here
        self.is_open = False
        super().close()

    def __del__(self):
        try:
            if self.is_open and self.inherited:
                _INHERITED.append(self)  # kept alive: the garbage collector would close it
        except Exception:  # at interpreter exit, or a connection that failed to open
            pass


def _connections() -> list[LedgerConnection]:
    found = [ref() for ref in list(_OPEN.values())]
    return [connection for connection in [*found, *_INHERITED] if connection is not None and connection.is_open]


def close_dropped() -> None:
    """Close the connections of this process that no store holds any more (before a fork)."""
    for connection in _connections():
        if not connection.inherited:
            connection.close()


os.register_at_fork(before=close_dropped)  # runs after the stores' own handler (registered later)


def _refuse_inherited(path: Path) -> None:
    """Refuse ``path`` in a process that holds an inherited open connection to the same file."""
    try:
        file = os.stat(path)
    except OSError:
        return
    for connection in _connections():
        if connection.inherited and connection.file == (file.st_dev, file.st_ino):
            raise RuntimeError(
                f"the ledger {path} was open in process {connection.owner} when this process was forked "
                "from it by a fork made in C (os.fork and multiprocessing close it first): SQLite cannot "
                "lock the file correctly in this process, so the ledger is refused here; close the ledger "
                "before such a fork, or open it in a process started by os.fork, multiprocessing or subprocess"
            )


def connect(path: Path) -> LedgerConnection:
    """A connection to the ledger file ``path`` in WAL mode (refused where an inherited one is open)."""
    _refuse_inherited(path)
    connection = None
    try:
        connection = sqlite3.connect(
            path, timeout=BUSY_TIMEOUT, isolation_level=None, check_same_thread=False, factory=LedgerConnection
        )
        mode = connection.execute("PRAGMA journal_mode=WAL").fetchone()[0]
    except (sqlite3.DatabaseError, UnicodeDecodeError) as error:
        if connection is not None:
            connection.close()
        if isinstance(error, sqlite3.OperationalError) and is_read_only(error):
            raise read_only(path) from None
        raise damaged(path, f"SQLite cannot open it ({error})") from None
    if mode.lower() != "wal":
        connection.close()
        raise OSError(f"cannot use a write-ahead log for the ledger {path} (journal mode {mode!r})")
    connection.execute("PRAGMA synchronous=NORMAL")  # FULL only around reservations
    stat = os.stat(path)
    connection.file = (stat.st_dev, stat.st_ino)
    return connection


def check_path(path: Path, creating: bool) -> None:
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
        raise read_only(path)


def check_file(path: Path) -> None:
    """Damage visible before SQLite opens the file: empty, not SQLite, shorter than its header."""
    size = path.stat().st_size
    if size == 0:
        raise damaged(path, "it is empty (0 bytes); a ledger file is never empty, so it was truncated or overwritten")
    with open(path, "rb") as file:
        header = file.read(100)
    if not header.startswith(SQLITE_HEADER):
        if header.strip(b"\x00"):
            raise DamagedLedgerError(
                f"{path} is not a pm_private ledger file (no SQLite header).  It is refused; if it was a "
                f"ledger, it was overwritten or damaged; to recover it from an earlier copy: {recover_hint(path)}"
            )
        raise damaged(path, "its header is zeroed")
    if len(header) < 100:
        raise damaged(path, "it is shorter than an SQLite header (truncated)")
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    wal = path.with_name(path.name + "-wal")
    wal_in_use = wal.exists() and wal.stat().st_size > 0
    if header[92:96] == header[24:28] and not wal_in_use and size < pages * page_size:
        raise damaged(path, f"it is {size} bytes long but its header says {pages * page_size} (truncated)")


def create(path: Path, total: tuple[float, float]) -> None:
    """Write a new ledger beside ``path`` and link it into place (atomic: never a half-made file)."""
    temporary = path.with_name(f".{path.name}.{uuid.uuid4().hex}.new")
    try:
        connection = sqlite3.connect(temporary, isolation_level=None)
        try:
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("BEGIN")
            for statement in SCHEMA.split(";\n"):
                connection.execute(statement)
            created = day(now()).date().isoformat()
            ledger = uuid.uuid4().hex
            head = genesis(*total, created, LEDGER_FORMAT, ledger)
            connection.execute(
                "INSERT INTO budget VALUES (1, ?, ?, ?, ?, 0, ?, ?)", (*total, created, LEDGER_FORMAT, head, ledger)
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
        if is_read_only(error):
            raise PermissionError(f"cannot create the ledger {path}: its folder is not writable") from None
        raise
    finally:
        for leftover in (temporary, temporary.with_name(temporary.name + "-wal")):
            leftover.unlink(missing_ok=True)

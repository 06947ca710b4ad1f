"""Where a budget's ledger lives: in memory (one process) or in an SQLite file (shared by threads and
processes, crash-safe, damage detected).  Each store checks the budget (``budget.refusal``) and
records the entry in one atomic step; the accountant (``accountant``) is the only user of the
store classes.  The file store is ``ledger_store``, the file format and its connections
``ledger_file``; this module also holds the upgrade and the recovery of a ledger file.

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

An earlier state of the file is as consistent as the current one, and so is a copy written at
the same time as the original, so the head (number of rows, last digest, basic (ε, δ) counted)
is also *witnessed* outside the file after every committed append, in a small file per ledger
identity in the user's state folder (``pm_private.privacy.witness``), which also keeps the heads
it has seen.  A file behind its witness (fewer rows) is refused with
:class:`LedgerRollbackError`; a file whose history parted from the witnessed one (another digest
at a row the witness saw) with ``LedgerForkError``, naming both digests; a file ahead of it
(written elsewhere, witness lost) advances it.  Each append checks the witness again, under its
lock, before writing: of two copies of one ledger open at once, the first to record wins and the
other is refused at its next record, with nothing written.  :func:`recover_ledger`
(``pm-private ledger FILE --recover-from BACKUP``) puts a copy back with one more entry that
charges, as spent, what the witness recorded beyond it (for a copy that forked: every spend the
other copy recorded after the fork).

A connection to the file belongs to the process that opened it: it is closed before
``os.fork`` and never used nor closed by a child (see ``ledger_file``).

Format 2 (no ledger id) is read as before; its witness is keyed by its first digest and its
path, so a format-2 copy opened under another name is not linked to its witness.

Format 1 (earlier versions: no digests, times to the microsecond) is refused on open, with the
command that upgrades it once: ``upgrade_ledger`` (``pm-private ledger FILE --upgrade``).
"""

from __future__ import annotations

import math
import os
import shutil
import sqlite3
import threading
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from . import ledger_file as _file
from . import witness as _witness
from .budget import RELEASED, RESERVED, BudgetExceededError, LedgerEntry, basic_total, day, refusal
from .ledger_file import (
    DamagedLedgerError,
    DamagedWitnessError,
    LedgerForkError,
    LedgerRollbackError,
    LedgerWitnessWarning,
)
from .ledger_store import CARRIED, SQLiteStore, replace_entry

__all__ = [
    "CARRIED",
    "DamagedLedgerError",
    "DamagedWitnessError",
    "LedgerForkError",
    "LedgerRollbackError",
    "LedgerWitnessWarning",
    "MemoryStore",
    "Recovery",
    "SQLiteStore",
    "recover_ledger",
    "upgrade_ledger",
]


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
            self._entries.append(replace_entry(entry, id=entry_id, time=day(entry.time)))
        return entry_id

    def settle(self, entry_id: int, status: str, note: str) -> None:
        with self._lock:
            self._entries[entry_id - 1] = replace_entry(self._entries[entry_id - 1], status=status, note=note)

    def spent(self) -> tuple[float, float]:
        with self._lock:
            return basic_total(e for e in self._entries if e.counted)

    def entries(self) -> list[LedgerEntry]:
        with self._lock:
            return list(self._entries)

    def close(self) -> None:
        pass


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
    _file.check_path(path, creating=False)
    _file.check_file(path)
    backup = path.with_name(path.name + ".format1")
    if backup.exists():
        raise FileExistsError(f"{backup} exists already: move it away before upgrading {path}")
    old = sqlite3.connect(path, timeout=_file.BUSY_TIMEOUT, isolation_level=None)
    try:
        if old.execute("PRAGMA integrity_check").fetchall() != [("ok",)]:
            raise _file.damaged(path, "SQLite's integrity check fails")
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
        raise _file.damaged(path, str(error)) from None
    except sqlite3.DatabaseError as error:
        raise _file.damaged(path, str(error)) from None
    finally:
        old.close()
    temporary = path.with_name(f".{path.name}.{uuid.uuid4().hex}.new")
    new = sqlite3.connect(temporary, isolation_level=None)
    try:
        new.execute("PRAGMA journal_mode=WAL")
        new.execute("BEGIN")
        for statement in _file.SCHEMA.split(";\n"):
            new.execute(statement)
        created = datetime.fromisoformat(budget[2]).astimezone(UTC).date().isoformat()
        ledger = uuid.uuid4().hex
        head, seq = _file.genesis(budget[0], budget[1], created, _file.LEDGER_FORMAT, ledger), 0
        records = []
        for number, (_, mechanism, eps, delta, neighbours, label, status, note, process, reserved) in enumerate(
            rows, 1
        ):
            day_text = day(datetime.fromisoformat(reserved)).date().isoformat()
            values = (number, mechanism, eps, delta, neighbours, label, process, day_text, "[]")
            records.append(("entries", values, _file.entry_row(*values)))
            if status != RESERVED:
                records.append(("settlements", (number, status, note), _file.settlement_row(number, status, note)))
        for table, values, chained in records:
            seq, head = seq + 1, _file.digest(head, chained)
            marks = ", ".join("?" * (len(values) + 2))
            new.execute(f"INSERT INTO {table} VALUES ({marks})", (values[0], seq, *values[1:], head))
        new.execute(
            "INSERT INTO budget VALUES (1, ?, ?, ?, ?, ?, ?, ?)",
            (budget[0], budget[1], created, _file.LEDGER_FORMAT, seq, head, ledger),
        )
        new.execute("COMMIT")
    finally:
        new.close()
    first = _file.genesis(budget[0], budget[1], created, _file.LEDGER_FORMAT, ledger)
    counted = [row for row in rows if row[6] != RELEASED]
    spent = (math.fsum(row[2] for row in counted), math.fsum(row[3] for row in counted))
    os.replace(temporary, path)
    _witness.write(_witness.Head(first, seq, head, spent, str(path.resolve())), durable=True, forward_only=False)
    return backup


# --------------------------------------------------------------------------------------------
# Recovering from an earlier copy# Recovering from an earlier copy, or from a copy that forked


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
    common : int
        The last record the backup shares with the witnessed history: the backup's own number of
        records for an earlier copy, fewer for a copy that forked from the witnessed one.
    """

    carried: tuple[float, float]
    backup_rows: int
    witnessed_rows: int
    rows: int
    digest: str
    kept: Path | None
    common: int


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


def _witnessed(path: Path, backup: Path) -> tuple[str, _witness.Head]:
    """The identity and the witnessed head of the ledger at ``path`` (refused if it opens as it is)."""
    if path.exists():
        try:
            current = SQLiteStore(path, None, None, witnessed=False)
        except DamagedLedgerError:
            current = None  # unreadable: its witness is found by its path
        if current is not None:
            try:
                identity, witnessed = current.identity, current._read_witness()
                if witnessed is not None and current.continues(witnessed):
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
            return identity, witnessed
    found = _witness.find(path)
    if len(found) != 1:
        raise ValueError(
            f"{'no witness' if not found else 'several witnesses'} in {_witness.state_dir()} "
            f"record{'' if found else 's'} a ledger at {path}: without its witness nothing is known "
            f"beyond the backup.  If the witness folder moved, set {_witness.ENVIRONMENT}; nothing was changed"
        )
    return found[0].ledger, found[0]


def _carry(copy: SQLiteStore, witnessed: _witness.Head, backup: Path) -> tuple[tuple[float, float], int]:
    """Charge on ``copy`` what the witness counted beyond it: (the carry, the last common record).

    For an earlier copy (a prefix of the witnessed history) the carry is the witnessed spent less
    the copy's; for a copy that forked after record ``common``, it is every spend the witnessed
    history counted after that record, so that the spends of both copies are charged.
    """
    if copy.continues(witnessed):
        return (0.0, 0.0), witnessed.rows
    common, rows = copy.parted(witnessed), copy.head().rows
    at_fork, own, theirs = copy.spent_at(common), copy.head().spent, witnessed.spent
    counted = [e for e in copy.entries() if e.counted]
    carried = (
        _at_least([e.epsilon for e in counted], max(theirs[0], own[0] + theirs[0] - at_fork[0])),
        _at_least([e.delta for e in counted], max(theirs[1], own[1] + theirs[1] - at_fork[1])),
    )
    head = f"head {_witness.short(witnessed.digest)}"
    if common == rows:
        label = f"spends of records {rows + 1} to {witnessed.rows} ({head}), lost when the ledger was rolled back"
    else:
        label = (
            f"spends of records {common + 1} to {witnessed.rows} ({head}) of another copy of this ledger, "
            f"which forked from this one after record {common}"
        )
    copy.carry_forward(*carried, label, f"carried forward from the ledger's witness by recover_ledger from {backup}")
    return carried, common


def _put_in_place(temporary: Path, path: Path) -> Path | None:
    """Move ``path`` (and its -wal, -shm files) aside, ``temporary`` into its place; where it went."""
    kept = None
    names = [path.with_name(path.name + suffix) for suffix in ("", "-wal", "-shm")]
    if any(name.exists() for name in names):
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        kept = path.with_name(f"{path.name}.replaced-{stamp}-{uuid.uuid4().hex[:6]}")
        for suffix, name in zip(("", "-wal", "-shm"), names, strict=True):
            if name.exists():
                os.replace(name, kept.with_name(kept.name + suffix))
    os.replace(temporary, path)
    return kept


def recover_ledger(path, backup) -> Recovery:
    """Put a copy of a ledger back, carrying the spends it lacks forward as spent.

    For a ledger refused as behind its witness (:class:`LedgerRollbackError`), as forked from
    it (``LedgerForkError``) or damaged.  The backup (an earlier copy of the same ledger, or
    a copy that forked from it; it may be the refused file itself) is verified, copied, and given
    one more entry (mechanism ``"carried forward"``, status spent, no noise stated: basic
    composition) that charges the (ε, δ) the witness counted beyond the backup's own: for an
    earlier copy, the witnessed spent less the backup's; for a fork, every spend the witnessed
    history counted after the last record it shares with the backup, so that the spends of
    both copies are charged (never less than the larger of the two).  The witness then records
    the new head.  Nothing is returned to the budget.  The file replaced is kept beside it
    (``<name>.replaced-<UTC time>``).  Run it when no process has the ledger open.

    Parameters
    ----------
    path : str or os.PathLike
        The ledger file (refused, damaged or missing).
    backup : str or os.PathLike
        A copy of the same ledger (its ``-wal`` file beside it, if any, is used too).

    Returns
    -------
    Recovery
        The (ε, δ) carried forward, the rows, the new head and where the replaced file was kept.

    Raises
    ------
    ValueError
        If the ledger opens as it is (nothing to recover), has no witness (nothing is known beyond
        the file), or the backup is a copy of another ledger.
    DamagedLedgerError
        If the backup is damaged.

    Notes
    -----
    The witness keeps every head of its last 1024 records and every 64th before them: the
    record a backup shares with the witnessed history is found exactly when it is one of these,
    else the nearest earlier one is taken, and the records between are charged twice (more
    spent, never less).
    """
    path, backup = Path(path), Path(backup)
    if not backup.is_file():
        raise FileNotFoundError(f"the backup {backup} does not exist or is not a file")
    _file.check_path(path, creating=not path.exists())
    identity, witnessed = _witnessed(path, backup)
    _file.check_file(backup)
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
            backup_rows = copy.head().rows
            carried, common = _carry(copy, witnessed, backup)
            head = copy.head()
            copy.checkpoint()
        finally:
            copy.close()
        kept = _put_in_place(temporary, path)
    finally:
        for leftover in ("", "-wal", "-shm"):
            temporary.with_name(temporary.name + leftover).unlink(missing_ok=True)
    recovered = _witness.Head(identity, head.rows, head.digest, head.spent, str(path.resolve()))
    _witness.write(recovered, durable=True, forward_only=False, common=common)
    return Recovery(carried, backup_rows, witnessed.rows, head.rows, head.digest, kept, common)

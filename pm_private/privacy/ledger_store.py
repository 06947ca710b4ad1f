"""The store of a ledger file (used by :mod:`pm_private.privacy.ledger` and the accountant through
it; the file format, the witness and fork safety are described there and in :mod:`.ledger_file`).

Every append runs under the file's write lock (``BEGIN IMMEDIATE``) and, for a witnessed ledger,
under its witness's lock too: the store first checks that the file still continues the history
the witness recorded (another copy of the ledger may have appended since), then commits, then
witnesses the new head.  A copy that would fork the ledger is refused before it writes anything.
"""

from __future__ import annotations

import contextlib
import math
import os
import sqlite3
import threading
import warnings
import weakref
from datetime import UTC, datetime
from pathlib import Path

from . import ledger_file as _file
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
from .ledger_file import (
    DamagedLedgerError,
    DamagedWitnessError,
    LedgerForkError,
    LedgerRollbackError,
    LedgerWitnessWarning,
    damaged,
    recover_hint,
)
from .validation import check_nonnegative, check_positive

CARRIED = "carried forward"  # the mechanism of the entry written by recover_ledger
_NOT_WRITTEN = "this record is refused: nothing was written or spent"


def replace_entry(entry: LedgerEntry, **changes) -> LedgerEntry:
    return LedgerEntry(**{**entry.__dict__, **changes})


# Before a fork every store's connection is closed (under the store's lock, so that none is in
# use); the child opens its own.  ledger_file's handler then closes the connections of stores
# already dropped.
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


class SQLiteStore:
    def __init__(self, path: Path, epsilon, delta, durable: bool = True, *, witnessed: bool = True, named: Path = None):
        # witnessed=False, named: recover_ledger's own reading of a copy (no witness check or write;
        # ``named`` is the ledger path a format-2 copy is identified by)
        self.path = path
        self.durable = durable
        self._witnessed = witnessed
        self._lock = threading.Lock()
        self._connection: _file.LedgerConnection | None = None
        self._entries: list[LedgerEntry] = []
        self._seq = 0
        self._head = ""
        self._genesis = ""
        self.identity = ""
        _FILE_STORES.add(self)  # from now on: a fork waits for its lock, and closes its connection
        creating = not path.exists()
        _file.check_path(path, creating)
        if creating:
            if epsilon is None:
                raise ValueError(
                    f"no ledger at {path}: creating one needs the total budget (epsilon, and delta if any)"
                )
            _file.create(path, check_total(epsilon, 0.0 if delta is None else delta))
        _file.check_file(path)
        with self._lock:
            try:
                self._open(creating, named or path)
            except sqlite3.OperationalError as error:
                self._disconnect()
                if _file.is_read_only(error):
                    raise _file.read_only(path) from None
                raise damaged(path, str(error)) from None
            except (sqlite3.DatabaseError, UnicodeDecodeError) as error:
                self._disconnect()
                raise damaged(path, str(error)) from None
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

    def _open(self, creating: bool, named: Path) -> None:
        """Check the whole file and its witness (under the store's lock)."""
        path, connection = self.path, self._connect()
        check = connection.execute("PRAGMA integrity_check").fetchall()
        if check != [("ok",)]:
            raise damaged(path, f"SQLite's integrity check fails ({check[0][0]})")
        tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "budget" not in tables:
            raise DamagedLedgerError(f"{path} is an SQLite file but not a pm_private ledger; it is left as it is")
        connection.execute("BEGIN IMMEDIATE")  # a write lock: fails now if the file is read-only
        try:
            fmt = connection.execute("SELECT format FROM budget").fetchone()
            if fmt is None:
                raise damaged(path, "its total budget is missing")
            if fmt[0] == 1:
                raise DamagedLedgerError(
                    f"the ledger {path} has format 1 (no integrity digests; times to the microsecond). "
                    f"Upgrade it once, when no other process uses it: pm-private ledger {path} --upgrade "
                    "(or pm_private.privacy.ledger.upgrade_ledger); the original is kept beside it"
                )
            if fmt[0] not in _file.READ_FORMATS:
                raise DamagedLedgerError(
                    f"{path} has ledger format {fmt[0]!r}; this version reads formats 2 and {_file.LEDGER_FORMAT}"
                )
            column = "''" if fmt[0] == 2 else "ledger"
            row = connection.execute(f"SELECT epsilon, delta, created, {column} FROM budget").fetchone()
            self.total = (float(row[0]), float(row[1]))
            self._head = self._genesis = _file.genesis(row[0], row[1], row[2], fmt[0], row[3])
            self.identity = _file.identity(self._genesis, fmt[0], named)
            self._sync(connection)
            if self._witnessed:  # under the write lock: no other process appends meanwhile
                self._check_witness(connection, creating)
        finally:
            connection.execute("ROLLBACK")

    def _connect(self) -> _file.LedgerConnection:
        if self._connection is not None and self._connection.inherited:
            self._connection = None  # the parent's (a fork made in C): never used nor closed here
        if self._connection is None:
            self._connection = _file.connect(self.path)
        return self._connection

    def _disconnect(self) -> None:
        if self._connection is not None:
            self._connection.close()  # does nothing in a process that did not open it
        self._connection = None

    def __del__(self):
        try:
            self._disconnect()  # not left open for the garbage collector (a fork before it would copy it)
        except Exception:  # at interpreter exit, or a store that failed to open
            pass

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

    def _write_witness(self, head: _witness.Head) -> None:
        try:
            _witness.write(head, durable=self.durable)
        except _witness.WitnessUnreadable:
            self._read_witness()  # raises DamagedWitnessError
            raise
        except _witness.WitnessForked as fork:
            raise self._forked(
                fork.head.rows,
                fork.head.digest,
                fork.recorded,
                fork.witnessed,
                "its last record is in the file, not witnessed",
            ) from None

    def _check_witness(self, connection: sqlite3.Connection, creating: bool) -> None:
        with _witness.locked(self.identity):
            witnessed = self._read_witness()
            head = self.head()
            if witnessed is None:
                if not creating:
                    warnings.warn(
                        LedgerWitnessWarning(
                            f"the ledger {self.path} had no witness (expected {self.witness_file()}); it is "
                            f"re-created from the verified file at row {head.rows} (digest "
                            f"{_witness.short(head.digest)}).  Rollbacks are detected from this state on; one made "
                            "while the witness was missing (this file being an earlier copy of the ledger) cannot "
                            f"be detected.  If the witness folder moved, set {_witness.ENVIRONMENT}"
                        ),
                        stacklevel=5,
                    )
                self._write_witness(head)
                return
            self._refuse_unless_continuing(connection, witnessed, writing=False)
            if head.rows > witnessed.rows:
                self._write_witness(head)  # written elsewhere, or the last write was lost

    def _refuse_unless_continuing(self, connection, witnessed: _witness.Head, writing: bool) -> None:
        """Raise unless the file continues the history its witness recorded (equal to it or ahead)."""
        if self._digest_at(connection, witnessed.rows) == witnessed.digest:
            return
        seen = _witness.recorded(witnessed, min(self._seq, witnessed.rows))
        if seen is not None:
            mine = self._digest_at(connection, seen[0]) or ""
            if not mine.startswith(seen[1]):
                raise self._forked(seen[0], mine, seen[1], witnessed, _NOT_WRITTEN if writing else "")
        if self._seq >= witnessed.rows:  # (another digest at the witnessed row, unseen above)
            raise self._forked(
                witnessed.rows,
                self._digest_at(connection, witnessed.rows),
                witnessed.digest,
                witnessed,
                _NOT_WRITTEN if writing else "",
            )
        file, head = self.witness_file(), self.head()
        mine, theirs = _witness.short(head.digest), _witness.short(witnessed.digest)
        recorded = f"ε {witnessed.spent[0]:g}, δ {witnessed.spent[1]:g} counted (basic composition)"
        if writing:
            raise LedgerForkError(
                f"the ledger {self.path} has been forked: another copy of this ledger ({witnessed.path}) recorded "
                f"row {witnessed.rows} (digest {theirs}; {recorded}; witness {file}) after this file was opened; "
                f"this file ends at row {head.rows} (digest {mine}).  Two copies of one ledger were in use at once.  "
                "This record is refused: nothing was written or spent.  Keep one copy: the other one, or this one "
                f"with the other's spends carried forward: {recover_hint(self.path, self.path)}"
            )
        raise LedgerRollbackError(
            f"the ledger {self.path} is behind its witness: the file ends at row {head.rows} (digest {mine}), "
            f"the witness {file} recorded row {witnessed.rows} (digest {theirs}; {recorded}).  The file is an "
            "earlier state of this ledger (an older copy put back, its newest rows cut, or a copy made "
            f"without its -wal file); opening it would forget the spends recorded after row {head.rows}, so "
            "it is refused.  If the newer file (or its -wal file) still exists, put it back in place.  "
            f"Otherwise: {recover_hint(self.path, self.path)}"
        )

    def _forked(self, rows: int, mine: str, theirs: str, witnessed: _witness.Head, record: str) -> LedgerForkError:
        head, short = self.head(), _witness.short
        recorded = f"ε {witnessed.spent[0]:g}, δ {witnessed.spent[1]:g} counted (basic composition)"
        return LedgerForkError(
            f"the ledger {self.path} does not continue the history its witness recorded: it has forked.  The file "
            f"has row {rows} (digest {short(mine)}), the witness {self.witness_file()} recorded row {rows} (digest "
            f"{short(theirs)}) for another copy of this ledger, last witnessed at row {witnessed.rows} (digest "
            f"{short(witnessed.digest)}; {recorded}) in {witnessed.path}; this file ends at row {head.rows} "
            f"(digest {short(head.digest)}).  Two copies of this ledger were written (two copies in use at once, "
            "an earlier copy put back and written again, or a copy written where this witness could not see "
            "it); opening this one would forget the other's spends, so it is refused"
            + (f" ({record})" if record else "")
            + f".  To keep this copy with the other's spends carried forward as spent: "
            f"{recover_hint(self.path, self.path)}"
        )

    def _check_before_append(self, connection: sqlite3.Connection) -> None:
        witnessed = self._read_witness()
        if witnessed is not None:  # (a witness deleted while open is re-created by the append)
            self._refuse_unless_continuing(connection, witnessed, writing=True)

    # ----------------------------------------------------------------------------------------
    # Reading and appending

    def _sync(self, connection: sqlite3.Connection) -> None:
        """Read and verify the rows added since the last call (all of them on open)."""
        try:
            self._verify(connection)
        except DamagedLedgerError:
            raise
        except (TypeError, ValueError, IndexError, OverflowError) as error:  # a value of the wrong type
            raise damaged(self.path, f"a record cannot be read ({type(error).__name__})") from None

    def _verify(self, connection: sqlite3.Connection) -> None:
        state = connection.execute("SELECT rows, head FROM budget").fetchone()
        if state is None:
            raise damaged(self.path, "its total budget is missing")
        rows, head = state
        if rows == self._seq and head == self._head:
            return
        if not isinstance(rows, int) or rows < self._seq:
            raise damaged(self.path, "it holds fewer records than were written (rows deleted or file replaced)")
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
            raise damaged(self.path, f"its records are not numbered 1 to {rows} (rows deleted, added or renumbered)")
        entries, digest = list(self._entries), self._head
        for record in new:
            if len(record) == 11:
                seq, entry_id, mechanism, epsilon, delta, neighbours, label, process, day_text, noise, stored = record
                chained = _file.entry_row(
                    entry_id, mechanism, epsilon, delta, neighbours, label, process, day_text, noise
                )
                if entry_id != len(entries) + 1:
                    raise damaged(self.path, f"entry {entry_id} is out of order")
            else:
                seq, entry_id, status, note, stored = record
                chained = _file.settlement_row(entry_id, status, note)
                if not 0 < entry_id <= len(entries) or entries[entry_id - 1].status != RESERVED:
                    raise damaged(self.path, f"entry {entry_id} is settled twice or before it was made")
            digest = _file.digest(digest, chained)
            if stored != digest:
                raise damaged(self.path, f"record {seq} (entry {entry_id}) does not match its digest (edited)")
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
                    entries[entry_id - 1] = replace_entry(entries[entry_id - 1], status=status, note=note)
            except (TypeError, ValueError) as error:
                raise damaged(self.path, f"entry {entry_id} cannot be read ({error})") from None
        if digest != head:
            raise damaged(self.path, "its last digest does not match its records (edited or truncated)")
        self._entries, self._seq, self._head = entries, rows, digest

    def _append(self, connection: sqlite3.Connection, table: str, values: tuple, chained: list) -> str:
        digest = _file.digest(self._head, chained)
        marks = ", ".join("?" * (len(values) + 2))
        connection.execute(f"INSERT INTO {table} VALUES ({marks})", (*values[:1], self._seq + 1, *values[1:], digest))
        connection.execute("UPDATE budget SET rows = ?, head = ?", (self._seq + 1, digest))
        return digest

    def _write(self, transaction) -> None:
        """Run ``transaction(connection)`` in ``BEGIN IMMEDIATE`` after verifying newer rows, and, for
        a witnessed ledger, under its witness's lock after checking the file against it."""
        connection = self._connect()
        try:
            connection.execute("BEGIN IMMEDIATE")
            try:
                self._sync(connection)
                with _witness.locked(self.identity) if self._witnessed else contextlib.nullcontext():
                    if self._witnessed:
                        self._check_before_append(connection)  # refused: nothing written
                    apply = transaction(connection)
                    connection.execute("COMMIT")
                    rows = self._seq
                    apply()
                    if self._seq != rows and self._witnessed:
                        self._write_witness(self.head())  # after the commit: never ahead of its file
            except BaseException:
                if connection.in_transaction:
                    connection.execute("ROLLBACK")
                raise
        except sqlite3.OperationalError as error:
            if _file.is_read_only(error):
                raise _file.read_only(self.path) from None
            raise

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
                digest = self._append(connection, "entries", values, _file.entry_row(*values))
                stored = replace_entry(entry, id=entry_id, status=RESERVED, note="", time=day(entry.time))
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
                    connection, "settlements", (entry_id, status, note), _file.settlement_row(entry_id, status, note)
                )
                return lambda: self._applied(digest, replace_entry(current, status=status, note=note))

            try:
                self._write(transaction)
            finally:
                if self.durable:
                    connection.execute("PRAGMA synchronous=NORMAL")

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

    # ----------------------------------------------------------------------------------------
    # For recover_ledger (a copy opened with witnessed=False)

    def continues(self, witnessed: _witness.Head) -> bool:
        """Whether the file holds the witnessed head (it is then equal to its witness or ahead)."""
        with self._lock:
            return self._digest_at(self._connect(), witnessed.rows) == witnessed.digest

    def parted(self, witnessed: _witness.Head) -> int:
        """The last row the witness saw with this file's digest (where another history parted from it)."""
        with self._lock:
            connection = self._connect()
            for rows, prefix in reversed(witnessed.heads):
                if rows <= self._seq and (self._digest_at(connection, rows) or "").startswith(prefix):
                    return rows
        return 0  # the first digest (the identity) is common to every copy

    def spent_at(self, rows: int) -> tuple[float, float]:
        """The basic (ε, δ) counted when the file held ``rows`` records."""
        with self._lock:
            counted = (
                self._connect()
                .execute(
                    "SELECT epsilon, delta FROM entries AS e WHERE seq <= ? AND NOT EXISTS (SELECT 1 FROM "
                    "settlements AS s WHERE s.id = e.id AND s.seq <= ? AND s.status = ?)",
                    (rows, rows, RELEASED),
                )
                .fetchall()
            )
        return math.fsum(row[0] for row in counted), math.fsum(row[1] for row in counted)

    def carry_forward(self, epsilon: float, delta: float, label: str, note: str) -> None:
        """Record (ε, δ) as spent without the budget check (recover_ledger: spent already)."""
        entry_id = 0
        with self._lock:

            def transaction(connection):
                nonlocal entry_id
                entry_id = len(self._entries) + 1
                day_text = day(now()).date().isoformat()
                values = (entry_id, CARRIED, epsilon, delta, REPLACE_ONE, label, process_id(), day_text, "[]")
                digest = self._append(connection, "entries", values, _file.entry_row(*values))
                entry = LedgerEntry(
                    CARRIED, epsilon, delta, REPLACE_ONE, label, day(now()), RESERVED, "", process_id(), entry_id
                )
                return lambda: self._applied(digest, entry)

            self._write(transaction)
        self.settle(entry_id, SPENT, note)

    def checkpoint(self) -> None:
        """Move the write-ahead log into the file (before the file is moved into place)."""
        with self._lock:
            self._connect().execute("PRAGMA wal_checkpoint(TRUNCATE)")

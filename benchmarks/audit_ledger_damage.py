"""Damage sweep of the ledger file: every damaged copy must be refused or open unchanged.

A ledger with eight releases (Gaussian noise stated), one failed release and one open
reservation is written and closed; then copies are damaged and opened with
``PrivacyAccountant.open``.  Each copy is *refused* (``DamagedLedgerError``), *same* (opened
with exactly the original total and history: the damage hit unused bytes) or *CHANGED* (opened
with a different budget or history: the failure this sweep exists to find).  Damage: truncation
at every 1/20 of the size, a zeroed file, every byte flipped in turn, edits by an SQL client
that first drops the ledger's triggers, and rollbacks to an earlier state of the ledger (an older
copy put back, the newest rows cut with the previous digest copied into the header, a copy taken
without its -wal file), which only the witness outside the file (``PM_PRIVATE_STATE_DIR``) can
tell apart from a valid ledger.  Goal: 0 CHANGED.

    .venv/bin/python benchmarks/audit_ledger_damage.py [--flip-step 1]
"""

import argparse
import os
import shutil
import sqlite3
import tempfile
from collections import Counter
from pathlib import Path

from pm_private import PrivacyAccountant
from pm_private.privacy.accountant import DamagedLedgerError
from pm_private.privacy.primitives import gaussian_noise_event

_SQL_EDITS = {
    "delete an entry": ("DELETE FROM entries WHERE id = 3",),
    "delete a settlement": ("DELETE FROM settlements WHERE id = 8",),
    "delete the last row, fix the count": ("DELETE FROM settlements WHERE id = 8", "UPDATE budget SET rows = rows - 1"),
    "edit the total ε": ("UPDATE budget SET epsilon = 100",),
    "edit the total δ": ("UPDATE budget SET delta = 1e-3",),
    "edit an entry's ε": ("UPDATE entries SET epsilon = 0.1 WHERE id = 2",),
    "edit an entry's noise": ("UPDATE entries SET noise = '[[\"gaussian\",40.0,1.0]]' WHERE id = 2",),
    "release a spent entry": ("UPDATE settlements SET status = 'released' WHERE id = 4",),
    "empty every table": ("DELETE FROM entries", "DELETE FROM settlements", "UPDATE budget SET rows = 0"),
}


def _cut_tail(rows: int):
    """SQL statements that cut the newest ``rows`` records and copy the digest of the record left
    newest into the header, as one who knows the format would."""

    def statements(connection):
        last = connection.execute("SELECT rows FROM budget").fetchone()[0]
        keep = last - rows
        digest = connection.execute(
            "SELECT digest FROM entries WHERE seq = ? UNION ALL SELECT digest FROM settlements WHERE seq = ?",
            (keep, keep),
        ).fetchone()[0]
        return (
            f"DELETE FROM settlements WHERE seq > {keep}",
            f"DELETE FROM entries WHERE seq > {keep}",
            f"UPDATE budget SET rows = {keep}, head = '{digest}'",
        )

    return statements


def _state(acct):
    return acct.epsilon, acct.delta, acct.history


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flip-step", type=int, default=1, help="flip every n-th byte (default 1: all)")
    args = parser.parse_args(argv)
    folder = Path(tempfile.mkdtemp())
    os.environ["PM_PRIVATE_STATE_DIR"] = str(folder / "witnesses")  # the ledgers' witnesses: not the user's
    good = folder / "good.ledger"
    acct = PrivacyAccountant.open(good, 10.0, 1e-5, durable=False)
    olders = []  # earlier states of the same ledger, closed (every row in the main file)
    for i in range(8):
        if i in (0, 4):
            acct.close()
            olders.append(good.read_bytes())
            acct = PrivacyAccountant.open(good, durable=False)
        acct.record(f"m{i}", 0.5, 1e-7, label=f"release {i}", noise=(gaussian_noise_event(1, 1.0, 0.5, 1e-7),))
    try:
        with acct.charge("fails before noise", 0.5):
            raise ValueError
    except ValueError:
        pass
    acct.reserve("left reserved", 0.25)
    acct.close()
    expected = _state(PrivacyAccountant.open(good))
    data = good.read_bytes()
    target = folder / "damaged.ledger"

    def outcome(content: bytes, statements=()) -> str:
        for suffix in ("-wal", "-shm"):
            Path(f"{target}{suffix}").unlink(missing_ok=True)
        if content is not None:
            target.write_bytes(content)
        if statements:
            connection = sqlite3.connect(target)
            for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall():
                connection.execute(f"DROP TRIGGER {name}")
            if callable(statements):
                statements = statements(connection)
            for statement in statements:
                connection.execute(statement)
            connection.commit()
            connection.close()
        try:
            opened = PrivacyAccountant.open(target)
        except DamagedLedgerError:
            return "refused"
        state = _state(opened)
        opened.close()
        return "same" if state == expected else "CHANGED"

    rows = []
    size = len(data)
    rows.append(("truncated at k/20, k = 0..19", Counter(outcome(data[: k * size // 20]) for k in range(20))))
    rows.append(("zeroed", Counter([outcome(bytes(size))])))
    flips = Counter()
    for position in range(0, size, args.flip_step):
        damaged = bytearray(data)
        damaged[position] ^= 0xFF
        flips[outcome(bytes(damaged))] += 1
    rows.append((f"one byte flipped ({size // args.flip_step} positions)", flips))
    for name, statements in _SQL_EDITS.items():
        rows.append((f"SQL client: {name}", Counter([outcome(data, statements)])))
    rows.append(("rollback: an older copy put back", Counter(outcome(older) for older in olders)))
    for cut in (1, 2, 4):
        rows.append((f"rollback: {cut} newest rows cut, digest copied", Counter([outcome(data, _cut_tail(cut))])))
    rows.append(("rollback: a copy without its -wal file", Counter([_without_wal(folder)])))
    print(f"ledger of {size} bytes; outcome counts (goal: 0 CHANGED)")
    print(f"{'damage':<46} {'refused':>8} {'same':>8} {'CHANGED':>8}")
    for name, counts in rows:
        print(f"{name:<46} {counts['refused']:>8} {counts['same']:>8} {counts['CHANGED']:>8}")


def _without_wal(folder: Path) -> str:
    """A ledger still open (its newest rows in the -wal file) copied without the -wal file.  A
    ledger of its own: writing to a copy of the good one would move the good one's witness."""
    live = folder / "live.ledger"
    acct = PrivacyAccountant.open(live, 10.0, 1e-5)
    for i in range(3):
        acct.record(f"m{i}", 0.5, label=f"release {i}")
    if not Path(f"{live}-wal").stat().st_size:
        raise RuntimeError("the rows were checkpointed: nothing is left in the -wal file to leave out")
    copy = folder / "copy.ledger"
    shutil.copy(live, copy)
    try:
        opened = PrivacyAccountant.open(copy)
    except DamagedLedgerError:
        return "refused"
    finally:
        acct.close()
    spent = opened.spent
    opened.close()
    return "same" if spent == PrivacyAccountant.open(live).spent else "CHANGED"


if __name__ == "__main__":
    main()

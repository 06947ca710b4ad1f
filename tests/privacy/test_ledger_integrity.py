"""A damaged, edited or old ledger file is refused on open (never a fresh or smaller budget);
permission and folder problems are reported at open; times are kept to the day."""

import os
import sqlite3
from pathlib import Path

import pytest

from pm_private import PrivacyAccountant
from pm_private.privacy.accountant import DamagedLedgerError
from pm_private.privacy.ledger import upgrade_ledger
from pm_private.privacy.primitives import gaussian_noise_event


def _ledger(path: Path) -> Path:
    acct = PrivacyAccountant.open(path, epsilon=10.0, delta=1e-5, durable=False)
    for i in range(8):
        acct.record(f"mechanism {i}", 0.5, 1e-7, label=f"release {i}", noise=(gaussian_noise_event(1, 1.0, 0.5, 1e-7),))
    with pytest.raises(ValueError), acct.charge("fails before noise", 0.5):
        raise ValueError("bad input")
    acct.reserve("left reserved", 0.25)
    acct.close()
    return path


def _state(acct):
    return acct.epsilon, acct.delta, acct.history


def _outcome(path: Path, expected) -> str:
    """'refused' (with a message naming the file), or 'same' when the opened ledger is unchanged."""
    try:
        acct = PrivacyAccountant.open(path)
    except DamagedLedgerError as error:
        # names the file and the recovery that keeps every spend (never "restore a backup")
        assert str(path) in str(error) and "--recover-from" in str(error) and "estore" not in str(error)
        return "refused"
    state = _state(acct)
    acct.close()
    assert state == expected, "a damaged ledger opened with a different budget or history"
    return "same"


def _damage(tmp_path, good: Path, name: str, change) -> Path:
    path = tmp_path / name
    data = bytearray(good.read_bytes())
    path.write_bytes(bytes(change(data)))
    return path


def test_truncated_emptied_zeroed_and_flipped_files_are_refused_or_unchanged(tmp_path):
    good = _ledger(tmp_path / "good.ledger")
    expected = _state(PrivacyAccountant.open(good))
    size = good.stat().st_size
    outcomes = {}
    for k in range(20):  # truncation at every 1/20 of the file, 0 bytes included
        path = _damage(tmp_path, good, f"cut{k}.ledger", lambda data, k=k: data[: k * size // 20])
        outcomes[f"cut {k}/20"] = _outcome(path, expected)
    outcomes["zeroed"] = _outcome(_damage(tmp_path, good, "zero.ledger", lambda data: bytes(len(data))), expected)
    assert set(outcomes.values()) == {"refused"}, outcomes
    flips = {}
    for position in range(0, size, 149):

        def flip(data, position=position):
            data[position] ^= 0x5A
            return data

        flips[position] = _outcome(_damage(tmp_path, good, "flip.ledger", flip), expected)
    # a flip in unused space of a page changes nothing; every other flip is refused
    assert "refused" in flips.values() and set(flips.values()) <= {"refused", "same"}
    # a flipped byte in a stored value is always refused
    data = good.read_bytes()
    position = data.index(b"release 5")
    path = _damage(tmp_path, good, "value.ledger", lambda d: d[:position] + b"X" + d[position + 1 :])
    assert _outcome(path, expected) == "refused"


def _sql(path: Path, *statements: str) -> None:
    connection = sqlite3.connect(path)
    for trigger in [row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")]:
        connection.execute(f"DROP TRIGGER {trigger}")  # what a determined SQL client can do
    for statement in statements:
        connection.execute(statement)
    connection.commit()
    connection.close()


@pytest.mark.parametrize(
    "statements",
    [
        ("DELETE FROM entries WHERE id = 3",),
        ("DELETE FROM settlements WHERE id = 8",),
        ("DELETE FROM settlements WHERE id = 8", "UPDATE budget SET rows = rows - 1"),
        ("UPDATE budget SET epsilon = 100",),
        ("UPDATE budget SET delta = 1e-3",),
        ("UPDATE entries SET epsilon = 0.1 WHERE id = 2",),
        ("UPDATE entries SET noise = '[[\"gaussian\",40.0,1.0]]' WHERE id = 2",),
        ("UPDATE settlements SET status = 'released' WHERE id = 4",),
        ("DELETE FROM entries", "DELETE FROM settlements", "UPDATE budget SET rows = 0"),
    ],
)
def test_rows_deleted_or_edited_by_an_sql_client_are_refused(tmp_path, statements):
    path = _ledger(tmp_path / "l.ledger")
    expected = _state(PrivacyAccountant.open(path))
    _sql(path, *statements)
    assert _outcome(path, expected) == "refused"


def test_triggers_refuse_edits_without_dropping_them(tmp_path):
    path = _ledger(tmp_path / "l.ledger")
    with sqlite3.connect(path) as connection:
        for statement in (
            "UPDATE budget SET epsilon = 5",
            "DELETE FROM budget",
            "DELETE FROM entries",
            "UPDATE entries SET epsilon = 0.1",
            "DELETE FROM settlements",
            "UPDATE settlements SET status = 'released'",
        ):
            with pytest.raises(sqlite3.DatabaseError):
                connection.execute(statement)
    assert PrivacyAccountant.open(path).spent == pytest.approx((4.25, 8e-7))


def test_edits_by_another_process_are_caught_while_open(tmp_path):
    path = _ledger(tmp_path / "l.ledger")
    acct = PrivacyAccountant.open(path)
    other = PrivacyAccountant.open(path)
    other.record("other", 0.5)
    assert acct.spent == pytest.approx((4.75, 8e-7))  # rows of another process are verified and seen
    _sql(path, "UPDATE budget SET head = 'x'")
    with pytest.raises(DamagedLedgerError, match="digest"):
        acct.record("next", 0.1)


def test_empty_file_is_not_a_new_ledger(tmp_path):
    path = tmp_path / "empty.ledger"
    path.touch()
    with pytest.raises(DamagedLedgerError, match="empty"):
        PrivacyAccountant.open(path, epsilon=1.0)
    assert path.stat().st_size == 0


def test_folder_and_permission_problems_are_reported_at_open(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        PrivacyAccountant.open(tmp_path / "missing" / "l.ledger", epsilon=1.0)
    with pytest.raises(IsADirectoryError, match="folder"):
        PrivacyAccountant.open(tmp_path, epsilon=1.0)
    if os.geteuid() == 0:
        pytest.skip("root ignores file permissions")
    path = _ledger(tmp_path / "l.ledger")
    path.chmod(0o444)
    with pytest.raises(PermissionError, match="cannot be written"):
        PrivacyAccountant.open(path)
    path.chmod(0o644)
    folder = tmp_path / "locked"
    folder.mkdir(mode=0o555)
    with pytest.raises(PermissionError, match="not writable"):
        PrivacyAccountant.open(folder / "l.ledger", epsilon=1.0)


def test_times_are_kept_to_the_day(tmp_path):
    path = _ledger(tmp_path / "l.ledger")
    acct = PrivacyAccountant.open(path)
    assert all((e.time.hour, e.time.minute, e.time.second, e.time.microsecond) == (0, 0, 0, 0) for e in acct.history)
    with sqlite3.connect(path) as connection:
        days = [row[0] for row in connection.execute("SELECT day FROM entries")]
        columns = {
            row[1] for table in ("entries", "settlements") for row in connection.execute(f"PRAGMA table_info({table})")
        }
    assert all(len(text) == 10 for text in days)  # YYYY-MM-DD
    assert not columns & {"reserved_at", "settled_at"}
    memory = PrivacyAccountant(1.0)
    memory.record("a", 0.5)
    assert memory.history[0].time.hour == memory.history[0].time.minute == 0


_FORMAT_1 = """
CREATE TABLE budget (id INTEGER PRIMARY KEY CHECK (id = 1), epsilon REAL NOT NULL, delta REAL NOT NULL,
    created TEXT NOT NULL, format INTEGER NOT NULL);
CREATE TABLE entries (id INTEGER PRIMARY KEY AUTOINCREMENT, mechanism TEXT NOT NULL, epsilon REAL NOT NULL,
    delta REAL NOT NULL, neighbours TEXT NOT NULL, label TEXT NOT NULL, status TEXT NOT NULL, note TEXT NOT NULL,
    process TEXT NOT NULL, reserved_at TEXT NOT NULL, settled_at TEXT);
INSERT INTO budget VALUES (1, 2.0, 1e-6, '2026-11-20T10:11:12.123456+00:00', 1);
INSERT INTO entries VALUES (1, 'a', 0.5, 0, 'replace-one', 'x', 'spent', '', '1@h',
    '2026-11-20T10:11:12.123456+00:00', '2026-11-20T10:11:13.5+00:00');
INSERT INTO entries VALUES (2, 'b', 0.25, 1e-7, 'replace-one', 'y', 'released', '', '1@h',
    '2026-11-21T10:11:12+00:00', '2026-11-21T10:11:13+00:00');
INSERT INTO entries VALUES (3, 'c', 0.75, 0, 'replace-one', 'z', 'reserved', '', '2@h', '2026-11-22T23:59:59+00:00', NULL);
"""


def test_format_1_ledger_is_refused_then_upgraded_once(tmp_path):
    path = tmp_path / "old.ledger"
    with sqlite3.connect(path) as connection:
        connection.executescript(_FORMAT_1)
    with pytest.raises(DamagedLedgerError, match="--upgrade"):
        PrivacyAccountant.open(path)
    backup = upgrade_ledger(path)
    assert backup.exists() and backup.name == "old.ledger.format1"
    acct = PrivacyAccountant.open(path, epsilon=2.0, delta=1e-6)
    assert [(e.mechanism, e.status, e.time.day, e.time.hour) for e in acct.history] == [
        ("a", "spent", 20, 0),
        ("b", "released", 21, 0),
        ("c", "reserved", 22, 0),
    ]
    assert acct.spent == (1.25, 0.0)
    acct.record("d", 0.5)
    acct.close()
    with pytest.raises(FileExistsError, match="format1"):
        upgrade_ledger(path)  # the copy of the original is never overwritten
    backup.rename(tmp_path / "kept.format1")
    with pytest.raises(DamagedLedgerError, match="not a format-1"):
        upgrade_ledger(path)  # already converted: nothing changes


def test_cli_ledger_shows_tight_totals_a_dry_run_and_refuses_damage(tmp_path, capsys):
    import json

    from pm_private.cli import main
    from pm_private.privacy.primitives import gaussian_noise_event

    path = tmp_path / "l.ledger"
    acct = PrivacyAccountant.open(path, 3.5, 1e-5, durable=False)
    event = gaussian_noise_event(6, 2.0, 1.0, 1e-6)
    for _ in range(10):
        acct.record("g", 1.0, 1e-6, noise=(event,))
    acct.close()
    assert main(["ledger", str(path), "--next", "gaussian", "--epsilon", "1", "--delta", "1e-6"]) == 0
    text = capsys.readouterr().out
    assert "spent   ε 10" in text and "tight   ε 3.1" in text and "-> fits (dry run" in text
    assert main(["ledger", str(path), "--next", "other", "--epsilon", "1", "--json", "-"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["tight"]["epsilon"] < 3.5 and document["next"]["fits"] is False
    assert len(document["entries"]) == 10 and json.loads(document["entries"][0]["noise"])[0][0] == "gaussian"
    for bad in (["--epsilon", "1"], ["--next", "gaussian", "--epsilon", "1"], ["--next", "laplace"]):
        with pytest.raises(SystemExit) as exit_:
            main(["ledger", str(path), *bad])
        assert exit_.value.code == 2
    path.write_bytes(path.read_bytes()[:1000])
    with pytest.raises(SystemExit) as exit_:
        main(["ledger", str(path)])
    assert exit_.value.code == 2 and "damaged" in capsys.readouterr().err

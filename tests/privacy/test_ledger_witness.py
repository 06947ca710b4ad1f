"""The ledger's head is witnessed outside the file: an earlier state of the file (an older copy put
back, the newest rows cut, a copy without its -wal file) is refused; recovery from a backup carries
the forgotten spends forward as spent."""

import json
import shutil
import sqlite3
import warnings
from pathlib import Path

import pytest

from pm_private import PrivacyAccountant
from pm_private.privacy import witness
from pm_private.privacy.ledger import (
    DamagedLedgerError,
    DamagedWitnessError,
    LedgerRollbackError,
    LedgerWitnessWarning,
    recover_ledger,
)


@pytest.fixture(autouse=True)
def state_dir(tmp_path, monkeypatch):
    folder = tmp_path / "state"
    monkeypatch.setenv("PM_PRIVATE_STATE_DIR", str(folder))
    return folder


def _spend(path: Path, times: int, total=None) -> PrivacyAccountant:
    acct = PrivacyAccountant.open(path, *([] if total is None else [total]))
    for i in range(times):
        acct.record(f"m{i}", 1.0, label=f"release {i}")
    return acct


def _head(path: Path):
    acct = PrivacyAccountant.open(path)
    try:
        return acct._store.head()
    finally:
        acct.close()


def test_state_dir_defaults(monkeypatch, tmp_path):
    monkeypatch.delenv("PM_PRIVATE_STATE_DIR")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    assert witness.state_dir() == tmp_path / "xdg" / "pm_private" / "ledgers"
    monkeypatch.delenv("XDG_STATE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert witness.state_dir() == tmp_path / "home" / ".local" / "state" / "pm_private" / "ledgers"


def test_head_is_witnessed_at_creation_and_after_every_append(tmp_path, state_dir):
    path = tmp_path / "l.ledger"
    acct = PrivacyAccountant.open(path, 10.0)
    file = acct._store.witness_file()
    assert file.parent == state_dir and json.loads(file.read_text())["rows"] == 0
    acct.record("m", 1.0)  # a reservation and its settlement: two records
    document = json.loads(file.read_text())
    head = acct._store.head()
    assert (document["rows"], document["head"], document["spent"]) == (2, head.digest, [1.0, 0.0])
    assert document["ledger"] == file.stem == head.ledger and document["path"] == str(path.resolve())
    with pytest.raises(ValueError), acct.charge("fails before noise", 1.0):
        raise ValueError
    assert json.loads(file.read_text())["rows"] == 4


def test_an_older_copy_put_back_is_refused_naming_both_heads(tmp_path):
    path = tmp_path / "l.ledger"
    _spend(path, 1, 10.0).close()
    old = _head(path)
    shutil.copy(path, tmp_path / "old.ledger")
    acct = _spend(path, 5)
    new, spent = acct._store.head(), acct.spent
    acct.close()
    assert spent == (6.0, 0.0)
    shutil.copy(tmp_path / "old.ledger", path)
    with pytest.raises(LedgerRollbackError) as error:
        PrivacyAccountant.open(path)
    message = str(error.value)
    assert isinstance(error.value, DamagedLedgerError) and str(path) in message
    assert f"row {old.rows} (digest {old.digest[:12]})" in message
    assert f"row {new.rows} (digest {new.digest[:12]}" in message
    assert "--recover-from" in message and "estore" not in message
    with pytest.raises(LedgerRollbackError):  # under another name too: the identity is in the file
        PrivacyAccountant.open(tmp_path / "old.ledger")


def _drop_triggers(connection):
    for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall():
        connection.execute(f"DROP TRIGGER {name}")


def test_newest_rows_cut_with_the_previous_digest_copied_into_the_header_is_refused(tmp_path):
    path = tmp_path / "l.ledger"
    _spend(path, 3, 10.0).close()
    connection = sqlite3.connect(path, isolation_level=None)  # what the sqlite3 command line does
    _drop_triggers(connection)
    connection.execute("DELETE FROM settlements WHERE seq = 6")
    connection.execute("DELETE FROM entries WHERE seq = 5")
    previous = connection.execute("SELECT digest FROM settlements WHERE seq = 4").fetchone()[0]
    connection.execute("UPDATE budget SET rows = 4, head = ?", (previous,))
    connection.close()
    with pytest.raises(LedgerRollbackError, match=r"ends at row 4 .* recorded row 6"):
        PrivacyAccountant.open(path)


def test_a_copy_without_its_wal_file_is_refused(tmp_path):
    path = tmp_path / "l.ledger"
    acct = _spend(path, 3, 10.0)  # still open: the rows are in the -wal file, not checkpointed
    assert path.with_name("l.ledger-wal").stat().st_size > 0
    shutil.copy(path, tmp_path / "copy.ledger")
    with pytest.raises(LedgerRollbackError, match="without its -wal file"):
        PrivacyAccountant.open(tmp_path / "copy.ledger")
    acct.close()
    assert PrivacyAccountant.open(path).spent == (3.0, 0.0)


def test_a_ledger_ahead_of_its_witness_advances_it(tmp_path):
    path = tmp_path / "l.ledger"
    acct = _spend(path, 1, 10.0)
    file = acct._store.witness_file()
    early = file.read_bytes()
    acct.record("m", 1.0)
    acct.close()
    file.write_bytes(early)  # e.g. written on another machine: the witness lags
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert PrivacyAccountant.open(path).spent == (2.0, 0.0)
    assert json.loads(file.read_text())["rows"] == 4


def test_a_different_history_at_the_witnessed_row_is_refused(tmp_path):
    path = tmp_path / "l.ledger"
    _spend(path, 1, 10.0).close()
    shutil.copy(path, tmp_path / "old.ledger")
    _spend(path, 1).close()  # witness at row 4
    file = witness.witness_file(_head(path).ledger)
    witnessed = file.read_bytes()
    shutil.copy(tmp_path / "old.ledger", path)
    file.unlink()  # an older library, or the witness lost: the old copy is written again
    with pytest.warns(LedgerWitnessWarning):
        acct = PrivacyAccountant.open(path)
    acct.record("another release", 0.5)  # a different record 3 and 4
    acct.close()
    file.write_bytes(witnessed)
    with pytest.raises(LedgerRollbackError, match="does not continue the history"):
        PrivacyAccountant.open(path)


def test_a_missing_witness_is_recreated_with_a_warning(tmp_path):
    path = tmp_path / "l.ledger"
    _spend(path, 2, 10.0).close()
    shutil.copy(path, tmp_path / "old.ledger")
    _spend(path, 1).close()
    head = _head(path)
    file = witness.witness_file(head.ledger)
    file.unlink()
    with pytest.warns(LedgerWitnessWarning, match="re-created .* cannot be detected") as record:
        PrivacyAccountant.open(path).close()
    assert str(file) in str(record[0].message) and json.loads(file.read_text())["rows"] == head.rows
    shutil.copy(tmp_path / "old.ledger", path)  # from now on an older copy is refused again
    with pytest.raises(LedgerRollbackError):
        PrivacyAccountant.open(path)


@pytest.mark.parametrize(
    "damage",
    [
        lambda text: text[: len(text) // 2],  # cut: not JSON
        lambda text: text.replace('"rows": 2', '"rows": 1'),  # edited: the check digest fails
        lambda text: "[]",
    ],
)
def test_a_damaged_witness_is_refused_naming_it(tmp_path, damage):
    path = tmp_path / "l.ledger"
    _spend(path, 1, 10.0).close()
    file = witness.witness_file(_head(path).ledger)
    file.write_text(damage(file.read_text()))
    with pytest.raises(DamagedWitnessError) as error:
        PrivacyAccountant.open(path)
    assert str(file) in str(error.value) and str(path) in str(error.value)


def test_a_witness_of_another_ledger_is_refused(tmp_path):
    one, other = tmp_path / "one.ledger", tmp_path / "other.ledger"
    _spend(one, 1, 10.0).close()
    _spend(other, 1, 10.0).close()  # same total, same day: still another identity
    first, second = witness.witness_file(_head(one).ledger), witness.witness_file(_head(other).ledger)
    assert first != second
    shutil.copy(second, first)
    with pytest.raises(DamagedWitnessError, match="witnesses another ledger"):
        PrivacyAccountant.open(one)


def test_recovery_carries_the_forgotten_spends_forward(tmp_path):
    path = tmp_path / "l.ledger"
    _spend(path, 1, 10.0).close()
    shutil.copy(path, tmp_path / "backup.ledger")
    acct = _spend(path, 4)
    with pytest.raises(ValueError), acct.charge("fails before noise", 1.0):
        raise ValueError
    before = acct.spent
    acct.close()
    shutil.copy(tmp_path / "backup.ledger", path)
    with pytest.raises(LedgerRollbackError):
        PrivacyAccountant.open(path)
    recovery = recover_ledger(path, tmp_path / "backup.ledger")
    assert recovery.carried == (4.0, 0.0) and (recovery.backup_rows, recovery.witnessed_rows) == (2, 12)
    assert recovery.kept is not None and recovery.kept.exists()  # the refused file, kept for the record
    acct = PrivacyAccountant.open(path)
    after = acct.spent
    assert after[0] >= before[0] and after[1] >= before[1]
    last = acct.history[-1]
    assert (last.mechanism, last.status, last.epsilon) == ("carried forward", "spent", 4.0)
    assert acct._store.head().rows == recovery.rows == 4
    acct.record("m", 1.0)  # spending goes on from the recovered state
    acct.close()
    with pytest.raises(ValueError, match="nothing to recover"):
        recover_ledger(path, tmp_path / "backup.ledger")
    with pytest.raises(LedgerRollbackError):  # the backup itself is now refused too
        PrivacyAccountant.open(tmp_path / "backup.ledger")


def test_recovery_of_a_damaged_file_and_from_the_refused_file_itself(tmp_path):
    path = tmp_path / "l.ledger"
    _spend(path, 1, 10.0).close()
    shutil.copy(path, tmp_path / "backup.ledger")
    _spend(path, 2).close()
    path.write_bytes(b"\x00" * 100)  # damaged: its witness is found by its path
    assert recover_ledger(path, tmp_path / "backup.ledger").carried == (2.0, 0.0)
    acct = _spend(path, 1)
    assert acct.spent == (4.0, 0.0)
    acct.close()  # (an open connection keeps the -wal file, which a copy over the file would not replace)
    shutil.copy(tmp_path / "backup.ledger", path)  # rolled back: recovered from the refused file itself
    assert recover_ledger(path, path).carried == (3.0, 0.0)
    acct = PrivacyAccountant.open(path)
    assert acct.spent == (4.0, 0.0)
    acct.close()


def test_recovery_refuses_a_backup_of_another_ledger(tmp_path):
    path, other = tmp_path / "l.ledger", tmp_path / "other.ledger"
    _spend(path, 1, 10.0).close()
    shutil.copy(path, tmp_path / "backup.ledger")
    _spend(path, 2).close()
    _spend(other, 0, 10.0).close()
    shutil.copy(tmp_path / "backup.ledger", path)
    with pytest.raises(ValueError, match="another ledger"):
        recover_ledger(path, other)
    with pytest.raises(LedgerRollbackError):  # nothing was changed
        PrivacyAccountant.open(path)


def test_cli_prints_the_head_and_recovers(tmp_path, capsys):
    from pm_private.cli import main

    path = tmp_path / "l.ledger"
    _spend(path, 1, 10.0).close()
    shutil.copy(path, tmp_path / "backup.ledger")
    _spend(path, 2).close()
    head = _head(path)
    assert main(["ledger", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"head    record {head.rows}, digest {head.digest}" in out
    shutil.copy(tmp_path / "backup.ledger", path)
    with pytest.raises(SystemExit):
        main(["ledger", str(path)])
    assert "--recover-from" in capsys.readouterr().err
    assert main(["ledger", str(path), "--recover-from", str(tmp_path / "backup.ledger")]) == 0
    out = capsys.readouterr().out
    assert "ε 2, δ 0 carried forward as spent" in out and "spent   ε 3," in out

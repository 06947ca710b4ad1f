"""A regression release given no public centre (neither --standardize-from nor --x-center) is
refused before the ledger is opened unless --raw-covariates allows it: a rule of the arguments,
whatever the data hold."""

import numpy as np
import pandas as pd
import pytest

from pm_private import PrivacyAccountant
from pm_private.cli import main
from pm_private.release_file import read_release_file

#: Each regression release with its columns and public bounds.
COMMANDS = {
    "linear-stats": ["--target", "y", "--x-bound", "2", "--y-bound", "2"],
    "logistic-stats": ["--target", "label", "--x-bound", "2", "--delta", "1e-6"],
    "poisson-stats": ["--target", "count", "--x-bound", "2", "--y-bound", "5", "--delta", "1e-6"],
    "survival-regression": ["--time", "t", "--event", "e", "--edges", "0.5,1,2", "--x-bound", "2", "--delta", "1e-6"],
}


@pytest.fixture
def data(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(3)
    X = rng.uniform(-0.5, 0.5, (400, 2))  # centred already: the rule does not look at them
    frame = pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "y": X @ [1.0, -1.0] + 0.1 * rng.normal(size=400)})
    frame["label"] = (frame["y"] > 0).astype(int)
    frame["count"] = rng.poisson(1.0, 400)
    frame["t"], frame["e"] = rng.exponential(1.0, 400), rng.integers(0, 2, 400)
    frame.to_csv("d.csv", index=False)
    frame.iloc[:40].to_csv("public.csv", index=False)
    return tmp_path


def _argv(command: str, *extra: str, out: str = "r.json") -> list[str]:
    argv = ["release", command, "d.csv", "--features", "a", "b", *COMMANDS[command], "--epsilon", "1"]
    return [*argv, "--ledger", "l.db", "--total-epsilon", "2", "--total-delta", "1e-5", "--out", out, *extra]


def _refused(argv, capsys) -> str:
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    return capsys.readouterr().err


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_no_public_centre_is_refused_before_the_ledger_is_opened(data, capsys, command):
    for dry in ([], ["--dry-run"]):
        err = _refused(_argv(command, *dry), capsys)
        assert "--standardize-from" in err and "--x-center" in err and "--raw-covariates" in err
    err = _refused(_argv(command, "--x-scale", "2"), capsys)  # a scale alone centres nothing
    assert "--raw-covariates" in err
    assert not (data / "l.db").exists() and not (data / "r.json").exists()


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_raw_covariates_beside_a_centre_is_refused(data, capsys, command):
    for centre in (["--standardize-from", "public.csv"], ["--x-center", "0"]):
        err = _refused(_argv(command, "--raw-covariates", *centre), capsys)
        assert "--raw-covariates contradicts --standardize-from and --x-center" in err
    assert not (data / "l.db").exists()


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_centre_or_the_flag_lets_the_release_go_ahead(data, capsys, command):
    assert main(_argv(command, "--raw-covariates")) == 0
    (entry,) = read_release_file("r.json")
    assert entry["features"] == ["a", "b"]
    assert main(_argv(command, "--x-center", "0", out="s.json")) == 0
    assert PrivacyAccountant.open("l.db").spent.epsilon == pytest.approx(2.0, rel=1e-6)


def test_the_flag_is_explained_in_the_help(capsys):
    with pytest.raises(SystemExit):
        main(["release", "logistic-stats", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "--raw-covariates" in help_text and "already centred" in help_text

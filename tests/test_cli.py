"""The pm-private command line: release (CSV, Parquet) against a ledger file, ledger display
and export, fit, and argument checks that fail before any work or spend (exit code 2)."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pm_private import PrivacyAccountant
from pm_private.cli import main
from pm_private.linear.suffstats import MECHANISM as SUFF_STATS_MECHANISM
from pm_private.release_file import read_release_file
from pm_private.survival.weibull.mechanisms import LSP_TLL

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def data(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (300, 3))
    y = X @ [0.5, -0.3, 0.2] + 0.1 * rng.normal(size=300)
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "c": X[:, 2], "y": y, "name": ["r"] * 300}).to_csv("d.csv", index=False)
    t = rng.weibull(1.5, 300) * 2
    pd.DataFrame({"t": np.minimum(t, 5.0), "e": (t < 5.0).astype(int)}).to_parquet("s.parquet")
    return tmp_path


SUFF = [
    "release",
    "suff-stats",
    "d.csv",
    "--target",
    "y",
    "--features",
    "a",
    "b",
    "c",
    "--x-bound",
    "1",
    "--y-bound",
    "2",
]
WEIBULL = ["release", "weibull", "s.parquet", "--time", "t", "--event", "e", "--horizon", "5", "--K", "50"]


def _usage_error(argv, capsys, message):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    assert message in capsys.readouterr().err


def test_release_both_kinds_then_show_and_export_the_ledger(data, capsys):
    assert main([*SUFF, "--ledger", "l.db", "--total-epsilon", "2", "--epsilon", "1", "--out", "r.json"]) == 0
    assert main([*WEIBULL, "--ledger", "l.db", "--epsilon", "0.5", "--out", "w.json"]) == 0
    (entry,) = read_release_file("r.json")
    assert entry["features"] == ["a", "b", "c"] and entry["target"] == "y" and entry["epsilon"] == 1.0
    assert entry["release"].n == 300 and entry["releases"][0]["y_bound"] == 2.0
    (weibull,) = read_release_file("w.json")
    assert weibull["kind"] == "weibull" and weibull["parameters"]["horizon"] == 5.0 and weibull["time"] == "t"
    assert PrivacyAccountant.open("l.db").spent == (1.5, 0.0)
    capsys.readouterr()

    assert main(["ledger", "l.db"]) == 0
    shown = capsys.readouterr().out
    assert "spent   ε 1.5" in shown and SUFF_STATS_MECHANISM in shown and LSP_TLL in shown
    assert main(["ledger", "l.db", "--csv", "l.csv", "--json", "l.json"]) == 0
    table = pd.read_csv("l.csv")
    assert list(table.status) == ["spent", "spent"] and list(table.epsilon) == [1.0, 0.5]
    document = json.loads((data / "l.json").read_text())
    assert document["remaining"] == {"epsilon": 0.5, "delta": 0.0} and len(document["entries"]) == 2
    capsys.readouterr()
    assert main(["ledger", "l.db", "--json", "-"]) == 0
    assert json.loads(capsys.readouterr().out)["total"] == {"epsilon": 2.0, "delta": 0.0}


def test_release_reports_the_clipping_and_warns_when_it_is_large(data, capsys):
    base = [*SUFF, "--ledger", "l.db", "--total-epsilon", "300"]
    assert main([*base, "--epsilon", "100", "--out", "r.json"]) == 0
    shown = capsys.readouterr().out
    assert "clipping changed about" in shown and "warning" not in shown  # |x| ≤ 1 and |y| < 2: little clipped
    (entry,) = read_release_file("r.json")
    assert entry["releases"][0]["clip_share"] == 0.05 and entry["releases"][0]["clipped_rows"] is not None
    assert main([*base, "--epsilon", "100", "--out", "s.json", "--y-bound", "0.05"]) == 0
    assert "warning: much of the data was clipped" in capsys.readouterr().out  # most |y| exceed 0.05
    assert main([*base, "--epsilon", "100", "--out", "t.json", "--clip-share", "0"]) == 0
    assert "clipping changed" not in capsys.readouterr().out


def test_refused_budget_exits_1_and_writes_nothing(data, capsys):
    main([*SUFF, "--ledger", "l.db", "--total-epsilon", "1", "--epsilon", "0.8", "--out", "r.json"])
    assert main([*SUFF, "--ledger", "l.db", "--epsilon", "0.5", "--out", "r2.json"]) == 1
    assert "refused" in capsys.readouterr().err
    assert not (data / "r2.json").exists() and PrivacyAccountant.open("l.db").spent == (0.8, 0.0)


@pytest.mark.parametrize(
    "change, message",
    [
        (["--epsilon", "-1"], "argument --epsilon: must be > 0"),
        (["--epsilon", "1e-320"], "argument --epsilon: must be ≥"),
        (["--epsilon", "nan"], "must be finite"),
        (["--epsilon", "one"], "not a number"),
        (["--x-bound", "0"], "argument --x-bound"),
        (["--split", "0.5", "0.3", "0.1"], "--split must sum to 1"),
        (["--clip-share", "0.7"], "--clip-share must be 0 or in [0.001, 0.5]"),
        (["--clip-share", "-1"], "argument --clip-share"),
        (["--features", "a", "zz"], "no column 'zz'"),
        (["--features", "name"], "column 'name' is not numeric"),
        (["--target", "a", "--features", "a", "b"], "a column is used twice"),
        (["--total-epsilon", "0"], "argument --total-epsilon"),
        (["--total-delta", "1"], "argument --total-delta"),
        (["--out", "."], "is a folder"),
        (["--out", "missing/r.json"], "does not exist"),
        (["--ledger", "new.db", "--total-epsilon", ""], "argument --total-epsilon"),
    ],
)
def test_release_argument_errors_spend_nothing(data, capsys, change, message):
    PrivacyAccountant.open("l.db", epsilon=1.0)
    argv = [*SUFF, "--ledger", "l.db", "--epsilon", "0.5", "--out", "r.json", *change]
    _usage_error(argv, capsys, message)
    assert PrivacyAccountant.open("l.db").history == ()
    assert not (data / "r.json").exists()


def test_release_errors_found_in_the_files(data, capsys):
    _usage_error([*SUFF, "--ledger", "new.db", "--epsilon", "0.5", "--out", "r.json"], capsys, "needs --total-epsilon")
    assert not (data / "new.db").exists()
    PrivacyAccountant.open("l.db", epsilon=1.0)
    common = ["--ledger", "l.db", "--epsilon", "0.5", "--out", "r.json"]
    _usage_error([*SUFF, *common, "--total-epsilon", "3"], capsys, "reopening it with")
    _usage_error([*WEIBULL, *common, "--horizon", "4"], capsys, "must lie in [0, --horizon 4]")
    (data / "x.txt").write_text("a,b\n1,2\n")
    _usage_error(
        ["release", "suff-stats", "x.txt", "--target", "b", "--x-bound", "1", "--y-bound", "1", *common],
        capsys,
        "must be a .csv, .parquet or .pq file",
    )
    pd.DataFrame({"a": [1.0, np.nan], "y": [0.0, 1.0]}).to_csv("nan.csv", index=False)
    _usage_error(
        ["release", "suff-stats", "nan.csv", "--target", "y", "--x-bound", "1", "--y-bound", "1", *common],
        capsys,
        "column 'a' has missing or non-finite values",
    )
    _usage_error(["ledger", "nothing.db"], capsys, "no such file")
    _usage_error(["ledger", "d.csv"], capsys, "not a pm_private ledger")
    assert PrivacyAccountant.open("l.db").history == ()


def test_fit_argument_errors(data, capsys):
    (data / "bad.json").write_text("{}")
    _usage_error(["fit", "bad.json"], capsys, "not a pm_private release file")
    main([*WEIBULL, "--ledger", "l.db", "--total-epsilon", "1", "--epsilon", "0.5", "--out", "w.json"])
    _usage_error(["fit", "w.json"], capsys, "holds 0 sufficient-statistics releases")
    _usage_error(["fit", "w.json", "--draws", "0"], capsys, "argument --draws")
    _usage_error(["fit", "w.json", "--posterior", "."], capsys, "is a folder")


@pytest.mark.slow
def test_fit_writes_posterior_and_summary(data, capsys):
    import xarray as xr

    # The command line draws secure (unseeded) noise; a large ε keeps the noise-aware posterior of
    # beta[a] (true value 0.5) well away from the threshold in every run.
    main([*SUFF, "--ledger", "l.db", "--total-epsilon", "100", "--epsilon", "100", "--out", "r.json"])
    argv = ["fit", "r.json", "--draws", "100", "--tune", "100", "--chains", "1", "--no-progress", "--summary", "s.csv"]
    assert main(argv) == 0
    posterior = xr.open_datatree(data / "r.posterior.nc", engine="h5netcdf")
    assert posterior["posterior"]["beta"].shape == (1, 100, 3)
    assert list(posterior["posterior"]["feature"].values) == ["a", "b", "c"]
    summary = pd.read_csv(data / "s.csv", index_col=0)
    assert "beta[a]" in summary.index and summary.loc["beta[a]", "mean"] > 0.2
    shown = capsys.readouterr().out
    assert "divergent draws:" in shown and "clipping changed about" in shown


def test_exit_codes_of_the_command(data):
    command = [sys.executable, "-m", "pm_private.cli"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    bad = subprocess.run([*command, "demo", "--epsilons", "-1"], capture_output=True, text=True, env=env, check=False)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and "--epsilons" in bad.stderr
    argv = [*SUFF, "--ledger", "l.db", "--total-epsilon", "1", "--epsilon", "1"]
    assert (
        subprocess.run([*command, *argv, "--out", "r.json"], env=env, capture_output=True, check=False).returncode == 0
    )
    refused = subprocess.run(
        [*command, *argv, "--out", "r2.json"], capture_output=True, text=True, env=env, check=False
    )
    assert refused.returncode == 1 and "refused" in refused.stderr and not (data / "r2.json").exists()


def test_demo_arguments_are_checked_before_any_work(tmp_path, capsys):
    start = time.monotonic()
    _usage_error(["demo", "--epsilons", "-1"], capsys, "argument --epsilons: must be > 0")
    _usage_error(["demo", "--sizes", "0"], capsys, "argument --sizes: must be ≥ 1")
    _usage_error(["demo", "--repeats", "two"], capsys, "not an integer")
    (tmp_path / "file").write_text("")
    _usage_error(["demo", "--out", str(tmp_path / "file")], capsys, "exists and is not a folder")
    _usage_error(["demo", "--expression", str(tmp_path / "file")], capsys, "--expression and --responses go together")
    _usage_error(["demo", "--expression", str(tmp_path / "nothing")], capsys, "no such file")
    _usage_error(["demo", "--genes", "1000", "--out", str(tmp_path / "out")], capsys, "the data have 64 genes")
    assert time.monotonic() - start < 30

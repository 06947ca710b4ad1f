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
from pm_private.linear.release import MECHANISM as SUFF_STATS_MECHANISM
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
    "linear-stats",
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
    "--raw-covariates",  # the features lie in [-1, 1] already: released as they are
]
CENTRED = SUFF[:-1]  # the same release, given a public centre instead
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
    (data / "x.txt").write_text("a,b\n1,2\n")
    _usage_error(
        ["release", "linear-stats", "x.txt", "--target", "b", "--x-bound", "1", "--y-bound", "1", *common],
        capsys,
        "must be a .csv, .parquet or .pq file",
    )
    pd.DataFrame({"a": [1.0, np.nan], "y": [0.0, 1.0]}).to_csv("nan.csv", index=False)
    _usage_error(
        [
            "release",
            "linear-stats",
            "nan.csv",
            "--target",
            "y",
            "--x-bound",
            "1",
            "--y-bound",
            "1",
            "--raw-covariates",
            *common,
        ],
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
    _usage_error(["fit", "w.json"], capsys, "holds no release that 'pm-private fit' can fit")
    assert "--index" not in capsys.readouterr().err
    main([*WEIBULL, "--ledger", "l.db", "--epsilon", "0.1", "--out", "w2.json"])
    with pytest.raises(SystemExit):
        main(["fit", "w2.json"])
    message = capsys.readouterr().err
    assert "0: weibull" in message and "read_release_file" in message
    _usage_error(["fit", "w.json", "--draws", "0"], capsys, "argument --draws")
    _usage_error(["fit", "w.json", "--posterior", "."], capsys, "is a folder")


@pytest.mark.slow
def test_fit_writes_posterior_and_summary(data, capsys):
    import xarray as xr

    # The command line draws secure (unseeded) noise; a large ε keeps the noise-aware posterior of
    # beta[a] (true value 0.5) well away from the threshold in every run.
    main([*SUFF, "--ledger", "l.db", "--total-epsilon", "100", "--epsilon", "100", "--out", "r.json"])
    argv = ["fit", "r.json", "--draws", "100", "--tune", "100", "--chains", "1", "--no-progress", "--summary", "s.csv"]
    argv += ["--backend", "c"]  # compiles sooner than the default numba: the test is about the files
    assert main(argv) == 0
    posterior = xr.open_datatree(data / "r.posterior.nc", engine="h5netcdf")
    assert posterior["posterior"]["beta"].shape == (1, 100, 3)
    assert list(posterior["posterior"]["feature"].values) == ["a", "b", "c"]
    summary = pd.read_csv(data / "s.csv", index_col=0)
    assert "beta[a]" in summary.index and summary.loc["beta[a]", "coef"] > 0.2
    shown = capsys.readouterr().out
    assert "divergent draws:" in shown and "clipping changed about" in shown


def test_dry_run_reads_no_row_and_touches_no_ledger(data, capsys):
    # Rows that no release could read: the dry run only needs the header and public arguments.
    (data / "broken.csv").write_text("a,b,c,y\nnot,a,number,!\n")
    argv = [
        *SUFF,
        "--ledger",
        "l.db",
        "--total-epsilon",
        "2",
        "--epsilon",
        "1",
        "--out",
        "r.json",
        "--dry-run",
        "--clip-share",
        "0",
    ]
    argv[2] = "broken.csv"
    assert main(argv) == 0
    shown = capsys.readouterr().out
    # Laplace scales Δ/(pε): Sxx d(d+1)Bx²/(2·0.6), Sxy 2dBxBy/0.35, Syy By²/0.05 at Bx = 1, By = 2
    # and d = 4 columns: the 3 features and the intercept's constant column.
    assert "would spend ε = 1" in shown and "Laplace scale 16.6667" in shown.replace("\n", " ")
    assert "Laplace scale 45.7143" in shown and "Laplace scale 80" in shown
    assert not (data / "l.db").exists() and not (data / "r.json").exists()
    gaussian = [*argv, "--noise", "gaussian", "--delta", "1e-6", "--x-bound", "1.5"]
    assert main(gaussian) == 0
    assert "Gaussian mechanism, (ε, δ) = (1, 1e-06)" in capsys.readouterr().out
    assert (
        main([*WEIBULL, "--ledger", "l.db", "--total-epsilon", "1", "--epsilon", "1", "--out", "w.json", "--dry-run"])
        == 0
    )
    assert "LSP (ε/2 = 0.5)" in capsys.readouterr().out and not (data / "l.db").exists()


def test_the_private_file_or_its_rows_are_refused_as_public_preprocessing(data, capsys):
    """Audit: --standardize-from DATA wrote DATA's exact column means and sds into the release file."""
    import os

    common = ["--ledger", "l.db", "--total-epsilon", "3", "--total-delta", "1e-5", "--epsilon", "1", "--out", "r.json"]
    os.link("d.csv", "hard.csv")
    os.symlink(data / "d.csv", "soft.csv")
    (data / "copy.csv").write_bytes((data / "d.csv").read_bytes())
    for source in ("d.csv", str(data / "d.csv"), "hard.csv", "soft.csv", "copy.csv"):
        for dry in ([], ["--dry-run"]):
            with pytest.raises(SystemExit) as exit_:
                main([*CENTRED, *common, "--standardize-from", source, *dry])
            assert exit_.value.code == 2 and "is the private DATA file" in capsys.readouterr().err
    frame = pd.read_csv("d.csv")
    shared = frame.iloc[[0, 9]].copy()
    shared["name"] = "other"  # an unused column differs: the rows still overlap over the columns used
    pd.concat([shared, pd.DataFrame({"a": [0.0], "b": [1.0], "c": [2.0], "y": [1.5], "name": ["p"]})]).to_csv(
        "pub.csv", index=False
    )
    # rows of DATA among the public ones: refused once the release has spent (no count, no row named)
    assert main([*CENTRED, *common, "--standardize-from", "pub.csv"]) == 1
    err = capsys.readouterr().err
    assert "public rows include rows of the private X" in err and "shares" not in err
    assert PrivacyAccountant.open(data / "l.db").spent.epsilon == 1.0 and not (data / "r.json").exists()


def test_release_note_and_public_preprocessing_are_recorded(data, capsys):
    pd.DataFrame({"a": [0.0, 2.0], "b": [1.0, 1.0], "c": [-1.0, 3.0], "y": [0.0, 4.0]}).to_csv("pub.csv", index=False)
    common = ["--ledger", "l.db", "--total-epsilon", "3", "--total-delta", "1e-5", "--epsilon", "1"]
    argv = [
        *CENTRED,
        *common,
        "--out",
        "r.json",
        "--standardize-from",
        "pub.csv",
        "--y-scale",
        "3",
        "--note",
        "study 7",
    ]
    assert main(argv) == 0
    (entry,) = read_release_file("r.json")
    prep = entry["release"].releases[0].preprocessing
    # Means and standard deviations of the public rows; a constant column is centred, not scaled;
    # the flag overrides the file's y scale.
    np.testing.assert_allclose(prep.x_center, [1.0, 1.0, 1.0])
    np.testing.assert_allclose(prep.x_scale, [1.0, 1.0, 2.0])
    assert (prep.y_center, prep.y_scale) == (2.0, 3.0)
    assert "pub.csv" in entry["preprocessing"]["constants"] and "--y-scale" in entry["preprocessing"]["constants"]
    assert PrivacyAccountant.open("l.db").history[-1].note == "study 7"
    assert main(["ledger", "l.db"]) == 0 and "[study 7]" in capsys.readouterr().out

    argv = [*CENTRED, "--ledger", "l.db", "--epsilon", "1", "--out", "g.json", "--noise", "gaussian"]
    argv += ["--delta", "1e-6", "--x-center", "0", "--x-scale", "1", "2", "4"]
    assert main(argv) == 0
    (gaussian,) = read_release_file("g.json")
    assert gaussian["delta"] == 1e-6 and gaussian["releases"][0]["kind"] == "linear_stats_gaussian"
    np.testing.assert_allclose(gaussian["release"].releases[0].preprocessing.x_scale, [1.0, 2.0, 4.0])
    assert PrivacyAccountant.open("l.db").spent == (2.0, 1e-6)


@pytest.mark.parametrize("options", [[], ["--no-scale-response", "--clip-share", "0"]])
def test_gaussian_bounds_are_chosen_when_both_are_left_out(data, capsys, options):
    from pm_private import gaussian_bounds

    # Public responses within ±2m: the chosen bounds are the rule's, m clearly above 1 at ε = 8.
    pd.DataFrame({"a": [0.0, 1.0, 2.0], "b": [1.0, 0.0, 1.0], "c": [-1.0, 1.0, 0.0], "y": [0.0, 1.0, 2.0]}).to_csv(
        "pub.csv", index=False
    )
    argv = [*SUFF[:9], "--ledger", "l.db", "--total-epsilon", "10", "--total-delta", "1e-5", "--epsilon", "8"]
    argv += ["--noise", "gaussian", "--delta", "1e-6", "--standardize-from", "pub.csv", *options]
    scale_response = not options
    expected = gaussian_bounds(300, 3, 8.0, 1e-6, clip_share=0.0 if options else 0.05, scale_response=scale_response)
    assert expected.multiplier > 1.2
    assert main([*argv, "--out", "r.json", "--dry-run"]) == 0
    shown = capsys.readouterr().out
    assert f"bounds chosen by gaussian_bounds for n = 300: x bound {expected.x_bound:.6g}" in shown
    assert "only the number of data rows was read" in shown and not (data / "l.db").exists()
    assert main([*argv, "--out", "r.json"]) == 0
    (entry,) = read_release_file("r.json")
    release = entry["release"].releases[0]
    assert (release.x_bound, release.y_bound) == (expected.x_bound, expected.y_bound)


@pytest.mark.parametrize(
    "change, message",
    [
        (["--y-bound", "2"], "give both --x-bound and --y-bound, or neither"),
        ([], "--noise laplace needs --x-bound and --y-bound"),
        (["--noise", "gaussian", "--delta", "1e-6"], "bounds are chosen on a standardised scale"),
        (["--noise", "gaussian", "--delta", "1e-6", "--y-center", "0"], "bounds are chosen on a standardised"),
    ],
)
def test_bounds_left_out_are_refused_where_they_cannot_be_chosen(data, capsys, change, message):
    PrivacyAccountant.open("l.db", epsilon=1.0)
    argv = [*SUFF[:9], "--raw-covariates", "--ledger", "l.db", "--epsilon", "0.5", "--out", "r.json", *change]
    _usage_error(argv, capsys, message)
    assert PrivacyAccountant.open("l.db").history == () and not (data / "r.json").exists()


@pytest.mark.parametrize(
    "change, message",
    [
        (["--x-scale", "1", "2"], "--x-scale takes 1 value or one per feature (3), got 2"),
        (["--x-scale", "0"], "argument --x-scale: must be > 0"),
        (["--y-center", "inf"], "argument --y-center: must be finite"),
        (["--standardize-from", "none.csv"], "no such file"),
        (["--noise", "gaussian"], "--noise gaussian needs --delta"),
        (["--delta", "1e-6"], "--delta applies to --noise gaussian only"),
    ],
)
def test_preprocessing_and_mechanism_errors_spend_nothing(data, capsys, change, message):
    PrivacyAccountant.open("l.db", epsilon=1.0)
    _usage_error([*SUFF, "--ledger", "l.db", "--epsilon", "0.5", "--out", "r.json", *change], capsys, message)
    assert PrivacyAccountant.open("l.db").history == () and not (data / "r.json").exists()


@pytest.mark.slow
def test_steward_to_analyst_on_a_shipped_data_set(tmp_path, monkeypatch, capsys):
    """scikit-learn's diabetes data on its raw scale: 40 public rows give the preprocessing, the
    steward releases the other rows with a note, the analyst fits and gets a posterior file that
    says what it was fitted on."""
    import hashlib
    from importlib.metadata import version

    import xarray as xr
    from sklearn.datasets import load_diabetes

    monkeypatch.chdir(tmp_path)
    frame = load_diabetes(scaled=False, as_frame=True).frame
    frame.iloc[:40].to_csv("public.csv", index=False)
    frame.iloc[40:].to_csv("private.csv", index=False)
    release = ["release", "linear-stats", "private.csv", "--target", "target", "--noise", "gaussian"]
    release += ["--x-bound", "3.2", "--y-bound", "2", "--standardize-from", "public.csv"]
    release += [
        "--ledger",
        "l.db",
        "--total-epsilon",
        "1",
        "--total-delta",
        "1e-5",
        "--epsilon",
        "1",
        "--delta",
        "1e-5",
    ]
    assert main([*release, "--out", "r.json", "--note", "diabetes study", "--dry-run"]) == 0
    assert not (tmp_path / "l.db").exists()
    assert main([*release, "--out", "r.json", "--note", "diabetes study"]) == 0
    capsys.readouterr()
    fit = ["fit", "r.json", "--draws", "30", "--tune", "30", "--chains", "1", "--backend", "c", "--seed", "1"]
    assert main(fit) == 0
    out = capsys.readouterr().out
    assert "fit:  50% of 60 iterations" in out and "fit: 100% of 60 iterations" in out  # not a terminal: lines
    posterior = xr.open_datatree("r.posterior.nc", engine="h5netcdf")
    attrs = posterior.attrs
    assert attrs["epsilon"] == pytest.approx(1.0) and attrs["epsilon"] <= 1.0  # what OpenDP certifies
    assert (attrs["delta"], attrs["release_kind"]) == (1e-5, "linear_stats")
    assert "Gaussian" in attrs["mechanism"] and attrs["neighbours"] == "replace-one"
    assert attrs["release_file_sha256"] == hashlib.sha256((tmp_path / "r.json").read_bytes()).hexdigest()
    assert attrs["pm_private_version"] == version("pm_private")
    assert list(posterior["posterior"]["feature"].values) == list(frame.columns[:-1])
    assert PrivacyAccountant.open("l.db").history[-1].note == "diabetes study"


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


#: Invalid values for each argparse type of the command line (every value is invalid for every
#: argument of that type); parse-time types exit 2 before any file is read.
INVALID_BY_TYPE = {
    "positive_float": ["0", "-1", "nan", "inf", "-inf", "abc", "", "1e400", "0x10"],
    "bound": ["0", "-1", "nan", "inf", "abc", "", "1e200", "1e-200", "1e308", "1e-300", "1e152", "5e-324"],
    "epsilon": ["0", "-1", "nan", "inf", "abc", "", "1e-7", "1e-320", "1e16", "1e308"],
    "unit_interval": ["-0.1", "1", "1.5", "nan", "inf", "abc", ""],
    "open_unit_interval": ["0", "1", "-0.1", "nan", "abc", ""],
    "delta": ["0", "1", "-0.1", "nan", "abc", "", "1e-320", "5e-324"],
    "positive_int": ["0", "-1", "1.5", "abc", "", "nan", "1e3"],
    "nonnegative_int": ["-1", "1.5", "abc", "", "nan"],
}


def _typed_options(parser):
    """(option string, type name, nargs) of every option of ``parser`` whose type is swept."""
    for action in parser._actions:
        name = getattr(action.type, "__name__", None)
        if action.option_strings and name in INVALID_BY_TYPE:
            yield action.option_strings[0], name, action.nargs


def _subparsers():
    from pm_private.cli import build_parser

    commands = next(a for a in build_parser(demo=False)._actions if a.dest == "command").choices
    kinds = next(a for a in commands["release"]._actions if a.dest == "kind").choices
    return {"linear-stats": kinds["linear-stats"], "weibull": kinds["weibull"], "fit": commands["fit"]}


def test_every_typed_option_is_swept():
    swept = {(key, option) for key, parser in _subparsers().items() for option, _, _ in _typed_options(parser)}
    assert {("linear-stats", "--x-bound"), ("weibull", "--omega"), ("weibull", "--K"), ("fit", "--draws")} <= swept
    assert len(swept) >= 18


def test_every_numeric_option_refuses_invalid_values_with_exit_2(data, capsys):
    """Parser-driven: each typed option of each subcommand, each invalid value: exit 2 naming the
    option, before the ledger or the data are touched and without an output file."""
    PrivacyAccountant.open("l.db", epsilon=1.0)
    main([*SUFF, "--ledger", "s.db", "--total-epsilon", "1", "--epsilon", "0.5", "--out", "s.json"])
    valid = {
        "linear-stats": [*SUFF, "--ledger", "l.db", "--epsilon", "0.5", "--out", "r.json"],
        "weibull": [*WEIBULL, "--ledger", "l.db", "--epsilon", "0.5", "--out", "r.json"],
        "fit": ["fit", "s.json", "--no-progress"],
    }
    count = 0
    for key, parser in _subparsers().items():
        for option, type_name, nargs in _typed_options(parser):
            for bad in INVALID_BY_TYPE[type_name]:
                argv = [*valid[key], option, *([bad] * (nargs if isinstance(nargs, int) else 1))]
                with pytest.raises(SystemExit) as exit_:
                    main(argv)
                err = capsys.readouterr().err
                assert exit_.value.code == 2, (argv, err)
                assert option in err and "Traceback" not in err, (argv, err)
                count += 1
    assert count >= 150
    assert PrivacyAccountant.open("l.db").history == ()
    assert not (data / "r.json").exists()


def test_weibull_censors_times_beyond_the_horizon_and_releases_under_add_remove(data):
    """A time beyond --horizon is censored there, not refused (a refusal would read the private
    maximum); under --relation add-remove n stays out of the release file and the ledger charges
    the replace-one ε the release also has."""
    PrivacyAccountant.open("l.db", epsilon=2.0)
    argv = [*WEIBULL[:-4], "--horizon", "1", "--K", "50", "--ledger", "l.db", "--epsilon", "0.5"]
    assert (pd.read_parquet("s.parquet").t > 1).any()
    assert main([*argv, "--out", "r.json"]) == 0
    assert main([*argv, "--relation", "add-remove", "--out", "a.json"]) == 0
    (removed,) = read_release_file("a.json")
    assert removed["release"].n is None and removed["release"].neighbours == "add-remove"
    assert "n is private" in removed["preprocessing"]["rows"]
    entries = PrivacyAccountant.open("l.db").ledger
    assert [e.neighbours for e in entries] == ["replace-one", "add-remove as replace-one"]
    assert [e.epsilon for e in entries] == pytest.approx([0.5, 0.75])


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (["--K", "1000000000"], "K, gamma and omega would need"),
        (["--gamma", "1e40", "--omega", "700"], "gamma and omega would need"),
        (["--omega", "800"], "omega = 800"),
    ],
)
def test_weibull_sizes_are_refused_from_memory_before_any_work(data, capsys, change, message):
    PrivacyAccountant.open("l.db", epsilon=1.0)
    _usage_error([*WEIBULL, "--ledger", "l.db", "--epsilon", "0.5", "--out", "r.json", *change], capsys, message)
    assert PrivacyAccountant.open("l.db").history == ()
    assert not (data / "r.json").exists() and not list(data.glob(".r.json*"))


def test_suff_stats_shares_below_the_smallest_epsilon_are_refused_before_any_work(data, capsys):
    PrivacyAccountant.open("l.db", epsilon=1.0)
    argv = [*SUFF, "--ledger", "l.db", "--epsilon", "1e-6"]
    _usage_error([*argv, "--clip-share", "0", "--out", "r.json"], capsys, "split gives a statistic an ε below")
    assert PrivacyAccountant.open("l.db").history == ()
    assert not (data / "r.json").exists()


@pytest.mark.parametrize("failure", [RuntimeError("solver"), KeyboardInterrupt(), MemoryError()])
def test_a_failed_release_leaves_no_file_at_all(data, monkeypatch, failure):
    import pm_private.survival.weibull.mechanisms as mechanisms

    def fail(*args, **kwargs):
        raise failure

    monkeypatch.setattr(mechanisms, "weibull_private", fail)
    PrivacyAccountant.open("l.db", epsilon=1.0)
    with pytest.raises(type(failure)):
        main([*WEIBULL, "--ledger", "l.db", "--epsilon", "0.5", "--out", "r.json"])
    assert sorted(p.name for p in data.iterdir() if "r.json" in p.name) == []


def test_demo_silences_the_sampler_chatter_and_restores_the_loggers(caplog):
    import logging

    from pm_private.demo import quiet_sampler

    before = logging.getLogger("pymc").level
    with caplog.at_level(logging.INFO), quiet_sampler():
        logging.getLogger("pymc").info("Sequential sampling (1 chains in 1 job)")
        logging.getLogger("pytensor.tensor.blas").warning("Using NumPy C-API based implementation for BLAS functions.")
        logging.getLogger("pymc").error("a real error still shows")
    assert [r.getMessage() for r in caplog.records] == ["a real error still shows"]
    assert logging.getLogger("pymc").level == before

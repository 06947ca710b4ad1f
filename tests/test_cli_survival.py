"""The pm-private command line for exit tables: release survival against a ledger (dry run,
refusals before any spend) and fit of its release file."""

import numpy as np
import pandas as pd
import pytest

from pm_private import PrivacyAccountant
from pm_private.cli import main
from pm_private.release_file import read_release_file
from pm_private.survival import SurvivalStatsRelease
from pm_private.survival.exits.release import SURVIVAL_MECHANISM


@pytest.fixture
def data(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(0)
    arm = rng.choice(["control", "treated"], 500)
    T = rng.exponential(np.where(arm == "treated", 3.0, 2.0))
    C = rng.uniform(0, 6, 500)
    pd.DataFrame({"t": np.minimum(T, C), "e": (T <= C).astype(int), "arm": arm}).to_csv("trial.csv", index=False)
    return tmp_path


RELEASE = ["release", "survival", "trial.csv", "--time", "t", "--event", "e", "--cell", "arm"]
RELEASE += ["--cells", "control,treated", "--edges", "1,2,3,4", "--ledger", "l.db", "--epsilon", "1"]


def _usage_error(argv, capsys, message):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    assert message in capsys.readouterr().err


def test_release_writes_the_table_and_charges_the_ledger(data, capsys):
    argv = [*RELEASE, "--delta", "1e-6", "--total-epsilon", "2", "--total-delta", "1e-4", "--out", "r.json"]
    assert main(argv) == 0
    (entry,) = read_release_file("r.json")
    release = entry["release"]
    assert isinstance(release, SurvivalStatsRelease) and release.n == 500 and release.cells == ("control", "treated")
    assert release.table().shape == (2, 9) and release.noise == "gaussian"
    (ledger_entry,) = PrivacyAccountant.open("l.db").history
    assert ledger_entry.mechanism == SURVIVAL_MECHANISM and ledger_entry.noise[0].kind == "gaussian"
    assert "released survival" in capsys.readouterr().out


def test_dry_run_and_refusals_spend_nothing(data, capsys):
    PrivacyAccountant.open("l.db", epsilon=5.0, delta=1e-4)
    assert main([*RELEASE, "--delta", "1e-6", "--out", "r.json", "--dry-run"]) == 0
    assert "noise s.d." in capsys.readouterr().out
    _usage_error([*RELEASE, "--out", "r.json"], capsys, "delta")  # Gaussian needs δ
    _usage_error([*RELEASE, "--delta", "1e-6", "--noise", "laplace", "--out", "r.json"], capsys, "--delta")
    _usage_error([*RELEASE[:8], *RELEASE[10:], "--delta", "1e-6", "--out", "r.json"], capsys, "--cells")
    bad = [*RELEASE[:11], "2,1", *RELEASE[12:], "--delta", "1e-6", "--out", "r.json"]
    _usage_error(bad, capsys, "edges")
    assert not PrivacyAccountant.open("l.db").history
    assert not (data / "r.json").exists()


@pytest.mark.slow
def test_fit_of_a_laplace_release_writes_the_posterior(data, capsys):
    argv = [*RELEASE, "--noise", "laplace", "--total-epsilon", "2", "--out", "r.json"]
    assert main(argv) == 0
    assert main(["fit", "r.json", "--draws", "200", "--tune", "200", "--no-progress", "--backend", "c"]) == 0
    out = capsys.readouterr().out
    assert "beta[treated]" in out and "hazard ratios are exp(beta)" in out
    assert (data / "r.posterior.nc").exists()


@pytest.mark.slow
def test_survival_regression_release_and_fit_with_public_standardisation(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(1)
    X = rng.normal(size=(1500, 2))
    T, C = rng.exponential(np.exp(-X @ [0.5, -0.3])), rng.exponential(3.0, 1500)
    frame = pd.DataFrame({"age": 60 + 10 * X[:, 0], "dose": 2 + X[:, 1], "t": np.minimum(T, C), "e": (T <= C) * 1})
    frame.to_csv("d.csv", index=False)
    public = pd.DataFrame({"age": 60 + 10 * rng.normal(size=40), "dose": 2 + rng.normal(size=40)})
    public.to_csv("public.csv", index=False)
    pd.concat([public, frame[["age", "dose"]].iloc[:2]]).to_csv("leak.csv", index=False)
    argv = ["release", "survival-regression", "d.csv", "--time", "t", "--event", "e", "--features", "age", "dose"]
    argv += ["--edges", "0.2,0.5,1,2", "--x-bound", "4", "--epsilon", "1", "--delta", "1e-6", "--ledger", "l.db"]
    argv += ["--total-epsilon", "2.5", "--total-delta", "1e-5"]
    # rows of DATA among the public ones: refused once the release has spent, naming no count
    assert main([*argv, "--out", "leak.json", "--standardize-from", "leak.csv"]) == 1
    err = capsys.readouterr().err
    assert "public rows include rows of the private X" in err and "2" not in err.split("refused:")[1]
    assert PrivacyAccountant.open("l.db").spent.epsilon == 1.0 and not (tmp_path / "leak.json").exists()
    assert main([*argv, "--out", "r.json", "--standardize-from", "public.csv"]) == 0
    (entry,) = read_release_file("r.json")
    assert entry["release"].preprocessing.x_public.shape == (40, 2) and entry["features"] == ["age", "dose"]
    assert PrivacyAccountant.open("l.db").spent.epsilon == pytest.approx(1.0 + entry["release"].epsilon)
    assert main(["fit", "r.json", "--draws", "150", "--tune", "150", "--chains", "1", "--no-progress"]) == 0
    summary = pd.read_csv("r.summary.csv", index_col=0)
    assert {"beta[age]", "beta[dose]"} <= set(summary.index) and "exp(coef)" in summary.columns  # hazard ratios


def test_survival_regression_release_under_add_remove(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(2)
    X = rng.normal(size=(300, 2))
    frame = pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "t": rng.exponential(1.0, 300), "e": rng.integers(0, 2, 300)})
    frame.to_csv("d.csv", index=False)
    argv = ["release", "survival-regression", "d.csv", "--time", "t", "--event", "e", "--features", "a", "b"]
    argv += ["--edges", "0.5,1,2", "--x-bound", "3", "--epsilon", "1", "--delta", "1e-6", "--ledger", "l.db"]
    argv += ["--total-epsilon", "3", "--total-delta", "1e-5", "--out", "r.json", "--raw-covariates"]
    argv += ["--relation", "add-remove"]
    assert main([*argv, "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "add-remove neighbours" in out and "ℓ2 sensitivity 2;" in out and not (tmp_path / "l.db").exists()
    assert main(argv) == 0
    (entry,) = read_release_file("r.json")
    assert entry["release"].n is None and entry["release"].sensitivity == 2.0
    (spent,) = PrivacyAccountant.open("l.db").history
    assert spent.neighbours == "add-remove as replace-one" and "n=" not in spent.label


def test_a_unit_column_makes_each_persons_intervals_one_record(tmp_path, monkeypatch, capsys):
    from lifelines.datasets import load_stanford_heart_transplants

    monkeypatch.chdir(tmp_path)
    load_stanford_heart_transplants().to_csv("heart.csv", index=False)
    argv = ["release", "survival", "heart.csv", "--time", "stop", "--event", "event", "--unit-column", "id"]
    argv += ["--edges", "50,200,500,1000,2000", "--epsilon", "1", "--delta", "1e-6", "--out", "r.json"]
    assert main([*argv, "--ledger", "l.db", "--total-epsilon", "2", "--total-delta", "1e-5"]) == 0
    (entry,) = read_release_file("r.json")
    assert entry["release"].n == 103 and entry["release"].unit == "person"
    assert entry["preprocessing"]["rows"].startswith("each person's intervals (column 'id') made one record")
    assert PrivacyAccountant.open("l.db").history[0].neighbours == "replace-one person"


def test_weibull_with_a_unit_column_releases_one_record_per_person(tmp_path, monkeypatch):
    from lifelines.datasets import load_stanford_heart_transplants

    monkeypatch.chdir(tmp_path)
    load_stanford_heart_transplants().to_csv("heart.csv", index=False)
    argv = ["release", "weibull", "heart.csv", "--time", "stop", "--event", "event", "--unit-column", "id"]
    argv += ["--horizon", "2000", "--K", "50", "--epsilon", "1", "--ledger", "l.db", "--total-epsilon", "3"]
    assert main([*argv, "--out", "r.json"]) == 0
    assert main([*argv, "--relation", "add-remove", "--out", "a.json"]) == 0
    (replaced,), (removed,) = read_release_file("r.json"), read_release_file("a.json")
    assert replaced["release"].n == 103 and replaced["release"].unit == "person"
    assert removed["release"].n is None and removed["release"].unit == "person"
    assert replaced["preprocessing"]["rows"].startswith("each person's intervals (column 'id') made one record")
    history = PrivacyAccountant.open("l.db").history
    assert [e.neighbours for e in history] == ["replace-one person", "add-remove person as replace-one person"]


def test_an_add_remove_release_keeps_n_private_and_fits_with_n_latent(tmp_path, monkeypatch, capsys):
    from lifelines.datasets import load_stanford_heart_transplants

    monkeypatch.chdir(tmp_path)
    load_stanford_heart_transplants().to_csv("heart.csv", index=False)
    argv = ["release", "survival", "heart.csv", "--time", "stop", "--event", "event", "--unit-column", "id"]
    argv += ["--edges", "50,200,500,1000,2000", "--epsilon", "1", "--delta", "1e-6", "--relation", "add-remove"]
    argv += ["--ledger", "l.db", "--total-epsilon", "3", "--total-delta", "1e-5"]
    cells = ["--cell", "surgery", "--cells", "0,1"]
    with pytest.raises(SystemExit):  # argparse names the choices; nothing is spent
        main([*argv, *cells, "--out", "r.json", "--relation", "swap"])
    assert "--relation" in capsys.readouterr().err and not (tmp_path / "l.db").exists()
    assert main([*argv, *cells, "--out", "r.json"]) == 0
    (entry,) = read_release_file("r.json")
    assert entry["release"].n is None and entry["release"].neighbours == "add-remove"
    (spent,) = PrivacyAccountant.open("l.db").history
    assert spent.neighbours == "add-remove person as replace-one person" and "n=" not in spent.label
    assert main(["fit", "r.json", "--draws", "150", "--tune", "150", "--chains", "1", "--no-progress"]) == 0
    assert "n = private (add/remove neighbours)" in capsys.readouterr().out
    assert "beta[1]" in pd.read_csv("r.summary.csv", index_col=0).index
    # one cell: no coefficients, and the fit says so instead of failing after sampling
    assert main([*argv, "--out", "one.json"]) == 0
    assert main(["fit", "one.json", "--draws", "100", "--tune", "100", "--chains", "1", "--no-progress"]) == 0
    assert "no coefficients to summarise" in capsys.readouterr().out and not (tmp_path / "one.summary.csv").exists()

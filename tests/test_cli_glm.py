"""The pm-private command line for GLM statistics: release logistic-stats and poisson-stats against a
ledger (public preprocessing, dry run, refusals before any spend) and fit of their release files."""

import json

import numpy as np
import pandas as pd
import pytest

from pm_private import PrivacyAccountant
from pm_private.cli import main
from pm_private.logistic.release import LogisticStatsRelease
from pm_private.poisson.release import POISSON_MECHANISM, PoissonStatsRelease
from pm_private.release_file import read_release_file


@pytest.fixture
def data(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(440, 2)) * [2.0, 0.5] + [1.0, -3.0]
    counts = rng.poisson(np.exp(0.3 * (X[:, 0] - 1.0) / 2.0 + 0.5))
    labels = (rng.uniform(size=440) < 0.5).astype(int)
    frame = pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "count": counts, "label": labels})
    frame.iloc[:400].to_csv("d.csv", index=False)
    frame.iloc[400:].to_csv("public.csv", index=False)  # public rows: not rows of the private data
    return tmp_path


POISSON = ["release", "poisson-stats", "d.csv", "--target", "count", "--features", "a", "b"]
POISSON += ["--x-bound", "3", "--y-bound", "10", "--delta", "1e-6"]
LOGISTIC = ["release", "logistic-stats", "d.csv", "--target", "label", "--features", "a", "b"]
LOGISTIC += ["--x-bound", "3", "--delta", "1e-6"]
RAW = ["--raw-covariates"]  # the features as DATA holds them, uncentred (refused without it)


def _usage_error(argv, capsys, message):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    assert message in capsys.readouterr().err


def test_poisson_release_with_public_preprocessing_and_a_note(data, capsys):
    argv = [*POISSON, "--ledger", "l.db", "--total-epsilon", "2", "--total-delta", "1e-4", "--epsilon", "1"]
    assert main([*argv, "--out", "r.json", "--standardize-from", "public.csv", "--note", "for the study"]) == 0
    (entry,) = read_release_file("r.json")
    release = entry["release"]
    assert isinstance(release, PoissonStatsRelease) and release.n == 400 and release.y_bound == 10
    assert entry["features"] == ["a", "b"] and entry["target"] == "count"
    public = pd.read_csv("public.csv")[["a", "b"]]
    assert np.allclose(entry["preprocessing"]["x_center"], public.mean())
    assert np.allclose(entry["preprocessing"]["x_scale"], public.std(ddof=0))
    (ledger_entry,) = PrivacyAccountant.open("l.db").history
    assert ledger_entry.mechanism == POISSON_MECHANISM and ledger_entry.note == "for the study"
    assert ledger_entry.noise and ledger_entry.noise[0].kind == "gaussian"
    assert "released poisson-stats" in capsys.readouterr().out


def test_binary_columns_are_declared_in_the_release_file_and_name_the_law(data, capsys):
    from pm_private.cli.common import print_glm_report

    frame = pd.read_csv("d.csv").assign(b=lambda f: (f["b"] > -3.0).astype(int))
    frame.to_csv("d.csv", index=False)
    pd.read_csv("public.csv").assign(b=lambda f: (f["b"] > -3.0).astype(int)).to_csv("public.csv", index=False)
    argv = [*LOGISTIC, "--ledger", "l.db", "--total-epsilon", "2", "--total-delta", "1e-4", "--epsilon", "1"]
    _usage_error([*argv, "--out", "r.json", "--binary-columns", "c"], capsys, "--binary-columns 'c' are not features")
    assert not (data / "l.db").exists()
    assert main([*argv, "--out", "r.json", "--standardize-from", "public.csv", "--binary-columns", "b"]) == 0
    (entry,) = read_release_file("r.json")
    assert entry["release"].preprocessing.x_kinds == ("continuous", "binary")
    capsys.readouterr()
    print_glm_report(entry["release"])
    assert "declared kinds (1 binary columns)" in capsys.readouterr().out


def test_logistic_release_and_refusals_before_any_spend(data, capsys):
    PrivacyAccountant.open("l.db", epsilon=5.0, delta=1e-4)
    base = ["--ledger", "l.db", "--epsilon", "1", "--out", "r.json"]
    _usage_error([*LOGISTIC[:4], "count", *LOGISTIC[5:], *base, *RAW], capsys, "binary labels")
    _usage_error([*POISSON[:4], "a", "--features", "b", *POISSON[8:], *base, *RAW], capsys, "counts")
    _usage_error([*POISSON[:-4], "--y-bound", "1001", "--delta", "1e-6", *base], capsys, "--y-bound")
    _usage_error([*LOGISTIC, *base[:-2], "--out", "r.json", "--epsilon", "800"], capsys, "epsilon")
    _usage_error([*LOGISTIC, *base, "--x-center", "1", "2", "3"], capsys, "--x-center")
    assert PrivacyAccountant.open("l.db").history == () and not (data / "r.json").exists()
    assert main([*LOGISTIC, *base, "--x-center", "1", "-3", "--x-scale", "2", "0.5"]) == 0
    (entry,) = read_release_file("r.json")
    assert isinstance(entry["release"], LogisticStatsRelease)
    assert entry["preprocessing"]["x_center"] == [1.0, -3.0] and entry["preprocessing"]["x_scale"] == [2.0, 0.5]


@pytest.mark.parametrize(
    ("option", "values"),
    [("--y-bound", ["0", "-1", "2.5", "x"]), ("--x-bound", ["0", "-1", "nan", "inf"]), ("--delta", ["0", "1", "x"])],
)
def test_invalid_options_exit_2_naming_them(data, capsys, option, values):
    PrivacyAccountant.open("l.db", epsilon=1.0, delta=1e-4)
    for value in values:
        argv = [*POISSON, "--ledger", "l.db", "--epsilon", "0.5", "--out", "r.json", option, value]
        _usage_error(argv, capsys, option)
    assert PrivacyAccountant.open("l.db").history == ()


def test_a_new_ledger_too_small_for_the_release_is_not_created(data, capsys):
    """Its totals are fixed at creation: a ledger created with δ = 0 could never hold this release."""
    argv = [*LOGISTIC, *RAW, "--ledger", "new.db", "--total-epsilon", "5", "--epsilon", "1", "--out", "r.json"]
    _usage_error(argv, capsys, "nothing was created")
    _usage_error(
        [*argv[:-2], "--out", "r.json", "--total-delta", "1e-5", "--epsilon", "6"], capsys, "nothing was created"
    )
    assert not (data / "new.db").exists() and not (data / "r.json").exists()
    assert main([*argv, "--total-delta", "1e-5"]) == 0  # the corrected command creates it
    assert PrivacyAccountant.open("new.db").spent == pytest.approx((1.0, 1e-6))


def test_a_subnormal_delta_is_refused_while_parsing(data, capsys):
    argv = [*LOGISTIC, "--ledger", "new.db", "--total-epsilon", "5", "--total-delta", "1e-5", "--out", "r.json"]
    _usage_error([*argv, "--epsilon", "1", "--delta", "1e-320"], capsys, "--delta")
    assert not (data / "new.db").exists()


def test_dry_run_reads_no_row_and_touches_no_ledger(data, capsys):
    (data / "broken.csv").write_text("a,b,count\nnot,a,number\n")
    argv = [*POISSON, *RAW, "--ledger", "new.db", "--total-epsilon", "1", "--epsilon", "1", "--out", "r.json"]
    argv[2] = "broken.csv"
    assert main([*argv, "--dry-run"]) == 0
    shown = capsys.readouterr().out
    assert "ℓ2 sensitivity 26.8328" in shown and "counts clipped to 10" in shown
    assert not (data / "new.db").exists() and not (data / "r.json").exists()


def test_fit_names_the_glm_releases_when_a_file_has_none(data, capsys):
    weibull = ["release", "weibull", "d.csv", "--time", "a", "--event", "label", "--horizon", "10"]
    pd.DataFrame({"a": np.linspace(0.1, 9, 50), "label": np.arange(50) % 2}).to_csv("d.csv", index=False)
    main([*weibull, "--ledger", "l.db", "--total-epsilon", "1", "--epsilon", "0.5", "--out", "w.json"])
    _usage_error(["fit", "w.json"], capsys, "'pm-private release logistic-stats'")


@pytest.mark.slow
def test_fit_of_a_poisson_release_writes_the_posterior_with_its_preprocessing(data, capsys):
    import xarray as xr

    argv = [*POISSON, "--ledger", "l.db", "--total-epsilon", "500", "--total-delta", "1e-4", "--epsilon", "500"]
    main([*argv, "--out", "r.json", "--standardize-from", "public.csv"])
    fit = ["fit", "r.json", "--draws", "30", "--tune", "30", "--chains", "1", "--backend", "c", "--no-progress"]
    assert main(fit) == 0
    posterior = xr.open_datatree(data / "r.posterior.nc", engine="h5netcdf")
    assert posterior["posterior"]["beta"].shape == (1, 30, 2)
    assert posterior.attrs["release_kind"] == "poisson_stats" and "Poisson" in posterior.attrs["model"]
    assert len(json.loads(posterior.attrs["x_center"])) == 2
    assert "intercept" in pd.read_csv(data / "r.summary.csv", index_col=0).index
    shown = capsys.readouterr().out  # the release's public noise figures beside the summary
    assert "noise of the release: s.d." in shown and "law from the released moments and the declared kinds" in shown


@pytest.mark.parametrize("kind", ["poisson", "logistic"])
def test_the_private_file_is_refused_as_public_preprocessing(data, capsys, kind):
    """Audit: --standardize-from DATA wrote DATA's exact column means and sds into the release file."""
    import os

    argv = [*(POISSON if kind == "poisson" else LOGISTIC)]
    argv += ["--ledger", "l.db", "--total-epsilon", "2", "--total-delta", "1e-4", "--epsilon", "1", "--out", "r.json"]
    (data / "copy.csv").write_bytes((data / "d.csv").read_bytes())  # the same bytes under another name
    os.link("d.csv", "hard.csv")
    os.symlink(data / "d.csv", "soft.csv")
    for source in ("d.csv", "./d.csv", str(data / "d.csv"), "hard.csv", "soft.csv", "copy.csv"):
        for dry in ([], ["--dry-run"]):  # the dry run refuses it too, reading no row
            _usage_error([*argv, "--standardize-from", source, *dry], capsys, "is the private DATA file")
    # a public file that shares rows with DATA: refused once the release has spent, naming no count and no row
    frame = pd.read_csv("d.csv")
    pd.concat([pd.read_csv("public.csv"), frame.iloc[[5, 17, 300]]]).to_csv("mixed.csv", index=False)
    assert main([*argv, "--standardize-from", "mixed.csv"]) == 1
    err = capsys.readouterr().err
    assert "public rows include rows of the private X" in err and "3" not in err.split("refused:")[1]
    assert repr(float(frame["a"].iloc[5]))[:8] not in err  # no row is printed
    assert PrivacyAccountant.open("l.db").spent.epsilon == 1.0 and not (data / "r.json").exists()
    frame.to_csv("rewritten.csv", index=False, float_format="%.17g")  # other bytes, the same rows
    assert main([*argv, "--standardize-from", "rewritten.csv"]) == 1
    assert capsys.readouterr().err.split("refused:")[1] == err.split("refused:")[1]  # 400 rows read as 3 did
    assert main([*argv, "--standardize-from", "public.csv"]) == 1  # the budget of 2 is spent


def test_a_unit_column_makes_the_person_the_unit(data, capsys):
    """--unit-column keeps one row per person: n persons in the release, the file's rows entry and
    the ledger say so; the column is no feature, and a public file holding it is refused."""
    frame = pd.read_csv("d.csv")
    frame.insert(0, "person", np.arange(len(frame)) // 4)
    frame.to_csv("persons.csv", index=False)
    argv = ["release", "logistic-stats", "persons.csv", "--target", "label", "--x-bound", "3", "--delta", "1e-6"]
    argv += ["--ledger", "l.db", "--total-epsilon", "2", "--total-delta", "1e-4", "--epsilon", "1"]
    public = pd.read_csv("public.csv")
    public.assign(person=range(len(public))).to_csv("public_persons.csv", index=False)
    _usage_error([*argv, "--out", "x.json", "--unit-column", "person", "--standardize-from", "public_persons.csv"],
                 capsys, "has the person column 'person'")  # fmt: skip
    assert main([*argv, "--out", "r.json", "--unit-column", "person", "--standardize-from", "public.csv"]) == 0
    (entry,) = read_release_file("r.json")
    assert entry["release"].n == 100 and entry["release"].unit == "person"
    assert entry["features"] == ["a", "b", "count"]  # every other column but the person's
    assert entry["preprocessing"]["rows"].startswith("one row per person of column 'person'")
    (ledger_entry,) = PrivacyAccountant.open("l.db").history
    assert ledger_entry.neighbours == "replace-one person"
    capsys.readouterr()
    assert main(["ledger", "l.db"]) == 0
    assert "replace-one person" in capsys.readouterr().out


def test_a_missing_person_identifier_is_refused_before_any_spend(data, capsys):
    frame = pd.read_csv("d.csv")
    frame.insert(0, "person", np.where(np.arange(len(frame)) == 7, np.nan, np.arange(len(frame)) // 2))
    frame.to_csv("persons.csv", index=False)
    argv = ["release", "poisson-stats", "persons.csv", "--target", "count", "--features", "a", "b"]
    argv += ["--x-bound", "3", "--y-bound", "10", "--delta", "1e-6", "--unit-column", "person", *RAW]
    argv += ["--ledger", "l.db", "--total-epsilon", "2", "--total-delta", "1e-4", "--epsilon", "1", "--out", "r.json"]
    _usage_error(argv, capsys, "unit holds a missing identifier")
    assert PrivacyAccountant.open("l.db").history == ()


@pytest.mark.parametrize("mechanism", [["--mechanism", "laplace"], ["--noise", "gaussian", "--delta", "1e-6"]])
def test_a_unit_column_in_a_linear_release(data, capsys, mechanism):
    frame = pd.read_csv("d.csv")
    frame.insert(0, "person", np.arange(len(frame)) // 5)
    frame.to_csv("persons.csv", index=False)
    argv = ["release", "linear-stats", "persons.csv", "--target", "b", "--features", "a", "count", *mechanism]
    argv += ["--x-bound", "3", "--y-bound", "4", "--unit-column", "person", *RAW, "--out", "r.json"]
    assert main([*argv, "--ledger", "l.db", "--total-epsilon", "2", "--total-delta", "1e-4", "--epsilon", "1"]) == 0
    (entry,) = read_release_file("r.json")
    assert entry["release"].n == 80 and entry["release"].releases[0].unit == "person"
    assert PrivacyAccountant.open("l.db").history[0].neighbours == "replace-one person"


def test_the_ledger_states_the_epsilon_of_a_person_with_several_rows(data, capsys):
    argv = [*LOGISTIC, *RAW, "--ledger", "l.db", "--total-epsilon", "4", "--total-delta", "1e-5", "--epsilon", "1"]
    assert main([*argv, "--out", "r.json"]) == 0
    capsys.readouterr()
    assert main(["ledger", "l.db", "--rows-per-person", "3"]) == 0
    expected = PrivacyAccountant.open("l.db").person_epsilon(3)
    assert f"person  ε {expected:.6g} at δ 1e-05 for a person with at most 3 rows" in capsys.readouterr().out
    assert expected > PrivacyAccountant.open("l.db").tight_epsilon()


def test_poisson_count_bound_from_the_public_file_when_omitted(data, capsys):
    """Without --y-bound the count bound is count_bound of the public file's target column, chosen
    before anything private is read; without a public file it is refused by name, before any spend."""
    from pm_private.poisson import count_bound

    argv = [a for a in POISSON if a not in ("--y-bound", "10")]
    argv += ["--ledger", "l.db", "--total-epsilon", "2", "--total-delta", "1e-4", "--epsilon", "1", "--out", "r.json"]
    _usage_error([*argv, *RAW], capsys, "--y-bound: give it, or --standardize-from")
    assert not (data / "l.db").exists() and not (data / "r.json").exists()
    expected = count_bound(pd.read_csv("public.csv")["count"])
    assert main([*argv, "--standardize-from", "public.csv", "--dry-run"]) == 0
    assert f"count bound {expected}: the smallest" in capsys.readouterr().out
    assert main([*argv, "--standardize-from", "public.csv"]) == 0
    assert read_release_file("r.json")[0]["release"].y_bound == expected
    pd.read_csv("public.csv").drop(columns="count").to_csv("nocounts.csv", index=False)
    argv[argv.index("r.json")] = "r2.json"
    _usage_error([*argv, "--standardize-from", "nocounts.csv"], capsys, "has no column 'count'")

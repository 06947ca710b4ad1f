"""``pm-private demo``: its plan from the command line (parts, settings, usage errors before any
work), and ``--quick`` end to end into a fresh folder: the files, the ledger's spend, the release
files and one headline per part, with no library notice about a sampler the demo does not use."""

import argparse
import json

import pytest

from pm_private.cli import main
from pm_private.demo import tour
from pm_private.demo.drug_sensitivity import FULL


def _plan(argv, tmp_path):
    parser = tour.build_parser()
    return tour.check_args(parser.parse_args([*argv, "--out", str(tmp_path)]), parser)


def test_parts_and_settings_follow_the_flags(tmp_path):
    plan = _plan(["survival"], tmp_path)
    assert plan.parts == ("survival",) and plan.gdsc is None
    assert _plan(["fit"], tmp_path).parts == ("release", "fit")  # the fit needs the release
    assert _plan([], tmp_path).parts == tour.PARTS
    quick = _plan(["--quick", "drug-sensitivity"], tmp_path)
    assert quick.sampling == tour.QUICK_SAMPLING and quick.study.drugs == tour.QUICK_STUDY["drugs"]
    full = _plan(["--full", "drug-sensitivity", "--repeats", "2"], tmp_path)
    assert full.study.sizes == FULL["sizes"] and full.study.calibration_reps == FULL["calibration_reps"]
    assert full.study.repeats == 2  # a flag given wins over the settings


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["plots"], "unknown part 'plots'"),
        (["--quick", "--full"], "--quick and --full exclude each other"),
        (["--genes", "1000"], "the data have 64 genes"),
    ],
)
def test_usage_errors_exit_2_before_any_work(argv, message, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["demo", *argv, "--out", str(tmp_path / "out")])
    assert exit_.value.code == 2 and message in capsys.readouterr().err
    assert not (tmp_path / "out" / tour.LEDGER).exists()


def test_the_study_flags_stay_unset_until_the_plan_chooses():
    args = tour.build_parser().parse_args([])
    assert isinstance(args, argparse.Namespace) and args.drugs is None and args.sizes is None


@pytest.mark.slow
def test_quick_demo_writes_its_files_and_a_headline_per_part(tmp_path, capsys):
    from pm_private import PrivacyAccountant
    from pm_private.release_file import read_release_file

    out = tmp_path / "results"
    assert main(["demo", "--quick", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    headlines = [line for line in text.splitlines() if line.startswith("  ⇒ ")]
    assert len(headlines) == 2 * 4  # each part's, and again in the closing summary
    assert "diabetes statistics released" in headlines[0] and "held-out R²" in headlines[1]
    assert "hazard ratio of age 70+" in headlines[2] and "drug sensitivity, Spearman" in headlines[3]
    for part in range(1, 5):
        assert f"[{part}/4] " in text
    names = {
        "demo.ledger",
        "diabetes.release.json",
        "diabetes_heldout.png",
        "flchain.release.json",
        "flchain_survival.png",
        "drug_sensitivity.png",
        "drug_sensitivity_results.csv",
    }
    assert names <= {path.name for path in out.iterdir()}
    listed = text.split("Files written:", 1)[1]
    assert all(name in listed for name in names)
    assert "nutpie" not in text and "the first fit of this" not in text  # no notice of an unused sampler
    ledger = PrivacyAccountant.open(out / "demo.ledger")
    assert ledger.spent == (3.0, 2e-6)  # both releases, the whole ε of the ledger
    for name, kind in (("diabetes.release.json", "linear_stats"), ("flchain.release.json", "survival_stats")):
        (entry,) = read_release_file(out / name)
        assert entry["kind"] == kind and entry["private"]  # secure noise: real releases
    assert json.loads((out / "diabetes.release.json").read_text())["releases"][0]["features"][0] == "age"
    assert "Done in" in text.splitlines()[-1]

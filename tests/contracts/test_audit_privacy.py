"""The privacy audit (benchmarks/audit_privacy.py): its Clopper–Pearson threshold test detects a
mis-calibrated mechanism, and a short audit of the sufficient-statistics release stays below ε."""

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "audit_privacy.py"
_spec = importlib.util.spec_from_file_location("audit_privacy", _PATH)
audit = importlib.util.module_from_spec(_spec)
sys.modules["audit_privacy"] = audit
_spec.loader.exec_module(audit)


def test_threshold_test_is_sound_and_has_power():
    """Laplace(0, b) against Laplace(1, b) is exactly (1/b)-DP: the bound is ≤ 1/b and close to it."""
    rng = np.random.default_rng(0)
    n = 20_000
    for b, low in ((1.0, 0.6), (0.25, 3.0)):
        s0, s1 = rng.laplace(0.0, b, n), rng.laplace(1.0, b, n)
        bound = audit.epsilon_lower_bound(s0, s1)
        assert low < bound <= 1.0 / b
    # a mechanism claiming ε = 1 that is really 4-DP fails the audit
    assert audit.epsilon_lower_bound(rng.laplace(0, 0.25, n), rng.laplace(1, 0.25, n)) > 1.0
    # with δ the same draws give a smaller bound
    s0, s1 = rng.laplace(0.0, 1.0, n), rng.laplace(1.0, 1.0, n)
    assert audit.epsilon_lower_bound(s0, s1, delta=0.05) < audit.epsilon_lower_bound(s0, s1)


def test_short_audit_of_the_suff_stat_release():
    (row,), seconds = audit.run(["linear_stats"], draws=10_000)
    mechanism, bound = row
    assert mechanism.epsilon == 1.0 and mechanism.pair_epsilon == pytest.approx(0.825)
    assert 0.15 < bound <= mechanism.pair_epsilon


def test_main_rejects_bad_arguments():
    with pytest.raises(SystemExit):
        audit.main(["--draws", "5"])


def test_short_audit_of_a_person_level_exit_table():
    """A person's whole history changed (one interval against three): the bound stays below the
    claimed ε, which the pair attains."""
    (row,), seconds = audit.run(["person_exit_table"], draws=4_000)
    mechanism, bound = row
    assert mechanism.epsilon == 1.0 and mechanism.pair_epsilon == pytest.approx(1.0)
    assert 0.5 < bound <= mechanism.epsilon


def test_short_audits_of_an_add_remove_exit_table_under_both_relations():
    """Removed person: below the release's ε; replaced person: below the replace-one ε the ledger
    charges for it (twice ε for Laplace noise), and above the release's own ε (so the conversion
    is needed)."""
    names = ["add_remove_laplace_removed", "add_remove_laplace_replaced", "add_remove_gaussian_replaced"]
    (removed, replaced, gaussian), seconds = audit.run(names, draws=4_000)
    assert removed[0].epsilon == 1.0 and removed[0].pair_epsilon == pytest.approx(1.0)
    assert 0.5 < removed[1] <= removed[0].epsilon
    assert replaced[0].epsilon == pytest.approx(2.0) and 1.0 < replaced[1] <= replaced[0].epsilon
    assert gaussian[0].pair_epsilon <= gaussian[0].epsilon and gaussian[1] <= gaussian[0].epsilon


def test_short_audits_of_add_remove_logistic_statistics_under_both_relations():
    """Removed record on the sphere: its pair's loss is the release's ε, the bound below it; replaced
    record: the replace-one ε the ledger charges, above the release's own, the bound below it."""
    (removed, replaced), seconds = audit.run(
        ["add_remove_logistic_removed", "add_remove_logistic_replaced"], draws=4_000
    )
    assert removed[0].pair_epsilon == pytest.approx(removed[0].epsilon) and 0.3 < removed[1] <= removed[0].epsilon
    assert replaced[0].epsilon > removed[0].epsilon and 0.5 < replaced[1] <= replaced[0].epsilon


def test_short_audits_of_add_remove_linear_statistics_under_both_relations():
    """Removed record on the bounds: the pair's loss is (almost: the clipping counts do not move) the
    release's ε, the bound below it; replaced by an orthogonal record: the replace-one ε the ledger
    charges, above the release's own, the bound below it."""
    names = [
        "add_remove_linear_laplace_removed",
        "add_remove_linear_gaussian_removed",
        "add_remove_linear_gaussian_replaced",
    ]
    (laplace, removed, replaced), seconds = audit.run(names, draws=4_000)
    for mechanism, bound in (laplace, removed, replaced):
        assert (
            0.9 * mechanism.epsilon < mechanism.pair_epsilon <= mechanism.epsilon and 0.3 < bound <= mechanism.epsilon
        )
    assert replaced[0].epsilon > removed[0].epsilon and replaced[1] > removed[0].epsilon / 3


def test_short_audit_of_a_dp_sgld_chain_with_a_canary():
    """The whole published chain: the canary's bound stays below the run's planned ε."""
    (row,), seconds = audit.run(["dp_sgld"], draws=1_500)
    mechanism, bound = row
    assert mechanism.epsilon <= 2.0 and 0.2 < bound <= mechanism.epsilon


def test_short_audits_of_a_person_of_two_rows_in_a_release_of_up_to_two_rows_each():
    """Removed: the pair's loss is the release's ε (its noise covers two rows), the bound below it.
    Replaced by a person of one row: the ledger's converted replace-one ε bounds the pair's loss and
    the lower bound."""
    (removed, replaced), seconds = audit.run(
        ["add_remove_logistic_person_of_2_rows", "add_remove_logistic_person_of_2_rows_replaced"], draws=4_000
    )
    assert removed[0].pair_epsilon == pytest.approx(removed[0].epsilon) and 0.3 < removed[1] <= removed[0].epsilon
    assert replaced[0].pair_epsilon <= replaced[0].epsilon and 0.5 < replaced[1] <= replaced[0].epsilon

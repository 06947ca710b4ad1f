"""The dimension-curve study's arguments, summary and table (the study itself is minutes long)."""

import numpy as np
import pandas as pd
import pytest

from models.linear_dimension_curve import METHODS, parse_args, summarise, table


def _results():
    rows = []
    for genes, base in ((5, 0.4), (64, 0.2)):
        for drug, repeat in ((0, 0), (0, 1), (1, 0)):
            jitter = 0.01 * (drug + repeat)
            rows.append(("non-private LR", 800, np.nan, drug, repeat, 0.6 + jitter, 0.3, genes))
            for eps in (1.0, 2.0):
                for method, offset in zip(METHODS[:3], (0.0, -0.1, -0.05), strict=True):
                    rows.append((method, 800, eps, drug, repeat, base * eps + offset + jitter, offset, genes))
    return pd.DataFrame(rows, columns=["method", "n_private", "epsilon", "drug", "repeat", "spearman", "r2", "genes"])


def test_summary_has_mean_and_standard_error_per_method_epsilon_and_genes():
    summary = summarise(_results())
    assert len(summary) == 2 * (1 + 3 * 2)
    row = summary[(summary.method == METHODS[0]) & (summary.epsilon == 2.0) & (summary.genes == 64)].iloc[0]
    assert row.spearman_mean == pytest.approx(np.mean([0.40, 0.41, 0.41]))
    assert row.spearman_sem == pytest.approx(np.std([0.40, 0.41, 0.41], ddof=1) / np.sqrt(3))
    assert row["count"] == 3
    assert np.isinf(summary[summary.method == "non-private LR"].epsilon).all()


def test_table_rows_are_epsilon_by_genes_with_the_ratio_to_adassp():
    lines = table(summarise(_results())).splitlines()
    assert lines[0] == "| ε | genes | " + " | ".join(METHODS) + " | noise-aware / AdaSSP |"
    assert len(lines) == 2 + 2 * 2
    cells = [c.strip() for c in lines[-1].strip("|").split("|")]
    assert cells[:2] == ["2", "64"]
    assert cells[2] == "0.407 ± 0.003 / +0.000 ± 0.000"
    assert cells[-1] == f"{0.4067 / 0.3567:.2f}"
    assert cells[5].startswith("0.607")  # the non-private row appears at every ε


def test_quick_shrinks_the_run_and_arguments_are_checked(tmp_path, capsys):
    quick = parse_args(["--quick", "--out", str(tmp_path)])
    assert (quick.genes, quick.drugs, quick.repeats, quick.advi_steps) == ([5, 10], 1, 2, 1000)
    full = parse_args([])
    assert (full.genes, full.epsilons, full.private, full.repeats) == ([5, 10, 20, 40, 64], [1.0, 2.0], 800, 10)
    for bad in (["--epsilons", "0"], ["--genes", "0"], ["--repeats", "x"]):
        with pytest.raises(SystemExit):
            parse_args(bad)
    assert "must be" in capsys.readouterr().err

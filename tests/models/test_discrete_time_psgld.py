"""The --quick path of models.discrete_time_psgld (Nguyên & Hui 2017a, §6.3) end to end on a small subsample."""

import numpy as np
import pandas as pd
import pytest

from models.discrete_time_psgld import main


@pytest.mark.slow
def test_quick_run_small_subsample(tmp_path, capsys):
    main(["--quick", "--n", "300", "--epsilons", "0.1", "6.4", "--repeats", "2", "--out", str(tmp_path)])
    table = pd.read_csv(tmp_path / "mre_epsilon.csv", index_col="ε")
    assert list(table.columns) == ["pSGLD", "Ext-Out-Pert", "Ext-Obj-Pert"]
    assert list(table.index) == [0.1, 6.4]
    assert np.isfinite(table.to_numpy()).all() and (table.to_numpy() > 0).all()
    # More budget, less error: at ε = 0.1 the sanitized posterior is close to its N(0, 10²) regulariser.
    assert table.loc[6.4, "pSGLD"] < table.loc[0.1, "pSGLD"]
    assert (tmp_path / "mre_epsilon.png").stat().st_size > 0
    diagnostics = pd.read_csv(tmp_path / "psgld_diagnostics.csv", index_col="ε")
    assert list(diagnostics.columns) == ["MRE", "first half", "second half", "R-hat", "ESS"]
    np.testing.assert_allclose(diagnostics["MRE"], table["pSGLD"])
    assert (diagnostics["R-hat"] > 0.9).all() and (diagnostics["ESS"] > 0).all()  # two chains by default
    report = (tmp_path / "report.txt").read_text()
    assert "not private" in report and "approximate (MCMC)" in report
    assert report.strip() in capsys.readouterr().out

"""GWAS simulator (paper 001 §5 stand-in), χ² screen, interaction design and the experiment CLI."""

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats

from models import logistic_elastic_net_gwas as experiment
from pm_private.datasets.gwas import PAPER_ODDS, _haplotypes, chi2_screen, interaction_design, simulate_gwas


def test_simulated_study_shape_values_and_seed():
    data = simulate_gwas(n_snps=200, rng=1)
    assert data.genotypes.shape == (800, 200)
    assert set(np.unique(data.genotypes).tolist()) <= {0, 1, 2}
    assert data.status.sum() == 400 and len(data.status) == 800
    assert np.all(data.maf[list(data.causal)] == 0.25)
    assert np.all((data.maf >= 0.05) & (data.maf <= 0.5))
    again = simulate_gwas(n_snps=200, rng=1)
    np.testing.assert_array_equal(again.genotypes, data.genotypes)
    with pytest.raises(ValueError):
        simulate_gwas(n_snps=2)


def test_haplotypes_have_the_maf_and_linkage_disequilibrium():
    rng = np.random.default_rng(2)
    maf = np.array([0.1, 0.3, 0.45, 0.2, 0.25])
    rho = np.array([0.0, 0.9, 0.9, 0.0, 0.9])
    h = _haplotypes(40_000, maf, rho, rng)
    np.testing.assert_allclose(h.mean(axis=0), maf, atol=0.01)
    r = np.corrcoef(h.T)
    assert r[1, 2] > 0.4 and r[3, 4] > 0.3  # within a block: LD
    assert abs(r[2, 3]) < 0.02 and abs(r[0, 4]) < 0.02  # across a boundary: independent


def test_disease_model_recovers_the_multiplicative_odds():
    """In a population sample, logistic regression of D on X, Y, XY returns log ε₀, log α, log β, log δ."""
    rng = np.random.default_rng(3)
    maf, n = 0.25, 200_000
    x = rng.binomial(2, maf, n)
    y = rng.binomial(2, maf, n)
    base, a, b, d = PAPER_ODDS
    p = 1 / (1 + np.exp(-(np.log(base) + x * np.log(a) + y * np.log(b) + x * y * np.log(d))))
    status = rng.uniform(size=n) < p
    fit = sm.Logit(status.astype(float), sm.add_constant(np.column_stack([x, y, x * y]))).fit(disp=0)
    np.testing.assert_allclose(fit.params, np.log(PAPER_ODDS), atol=4 * fit.bse.max())
    # the case-control study is enriched for the risk genotype XY > 0 among cases
    data = simulate_gwas(n_snps=50, rng=4)
    xy = data.genotypes[:, data.causal[0]] * data.genotypes[:, data.causal[1]]
    assert xy[data.status == 1].mean() > xy[data.status == 0].mean()


def test_chi2_screen_matches_scipy():
    data = simulate_gwas(n_snps=60, rng=5)
    top, statistic = chi2_screen(data.genotypes, data.status, top=5)
    for j in range(0, 60, 7):
        table = np.array(
            [[np.sum((data.genotypes[:, j] == g) & (data.status == s)) for g in (0, 1, 2)] for s in (1, 0)]
        )
        table = table[:, table.sum(axis=0) > 0]
        assert statistic[j] == pytest.approx(stats.chi2_contingency(table, correction=False)[0])
    assert np.all(statistic[top] >= np.sort(statistic)[-5])


def test_interaction_design_scaling_and_terms():
    genotypes = np.array([[2, 1, 0], [2, 2, 2], [0, 0, 1]])
    X, names, terms = interaction_design(genotypes, [0, 2])
    np.testing.assert_allclose(X, [[1.0, 0.0, 0.0], [1.0, 1.0, 1.0], [0.0, 0.5, 0.0]])
    assert names == ["SNP0", "SNP2", "SNP0×SNP2"] and terms == [(0,), (2,), (0, 2)]
    X5, _, terms5 = interaction_design(np.random.default_rng(0).integers(0, 3, (10, 8)), range(5))
    assert X5.shape == (10, 15) and len(terms5) == 15 and X5.min() >= 0 and X5.max() <= 1


def test_outcomes_thresholding():
    terms = [(1,), (2,), (3,), (1, 2), (1, 3)]
    coef = np.array([0.5, -0.2, 0.004, 1.0, 0.0])  # 0.004 < 0.01·max: dropped
    out = experiment.outcomes(coef, terms, (1, 2))
    assert out == {"interaction": 1.0, "main_effects": 1.0, "all_effects": 1.0, "specificity": 1.0}
    out = experiment.outcomes(np.array([0.0, 0.0, 0.5, 0.0, 0.1]), terms, (1, 2))
    assert out == {"interaction": 0.0, "main_effects": 0.0, "all_effects": 0.0, "specificity": 0.0}


def test_cli_quick_selection_writes_tables_and_plots(tmp_path):
    code = experiment.main(["--quick", "--part", "selection", "--sims", "1", "--snps", "60", "--out", str(tmp_path)])
    assert code == 0
    for name in ("gwas_selection.csv", "gwas_selection_private.png", "gwas_selection_non-private.png"):
        assert (tmp_path / name).stat().st_size > 0
    table = pd.read_csv(tmp_path / "gwas_selection.csv")
    assert set(table.method) == {"private", "non-private"}
    assert table[["interaction", "main_effects", "all_effects", "specificity"]].stack().between(0, 1).all()


def test_baseline_comparison_table_and_plot(tmp_path):
    frame = experiment.run_baseline(epsilons=(5.0,), reps=1, snps=60, seed=0)
    assert set(frame.dataset) == {"GWAS simulation", "breast cancer"}
    assert frame.method.nunique() == 4 and frame.accuracy.between(0, 1).all()
    cancer = frame[frame.dataset == "breast cancer"].set_index("method").accuracy
    assert cancer["non-private LR"] > 0.9
    assert experiment.summarise_baseline(frame).shape == (8, 1)
    assert experiment.plot_baseline(frame, tmp_path).stat().st_size > 0


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"odds": (0.0, 0.91, 0.91, 2.73)}, "odds must be four finite numbers > 0"),
        ({"odds": (-1.0, 0.91, 0.91, 2.73)}, "odds must be four finite numbers > 0"),
        ({"odds": (np.nan, 0.91, 0.91, 2.73)}, "odds must be four finite numbers > 0"),
        ({"odds": (0.64, 0.91)}, "odds must be four"),
        ({"odds": "abcd"}, "odds must be four positive numbers"),
        ({"odds": (1e-300, 1.0, 1.0, 1.0)}, "case prevalence of 1e-300"),
        ({"odds": (1e300, 1.0, 1.0, 1.0)}, "case prevalence of 1"),
        ({"n_cases": 2.5}, "n_cases must be an integer"),
        ({"n_controls": True}, "n_controls must be an integer"),
        ({"n_snps": 3}, "n_snps must be an integer ≥ 4"),
        ({"causal_maf": np.nan}, "causal_maf"),
        ({"ld_rho": 1.0}, "ld_rho"),
        ({"block_mean": 0.0}, "block_mean"),
    ],
)
def test_bad_parameters_are_refused_before_drawing(kwargs, match):
    with pytest.raises(ValueError, match=match):
        simulate_gwas(**({"n_snps": 20} | kwargs))


def test_odds_that_make_one_group_impossible_are_refused_not_looped_on():
    # Before the prevalence check a zero base odds drew batches forever with growing memory.
    import subprocess
    import sys
    from pathlib import Path

    code = (
        "from pm_private.datasets.gwas import simulate_gwas\n"
        "try:\n    simulate_gwas(n_snps=20, odds=(0.0, 1.0, 1.0, 1.0))\nexcept ValueError:\n    pass\n"
    )
    root = Path(__file__).resolve().parents[2]
    child = subprocess.run([sys.executable, "-c", code], cwd=root, timeout=60, capture_output=True, text=True)
    assert child.returncode == 0, child.stderr[-2000:]


def test_rare_cases_are_collected_without_keeping_every_control():
    data = simulate_gwas(n_cases=5, n_controls=5, n_snps=8, odds=(0.01, 1.0, 1.0, 1.0), rng=3)
    assert data.status.tolist() == [1] * 5 + [0] * 5

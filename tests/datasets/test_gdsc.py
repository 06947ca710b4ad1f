"""GDSC-shaped data: the synthetic stand-in, the loader for real GDSC files, and preprocessing."""

import dataclasses

import numpy as np
import pandas as pd
import pytest
from scipy.stats import kurtosis, spearmanr

from pm_private.datasets import DrugSensitivityData, load_gdsc, make_gdsc_like
from pm_private.released.preprocessing import preprocess


@pytest.fixture(scope="module")
def data():
    return make_gdsc_like(seed=0)


# --- generator --------------------------------------------------------------------------------


def test_shapes_and_names(data):
    assert data.expression.shape == (985, 64)
    assert data.response.shape == (985, 265)
    assert list(data.genes[:2]) == ["G001", "G002"] and data.genes[-1] == "G064"
    assert list(data.drugs[:2]) == ["D001", "D002"] and data.drugs[-1] == "D265"
    assert data.cell_lines[0] == "CL0001" and data.cell_lines[-1] == "CL0985"
    assert data.expression.index.equals(data.response.index)
    assert data.expression.dtypes.eq(np.float64).all() and data.response.dtypes.eq(np.float64).all()
    assert np.isfinite(data.expression.to_numpy()).all()
    assert "synthetic" in data.source and "not real" in data.source


def test_names_widen_for_large_counts():
    d = make_gdsc_like(n_cell_lines=20, n_genes=1000, n_drugs=3, seed=1)
    assert d.genes[0] == "G0001" and d.genes[-1] == "G1000"
    assert list(d.drugs) == ["D001", "D002", "D003"]
    assert d.cell_lines[-1] == "CL0020"


def test_small_sizes_work():
    d = make_gdsc_like(n_cell_lines=2, n_genes=1, n_drugs=1, missing_fraction=0.0, seed=3)
    assert d.expression.shape == (2, 1) and d.response.shape == (2, 1)


def test_reproducible_and_seed_dependent(data):
    again = make_gdsc_like(seed=0)
    pd.testing.assert_frame_equal(data.expression, again.expression)
    pd.testing.assert_frame_equal(data.response, again.response)
    other = make_gdsc_like(seed=1)
    assert not np.allclose(data.expression.to_numpy(), other.expression.to_numpy())
    assert not data.response.isna().equals(other.response.isna())


def test_expression_heavy_tailed_with_outliers(data):
    X = data.expression.to_numpy()
    excess = kurtosis(X, axis=0)  # Fisher: 0 for a normal
    assert np.median(excess) > 1.0
    z = (X - X.mean(axis=0)) / X.std(axis=0)
    assert (np.abs(z) > 5).sum() >= 10
    # A few whole cell lines are extreme: their distance from the centre dwarfs the typical one.
    row_norm = np.linalg.norm(z, axis=1)
    assert row_norm.max() > 3 * np.median(row_norm)
    # Genes come in correlated modules.
    corr = np.corrcoef(X[np.argsort(row_norm)[:-20]].T)
    assert np.abs(corr[np.triu_indices_from(corr, 1)]).max() > 0.4


@pytest.mark.parametrize("fraction", [0.0, 0.2, 0.5])
def test_missing_fraction(fraction):
    d = make_gdsc_like(n_cell_lines=400, n_drugs=200, missing_fraction=fraction, seed=2)
    assert abs(d.missing_fraction - fraction) < 0.03
    assert d.response.notna().any().all()  # every drug keeps some responses


def test_bad_arguments():
    with pytest.raises(ValueError, match="missing_fraction"):
        make_gdsc_like(missing_fraction=1.0)
    with pytest.raises(ValueError, match="n_genes"):
        make_gdsc_like(n_genes=0)
    with pytest.raises(ValueError, match="n_cell_lines"):
        make_gdsc_like(n_cell_lines=2.5)


def test_drug_drops_missing_rows(data):
    X, y = data.drug("D003")
    observed = data.response["D003"].notna()
    assert len(y) == observed.sum() < len(data.cell_lines)
    assert not y.isna().any() and y.name == "D003"
    assert X.index.equals(y.index) and list(X.columns) == list(data.genes)
    X2, y2 = data.drug(2, genes=10)
    pd.testing.assert_series_equal(y, y2)
    assert list(X2.columns) == [f"G{i:03d}" for i in range(1, 11)]
    _, y_last = data.drug(-1)
    assert y_last.name == "D265"
    X3, _ = data.drug("D003", genes=["G005", "G001"])
    assert list(X3.columns) == ["G005", "G001"]
    with pytest.raises(KeyError):
        data.drug("nope")
    with pytest.raises(IndexError):
        data.drug(265)


def _ridge_predict(X_train, y_train, X_test, alpha=1.0):
    mu, sd = X_train.mean(axis=0), X_train.std(axis=0)
    A, B = (X_train - mu) / sd, (X_test - mu) / sd
    w = np.linalg.solve(A.T @ A + alpha * np.eye(A.shape[1]), A.T @ (y_train - y_train.mean()))
    return B @ w


def test_missingness_only_masks():
    # Missingness is drawn last: the same seed without missingness gives the same values.
    full = make_gdsc_like(n_cell_lines=200, n_drugs=30, missing_fraction=0.0, seed=4)
    part = make_gdsc_like(n_cell_lines=200, n_drugs=30, missing_fraction=0.3, seed=4)
    pd.testing.assert_frame_equal(full.expression, part.expression)
    observed = part.response.notna()
    pd.testing.assert_frame_equal(full.response[observed], part.response)


def test_linear_model_has_modest_predictive_power():
    # Measured (seed 0, all 985 lines observed, this split: 800 train / 185 test, first 10
    # genes): mean Spearman 0.315 over the first 20 drugs (range -0.06..0.54), 0.344 over all
    # 265; 0.322 with paper 004's row normalisation.
    data = make_gdsc_like(missing_fraction=0.0, seed=0)
    rng = np.random.default_rng(0)
    plain, normalised = [], []
    for j in range(20):
        X, y = data.drug(j, genes=10)
        X, y = X.to_numpy(), y.to_numpy()
        order = rng.permutation(len(y))
        train, test = order[:800], order[800:]
        plain.append(spearmanr(_ridge_predict(X[train], y[train], X[test]), y[test])[0])
        center = X[train].mean(axis=0)  # "public" here: the generator's data are not private
        A, B = preprocess(X[train], center=center), preprocess(X[test], center=center)
        w = np.linalg.solve(A.T @ A + np.eye(10), A.T @ (y[train] - y[train].mean()))
        normalised.append(spearmanr(B @ w, y[test])[0])
    assert 0.1 < np.mean(plain) < 0.6
    assert 0.1 < np.mean(normalised) < 0.6
    assert np.max(plain) < 0.85  # real but modest, not near-deterministic


def test_container_validates():
    e = pd.DataFrame([[1.0], [2.0]], index=["a", "b"], columns=["g"])
    r = pd.DataFrame([[1.0], [np.nan]], index=["a", "b"], columns=["d"])
    d = DrugSensitivityData(e, r)
    assert d.missing_fraction == 0.5 and "2 cell lines" in repr(d)
    with pytest.raises(ValueError, match="same cell lines"):
        DrugSensitivityData(e, r.iloc[::-1])
    with pytest.raises(ValueError, match="finite"):
        DrugSensitivityData(e.replace(2.0, np.nan), r)
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.expression = e


# --- loader -----------------------------------------------------------------------------------


def _write_gdsc(tmp_path, *, expression=None, response=None):
    if expression is None:
        expression = pd.DataFrame(
            {
                "GENE_SYMBOLS": ["TP53", "KRAS", "EGFR", "TP53", np.nan],
                "GENE_title": [
                    "tumor protein p53",
                    "KRAS proto-oncogene, GTPase",
                    "EGF receptor",
                    "tumor protein p53 (probe 2)",
                    "unannotated probe",
                ],
                "DATA.906826": [8.0, 5.0, 3.0, 10.0, 1.0],
                "DATA.687983": [7.0, 6.0, 4.0, 7.0, 1.0],
                "DATA.910927": [6.0, 6.5, 4.5, 6.0, 1.0],  # no responses for this line
            }
        )
    if response is None:
        response = pd.DataFrame(
            {
                "DATASET": "GDSC1",
                "COSMIC_ID": [906826, 906826, 687983, 906826, 999999, 906826],
                "CELL_LINE_NAME": ["A", "A", "B", "A", "Z", "A"],
                "DRUG_ID": [1003, 1004, 1003, 1003, 1003, 1005],
                "DRUG_NAME": [
                    "Camptothecin",
                    "Vinblastine",
                    "Camptothecin",
                    "Camptothecin",
                    "Camptothecin",
                    "OnlyUnmatched",
                ],
                "LN_IC50": [-1.0, 2.0, 0.5, -2.0, 9.0, np.nan],
            }
        )
    expression_path = tmp_path / "Cell_line_RMA_proc_basalExp.txt"
    response_path = tmp_path / "GDSC1_fitted_dose_response.csv"
    expression.to_csv(expression_path, sep="\t", index=False)
    response.to_csv(response_path, index=False)
    return expression_path, response_path


def test_loader_round_trip(tmp_path):
    expression_path, response_path = _write_gdsc(tmp_path)
    d = load_gdsc(expression_path, response_path)
    # Cell lines: those in both files, in the expression file's order, keyed by COSMIC id.
    assert list(d.cell_lines) == ["906826", "687983"]
    assert list(d.genes) == ["TP53", "KRAS", "EGFR"]  # unannotated probe dropped
    expected_expr = pd.DataFrame(
        [[9.0, 5.0, 3.0], [7.0, 6.0, 4.0]],  # TP53 = mean of its two probes
        index=pd.Index(["906826", "687983"], name="COSMIC_ID"),
        columns=pd.Index(["TP53", "KRAS", "EGFR"], name="gene"),
    )
    pd.testing.assert_frame_equal(d.expression, expected_expr)
    # Responses: pivoted, duplicates averaged, drugs with no usable response dropped.
    expected_resp = pd.DataFrame(
        [[-1.5, 2.0], [0.5, np.nan]],
        index=pd.Index(["906826", "687983"], name="COSMIC_ID"),
        columns=pd.Index(["Camptothecin", "Vinblastine"], name="drug"),
    )
    pd.testing.assert_frame_equal(d.response, expected_resp)
    X, y = d.drug("Vinblastine")
    assert list(y.index) == ["906826"] and y.iloc[0] == 2.0


def test_loader_gene_subset_and_drug_id(tmp_path):
    expression_path, response_path = _write_gdsc(tmp_path)
    d = load_gdsc(expression_path, response_path, genes=["EGFR", "TP53"], drug_column="DRUG_ID")
    assert list(d.genes) == ["EGFR", "TP53"]
    assert list(d.drugs) == ["1003", "1004"]
    assert d.response.loc["906826", "1003"] == -1.5
    with pytest.raises(ValueError, match="BRAF"):
        load_gdsc(expression_path, response_path, genes=["BRAF", "TP53"])


def test_loader_drug_id_fallback_and_comma_expression(tmp_path):
    expression = pd.DataFrame(
        [["A", 1.0, 3.0, 5.0], ["B", 2.0, 4.0, 6.0]], columns=["GENE_SYMBOLS", "DATA.1", "DATA.2", "DATA.2"]
    )
    response = pd.DataFrame({"COSMIC_ID": [1, 2], "DRUG_ID": [7, 7], "LN_IC50": [0.1, 0.2]})
    expression_path = tmp_path / "expr.csv"
    response_path = tmp_path / "resp.csv"
    expression.to_csv(expression_path, index=False)
    response.to_csv(response_path, index=False)
    d = load_gdsc(expression_path, response_path)
    assert list(d.drugs) == ["7"] and list(d.cell_lines) == ["1", "2"]
    # The repeated column DATA.2 (read back as DATA.2.1) is averaged into one cell line.
    np.testing.assert_allclose(d.expression.to_numpy(), [[1.0, 2.0], [4.0, 5.0]])


def test_loader_errors(tmp_path):
    expression_path, response_path = _write_gdsc(tmp_path)
    with pytest.raises(FileNotFoundError):
        load_gdsc(tmp_path / "absent.txt", response_path)
    with pytest.raises(FileNotFoundError):
        load_gdsc(expression_path, tmp_path / "absent.csv")

    bad = tmp_path / "bad"
    bad.mkdir()
    e, r = _write_gdsc(bad, response=pd.DataFrame({"COSMIC_ID": [906826], "IC50": [1.0]}))
    with pytest.raises(ValueError, match="LN_IC50") as info:
        load_gdsc(e, r)
    assert "DRUG_NAME or DRUG_ID" in str(info.value)

    bad2 = tmp_path / "bad2"
    bad2.mkdir()
    e, r = _write_gdsc(bad2, expression=pd.DataFrame({"SYMBOL": ["A"], "DATA.906826": [1.0]}))
    with pytest.raises(ValueError, match="GENE_SYMBOLS"):
        load_gdsc(e, r)

    bad3 = tmp_path / "bad3"
    bad3.mkdir()
    e, r = _write_gdsc(bad3, expression=pd.DataFrame({"GENE_SYMBOLS": ["A"], "x906826": [1.0]}))
    with pytest.raises(ValueError, match="DATA"):
        load_gdsc(e, r)

    bad4 = tmp_path / "bad4"
    bad4.mkdir()
    e, r = _write_gdsc(
        bad4,
        response=pd.DataFrame({"COSMIC_ID": [1, 2], "DRUG_NAME": ["x", "y"], "LN_IC50": [0.0, 1.0]}),
    )
    with pytest.raises(ValueError, match="no cell lines"):
        load_gdsc(e, r)


# --- preprocessing ----------------------------------------------------------------------------


def test_preprocess_unit_rows_public_center():
    X = np.array([[3.0, 4.0], [1.0, 1.0], [2.0, 3.0], [0.0, 0.0]])
    out = preprocess(X)
    np.testing.assert_allclose(out[0], [0.6, 0.8])
    np.testing.assert_allclose(np.linalg.norm(out[:3], axis=1), 1.0)
    np.testing.assert_array_equal(out[3], [0.0, 0.0])  # zero row stays zero
    centred = preprocess(X, center=[1.0, 1.0])
    np.testing.assert_array_equal(centred[1], [0.0, 0.0])  # row equal to the centre -> zero
    np.testing.assert_allclose(centred[2], [1 / np.sqrt(5), 2 / np.sqrt(5)])
    np.testing.assert_array_equal(X[0], [3.0, 4.0])  # input untouched
    big = preprocess(np.array([[1e300, 1e300]]))
    np.testing.assert_allclose(big, [[2**-0.5, 2**-0.5]])


def test_preprocess_dataframe_and_series_center():
    X = pd.DataFrame({"a": [2.0, 0.0], "b": [1.0, 5.0]})
    out = preprocess(X, center=pd.Series({"b": 1.0, "a": 0.0}))
    assert isinstance(out, np.ndarray)
    np.testing.assert_allclose(out, [[1.0, 0.0], [0.0, 1.0]])
    with pytest.raises(ValueError, match="shape"):
        preprocess(X, center=[1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="no value"):
        preprocess(X, center=pd.Series({"a": 1.0}))
    with pytest.raises(ValueError, match="finite"):
        preprocess(np.array([[np.nan, 1.0]]))
    with pytest.raises(ValueError, match="2-D"):
        preprocess(np.ones(3))

"""Drug-sensitivity data in the shape of GDSC (Honkela et al. 2018): a synthetic stand-in and a loader.

Honkela et al. (2018) predict drug sensitivity (log IC50) of cancer cell lines from gene
expression, using GDSC release 6.1: 985 cell lines, 265 drugs, RMA-normalised expression reduced
to 64 cancer genes (ordered by mutation count; the main figure uses the first 10).  GDSC cannot be
downloaded in this project's environment, so this module offers

* :func:`make_gdsc_like` -- a seeded generator that imitates GDSC's *shape* (sizes, heavy-tailed
  expression with outlier cell lines, many drugs with modest linear signal, missing responses).
  It is a stand-in for examples, tests and benchmarks, **not real data**: numbers obtained on it
  say nothing about real drugs or genes;
* :func:`load_gdsc` -- a reader for the real GDSC files, for users who have them;
* :class:`DrugSensitivityData` -- the container both return.

Nothing here imports PyMC.
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..privacy.validation import check_count

__all__ = ["DrugSensitivityData", "make_gdsc_like", "load_gdsc"]


# ---------------------------------------------------------------------------------------------
# Container
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class DrugSensitivityData:
    """Gene expression and drug responses of the same cell lines.

    Parameters
    ----------
    expression : pandas.DataFrame
        Cell lines × genes, float, all finite.
    response : pandas.DataFrame
        Cell lines × drugs, float (log IC50 for GDSC), NaN where not measured.
        Its index equals ``expression``'s index (same cell lines, same order).
    source : str, default ""
        Free text saying where the data came from (generator and seed, or file names).

    Raises
    ------
    TypeError
        If ``expression`` or ``response`` is not a DataFrame.
    ValueError
        If their cell lines differ, or the values are not as stated.

    The dataclass is frozen (the attributes cannot be re-bound) and keeps its own float copies of
    the frames given to it; the frames themselves are pandas objects and remain mutable, so do not
    modify them in place.
    """

    expression: pd.DataFrame
    response: pd.DataFrame
    source: str = ""

    def __post_init__(self):
        expression, response = self.expression, self.response
        if not isinstance(expression, pd.DataFrame) or not isinstance(response, pd.DataFrame):
            raise TypeError("expression and response must be pandas DataFrames")
        if not expression.index.equals(response.index):
            raise ValueError(
                "expression and response must have the same cell lines in the same order "
                f"(got {len(expression)} and {len(response)} rows with differing index)"
            )
        for name, frame in (
            ("cell lines", expression.index),
            ("genes", expression.columns),
            ("drugs", response.columns),
        ):
            if frame.has_duplicates:
                dup = frame[frame.duplicated()].unique()[:5].tolist()
                raise ValueError(f"duplicate {name}: {dup}")
        expression = expression.astype(np.float64)  # astype copies
        response = response.astype(np.float64)
        if not np.isfinite(expression.to_numpy()).all():
            raise ValueError("expression must be finite (no NaN or inf)")
        if np.isinf(response.to_numpy()).any():
            raise ValueError("response must not contain inf (NaN marks a missing response)")
        object.__setattr__(self, "expression", expression)
        object.__setattr__(self, "response", response)

    @property
    def cell_lines(self) -> pd.Index:
        return self.expression.index

    @property
    def genes(self) -> pd.Index:
        return self.expression.columns

    @property
    def drugs(self) -> pd.Index:
        return self.response.columns

    @property
    def missing_fraction(self) -> float:
        """Fraction of (cell line, drug) pairs without a response."""
        values = self.response.to_numpy()
        return float(np.isnan(values).mean()) if values.size else 0.0

    def drug(self, name_or_index, genes: int | Sequence[str] | None = None):
        """``(X, y)`` for one drug, only the cell lines where its response is observed.

        Parameters
        ----------
        name_or_index : str or int
            A drug name, or a position (negative counts from the end).
        genes : int or sequence of str, optional
            None for all genes, an int k for the first k genes (Honkela et al. (2018) orders
            genes by mutation count and uses the first 10), or a sequence of gene names.

        Returns
        -------
        X : pandas.DataFrame
            Expression of the cell lines where the response is observed, × genes.
        y : pandas.Series
            Their responses, named after the drug.

        Raises
        ------
        IndexError
            If the drug position is out of range.
        KeyError
            For an unknown drug or gene name.
        ValueError
            If an int ``genes`` is not in 1..(number of genes).
        """
        if isinstance(name_or_index, (int, np.integer)) and not isinstance(name_or_index, bool):
            n_drugs = self.response.shape[1]
            if not -n_drugs <= int(name_or_index) < n_drugs:
                raise IndexError(f"drug index {name_or_index} out of range for {n_drugs} drugs")
            y = self.response.iloc[:, int(name_or_index)]
        else:
            if name_or_index not in self.response.columns:
                raise KeyError(f"unknown drug {name_or_index!r}")
            y = self.response[name_or_index]
        if genes is None:
            X = self.expression
        elif isinstance(genes, (int, np.integer)) and not isinstance(genes, bool):
            if not 1 <= int(genes) <= self.expression.shape[1]:
                raise ValueError(f"genes={genes} must be in 1..{self.expression.shape[1]}")
            X = self.expression.iloc[:, : int(genes)]
        else:
            genes = list(genes)
            unknown = [g for g in genes if g not in self.expression.columns]
            if unknown:
                raise KeyError(f"unknown genes: {unknown[:10]}")
            X = self.expression[genes]
        observed = y.notna().to_numpy()
        return X.loc[observed].copy(), y.loc[observed].copy()

    def __repr__(self) -> str:
        n, g = self.expression.shape
        return (
            f"DrugSensitivityData({n} cell lines × {g} genes, {self.response.shape[1]} drugs, "
            f"{100 * self.missing_fraction:.1f}% responses missing, source={self.source!r})"
        )


# ---------------------------------------------------------------------------------------------
# Synthetic stand-in
# ---------------------------------------------------------------------------------------------


def _names(prefix: str, count: int, width: int) -> list[str]:
    width = max(width, len(str(count)))
    return [f"{prefix}{i:0{width}d}" for i in range(1, count + 1)]


def _unit_t(rng: np.random.Generator, df: float, size) -> np.ndarray:
    """Student-t draws rescaled to unit variance (df > 2)."""
    return rng.standard_t(df, size=size) / math.sqrt(df / (df - 2.0))


def _standardise_columns(a: np.ndarray) -> np.ndarray:
    a = a - a.mean(axis=0)
    sd = a.std(axis=0)
    return a / np.where(sd > 0, sd, 1.0)


# Constants of the generative model (documented in make_gdsc_like's docstring).
_N_TISSUES = 12
_TISSUE_SD = 0.6
_EXPR_T_DF = 4.0
_SKEW_GENE_PROB = 0.3
_OUTLIER_LINE_FRACTION = 0.01
_SPIKE_PROB = 0.002
_NOISE_T_DF = 5.0
_GENERAL_SENSITIVITY_SHARE = 0.3
_SIGNAL_BETA = (2.0, 5.0)  # h_j ~ Beta(2, 5), mean 2/7
_MISSING_CONCENTRATION = 20.0


def make_gdsc_like(
    n_cell_lines: int = 985,
    n_genes: int = 64,
    n_drugs: int = 265,
    *,
    missing_fraction: float = 0.2,
    seed=0,
) -> DrugSensitivityData:
    r"""A seeded **synthetic stand-in** for GDSC (Honkela et al.'s (2018) data); not real data.

    It copies GDSC's shape -- 985 cell lines, 64 genes on a log2 RMA-like scale, 265 drugs with
    log-IC50-like responses, about 20% of responses missing -- and the features that matter for
    robust private regression: heavy-tailed, skewed, correlated expression with a few extreme
    outlier cell lines, and responses that a linear model on the genes predicts only modestly.
    Conclusions drawn on it are about methods, never about real drugs or genes.

    Generative model (i = cell line, g = gene = 1..G in name order, j = drug, K = clip(G // 8, 1, 8)
    latent programmes; ``t_ν`` below is a Student-t rescaled to unit variance):

    *Cell lines.* Tissue :math:`t_i \sim \mathrm{Cat}(\pi)`, :math:`\pi \sim \mathrm{Dir}(2\cdot
    \mathbf 1_{12})`; tissue means :math:`\tau_t \sim N(0, 0.6^2 I_K)`; programme activities
    :math:`F_i = \tau_{t_i} + \zeta_i`, :math:`\zeta_i \sim N(0, I_K)`.

    *Expression (gene modules from a low-rank factor model).* Each gene joins one module
    :math:`m_g \sim U\{1..K\}`; loadings :math:`W_{kg} = s_g a_g [k = m_g] + b_{kg}` with
    :math:`a_g \sim N(0.9, 0.2^2)`, random sign :math:`s_g`, :math:`b_{kg} \sim N(0, 0.15^2)`.
    Latent :math:`L_{ig} = F_i^\top W_{\cdot g} + \varepsilon_{ig}`, :math:`\varepsilon \sim
    t_4`; :math:`Z_{\cdot g}` = :math:`L_{\cdot g}` standardised over cell lines.  For ~30% of
    genes (oncogene-like, right-skewed) :math:`Z_{\cdot g} \leftarrow \mathrm{std}(\sinh(
    \operatorname{asinh} Z_{\cdot g} + \delta_g))`, :math:`\delta_g \sim U(0.3, 0.7)`
    (sinh-arcsinh skew: right tail stretched by :math:`e^{\delta_g}`).  Measured expression

    .. math:: X_{ig} = \mu_g + \sigma_g (c_i Z_{ig} + o_{ig}),\quad \mu_g \sim U(3, 11),\
              \sigma_g \sim \mathrm{LogNormal}(\log 0.7, 0.4^2),

    with :math:`c_i = 1` except for ``max(1, round(0.01 n))`` outlier cell lines where
    :math:`c_i \sim U(3, 6)`, and sparse spikes :math:`o_{ig} = \pm U(4, 8)` with probability
    0.002 (else 0).  Outliers are measurement artefacts: responses depend on the clean
    :math:`Z`, so a model that trusts extreme x values is misled -- the situation in which
    Honkela et al.'s (2018) projection (clipping) helps.

    *Responses (log IC50).* Sparse drivers: :math:`|A_j| = \min(G, 1 + \mathrm{Poisson}(2))`
    genes drawn without replacement with probability :math:`\propto 1 / (1 + (g-1)/10)` (early
    genes drive more drugs, mirroring Honkela et al.'s (2018) ordering of genes by mutation count);
    :math:`\beta_{jg} \sim N(0, 1)` on :math:`A_j`; programme effects :math:`\alpha_j \sim
    N(0, 0.5^2 I_K)`.  Linear signal :math:`\eta_{ij} = \sum_{g \in A_j} \beta_{jg} Z_{ig} +
    F_i^\top \alpha_j`, standardised over cell lines to :math:`\tilde\eta_{ij}`.  Noise
    :math:`\xi_{ij} = \sqrt{0.3}\, u_i + \sqrt{0.7}\, e_{ij}` with a general sensitivity
    :math:`u_i \sim N(0, 1)` shared by all drugs but invisible in expression and
    :math:`e_{ij} \sim t_5` (heavy tails).  Signal share :math:`h_j \sim \mathrm{Beta}(2, 5)`
    (mean 2/7), offset :math:`m_j \sim N(2.5, 1.5^2)`, scale :math:`s_j \sim
    \mathrm{LogNormal}(\log 1.3, 0.3^2)`:

    .. math:: y_{ij} = m_j + s_j\big(\sqrt{h_j}\,\tilde\eta_{ij} + \sqrt{1 - h_j}\,\xi_{ij}\big).

    *Missingness (MCAR).* Per-drug rate :math:`q_j \sim \mathrm{Beta}(f\kappa, (1-f)\kappa)`,
    :math:`\kappa = 20`, f = ``missing_fraction`` (so E q_j = f); each response is missing
    independently with probability :math:`q_j`.

    Missingness is drawn last, so ``missing_fraction=0`` with the same seed gives the same values
    with nothing masked.

    Predictive power (measured with default sizes, ``missing_fraction=0``, seeds 0-3): ridge
    regression (alpha = 1, standardised genes) on the first 10 genes, trained on 800 random cell
    lines and tested on the other 185, gives a test Spearman correlation with interquartile
    range about 0.22-0.44 over the 265 drugs, mean 0.32-0.34 (0.28-0.36 over the first 20
    drugs); Honkela et al.'s (2018) row normalisation gives the same.  All 64 genes give about 0.4.  Real
    but modest signal, as in Honkela et al.'s (2018) figures.

    Names: genes ``G001``.., drugs ``D001``.., cell lines ``CL0001``.. (wider if needed).
    The same seed and sizes give identical data.

    Parameters
    ----------
    n_cell_lines : int, default 985
        The number of cell lines, ≥ 2.
    n_genes : int, default 64
        The number of genes, ≥ 1.
    n_drugs : int, default 265
        The number of drugs, ≥ 1.
    missing_fraction : float, default 0.2
        The expected fraction of missing responses, in [0, 1).
    seed : int, numpy.random.SeedSequence or numpy.random.Generator, default 0
        Anything :func:`numpy.random.default_rng` takes.

    Returns
    -------
    DrugSensitivityData
        The synthetic expression and responses.

    Raises
    ------
    ValueError
        If a size or ``missing_fraction`` is out of range.
    """
    n = check_count("n_cell_lines", n_cell_lines, 2)
    G = check_count("n_genes", n_genes, 1)
    D = check_count("n_drugs", n_drugs, 1)
    try:
        f = float(missing_fraction)
    except (TypeError, ValueError):
        raise ValueError(f"missing_fraction must be a number, got {missing_fraction!r}") from None
    if not 0.0 <= f < 1.0:
        raise ValueError(f"missing_fraction must be in [0, 1), got {missing_fraction!r}")
    rng = np.random.default_rng(seed)
    K = min(8, max(1, G // 8))

    # Cell lines: tissue and latent programme activities.
    T = min(_N_TISSUES, n)
    tissue_probs = rng.dirichlet(np.full(T, 2.0))
    tissue = rng.choice(T, size=n, p=tissue_probs)
    tissue_means = rng.normal(0.0, _TISSUE_SD, size=(T, K))
    F = tissue_means[tissue] + rng.normal(size=(n, K))

    # Expression: module loadings, t-noise, skewed genes.
    module = rng.integers(0, K, size=G)
    W = rng.normal(0.0, 0.15, size=(K, G))
    strength = rng.normal(0.9, 0.2, size=G) * rng.choice([-1.0, 1.0], size=G)
    W[module, np.arange(G)] += strength
    Z = _standardise_columns(F @ W + _unit_t(rng, _EXPR_T_DF, (n, G)))
    skewed = rng.random(G) < _SKEW_GENE_PROB
    skew = rng.uniform(0.3, 0.7, size=G)
    if skewed.any():  # sinh-arcsinh: right tail stretched by e^δ, left shrunk by e^-δ
        Z[:, skewed] = _standardise_columns(np.sinh(np.arcsinh(Z[:, skewed]) + skew[skewed]))

    gene_mean = rng.uniform(3.0, 11.0, size=G)
    gene_sd = rng.lognormal(math.log(0.7), 0.4, size=G)
    line_scale = np.ones(n)
    n_outlier_lines = max(1, round(_OUTLIER_LINE_FRACTION * n))
    outlier_lines = rng.choice(n, size=n_outlier_lines, replace=False)
    line_scale[outlier_lines] = rng.uniform(3.0, 6.0, size=n_outlier_lines)
    spikes = (
        (rng.random((n, G)) < _SPIKE_PROB) * rng.choice([-1.0, 1.0], size=(n, G)) * rng.uniform(4.0, 8.0, size=(n, G))
    )
    X = gene_mean + gene_sd * (line_scale[:, None] * Z + spikes)

    # Responses: sparse drivers + programme effects, heavy-tailed noise, drug offsets/scales.
    weights = 1.0 / (1.0 + np.arange(G) / 10.0)
    weights /= weights.sum()
    B = np.zeros((G, D))
    for j in range(D):
        size = min(G, 1 + int(rng.poisson(2.0)))
        active = rng.choice(G, size=size, replace=False, p=weights)
        B[active, j] = rng.normal(size=size)
    alpha = rng.normal(0.0, 0.5, size=(K, D))
    eta = _standardise_columns(Z @ B + F @ alpha)
    general = rng.normal(size=(n, 1))
    xi = math.sqrt(_GENERAL_SENSITIVITY_SHARE) * general + math.sqrt(1.0 - _GENERAL_SENSITIVITY_SHARE) * _unit_t(
        rng, _NOISE_T_DF, (n, D)
    )
    h = rng.beta(*_SIGNAL_BETA, size=D)
    offset = rng.normal(2.5, 1.5, size=D)
    scale = rng.lognormal(math.log(1.3), 0.3, size=D)
    Y = offset + scale * (np.sqrt(h) * eta + np.sqrt(1.0 - h) * xi)

    # Missing completely at random, with a drug-specific rate.
    if f > 0.0:
        rate = rng.beta(f * _MISSING_CONCENTRATION, (1.0 - f) * _MISSING_CONCENTRATION, size=D)
        Y[rng.random((n, D)) < rate] = np.nan

    lines = pd.Index(_names("CL", n, 4), name="cell_line")
    expression = pd.DataFrame(X, index=lines, columns=pd.Index(_names("G", G, 3), name="gene"))
    response = pd.DataFrame(Y, index=lines, columns=pd.Index(_names("D", D, 3), name="drug"))
    return DrugSensitivityData(
        expression,
        response,
        source=f"make_gdsc_like(n_cell_lines={n}, n_genes={G}, n_drugs={D}, "
        f"missing_fraction={f}, seed={seed!r}) -- synthetic stand-in, not real GDSC data",
    )


# ---------------------------------------------------------------------------------------------
# Loader for real GDSC files
# ---------------------------------------------------------------------------------------------

_DATA_COLUMN = re.compile(r"DATA\.(\d+)(?:\.\d+)?")  # "DATA.906826" (".1" = pandas de-duplication)


def _read_table(path: Path, what: str) -> pd.DataFrame:
    if not path.is_file():
        raise FileNotFoundError(f"{what} file not found: {str(path)!r}")
    if path.suffix.lower() in (".xlsx", ".xls"):
        return pd.read_excel(path)
    # Tab- or comma-separated, decided from the header line (compression inferred by pandas).
    header = pd.read_csv(path, sep="\t", nrows=0)
    sep = "\t" if len(header.columns) > 1 else ","
    return pd.read_csv(path, sep=sep, low_memory=False)


def _as_labels(values: pd.Series) -> pd.Series:
    """Identifiers as strings: integral numbers without '.0' (1003.0 -> '1003')."""
    numeric = pd.to_numeric(values, errors="coerce")
    if numeric.notna().all() and np.all(np.mod(numeric.to_numpy(dtype=float), 1.0) == 0.0):
        return numeric.astype(np.int64).astype(str)
    return values.astype(str).str.strip()


def load_gdsc(
    expression_path,
    response_path,
    genes: Sequence[str] | None = None,
    *,
    drug_column: str | None = None,
) -> DrugSensitivityData:
    """Read real GDSC files into a :class:`DrugSensitivityData`.

    ``expression_path``: GDSC's RMA-normalised basal expression, gene rows × cell-line columns,
    tab- or comma-separated (possibly compressed), as ``Cell_line_RMA_proc_basalExp.txt``: a
    ``GENE_SYMBOLS`` column, an optional ``GENE_title`` column, then one column per cell line
    named ``DATA.<COSMIC_ID>`` (e.g. ``DATA.906826``).  Rows without a gene symbol are dropped;
    probes sharing a symbol, and columns sharing a COSMIC id, are averaged.

    ``response_path``: GDSC's fitted dose-response table in long format (CSV/TSV, or xlsx where
    openpyxl is installed) with columns ``COSMIC_ID``, ``DRUG_NAME`` or ``DRUG_ID``, and
    ``LN_IC50`` (natural-log IC50).  It is pivoted to cell lines × drugs; repeated
    (cell line, drug) pairs are averaged.  ``drug_column`` picks the drug key; by default
    ``DRUG_NAME`` if present, else ``DRUG_ID``.  (In GDSC2 one drug name can have several
    DRUG_IDs, i.e. separate screens; by name they are averaged, use ``drug_column="DRUG_ID"`` to
    keep them apart.)

    ``genes``: optional gene symbols to keep, in this order (Honkela et al. 2018, uses 64 cancer genes
    ordered by mutation count); a symbol missing from the file is a ValueError.

    Cell lines are aligned on COSMIC id (index: COSMIC ids as strings, named ``COSMIC_ID``, in
    the expression file's order) and restricted to those present in both files; cell lines whose
    kept expression has missing values are dropped with a warning, and drugs with no response
    left are dropped.

    Parameters
    ----------
    expression_path : str or path-like
        The expression file, as described above.
    response_path : str or path-like
        The dose-response file, as described above.
    genes : sequence of str, optional
        Gene symbols to keep, in this order (default: all).
    drug_column : str, optional
        ``"DRUG_NAME"`` or ``"DRUG_ID"`` (default: ``DRUG_NAME`` if present).

    Returns
    -------
    DrugSensitivityData
        The aligned expression and responses.

    Raises
    ------
    FileNotFoundError
        For a missing file.
    ValueError
        Naming any missing required column or gene, or when the files share no cell line.
    """
    expression_path, response_path = Path(expression_path), Path(response_path)
    raw_expr = _read_table(expression_path, "expression")
    raw_resp = _read_table(response_path, "response")
    raw_expr.columns = [str(c).strip() for c in raw_expr.columns]
    raw_resp.columns = [str(c).strip() for c in raw_resp.columns]

    # --- expression: genes × DATA.<cosmic> -> cell lines × genes
    if "GENE_SYMBOLS" not in raw_expr.columns:
        raise ValueError(f"expression file {str(expression_path)!r} is missing required column(s): GENE_SYMBOLS")
    data_columns = {}
    for column in raw_expr.columns:
        match = _DATA_COLUMN.fullmatch(column)
        if match:
            data_columns[column] = str(int(match.group(1)))
    if not data_columns:
        raise ValueError(
            f"expression file {str(expression_path)!r} is missing required column(s): "
            "DATA.<COSMIC_ID> (one per cell line)"
        )
    symbols = raw_expr["GENE_SYMBOLS"].astype("string").str.strip()
    keep = symbols.notna() & (symbols != "")
    values = raw_expr.loc[keep, list(data_columns)].apply(pd.to_numeric, errors="coerce")
    values.index = pd.Index(symbols[keep].astype(str), name="gene")
    values.columns = pd.Index(list(data_columns.values()), name="COSMIC_ID")
    values = values.T.groupby(level=0, sort=False).mean()  # duplicate COSMIC columns
    values = values.T.groupby(level=0, sort=False).mean().T  # duplicate probes per symbol
    values.index.name, values.columns.name = "COSMIC_ID", "gene"
    if genes is not None:
        genes = [str(g) for g in genes]
        absent = [g for g in genes if g not in values.columns]
        if absent:
            raise ValueError(f"genes not in expression file: {absent}")
        if len(set(genes)) != len(genes):
            raise ValueError("genes contains duplicates")
        values = values[genes]

    # --- responses: long -> cell lines × drugs
    if drug_column is None:
        drug_column = "DRUG_NAME" if "DRUG_NAME" in raw_resp.columns else "DRUG_ID"
        drug_label = "DRUG_NAME or DRUG_ID"
    else:
        drug_label = drug_column
    missing = [c for c in ("COSMIC_ID", "LN_IC50") if c not in raw_resp.columns]
    if drug_column not in raw_resp.columns:
        missing.append(drug_label)
    if missing:
        raise ValueError(f"response file {str(response_path)!r} is missing required column(s): " + ", ".join(missing))
    long = pd.DataFrame(
        {
            "COSMIC_ID": pd.to_numeric(raw_resp["COSMIC_ID"], errors="coerce"),
            "drug": raw_resp[drug_column],
            "LN_IC50": pd.to_numeric(raw_resp["LN_IC50"], errors="coerce"),
        }
    ).dropna()
    long["COSMIC_ID"] = _as_labels(long["COSMIC_ID"])
    long["drug"] = _as_labels(long["drug"])
    response = long.pivot_table(index="COSMIC_ID", columns="drug", values="LN_IC50", aggfunc="mean")

    # --- align
    common = [c for c in values.index if c in response.index]
    if not common:
        raise ValueError(
            f"no cell lines (COSMIC ids) in common between {str(expression_path)!r} and {str(response_path)!r}"
        )
    expression = values.loc[common]
    incomplete = ~np.isfinite(expression.to_numpy()).all(axis=1)
    if incomplete.any():
        warnings.warn(
            f"dropping {int(incomplete.sum())} cell line(s) with missing expression values",
            stacklevel=2,
        )
        expression = expression.loc[~incomplete]
        if expression.empty:
            raise ValueError("no cell line in common has complete expression values")
    response = response.reindex(expression.index).dropna(axis=1, how="all")
    response.index.name, response.columns.name = "COSMIC_ID", "drug"
    return DrugSensitivityData(expression, response, source=f"GDSC files: {expression_path.name}, {response_path.name}")

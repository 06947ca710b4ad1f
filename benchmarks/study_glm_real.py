"""Real-data study: noise-aware private logistic and Poisson regression on data shipped with
installed packages, against the objective-perturbation elastic net, the naive model and
non-private fits.

Data (no network): scikit-learn's breast cancer data (569 tumours, malignant or not; its 30
features reduced to ``--d`` principal components of the public split), statsmodels' ``fair``
(6366 women, any extramarital affair; 8 covariates), ``randhie_any`` (any outpatient visit in a
year of the RAND health insurance experiment: 20,190 person-years, 9 covariates, four binary)
and, for counts, statsmodels' ``randhie`` (outpatient visits ``mdvis``).  Each data set is
shuffled once (``--seed``) and split into a public part (``--public`` of the rows, or that many
rows when ≥ 1), a held-out test part (``--test``, 30 %) and the private rest.  ``randhie``'s
covariates are constant over a person's years (2,760 distinct rows): its split keeps identical
rows together and takes one public row per person (``split_keeping_identical_rows``), so that no
public person is also private.  The releases carry the public rows (after the map) and the
models take them as the covariates' law, the library's default (``--covariate-law gaussian``:
the Gaussian law instead).

Public preprocessing and bound, from the public rows only and the same for every method:

* covariates: Yeo-Johnson power transforms with standardisation fitted on the public rows
  (``--transform yeo-johnson``, the default; ``standardise``: public means and standard
  deviations only), then for breast cancer the public principal axes, scaled to unit variance.
  The noise-aware models take the covariates to be Gaussian: with only standardised breast
  cancer components (skewness up to 1.1) the model fitted to the exact statistics put the
  intercept at 3.3 where the non-private fit has 0.9 (held-out log loss 0.24 against 0.12);
  after the power transforms (skewness within ±0.5) 2.9 against 2.6 (0.16 against 0.13);
* the row-norm bound Bx, per ε: the library's rule, :func:`pm_private.logistic_bounds`
  (counts: :func:`pm_private.poisson_bounds`, with τ the root mean square of the public clipped
  counts) for the private n, d and ε with the public rows after the map, which takes Bx = m√d as
  loose as the noise on Σ y·x allows within its sampling spread and at least the 95 % quantile of
  the public rows' norms; ``--bound-quantile Q``: the Q quantile of the public rows' norms
  instead, for every ε (the stored results below: Q = 0.95); ``--bound-factor F``: F·√d, the
  earlier rule, with F = 3.  The noise of both private releases grows with Bx (the Gaussian
  release's sensitivity √2·(Bx² + 2)); on fair 3√d = 8.5 is twice the 95 % quantile of the norms
  (4.1), and the release's noise four times larger than needed;
* every method is trained on the private rows projected onto the Bx ball (the elastic net then
  clips them to its ℓ1 ball of radius √d·Bx, which holds them), and every method predicts the
  test rows projected onto the same ball.

Per ε and release (``--releases`` per cell), on the private rows, with δ = 10⁻⁶:

* noise-aware: :func:`pm_private.release_logistic_stats` (counts: :func:`pm_private.release_poisson_stats`,
  ``--y-bound``) and :func:`pm_private.logistic_model` (:func:`pm_private.poisson_model`), posterior
  predictive mean on the test rows;
* naive: the same release and model with ``noise_aware=False``;
* elastic net (classification only): :class:`pm_private.logistic.DPElasticNetLogisticRegression`
  (Yu et al. 2014, objective perturbation, ε-DP, Laplace noise, rows on the ℓ1 ball of radius
  √d·Bx) at each penalty of ``--lams``; the table shows
  the best penalty by mean held-out AUC, chosen on the test rows (an optimistic, non-private
  choice that favours the baseline);
* non-private: scikit-learn's unpenalised logistic or Poisson regression on the private rows
  (the same preprocessing and projection).

Reported: held-out log loss, AUC and accuracy (counts: mean Poisson deviance and the mean
log predictive probability of the counts), and the share of the non-private fit's coefficients
inside the noise-aware and naive 90 % intervals and those intervals' median width over the
non-private fit's Wald interval ("width"), the NUTS fit time (one chain, ``--tune`` +
``--draws``, dense mass matrix) and the share of divergent draws.  ``--out FOLDER`` writes every
release's scores (``scores.csv``) and ``report.md`` (the mean (s.e.) table, the comparison of
held-out AUC with the elastic net at ε ≥ 1, the log) after each cell.

    python -m benchmarks.study_glm_real --epsilons 1 --releases 2 --data breast_cancer
    python -m benchmarks.study_glm_real            # every data set, ε ∈ {0.5, 1, 2, 5}, 20 releases

The stored results (``notebooks/results/glm_real_yeo_johnson_q95``):

    python -m benchmarks.study_glm_real --releases 20 --tune 300 --draws 200 --bound-quantile 0.95 \\
        --out notebooks/results/glm_real_yeo_johnson_q95

With a wider prior on the coefficients, β ~ N(0, 10²) instead of the logistic model's default N(0, 2.5²)
(breast cancer only; its non-private first coefficient is 10.7):

    python -m benchmarks.study_glm_real --data breast_cancer --beta-sigma 10 --releases 20 --tune 300 \\
        --draws 200 --bound-quantile 0.95 --out notebooks/results/glm_real_breast_cancer_beta_sigma_10

``randhie_any`` with 50 public people (``notebooks/results/glm_real_randhie_any_public50``, one folder
per covariate law):

    python -m benchmarks.study_glm_real --data randhie_any --epsilons 1 2 --releases 20 --public 50 \\
        --test 0.01 --tune 300 --draws 200 --covariate-law public --out FOLDER

The stored results above them used the Gaussian covariate law (the default until the releases
carried their public rows) and a split that did not keep a person's years together.

Those of ``notebooks/results/glm_real_20_releases`` used the earlier preprocessing and bound
(``--transform standardise --bound-factor 3``; the training rows of the elastic net were then
clipped to its ℓ1 ball only): 6 releases, then 14 more on the same splits, pooled with ``--merge``.
"""

from __future__ import annotations

import argparse
import logging
import os
import time
import warnings

import numpy as np
import pandas as pd
from scipy import stats as sps
from scipy.special import expit
from sklearn.linear_model import LogisticRegression, PoissonRegressor
from sklearn.metrics import accuracy_score, log_loss, roc_auc_score
from sklearn.preprocessing import PowerTransformer
from threadpoolctl import threadpool_limits

from benchmarks.bench_calibration_glm import Fitter
from pm_private.datasets import split_keeping_identical_rows
from pm_private.logistic import (
    DPElasticNetLogisticRegression,
    logistic_bounds,
    logistic_model,
    release_logistic_stats,
    set_logistic_stats,
)
from pm_private.poisson import poisson_bounds, poisson_model, release_poisson_stats, set_poisson_stats
from pm_private.privacy.primitives import project_rows
from pm_private.released.preprocessing import Preprocessing

DELTA = 1e-6
DATA_SETS = ("breast_cancer", "fair", "randhie", "randhie_any")
METRICS = ["log loss", "AUC", "accuracy", "deviance", "log pred.", "coef cover", "width", "fit s", "divergent"]


def load(name: str, d: int):
    """(X, y, kind) of a shipped data set."""
    if name == "breast_cancer":
        from sklearn.datasets import load_breast_cancer

        data = load_breast_cancer()
        return data.data, data.target.astype(int), "binary"
    import statsmodels.api as sm

    if name == "fair":
        frame = sm.datasets.fair.load_pandas().data
        return frame.drop(columns="affairs").to_numpy(float), (frame["affairs"] > 0).astype(int).to_numpy(), "binary"
    frame = sm.datasets.randhie.load_pandas().data
    if name == "randhie_any":  # any outpatient visit in the year: a binary outcome at n = 20,190
        return frame.drop(columns="mdvis").to_numpy(float), (frame["mdvis"] > 0).astype(int).to_numpy(), "binary"
    return frame.drop(columns="mdvis").to_numpy(float), frame["mdvis"].to_numpy(int), "count"


def split(
    X,
    y,
    rng,
    public: float,
    d: int,
    pca: bool,
    *,
    transform: str = "yeo-johnson",
    test_share: float = 0.3,
):
    """Public preprocessing from the public rows only.

    The public rows fix the covariate map: Yeo-Johnson power transforms with standardisation
    (``transform="yeo-johnson"``, scikit-learn's ``PowerTransformer`` fitted on the public rows;
    the noise-aware model takes the covariates to be Gaussian, and skewed covariates bias its
    intercept) or only centring and scaling (``"standardise"``), then for breast cancer the
    public principal components scaled to unit variance.  Returns (private X, y), (test X, y),
    (public X, y), every X after the map (no row projected).
    """
    groups = len(np.unique(X, axis=0))
    if groups == len(y):
        order = rng.permutation(len(y))
        n_public, n_test = (int(public * len(y)) if public < 1 else int(public)), int(test_share * len(y))
        pub, test, private = order[:n_public], order[n_public : n_public + n_test], order[n_public + n_test :]
    else:  # identical rows (randhie: a person's years) stay together; the public rows are distinct people
        n_public = int(public * groups) if public < 1 else int(public)
        pub, test, private = split_keeping_identical_rows(X, rng, [n_public, int(test_share * groups)], count="groups")
        pub = pub[np.unique(X[pub], axis=0, return_index=True)[1]]  # one row per person
    if transform == "yeo-johnson":
        power = PowerTransformer(method="yeo-johnson", standardize=True).fit(X[pub])
        columns = power.transform
    elif transform == "standardise":
        center, scale = X[pub].mean(axis=0), X[pub].std(axis=0)
        scale = np.where(scale > 0, scale, 1.0)

        def columns(rows):
            return (rows - center) / scale
    else:
        raise ValueError(f"unknown transform {transform!r}")
    standardised = columns(X[pub])
    axes = np.eye(X.shape[1])
    if pca:  # the public principal components, scaled to unit variance
        _, _, vt = np.linalg.svd(standardised, full_matrices=False)
        axes = vt[:d].T / (standardised @ vt[:d].T).std(axis=0)

    def transform_rows(rows):
        return columns(rows) @ axes

    return tuple((transform_rows(X[rows]), y[rows]) for rows in (private, test, pub))


def wald_se(fit, X, binary: bool) -> np.ndarray:
    """The slopes' Wald standard errors of an unpenalised scikit-learn logistic or Poisson fit:
    the square roots of the diagonal of the inverse Fisher information (the intercept's row
    and column included in the information)."""
    A = np.column_stack([np.ones(len(X)), X])
    eta = A @ np.concatenate([np.atleast_1d(fit.intercept_), np.ravel(fit.coef_)])
    weight = expit(eta) * (1 - expit(eta)) if binary else np.exp(eta)
    return np.sqrt(np.diag(np.linalg.inv(A.T @ (A * weight[:, None]))))[1:]


def declared_preprocessing(public_rows):
    """A public map under which the two-valued columns of the (mapped) public rows are binary:
    raw r = (t − a)/(b − a) for a column whose public values are a < b only (others as they are),
    and the release's map (r − c)/s with c = −a/(b − a), s = 1/(b − a) back to t; so the model's
    space is unchanged and the columns can be declared binary (``x_kinds``).  Returns the
    Preprocessing (with the public rows on the raw scale) and the map t ↦ r."""
    low, width, kinds = np.zeros(public_rows.shape[1]), np.ones(public_rows.shape[1]), []
    for j, column in enumerate(public_rows.T):
        values = np.unique(column)
        kinds.append("binary" if values.size == 2 else "continuous")
        if values.size == 2:
            low[j], width[j] = values[0], values[1] - values[0]

    def to_raw(rows):
        return (rows - low) / width

    prep = Preprocessing(x_center=-low / width, x_scale=1.0 / width, x_public=to_raw(public_rows), x_kinds=kinds)
    return prep, to_raw


def choose_bound(
    public_rows,
    public_y,
    n: int,
    epsilon: float,
    *,
    binary: bool,
    y_bound: int = 20,
    bound_quantile=None,
    bound_factor=None,
) -> float:
    """The row-norm bound Bx from public figures only: ``bound_factor``·√d, else the
    ``bound_quantile`` quantile of the public rows' norms, else the library's rule
    (:func:`pm_private.logistic_bounds`; counts: :func:`pm_private.poisson_bounds` with τ the root
    mean square of the public counts clipped to ``y_bound``) for n private rows at ε, raised to
    project at most 5 % of the public rows."""
    d = public_rows.shape[1]
    if bound_factor is not None:
        return float(bound_factor * np.sqrt(d))
    if bound_quantile is not None:
        return float(np.quantile(np.linalg.norm(public_rows, axis=1), bound_quantile))
    if binary:
        return logistic_bounds(n, d, epsilon, DELTA, public_X=public_rows).x_bound
    tau = float(np.sqrt(np.mean(np.minimum(public_y, y_bound) ** 2)))
    return poisson_bounds(n, d, epsilon, DELTA, y_bound=y_bound, response_sd=tau, public_X=public_rows).x_bound


def classification_scores(p, y) -> dict:
    p = np.clip(p, 1e-12, 1 - 1e-12)
    return {"log loss": log_loss(y, p), "AUC": roc_auc_score(y, p), "accuracy": accuracy_score(y, p > 0.5)}


def count_scores(rates_draws, y) -> dict:
    """Mean Poisson deviance of the posterior mean rate, mean log predictive probability of the counts."""
    rate = rates_draws.mean(axis=1)
    deviance = 2 * np.mean(np.where(y > 0, y * np.log(np.maximum(y, 1) / rate), 0.0) - (y - rate))
    predictive = sps.poisson.pmf(y[:, None], rates_draws).mean(axis=1)
    return {"deviance": deviance, "log pred.": np.mean(np.log(np.maximum(predictive, 1e-300)))}


def summary(scores: pd.DataFrame) -> pd.DataFrame:
    """Mean (s.e.) per data set, ε and method; the elastic net at its best penalty by mean AUC."""
    keep = []
    for (_, _), cell in scores.groupby(["data", "epsilon"], sort=False):
        net = cell[cell["method"].str.startswith("elastic net")]
        if len(net):
            best = net.groupby("method")["AUC"].mean().idxmax()
            cell = cell[~cell["method"].str.startswith("elastic net") | (cell["method"] == best)]
        keep.append(cell)
    kept = pd.concat(keep)
    metrics = [c for c in METRICS if c in kept and kept[c].notna().any()]
    grouped = kept.groupby(["data", "epsilon", "method"], sort=False)[metrics]
    mean, se = grouped.mean(), grouped.std(ddof=1) / np.sqrt(grouped.count())
    table = mean.copy().astype(object)
    for c in metrics:
        table[c] = [
            "" if np.isnan(m) else (f"{m:.3f}" if np.isnan(e) else f"{m:.3f} ({e:.3f})")
            for m, e in zip(mean[c], se[c], strict=True)
        ]
    table.insert(0, "releases", grouped.size())
    return table.reset_index()


def goal(scores: pd.DataFrame) -> pd.DataFrame:
    """Per classification data set and ε: mean AUC of the noise-aware model against the best elastic net."""
    rows = []
    for (data, eps), cell in scores[scores["AUC"].notna()].groupby(["data", "epsilon"], sort=False):
        net = cell[cell["method"].str.startswith("elastic net")]
        if net.empty or not (cell["method"] == "noise-aware").any():
            continue  # a cell not run yet
        best = net.groupby("method")["AUC"].mean().idxmax()
        aware = cell.loc[cell["method"] == "noise-aware", ["release", "AUC"]].set_index("release")["AUC"]
        other = net.loc[net["method"] == best, ["release", "AUC"]].set_index("release")["AUC"]
        diff = (aware - other).dropna()
        rows.append(
            {
                "data": data,
                "epsilon": eps,
                "noise-aware AUC": aware.mean(),
                "elastic net": best,
                "elastic net AUC": other.mean(),
                "difference": diff.mean(),
                "difference s.e.": diff.std(ddof=1) / np.sqrt(len(diff)) if len(diff) > 1 else np.nan,
                "min noise-aware AUC": aware.min(),
                ">= elastic net": aware.mean() >= other.mean(),
                ">= 0.5": aware.mean() >= 0.5,
            }
        )
    return pd.DataFrame(rows)


def markdown(frame: pd.DataFrame) -> str:
    """A pipe table (no extra dependency)."""
    cells = [
        [f"{v:g}" if key == "epsilon" else f"{v:.3f}" if isinstance(v, float) else str(v) for key, v in row.items()]
        for row in frame.to_dict("records")
    ]
    lines = ["| " + " | ".join(map(str, frame.columns)) + " |", "|" + "---|" * len(frame.columns)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in cells])


def write(folder: str, scores: pd.DataFrame, lines: list, releases: int) -> None:
    """scores.csv (every release and method) and report.md (the tables and the log) in ``folder``."""
    os.makedirs(folder, exist_ok=True)
    scores.to_csv(os.path.join(folder, "scores.csv"), index=False)
    report = [
        f"# Noise-aware private GLMs on shipped data, {releases} releases per cell",
        "",
        "Mean over releases (s.e.); the elastic net at its best penalty by mean held-out AUC.",
        "",
        markdown(summary(scores)),
    ]
    if "AUC" in scores and scores["AUC"].notna().any():
        report += ["", "Goal at ε ≥ 1: mean held-out AUC of the noise-aware model ≥ the elastic net's, ≥ 0.5.", ""]
        met = goal(scores[scores["epsilon"] >= 1])
        report.append(markdown(met) if len(met) else "(no cell at ε ≥ 1 yet)")
    report += ["", "```", *lines, "```", ""]
    with open(os.path.join(folder, "report.md"), "w") as handle:
        handle.write("\n".join(report))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data", nargs="+", default=["breast_cancer", "fair", "randhie"], choices=DATA_SETS, metavar="DATA"
    )
    parser.add_argument("--epsilons", type=float, nargs="+", default=[0.5, 1.0, 2.0, 5.0])
    parser.add_argument("--releases", type=int, default=20)
    parser.add_argument("--d", type=int, default=5, help="principal components of breast cancer")
    parser.add_argument("--public", type=float, default=0.1, help="share of public rows (≥ 1: their number)")
    parser.add_argument(
        "--covariate-law",
        choices=("public", "gaussian", "reference"),
        default="public",
        help="public: the release carries the public rows (after the map) and the models take them as the "
        "covariates' law; gaussian: x_sample=None; reference: the release also declares its two-valued "
        "columns binary (declared_preprocessing) and the models take the reference law",
    )
    parser.add_argument("--test", type=float, default=0.3, help="share of held-out rows")
    parser.add_argument("--y-bound", type=int, default=20)
    parser.add_argument(
        "--transform",
        choices=("yeo-johnson", "standardise"),
        default="yeo-johnson",
        help="public covariate map fitted on the public rows",
    )
    parser.add_argument(
        "--bound-quantile",
        type=float,
        help="Bx: this quantile of the public rows' norms at every ε (default: the library's rule, per ε)",
    )
    parser.add_argument("--bound-factor", type=float, help="Bx = factor·√d instead (the earlier rule: 3)")
    parser.add_argument(
        "--beta-sigma",
        type=float,
        help="prior standard deviation of the coefficients (default: the model's, 1.25 logistic, 1 Poisson)",
    )
    parser.add_argument("--lams", type=float, nargs="+", default=[0.01, 0.1, 1.0])
    parser.add_argument("--tune", type=int, default=500)
    parser.add_argument("--draws", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--release-seed", type=int, help="draw the releases from this seed (the split stays --seed's): more releases"
    )
    parser.add_argument("--out", help="folder for scores.csv (every release and method) and report.md")
    parser.add_argument(
        "--merge", nargs="+", metavar="CSV", help="only write --out's report of these runs' scores.csv, pooled"
    )
    args = parser.parse_args(argv)
    if args.merge:
        parts = [pd.read_csv(path) for path in args.merge]
        for index, part in enumerate(parts):  # release numbers unique across runs
            part["release"] += 1000 * index
        scores = pd.concat(parts, ignore_index=True)
        private = scores["method"] != "non-private"
        scores = pd.concat([scores[~private].drop_duplicates(["data", "epsilon"]), scores[private]])
        counts = scores[scores["method"] == "noise-aware"].groupby(["data", "epsilon"]).size()
        pooled = [f"pooled from {', '.join(args.merge)}"]
        write(
            args.out, scores.sort_values(["data", "epsilon"], kind="stable"), pooled, f"{counts.min()}–{counts.max()}"
        )
        return
    threadpool_limits(1, user_api="blas")
    warnings.filterwarnings("ignore")
    logging.getLogger("pymc").setLevel(logging.ERROR)
    start = time.perf_counter()
    records, lines = [], []

    def say(text):
        print(text, flush=True)
        lines.append(text)

    for name in args.data:
        rng = np.random.default_rng(args.seed)
        X, y, kind = load(name, args.d)
        (X_private, yp), (X_test, yt), (X_public, y_public) = split(
            X, y, rng, args.public, args.d, pca=name == "breast_cancer", transform=args.transform, test_share=args.test
        )
        if args.release_seed is not None:  # the same split, other releases
            rng = np.random.default_rng([args.seed, args.release_seed])
        binary = kind == "binary"
        say(f"\n{name}: n = {len(yp)} private, {len(yt)} test rows, d = {X_private.shape[1]}, {args.transform}")
        fitter = None
        for eps in args.epsilons:
            bound = choose_bound(
                X_public,
                y_public,
                len(yp),
                eps,
                binary=binary,
                y_bound=args.y_bound,
                bound_quantile=args.bound_quantile,
                bound_factor=args.bound_factor,
            )
            clipped = np.mean(np.linalg.norm(X_private, axis=1) > bound)
            Xp = project_rows(X_private, bound)  # every method trains on the same bounded rows
            Xt = project_rows(X_test, bound)  # and predicts the test rows projected onto the same ball
            if binary:
                exact = LogisticRegression(C=1e6, max_iter=10000).fit(Xp, yp)
                reference = exact.coef_[0]
                baseline = classification_scores(exact.predict_proba(Xt)[:, 1], yt)
            else:
                exact = PoissonRegressor(alpha=0.0, max_iter=10000).fit(Xp, yp)
                reference = exact.coef_
                baseline = count_scores(exact.predict(Xt)[:, None], yt)
            wald = 2 * 1.6449 * wald_se(exact, Xp, binary)  # the non-private 90 % interval's width
            say(f"  ε = {eps:g}: Bx = {bound:.2f} ({clipped:.1%} of the private rows projected)")
            say("    non-private: " + ", ".join(f"{k} {v:.3f}" for k, v in baseline.items()))
            l1_bound = bound * np.sqrt(Xp.shape[1])  # the ℓ1 ball holding the ℓ2 ball of radius Bx
            records.append({"data": name, "epsilon": eps, "release": 0, "method": "non-private", **baseline})
            carried = Preprocessing(x_public=X_public, x_kinds=None)  # the public rows after the map; identity
            rows = Xp
            if args.covariate_law == "reference":
                carried, to_raw = declared_preprocessing(X_public)
                rows = to_raw(Xp)  # which the release's map takes back to Xp exactly
            for release_index in range(args.releases):
                if binary:
                    release = release_logistic_stats(
                        rows, yp, epsilon=eps, delta=DELTA, x_bound=bound, preprocessing=carried, rng=rng
                    )
                else:
                    release = release_poisson_stats(
                        rows,
                        yp,
                        epsilon=eps,
                        delta=DELTA,
                        x_bound=bound,
                        y_bound=args.y_bound,
                        preprocessing=carried,
                        rng=rng,
                    )
                if fitter is None:
                    build = logistic_model if binary else poisson_model
                    prior = {} if args.beta_sigma is None else {"beta_sigma": args.beta_sigma}
                    if args.covariate_law == "gaussian":
                        prior["x_sample"] = None
                    model = build(release, **prior)
                    law = "Gaussian" if "x_sample_whitened" not in model else "the public rows"
                    law = "the reference law" if "x_sample_jackknife" not in model and law != "Gaussian" else law
                    say(f"    covariate law: {law} ({len(X_public)} public rows)")
                    seed = args.seed if args.release_seed is None else 1_000_000 * args.release_seed
                    fitter = Fitter(model, draws=args.draws, tune=args.tune, seed=seed)
                for label, aware in (("noise-aware", True), ("naive", False)):
                    (set_logistic_stats if binary else set_poisson_stats)(release, fitter.model, noise_aware=aware)
                    divergent = fitter.divergent
                    beta = fitter.fit()
                    eta = Xt @ beta.T + fitter.last_intercept
                    lo, hi = np.quantile(beta, [0.05, 0.95], axis=0)
                    records.append(
                        {
                            "data": name,
                            "epsilon": eps,
                            "release": release_index,
                            "method": label,
                            **(
                                classification_scores(expit(eta).mean(axis=1), yt)
                                if binary
                                else count_scores(np.exp(eta), yt)
                            ),
                            "coef cover": np.mean((lo <= reference) & (reference <= hi)),
                            "width": float(np.median((hi - lo) / wald)),
                            "fit s": fitter.times[-1],
                            "divergent": (fitter.divergent - divergent) / args.draws,
                        }
                    )
                if binary:
                    for lam in args.lams:
                        net = DPElasticNetLogisticRegression(
                            epsilon=eps, lam=lam, x_bound=l1_bound, too_weak="add_ridge", rng=rng
                        ).fit(Xp, yp)
                        scores = classification_scores(net.predict_proba(Xt)[:, 1], yt)
                        records.append(
                            {
                                "data": name,
                                "epsilon": eps,
                                "release": release_index,
                                "method": f"elastic net λ={lam:g}",
                                **scores,
                            }
                        )
            cell = summary(pd.DataFrame(records).query("data == @name and epsilon == @eps"))
            for row in cell.itertuples(index=False):
                say(
                    f"  ε = {eps:g}, "
                    + ", ".join(f"{k} {v}" for k, v in zip(cell.columns[2:], row[2:], strict=True) if v != "")
                )
            if args.out:  # after every cell, so that an interrupted run keeps what it measured
                write(args.out, pd.DataFrame(records), lines, args.releases)
        say(
            f"  {name}: NUTS fit {np.median(fitter.times):.1f} s median, {max(fitter.times):.1f} s max "
            f"(one chain, {args.tune} + {args.draws}); load average {os.getloadavg()[0]:.2f}"
        )
    say(f"total {time.perf_counter() - start:.0f} s, {args.releases} releases per cell")
    if args.out:
        write(args.out, pd.DataFrame(records), lines, args.releases)


if __name__ == "__main__":
    main()

"""Private drug-sensitivity prediction: the experiment of Honkela et al. (2018, §4.5) in small.

For each drug and Monte Carlo repeat, the cell lines with an observed response are split into
100 test lines, ``n_public`` non-private lines and a pool of private lines, of which the first
100…800 are used.  Preprocessing (``pm_private.linear.preprocess``): genes are centred with the
**public** lines' means and each row is scaled to unit L2 norm (so |xᵢⱼ| ≤ 1 is a public bound);
responses are centred with the public lines' mean.  σx and σy for bound tuning are the public
lines' standard deviations.  As in the paper the statistics have no intercept column (every
release and ``linear_stats`` call passes ``intercept=False``): the public centring stands in for
it; and the models keep the paper's Gamma(2, 2) prior of the prior precision λ₀
(``prior_precision_beta=2.0``).  Methods:

* ``non-private LR``: Honkela et al.'s (2018) Bayesian model on exact statistics of public + private lines;
* ``robust private LR``: clipped, Laplace-perturbed private statistics (split and bounds from
  the paper's tuning procedure, ``pm_private.linear.bounds._tune_release``, i.e. on synthetic
  data only) plus exact public statistics;
* ``private LR (no projection)``: the same release with bounds at the public range of the data
  (Bx = 1 from the unit-norm rows, By = max |y| over the public lines), split (0.6, 0.35, 0.05);
* ``noise-aware private LR``: the model of Bernstein & Sheldon (2019) (``linear_model``'s
  default for private releases: the release noise is part of the likelihood) on public + private
  statistics, the private ones released by the Gaussian mechanism like AdaSSP's ((ε, δ = 1e-5),
  ‖x‖ ≤ 1, the same By), whose noise-aware likelihood costs O(d³) (``--genes 64`` works); the
  covariate covariance has a Wishart prior up to 20 genes and is integrated out above
  (``x_cov="integrated"``: the likelihood conditions on the released Sxx, d + 2 latent
  parameters whatever d is);
* ``AdaSSP``: Wang (2018) on the private lines, (ε, δ = 1e-5)-DP, ‖x‖ ≤ 1, same By; a point estimate.

``robust private LR`` keeps Honkela et al.'s (2018) model and prediction exactly
(``noise_aware=False``), so the paper's comparison stays visible.

The Bayesian models are fitted with mean-field ADVI, all drugs × repeats of one setting at once
(:class:`pm_private.sampling.advi.RefittableADVI` on a batched model, compiled once); predictions are the
posterior mean of xᵀβ.  Scores on the test lines: Spearman's rank correlation (the paper's) and the
held-out R² = 1 − Σ(y − ŷ)²/Σ(y − ȳ)².  Noise in this experiment is drawn from a seeded generator so the study is
reproducible: its outputs are marked not private and the experiment is a simulation of the
mechanism, not a release.

Run ``pm-private demo --help`` (or ``python -m models.linear_drug_sensitivity --help`` from the repository).
"""

from __future__ import annotations

import argparse
import logging
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .. import linear_stats, release_linear_stats
from .._engine.threads import single_threaded_blas
from ..datasets import load_gdsc, make_gdsc_like
from ..linear.adaptive_ssp import adassp
from ..linear.bounds import _tune_release
from ..linear.predict import r_squared, spearman
from ..privacy.argtypes import epsilon as epsilon_type
from ..privacy.argtypes import existing_file, nonnegative_int, output_folder, positive_int
from ..released.preprocessing import preprocess

METHODS = ("non-private LR", "robust private LR", "private LR (no projection)", "noise-aware private LR", "AdaSSP")
ADASSP_DELTA = 1e-5
N_TEST = 100  # test cell lines per drug and repeat
X_COV_WISHART_MAX_GENES = 20  # largest d whose noise-aware fit uses the Wishart Σx prior
#: PyTensor's backend of each model's ADVI step (noise-aware or not): the one whose first compile on
#: an empty cache is the shorter (the Samplers page of the documentation has the times).
ADVI_COMPILE = {True: {"mode": "CVM"}, False: {"mode": "NUMBA"}}
#: PyTensor's backend of the calibration study's NUTS (both models): Numba, the shorter first
#: compile and the faster sampling of the two (the Samplers page has the times).
NUTS_COMPILE = {"mode": "NUMBA"}


@dataclass(frozen=True)
class Split:
    """One drug × repeat: preprocessed test, public and private-pool rows."""

    X_test: np.ndarray
    y_test: np.ndarray
    X_public: np.ndarray
    y_public: np.ndarray
    X_pool: np.ndarray
    y_pool: np.ndarray


def make_split(X, y, *, n_test: int, n_public: int, rng: np.random.Generator) -> Split:
    """Random test / public / private split; centring and scales from the public rows only."""
    X, y = np.asarray(X, float), np.asarray(y, float)
    order = rng.permutation(len(y))
    test, public, pool = order[:n_test], order[n_test : n_test + n_public], order[n_test + n_public :]
    center = X[public].mean(axis=0)
    y_center = y[public].mean()
    prep = lambda rows: preprocess(X[rows], center=center)  # noqa: E731
    return Split(prep(test), y[test] - y_center, prep(public), y[public] - y_center, prep(pool), y[pool] - y_center)


def drug_splits(data, drugs, *, genes: int, repeats: int, n_test: int, n_public: int, max_private: int, seed: int):
    """Splits for every (drug, repeat), drugs with too few observed lines are refused."""
    rng = np.random.default_rng(seed)
    splits = {}
    for drug in drugs:
        X, y = data.drug(drug, genes=genes)
        needed = n_test + n_public + max_private
        if len(y) < needed:
            raise ValueError(f"drug {drug} has {len(y)} observed cell lines, the design needs {needed}")
        for repeat in range(repeats):
            splits[drug, repeat] = make_split(X, y, n_test=n_test, n_public=n_public, rng=rng)
    return splits


def _statistics(method, split: Split, n_private, epsilon, tuned, rng):
    """Statistics the Bayesian model is fitted to, for one split and setting."""
    X, y = split.X_pool[:n_private], split.y_pool[:n_private]
    public = linear_stats(split.X_public, split.y_public, intercept=False)
    if method == "non-private LR":
        return public + linear_stats(X, y, intercept=False)
    if method == "noise-aware private LR":
        # The Gaussian release, like AdaSSP's ((ε, δ)-DP, rows of norm ≤ 1 after the row
        # normalisation, |y| ≤ the public maximum): its noise-aware likelihood costs O(d³), so
        # --genes 64 stays tractable.
        release = release_linear_stats(
            X,
            y,
            epsilon=epsilon,
            delta=ADASSP_DELTA,
            x_bound=1.0,
            y_bound=np.abs(split.y_public).max(),
            rng=rng,
            intercept=False,
        )
        return public + release
    if method == "robust private LR":
        bounds = dict(x_bound=tuned.x_bound, y_bound=tuned.y_bound, split=tuned.split)
    else:
        bounds = dict(x_bound=1.0, y_bound=np.abs(split.y_public).max())
    return public + release_linear_stats(X, y, noise="laplace", epsilon=epsilon, rng=rng, **bounds, intercept=False)


def design_problem(data, *, n_drugs: int, genes: int, needed: int) -> str | None:
    """Why ``data`` cannot support the design (too few genes, or drugs with ``needed`` observed
    cell lines), or None."""
    if genes > len(data.genes):
        return f"--genes {genes} asked, but the data have {len(data.genes)} genes"
    observed = data.response.notna().sum()
    usable = sum(observed[d] >= needed for d in data.drugs)
    if usable < n_drugs:
        return f"only {usable} drugs have the {needed} observed cell lines the design needs (--drugs {n_drugs})"
    return None


@single_threaded_blas()  # batched small matrices: threads only add synchronisation
def run_experiment(
    data=None,
    *,
    n_drugs: int = 3,
    genes: int = 10,
    private_sizes=(100, 200, 400, 800),
    epsilons=(1.0, 2.0),
    repeats: int = 5,
    n_test: int = N_TEST,
    n_public: int = 30,
    advi_steps: int = 3000,
    seed: int = 0,
    progress: bool = True,
    methods=METHODS,
) -> pd.DataFrame:
    """Spearman correlation and held-out R² on test lines for every method × private size × ε ×
    drug × repeat.

    ``data`` defaults to the built-in GDSC-shaped stand-in (``make_gdsc_like(seed=seed)``);
    ``methods`` is a subset of :data:`METHODS`.  Returns a long DataFrame with columns method,
    n_private, epsilon, drug, repeat, spearman, r2 (ε is NaN for the non-private method).
    """
    import warnings

    # The C backend warns that it found no BLAS to link; these graphs are d×d with d ≈ 10.
    warnings.filterwarnings("ignore", message="PyTensor could not link to a BLAS")

    unknown = sorted(set(methods) - set(METHODS))
    if unknown or not methods:
        raise ValueError(f"methods must be a non-empty subset of {METHODS}, got unknown {unknown}")
    data = make_gdsc_like(seed=seed) if data is None else data
    problem = design_problem(data, n_drugs=n_drugs, genes=genes, needed=n_test + n_public + max(private_sizes))
    if problem:
        raise ValueError(problem)
    observed = data.response.notna().sum()
    needed = n_test + n_public + max(private_sizes)
    drugs = [d for d in data.drugs if observed[d] >= needed][:n_drugs]
    splits = drug_splits(
        data,
        drugs,
        genes=genes,
        repeats=repeats,
        n_test=n_test,
        n_public=n_public,
        max_private=max(private_sizes),
        seed=seed,
    )
    keys = list(splits)
    noise_rng = np.random.default_rng(seed + 1)
    public_scales = np.array([[s.X_public.std(), s.y_public.std()] for s in splits.values()]).mean(axis=0)

    settings = [("non-private LR", n, np.nan) for n in private_sizes if "non-private LR" in methods]
    settings += [(m, n, e) for m in METHODS[1:] if m in methods for n in private_sizes for e in epsilons]
    rows = []
    fitters = {}
    tuned_cache = {}
    with _progress(progress) as bar:
        task = bar.add_task("drug sensitivity", total=len(settings)) if bar else None
        for method, n_private, epsilon in settings:
            if method == "AdaSSP":
                rows += _adassp_rows(splits, n_private, epsilon, noise_rng)
            else:
                tuned = None
                if method == "robust private LR":
                    key = (method, n_private, epsilon)
                    if key not in tuned_cache:
                        tuned_cache[key] = _tune_release(n_private, genes, epsilon, *public_scales, rng=seed)
                    tuned = tuned_cache[key]
                stats = [_statistics(method, splits[k], n_private, epsilon, tuned, noise_rng) for k in keys]
                fit = dict(names=list(data.genes[:genes]), advi_steps=advi_steps, seed=seed)
                beta = _bayes_coefficients(fitters, method == "noise-aware private LR", stats, **fit)
                for (drug, repeat), b in zip(keys, beta, strict=True):
                    s = splits[drug, repeat]
                    rows.append((method, n_private, epsilon, drug, repeat, *_scores(s, s.X_test @ b)))
            if bar:
                bar.update(task, advance=1, description=f"{method}, n={n_private}, ε={epsilon:g}")
    return pd.DataFrame(rows, columns=["method", "n_private", "epsilon", "drug", "repeat", "spearman", "r2"])


def _adassp_rows(splits, n_private, epsilon, noise_rng) -> list[tuple]:
    """Score rows of AdaSSP (Wang 2018) on every split at one private size and ε."""
    rows = []
    for (drug, repeat), s in splits.items():
        fit = adassp(
            s.X_pool[:n_private],
            s.y_pool[:n_private],
            epsilon=epsilon,
            delta=ADASSP_DELTA,
            x_bound=1.0,
            y_bound=np.abs(s.y_public).max(),
            rng=noise_rng,
        )
        rows.append(("AdaSSP", n_private, epsilon, drug, repeat, *_scores(s, fit.predict(s.X_test))))
    return rows


def _bayes_coefficients(fitters: dict, aware: bool, stats: list, *, names, advi_steps: int, seed: int):
    """Posterior means of β for every split's statistics by batched ADVI (one fitter per
    ``aware``, built on first use and refitted after ``set_linear_stats``)."""
    from ..linear.model import linear_model, set_linear_stats
    from ..sampling.advi import RefittableADVI

    if aware not in fitters:
        # Above 20 genes the Wishart prior's d(d+1)/2 latent covariances make batched
        # ADVI slow; the covariate model is integrated out instead (d + 2 parameters).
        x_cov = ("wishart" if len(names) <= X_COV_WISHART_MAX_GENES else "integrated") if aware else None
        model = linear_model(
            stats,
            noise_aware=aware,
            feature_names=names,
            x_cov=x_cov,
            prior_precision_beta=2.0,  # the paper's Gamma(2, 2) prior of λ₀ on unit-norm rows
        )
        fitters[aware] = RefittableADVI(model, random_seed=seed, compile_kwargs=ADVI_COMPILE[aware])
    else:
        set_linear_stats(stats, fitters[aware].model)
    fitters[aware].fit(advi_steps)
    return fitters[aware].expectation("beta") if aware else fitters[aware].mean("beta")


def _scores(split: Split, prediction) -> tuple[float, float]:
    """(Spearman, held-out R²) of a prediction of the split's test responses."""
    return spearman(split.y_test, prediction), r_squared(split.y_test, prediction)


CALIBRATION_PRIOR = dict(
    noise_precision_alpha=10.0, noise_precision_beta=10.0, prior_precision_alpha=10.0, prior_precision_beta=10.0
)


@single_threaded_blas()
def calibration_study(
    *,
    reps: int = 8,
    n: int = 500,
    d: int = 2,
    epsilon: float = 1.0,
    levels=(0.1, 0.3, 0.5, 0.7, 0.9),
    draws: int = 300,
    seed: int = 0,
) -> pd.DataFrame:
    """Coverage of central credible intervals of β, noise-aware vs Honkela et al. (2018), on data
    drawn from the model itself (simulation-based calibration, as in Bernstein & Sheldon 2019).

    Per replicate: λ₀, λ ~ Gamma(10, 10), β ~ N(0, I/λ₀), Σx ~ Wishart(d + 2, I/(d + 2)),
    x ~ N(0, Σx), y = xᵀβ + N(0, 1/λ); release with ε (Bx = 4, By = 4·√(2(d+1)), seeded noise: a
    simulation); both models (same priors) by NUTS, each compiled once.  Returns one row per
    model and level with the fraction of the reps × d coefficients inside the interval, and the
    model's convergence summary, since PyMC's own checks are off here: ``divergent``, the share of
    divergent draws over all fits, and ``max_rhat``, the largest split R̂ of a coefficient over
    the fits (the one chain of a fit cut in two halves).
    """
    import arviz as az
    import pymc as pm

    from ..linear.model import linear_model, set_linear_stats

    rng = np.random.default_rng(seed)
    hits = {True: [], False: []}
    divergent = {True: 0, False: 0}
    rhat = {True: 1.0, False: 1.0}
    fitters = {}
    with quiet_sampler():  # one study of many short runs: no per-run log lines
        for rep in range(reps):
            lam0, lam = rng.gamma(10.0, 0.1), rng.gamma(10.0, 0.1)
            beta = rng.standard_normal(d) / np.sqrt(lam0)
            T = rng.standard_normal((d + 2, d)) / np.sqrt(d + 2)
            X = rng.standard_normal((n, d)) @ np.linalg.cholesky(T.T @ T).T
            y = X @ beta + rng.standard_normal(n) / np.sqrt(lam)
            stats = release_linear_stats(
                X,
                y,
                noise="laplace",
                epsilon=epsilon,
                x_bound=4.0,
                y_bound=4 * np.sqrt(2 * (d + 1)),
                rng=rng,
                intercept=False,
            )
            for aware in (True, False):
                if aware not in fitters:
                    model = linear_model(stats, noise_aware=aware, x_scale=1.0, **CALIBRATION_PRIOR)
                    with model:
                        fitters[aware] = (model, pm.NUTS(compile_kwargs=NUTS_COMPILE))
                model, step = fitters[aware]
                set_linear_stats(stats, model)
                with model:
                    idata = pm.sample(
                        draws,
                        tune=draws,
                        step=step,
                        chains=1,
                        progressbar=False,
                        random_seed=seed + rep,
                        compute_convergence_checks=False,  # summarised below instead, once per model
                    )
                post = idata.posterior["beta"].values[0]
                divergent[aware] += int(idata.sample_stats["diverging"].sum())
                halves = post[: 2 * (draws // 2)].reshape(2, draws // 2, -1)
                rhat[aware] = max(rhat[aware], float(np.nanmax(az.rhat(halves))))
                lo = np.quantile(post, [(1 - q) / 2 for q in levels], axis=0)
                hi = np.quantile(post, [(1 + q) / 2 for q in levels], axis=0)
                hits[aware].append((lo <= beta) & (beta <= hi))  # (levels, d)
    rows = []
    for aware, label in ((True, "noise-aware"), (False, "Honkela et al. 2018")):
        inside = np.stack(hits[aware])  # (reps, levels, d)
        for j, q in enumerate(levels):
            per_rep = inside[:, j].mean(axis=1)
            rows.append(
                (
                    label,
                    q,
                    per_rep.mean(),
                    per_rep.std(ddof=1) / np.sqrt(reps),
                    divergent[aware] / (reps * draws),
                    rhat[aware],
                )
            )
    return pd.DataFrame(rows, columns=["model", "level", "coverage", "se", "divergent", "max_rhat"])


def plot_calibration(coverage: pd.DataFrame, path: Path | None = None, ax=None):
    """Empirical coverage against nominal level (the diagonal is perfect calibration)."""
    import matplotlib.pyplot as plt

    own = ax is None
    if own:
        fig, ax = plt.subplots(figsize=(4.5, 4.2))
    for label, part in coverage.groupby("model", sort=False):
        ax.errorbar(part.level, part.coverage, yerr=part.se, marker="o", capsize=3, label=label)
    ax.plot([0, 1], [0, 1], color="grey", lw=0.8, ls="--")
    ax.set(
        xlabel="nominal level of the central interval",
        ylabel="coverage of the true β",
        xlim=(0, 1),
        ylim=(0, 1),
        title="Calibration on data from the model",
    )
    ax.legend(fontsize=8)
    if own and path is not None:
        ax.figure.tight_layout()
        ax.figure.savefig(path, dpi=120)
        plt.close(ax.figure)
    return ax


@contextmanager
def quiet_sampler():
    """Silence PyMC's per-run log lines (initialisation, "Sampling 1 chain…", the divergence
    count of one short run) and PyTensor's "Using NumPy C-API based implementation for BLAS
    functions" inside the block, restoring the loggers' levels after it.

    Yields
    ------
    None
        The block runs with the two loggers at ERROR.
    """
    loggers = [logging.getLogger(name) for name in ("pymc", "pytensor.tensor.blas")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)


def _progress(enabled: bool):
    from contextlib import nullcontext

    if not enabled:
        return nullcontext(None)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(TextColumn("{task.description:<40}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())


def summarise(results: pd.DataFrame) -> pd.DataFrame:
    """Mean Spearman ± standard error over drugs × repeats, one row per method × size × ε."""
    table = results.assign(epsilon=results.epsilon.fillna(np.inf)).groupby(
        ["method", "epsilon", "n_private"], sort=False
    )
    summary = table.spearman.agg(["mean", "std", "count"])
    summary["se"] = summary["std"] / np.sqrt(summary["count"])
    return summary.reset_index()


def format_table(summary: pd.DataFrame) -> str:
    """Method × ε rows, private sizes as columns, 'mean ± se' cells."""
    cells = summary.assign(cell=[f"{m:+.3f} ± {s:.3f}" for m, s in zip(summary["mean"], summary["se"], strict=True)])
    cells["ε"] = cells.epsilon.map(lambda e: "—" if np.isinf(e) else f"{e:g}")
    wide = cells.pivot(index=["method", "ε"], columns="n_private", values="cell")
    order = [(m, e) for m in METHODS for e in cells.loc[cells.method == m, "ε"].unique()]
    wide = wide.loc[order]
    wide.columns = [f"n={c}" for c in wide.columns]
    return wide.to_string()


def plot(summary: pd.DataFrame, path: Path) -> None:
    """Spearman vs private-data size, one panel per ε (non-private LR drawn in each)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    epsilons = sorted(e for e in summary.epsilon.unique() if np.isfinite(e))
    width = max(5 * len(epsilons), 7)  # room for the title above a single panel
    fig, axes = plt.subplots(1, len(epsilons), figsize=(width, 4), sharey=True, squeeze=False)
    for ax, eps in zip(axes[0], epsilons, strict=True):
        for method in METHODS:
            part = summary[(summary.method == method) & ((summary.epsilon == eps) | np.isinf(summary.epsilon))]
            if len(part):
                ax.errorbar(part.n_private, part["mean"], yerr=part["se"], marker="o", capsize=3, label=method)
        ax.set(title=f"ε = {eps:g}", xlabel="private cell lines", xscale="log")
        ax.minorticks_off()
        ax.set_xticks(sorted(summary.n_private.unique()), [str(n) for n in sorted(summary.n_private.unique())])
        ax.axhline(0, color="grey", lw=0.5)
    axes[0][0].set_ylabel("Spearman correlation (test lines)")
    axes[0][-1].legend(fontsize=8)
    fig.suptitle("Private drug-sensitivity prediction (GDSC-shaped synthetic data)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


#: The full study: the defaults of ``python -m models.linear_drug_sensitivity`` and the settings of
#: ``pm-private demo drug-sensitivity --full``.
FULL = dict(
    drugs=3,
    genes=10,
    sizes=[100, 200, 400, 800],
    epsilons=[1.0, 2.0],
    repeats=5,
    public=30,
    advi_steps=3000,
    calibration_reps=8,
)


def add_study_arguments(parser: argparse.ArgumentParser, defaults: dict | None = None) -> None:
    """Add the study's arguments (design, data files) to ``parser``, each type- and range-checked
    while parsing.

    Parameters
    ----------
    parser : argparse.ArgumentParser
    defaults : dict, optional
        The default of each setting of :data:`FULL`; None leaves every default None, for a caller
        that chooses the settings after parsing (``pm-private demo`` and its ``--quick``).
    """
    given = dict.fromkeys(FULL) if defaults is None else defaults
    study = parser.add_argument_group("drug-sensitivity study (the full study's value in brackets)")
    study.add_argument("--drugs", type=positive_int, default=given["drugs"], help="number of drugs [3]")
    study.add_argument("--genes", type=positive_int, default=given["genes"], help="first k genes as covariates [10]")
    study.add_argument(
        "--sizes", type=positive_int, nargs="+", default=given["sizes"], help="private data sizes [100 200 400 800]"
    )
    study.add_argument(
        "--epsilons", type=epsilon_type, nargs="+", default=given["epsilons"], help="privacy budgets ε (> 0) [1 2]"
    )
    study.add_argument(
        "--repeats", type=positive_int, default=given["repeats"], help="Monte Carlo repeats [5; paper: 50]"
    )
    study.add_argument("--public", type=positive_int, default=given["public"], help="non-private cell lines [30]")
    study.add_argument(
        "--advi-steps", type=positive_int, default=given["advi_steps"], help="ADVI iterations per fit [3000]"
    )
    study.add_argument(
        "--calibration-reps",
        type=nonnegative_int,
        default=given["calibration_reps"],
        help="replicates of the calibration study (0 skips it) [8]",
    )
    study.add_argument("--expression", type=existing_file, help="real GDSC expression file (with --responses)")
    study.add_argument("--responses", type=existing_file, help="real GDSC fitted dose-response file")


def build_parser(parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    """The study's command line (``python -m models.linear_drug_sensitivity``); every value is
    type- and range-checked while parsing."""
    parser = parser or argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_study_arguments(parser, FULL)
    parser.add_argument("--seed", type=nonnegative_int, default=0)
    parser.add_argument("--out", type=output_folder, default=Path("results"), help="output folder (default results/)")
    parser.add_argument("--no-progress", action="store_true")
    return parser


def check_args(args: argparse.Namespace, parser: argparse.ArgumentParser):
    """Checks across arguments and of the design against the data, before any fit; errors go
    through ``parser.error`` (exit 2).  Returns the data (built-in, or the GDSC files given)."""
    if (args.expression is None) != (args.responses is None):
        parser.error("--expression and --responses go together")
    try:
        args.out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        parser.error(f"--out: cannot create {str(args.out)!r}: {error.strerror}")
    data = load_gdsc(args.expression, args.responses) if args.expression else make_gdsc_like(seed=args.seed)
    problem = design_problem(data, n_drugs=args.drugs, genes=args.genes, needed=N_TEST + args.public + max(args.sizes))
    if problem:
        parser.error(problem)
    return data


def run_study(args: argparse.Namespace, data, *, progress: bool, methods=METHODS) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The experiment of :func:`run_experiment` at the settings of ``args`` with ``methods``;
    returns the results and their :func:`summarise` table."""
    with quiet_sampler():
        results = run_experiment(
            data,
            n_drugs=args.drugs,
            genes=args.genes,
            private_sizes=tuple(args.sizes),
            epsilons=tuple(args.epsilons),
            repeats=args.repeats,
            n_public=args.public,
            advi_steps=args.advi_steps,
            seed=args.seed,
            progress=progress,
            methods=methods,
        )
    return results, summarise(results)


def write_study(results: pd.DataFrame, summary: pd.DataFrame, out: Path) -> list[Path]:
    """Write the results CSV and the Spearman picture into ``out``; returns their paths."""
    paths = [out / "drug_sensitivity_results.csv", out / "drug_sensitivity.png"]
    results.to_csv(paths[0], index=False)
    plot(summary, paths[1])
    return paths


def calibration_report(reps: int, seed: int, out: Path) -> tuple[str, Path]:
    """Run :func:`calibration_study` (d = 2, n = 500, ε = 1), draw its picture into ``out``;
    returns the coverage and convergence tables as text, and the picture's path."""
    import matplotlib

    matplotlib.use("Agg")
    coverage = calibration_study(reps=reps, seed=seed)
    path = out / "calibration.png"
    plot_calibration(coverage, path)
    health = coverage.groupby("model", sort=False)[["divergent", "max_rhat"]].first()
    text = "\n".join(
        [
            f"Coverage of central intervals of β on data from the model (d = 2, n = 500, ε = 1, {reps} replicates):",
            coverage.pivot(index="level", columns="model", values="coverage").round(2).to_string(),
            "NUTS convergence (share of divergent draws; largest split R̂ of a coefficient over the fits):",
            health.round(3).to_string(),
        ]
    )
    return text, path


def main(args: argparse.Namespace | None = None) -> pd.DataFrame:
    """Run the study with parsed ``args`` (parsed from the command line if None)."""
    parser = build_parser()
    if args is None:
        args = parser.parse_args()
    data = check_args(args, parser)
    results, summary = run_study(args, data, progress=not args.no_progress and sys.stdout.isatty())
    paths = write_study(results, summary, args.out)
    print(
        f"\nMean Spearman correlation ± s.e. over {args.drugs} drugs × {args.repeats} repeats "
        f"({'real GDSC files' if args.expression else 'GDSC-shaped synthetic data'}, {args.genes} genes):"
    )
    print(format_table(summary))
    print(f"\nwrote {paths[0]} and {paths[1]}")
    if args.calibration_reps > 0:
        text, path = calibration_report(args.calibration_reps, args.seed, args.out)
        print(f"\n{text}\nwrote {path}")
    return results

"""The dimension curve of the drug-sensitivity experiment of Honkela et al. (2018): test accuracy
against the number of genes.

Honkela et al. (2018) reduce gene expression to the 64 cancer genes of the GDSC panel and show how
accuracy changes with the dimension.  This study reruns the experiment of :mod:`pm_private.demo`
(:func:`pm_private.demo.run_experiment`: built-in GDSC-shaped data, 985 cell lines, rows
normalised to unit length with the public lines' centring, 100 test lines and 30 public lines per
drug and repeat) at one private size for d ∈ {5, 10, 20, 40, 64} genes and ε ∈ {1, 2}, with

* ``noise-aware private LR``: the Gaussian release ((ε, 10⁻⁵)-DP) and the noise-aware model of
  Bernstein & Sheldon (2019) (Wishart covariate prior up to 20 genes, the covariate model
  integrated out above);
* ``robust private LR``: Honkela et al.'s (2018) model on their clipped Laplace release;
* ``AdaSSP``: Wang (2018), (ε, 10⁻⁵)-DP;
* ``non-private LR``: Honkela et al.'s model on exact statistics.

Scores on the test lines: Spearman's rank correlation and held-out R² = 1 − Σ(y − ŷ)²/Σ(y − ȳ)²,
mean ± standard error over drugs × repeats.  Noise is seeded: a simulation, not a release.

    python -m models.linear_dimension_curve                  # 3 drugs × 10 repeats, 800 private lines
    python -m models.linear_dimension_curve --quick          # 5 and 10 genes, 1 drug × 2 repeats
    python -m models.linear_dimension_curve --out results/   # where the CSVs and the plot go
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from pm_private.demo import quiet_sampler, run_experiment
from pm_private.privacy.argtypes import epsilon as epsilon_type
from pm_private.privacy.argtypes import nonnegative_int, output_folder, positive_int

METHODS = ("noise-aware private LR", "robust private LR", "AdaSSP", "non-private LR")
GENES = (5, 10, 20, 40, 64)
SCORES = ("spearman", "r2")
SUMMARY_FILE = "dimension_curve.csv"
RESULTS_FILE = "dimension_curve_results.csv"
PLOT_FILE = "dimension_curve.png"
R2_AXIS_FLOOR = -0.5  # lower end of the R² axis: means below it are drawn off the plot


def run(
    genes=GENES, *, epsilons=(1.0, 2.0), n_private=800, drugs=3, repeats=10, advi_steps=3000, seed=0
) -> pd.DataFrame:
    """The demo's experiment at each number of genes (one private size): its long results with a
    ``genes`` column, each d reported with its run time as it finishes."""
    frames = []
    for d in genes:
        start = time.perf_counter()
        with quiet_sampler():
            frame = run_experiment(
                n_drugs=drugs,
                genes=d,
                private_sizes=(n_private,),
                epsilons=tuple(epsilons),
                repeats=repeats,
                advi_steps=advi_steps,
                seed=seed,
                progress=False,
                methods=METHODS,
            )
        frames.append(frame.assign(genes=d))
        print(f"{d} genes: {time.perf_counter() - start:.0f} s", flush=True)
    return pd.concat(frames, ignore_index=True)


def summarise(results: pd.DataFrame) -> pd.DataFrame:
    """Mean and standard error of each score over drugs × repeats, one row per method × ε × d
    (ε = inf for the non-private method)."""
    groups = results.assign(epsilon=results.epsilon.fillna(np.inf)).groupby(["method", "epsilon", "genes"])
    summary = groups[list(SCORES)].agg(["mean", "sem", "count"])
    summary.columns = [f"{score}_{stat}" if stat != "count" else "count" for score, stat in summary.columns]
    summary = summary.loc[:, ~summary.columns.duplicated()]
    return summary.reset_index()


def table(summary: pd.DataFrame) -> str:
    """Markdown table: one row per ε × d, a 'Spearman ± se / R² ± se' cell per method, and the
    ratio of the noise-aware method's mean Spearman to AdaSSP's."""
    private = sorted(e for e in summary.epsilon.unique() if np.isfinite(e))
    cell = {
        (m, e, d): f"{r:.3f} ± {rs:.3f} / {q:+.3f} ± {qs:.3f}"
        for m, e, d, r, rs, q, qs in summary[
            ["method", "epsilon", "genes", "spearman_mean", "spearman_sem", "r2_mean", "r2_sem"]
        ].itertuples(index=False)
    }
    rho = {
        (m, e, d): r for m, e, d, r in summary[["method", "epsilon", "genes", "spearman_mean"]].itertuples(index=False)
    }
    methods = [m for m in METHODS if m in set(summary.method)]
    lines = [
        "| ε | genes | " + " | ".join(methods) + " | noise-aware / AdaSSP |",
        "|---|---|" + "---|" * len(methods) + "---|",
    ]
    for e in private:
        for d in sorted(summary.genes.unique()):
            cells = [cell.get((m, np.inf if m == "non-private LR" else e, d), "—") for m in methods]
            aware, adassp = rho.get(("noise-aware private LR", e, d)), rho.get(("AdaSSP", e, d))
            ratio = f"{aware / adassp:.2f}" if aware is not None and adassp is not None else "—"
            lines.append(f"| {e:g} | {d} | " + " | ".join(cells) + f" | {ratio} |")
    return "\n".join(lines)


def plot(summary: pd.DataFrame, path: Path | None = None):
    """Spearman (top) and held-out R² (bottom, axis cut at −0.5) against the number of genes, one
    column per ε (the non-private method drawn in each); saved to ``path`` if given.  Returns the
    figure."""
    import matplotlib.pyplot as plt

    private = sorted(e for e in summary.epsilon.unique() if np.isfinite(e))
    fig, axes = plt.subplots(2, len(private), figsize=(5 * len(private), 7), sharex=True, squeeze=False)
    for j, eps in enumerate(private):
        for i, (score, label) in enumerate((("spearman", "Spearman correlation"), ("r2", "held-out R²"))):
            ax = axes[i][j]
            for method in METHODS:
                part = summary[(summary.method == method) & ((summary.epsilon == eps) | np.isinf(summary.epsilon))]
                if len(part):
                    part = part.sort_values("genes")
                    ax.errorbar(
                        part.genes,
                        part[f"{score}_mean"],
                        yerr=part[f"{score}_sem"],
                        marker="o",
                        capsize=3,
                        label=method,
                    )
            ax.axhline(0, color="grey", lw=0.5)
            if score == "r2":  # a model that treats the noisy statistics as exact can reach R² ≪ −1
                ax.set_ylim(R2_AXIS_FLOOR, (summary.r2_mean + summary.r2_sem).max() + 0.05)
            ax.set(ylabel=f"{label} (test lines)" if j == 0 else None, title=f"ε = {eps:g}" if i == 0 else None)
            ax.set_xscale("log")
            ax.minorticks_off()
            ticks = sorted(summary.genes.unique())
            ax.set_xticks(ticks, [str(t) for t in ticks])
        axes[-1][j].set_xlabel("genes (covariates)")
    axes[0][-1].legend(fontsize=8)
    fig.suptitle("Private drug-sensitivity prediction against dimension (GDSC-shaped synthetic data)")
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=120)
    return fig


def build_parser() -> argparse.ArgumentParser:
    """The study's arguments, type- and range-checked while parsing."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="5 and 10 genes, 1 drug × 2 repeats, 1000 ADVI steps")
    parser.add_argument("--genes", type=positive_int, nargs="+", default=list(GENES), help="numbers of genes")
    parser.add_argument("--epsilons", type=epsilon_type, nargs="+", default=[1.0, 2.0], help="privacy budgets ε")
    parser.add_argument("--private", type=positive_int, default=800, help="private cell lines (default 800)")
    parser.add_argument("--drugs", type=positive_int, default=3, help="number of drugs (default 3)")
    parser.add_argument("--repeats", type=positive_int, default=10, help="random splits per drug (default 10)")
    parser.add_argument("--advi-steps", type=positive_int, default=3000, help="ADVI iterations per fit")
    parser.add_argument("--seed", type=nonnegative_int, default=0)
    parser.add_argument("--out", type=output_folder, default=Path("results"), help="output folder (default results/)")
    return parser


def parse_args(argv=None) -> argparse.Namespace:
    """Parsed arguments, with ``--quick`` applied."""
    args = build_parser().parse_args(argv)
    if args.quick:
        args.genes, args.drugs, args.repeats, args.advi_steps = [5, 10], 1, 2, 1000
    return args


def main(argv=None) -> pd.DataFrame:
    """Run the study, print its table and write the CSVs and the plot to ``--out``."""
    import matplotlib

    matplotlib.use("Agg")
    args = parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    frames = []
    for d in args.genes:  # the long results are rewritten after each d: a cut run keeps what it did
        frames.append(
            run(
                [d],
                epsilons=args.epsilons,
                n_private=args.private,
                drugs=args.drugs,
                repeats=args.repeats,
                advi_steps=args.advi_steps,
                seed=args.seed,
            )
        )
        results = pd.concat(frames, ignore_index=True)
        results.to_csv(args.out / RESULTS_FILE, index=False)
    summary = summarise(results)
    summary.to_csv(args.out / SUMMARY_FILE, index=False)
    plot(summary, args.out / PLOT_FILE)
    print(
        f"\nSpearman ± s.e. / held-out R² ± s.e. over {args.drugs} drugs × {args.repeats} repeats, "
        f"{args.private} private lines ({time.perf_counter() - start:.0f} s):\n"
    )
    print(table(summary))
    print(f"\nwrote {args.out / SUMMARY_FILE}, {args.out / RESULTS_FILE} and {args.out / PLOT_FILE}")
    return summary


if __name__ == "__main__":
    main()

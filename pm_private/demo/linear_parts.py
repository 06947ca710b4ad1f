"""Parts 1 and 2 of ``pm-private demo``: a Gaussian release of the sufficient statistics of
scikit-learn's diabetes data (Efron et al. 2004) into a ledger and a release file, then the
noise-aware model of the release (Bernstein & Sheldon 2019) by NUTS, beside ordinary least squares
on the private rows, and predictions for held-out patients."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from . import shared
from .display import Display
from .reference import least_squares

#: Five of the ten covariates: age, body-mass index, blood pressure and two blood serum measurements.
FEATURES = ["age", "bmi", "bp", "s3", "s5"]
N_TEST, N_PUBLIC = 88, 30


@dataclass(frozen=True)
class Diabetes:
    """The diabetes data, their split and the release of the private rows' statistics."""

    X: pd.DataFrame
    y: pd.Series
    test: np.ndarray
    private: np.ndarray
    release: object


def release_part(display: Display, plan, ledger) -> Diabetes:
    """Part 1: release the private rows' statistics into the ledger and a release file."""
    from sklearn.datasets import load_diabetes

    from ..linear.bounds import gaussian_bounds
    from ..linear.release import release_linear_stats
    from ..privacy.accountant import ledger_note
    from ..release_file import release_to_dict, write_release_file
    from ..released.preprocessing import Preprocessing

    X, y = load_diabetes(return_X_y=True, as_frame=True, scaled=False)
    X, y = X[FEATURES], y.rename("progression")
    rows = np.random.default_rng(plan.seed).permutation(len(y))
    test, public, private = rows[:N_TEST], rows[N_TEST : N_TEST + N_PUBLIC], rows[N_TEST + N_PUBLIC :]
    epsilon, delta = shared.LINEAR_BUDGET
    display.print(
        f"  {len(y)} patients: {len(private)} private, {N_PUBLIC} public (they fix the centre and scale), "
        f"{N_TEST} held out; covariates {', '.join(FEATURES)}"
    )
    path = plan.out / "diabetes.release.json"
    with display.step(
        f"releasing Σxxᵀ, Σxy, Σy² of the private rows (Gaussian mechanism, ε = {epsilon:g}, δ = {delta:g})"
    ):
        preprocessing = Preprocessing.from_public(X.iloc[public], y.iloc[public])
        bounds = gaussian_bounds(len(private), len(FEATURES), epsilon=epsilon, delta=delta)
        with ledger_note("pm-private demo: diabetes progression"):
            release = release_linear_stats(
                X.iloc[private],
                y.iloc[private],
                epsilon=epsilon,
                delta=delta,
                x_bound=bounds.x_bound,
                y_bound=bounds.y_bound,
                preprocessing=preprocessing,
                accountant=ledger,
            )  # rng=None: the operating system's secure generator
        context = {
            "rows": f"{len(private)} private rows of scikit-learn's diabetes data",
            "features": "(x − x_center)/x_scale with constants from 30 public rows, then bounded in norm",
            "target": "(y − y_center)/y_scale likewise, then clipped",
        }
        write_release_file(
            path, [release_to_dict(release, features=FEATURES, target="progression", preprocessing=context)]
        )
    display.wrote(path)
    for line in release.releases[0].clip_lines():
        display.print(f"  {line}")
    display.print(f"  ledger {plan.out / shared.LEDGER} (see it with: pm-private ledger {plan.out / shared.LEDGER}):")
    totals = shared.print_ledger(display, ledger)
    display.headline(f"diabetes statistics released at (ε = {epsilon:g}, δ = {delta:g}) into {path.name}; {totals}")
    return Diabetes(X, y, test, private, release)


def fit_part(display: Display, plan, data: Diabetes) -> dict:
    """Part 2: the noise-aware model of the release by NUTS, its summary beside least squares on
    the private rows, and predictions for the held-out patients."""
    from ..linear.model import linear_model
    from ..linear.predict import predict_linear, r_squared
    from ..released.summary import fit_summary, print_summary

    with display.step("building the noise-aware linear model of the release"):
        model = linear_model(data.release, feature_names=FEATURES)
    idata, divergent = shared.sample(
        display, model, plan.sampling, plan.seed, "noise-aware linear model", target_accept=0.95
    )
    display.print()
    print_summary(idata, data.release, file=display.file)
    summary = fit_summary(idata)
    ols = least_squares(data.X.iloc[data.private], data.y.iloc[data.private])
    compare = pd.DataFrame(
        {
            "private mean": summary["coef"].to_numpy(),
            "lower 95%": summary["coef lower 95%"].to_numpy(),
            "upper 95%": summary["coef upper 95%"].to_numpy(),
            "least squares (not private)": ols,
        },
        index=["intercept", *FEATURES],
    )
    inside = int(((compare["lower 95%"] <= compare.iloc[:, 3]) & (compare.iloc[:, 3] <= compare["upper 95%"])).sum())
    display.print("\n  The private fit beside least squares on the same private rows (original units):")
    for line in compare.round(2).to_string().splitlines():
        display.print(f"    {line}")
    X_test, y_test = data.X.iloc[data.test], data.y.iloc[data.test].to_numpy()
    predicted = predict_linear(idata, X_test)
    exact = np.column_stack([np.ones(len(X_test)), X_test]) @ ols
    r2_private, r2_exact = r_squared(y_test, predicted["mean"].to_numpy()), r_squared(y_test, exact)
    path = display.wrote(plan.out / "diabetes_heldout.png")
    _plot_heldout(y_test, predicted, exact, path)
    display.headline(
        f"held-out R² {r2_private:.2f} from the private fit (ε = {shared.LINEAR_BUDGET[0]:g}) vs {r2_exact:.2f} from "
        f"least squares on the private rows; {inside} of {len(compare)} least-squares coefficients inside the "
        "private 95 % intervals"
    )
    return {"idata": idata, "r2_private": r2_private, "r2_exact": r2_exact, "divergent": divergent}


def _plot_heldout(y_test, predicted: pd.DataFrame, exact, path) -> None:
    """Held-out patients: predictions against observed progression, private (with 95 % intervals of
    the regression function) and least squares."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.2, 4.6))
    mean = predicted["mean"].to_numpy()
    errors = np.abs(predicted[["lower", "upper"]].to_numpy().T - mean)
    ax.errorbar(y_test, mean, yerr=errors, fmt="o", ms=4, alpha=0.7, label="private fit (95 % interval)")
    ax.plot(y_test, exact, "x", color="black", ms=4, label="least squares (not private)")
    low, high = min(y_test.min(), mean.min()), max(y_test.max(), mean.max())
    ax.plot([low, high], [low, high], color="grey", lw=0.8, ls="--")
    ax.set(
        xlabel="observed progression (held-out patients)",
        ylabel="predicted progression",
        title="Diabetes: private fit vs least squares",
    )
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)

"""Part 3 of ``pm-private demo``: a person-level release of the exit table of the serum free light
chain study (Kyle et al. 2006; Dispenzieri et al. 2012; it ships with scikit-survival) by age
group, the noise-aware survival model of it by NUTS, and its survival curves and hazard ratio
beside Kaplan–Meier curves and Cox's regression on the records."""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import shared
from .display import Display
from .reference import cox_regression, kaplan_meier

#: Public interval ends in years (the study's design: follow-up to at most 15 years) and cells.
EDGES = [2.5, 5.0, 7.5, 10.0, 12.5, 15.0]
CELLS = ["50–69", "70+"]
#: The times at which the part prints survival.
SHOWN = [5.0, 10.0]


def survival_part(display: Display, plan, ledger) -> dict:
    """Part 3: release, fit and compare; returns the hazard ratios and the posterior."""
    from ..datasets.flchain import load_flchain
    from ..privacy.accountant import ledger_note
    from ..release_file import release_to_dict, write_release_file
    from ..released.summary import fit_summary, print_summary
    from ..survival.exits.model import survival_model
    from ..survival.exits.release import release_survival_stats

    data = load_flchain()
    years = data.time / 365.25
    older = data.X["age"].to_numpy() >= 70
    group = np.where(older, CELLS[1], CELLS[0])
    epsilon, delta = shared.SURVIVAL_BUDGET
    display.print(
        f"  {len(years)} residents of Olmsted County aged 50 or more, {int(data.event.sum())} deaths; "
        f"cells by age at the blood sample ({CELLS[0]}, {CELLS[1]}), intervals ending at {EDGES} years"
    )
    path = plan.out / "flchain.release.json"
    with display.step(f"releasing the exit table, person-level (Gaussian noise, ε = {epsilon:g}, δ = {delta:g})"):
        with ledger_note("pm-private demo: free light chain study by age group"):
            release = release_survival_stats(
                years, data.event, group, edges=EDGES, cells=CELLS, epsilon=epsilon, delta=delta, accountant=ledger
            )  # rng=None: the operating system's secure generator
        write_release_file(path, [release_to_dict(release, time="follow-up in years", event="death")])
    display.wrote(path)
    display.print("  ledger:")
    totals = shared.print_ledger(display, ledger)
    with display.step("building the noise-aware piecewise-exponential model of the exit table"):
        model = survival_model(release)
    idata, divergent = shared.sample(
        display, model, plan.sampling, plan.seed, "noise-aware survival model", target_accept=0.95
    )
    display.print()
    print_summary(idata, release, file=display.file)
    row = fit_summary(idata).iloc[0]
    private = (float(row["exp(coef)"]), float(row["exp(coef) lower 95%"]), float(row["exp(coef) upper 95%"]))
    beta, se = cox_regression(years, data.event, older.astype(float))
    exact = tuple(float(np.exp(beta[0] + k * 1.959964 * se[0])) for k in (0, -1, 1))
    curves = _curves(idata, years, data.event, group)
    display.print("\n  Survival beside Kaplan–Meier on the records (not private):")
    for line in curves.round(3).to_string().splitlines():
        display.print(f"    {line}")
    path = display.wrote(plan.out / "flchain_survival.png")
    _plot(idata, years, data.event, group, path)
    display.headline(
        f"hazard ratio of age {CELLS[1]} vs {CELLS[0]}: {private[0]:.2f} (95 % {private[1]:.2f}–{private[2]:.2f}) "
        f"private (ε = {epsilon:g}) vs {exact[0]:.2f} ({exact[1]:.2f}–{exact[2]:.2f}) by Cox's regression; {totals}"
    )
    return {"idata": idata, "hazard_ratio": private, "cox": exact, "divergent": divergent}


def _curves(idata, years, event, group) -> pd.DataFrame:
    """S(t) at :data:`SHOWN` per cell: the private posterior mean and band, and Kaplan–Meier."""
    from ..survival.exits.predict import predict_survival

    predicted = predict_survival(idata, times=SHOWN)
    rows = []
    for cell in CELLS:
        times, survival = kaplan_meier(years[group == cell], event[group == cell])
        for t in SHOWN:
            p = predicted.loc[(cell, t)]
            km = survival[np.searchsorted(times, t, side="right") - 1]
            rows.append((cell, t, p["mean"], p["lower"], p["upper"], km))
    columns = ["cell", "years", "private S(t)", "lower 95%", "upper 95%", "Kaplan–Meier"]
    return pd.DataFrame(rows, columns=columns).set_index(["cell", "years"])


def _plot(idata, years, event, group, path) -> None:
    """Private survival curves with their 95 % bands and Kaplan–Meier curves, per cell."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..survival.exits.predict import predict_survival

    grid = np.linspace(0.0, EDGES[-1], 61)
    predicted = predict_survival(idata, times=grid)
    fig, ax = plt.subplots(figsize=(6, 4.2))
    for cell, colour in zip(CELLS, ("C0", "C3"), strict=True):
        curve = predicted.loc[cell]
        ax.plot(grid, curve["mean"], color=colour, label=f"age {cell}: private (ε = {shared.SURVIVAL_BUDGET[0]:g})")
        ax.fill_between(grid, curve["lower"], curve["upper"], color=colour, alpha=0.25, lw=0)
        times, survival = kaplan_meier(years[group == cell], event[group == cell])
        ax.step(times, survival, where="post", color=colour, ls="--", lw=1, label=f"age {cell}: Kaplan–Meier")
    ax.set(xlabel="years since the blood sample", ylabel="survival", ylim=(0, 1.02), title="Free light chain study")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)

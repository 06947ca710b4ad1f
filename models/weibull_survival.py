"""Bayesian censored Weibull AFT model on FL (non-private), fitted with NUTS and with ADVI.

Model (:func:`pm_private.survival.weibull_model`): ln p ~ N(0, 1), β₀ ~ N(0, 5), β ~ N(0, 2),
ln λᵢ = β₀ + xᵢᵀβ, tᵢ censored-Weibull(p, λᵢ).  Times are in units of the public horizon
(15 years) and covariates are mapped into the unit ball with the public FL domain
(:func:`pm_private.survival.flchain_unit_ball`), so no statistic of the records is used to
prepare them.  The 3 records with follow-up 0 are set to 1 day (ln t must be finite for deaths).

Outputs (``results/`` by default): ArviZ summaries (``az.summary``: mean, sd, 89% ETI, ESS,
R-hat) for NUTS and ADVI as CSV, the trace plot (``az.plot_trace_dist``), and a printed check
that NUTS converged (R-hat < 1.01, bulk ESS > 400).  Run ``python -m models.weibull_survival --help``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

SETTINGS = {
    False: {"draws": 1000, "tune": 1000, "chains": 4, "advi_steps": 30_000},
    True: {"draws": 300, "tune": 300, "chains": 2, "advi_steps": 10_000},
}


def fit(quick: bool, seed: int):
    """(model, NUTS DataTree, ADVI DataTree) on FL."""
    import pandas as pd
    import pymc as pm

    from pm_private.datasets import load_flchain
    from pm_private.survival import flchain_unit_ball, scale_times, weibull_model

    fl = load_flchain()
    time = scale_times(np.maximum(fl.time, 1.0), horizon=fl.horizon)
    model = weibull_model(time, fl.event, pd.DataFrame(flchain_unit_ball(fl.X), columns=fl.X.columns))
    s = SETTINGS[quick]
    compile_kwargs = {"mode": "CVM"}
    with model:
        nuts = pm.sample(
            s["draws"],
            tune=s["tune"],
            chains=s["chains"],
            cores=1,
            random_seed=seed,
            progressbar=False,
            compile_kwargs=compile_kwargs,
        )
        approx = pm.fit(
            s["advi_steps"],
            method="advi",
            obj_optimizer=pm.adam(learning_rate=0.02),
            random_seed=seed,
            progressbar=False,
            compile_kwargs=compile_kwargs,
        )
        advi = approx.sample(s["draws"] * s["chains"], random_seed=seed)
    return model, nuts, advi


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="short chains and ADVI run (smoke test)")
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--out", type=Path, default=Path("results"), help="output folder (default results/)")
    args = parser.parse_args(argv)

    import arviz as az
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    args.out.mkdir(parents=True, exist_ok=True)
    _, nuts, advi = fit(args.quick, args.seed)
    names = ["p", "intercept", "beta"]
    nuts_summary = az.summary(nuts, var_names=names)
    advi_summary = az.summary(advi, var_names=names, kind="stats")
    nuts_summary.to_csv(args.out / "weibull_survival_nuts.csv")
    advi_summary.to_csv(args.out / "weibull_survival_advi.csv")
    az.plot_trace_dist(nuts, var_names=names)
    plt.savefig(args.out / "weibull_survival_trace.png", dpi=100)
    plt.close("all")

    print("NUTS (az.summary, 89% ETI)\n", nuts_summary.to_string(), "\n")
    print("ADVI (mean-field)\n", advi_summary.to_string(), "\n")
    r_hat, ess = float(nuts_summary["r_hat"].max()), float(nuts_summary["ess_bulk"].min())
    converged = r_hat < 1.01 and ess > 400
    print(
        f"NUTS: max R-hat {r_hat:.3f}, min bulk ESS {ess:.0f}: {'converged' if converged else 'NOT converged (run longer)'}"
    )
    print(f"wrote {args.out}/weibull_survival_{{nuts,advi}}.csv and weibull_survival_trace.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())

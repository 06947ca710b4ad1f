"""Private survival analysis of real data by exit tables: hazard ratios and curves with intervals.

Data sets that ship in installed packages, each split into two public arms (the cells) and cut at
a public horizon into J equal intervals (the study's visit schedule, chosen without the data):

* ``rossi`` (lifelines; 432 people released from prison, arrest within 52 weeks) by financial aid
  ``fin``, horizon 52 weeks, J = 13; the study followed everyone for the 52 weeks (its design,
  public), so the model has no censoring before the horizon (``censoring="none"``);
  ``rossi-walk`` is the same with the default censoring walk;
* ``gbsg2`` (scikit-survival; 686 breast-cancer patients, recurrence-free survival) by hormonal
  therapy ``horTh``, horizon 2000 days, J = 10;
* ``veterans`` (scikit-survival; 137 lung-cancer patients) by ``Treatment``, horizon 365 days, J = 6;
* ``flchain`` (scikit-survival; 7874 people, death) by ``sex``, horizon 4000 days, J = 10.

Per data set the non-private reference is the same model on the exact table
(:func:`pm_private.survival.survival_stats`, NUTS 2 × (1000 + 1000)): its posterior mean of the log
hazard ratio β and of S(t) at the interval ends nearest the quarter, half and three quarters of
the horizon; lifelines' Cox fit on the continuous times (arm only) is printed beside it.  Per ε and
release: :func:`pm_private.release_survival_stats` (Gaussian, δ = 10⁻⁶; seeded noise: a simulation
of the mechanism, not a release) and :func:`pm_private.survival_model` (piecewise-exponential,
NUTS 1 × (500 + 500), compiled once per data set and refitted), with the rows

* ``cover β`` / ``cover S``: the share of releases whose 90 % interval covers the non-private
  posterior mean (β; S(t) at the three times per arm);
* ``width``: the private 90 % interval of β over the non-private one (median);
* ``kept``: Fukuyama et al.'s (2026) measure, the share of releases whose 95 % interval excludes 0
  where the non-private one does (blank where it does not);
* ``null sig``: the share of releases of the same data with the arm replaced by a random public
  coin (a null effect) whose 95 % interval of β excludes 0.

Run ``python -m models.survival_exit_tables --help``; ``--quick``: 3 releases, rossi only.
"""

from __future__ import annotations

import argparse
import logging
import time
import warnings

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

DATA = {
    "rossi": dict(horizon=52.0, J=13, censoring="none"),
    "rossi-walk": dict(horizon=52.0, J=13, censoring="random_walk"),
    "gbsg2": dict(horizon=2000.0, J=10, censoring="random_walk"),
    "veterans": dict(horizon=365.0, J=6, censoring="random_walk"),
    "flchain": dict(horizon=4000.0, J=10, censoring="random_walk"),
}
EPSILONS = (0.25, 0.5, 1.0, 2.0)


def load(name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """(time, event, arm label, the two arm labels, reference first) of a shipped data set."""
    if name.startswith("rossi"):
        from lifelines.datasets import load_rossi

        frame = load_rossi()
        arm = np.where(frame["fin"] == 1, "aid", "no aid")
        return frame["week"].to_numpy(float), frame["arrest"].to_numpy(bool), arm, ["no aid", "aid"]
    from sksurv import datasets

    if name == "gbsg2":
        X, y = datasets.load_gbsg2()
        return y["time"], y["cens"], X["horTh"].astype(str).to_numpy(), ["no", "yes"]
    if name == "veterans":
        X, y = datasets.load_veterans_lung_cancer()
        return y["Survival_in_days"], y["Status"], X["Treatment"].astype(str).to_numpy(), ["standard", "test"]
    if name == "flchain":
        X, y = datasets.load_flchain()
        return y["futime"], y["death"], X["sex"].astype(str).to_numpy(), ["F", "M"]
    raise ValueError(f"unknown data set {name!r}")


def cox_log_hazard_ratio(time, event, arm, labels) -> float:
    """lifelines' Cox estimate of the arm's log hazard ratio (continuous times, no horizon)."""
    from lifelines import CoxPHFitter

    frame = pd.DataFrame({"T": time, "E": event.astype(int), "arm": (arm == labels[1]).astype(float)})
    return float(CoxPHFitter().fit(frame, "T", "E").params_["arm"])


def targets(idata, times) -> tuple[np.ndarray, np.ndarray]:
    """Draws of β (S,) and of S(t) at ``times`` per arm (S, 2·len(times))."""
    from pm_private.survival import cell_survival_draws

    posterior = idata["posterior"]
    curves = [
        cell_survival_draws(idata, times, cell=str(c)).values.reshape(-1, len(times)) for c in posterior["cell"].values
    ]
    return posterior["beta"].values.ravel(), np.concatenate(curves, axis=1)


def study(name: str, releases: int, epsilons, seed: int) -> list[dict]:
    import pymc as pm

    import pm_private as pp
    from pm_private.sampling.refit_nuts import RefittableNUTS
    from pm_private.survival import set_survival_stats, survival_stats

    time_, event, arm, labels = load(name)
    setting = DATA[name]
    edges = np.linspace(0.0, setting["horizon"], setting["J"] + 1)[1:]
    times = edges[np.clip(np.round(np.array([0.25, 0.5, 0.75]) * edges.size).astype(int) - 1, 0, edges.size - 1)]
    exact = survival_stats(time_, event, arm, edges=edges, cells=labels)
    with pp.survival_model(exact, censoring=setting["censoring"]):
        reference = pm.sample(1000, tune=1000, chains=2, cores=1, random_seed=seed, progressbar=False)
    beta_ref, curve_ref = targets(reference, times)
    beta_hat, curve_hat = beta_ref.mean(), curve_ref.mean(axis=0)
    lo95, hi95 = np.quantile(beta_ref, [0.025, 0.975])
    significant = not (lo95 <= 0.0 <= hi95)
    width_ref = np.subtract(*np.quantile(beta_ref, [0.95, 0.05]))
    cox = cox_log_hazard_ratio(time_, event, arm, labels)
    print(
        f"{name}: n = {exact.n}, exact-table β = {beta_hat:+.3f} (95 % [{lo95:+.3f}, {hi95:+.3f}]), Cox {cox:+.3f}",
        flush=True,
    )
    rng = np.random.default_rng(seed)
    fitter = None
    rows = []
    for eps in epsilons:
        cover_b, cover_s, widths, kept, null_sig, seconds = [], [], [], [], [], []
        for _ in range(releases):
            for null in (False, True):
                cells = rng.choice(labels, exact.n) if null else arm  # a public coin: no effect
                release = pp.release_survival_stats(
                    time_, event, cells, edges=edges, cells=labels, epsilon=eps, delta=1e-6, rng=rng
                )
                if fitter is None:
                    fitter = RefittableNUTS(
                        pp.survival_model(release, censoring=setting["censoring"]),
                        draws=500,
                        tune=500,
                        target_accept=0.9,
                        random_seed=seed,
                        compute_convergence_checks=False,
                    )
                set_survival_stats(release, fitter.model)
                start = time.perf_counter()
                beta, curve = targets(fitter.fit(), times)
                seconds.append(time.perf_counter() - start)
                b05, b95 = np.quantile(beta, [0.05, 0.95])
                b025, b975 = np.quantile(beta, [0.025, 0.975])
                excludes = not (b025 <= 0.0 <= b975)
                if null:
                    null_sig.append(excludes)
                    continue
                cover_b.append(b05 <= beta_hat <= b95)
                s05, s95 = np.quantile(curve, [0.05, 0.95], axis=0)
                cover_s.append(np.mean((s05 <= curve_hat) & (curve_hat <= s95)))
                widths.append((b95 - b05) / width_ref)
                kept.append(excludes)
        rows.append(
            dict(
                data=name,
                epsilon=eps,
                releases=releases,
                cover_beta=np.mean(cover_b),
                cover_S=np.mean(cover_s),
                width=np.median(widths),
                kept=np.mean(kept) if significant else np.nan,
                null_sig=np.mean(null_sig),
                fit_s=np.median(seconds),
            )
        )
        print(pd.DataFrame(rows[-1:]).to_string(index=False, float_format=lambda v: f"{v:.3f}"), flush=True)
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", nargs="+", choices=list(DATA), default=list(DATA))
    parser.add_argument("--releases", type=int, default=20)
    parser.add_argument("--epsilons", type=float, nargs="+", default=list(EPSILONS))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="3 releases of rossi at ε = 1")
    parser.add_argument("--out", help="write the table as CSV")
    args = parser.parse_args(argv)
    if args.quick:
        args.data, args.releases, args.epsilons = ["rossi"], 3, [1.0]
    threadpool_limits(1, user_api="blas")
    warnings.filterwarnings("ignore")
    logging.getLogger("pymc").setLevel(logging.ERROR)
    rows = []
    for name in args.data:
        rows += study(name, args.releases, args.epsilons, args.seed)
    table = pd.DataFrame(rows)
    print(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    if args.out:
        table.to_csv(args.out, index=False)


if __name__ == "__main__":
    main()

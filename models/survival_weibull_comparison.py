"""Weibull shape and scale from a private exit table against LSP/TLL at the same ε.

Nguyên & Hui (2017b) release a Weibull shape p and scale λ with ε-DP (LSP for the shape, TLL for
the scale: :func:`pm_private.survival.weibull_private`, here its :class:`WeibullLSP` built once) and score them by the median absolute error
against the non-private maximum-likelihood estimate.  The exit-table route releases the table of
exits with Laplace noise at the same ε (pure ε-DP, like for like:
:func:`pm_private.release_survival_stats` with ``noise="laplace"``) and fits the Weibull model of
:func:`pm_private.survival_model` (``hazard="weibull"``, one cell) to it; its point estimate is the
posterior median, and it also gives a 90 % interval, which LSP/TLL do not.

Data, each with a public horizon τ above every follow-up time (LSP needs every time ≤ τ) cut into
J = 20 equal intervals:

* ``flchain`` (scikit-survival; 7874 people, 2169 deaths; the data set of Nguyên & Hui's tables),
  τ = 5500 days;
* ``simulated``: 2000 Weibull times, shape 1.5, scale 1, uniform censoring on (0, 2), τ = 2.

Columns per data set and ε (``--releases`` releases each): the median absolute error of p and of λ
against the continuous-time MLE (:func:`pm_private.survival.weibull_mle`) for LSP/TLL and for the
exit table's posterior median; for the exit table, the share of releases whose 90 % interval
covers the MLE (``cover MLE``) and the exact table's posterior median (``cover exact``, the same
model without privacy: like for like), and the median interval width of p.

Run ``python -m models.survival_weibull_comparison --help``; ``--quick``: 3 releases at ε = 1.
"""

from __future__ import annotations

import argparse
import logging
import time
import warnings

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

EPSILONS = (0.25, 0.5, 1.0, 2.0)
J = 20


def load(name: str, seed: int) -> tuple[np.ndarray, np.ndarray, float]:
    """(time, event, public horizon) of a data set."""
    if name == "flchain":
        from sksurv.datasets import load_flchain

        _, y = load_flchain()
        return y["futime"].astype(float), y["death"].astype(bool), 5500.0
    if name == "simulated":
        rng = np.random.default_rng(seed)
        T = rng.weibull(1.5, 2000)
        C = rng.uniform(0.0, 2.0, 2000)
        return np.minimum(T, C), T <= C, 2.0
    raise ValueError(f"unknown data set {name!r}")


def shape_scale(idata, horizon: float) -> tuple[np.ndarray, np.ndarray]:
    """Draws of the Weibull shape p and scale λ (units of time) of a one-cell Weibull fit:
    H(t) = exp(α)·(t/τ)^ρ = (t/λ)^ρ gives p = ρ and λ = τ·exp(−α/ρ)."""
    posterior = idata["posterior"]
    rho = posterior["shape"].values.ravel()
    alpha = posterior["intercept"].values.ravel()
    return rho, horizon * np.exp(-alpha / rho)


def study(name: str, releases: int, epsilons, seed: int) -> list[dict]:
    import pymc as pm

    import pm_private as pp
    from pm_private.sampling.refit_nuts import RefittableNUTS
    from pm_private.survival import WeibullLSP, scale_times, set_survival_stats, survival_stats, weibull_mle

    time_, event, horizon = load(name, seed)
    edges = np.linspace(0.0, horizon, J + 1)[1:]
    # the reference as LSP sees the data: times raised to its public floor e^−ω·τ (ω = 6; flchain
    # has follow-up times of 0)
    mle = weibull_mle(scale_times(time_, horizon=horizon, floor=np.exp(-6.0)) * horizon, event)
    with pp.survival_model(survival_stats(time_, event, edges=edges), hazard="weibull"):
        exact = pm.sample(1000, tune=1000, chains=2, cores=1, random_seed=seed, progressbar=False)
    p_exact, lam_exact = (np.median(v) for v in shape_scale(exact, horizon))
    print(
        f"{name}: n = {time_.size}, {int(event.sum())} events; MLE p = {mle.shape:.3f}, λ = {mle.scale:.4g}; "
        f"exact table p = {p_exact:.3f}, λ = {lam_exact:.4g}",
        flush=True,
    )
    lsp = WeibullLSP(time_, event, horizon=horizon)  # the ladder of rungs, built once per data set
    rng = np.random.default_rng(seed)
    fitter = None
    rows = []
    for eps in epsilons:
        err = {key: [] for key in ("lsp_p", "lsp_lam", "table_p", "table_lam")}
        cover_mle, cover_exact, widths, seconds = [], [], [], []
        for _ in range(releases):
            point = lsp.release(epsilon=eps, rng=rng)
            err["lsp_p"].append(abs(point.shape - mle.shape))
            err["lsp_lam"].append(abs(point.scale - mle.scale))
            release = pp.release_survival_stats(time_, event, edges=edges, epsilon=eps, noise="laplace", rng=rng)
            if fitter is None:
                fitter = RefittableNUTS(
                    pp.survival_model(release, hazard="weibull"),
                    draws=500,
                    tune=500,
                    target_accept=0.9,
                    random_seed=seed,
                    compute_convergence_checks=False,
                )
            set_survival_stats(release, fitter.model)
            start = time.perf_counter()
            p, lam = shape_scale(fitter.fit(), horizon)
            seconds.append(time.perf_counter() - start)
            err["table_p"].append(abs(np.median(p) - mle.shape))
            err["table_lam"].append(abs(np.median(lam) - mle.scale))
            (p05, p95), (l05, l95) = np.quantile(p, [0.05, 0.95]), np.quantile(lam, [0.05, 0.95])
            cover_mle.append(p05 <= mle.shape <= p95 and l05 <= mle.scale <= l95)
            cover_exact.append(p05 <= p_exact <= p95 and l05 <= lam_exact <= l95)
            widths.append(p95 - p05)
        rows.append(
            dict(
                data=name,
                epsilon=eps,
                releases=releases,
                **{f"mae_{key}": np.median(value) for key, value in err.items()},
                cover_MLE=np.mean(cover_mle),
                cover_exact=np.mean(cover_exact),
                width_p=np.median(widths),
                fit_s=np.median(seconds),
            )
        )
        print(pd.DataFrame(rows[-1:]).to_string(index=False, float_format=lambda v: f"{v:.4g}"), flush=True)
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", nargs="+", choices=["flchain", "simulated"], default=["flchain", "simulated"])
    parser.add_argument("--releases", type=int, default=20)
    parser.add_argument("--epsilons", type=float, nargs="+", default=list(EPSILONS))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="3 releases of the simulated data at ε = 1")
    parser.add_argument("--out", help="write the table as CSV")
    args = parser.parse_args(argv)
    threadpool_limits(1, user_api="blas")
    warnings.filterwarnings("ignore")
    logging.getLogger("pymc").setLevel(logging.ERROR)
    if args.quick:
        args.data, args.releases, args.epsilons = ["simulated"], 3, [1.0]
    rows = [row for name in args.data for row in study(name, args.releases, args.epsilons, args.seed)]
    table = pd.DataFrame(rows)
    print(table.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    if args.out:
        table.to_csv(args.out, index=False)


if __name__ == "__main__":
    main()

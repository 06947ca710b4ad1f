"""Real data: the noise-aware proportional-hazards regression of a private exit table with
covariate moments on scikit-survival's ``flchain`` (the serum free light chain study, 7,874
people, death within the horizon), against the same model on the exact statistics and lifelines'
Cox fit of the same rows.

Covariates: age, sex, log κ and log λ free light chains, and a null covariate (independent
N(0, 1), drawn once: its coefficient is 0), standardised by 50 public people
(``Preprocessing.from_public``; the public people are left out of the private data).  Interval
ends: the horizon times (0.2, 0.4, 0.6, 0.8, 1) (data-independent); row bound Bx = 1.5 × the 95 %
quantile of the public rows' norms; δ = 10⁻⁶.  Per ε, ``--releases`` releases of the same
private rows, each fitted by one NUTS chain (``--tune`` + ``--draws``, Laplace-started dense mass
matrix).  Reported per ε: the share of coefficients whose 90 % interval holds the exact-statistics
posterior mean (``cover exact``) and lifelines' Cox estimate (``cover Cox``), the root mean
square error of the posterior mean against Cox, the share of releases whose 90 % interval of the
null covariate excludes 0, and the median fit time.

    python -m benchmarks.study_survival_regression_real --releases 10 --epsilons 1 2
"""

from __future__ import annotations

import argparse
import logging
import os
import time
import warnings

import numpy as np
import pandas as pd

from benchmarks.bench_calibration_glm import Fitter
from pm_private import Preprocessing
from pm_private.datasets import load_flchain
from pm_private.privacy.primitives import project_rows
from pm_private.survival import (
    release_survival_regression_stats,
    set_survival_regression_stats,
    survival_regression_model,
    survival_regression_stats,
)

DELTA = 1e-6
PUBLIC = 50
FEATURES = ["age", "sex", "log_kappa", "log_lambda", "null"]


def data(seed: int):
    """(private X, time, event), (public X), edges: the covariates of the module notes."""
    flchain = load_flchain()
    rng = np.random.default_rng(seed)
    frame = flchain.X
    X = np.column_stack(
        [
            frame["age"],
            frame["sex"],
            np.log(frame["kappa"]),
            np.log(frame["lambda"]),
            rng.normal(size=len(frame)),
        ]
    )
    order = rng.permutation(len(frame))
    public, private = order[:PUBLIC], order[PUBLIC:]
    edges = flchain.horizon * np.array([0.2, 0.4, 0.6, 0.8, 1.0])
    time_, event = np.asarray(flchain.time, dtype=float), np.asarray(flchain.event, dtype=bool)
    return X[private], time_[private], event[private], X[public], edges


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--releases", type=int, default=10)
    parser.add_argument("--epsilons", type=float, nargs="+", default=[1.0, 2.0])
    parser.add_argument("--tune", type=int, default=500)
    parser.add_argument("--draws", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    logging.getLogger("pymc").setLevel(logging.ERROR)
    from lifelines import CoxPHFitter

    X, time_, event, X_public, edges = data(args.seed)
    prep = Preprocessing.from_public(X_public)
    bound = 1.5 * float(np.quantile(np.linalg.norm(prep.transform_x(X_public), axis=1), 0.95))
    rows = project_rows(prep.transform_x(X), bound)
    censored = np.minimum(time_, edges[-1])  # follow-up past the horizon: event-free at it
    frame = pd.DataFrame(rows, columns=FEATURES).assign(T=censored, E=event & (time_ <= edges[-1]))
    cox = CoxPHFitter().fit(frame, "T", "E").params_.to_numpy()
    print(f"flchain: n = {len(X)} private, d = {X.shape[1]}, Bx = {bound:.2f}, "
          f"{np.mean(np.linalg.norm(prep.transform_x(X), axis=1) > bound):.1%} of rows projected")  # fmt: skip
    print("Cox (lifelines):", {k: float(v) for k, v in zip(FEATURES, cox.round(3), strict=True)})
    exact = survival_regression_stats(time_, event, X, edges=edges, x_bound=bound, preprocessing=prep)
    exact_fit = Fitter(survival_regression_model(exact), draws=args.draws, tune=args.tune, seed=args.seed).fit()
    reference = exact_fit.mean(axis=0)
    print("exact statistics, posterior mean:", {k: float(v) for k, v in zip(FEATURES, reference.round(3), strict=True)})
    rng = np.random.default_rng(args.seed + 1)
    fitter = None
    print("\n| ε | releases | cover exact (90 %) | cover Cox (90 %) | RMSE vs Cox | null excludes 0 | fit s |")
    print("|---|---|---|---|---|---|---|")
    start = time.perf_counter()
    for eps in args.epsilons:
        cover_exact, cover_cox, errors, null, times = [], [], [], [], []
        for _ in range(args.releases):
            release = release_survival_regression_stats(
                time_, event, X, edges=edges, x_bound=bound, epsilon=eps, delta=DELTA, preprocessing=prep, rng=rng
            )
            if fitter is None:
                fitter = Fitter(survival_regression_model(release), draws=args.draws, tune=args.tune, seed=args.seed)
            set_survival_regression_stats(release, fitter.model)
            beta = fitter.fit()
            lo, hi = np.quantile(beta, [0.05, 0.95], axis=0)
            cover_exact.append(np.mean((lo <= reference) & (reference <= hi)))
            cover_cox.append(np.mean((lo <= cox) & (cox <= hi)))
            errors.append(np.sqrt(np.mean((beta.mean(axis=0) - cox) ** 2)))
            null.append(not lo[-1] <= 0.0 <= hi[-1])
            times.append(fitter.times[-1])
        print(
            f"| {eps:g} | {args.releases} | {np.mean(cover_exact):.2f} | {np.mean(cover_cox):.2f} | "
            f"{np.mean(errors):.3f} | {np.mean(null):.2f} | {np.median(times):.1f} |",
            flush=True,
        )
    print(f"\ntotal {time.perf_counter() - start:.0f} s; load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()

"""Coverage and width of ``linear_model``'s default priors where the release's noise dominates and
the covariates are not standardised: slopes drawn independently of the model's priors.

The cell: x ~ N(0, I/d), β ~ N(0, I) (a fresh draw per release), y = xᵀβ + N(0, 0.5²), d = 20,
n = 5000, one Gaussian release per data set at (ε, δ) = (1, 10⁻⁶) with B_X = B_Y = 3 and an
intercept column, fitted by ``linear_model(release)`` (noise-aware, its default covariate model)
with PyMC's NUTS, one chain of 500 + 500 draws.  Reported per rate of the slopes' prior: the
90 % and 50 % coverage of the true slopes (Monte Carlo s.e. = spread of the per-release
fractions / √releases), the slope of the posterior means regressed on the truth (1: no
shrinkage), and the median over releases of the 90 % interval's mean width over that of least
squares on the private rows (the non-private Wald interval).

``default``: the library's default rate 2/(k·v̄); ``2/k``: the rate for standardised covariates
(the default before it followed the covariates' variance), passed as ``prior_precision_beta``.

    python -m benchmarks.bench_linear_default_prior --releases 12
"""

from __future__ import annotations

import argparse
import logging
import warnings

import numpy as np

D, N, NOISE_SD = 20, 5000, 0.5


def one_release(seed: int, rate: float | None) -> tuple[float, float, float, float]:
    """(90 % coverage, 50 % coverage, shrinkage slope, width ratio) of one release's fit."""
    import pymc as pm

    import pm_private as pp

    rng = np.random.default_rng(1000 + seed)
    beta = rng.normal(size=D)
    X = rng.normal(size=(N, D)) / np.sqrt(D)
    y = X @ beta + NOISE_SD * rng.normal(size=N)
    release = pp.release_linear_stats(X, y, epsilon=1.0, delta=1e-6, x_bound=3.0, y_bound=3.0, rng=seed + 1)
    prior = {} if rate is None else {"prior_precision_beta": rate}
    with pp.linear_model(release, **prior):
        idata = pm.sample(500, tune=500, chains=1, random_seed=seed, progressbar=False, nuts_sampler="pymc")
    draws = idata.posterior["beta"].values.reshape(-1, D)
    low, high = np.quantile(draws, [0.05, 0.95], axis=0)
    low50, high50 = np.quantile(draws, [0.25, 0.75], axis=0)
    design = np.column_stack([np.ones(N), X])
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    resid = y - design @ coef
    se = np.sqrt(resid @ resid / (N - D - 1) * np.diag(np.linalg.inv(design.T @ design)))[1:]
    return (
        float(np.mean((beta >= low) & (beta <= high))),
        float(np.mean((beta >= low50) & (beta <= high50))),
        float(np.polyfit(beta, draws.mean(axis=0), 1)[0]),
        float(np.mean(high - low) / np.mean(2 * 1.6449 * se)),
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--releases", type=int, default=12)
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    for name in ("pymc", "pm_private"):
        logging.getLogger(name).setLevel(logging.ERROR)
    print("| slopes' prior rate | 90 % coverage | 50 % coverage | shrinkage slope | width / least squares |")
    print("|---|---|---|---|---|")
    for label, rate in (("default", None), ("2/k", 2.0 / D)):
        rows = np.array([one_release(seed, rate) for seed in range(args.releases)])
        se = rows.std(axis=0) / np.sqrt(len(rows))
        print(
            f"| {label} | {rows[:, 0].mean():.2f} ({se[0]:.2f}) | {rows[:, 1].mean():.2f} ({se[1]:.2f}) "
            f"| {rows[:, 2].mean():.2f} | {np.median(rows[:, 3]):.1f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()

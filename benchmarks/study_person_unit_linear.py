"""Person-level against row-level releases of a real panel for linear regression.

Data: ``wage_panel`` of linearmodels (Vella & Verbeek 1998): 545 young men, each observed in
every year 1980–1987 (4,360 rows); the response is the log hourly wage, the covariates years of
schooling, years of experience and whether the man was in a union, married, black or Hispanic
(d = 6, with an intercept).  A person has 8 rows, so a row-level release protects a person-year.

Per repeat, 30 persons chosen at random are public: their rows give the public standardisation
(a :class:`pm_private.Preprocessing`, constants only) and the public responses of
:func:`pm_private.gaussian_bounds`; the other 515 persons are private.  The target is the
full-data OLS fit (all 4,360 rows, unclipped, with an intercept, in the public standardisation).
Per ε, ``--reps`` Gaussian releases (δ = 10⁻⁵, seeded noise: a simulation) are made three ways and
fitted by the default noise-aware :func:`pm_private.linear_model` (NUTS, one chain, compiled once
per way and refitted through :func:`pm_private.set_linear_stats`):

* ``person, 1 row``: ``unit=`` the person, one row per person kept at random (replace-one, n =
  515 persons public): a person with all 8 rows is protected at ε;
* ``person, 8 rows``: ``unit=`` the person, ``max_rows=8`` (all rows), add/remove neighbours (n
  private, latent in the model): every sensitivity 8 times the row's, a person protected at ε;
  the bounds are those the rule gives at ε/8, since the noise is about that of ε/8 for one row;
* ``row``: no ``unit``, as a user unaware of the panel would release it (replace-one, 4,120
  rows): the ε that release gives a person with 8 rows is the ledger's
  (:meth:`pm_private.PrivacyAccountant.person_epsilon`, group privacy over the 8 rows).

Reported per way and ε: the records released, the ε per person, the 50 % and 90 % coverage of the
full-data OLS coefficients (intercept and slopes; Monte Carlo s.e. over releases), the median
over releases of the mean 90 % width over the full-data OLS t interval's (rows as independent),
and the median fit time.

    pip install ".[studies]"      # linearmodels, for the data
    python -m benchmarks.study_person_unit_linear --reps 20
"""

from __future__ import annotations

import argparse
import logging
import time
import warnings

import numpy as np
from scipy import stats as sps

import pm_private as pp
from models.linear_real_data import design_draws, with_intercept
from pm_private.sampling.refit_nuts import RefittableNUTS

DELTA = 1e-5
N_PUBLIC = 30
ROWS = 8
COLUMNS = ["educ", "exper", "union", "married", "black", "hisp"]
WAYS = ("person, 1 row", "person, 8 rows", "row")


def load():
    """(X, y, person) of the wage panel."""
    from linearmodels.datasets import wage_panel

    frame = wage_panel.load()
    return frame[COLUMNS].to_numpy(float), frame["lwage"].to_numpy(float), frame["nr"].to_numpy()


def ols(prep, X, y):
    """Full-data OLS with an intercept in the public standardisation: (coefficients, 90 % t width)."""
    design = with_intercept(prep.transform_x(X))
    response = prep.transform_y(y)
    coef, *_ = np.linalg.lstsq(design, response, rcond=None)
    dof = len(y) - design.shape[1]
    scale = np.sum((response - design @ coef) ** 2) / dof
    se = np.sqrt(scale * np.diag(np.linalg.inv(design.T @ design)))
    return coef, 2 * sps.t.ppf(0.95, dof) * se


def release(way, Xp, yp, unit, prep, eps, public_y, accountant, rng):
    """The Gaussian release of the private rows made ``way``."""
    d = Xp.shape[1]
    if way == "person, 8 rows":
        options = dict(unit=unit, max_rows=ROWS, relation="add-remove")
        bounds = pp.gaussian_bounds(len(yp), d, eps / ROWS, DELTA, public_y=public_y)
    else:
        options = dict(unit=unit) if way == "person, 1 row" else {}
        size = np.unique(unit).size if way == "person, 1 row" else len(yp)
        bounds = pp.gaussian_bounds(size, d, eps, DELTA, public_y=public_y)
    return pp.release_linear_stats(
        Xp, yp, epsilon=eps, delta=DELTA, x_bound=bounds.x_bound, y_bound=bounds.y_bound,
        preprocessing=prep, accountant=accountant, rng=rng, **options,
    )  # fmt: skip


def coverage(draws, target, width):
    """(50 % cover, 90 % cover, mean 90 % width over ``width``) of draws (S, d + 1)."""
    lo90, hi90, lo50, hi50 = np.quantile(draws, [0.05, 0.95, 0.25, 0.75], axis=0)
    inside = lambda lo, hi: np.mean((lo <= target) & (target <= hi))  # noqa: E731
    return inside(lo50, hi50), inside(lo90, hi90), np.mean((hi90 - lo90) / width)


def study(args) -> list[str]:
    X, y, person = load()
    rng = np.random.default_rng(args.seed)
    rows, fitters = [], {}
    results = {(eps, way): [] for eps in args.epsilons for way in WAYS}
    for _ in range(args.reps):
        public = np.isin(person, rng.choice(np.unique(person), N_PUBLIC, replace=False))
        prep = pp.Preprocessing.from_public(X[public], y[public], keep_rows=False)
        target, width = ols(prep, X, y)
        Xp, yp, unit = X[~public], y[~public], person[~public]
        public_y = prep.transform_y(y[public])
        for eps in args.epsilons:
            for way in WAYS:
                accountant = pp.PrivacyAccountant(epsilon=1e3, delta=0.5)
                stats = release(way, Xp, yp, unit, prep, eps, public_y, accountant, rng)
                if way not in fitters:
                    fitters[way] = RefittableNUTS(pp.linear_model(stats), draws=args.draws, tune=args.tune,
                                                  target_accept=0.9, random_seed=args.seed,
                                                  compute_convergence_checks=False)  # fmt: skip
                pp.set_linear_stats(stats, fitters[way].model)
                start = time.perf_counter()
                idata = fitters[way].fit()
                draws = design_draws(idata)
                per_person = eps if way != "row" else accountant.person_epsilon(ROWS, delta=DELTA)
                n = stats.n if stats.n is not None else "private"
                cover = coverage(draws, target, width)
                results[eps, way].append((*cover, per_person, n, time.perf_counter() - start))
    for (eps, way), values in results.items():
        c50, c90, ratio, per_person, n, fit = zip(*values, strict=True)
        se = np.std(c90, ddof=1) / np.sqrt(len(c90))
        rows.append(
            f"| {eps:g} | {way} | {n[0]} | {per_person[0]:.2f} | {np.mean(c50):.2f} | {np.mean(c90):.2f} ({se:.2f}) "
            f"| {np.median(ratio):.1f} | {np.median(fit):.1f} |"
        )
        print(rows[-1], flush=True)
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epsilons", nargs="+", type=float, default=[1.0, 4.0])
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--draws", type=int, default=500)
    parser.add_argument("--tune", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    logging.getLogger("pymc").setLevel(logging.ERROR)
    print("| ε | release | records released | ε per person (8 rows) | 50 % cover | 90 % cover (s.e.) "
          "| 90 % width / OLS | fit s |\n|---|---|---|---|---|---|---|---|", flush=True)  # fmt: skip
    study(args)


if __name__ == "__main__":
    main()

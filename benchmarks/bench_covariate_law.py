"""Covariate laws of the noise-aware GLMs on the covariates real data have: coverage **and** width.

Each cell draws ``--reps`` populations and, from each, n private rows and 100 public rows of
mixed kinds: a latent Gaussian copula (random correlation, 0.5 shrunk to the identity) whose
columns are

* ``mixed``: 30 % continuous (Gaussian and log-normal in turn) and 70 % binary, shares cycling
  through 0.05, 0.5, 0.3, 0.2, 0.6, 0.4, 0.15 (a rare level at 5 %);
* ``categorical``: a five-level categorical (shares 0.4, 0.25, 0.15, 0.12, 0.08) as four
  indicator columns (declared ``"categorical:levels"``), the other columns as ``mixed``;
* ``skewed``: every column log-normal, exp(0.8·z).

Coefficients on the public scale β* ~ N(0, 0.6²) (logistic, intercept −0.3) or N(0, 0.3²)
(Poisson, intercept −0.5, counts clipped to 10).  The public rows standardise (from_public,
kinds declared), the bound is the library's rule with the public rows (Poisson: the count bound
B = ``--y-bound``, 10 by default, or ``rule``: :func:`pm_private.poisson_bounds` with the public
rows' counts, drawn like the private ones), and one release per
population ((ε, 10⁻⁶)-DP) is fitted under three laws (``x_sample``):

* ``gaussian``: None;  ``public``: the 100 public rows (the jackknifed sample law);
* ``reference``: :func:`pm_private.released.reference_law` (the declared kinds, the
  released moments, the public rows' continuous marginals).

Target: the population's coefficients after the release's projection — the maximum-likelihood
fit on 300,000 fresh rows of the population, their responses drawn from the rows and the fit
made on the rows projected onto the same ball, as the release sees them (Poisson: the root of
the clipped-mean estimating equation, the model's limit on counts clipped to the release's B).  Reported per cell and
law: 90 % and 50 % coverage (Monte Carlo s.e. = spread of per-release fractions / √reps), the
median over coefficients of the 90 % interval's width over the non-private Wald interval's (the
MLE on the private rows, projected), the median fit time.  One NUTS chain (``--tune`` + ``--draws``)
started at the Laplace approximation, as in ``bench_calibration_glm``.

    python -m benchmarks.bench_covariate_law --cells centre --reps 8
    python -m benchmarks.bench_covariate_law --family poisson --cells centre n200000 --reps 6
    python -m benchmarks.bench_covariate_law --quick

Diagnostics: ``--reference-size N`` integrates the reference law on N rows (default: its own
rule for n); ``--x-bound-scale S`` releases the Poisson statistics with S times the rule's row
bound (fewer rows projected, more noise on the covariates' statistics).
"""

from __future__ import annotations

import argparse
import json
import time
import warnings

import numpy as np
import pandas as pd
from scipy.special import expit, ndtri
from scipy.stats import poisson

import pm_private as pp
from pm_private.privacy.primitives import project_rows
from pm_private.released.copula_law import reference_law

from .bench_calibration_glm import Fitter

SHARES = np.array([0.05, 0.5, 0.3, 0.2, 0.6, 0.4, 0.15])
LEVELS = np.array([0.4, 0.25, 0.15, 0.12, 0.08])
CENTRE = {"n": 20_000, "d": 10, "eps": 1.0, "design": "mixed"}
CELLS = {
    "centre": {},
    "n2000": {"n": 2000},
    "n200000": {"n": 200_000},
    "eps0.3": {"eps": 0.3},
    "eps3": {"eps": 3.0},
    "d5": {"d": 5},
    "d20": {"d": 20},
    "categorical": {"design": "categorical"},
    "skewed": {"design": "skewed"},
}
LAWS = ("gaussian", "public", "reference")
PUBLIC = 100
DELTA = 1e-6


class Population:
    """One population of a design: its copula, column kinds and coefficients."""

    def __init__(self, rng, design: str, d: int, family: str):
        self.design, self.d, self.family = design, d, family
        a = rng.normal(size=(d, d))
        corr = np.corrcoef(a @ a.T + 3 * np.eye(d))
        self.chol = np.linalg.cholesky(0.5 * corr + 0.5 * np.eye(d))
        kinds = []
        continuous = int(np.ceil(0.3 * d))
        for j in range(d):
            if design == "skewed":
                kinds.append("lognormal")
            elif design == "categorical" and j >= d - 4:
                kinds.append("level")
            else:
                kinds.append(("gaussian", "lognormal")[j % 2] if j < continuous else "binary")
        self.kinds = kinds
        self.shares = np.resize(SHARES, d)
        self.beta = rng.normal(0.0, 0.6 if family == "logistic" else 0.3, d)

    def rows(self, rng, m: int) -> np.ndarray:
        z = rng.normal(size=(m, self.d)) @ self.chol.T
        X = np.empty((m, self.d))
        level = np.searchsorted(np.cumsum(LEVELS)[:-1], expit(1.7 * z[:, -1]))  # one latent for the levels
        for j, kind in enumerate(self.kinds):
            if kind == "gaussian":
                X[:, j] = z[:, j]
            elif kind == "lognormal":
                X[:, j] = np.exp(0.8 * z[:, j])
            elif kind == "binary":
                X[:, j] = z[:, j] > ndtri(1 - self.shares[j])
            else:
                X[:, j] = level == (j - (self.d - 4) + 1)
        return X

    def declared(self) -> list[str]:
        names = {"binary": "binary", "level": "categorical:levels"}
        return [names.get(kind, "continuous") for kind in self.kinds]

    def response(self, rng, Z) -> np.ndarray:
        eta = Z @ self.beta
        if self.family == "logistic":
            return (rng.random(len(Z)) < expit(eta - 0.3)).astype(float)
        return np.minimum(rng.poisson(np.exp(np.minimum(eta - 0.5, 5.0))), 10).astype(float)


def clipped_mean(a: np.ndarray, clip: int) -> np.ndarray:
    """E[min(y, B)], y ~ Poisson(eᵃ), B = ``clip``: Σ_{k<B} P(y > k)."""
    return poisson.sf(np.arange(clip)[:, None], np.exp(a)).sum(axis=0)


def fit_glm(Z, y, family: str, clip: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(b, β) of the maximum-likelihood fit with an intercept (Newton) and its information matrix;
    with ``clip`` (Poisson), the root of the estimating equation Σ (yᵢ − g(aᵢ))·(1, xᵢ) = 0 with
    g(a) = E[min(y, clip) | a], y ~ Poisson(eᵃ): the model's limit on clipped counts."""
    A = np.column_stack([np.ones(len(y)), Z])
    theta = np.zeros(A.shape[1])
    for _ in range(60):
        eta = A @ theta
        mean = expit(eta) if family == "logistic" else np.exp(eta)
        weight = mean * (1 - mean) if family == "logistic" else mean
        if clip is not None:  # E[min(y, B)]; its derivative λ·P(y ≤ B − 1)
            mean, weight = clipped_mean(eta, clip), mean * poisson.cdf(clip - 1, mean)
        info = A.T @ (A * weight[:, None])
        step = np.linalg.solve(info, A.T @ (y - mean))
        theta += step * min(1.0, 1.0 / np.max(np.abs(step)))
        if np.max(np.abs(step)) < 1e-10:
            break
    return theta, info


def mle(Z, y, family: str, clip: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Slopes and their Wald s.e. of :func:`fit_glm`."""
    theta, info = fit_glm(Z, y, family, clip)
    return theta[1:], np.sqrt(np.diag(np.linalg.inv(info)))[1:]


def release_of(rng, family, X, y, cell, prep, public_z, public_y, y_bound, x_bound_scale=1.0):
    n, d, eps = cell["n"], cell["d"], cell["eps"]
    if family == "logistic":
        bound = pp.logistic_bounds(n, d, eps, DELTA, public_X=public_z).x_bound
        return bound, pp.release_logistic_stats(
            X, y, epsilon=eps, delta=DELTA, x_bound=bound, preprocessing=prep, rng=rng
        )
    if y_bound.startswith("rule"):  # B and τ from the public rows' counts ("rule:0.01": max_clipped)
        share = float(y_bound.partition(":")[2] or 0.05)
        bounds = pp.poisson_bounds(n, d, eps, DELTA, public_X=public_z, public_y=public_y, max_clipped=share)
    else:
        bounds = pp.poisson_bounds(n, d, eps, DELTA, y_bound=int(y_bound), response_sd=1.5, public_X=public_z)
    x_bound = x_bound_scale * bounds.x_bound
    release = pp.release_poisson_stats(
        X, y, epsilon=eps, delta=DELTA, x_bound=x_bound, y_bound=bounds.y_bound, preprocessing=prep, rng=rng
    )
    return x_bound, release


def run_cell(name, cell, args, fitters, rng) -> list[dict]:
    records = []
    build = pp.logistic_model if args.family == "logistic" else pp.poisson_model
    refit = pp.set_logistic_stats if args.family == "logistic" else pp.set_poisson_stats
    for rep in range(args.reps):
        pop = Population(rng, cell["design"], cell["d"], args.family)
        X, Xpub = pop.rows(rng, cell["n"]), pop.rows(rng, PUBLIC)
        prep = pp.Preprocessing.from_public(Xpub, kinds=pop.declared())
        Z = prep.transform_x(X)
        y = pop.response(rng, Z)
        public_z = prep.transform_x(Xpub)
        public_y = None if args.family == "logistic" else pop.response(rng, public_z)
        bound, release = release_of(
            rng, args.family, X, y, cell, prep, public_z, public_y, args.y_bound, args.x_bound_scale
        )
        big = prep.transform_x(pop.rows(rng, 300_000))  # responses from the rows, the fit on them projected
        clip = None if args.family == "logistic" else release.y_bound
        responses = pop.response(rng, big)
        if clip is not None:  # the counts the release saw: clipped to its B
            responses = np.minimum(responses, clip)
        target, _ = mle(project_rows(big, bound), responses, args.family, clip=clip)
        Zp = project_rows(Z, bound)
        projected = float(np.mean(np.linalg.norm(Z, axis=1) > bound))
        _, se = mle(Zp, y, args.family)
        for law in args.laws:
            if law == "reference":
                x_sample = reference_law(release, size=args.reference_size)
            else:
                x_sample = Xpub if law == "public" else None
            key = (law, cell["d"], cell["n"], clip)  # the reference law's rows grow with n; Poisson: one model per B
            if key not in fitters:
                prior = {} if args.beta_sigma is None else {"beta_sigma": args.beta_sigma}
                fitters[key] = Fitter(
                    build(release, x_sample=x_sample, **prior), draws=args.draws, tune=args.tune, seed=rep
                )
            else:
                refit(release, fitters[key].model, x_sample=x_sample)
            start = time.perf_counter()
            draws = fitters[key].fit()
            seconds = time.perf_counter() - start
            lo, hi = np.quantile(draws, [0.05, 0.95], axis=0)
            lo50, hi50 = np.quantile(draws, [0.25, 0.75], axis=0)
            record = {
                "cell": name,
                "law": law,
                "rep": rep,
                "cover90": float(np.mean((lo <= target) & (target <= hi))),
                "cover50": float(np.mean((lo50 <= target) & (target <= hi50))),
                "width": float(np.median((hi - lo) / (2 * 1.6449 * se))),
                "fit_s": seconds,
                "projected": projected,
                "y_bound": clip,
            }
            print(json.dumps(record), flush=True)
            records.append(record)
    return records


def table(records: list[dict]) -> pd.DataFrame:
    frame = pd.DataFrame(records)
    grouped = frame.groupby(["cell", "law"], sort=False)
    out = grouped.agg(
        cover90=("cover90", "mean"),
        cover50=("cover50", "mean"),
        width=("width", "median"),
        fit_s=("fit_s", "median"),
        reps=("rep", "count"),
    )
    out["se90"] = grouped["cover90"].std() / np.sqrt(out["reps"])
    return out.round(3)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--family", choices=("logistic", "poisson"), default="logistic")
    parser.add_argument("--cells", nargs="+", default=list(CELLS), choices=list(CELLS))
    parser.add_argument("--laws", nargs="+", default=list(LAWS), choices=LAWS)
    parser.add_argument("--reps", type=int, default=8)
    parser.add_argument("--beta-sigma", type=float, help="the prior s.d. of the coefficients (default: the model's)")
    parser.add_argument("--tune", type=int, default=500)
    parser.add_argument("--draws", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--x-bound-scale",
        type=float,
        default=1.0,
        help="Poisson: the release's row bound is this multiple of the rule's (a diagnostic of projection)",
    )
    parser.add_argument(
        "--reference-size",
        type=lambda v: v if v == "auto" else int(v),
        default="auto",
        help="the reference law's rows (default auto: reference_size of n)",
    )
    parser.add_argument(
        "--y-bound",
        default="10",
        help="Poisson: the count bound B, or 'rule' for poisson_bounds with the public rows' counts ('rule:0.01': "
        "with max_clipped=0.01; default 10)",
    )
    parser.add_argument("--quick", action="store_true", help="smoke run: the centre at n = 2000, 2 releases")
    parser.add_argument("--out", help="also write the table as markdown to this file")
    args = parser.parse_args(argv)
    if args.quick:
        args.cells, args.reps, args.tune, args.draws = ["n2000"], 2, 200, 200
    warnings.simplefilter("ignore")
    rng = np.random.default_rng(args.seed)
    fitters: dict = {}
    records = []
    for name in args.cells:
        records += run_cell(name, {**CENTRE, **CELLS[name]}, args, fitters, rng)
    result = table(records)
    print(result.to_string())
    if args.out:
        with open(args.out, "w") as handle:
            handle.write(result.to_markdown() + "\n")


if __name__ == "__main__":
    main()

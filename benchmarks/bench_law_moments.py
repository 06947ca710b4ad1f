"""The Poisson model's moments under the reference covariate law against brute-force Monte Carlo.

For a population of ``bench_covariate_law`` (its ``mixed`` design: a Gaussian copula of Gaussian,
log-normal and binary columns), at the population's own coefficients θ* (the root of the clipped-count
estimating equation on 300,000 rows, their counts drawn from the rows and the fit made on the rows
projected, as the release sees them), ``--replicates`` data sets of n rows are drawn and each is
released with negligible noise (ε = 500) at the row bound of the ε = 1 cell (``--bound-epsilon``),
so that only the model's approximations are measured.
For the released y-statistics s = (Σỹ, Σỹ·x), per replicate:

* the **law's mean error**: s/n − T(θ*), T the means of (ỹ, ỹ·x) under the replicate's own
  reference law (:func:`pm_private.released.reference_law`, built from the replicate's released
  moments and the public rows' marginals) moved onto the replicate's released mean and covariance,
  as the model moves it; its average over replicates, in units of that residual's own s.d. over
  the replicates (the spread left once the covariates' statistics are known), is the law's bias
  (0 for an exact law, up to Monte Carlo error 1/√replicates);
* the **spread**: the s.d. over replicates of that residual, against the s.d. the model gives the
  y-statistics given the covariates' statistics (the normal conditional of the Gaussian-law
  covariance V(θ*) of :func:`pm_private.poisson.moments.poisson_stat_moments`, which the model
  keeps under every law).  A ratio above 1 means intervals too narrow on that coefficient.

Reported per population and column kind (the count Σỹ, Gaussian, log-normal and binary columns):
the largest |bias| and the largest and smallest spread ratio.

    python -m benchmarks.bench_law_moments                       # d = 20, 100 public rows
    python -m benchmarks.bench_law_moments --public 10000 --reference-size 32768
    python -m benchmarks.bench_law_moments --d 10 --populations 3
    python -m benchmarks.bench_law_moments --bound-epsilon 100         # no row projected
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
import pandas as pd
import pytensor
import pytensor.tensor as pt

import pm_private as pp
from pm_private.poisson.moments import poisson_stat_moments
from pm_private.privacy.primitives import project_rows
from pm_private.released.copula_law import reference_law
from pm_private.released.glm import law_rows

from .bench_covariate_law import DELTA, Population, clipped_mean, fit_glm


def law_means(whitened, mean, cov, theta, y_bound) -> np.ndarray:
    """T = (E[g], E[g·x]) over the whitened law rows moved onto (mean, cov)."""
    x = mean + whitened @ np.linalg.cholesky(cov).T
    g = clipped_mean(theta[0] + x @ theta[1:], y_bound)
    return np.concatenate([[g.mean()], (g[:, None] * x).mean(axis=0)])


def model_conditional_sd(theta, mean, cov, d, y_bound) -> np.ndarray:
    """The s.d. the model gives one record's (ỹ, ỹ·x) given its (x, upper(xxᵀ)): the normal
    conditional of the Gaussian-law covariance V(θ)."""
    beta, b, mu, sigma = pt.dvector(), pt.dscalar(), pt.dvector(), pt.dmatrix()
    moments = pytensor.function([beta, b, mu, sigma], poisson_stat_moments(beta, b, mu, sigma, d, y_bound))
    _, V = (np.asarray(v) for v in moments(theta[1:], theta[0], mean, cov))
    k = V.shape[0]
    block = np.concatenate([[d], np.arange(k - d, k)])
    rest = np.setdiff1d(np.arange(k), block)
    cond = V[np.ix_(block, block)] - V[np.ix_(block, rest)] @ np.linalg.solve(
        V[np.ix_(rest, rest)], V[np.ix_(rest, block)]
    )
    return np.sqrt(np.diag(cond))


def check_population(rng, args) -> pd.DataFrame:
    pop = Population(rng, "mixed", args.d, "poisson")
    public = pop.rows(rng, args.public)
    prep = pp.Preprocessing.from_public(public, kinds=pop.declared())
    bound = pp.poisson_bounds(
        args.n, args.d, args.bound_epsilon, DELTA, y_bound=args.y_bound, public_X=prep.transform_x(public)
    )
    rows = prep.transform_x(pop.rows(rng, 300_000))  # the counts from the rows, the fit on them projected
    counts = np.minimum(pop.response(rng, rows), args.y_bound)
    big = project_rows(rows, bound.x_bound)
    theta, _ = fit_glm(big, counts, "poisson", clip=args.y_bound)
    residuals = []
    for _ in range(args.replicates):
        X = pop.rows(rng, args.n)
        y = pop.response(rng, prep.transform_x(X))
        release = pp.release_poisson_stats(
            X, y, epsilon=500.0, delta=DELTA, x_bound=bound.x_bound, y_bound=args.y_bound, preprocessing=prep, rng=rng
        )
        mean = release.x_sum / args.n
        cov = release.xx / args.n - np.outer(mean, mean)
        whitened, _ = law_rows(reference_law(release, size=args.reference_size), release)
        observed = np.concatenate([[release.y_sum], release.yx]) / args.n
        residuals.append(observed - law_means(whitened, mean, cov, theta, args.y_bound))
    residuals = np.sqrt(args.n) * np.array(residuals)
    spread = residuals.std(axis=0, ddof=1)
    bias = residuals.mean(axis=0) / spread
    ratio = spread / model_conditional_sd(theta, big.mean(axis=0), np.cov(big.T, bias=True), args.d, args.y_bound)
    kinds = np.array(["count"] + pop.kinds)
    return pd.DataFrame({"kind": kinds, "bias_sd": bias, "spread_ratio": ratio})


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d", type=int, default=20)
    parser.add_argument("--n", type=int, default=20_000)
    parser.add_argument("--public", type=int, default=100, help="public rows (the marginals' shape)")
    parser.add_argument("--reference-size", type=lambda v: v if v == "auto" else int(v), default="auto")
    parser.add_argument("--y-bound", type=int, default=10)
    parser.add_argument(
        "--bound-epsilon",
        type=float,
        default=1.0,
        help="the row bound is poisson_bounds' at this ε (default 1, the grid's cell; larger: fewer rows projected)",
    )
    parser.add_argument("--replicates", type=int, default=60)
    parser.add_argument("--populations", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    rng = np.random.default_rng(args.seed)
    for p in range(args.populations):
        frame = check_population(rng, args)
        summary = frame.groupby("kind", sort=False).agg(
            max_abs_bias=("bias_sd", lambda v: np.abs(v).max()),
            max_spread_ratio=("spread_ratio", "max"),
            min_spread_ratio=("spread_ratio", "min"),
            columns=("kind", "size"),
        )
        print(f"population {p}: d = {args.d}, n = {args.n}, {args.public} public rows")
        print(summary.round(2).to_string(), flush=True)


if __name__ == "__main__":
    main()

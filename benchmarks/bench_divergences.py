"""Divergent NUTS draws of the default noise-aware model on small real data, by target_accept.

The real-data study's protocol on a random subset of ``--rows`` private rows of a shipped data
set (30 public rows give the standardisation; :func:`pm_private.release_linear_stats` with
‖x‖ ≤ √d, |y| ≤ 2, (ε, 10⁻⁵)-DP, seeded noise), the default
:func:`pm_private.linear_model` (its default covariate model) sampled by
:class:`pm_private.sampling.RefittableNUTS`, one chain per release; prints the share of divergent
draws per target acceptance rate (the goal: below 1 %).

    python -m benchmarks.bench_divergences --data anes96 --rows 200 --releases 3
"""

from __future__ import annotations

import argparse
import logging
import time
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

from models.linear_real_data import N_PUBLIC, load
from pm_private import Preprocessing, release_linear_stats
from pm_private.linear.model import linear_model, set_linear_stats
from pm_private.sampling.refit_nuts import RefittableNUTS


def releases(name: str, rows: int, count: int, epsilon: float, seed: int):
    """``count`` Gaussian releases of ``rows`` private rows of data set ``name``."""
    X, y, _ = load(name)
    d = X.shape[1]
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        order = rng.permutation(len(y))
        public, private = order[:N_PUBLIC], order[N_PUBLIC : N_PUBLIC + rows]
        prep = Preprocessing.from_public(X[public], y[public])
        out.append(
            release_linear_stats(
                X[private],
                y[private],
                epsilon=epsilon,
                delta=1e-5,
                x_bound=np.sqrt(d),
                y_bound=2.0,
                preprocessing=prep,
                rng=rng,
            )
        )
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default="anes96")
    parser.add_argument("--rows", type=int, default=200)
    parser.add_argument("--releases", type=int, default=3)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--draws", type=int, default=300)
    parser.add_argument("--targets", type=float, nargs="+", default=[0.9, 0.95])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    logging.getLogger("pymc").setLevel(logging.ERROR)
    stats = releases(args.data, args.rows, args.releases, args.epsilon, args.seed)
    print(f"{args.data}, {args.rows} private rows, ε = {args.epsilon:g}, {args.releases} releases × {args.draws} draws")
    print("target_accept  divergent share  per release            median fit s")
    with threadpool_limits(1, user_api="blas"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for target in args.targets:
            fitter = RefittableNUTS(
                linear_model(stats[0]),
                draws=args.draws,
                tune=args.draws,
                target_accept=target,
                random_seed=args.seed,
                compute_convergence_checks=False,
            )
            start = time.perf_counter()
            for s in stats:
                set_linear_stats(s, fitter.model)
                fitter.fit()
            shares = np.array(fitter.divergences) / args.draws
            print(
                f"{target:<13g}  {shares.mean():<15.3%}  {' '.join(f'{v:.3f}' for v in shares):<22} "
                f"{np.median(fitter.times):.1f} (all {time.perf_counter() - start:.0f} s)"
            )


if __name__ == "__main__":
    main()

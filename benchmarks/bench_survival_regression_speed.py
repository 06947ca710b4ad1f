"""Speed of the proportional-hazards regression on the exit table with covariate moments: the
log-density and gradient by blocks (``pm_private.survival.regression.likelihood``) against the
dense k × k factorisation (``NormalLogp`` on the assembled covariance), k = (2J + 1)(d + 1) +
d(d + 1)/2, both compiled in PyTensor's default (Numba) mode, at the same parameters; and, with
``--fit``, the wall time of a refit at d = 10, J = 20 (2 chains of 1000 + 1000, one per core) with
nutpie (PyMC's default NUTS when installed) through :func:`pm_private.sample`, which compiles the model
at its first call and adapts as the family asks (low rank).

Per (d, J): the median over ``--repeats`` runs of the mean time of 200 evaluations of value and
gradient, and the ratio dense / blocks (timed in the same run, interleaved).

    python -m benchmarks.bench_survival_regression_speed
    python -m benchmarks.bench_survival_regression_speed --fit --repeats 5
    python -m benchmarks.bench_survival_regression_speed --law

``--law`` times instead one evaluation of the model's log-density and gradient with the Gaussian
covariate law and with the release's reference law (five of the ten columns declared binary).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import pytensor
import pytensor.tensor as pt
from pymc.blocking import DictToArrayBijection

from pm_private.released.likelihood import normal_logp
from pm_private.survival.regression.likelihood import exit_table_normal_logp
from pm_private.survival.regression.moments import dense_moments, regression_stat_blocks, statistic_size

SHAPES = [(5, 5), (10, 5), (5, 20), (10, 20)]


def functions(d: int, J: int):
    """Compiled (value, gradient) functions of both log-densities and their arguments."""
    rng = np.random.default_rng(0)
    b, m, c, le, ce = pt.vector(), pt.vector(), pt.matrix(), pt.vector(), pt.vector()
    value, noise = pt.vector(), pt.vector()
    n = 10_000.0
    blocks = regression_stat_blocks(b, m, c, le, ce, d)
    mean, cov = dense_moments(blocks, J, d)
    dense = normal_logp(value, n * mean, n * cov + pt.diag(noise))
    block = exit_table_normal_logp(
        value[None], n, pt.ones(1), noise[None], type(blocks)(*(x[None] for x in blocks)), J, d
    )
    wrt = [b, m, c, le, ce]
    inputs = [value, noise, *wrt]
    compiled = {
        name: pytensor.function(inputs, [graph, *pytensor.grad(graph, wrt)], trust_input=True)
        for name, graph in (("dense", dense), ("blocks", block))
    }
    A = rng.normal(size=(d, d)) * 0.3
    params = [
        rng.normal(size=d) * 0.3,
        rng.normal(size=d) * 0.3,
        A @ A.T + np.eye(d),
        np.log(rng.uniform(0.05, 0.2, J)),
        rng.uniform(0.0, 0.1, J),
    ]
    mu, V = pytensor.function(wrt, [mean, cov])(*params)
    k = statistic_size(J, d)
    r = rng.multivariate_normal(n * mu, n * V + 25.0 * np.eye(k))
    args = [r, np.full(k, 25.0), *params]
    values = {name: f(*args)[0] for name, f in compiled.items()}
    assert np.isclose(values["dense"], values["blocks"], rtol=1e-8), values
    return compiled, args


def time_evaluations(f, args, count: int = 200) -> float:
    start = time.perf_counter()
    for _ in range(count):
        f(*args)
    return (time.perf_counter() - start) / count


def fit_time(repeats: int) -> tuple[float, list[float]]:
    """Wall seconds of the first :func:`pm_private.sample` call (compiling the model) and of the
    ``repeats`` calls after it (2 chains of 1000 + 1000 on two cores, nutpie) at d = 10, J = 20,
    n = 10⁴, ε = 1."""
    from scipy import stats as sps

    import pm_private as pp
    from pm_private.survival import release_survival_regression_stats, survival_regression_model

    rng = np.random.default_rng(0)
    n, d, J = 10_000, 10, 20
    X = rng.normal(size=(n, d))
    t = rng.exponential(np.exp(-X @ rng.normal(0.0, 0.3, d)))
    c = rng.exponential(1 / 0.3, n)
    edges = np.quantile(t, np.linspace(0.1, 0.9, J))
    release = release_survival_regression_stats(
        np.minimum(t, c), t <= c, X, edges=edges, x_bound=float(np.sqrt(sps.chi2.ppf(0.999, d))), epsilon=1.0,
        delta=1e-6, rng=1,
    )  # fmt: skip
    model = survival_regression_model(release)
    times = []
    for seed in range(repeats + 1):
        start = time.perf_counter()
        pp.sample(model, chains=2, cores=2, draws=1000, tune=1000, random_seed=seed, sampler="nutpie")
        times.append(time.perf_counter() - start)
    return times[0], times[1:]


def law_gradient_times(repeats: int) -> dict[str, float]:
    """Median ms of one log-density-and-gradient evaluation of the model (PyMC's raveled function,
    as NUTS calls it) at d = 10 (five binary columns declared), J = 20, n = 10⁴, ε = 1, with the
    Gaussian covariate law and with the release's reference law (2,048 rows), interleaved."""
    import pm_private as pp
    from pm_private.survival import release_survival_regression_stats, survival_regression_model

    rng = np.random.default_rng(0)
    n, d, J = 10_000, 10, 20

    def rows(size):
        return np.c_[rng.normal(size=(size, d // 2)), rng.random((size, d - d // 2)) < 0.3].astype(float)

    X = rows(n)
    t = rng.exponential(np.exp(-X @ rng.normal(0.0, 0.3, d)))
    c = rng.exponential(1 / 0.3, n)
    release = release_survival_regression_stats(
        np.minimum(t, c), t <= c, X, edges=np.quantile(t, np.linspace(0.1, 0.9, J)), x_bound=6.0, epsilon=1.0,
        delta=1e-6, rng=1, preprocessing=pp.Preprocessing.from_public(rows(200)),
    )  # fmt: skip
    functions = {}
    for name, law in (("Gaussian law", None), ("reference law", "public")):
        model = survival_regression_model(release, x_sample=law)
        f = model.logp_dlogp_function(ravel_inputs=True)
        f.set_extra_values({})
        point = DictToArrayBijection.map(model.initial_point()).data
        f(point)
        functions[name] = (f, point)
    runs = {name: [] for name in functions}
    for _ in range(repeats):
        for name, (f, point) in functions.items():
            runs[name].append(time_evaluations(f, [point]))
    return {name: 1e3 * float(np.median(values)) for name, values in runs.items()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--fit", action="store_true", help="also time nutpie refits at d = 10, J = 20")
    parser.add_argument(
        "--law", action="store_true", help="only time a gradient with the Gaussian and the reference covariate law"
    )
    args = parser.parse_args(argv)
    if args.law:
        times = law_gradient_times(args.repeats)
        print(
            f"d = 10, J = 20, one gradient (median of {args.repeats}): "
            + ", ".join(f"{name} {ms:.2f} ms" for name, ms in times.items())
            + f"; reference / Gaussian {times['reference law'] / times['Gaussian law']:.2f}"
        )
        print(f"load average {os.getloadavg()[0]:.2f}")
        return
    print("| d | J | k | dense ms | blocks ms | dense / blocks |")
    print("|---|---|---|---|---|---|")
    for d, J in SHAPES:
        compiled, values = functions(d, J)
        runs = {"dense": [], "blocks": []}
        for _ in range(args.repeats):
            for name, f in compiled.items():
                runs[name].append(time_evaluations(f, values))
        dense, block = (1e3 * np.median(runs[name]) for name in ("dense", "blocks"))
        print(f"| {d} | {J} | {statistic_size(J, d)} | {dense:.2f} | {block:.2f} | {dense / block:.1f} |", flush=True)
    if args.fit:
        first, times = fit_time(args.repeats)
        print(f"\npm_private.sample (nutpie), d = 10, J = 20, 2 chains of 1000 + 1000 on 2 cores: first call "
              f"(compiling) {first:.1f} s; refits median {np.median(times):.1f} s "
              f"(runs {', '.join(f'{t:.1f}' for t in times)})")  # fmt: skip
    print(f"\nload average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()

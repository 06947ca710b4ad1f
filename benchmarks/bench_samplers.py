"""Every NUTS sampler PyMC offers on every model kind: compilation, sampling, agreement.

Per model kind and sampler (``pymc``, ``nutpie`` with its Numba and its JAX backend, ``numpyro``,
``blackjax``, and ``nutpie-refit``: nutpie compiled once by ``RefittableNutpie`` and refitted),
two new processes each build the model and fit it twice (2 chains × (``--tune`` + ``--draws``),
one core each):

* ``first s``: the first call's wall time in the first process (compilation with whatever disk
  caches earlier runs left, and sampling);
* ``again s``: the second call in the same process (what a refit of the same model costs);
* ``new process s``: the first call in the second process (the disk caches warm);
* ``agree``: the largest |posterior mean − PyMC's posterior mean| over the model's scalar
  parameters, in PyMC's posterior s.d.; ``failed`` with the error where the pair does not run.

Models (sizes of the goals): ``linear`` (d = 10, n = 3000), ``logistic`` and ``poisson`` (d = 10,
n = 5000), ``survival`` (exit table, 4 cells, J = 20, n = 4000), ``survival_regression`` (n = 10⁴, d = 5, J =
5), ``weibull_model`` (n = 2000, d =
3), ``discrete_time`` (n = 10⁴, q = 20, d = 3).  Releases at ε = 1, δ = 10⁻⁶ (seeded noise).

Run ``python -m benchmarks.bench_samplers`` (about an hour on 2 cores); ``--models`` and
``--samplers`` select, ``--out`` writes the table as markdown.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

import numpy as np

SAMPLERS = ("pymc", "nutpie", "nutpie-refit", "nutpie-jax", "numpyro", "blackjax")
MODELS = ("linear", "logistic", "poisson", "survival", "survival_regression", "weibull_model", "discrete_time")


def build(name: str):
    """The model of ``name`` (module notes)."""
    import pm_private as pp
    from pm_private.survival import DiscreteTimeData, discrete_time_model, weibull_model

    rng = np.random.default_rng(0)
    if name in ("linear", "logistic", "poisson"):
        n, d = (3000, 10) if name == "linear" else (5000, 10)
        X = rng.normal(size=(n, d)) / np.sqrt(d)
        beta = rng.normal(size=d)
        if name == "linear":
            y = X @ beta + 0.5 * rng.normal(size=n)
            return pp.linear_model(
                pp.release_linear_stats(X, y, epsilon=1.0, delta=1e-6, x_bound=3.0, y_bound=4.0, rng=1)
            )
        if name == "logistic":
            y = rng.uniform(size=n) < 1 / (1 + np.exp(-(X @ beta)))
            return pp.logistic_model(pp.release_logistic_stats(X, y, epsilon=1.0, delta=1e-6, x_bound=3.0, rng=1))
        counts = rng.poisson(np.exp(0.5 + 0.3 * X @ beta))
        return pp.poisson_model(
            pp.release_poisson_stats(X, counts, epsilon=1.0, delta=1e-6, x_bound=3.0, y_bound=10, rng=1)
        )
    if name == "survival":
        cells = ["a", "b", "c", "d"]
        cell = rng.choice(cells, 4000)
        T = rng.exponential(1.0 / (0.8 * np.exp(np.array([0.0, -0.3, 0.2, 0.4]))[np.searchsorted(cells, cell)]))
        C = rng.uniform(0, 2, 4000)
        release = pp.release_survival_stats(
            np.minimum(T, C), T <= C, cell, edges=np.linspace(0, 1, 21)[1:], cells=cells, epsilon=1.0, delta=1e-6, rng=1
        )
        return pp.survival_model(release)
    if name == "survival_regression":
        X = rng.normal(size=(10_000, 5)) / np.sqrt(5)
        T = rng.exponential(1.0 / (0.8 * np.exp(X @ [0.5, -0.3, 0.2, 0.0, 0.1])))
        C = rng.uniform(0, 2, 10_000)
        release = pp.release_survival_regression_stats(
            np.minimum(T, C), T <= C, X, edges=np.linspace(0, 1.5, 6)[1:], x_bound=3.0, epsilon=1.0, delta=1e-6, rng=1
        )
        return pp.survival_regression_model(release)
    if name == "weibull_model":
        X = rng.normal(size=(2000, 3))
        T = rng.weibull(1.5, 2000) * np.exp(X @ [0.3, -0.2, 0.1])
        return weibull_model(np.minimum(T, 2.0), (T <= 2.0).astype(int), X)
    if name == "discrete_time":
        X = rng.normal(size=(10_000, 3)) / np.sqrt(3)
        time_ = rng.exponential(1.0 / np.exp(X @ [0.5, -0.3, 0.2]))
        event = (time_ < 1.0).astype(int)
        return discrete_time_model(DiscreteTimeData.from_times(X, np.minimum(time_, 1.0), event, q=20, e=4))
    raise ValueError(f"unknown model {name!r}")


def _sample_kwargs(sampler: str) -> dict:
    if sampler == "nutpie-jax":
        return {"nuts_sampler": "nutpie", "nuts_sampler_kwargs": {"backend": "jax", "gradient_backend": "jax"}}
    return {"nuts_sampler": sampler}


def child(name: str, sampler: str, draws: int, tune: int) -> dict:
    """Two ``pm.sample`` calls in this process: their wall times and the posterior means."""
    import warnings

    import pymc as pm

    warnings.filterwarnings("ignore")
    out = {"times": []}
    model = build(name)
    if sampler == "nutpie-refit":  # compiled once by RefittableNutpie, then refitted
        from pm_private.sampling import RefittableNutpie

        start = time.perf_counter()
        fitter = RefittableNutpie(model, draws=draws, tune=tune, chains=2)
        for _ in range(2):
            idata = fitter.fit()
            out["times"].append(time.perf_counter() - start)
            start = time.perf_counter()
        posterior = idata["posterior"]
        out["mean"] = {
            k: np.asarray(posterior[k].mean(("chain", "draw"))).ravel().tolist() for k in posterior.data_vars
        }
        out["sd"] = {k: np.asarray(posterior[k].std(("chain", "draw"))).ravel().tolist() for k in posterior.data_vars}
        return out
    for call in range(2):
        start = time.perf_counter()
        with model:
            idata = pm.sample(
                draws, tune=tune, chains=2, cores=1, random_seed=call, progressbar=False, **_sample_kwargs(sampler)
            )
        out["times"].append(time.perf_counter() - start)
    posterior = idata["posterior"]
    out["mean"] = {k: np.asarray(posterior[k].mean(("chain", "draw"))).ravel().tolist() for k in posterior.data_vars}
    out["sd"] = {k: np.asarray(posterior[k].std(("chain", "draw"))).ravel().tolist() for k in posterior.data_vars}
    return out


def run_pair(name: str, sampler: str, args) -> list[dict]:
    results = []
    for _ in range(2):
        command = [sys.executable, "-m", "benchmarks.bench_samplers", "--child", name, sampler]
        command += ["--draws", str(args.draws), "--tune", str(args.tune)]
        done = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout)
        if done.returncode != 0:
            lines = done.stderr.strip().splitlines() or ["(no output)"]
            errors = [line for line in lines if "Error:" in line]
            return [{"error": (errors or lines)[-1][:160]}]
        results.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return results


def agreement(result: dict, reference: dict) -> float:
    worst = 0.0
    for key, mean in result["mean"].items():
        if key not in reference["mean"]:
            continue
        ref, sd = np.asarray(reference["mean"][key]), np.asarray(reference["sd"][key])
        keep = sd > 0
        if keep.any():
            worst = max(worst, float(np.max(np.abs(np.asarray(mean)[keep] - ref[keep]) / sd[keep])))
    return worst


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", choices=MODELS, default=list(MODELS))
    parser.add_argument("--samplers", nargs="+", choices=SAMPLERS, default=list(SAMPLERS))
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--tune", type=int, default=1000)
    parser.add_argument("--timeout", type=int, default=900)
    parser.add_argument("--out")
    parser.add_argument("--child", nargs=2, metavar=("MODEL", "SAMPLER"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(*args.child, args.draws, args.tune)))
        return
    header = "| model | sampler | first s | again s | new process s | agree (sd) |"
    lines = [header, "|---|---|---|---|---|---|"]
    print("\n".join(lines), flush=True)
    for name in args.models:
        reference = None
        for sampler in args.samplers:
            results = run_pair(name, sampler, args)
            if "error" in results[0]:
                row = f"| {name} | {sampler} | failed: {results[0]['error']} | | | |"
            else:
                if sampler == "pymc":
                    reference = results[1]
                agree = agreement(results[1], reference) if reference is not None else float("nan")
                (first, again), (new, _) = results[0]["times"], results[1]["times"]
                row = f"| {name} | {sampler} | {first:.1f} | {again:.1f} | {new:.1f} | {agree:.2f} |"
            lines.append(row)
            print(row, flush=True)
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()

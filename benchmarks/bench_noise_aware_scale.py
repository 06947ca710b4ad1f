"""Noise-aware regression on a Gaussian release at d = 5 … 500: the O(d³) spectral likelihood against
the dense O(d⁶) one (Bernstein & Sheldon 2019's model, marginalised as in
:mod:`pm_private.linear.noise_aware`).

For every d a data set (n = ``--n`` rows, standard normal covariates, y = xᵀβ + N(0, 1)) is
released with :func:`pm_private.release_linear_stats` (ε = 1, δ = 10⁻⁵, rows of norm
≤ 1.5·√d, |y| ≤ 4·sd(y)), and each d runs in a fresh process (its peak resident memory is the
process's, compilation included):

* ``grad``: one evaluation of the log-density and its gradient of the model
  ``linear_model(release, x_cov=--x-cov)`` (default ``"integrated"``: the covariate model
  integrated out, d + 2 latent parameters; ``"wishart"`` adds the d(d+1)/2 parameters of Σx and
  uses the spectral likelihood), median of ``--repeats`` timed runs of a batch of calls, after
  compilation;
* ``lik``: the same for the likelihood term alone, ``frobenius_stats_logp`` (new) against
  ``noisy_stats_logp`` (old, dense, only up to ``--dense-max-d``), with respect to L_C;
* ``old``: the full model as it was built before the spectral likelihood (dense likelihood,
  Wishart Σx prior), up to ``--old-model-max-d``;
* ``fit``: NUTS (``--target-accept``, default PyMC's 0.8) after compilation (the step is compiled
  once, then ``pm.sample`` reuses it; the median of ``--fit-repeats`` fits up to d =
  ``--fit-repeats-max-d``, one fit above), two chains one after the other (``--parallel``: at
  once, in two worker processes, as ``pm.sample`` runs them by default; each worker then receives
  the pickled step and rebuilds its compiled function, seconds per call on a loaded machine,
  inside the timing).  At d ≤ ``--full-fit-max-d`` the fit is the full 1000 tuning + 1000 kept
  draws per chain; above, a shorter run (``--short-fit`` iterations per chain, one chain) whose
  time is extrapolated linearly to 2 × 2000 iterations (marked ``*``; short tuning adapts the step
  size less well, so the extrapolation errs on the slow side).

The log–log slope of the gradient time against d is fitted from d = 20 up.  ``--busy 2`` keeps two
``while True: pass`` processes running for the whole benchmark (a loaded 2-core machine).
BLAS threads are left as the library sets them (no ``threadpool_limits`` here): the benchmark
measures what a user gets without action.

    .venv/bin/python benchmarks/bench_noise_aware_scale.py [--ds 5 10 20 50 64 100 200 500] [--busy 2]

Goals: one gradient at d = 64 under 2 ms and at d = 500 under 0.5 s, slope ≤ 3.3 from d = 20;
a NUTS fit (1000 draws, 2 chains) at d = 64 under 3 minutes and at d = 10 under 5 s with the
machine's load ≥ 4.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

import numpy as np

DS = (5, 10, 20, 50, 64, 100, 200, 500)


def _median_time(fn, *args, repeats: int, min_batch_s: float = 0.05) -> float:
    """Median over ``repeats`` of the mean time of one call (calls batched to ≥ min_batch_s)."""
    fn(*args)
    start = time.perf_counter()
    fn(*args)
    one = max(time.perf_counter() - start, 1e-7)
    calls = max(1, int(min_batch_s / one))
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            fn(*args)
        times.append((time.perf_counter() - start) / calls)
    return float(np.median(times))


def _release(d: int, n: int, seed: int):
    from pm_private import release_linear_stats

    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    beta = rng.standard_normal(d) / np.sqrt(d)
    y = X @ beta + rng.standard_normal(n)
    return release_linear_stats(
        X, y, epsilon=1.0, delta=1e-5, x_bound=1.5 * np.sqrt(d), y_bound=4.0 * y.std(), rng=seed
    )


def _model_gradient(model, repeats: int) -> float:
    fn = model.logp_dlogp_function(ravel_inputs=True)
    fn.set_extra_values({})
    point = model.initial_point()
    x = np.concatenate([np.ravel(point[v.name]) for v in fn._grad_vars])
    return _median_time(fn, x, repeats=repeats)


def _likelihood_gradients(release, d: int, dense: bool, repeats: int) -> tuple[float, float | None]:
    import pytensor
    import pytensor.tensor as pt

    from pm_private.linear.model import release_x_cov
    from pm_private.linear.noise_aware import frobenius_stats_logp, noise_aware_arrays, noisy_stats_logp
    from pm_private.linear.stats import frobenius_weights, stat_pairs

    arrays = noise_aware_arrays(release)
    s2 = float(arrays["noise_var"][-1])
    a, b = stat_pairs(d)
    matrix = np.zeros((d + 1, d + 1))
    matrix[a, b] = matrix[b, a] = arrays["private"]
    cov = np.zeros((d + 1, d + 1))
    cov[:d, :d] = release_x_cov(release)
    cov[d, d] = 2.0
    chol_value = np.linalg.cholesky(cov)
    chol = pt.dmatrix("chol")
    new = frobenius_stats_logp(chol, matrix, arrays["private_n"], s2)
    f_new = pytensor.function([chol], [new, pytensor.grad(new, chol)])
    t_new = _median_time(f_new, chol_value, repeats=repeats)
    if not dense:
        return t_new, None
    old = noisy_stats_logp(chol, arrays["private"], arrays["private_n"], s2 / frobenius_weights(d) ** 2, d)
    f_old = pytensor.function([chol], [old, pytensor.grad(old, chol)])
    np.testing.assert_allclose(f_old(chol_value)[0], f_new(chol_value)[0], rtol=1e-8)
    return t_new, _median_time(f_old, chol_value, repeats=repeats)


def _fit_time(
    model, iterations: int | None, chains: int, parallel: bool = False, repeats: int = 1, target_accept: float = 0.8
) -> tuple[float, bool]:
    """Seconds of a NUTS fit after compilation (median of ``repeats`` fits), and whether it was
    extrapolated to 2 × 2000.  ``parallel``: the chains run at once in worker processes
    (``pm.sample``'s default on 2 cores)."""
    import pymc as pm

    full = iterations is None
    tune = draws = 1000 if full else iterations
    with model:
        step = pm.NUTS(target_accept=target_accept)
        kw = dict(step=step, progressbar=False, compute_convergence_checks=False)
        pm.sample(draws=5, tune=5, random_seed=0, chains=1, cores=1, **kw)  # compiles nothing new; warms the caches
        times = []
        for repeat in range(repeats):
            seed = 1 + chains * repeat
            start = time.perf_counter()
            if parallel:
                pm.sample(draws=draws, tune=tune, random_seed=seed, chains=chains, cores=chains, **kw)
            else:
                for chain in range(chains):
                    pm.sample(draws=draws, tune=tune, random_seed=seed + chain, chains=1, cores=1, **kw)
            times.append(time.perf_counter() - start)
        elapsed = float(np.median(times))
    if full:
        return elapsed, False
    return elapsed * (2 * 2000) / (chains * (tune + draws)), True


def run_one(d: int, args) -> dict:
    """All measurements of one d (in this process)."""
    import logging
    import warnings

    logging.getLogger("pymc").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore")
    from pm_private.linear.model import linear_model

    release = _release(d, args.n, seed=d)
    row = {"d": d, "k": (d + 1) * (d + 2) // 2}
    start = time.perf_counter()
    model = linear_model(release, x_cov=args.x_cov)
    row["latent"] = int(sum(np.size(value) for value in model.initial_point().values()))
    row["grad_ms"] = 1e3 * _model_gradient(model, args.repeats)
    row["compile_s"] = time.perf_counter() - start
    lik_new, lik_old = _likelihood_gradients(release, d, d <= args.dense_max_d, args.repeats)
    row["lik_ms"], row["lik_old_ms"] = 1e3 * lik_new, None if lik_old is None else 1e3 * lik_old
    if d <= args.old_model_max_d:
        old_model = linear_model(release, likelihood="dense", x_cov="wishart")
        row["old_grad_ms"] = 1e3 * _model_gradient(old_model, args.repeats)
    if d in args.fit_ds:
        iterations = None if d <= args.full_fit_max_d else args.short_fit
        repeats = args.fit_repeats if d <= args.fit_repeats_max_d else 1
        row["fit_s"], row["fit_extrapolated"] = _fit_time(
            model,
            iterations,
            2 if iterations is None else 1,
            args.parallel and iterations is None,
            repeats,
            args.target_accept,
        )
        if d <= args.old_fit_max_d:
            row["old_fit_s"], _ = _fit_time(old_model, None, 2, args.parallel, repeats, args.target_accept)
    row["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    row["load"] = os.getloadavg()[0]
    return row


def _fmt(value, spec: str) -> str:
    return "—" if value is None else format(value, spec)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ds", type=int, nargs="+", default=list(DS))
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--dense-max-d", type=int, default=20, help="largest d of the dense likelihood's gradient")
    parser.add_argument("--old-model-max-d", type=int, default=20, help="largest d of the old model's gradient")
    parser.add_argument("--old-fit-max-d", type=int, default=10, help="largest d of the old model's NUTS fit")
    parser.add_argument("--fit-ds", type=int, nargs="*", default=[5, 10, 20, 50, 64, 100, 200])
    parser.add_argument("--short-fit", type=int, default=100, help="tuning = kept iterations of a short fit")
    parser.add_argument("--full-fit-max-d", type=int, default=100, help="largest d of a full NUTS fit")
    parser.add_argument("--target-accept", type=float, default=0.8, help="NUTS target acceptance (default PyMC's, 0.8)")
    parser.add_argument("--fit-repeats", type=int, default=5, help="fits per d, median reported (small d only)")
    parser.add_argument("--fit-repeats-max-d", type=int, default=20, help="largest d fitted --fit-repeats times")
    parser.add_argument("--x-cov", choices=["integrated", "wishart", "release"], default="integrated")
    parser.add_argument("--busy", type=int, default=0, help="busy-loop processes kept running meanwhile")
    parser.add_argument(
        "--parallel", action="store_true", help="full fits run their two chains at once (pm.sample's default)"
    )
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one is not None:
        print(json.dumps(run_one(args.one, args)))
        return
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)]
    rows = []
    try:
        for d in args.ds:
            cmd = [sys.executable, __file__, "--one", str(d), *(argv if argv is not None else sys.argv[1:])]
            out = subprocess.run(cmd, capture_output=True, text=True)
            if out.returncode != 0:
                print(f"d = {d} failed:\n{out.stderr[-2000:]}", file=sys.stderr)
                continue
            rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
            print(json.dumps(rows[-1]), flush=True)
    finally:
        for process in busy:
            process.kill()
            process.wait()
    print(
        f"\nGaussian release, n = {args.n}, x_cov = {args.x_cov!r}, busy-loop processes: {args.busy}, "
        f"NUTS target_accept = {args.target_accept:g}, chains {'at once' if args.parallel else 'one after the other'}"
    )
    header = (
        "| d | k | latent | model grad (ms) | old model grad (ms) | ratio | likelihood grad (ms) | dense (ms) | ratio "
        "| NUTS fit (s) | old fit (s) | peak MB | load |"
    )
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    for r in rows:
        old, lik_old = r.get("old_grad_ms"), r.get("lik_old_ms")
        fit = r.get("fit_s")
        fit_text = "—" if fit is None else f"{fit:.1f}{'*' if r.get('fit_extrapolated') else ''}"
        print(
            f"| {r['d']} | {r['k']} | {r['latent']} | {r['grad_ms']:.3f} | {_fmt(old, '.3f')} | "
            f"{_fmt(None if old is None else old / r['grad_ms'], '.1f')} | {r['lik_ms']:.3f} | {_fmt(lik_old, '.3f')} | "
            f"{_fmt(None if lik_old is None else lik_old / r['lik_ms'], '.1f')} | {fit_text} | "
            f"{_fmt(r.get('old_fit_s'), '.1f')} | {r['peak_mb']:.0f} | {r['load']:.1f} |"
        )
    big = [r for r in rows if r["d"] >= 20]
    if len(big) >= 2:
        for key, label in (("grad_ms", "model gradient"), ("lik_ms", "likelihood gradient")):
            slope = np.polyfit(np.log([r["d"] for r in big]), np.log([r[key] for r in big]), 1)[0]
            print(f"log–log slope of the {label} time from d = 20: {slope:.2f}")
    print("* extrapolated from a shorter fit to 2 chains × (1000 tuning + 1000 draws)")


if __name__ == "__main__":
    main()

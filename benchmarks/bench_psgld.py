"""Updates per second of ``pm.sample`` with PSGLD next to a plain NumPy and a Numba pSGLD loop, same loss.

The target is the sanitized-loss potential (Nguyên & Hui 2017a, Alg. 3, ε = 1, paper defaults for v and σ)
with either the discrete-time survival loss on FL (default, ``--problem discrete-time``:
n = 7874 records of ``sksurv``'s flchain, d = 8 unit-ball covariates, e = 3 spline coefficients,
q = 200 intervals, logit link) or a logistic-regression per-record loss of FL-like size
(``--problem logistic``: n = 7874, d = 11).  All samplers run the same update with k = 200,
μ = 0.99, λ = 10⁻⁵ (Nguyên & Hui 2017a, §6.2) and the same number of updates, draw minibatches
of k distinct records, and freeze V after tuning; the reference gradients are checked against
PSGLD's compiled one first.  Goal: PSGLD within 2× of the Numba loop.  Also prints the wall
time of 10⁴ burn-in updates + 250 epochs (epoch = n updates), extrapolated from the rates.

    .venv/bin/python benchmarks/bench_psgld.py [--problem discrete-time] [--updates 200000]
        [--thin 100 1] [--mode NUMBA] [--repeats 5]

Every row is the median of ``--repeats`` timed runs (the NumPy loop runs a tenth of the updates).

The NumPy loop of the discrete-time problem calls pm_private.survival's public
record_loss_numpy and record_grad_numpy on ``data.subset(idx)`` ((k, q) arrays, a validation
per update); the Numba loop calls the logit kernels of the compiled Op directly (one pass over
the at-risk intervals) inside one ``numba.njit`` loop, as tight as hand-written code gets.
The logistic problem's NumPy loop is a hand-written gradient and has no Numba loop; it also times
the per-chain loop of :func:`pm_private.sampling.dp_sgld` on the same records (a PyMC model with a
Bernoulli likelihood, Poisson subsamples at q = k/n, so about k records a step, per-record gradients
clipped, the secure noise source), compiled and planned before the clock starts.  Goal: DP-SGLD
within 2× of PSGLD's time per update.
A new problem needs a PyTensor per-record loss for ``sanitized_loss`` and a NumPy function
returning the per-record losses and their gradients (see ``PROBLEMS``).
"""

import argparse
import os
import time
from functools import partial

import numpy as np
import pymc as pm

from pm_private.sampling.psgld import PSGLD
from pm_private.sampling.sanitized import logistic_loss, sanitized_loss

N, EPSILON, K, MU, LAM, BURN_IN, EPOCHS = 7874, 1.0, 200, 0.99, 1e-5, 10_000, 250


def logistic_problem(rng):
    """ℓ_LR(yᵢxᵢᵀf), xᵢ in the unit ball (intercept + 10 covariates), labels ±1."""
    X = rng.normal(size=(N, 11))
    X[:, 0] = 1.0
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.where(rng.random(N) < 1 / (1 + np.exp(-X @ np.linspace(-2, 2, 11))), 1.0, -1.0)

    def losses_and_grads(f, idx):
        Xb, yb = X[idx], y[idx]
        z = -yb * (Xb @ f)
        return np.logaddexp(0.0, z), (-yb / (1.0 + np.exp(-z)))[:, None] * Xb

    return logistic_loss, (X, y), 11, losses_and_grads


def discrete_time_problem(rng):
    """Discrete-time hazard loss, logit link (Nguyên & Hui 2017a, Eq. 3), on FL (q = 200, e = 3)."""
    from functools import partial

    from models.discrete_time_survival import load_fl_discrete
    from pm_private.survival import record_grad_numpy, record_loss, record_loss_numpy

    data = load_fl_discrete(200, 3)[0]
    assert data.n == N

    def losses_and_grads(f, idx):
        batch = data.subset(idx)
        return record_loss_numpy(f, batch), record_grad_numpy(f, batch)

    loss = partial(record_loss, basis=data.basis)
    return loss, (data.X, data.interval, data.event), data.dim, losses_and_grads


def numba_discrete_time_psgld(data_arrays, basis, dim, updates, tune, step, v, sigma, seed):
    """The pSGLD loop with the discrete-time gradient, all in one ``numba.njit`` function."""
    import numba

    from pm_private.sampling.psgld import _distinct_indices
    from pm_private.survival.discrete.ops import _logit_loss_grad_kernel, _logit_loss_kernel

    @numba.njit
    def run(X, interval, event, basis, dim, updates, tune, a, b, tau, v, sigma, rng):
        n, e = X.shape[0], basis.shape[1]
        mark = np.zeros(n, dtype=np.bool_)
        f, V, precond = np.zeros(dim), np.ones(dim), np.ones(dim)
        c = EPSILON / (2.0 * v)
        for t in range(1, updates + 1):
            idx = _distinct_indices(rng, n, K, mark)
            Xb, kb, db = X[idx], interval[idx], event[idx]
            gamma, eta = basis @ f[:e], Xb @ f[e:]
            losses = _logit_loss_kernel(gamma, eta, kb, db)
            tanh = np.tanh(np.maximum(losses, 0.0) / v)
            weight = -c * (n / K) * (1.0 - tanh * tanh) * (losses > 0)
            d_gamma, d_eta = _logit_loss_grad_kernel(gamma, eta, kb, db, weight)
            grad = np.concatenate((basis.T @ d_gamma, Xb.T @ d_eta)) - c * sigma * f
            if t == 1:
                V = grad * grad + 1.0
            elif t <= tune:
                V = MU * V + (1.0 - MU) * grad * grad
            if t <= tune:
                precond = 1.0 / (LAM + np.sqrt(V))
            h = a * (b + t) ** -tau
            f = f + 0.5 * h * precond * grad + np.sqrt(h * precond) * rng.standard_normal(dim)
        return f

    X, interval, event = data_arrays
    args = (X, interval, event, np.ascontiguousarray(basis), dim)
    run(*args, 10, 5, step.a, step.b, step.tau, v, sigma, np.random.default_rng(seed))  # compile
    return lambda: run(*args, updates, tune, step.a, step.b, step.tau, v, sigma, np.random.default_rng(seed))


PROBLEMS = {"logistic": logistic_problem, "discrete-time": discrete_time_problem}


def numpy_logp_grad(f, idx, losses_and_grads, v, sigma):
    """Minibatch estimate of ε/(2v)·U and its gradient, records scaled by n/k (as PSGLD)."""
    losses, grads = losses_and_grads(f, idx)
    tanh = np.tanh(np.maximum(losses, 0.0) / v)
    scale, c = N / len(idx), EPSILON / (2.0 * v)
    logp = c * (-0.5 * sigma * f @ f - scale * v * tanh.sum())
    grad = c * (-sigma * f - scale * ((1.0 - tanh * tanh) * (losses > 0)) @ grads)
    return logp, grad


def numpy_psgld(dim, updates, tune, step, losses_and_grads, v, sigma, seed):
    """The pSGLD loop of PSGLD.astep in plain NumPy (frozen V after ``tune`` updates)."""
    rng = np.random.default_rng(seed)
    f, V = np.zeros(dim), None
    for t in range(1, updates + 1):
        idx = rng.choice(N, K, replace=False, shuffle=False)
        _, grad = numpy_logp_grad(f, idx, losses_and_grads, v, sigma)
        if V is None or t <= tune:
            V = grad * grad + 1.0 if V is None else MU * V + (1.0 - MU) * grad * grad
            precond = 1.0 / (LAM + np.sqrt(V))
        h = step.a * (step.b + t) ** -step.tau
        f = f + 0.5 * h * precond * grad + np.sqrt(h * precond) * rng.standard_normal(dim)
    return f


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--problem", choices=sorted(PROBLEMS), default="discrete-time")
    parser.add_argument("--updates", type=int, default=200_000, help="pSGLD updates per measurement")
    parser.add_argument("--thin", type=int, nargs="+", default=[100, 1], help="updates per stored draw")
    parser.add_argument("--mode", default="NUMBA", help="PyTensor mode of the compiled gradient")
    parser.add_argument("--repeats", type=int, default=5, help="timed runs per row (the table shows the median)")
    args = parser.parse_args()

    loss, data, dim, losses_and_grads = PROBLEMS[args.problem](np.random.default_rng(0))
    with pm.Model() as model:
        f = pm.Flat("f", shape=dim)
        term = sanitized_loss("U", loss, f, data, epsilon=EPSILON)
    settings = {"batch_size": K, "mu": MU, "lam": LAM, "a": 0.05, "compile_kwargs": {"mode": args.mode}}
    start = time.perf_counter()
    with model:
        step = PSGLD(**settings)
    compile_s = time.perf_counter() - start

    probe_rng = np.random.default_rng(1)
    f0, idx = 0.3 * probe_rng.standard_normal(dim), probe_rng.choice(N, K, replace=False)
    logp, grad = step._fn(f0, idx)
    ref_logp, ref_grad = numpy_logp_grad(f0, idx, losses_and_grads, term.v, term.sigma)
    np.testing.assert_allclose([logp, *grad], [ref_logp, *ref_grad], rtol=1e-8, atol=1e-10)

    tune_updates = args.updates // 10
    numpy_updates = args.updates // 10  # the slow loop: a tenth of the updates gives the same rate
    rates = {
        "NumPy loop": timed(
            lambda: numpy_psgld(dim, numpy_updates, tune_updates // 10, step, losses_and_grads, term.v, term.sigma, 2),
            numpy_updates,
            args.repeats,
        )
    }
    if args.problem == "discrete-time":
        basis = loss.keywords["basis"]
        numba_run = numba_discrete_time_psgld(data, basis, dim, args.updates, tune_updates, step, term.v, term.sigma, 2)
        rates["Numba loop"] = timed(numba_run, args.updates, args.repeats)
    for thin in args.thin:
        draws = args.updates // thin
        tune = max(1, draws // 10)
        sample = {
            "chains": 1,
            "cores": 1,
            "random_seed": 3,
            "progressbar": False,
            "quiet": True,
            "compute_convergence_checks": False,
        }
        with model:
            step = PSGLD(thin=thin, **settings)
            pm.sample(draws=2, tune=1, step=step, **sample)  # compiles the update loop (Numba backend)
            run_chain = partial(pm.sample, draws=draws - tune, tune=tune, step=step, **sample)
            rates[f"pm.sample(PSGLD, thin={thin})"] = timed(run_chain, draws * thin, args.repeats)

    if args.problem == "logistic":
        rates["dp_sgld (q = k/n)"] = timed(dp_sgld_chain(*data, args.updates), args.updates, args.repeats)

    reference = rates.get("Numba loop", rates["NumPy loop"])[1]
    run = EPOCHS * N + BURN_IN
    print(
        f"problem {args.problem}: n = {N}, dim f = {dim}, k = {K}, mode {args.mode}, "
        f"{args.updates:,} updates per run (NumPy loop {numpy_updates:,}), median of {args.repeats} runs; "
        f"PSGLD compile {compile_s:.1f} s; load average "
        f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
    )
    print(
        f"ratio = CPU time per update / that of the {'Numba' if 'Numba loop' in rates else 'NumPy'} loop; "
        "250 epochs = wall time of 10⁴ + 250·n updates at the measured wall rate"
    )
    print(f"{'sampler':<30}{'updates/s':>12}{'per CPU s':>12}{'ratio':>8}{'250 epochs':>13}")
    for label, (wall, cpu) in rates.items():
        print(f"{label:<30}{wall:>12,.0f}{cpu:>12,.0f}{reference / cpu:>8.2f}{run / wall / 60:>9.1f} min")


def dp_sgld_chain(X, y, updates):
    """A function running one DP-SGLD chain of ``updates`` steps on the logistic records (ε = 1,
    δ = 10⁻⁵, C = 1, q = k/n, the secure noise source): the gradients compiled and the run planned
    once, so that only the chain's loop is timed."""
    from pm_private.privacy.noise import as_noise_source
    from pm_private.sampling.private_langevin import _chain, _gradient_functions, plan_dp_sgld

    with pm.Model() as model:
        f = pm.Normal("f", 0.0, 10.0, shape=X.shape[1])
        pm.Bernoulli("y", logit_p=pm.math.dot(X, f), observed=(y > 0).astype(int))
    gradients, n, start, _ = _gradient_functions(model)
    plan = plan_dp_sgld(1.0, 1e-5, n=n, sampling_rate=K / n, clip=1.0, steps=updates, clip_share=0, thin=1)
    source = as_noise_source(None)
    _chain(gradients, start, plan, source, 0, 10)  # the first call of the compiled gradients
    return lambda: _chain(gradients, start, plan, source, 0, updates)


def timed(run, updates, repeats):
    """Medians over ``repeats`` calls of ``run()`` of (updates per wall-clock second, updates per CPU
    second of this process)."""
    rates = []
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        run()
        rates.append((updates / (time.perf_counter() - wall), updates / (time.process_time() - cpu)))
    return tuple(np.median(rates, axis=0))


if __name__ == "__main__":
    main()

"""Updates per second of ``pm.sample`` with PSGLD next to a plain NumPy pSGLD loop, same loss, same run.

The target is the sanitized-loss potential (Nguyên & Hui 2017a, Alg. 3, ε = 1, paper defaults for v and σ)
with either a logistic-regression per-record loss of FL-like size (n = 7874, d = 11; default) or
the discrete-time survival loss (``--problem discrete-time``: n = 7874, d = 8 covariates and
e = 3 spline coefficients, q = 200, records simulated by pm_private.survival).  Both samplers run
the same update with k = 200, μ = 0.99, λ = 10⁻⁵ (Nguyên & Hui 2017a, §6.2) and the same number of updates,
draw minibatches the same way (k distinct records), and freeze V after tuning; the NumPy
gradient is checked against PSGLD's compiled one first.  Goal: the PyMC integration
costs at most 2× the plain loop.  Also prints the wall time of 10⁴ burn-in updates + 250 epochs
(epoch = n updates), extrapolated from the measured rates.

    .venv/bin/python benchmarks/bench_psgld.py [--problem logistic] [--updates 200000]
        [--thin 100 1] [--mode NUMBA]

The discrete-time NumPy baseline calls pm_private.survival's public record_loss_numpy and
record_grad_numpy on ``data.subset(idx)`` (two passes and a validation per update), so its
ratio flatters PyMC; the logistic baseline is a tight hand-written gradient.
A new problem needs a PyTensor per-record loss for ``sanitized_loss`` and a NumPy function
returning the per-record losses and their gradients (see ``PROBLEMS``).
"""

import argparse
import time

from pm_private.compile_cache import use_compile_cache

use_compile_cache()

import numpy as np  # noqa: E402
import pymc as pm  # noqa: E402

from pm_private.sampling.psgld import PSGLD  # noqa: E402
from pm_private.sampling.sanitized import logistic_loss, sanitized_loss  # noqa: E402

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
    """Discrete-time hazard loss, logit link (Nguyên & Hui 2017a, Eq. 3), simulated FL-sized records."""
    from functools import partial

    from pm_private.survival import (
        record_grad_numpy,
        record_loss,
        record_loss_numpy,
        simulate_discrete_time,
    )

    data = simulate_discrete_time(N, alpha=[-5.0, 1.0, 0.5], beta=np.linspace(-1, 1, 8), rng=rng).data

    def losses_and_grads(f, idx):
        batch = data.subset(idx)
        return record_loss_numpy(f, batch), record_grad_numpy(f, batch)

    loss = partial(record_loss, basis=data.basis)
    return loss, (data.X, data.interval, data.event), data.dim, losses_and_grads


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
    parser.add_argument("--problem", choices=sorted(PROBLEMS), default="logistic")
    parser.add_argument("--updates", type=int, default=200_000, help="pSGLD updates per measurement")
    parser.add_argument("--thin", type=int, nargs="+", default=[100, 1], help="updates per stored draw")
    parser.add_argument("--mode", default="NUMBA", help="PyTensor mode of the compiled gradient")
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
    start = time.perf_counter()
    numpy_psgld(dim, args.updates, tune_updates, step, losses_and_grads, term.v, term.sigma, seed=2)
    numpy_rate = args.updates / (time.perf_counter() - start)

    run = EPOCHS * N + BURN_IN
    print(f"problem {args.problem}: n = {N}, dim f = {dim}, k = {K}, mode {args.mode}, "
          f"{args.updates:,} updates per row; PSGLD compile {compile_s:.1f} s")
    print(f"{'sampler':<30}{'updates/s':>12}{'ratio':>8}{'250 epochs':>13}{'stored draws':>14}")
    print(f"{'NumPy loop':<30}{numpy_rate:>12,.0f}{1.0:>8.2f}{run / numpy_rate / 60:>10.1f} min{'-':>14}")
    for thin in args.thin:
        draws = args.updates // thin
        tune = max(1, draws // 10)
        with model:
            step = PSGLD(thin=thin, **settings)
            start = time.perf_counter()
            pm.sample(draws=draws - tune, tune=tune, chains=1, cores=1, step=step, random_seed=3,
                      progressbar=False, quiet=True, compute_convergence_checks=False)
            rate = draws * thin / (time.perf_counter() - start)
        label = f"pm.sample(PSGLD, thin={thin})"
        print(f"{label:<30}{rate:>12,.0f}{numpy_rate / rate:>8.2f}{run / rate / 60:>10.1f} min"
              f"{run // thin:>14,}")


if __name__ == "__main__":
    main()

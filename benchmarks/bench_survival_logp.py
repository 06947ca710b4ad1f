"""logp + gradient of the discrete-time hazard model on FL: cumulative form vs person-period table.

Data: FL (7874 records, 8 covariates in the unit ball with public ranges), times scaled by the
public 15-year horizon, q = 200 intervals, natural-spline baseline with e = 3 knots; logit link.
Models (same priors α ~ N(0, 10²)³, β ~ N(0, 10²)⁸):

- ``discrete-time``: :func:`pm_private.survival.discrete_time_model`, the (n, q) at-risk sum on
  z_is = γ_s + xᵢᵀβ (no person-period table);
- ``person-period``: the usual PyMC way, ``pm.Bernoulli(logit_p=D @ f, observed=y)`` on the
  explicitly expanded table D (one row (A_s, xᵢ) per record and interval at risk).

Both are compiled with PyTensor's C backend (``mode="CVM"``) into one function returning the
log-density and its gradient; the log-densities are checked to agree.  Reported: median time per
call over ``--repeats`` calls (after a warm-up), the ratio (goal ≥ 5), the bytes of data each
compiled graph holds (the discrete-time graph holds X and an (n, q) boolean at-risk mask that
PyTensor folds into a constant; the person-period graph holds the expanded table) and the peak memory allocated during one call (tracemalloc: NumPy and PyTensor's C
outputs are traced).  Compilation is excluded.

        .venv/bin/python benchmarks/bench_survival_logp.py [--repeats 30] [--q 200]
"""

import argparse
import time
import tracemalloc
import warnings

import numpy as np
import pymc as pm
import pytensor.tensor as pt
from pytensor.graph.basic import Constant
from pytensor.graph.traversal import graph_inputs

from models.discrete_time_survival import load_fl_discrete
from pm_private.survival import discrete_time_model, expand_person_period

warnings.filterwarnings("ignore", message="PyTensor could not link to a BLAS")


def person_period_model(data):
    """The same model as a Bernoulli likelihood on the expanded person-period table."""
    design, response = expand_person_period(data)
    with pm.Model(coords={"knot": np.arange(data.e), "feature": np.arange(data.d)}) as model:
        alpha = pm.Normal("alpha", 0.0, 10.0, dims="knot")
        beta = pm.Normal("beta", 0.0, 10.0, dims="feature")
        pm.Bernoulli("y", logit_p=pt.as_tensor(design) @ pt.concatenate([alpha, beta]), observed=response)
    return model


def logp_and_grad(model):
    return model.compile_fn(
        [model.logp(), model.dlogp()], inputs=model.value_vars, mode="CVM", on_unused_input="ignore"
    )


def data_bytes(fn):
    """Bytes of the data of the compiled graph: constants (and what PyTensor folded into them) and
    shared variables (``pm.Data``)."""
    arrays = []
    constants = [v.data for v in graph_inputs(fn.f.maker.fgraph.outputs) if isinstance(v, Constant)]
    for data in constants + [cell.storage[0] for cell in fn.f.input_storage]:
        if isinstance(data, np.ndarray) and not any(np.shares_memory(data, a) for a in arrays):
            arrays.append(data)  # views (e.g. Xᵀ) share X's memory: count once
    return sum(a.nbytes for a in arrays)


def measure(fn, point, repeats):
    fn(point)  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn(point)
        times.append(time.perf_counter() - start)
    tracemalloc.start()
    fn(point)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return float(np.median(times)), peak


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--q", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=30)
    args = parser.parse_args(argv)

    data, _, _ = load_fl_discrete(q=args.q, e=3)
    rng = np.random.default_rng(0)
    point = {
        "alpha": np.array([-6.0, 1.0, 0.5]) + 0.1 * rng.standard_normal(3),
        "beta": 0.5 * rng.standard_normal(data.d),
    }
    rows = int((data.interval + 1).sum())
    print(f"FL: n = {data.n}, d = {data.d}, q = {data.q}, e = {data.e}; person-period rows = {rows:,}")

    results = {}
    for name, build in (("discrete-time", discrete_time_model), ("person-period", person_period_model)):
        model = build(data)
        fn = logp_and_grad(model)
        logp, _ = fn(point)
        seconds, peak = measure(fn, point, args.repeats)
        results[name] = (logp, seconds, data_bytes(fn), peak)
    (lp_a, t_a, b_a, m_a), (lp_b, t_b, b_b, m_b) = results.values()
    if not np.isclose(lp_a, lp_b, rtol=1e-9):
        raise AssertionError(f"log-densities differ: {lp_a!r} vs {lp_b!r}")

    print(f"log-density at the test point: {lp_a:.6f} (both models agree to {abs(lp_a - lp_b):.1e})")
    print(f"{'model':<15}{'logp+grad (ms)':>16}{'graph data (MB)':>17}{'peak per call (MB)':>20}")
    for name, (_, seconds, nbytes, peak) in results.items():
        print(f"{name:<15}{1e3 * seconds:>16.2f}{nbytes / 2**20:>17.2f}{peak / 2**20:>20.2f}")
    print(f"speed-up of the discrete-time likelihood: {t_b / t_a:.1f}x (goal ≥ 5x)")


if __name__ == "__main__":
    main()

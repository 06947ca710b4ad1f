"""The integrated likelihood's moments Op against the symbolic graph it replaces: value and gradient
at random points, under PyTensor's default (Numba) backend and in Python."""

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest

from pm_private.linear.integrated import integrated_moments
from pm_private.linear.integrated_ops import integrated_moments_op


def _arrays(rng, d):
    q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    a = rng.standard_normal((40, d))
    v = rng.uniform(0.1, 0.5, (d, d))
    v = (v + v.T) / 2  # symmetric entry variances, as the Gram posterior gives
    return q, v, a.T @ a, rng.uniform(0.1, 1.0, d + 1), 40.0, 3.0


def _functions(mode):
    beta, lam = pt.dvector("beta"), pt.dscalar("lam")
    data = [pt.dmatrix("q"), pt.dmatrix("v"), pt.dmatrix("g"), pt.dvector("tau"), pt.dscalar("n"), pt.dscalar("r")]
    g_mean, g_cov = pt.dvector("g_mean"), pt.dmatrix("g_cov")
    out = {}
    for name, moments in (("op", integrated_moments_op), ("graph", integrated_moments)):
        mean, cov = moments(beta, lam, *data)
        functional = (g_mean * mean).sum() + (g_cov * cov).sum()  # any linear functional of the moments
        grads = pytensor.grad(functional, [beta, lam])
        # the Op in ``mode``; the reference graph in Python mode (its data-dependent shapes JAX cannot trace)
        graph_mode = "FAST_COMPILE" if name == "graph" else mode
        out[name] = pytensor.function([beta, lam, *data, g_mean, g_cov], [mean, cov, *grads], mode=graph_mode)
    return out


@pytest.mark.parametrize("mode", ["NUMBA", "FAST_COMPILE", "JAX"])
def test_moments_and_their_gradient_equal_the_symbolic_graph(mode):
    functions = _functions(mode)
    rng = np.random.default_rng(3)
    for d in (1, 2, 5):
        for _ in range(3):
            args = (rng.standard_normal(d), rng.uniform(0.5, 3.0), *_arrays(rng, d))
            cotangents = (rng.standard_normal(d + 1), rng.standard_normal((d + 1, d + 1)))  # not symmetric
            got = functions["op"](*args, *cotangents)
            want = functions["graph"](*args, *cotangents)
            for a, b in zip(got, want, strict=True):
                np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10)


def test_gradient_of_the_data_is_refused():
    beta, lam, q = pt.dvector("beta"), pt.dscalar("lam"), pt.dmatrix("q")
    mean, _ = integrated_moments_op(beta, lam, q, pt.eye(2), pt.eye(2), pt.ones(3), 10.0, 0.0)
    with pytest.raises(Exception, match="data"):
        pytensor.grad(mean.sum(), q)

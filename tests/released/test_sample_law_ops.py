"""The public-rows law's averages-and-jackknife Op against the symbolic graph it replaced: value and
gradient at random points, under PyTensor's default (Numba) backend, in Python and in JAX."""

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest

from pm_private.released.sample_law_ops import sample_law_averages

FACTOR = 1.5


def _graph(g_rep, z_rep, g_w, z_w, mu, x_chol):
    """The formulas of the module notes as a PyTensor graph (the replaced implementation)."""

    def average(g, z):
        g_mean = g.mean(axis=-1)
        g_z = (g[..., None] * z).mean(axis=-2)
        return pt.concatenate([g_mean[..., None], g_mean[..., None] * mu + pt.dot(g_z, x_chol.T)], axis=-1)

    values = average(g_rep, z_rep)
    groups = g_rep.shape[0]
    estimate = groups * average(g_w, z_w) - (groups - 1) * values.mean(axis=0)
    centred = values - values.mean(axis=0)
    return estimate, FACTOR * (groups - 1) / groups * centred.T @ centred


@pytest.mark.parametrize("mode", ["NUMBA", "FAST_COMPILE", "JAX"])
def test_averages_jackknife_and_gradient_equal_the_symbolic_graph(mode):
    rng = np.random.default_rng(8)
    G, r, m, d = 5, 7, 9, 3
    inputs = [pt.dmatrix("g_rep"), pt.tensor3("z_rep", dtype="float64"), pt.dvector("g_w"), pt.dmatrix("z_w")]
    inputs += [pt.dvector("mu"), pt.dmatrix("x_chol")]
    g_estimate, g_cov = pt.dvector("g_estimate"), pt.dmatrix("g_cov")
    wrt = [inputs[0], inputs[2], inputs[4], inputs[5]]
    functions = []
    # the Op in ``mode``, the reference graph in Python mode
    for build, build_mode in ((sample_law_averages, mode), (_graph, "FAST_COMPILE")):
        kwargs = {"factor": FACTOR} if build is sample_law_averages else {}
        estimate, cov = build(*inputs, **kwargs)
        functional = (g_estimate * estimate).sum() + (g_cov * cov).sum()
        outputs = [estimate, cov, *pytensor.grad(functional, wrt)]
        functions.append(pytensor.function([*inputs, g_estimate, g_cov], outputs, mode=build_mode))
    for _ in range(3):
        point = [rng.standard_normal((G, r)), rng.standard_normal((G, r, d)), rng.standard_normal(m)]
        point += [rng.standard_normal((m, d)), rng.standard_normal(d), np.tril(rng.standard_normal((d, d)))]
        point += [rng.standard_normal(d + 1), rng.standard_normal((d + 1, d + 1))]
        for got, want in zip(functions[0](*point), functions[1](*point), strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)

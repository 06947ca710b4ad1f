"""The covariate law's factor-and-covariance Op against the symbolic graph it replaces (the
partial-correlation Cholesky factor of Lewandowski, Kurowicka & Joe 2009): value and gradient at
random points, under PyTensor's default (Numba) backend and in Python."""

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest

from pm_private.released.covariance_ops import factor_and_covariance
from pm_private.released.covariates import partial_correlation_cholesky


@pytest.mark.parametrize("mode", ["NUMBA", "FAST_COMPILE", "JAX"])
def test_factor_covariance_and_gradient_equal_the_symbolic_graph(mode):
    rng = np.random.default_rng(5)
    for d in (2, 3, 6):
        sd, partial = pt.dvector("sd"), pt.dvector("partial")
        g_factor, g_cov = pt.dmatrix("g_factor"), pt.dmatrix("g_cov")
        factor, cov = factor_and_covariance(sd, partial)
        graph_factor = sd[:, None] * partial_correlation_cholesky(partial, d)
        graph_cov = graph_factor @ graph_factor.T
        functions = []  # the Op in ``mode``, the reference graph in Python mode
        for f, c, f_mode in ((factor, cov, mode), (graph_factor, graph_cov, "FAST_COMPILE")):
            functional = (g_factor * f).sum() + (g_cov * c).sum()
            outputs = [f, c, *pytensor.grad(functional, [sd, partial])]
            functions.append(pytensor.function([sd, partial, g_factor, g_cov], outputs, mode=f_mode))
        for _ in range(3):
            args = (rng.uniform(0.5, 2.0, d), rng.uniform(-0.9, 0.9, d * (d - 1) // 2))
            args += (rng.standard_normal((d, d)), rng.standard_normal((d, d)))
            got = functions[0](*args) + functions[1](*args)
            for a, b in zip(got[:4], got[4:], strict=True):
                np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
        assert np.allclose(np.triu(got[0], 1), 0.0)

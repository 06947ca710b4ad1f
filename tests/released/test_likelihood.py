"""The multivariate normal log-density with its analytic gradient, in both backends."""

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from scipy import stats as sps

from pm_private.released.likelihood import normal_logp

RNG = np.random.default_rng(0)
K = 6
BASE = RNG.normal(size=(K, K))
BASE = BASE @ BASE.T / K + 0.5 * np.eye(K)
VALUE = RNG.normal(size=K)


def _graph():
    x = pt.dvector("x")
    mean = 0.3 * x + 0.1 * x.sum()
    cov = pt.as_tensor(BASE) + pt.diag(pt.exp(x)) + 0.2 * pt.outer(x, x)
    logp = normal_logp(VALUE, mean, cov)
    return x, mean, cov, logp


@pytest.mark.parametrize("mode", ["NUMBA", "FAST_COMPILE"])
def test_value_and_gradient_match_scipy_and_finite_differences(mode):
    x, mean, cov, logp = _graph()
    fn = pytensor.function([x], [logp, pt.grad(logp, x), mean, cov], mode=mode)
    point = 0.4 * RNG.normal(size=K)
    value, grad, m, c = fn(point)
    assert value == pytest.approx(sps.multivariate_normal(m, c).logpdf(VALUE), rel=1e-10)
    step = 1e-6
    numeric = [(fn(point + step * e)[0] - fn(point - step * e)[0]) / (2 * step) for e in np.eye(K)]
    assert np.allclose(grad, numeric, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("mode", ["NUMBA", "FAST_COMPILE"])
def test_a_covariance_that_is_not_positive_definite_gives_minus_infinity(mode):
    x = pt.dvector("x")
    cov = pt.as_tensor(BASE) - 10.0 * pt.eye(K) + 0 * x.sum()
    fn = pytensor.function([x], normal_logp(VALUE, x, cov), mode=mode)
    assert fn(np.zeros(K)) == -np.inf
    nan_cov = pt.as_tensor(BASE) * x.sum()
    assert pytensor.function([x], normal_logp(VALUE, x, nan_cov), mode=mode)(np.full(K, np.nan)) == -np.inf

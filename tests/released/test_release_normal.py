"""The released degree-2 vector's log-density as one Op, against SciPy's normal and PyTensor's
gradient of the assembly written as a graph, in the Python, Numba and JAX backends."""

import numpy as np
import pymc as pm
import pytensor
import pytensor.tensor as pt
import pytest
from scipy import stats as sps

from pm_private.released.likelihood import normal_logp
from pm_private.released.release_normal import Degree2ReleaseLogp, law_block, released_degree2_normal

D = 2
K = 2 * D + 1 + D * (D + 1) // 2
RNG = np.random.default_rng(7)
BASE = RNG.normal(size=(K, K))
BASE = BASE @ BASE.T / K + 0.5 * np.eye(K)
LAW_BASE = 0.1 * np.eye(D + 1)
VALUE = RNG.normal(size=K) * 3
NOISE = RNG.uniform(0.5, 2.0, size=K)
N = 7.0


def _inputs(x, law: bool, law_cov: bool):
    """Mean, covariance and law parts as functions of a parameter vector x (of length K)."""
    mean = 0.3 * x + 0.1 * x.sum()
    cov = pt.as_tensor(BASE) + pt.diag(pt.exp(0.2 * x)) + 0.02 * pt.outer(x, x)
    t = 0.5 * x[: D + 1] - 0.2 if law else None
    w = pt.as_tensor(LAW_BASE) + 0.05 * pt.outer(x[1 : D + 2], x[1 : D + 2]) if law_cov else None
    return mean, cov, t, w


def _reference(mean, cov, t, w, n=N):
    """The assembly as a PyTensor graph and the library's normal log-density."""
    block = law_block(K, D + 1)
    full_mean, total = n * mean, n * cov + pt.diag(NOISE)
    if t is not None:
        full_mean = pt.set_subtensor(full_mean[block], n * t)
    if w is not None:
        total = pt.inc_subtensor(total[block[:, None], block[None, :]], n * n * w)
    return normal_logp(VALUE, full_mean, total), full_mean, total


def _op_logp(mean, cov, t, w, n=N):
    t = pt.zeros(0) if t is None else t
    w = pt.zeros((0, 0)) if w is None else w
    return Degree2ReleaseLogp()(VALUE, mean, cov, t, w, NOISE, n)[0]


CASES = [(False, False), (True, False), (True, True)]


@pytest.mark.parametrize("mode", ["NUMBA", "FAST_COMPILE", "JAX"])
@pytest.mark.parametrize(("law", "law_cov"), CASES)
def test_value_and_gradient_match_the_assembly_as_a_graph(mode, law, law_cov):
    """n depends on the parameters too (a latent n, under add/remove neighbours)."""
    x = pt.dvector("x")
    parts = _inputs(x, law, law_cov)
    n = N * pt.exp(0.3 * x[-1])
    reference, full_mean, total = _reference(*parts, n)
    logp = _op_logp(*parts, n)
    if mode == "JAX":
        pytest.importorskip("jax")
        got = pytensor.function([x], [logp, pt.grad(logp, x)], mode="JAX")
        fn = pytensor.function([x], [reference, pt.grad(reference, x)], mode="FAST_COMPILE")
        point = 0.4 * RNG.normal(size=K)
        (value, grad), (ref_value, ref_grad) = got(point), fn(point)
        assert float(value) == pytest.approx(float(ref_value), rel=1e-10)
        np.testing.assert_allclose(grad, ref_grad, rtol=1e-8, atol=1e-10)
        return
    op = pytensor.function([x], [logp, pt.grad(logp, x)], mode=mode)
    graph = pytensor.function([x], [reference, pt.grad(reference, x), full_mean, total], mode="FAST_COMPILE")
    point = 0.4 * RNG.normal(size=K)
    (value, grad), (ref_value, ref_grad, m, c) = op(point), graph(point)
    assert value == pytest.approx(sps.multivariate_normal(m, c).logpdf(VALUE), rel=1e-10)
    assert value == pytest.approx(ref_value, rel=1e-12)
    np.testing.assert_allclose(grad, ref_grad, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("mode", ["NUMBA", "FAST_COMPILE"])
def test_a_covariance_that_is_not_positive_definite_gives_minus_infinity(mode):
    x = pt.dvector("x")
    logp = Degree2ReleaseLogp()(
        VALUE, x, pt.as_tensor(BASE) - 10.0 + 0 * x.sum(), pt.zeros(0), pt.zeros((0, 0)), NOISE, N
    )
    assert pytensor.function([x], logp[0], mode=mode)(np.zeros(K)) == -np.inf


def test_predictive_draws_have_the_assembled_mean_and_covariance():
    """The observed variable's draws (replicated releases) follow N(n·m̃, n·Ṽ + n²·W̃ + diag(v))."""
    x = pt.as_tensor(0.4 * RNG.normal(size=K))
    mean, cov, t, w = _inputs(x, True, True)
    _, full_mean, total = _reference(mean, cov, t, w)
    with pm.Model():
        released_degree2_normal("r", mean, cov, n=N, noise_var=NOISE, law=t, law_cov=w, observed=VALUE)
        draws = pm.draw(pm.Model.get_context()["r"], draws=40_000, random_seed=1)
    m, c = full_mean.eval(), total.eval()
    np.testing.assert_allclose(draws.mean(axis=0), m, atol=5 * np.sqrt(np.diag(c) / 40_000).max())
    np.testing.assert_allclose(np.cov(draws.T), c, rtol=0.05, atol=0.05 * np.abs(c).max())


def test_a_law_covariance_without_a_law_is_refused():
    with pm.Model(), pytest.raises(ValueError, match="law_cov needs law"):
        released_degree2_normal(
            "r", pt.zeros(K), pt.eye(K), n=1.0, noise_var=NOISE, law_cov=pt.eye(D + 1), observed=VALUE
        )

"""The compiled log-density of the survival regression and its gradient against the symbolic block
likelihood of the moments (the reference graph, built here), at random points; its replicated
releases' mean and covariance against the dense moments."""

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest

from pm_private.survival.regression.likelihood import exit_table_normal_logp
from pm_private.survival.regression.moments import StatBlocks, dense_moments, regression_stat_blocks, statistic_size
from pm_private.survival.regression.ops import regression_log_density, regression_release_law


def _symbols(K, J, d):
    return [
        pt.matrix("value", shape=(K, None)), pt.scalar("n"), pt.vector("share", shape=(K,)),
        pt.matrix("noise", shape=(K, None)), pt.vector("beta", shape=(d,)), pt.matrix("mu", shape=(K, d)),
        pt.matrix("chol", shape=(d, d)), pt.matrix("lei", shape=(K, J)), pt.matrix("cens", shape=(K, J)),
    ]  # fmt: skip


def _reference(symbols, J, d, discrete):
    value, n, share, noise, beta, mu, chol, lei, cens = symbols
    cov = chol @ chol.T
    parts = [regression_stat_blocks(beta, mu[c], cov, lei[c], cens[c], d, discrete) for c in range(mu.type.shape[0])]
    blocks = StatBlocks(*(pt.stack(p) for p in zip(*parts, strict=True)))
    return exit_table_normal_logp(value, n, share, noise, blocks, J, d), parts


def _point(rng, K, J, d, noise_level, discrete, n=3000.0):
    beta, mu = rng.normal(size=d) * 0.4, rng.normal(size=(K, d)) * 0.3
    chol = np.tril(rng.normal(size=(d, d)) * 0.3) + np.eye(d)
    lei = np.log(rng.uniform(0.05, 0.3, (K, J)))
    cens = rng.uniform(0.05, 0.9, (K, J)) if discrete else rng.uniform(0.0, 0.2, (K, J))
    share = rng.dirichlet(np.full(K, 5.0))
    return n, share, beta, mu, chol, lei, cens


@pytest.mark.parametrize(
    ("K", "J", "d", "noise_level", "discrete"),
    [
        (1, 4, 3, 25.0, False),
        (2, 3, 2, 9.0, False),
        (1, 4, 3, 4.0, True),
        (2, 5, 4, 30.0, True),
        (1, 3, 2, 1e-6, False),
    ],
)
def test_compiled_log_density_and_gradient_equal_the_symbolic_ones(K, J, d, noise_level, discrete):
    rng = np.random.default_rng(100 * K + 10 * J + d)
    symbols = _symbols(K, J, d)
    value, n, share, noise, beta, mu, chol, lei, cens = symbols
    reference, parts = _reference(symbols, J, d, discrete)
    compiled = regression_log_density(*symbols, discrete=discrete)
    # n too: latent under add/remove neighbours; the value too: a covariate law's mean shift enters through it
    wrt = [n, share, beta, mu, chol, lei, cens, value]
    f_ref = pytensor.function(symbols, [reference, *pytensor.grad(reference, wrt)], mode="FAST_COMPILE")
    f_new = pytensor.function(symbols, [compiled, *pytensor.grad(compiled, wrt)], mode="FAST_COMPILE")
    # PyTensor's default backend calls the same kernel from its compiled graph
    f_numba = pytensor.function(symbols, [compiled, *pytensor.grad(compiled, wrt)], mode="NUMBA")
    dense = [part for p in parts for part in dense_moments(p, J, d)]
    moments = pytensor.function(symbols[4:], dense, mode="FAST_COMPILE", on_unused_input="ignore")
    k = statistic_size(J, d)
    for _ in range(3):
        n_, share_, *params = _point(rng, K, J, d, noise_level, discrete)
        data = np.empty((K, k))
        computed = moments(*params)
        for c, (mean, cov) in enumerate(zip(computed[::2], computed[1::2], strict=True)):
            data[c] = rng.multivariate_normal(n_ * share_[c] * mean, n_ * share_[c] * cov + noise_level * np.eye(k))
        args = (data, n_, share_, np.full((K, k), noise_level), *params)
        expected, got = f_ref(*args), f_new(*args)
        for numba_value, value_ in zip(f_numba(*args), got, strict=True):
            np.testing.assert_array_equal(numba_value, value_)
        assert np.isfinite(expected[0])
        assert got[0] == pytest.approx(expected[0], rel=1e-10)
        for name, e, g in zip(
            ["n", "share", "beta", "mu", "chol", "lei", "cens", "value"], expected[1:], got[1:], strict=True
        ):
            if name == "chol":  # the factor is lower triangular: its upper entries are not parameters
                e, g = np.tril(e), np.tril(g)
            np.testing.assert_allclose(g, e, rtol=1e-8, atol=1e-8 * np.abs(e).max(), err_msg=name)
    # a covariance that is not positive definite gives −∞, not an error
    bad = (*args[:3], -np.abs(data), *args[4:])
    assert f_new(*bad)[0] == f_ref(*bad)[0] == -np.inf


def test_replicated_release_law_is_the_dense_one():
    rng = np.random.default_rng(7)
    K, J, d = 2, 3, 2
    symbols = _symbols(K, J, d)
    _, n, share, noise, beta, mu, chol, lei, cens = symbols
    _, parts = _reference(symbols, J, d, False)
    means, seconds = [], []
    for c, p in enumerate(parts):
        mean, cov = dense_moments(p, J, d)
        means.append(share[c] * mean)
        seconds.append(share[c] * (cov + pt.outer(mean, mean)))
    mean = pt.concatenate(means)
    dense = [n * mean, n * (pt.linalg.block_diag(*seconds) - pt.outer(mean, mean)) + pt.diag(noise.ravel())]
    law = regression_release_law(*symbols[1:], discrete=False)
    inputs = symbols[1:]
    n_, share_, *params = _point(rng, K, J, d, 9.0, False)
    args = (n_, share_, rng.uniform(1.0, 9.0, (K, statistic_size(J, d))), *params)
    # the reference in Python mode (one evaluation), the Op in PyTensor's default backend
    expected = pytensor.function(inputs, dense, mode="FAST_COMPILE")(*args)
    for e, g in zip(expected, pytensor.function(inputs, law)(*args), strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-10 * np.abs(e).max())

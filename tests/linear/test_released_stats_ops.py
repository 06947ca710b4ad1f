"""The Ops of the noise-aware likelihood of linear releases (pm_private.linear.released_stats_ops),
in its spectral form (Gaussian releases) and its dense form (any per-entry noise, Laplace releases),
against the same log-density written as a plain PyTensor graph (concatenations, a 0/1 scatter of the
released vector, a k × k Cholesky factor, triangular solves), differentiated by PyTensor, in each
backend."""

from __future__ import annotations

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest

from pm_private.linear.frobenius import frobenius_stats_logp
from pm_private.linear.noise_aware import exact_stats_logp, noisy_stats_logp
from pm_private.linear.released_stats_ops import augmented_cholesky, released_stats_logp
from pm_private.linear.stats import frobenius_weights, stat_pairs

D = 3


def _graph_augmented_cholesky(beta, lam, x_chol):
    """L_C = [[Lx, 0], [βᵀLx, λ^(−1/2)]] by concatenation."""
    x_chol = pt.broadcast_to(x_chol, (*beta.shape[:-1], *x_chol.shape[-2:]))
    bottom = (beta[..., :, None] * x_chol).sum(axis=-2)
    top = pt.concatenate([x_chol, pt.zeros((*beta.shape[:-1], beta.shape[-1], 1))], axis=-1)
    bottom = pt.concatenate([bottom, (1.0 / pt.sqrt(lam))[..., None]], axis=-1)[..., None, :]
    return pt.concatenate([top, bottom], axis=-2)


def _graph_released_stats_logp(chol_private, chol_c, value, n, noise, on, exact, exact_n, *, spectral):
    """The spectral term of the released vector scattered into its symmetric matrix by a 0/1 map,
    or the dense term of the vector, and the public rows' term by triangular solves."""
    if not spectral:
        return on * noisy_stats_logp(chol_private, value, n, noise, D) + exact_stats_logp(chol_c, exact, exact_n, D)
    a, b = stat_pairs(D)
    scatter = np.zeros((a.size, (D + 1) ** 2))
    scatter[np.arange(a.size), a * (D + 1) + b] = scatter[np.arange(a.size), b * (D + 1) + a] = 1.0
    batch = tuple(value.shape[i] for i in range(value.ndim - 1))
    matrix = pt.dot(value, scatter).reshape((*batch, D + 1, D + 1))
    return on * frobenius_stats_logp(chol_private, matrix, n, noise[..., -1]) + exact_stats_logp(
        chol_c, exact, exact_n, D
    )


def _case(batch: tuple, spectral: bool = True):
    """Symbolic (β, λ, Lx), a release of that batch and a point."""
    rng = np.random.default_rng(len(batch))
    p, k = D + 1, (D + 1) * (D + 2) // 2
    rows = rng.normal(size=(50, p))
    release = (
        rng.normal(size=(*batch, k)) * 3 + 10,  # released vector
        np.full(batch, 40.0),  # n
        # v: σ²/w² for the spectral form (σ² = 2 at Syy), unequal variances (a Laplace release's) for the dense
        np.broadcast_to(2.0 / frobenius_weights(D) ** 2 if spectral else rng.uniform(1.0, 30.0, k), (*batch, k)).copy(),
        np.ones(batch),  # on
        np.broadcast_to(rows.T @ rows, (*batch, p, p)).copy(),  # public rows' matrix
        np.full(batch, 50.0),  # n_pub
    )
    symbols = (pt.tensor("beta", shape=(*batch, D)), pt.tensor("lam", shape=batch), pt.tensor("x", shape=(D, D)))
    point = (
        rng.normal(size=(*batch, D)),
        rng.uniform(0.5, 2.0, batch),
        np.tril(rng.normal(size=(D, D))) + 2 * np.eye(D),
    )
    share = rng.uniform(0.5, 1.5, batch)
    return symbols, release, point, share


def _logp_and_grads(symbols, release, share, augmented, logp, spectral):
    beta, lam, x = symbols
    total = logp(augmented(beta, lam / share, x), augmented(beta, lam, x), *release, spectral=spectral).sum()
    return [total, *pytensor.grad(total, list(symbols))]


@pytest.mark.parametrize("spectral", [True, False], ids=["spectral", "dense"])
@pytest.mark.parametrize("batch", [(), (2,)], ids=["one regression", "a batch of two"])
@pytest.mark.parametrize("mode", ["NUMBA", "FAST_COMPILE", "JAX"])
def test_the_ops_give_the_log_density_and_gradients_of_the_graph(mode, batch, spectral):
    if mode == "JAX":
        pytest.importorskip("jax")
    symbols, release, point, share = _case(batch, spectral)
    graph = _logp_and_grads(symbols, release, share, _graph_augmented_cholesky, _graph_released_stats_logp, spectral)
    expected = pytensor.function(list(symbols), graph, mode="FAST_COMPILE")(*point)
    ops = _logp_and_grads(symbols, release, share, augmented_cholesky, released_stats_logp, spectral)
    got = pytensor.function(list(symbols), ops, mode=mode)(*point)
    assert np.isfinite(expected[0])
    for name, a, b in zip(("logp", "∂β", "∂λ", "∂Lx"), got, expected, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10, err_msg=name)


@pytest.mark.parametrize("spectral", [True, False], ids=["spectral", "dense"])
def test_jax_differentiates_the_log_density_through_its_analytic_gradient(spectral):
    jax = pytest.importorskip("jax")
    from pytensor.link.jax.dispatch import jax_funcify

    symbols, release, point, share = _case((), spectral)
    beta, lam, x = symbols
    private, public = augmented_cholesky(beta, lam / share, x), augmented_cholesky(beta, lam, x)
    total = released_stats_logp(private, public, *release, spectral=spectral)
    graph = pytensor.function(list(symbols), total, mode="JAX").maker.fgraph
    jax_logp = jax_funcify(graph)
    gradient = jax.grad(lambda *args: jax_logp(*args)[0], argnums=(0, 1, 2))(*point)
    expected = pytensor.function(list(symbols), pytensor.grad(total, list(symbols)), mode="FAST_COMPILE")(*point)
    for a, b in zip(gradient, expected, strict=True):
        np.testing.assert_allclose(np.asarray(a), b, rtol=1e-10, atol=1e-10)

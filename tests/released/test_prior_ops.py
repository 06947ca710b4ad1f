"""The priors' Ops (a random walk from its increments and its log-density, the simplex of shares)
against the symbolic graphs
they replaced, value and gradient, in PyTensor's Python, Numba and JAX modes; the log-density
against SciPy's normal; and a walk in a model against PyMC's own Gaussian random walk."""

import numpy as np
import pymc as pm
import pytensor
import pytensor.tensor as pt
import pytest
from scipy.stats import norm

from pm_private.released.prior_ops import simplex_from_log_ratios, walk_from_increments, walk_logp
from pm_private.released.reparametrisation import random_walk, symmetric_dirichlet

S0 = 1.7


def _symbolic(z, start, step):
    first = (start + S0 * z[:, 0])[:, None]
    x = pt.concatenate([first, first + step[:, None] * pt.cumsum(z[:, 1:], axis=1)], axis=1)
    logp = pm.logp(pm.Normal.dist(start, S0), x[:, 0]) + pm.logp(
        pm.Normal.dist(0.0, step[:, None]), pt.diff(x, axis=1)
    ).sum(1)
    return x, logp


@pytest.mark.parametrize("mode", ["FAST_COMPILE", "NUMBA", "JAX"])
def test_walk_and_log_density_equal_the_symbolic_graph(mode):
    if mode == "JAX":
        pytest.importorskip("jax")
    z, start, step = pt.matrix("z"), pt.vector("start"), pt.vector("step")
    x_ref, logp_ref = _symbolic(z, start, step)
    x_op = walk_from_increments(z, start, step, S0)
    logp_op = walk_logp(x_op, start, step, S0)
    rng = np.random.default_rng(0)
    weights = pt.as_tensor(rng.normal(size=(3, 6)))
    outputs = []
    for x, logp in ((x_ref, logp_ref), (x_op, logp_op)):
        # a cost mixing the walk and its log-density, so that both gradients are exercised
        cost = pt.sum(logp * pt.arange(1, 4)) + pt.sum(weights * x)
        graph = [x, logp, *pytensor.grad(cost, [z, start, step])]
        outputs.append(pytensor.function([z, start, step], graph, mode="FAST_COMPILE" if x is x_ref else mode))
    for _ in range(3):
        args = (rng.normal(size=(3, 6)), rng.normal(size=3), rng.uniform(0.2, 2.0, 3))
        for e, g in zip(outputs[0](*args), outputs[1](*args), strict=True):
            np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)


def test_log_density_is_scipys():
    rng = np.random.default_rng(1)
    x, start, step = rng.normal(size=(2, 5)), rng.normal(size=2), np.array([0.6, 1.3])
    expected = norm(start, S0).logpdf(x[:, 0]) + norm(0.0, step[:, None]).logpdf(np.diff(x, axis=1)).sum(axis=1)
    np.testing.assert_allclose(walk_logp(x, start, step, S0).eval(mode="FAST_COMPILE"), expected, rtol=1e-12)


@pytest.mark.parametrize("shape", [(5,), (3, 5)])
def test_model_walk_is_pymcs_gaussian_random_walk(shape):
    """A model's walk (its prior density in the sampler's space, with the Jacobian) equals the same
    walk written with PyMC's GaussianRandomWalk, at random points."""
    rng = np.random.default_rng(2)
    coords = {f"d{i}": range(n) for i, n in enumerate(shape)}
    with pm.Model(coords=coords) as ours:
        random_walk("w", 0.4, S0, 0.5, tuple(f"d{i}" for i in range(len(shape))), shape)
    with pm.Model() as pymcs:
        tau = pm.HalfNormal("w_step", 0.5)
        pm.GaussianRandomWalk("w", mu=0.0, sigma=tau, init_dist=pm.Normal.dist(0.4, S0), shape=shape)
    ours_logp, pymcs_logp = (m.compile_logp(jacobian=False, mode="FAST_COMPILE") for m in (ours, pymcs))
    transform = ours.rvs_to_transforms[ours["w"]]
    backward = pytensor.function(
        [ours.rvs_to_values[ours["w"]], ours.rvs_to_values[ours["w_step"]]],
        transform.backward(
            ours.rvs_to_values[ours["w"]], pt.full(shape, 0.4), pt.exp(ours.rvs_to_values[ours["w_step"]])
        ),
        mode="FAST_COMPILE",
    )
    for _ in range(3):
        point = {"w_z__": rng.normal(size=shape), "w_step_log__": rng.normal(scale=0.3)}
        x = backward(point["w_z__"], point["w_step_log__"])
        got = ours_logp({"w_z__": point["w_z__"], "w_step_log__": point["w_step_log__"]})
        expected = pymcs_logp({"w": x, "w_step_log__": point["w_step_log__"]})
        assert got == pytest.approx(expected, rel=1e-10)


@pytest.mark.parametrize("mode", ["FAST_COMPILE", "NUMBA", "JAX"])
def test_simplex_and_its_gradient_equal_the_softmax(mode):
    if mode == "JAX":
        pytest.importorskip("jax")
    y = pt.vector("y")
    reference = pt.special.softmax(pt.concatenate([y, -pt.sum(y, keepdims=True)]))
    weights = pt.as_tensor(np.array([0.3, -1.2, 2.0, 0.7]))
    outputs = [
        pytensor.function([y], [w, pytensor.grad(pt.sum(weights * pt.log(w)) + w[0] ** 2, y)], mode=m)
        for w, m in ((reference, "FAST_COMPILE"), (simplex_from_log_ratios(y), mode))
    ]
    rng = np.random.default_rng(3)
    for scale in (0.5, 3.0, 30.0):  # 30: shares down to e^-100, where only a shifted softmax is finite
        point = rng.normal(scale=scale, size=3)
        for e, g in zip(outputs[0](point), outputs[1](point), strict=True):
            np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-300)


@pytest.mark.parametrize("alpha", [1.0, 2.5])
def test_symmetric_dirichlet_is_pymcs_dirichlet(alpha):
    """The same density in the same sampler space (with the Jacobian), gradient and prior draws."""
    rng = np.random.default_rng(4)
    with pm.Model(coords={"cell": ["a", "b", "c"]}) as ours:
        symmetric_dirichlet("w", alpha, 3, dims="cell")
    with pm.Model() as pymcs:
        pm.Dirichlet("w", a=np.full(3, alpha))
    assert [v.name for v in ours.value_vars] == [v.name for v in pymcs.value_vars] == ["w_simplex__"]
    (ours_logp, ours_dlogp), (pymcs_logp, pymcs_dlogp) = (
        (m.compile_logp(mode="FAST_COMPILE"), m.compile_dlogp(mode="FAST_COMPILE")) for m in (ours, pymcs)
    )
    for _ in range(3):
        point = {"w_simplex__": rng.normal(size=2)}
        assert ours_logp(point) == pytest.approx(pymcs_logp(point), rel=1e-12)
        np.testing.assert_allclose(ours_dlogp(point), pymcs_dlogp(point), rtol=1e-10)
    draws = pm.draw(ours["w"], 4000, random_seed=5)
    np.testing.assert_allclose(draws.sum(axis=1), 1.0)
    assert np.abs(draws.mean(axis=0) - 1 / 3).max() < 0.02
    assert ours.initial_point()["w_simplex__"] == pytest.approx(np.zeros(2))

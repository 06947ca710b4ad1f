"""Tests of the noise-aware likelihood's model of the release's clipping (``clipping="model"``).

What is checked:

- ``projection_draws`` are whitened (wᵀw/M = I exactly) and antithetic;
- ``projected_second_moment`` equals the second moment of projected rows (row-norm projection of
  the covariates or of the whole row, and entrywise clipping; responses clipped) estimated by
  brute-force Monte Carlo, and equals C itself when the bounds never bite;
- with bounds that never bite the model's log-density equals the unclipped model's, and with
  bounds that bite it differs;
- on data whose rows are heavily projected, the posterior mean of β with the clipping modelled
  is closer to the population β than without (exact-ish release, large ε);
- bad arguments are refused with a message naming them.
"""

import numpy as np
import pymc as pm
import pytensor
import pytensor.tensor as pt
import pytest

from pm_private import release_linear_stats
from pm_private.linear.model import linear_model
from pm_private.linear.noise_aware import X_CLIPS, projected_second_moment, projection_draws
from pm_private.linear.projection_ops import projected_moment_cholesky


def _covariance(d, seed):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((d, d))
    sx = A @ A.T / d + 0.3 * np.eye(d)
    beta = rng.standard_normal(d) / np.sqrt(d)
    C = np.zeros((d + 1, d + 1))
    C[:d, :d] = sx
    C[:d, d] = C[d, :d] = sx @ beta
    C[d, d] = beta @ sx @ beta + 0.5
    return C


def test_projection_draws_are_whitened_and_antithetic():
    w = projection_draws(3, 256)
    np.testing.assert_allclose(w.T @ w / 256, np.eye(4), atol=1e-12)
    np.testing.assert_allclose(w[:128], -w[128:])
    with pytest.raises(ValueError, match="size"):
        projection_draws(3, 5)


@pytest.mark.parametrize("x_clip", ["row", "row-scaled", "entry"])
def test_projected_second_moment_matches_brute_force(x_clip):
    d = 3
    C = _covariance(d, 1)
    L = np.linalg.cholesky(C)
    x_bound = 0.7 if x_clip == "entry" else 0.9 * np.sqrt(np.trace(C[:d, :d]))
    y_bound = 1.2 * np.sqrt(C[d, d])
    chol = pt.dmatrix("chol")
    f = pytensor.function(
        [chol], projected_second_moment(chol, projection_draws(d), x_bound, y_bound, x_clip), mode="FAST_COMPILE"
    )
    rng = np.random.default_rng(0)
    z = rng.standard_normal((400_000, d + 1)) @ L.T
    x, y = z[:, :d], z[:, d]
    if x_clip != "entry":
        factor = np.minimum(1.0, x_bound / np.linalg.norm(x, axis=1))
        x = x * factor[:, None]
        y = y * factor if x_clip == "row-scaled" else y
    else:
        x = np.clip(x, -x_bound, x_bound)
    zt = np.column_stack([x, np.clip(y, -y_bound, y_bound)])
    brute = zt.T @ zt / len(zt)
    assert np.abs(C - brute).max() > 0.1  # the bounds bite
    np.testing.assert_allclose(f(L), brute, atol=6e-3 * np.abs(C).max())
    # Bounds that never bite: C itself, to rounding (the points are whitened).
    f_wide = pytensor.function(
        [chol], projected_second_moment(chol, projection_draws(d), 1e6, 1e6, x_clip), mode="FAST_COMPILE"
    )
    np.testing.assert_allclose(f_wide(L), C, rtol=1e-10, atol=1e-12)


def _release(n, d, x_bound, y_bound, seed, epsilon=1.0, scale_response=False):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    beta = np.linspace(1.0, -1.0, d)
    y = X @ beta + 0.5 * rng.standard_normal(n)
    return release_linear_stats(
        X,
        y,
        epsilon=epsilon,
        delta=1e-5,
        x_bound=x_bound,
        y_bound=y_bound,
        rng=seed,
        scale_response=scale_response,
        intercept=False,
    ), beta


def _logp(model):
    fn = model.compile_logp(mode="FAST_COMPILE")
    return fn(model.initial_point())


def test_model_equals_unclipped_model_when_bounds_never_bite():
    stats, _ = _release(500, 2, 1e3, 1e3, seed=0)
    same = [_logp(linear_model(stats, x_cov=np.eye(2), clipping=c)) for c in ("ignore", "model")]
    np.testing.assert_allclose(same[0], same[1], rtol=1e-9)
    stats, _ = _release(500, 2, 1.0, 1.0, seed=0)
    bite = [_logp(linear_model(stats, x_cov=np.eye(2), clipping=c)) for c in ("ignore", "model")]
    assert abs(bite[0] - bite[1]) > 1.0


@pytest.mark.slow
def test_modelled_clipping_recovers_the_population_beta():
    # Half the rows are projected (‖x‖ ≤ 1.2 with d = 2) and a third of the responses clipped;
    # ε = 50 leaves the noise small, so the bias of ignoring the projection dominates.
    stats, beta = _release(20_000, 2, 1.2, 1.0, seed=3, epsilon=50.0)
    errors = {}
    for clipping in ("ignore", "model"):
        with linear_model(stats, clipping=clipping):
            # PyMC's NUTS loads the compiled model from the disk cache; nutpie (PyMC's default where
            # installed) compiles it again on every call
            idata = pm.sample(
                300, tune=300, chains=1, random_seed=1, progressbar=False, target_accept=0.9, nuts_sampler="pymc"
            )
        errors[clipping] = np.abs(idata.posterior["beta"].mean(("chain", "draw")).values - beta).max()
    assert errors["ignore"] > 0.1
    assert errors["model"] < 0.5 * errors["ignore"]


def test_clipping_argument_is_checked():
    stats, _ = _release(200, 2, 2.0, 2.0, seed=0)
    with pytest.raises(ValueError, match="clipping"):
        linear_model(stats, clipping="yes")
    other = release_linear_stats(
        np.ones((50, 2)), np.ones(50), noise="laplace", epsilon=1.0, x_bound=1.0, y_bound=1.0, rng=0, intercept=False
    )
    with pytest.raises(ValueError, match="clipping='model'"):
        linear_model(stats + other, clipping="model", likelihood="dense")
    with pytest.raises(ValueError, match="x_clip"):
        projected_second_moment(np.eye(3), projection_draws(2), 1.0, 1.0, "norm")


@pytest.mark.parametrize(
    ("x_clip", "mode"),
    [*((clip, "FAST_COMPILE") for clip in X_CLIPS), ("row-scaled", "NUMBA"), ("entry-scaled", "JAX")],
)
def test_the_factor_op_equals_the_factor_of_the_graph_with_its_gradient(x_clip, mode):
    # The model factors the projected second moment by an Op with a hand-written gradient; the
    # reference is PyTensor's Cholesky of the symbolic moment, differentiated by PyTensor.
    if mode == "JAX":
        pytest.importorskip("jax")
    rng = np.random.default_rng(X_CLIPS.index(x_clip))
    d, draws = 3, projection_draws(3, 256)
    chol, weights = pt.tensor("chol", shape=(2, d + 1, d + 1)), rng.normal(size=(2, d + 1, d + 1))
    x_bound, y_bound = np.array([1.2, 0.9]), np.array([1.0, 1.5])
    point = np.tril(rng.normal(size=(2, d + 1, d + 1))) * 0.5 + np.eye(d + 1)
    graph = (pt.linalg.cholesky(projected_second_moment(chol, draws, x_bound, y_bound, x_clip)) * weights).sum()
    op = (projected_moment_cholesky(chol, draws, x_bound, y_bound, x_clip) * weights).sum()
    expected = pytensor.function([chol], [graph, pytensor.grad(graph, chol)], mode="FAST_COMPILE")(point)
    got = pytensor.function([chol], [op, pytensor.grad(op, chol)], mode=mode)(point)
    assert np.abs(expected[1]).max() > 0.1  # the projection bites and the gradient is not trivial
    for a, b in zip(got, expected, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)

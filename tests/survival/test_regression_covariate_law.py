"""The survival regression's reference covariate law: the weighted exit sums' kernels against the
symbolic exit probabilities (values and gradients, Numba and JAX), the law's means of the counts and
covariate sums against brute-force Monte Carlo on binary covariates, and the model's default law."""

import warnings

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest

import pm_private as pp
from pm_private.released import CovariateLawWarning
from pm_private.released.glm import whitened_sample
from pm_private.survival import (
    release_survival_regression_stats,
    set_survival_regression_stats,
    survival_regression_model,
    survival_regression_stats,
)
from pm_private.survival.regression.covariate_law import law_mean_shift
from pm_private.survival.regression.law_ops import weighted_exit_sums
from pm_private.survival.regression.moments import exit_probabilities
from pm_private.survival.regression.ops import regression_release_law


@pytest.mark.parametrize("discrete", [False, True])
def test_weighted_exit_sums_and_their_gradient_equal_the_symbolic_ones(discrete):
    rng = np.random.default_rng(4 + discrete)
    K, N, r, J = 2, 7, 3, 4
    a, z, w = pt.matrix("a", shape=(K, N)), pt.matrix("z", shape=(N, r)), pt.vector("w", shape=(N,))
    lei, cens = pt.matrix("lei", shape=(K, J)), pt.matrix("cens", shape=(K, J))
    total, moment = weighted_exit_sums(a, z, w, lei, cens, discrete=discrete)
    g = exit_probabilities(a, lei[:, None, :], cens[:, None, :], discrete) * w[None, :, None]
    reference = [g.sum(axis=1), (g[..., None] * z[None, :, None, :]).sum(axis=1)]
    t_bar, u_bar = rng.normal(size=(K, 2 * J + 1)), rng.normal(size=(K, 2 * J + 1, r))

    def outputs(pair):
        scalar = (pair[0] * t_bar).sum() + (pair[1] * u_bar).sum()
        return [*pair, *pytensor.grad(scalar, [a, lei, cens])]

    inputs = [a, z, w, lei, cens]
    expected = pytensor.function(inputs, outputs(reference), mode="FAST_COMPILE")
    values = [
        rng.normal(size=(K, N)), rng.normal(size=(N, r)), rng.dirichlet(np.ones(N)),
        np.log(rng.uniform(0.05, 0.4, (K, J))),
        rng.uniform(0.05, 0.9, (K, J)) if discrete else rng.uniform(0.0, 0.3, (K, J)),
    ]  # fmt: skip
    want = expected(*values)
    for mode in ("FAST_COMPILE", "NUMBA", "JAX"):
        if mode == "JAX":
            pytest.importorskip("jax")
        got = pytensor.function(inputs, outputs([total, moment]), mode=mode)(*values)
        for name, e, v in zip(["T", "U", "a", "lei", "cens"], want, got, strict=True):
            np.testing.assert_allclose(v, e, rtol=1e-9, atol=1e-12, err_msg=f"{name} in {mode}")


def _simulate(rng, n, edges, beta, lam, kappa):
    X = np.column_stack([rng.normal(size=n), rng.random(n) < 0.1, rng.random(n) < 0.4]).astype(float)
    event_time, censor_time = rng.exponential(1.0 / (lam * np.exp(X @ beta))), rng.exponential(1.0 / kappa, n)
    time = np.minimum(event_time, censor_time)
    return X, time, (event_time <= censor_time).astype(float)


def test_the_reference_law_gives_the_means_of_a_simulated_population_where_the_gaussian_law_misses():
    """One person's expected counts and covariate sums per exit, at the true parameters, against
    the average over 400,000 simulated people with two binary covariates (one at 10 %): the
    reference law's within Monte Carlo error, the Gaussian law's several s.e. off."""
    rng = np.random.default_rng(11)
    n, edges, beta, lam, kappa = 400_000, np.array([0.5, 1.0, 1.5, 2.0]), np.array([0.5, 1.5, -0.6]), 0.8, 0.3
    X, time, event = _simulate(rng, n, edges, beta, lam, kappa)
    public = _simulate(rng, 300, edges, beta, lam, kappa)[0]
    prep = pp.Preprocessing.from_public(public)
    assert prep.x_kinds == ("continuous", "binary", "binary")
    stats = survival_regression_stats(time, event, X, edges=edges, preprocessing=prep)
    law = pp.reference_law(stats)
    # the truth on the release's scale: x′ = (x − c)/s, β′ = β·s, the constant into the baseline
    Xs = prep.transform_x(X)
    widths = np.diff(np.concatenate([[0.0], edges]))  # the horizon is edges[-1] = 2: λ per horizon unit is 2λ
    lei = (np.log(lam * widths) + prep.x_center @ beta)[None]
    cens = (kappa * widths)[None]
    mu, chol = Xs.mean(axis=0)[None], np.linalg.cholesky(np.cov(Xs.T, bias=True))
    bs = beta * prep.x_scale
    shift = law_mean_shift(whitened_sample(law.rows, stats), bs, mu, chol, lei, cens).eval()[0]
    k = len(shift)
    gaussian = regression_release_law(1.0, np.ones(1), np.zeros((1, k)), bs, mu, chol, lei, cens)[0].eval()
    # each person's (yₖ, yₖ·x′), the exits one-hot: the simulated means and their standard errors
    exits = 2 * len(edges) + 1
    onehot = _exit_indicators(time, event, edges)
    terms = np.concatenate([onehot, (onehot[:, :, None] * Xs[:, None, :]).reshape(n, -1)], axis=1)
    simulated, se = terms.mean(axis=0), terms.std(axis=0) / np.sqrt(n)
    np.testing.assert_allclose(simulated, np.concatenate([stats.counts[0], stats.x_sums[0].ravel()]) / n, atol=1e-12)
    z_reference = np.abs(gaussian[: exits * 4] + shift[: exits * 4] - simulated) / se
    z_gaussian = np.abs(gaussian[: exits * 4] - simulated) / se
    assert z_reference.max() < 4.5, z_reference.round(1)
    assert z_gaussian.max() > 8.0, z_gaussian.round(1)
    assert np.all(shift[exits * 4 :] == 0.0)


def _exit_indicators(time, event, edges):
    """Each person's exit as a one-hot row: events by interval, censorings by interval, event-free
    at the horizon."""
    J = len(edges)
    interval = np.searchsorted(edges, time, side="left")
    out = np.zeros((len(time), 2 * J + 1))
    inside = np.flatnonzero(interval < J)
    out[inside, np.where(event[inside] == 1, interval[inside], J + interval[inside])] = 1.0
    out[interval >= J, 2 * J] = 1.0
    return out


def test_a_release_with_declared_kinds_gets_the_reference_law_by_default_and_keeps_it_on_a_refit():
    rng = np.random.default_rng(8)
    X, time, event = _simulate(rng, 1500, np.array([0.5, 1.0]), np.array([0.4, 0.8, -0.3]), 0.8, 0.3)
    prep = pp.Preprocessing.from_public(_simulate(rng, 60, np.array([1.0]), np.zeros(3), 1.0, 1.0)[0])

    def release(seed, preprocessing=prep):
        return release_survival_regression_stats(
            time,
            event,
            X,
            edges=[0.5, 1.0],
            x_bound=5.0,
            epsilon=1.0,
            delta=1e-6,
            rng=seed,
            preprocessing=preprocessing,
        )

    with warnings.catch_warnings():
        warnings.simplefilter("error", CovariateLawWarning)
        model = survival_regression_model(release(0))
    rows = model["x_sample_whitened"].get_value()
    assert rows.shape == (2048, 3)
    np.testing.assert_allclose(rows.mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(rows.T @ rows / len(rows), np.eye(3), atol=1e-10)
    point = model.initial_point()
    before = model.compile_logp()(point)
    set_survival_regression_stats(release(1), model)
    assert np.isfinite(before) and model.compile_logp()(point) != before
    with pytest.raises(ValueError, match="x_sample: the model was built with a reference covariate law"):
        set_survival_regression_stats(release(2), model, x_sample=None)
    with pytest.raises(ValueError, match="kinds"):
        set_survival_regression_stats(release(2, preprocessing=None), model)
    with pytest.raises(ValueError, match="x_sample must be 'public', None or a reference law"):
        survival_regression_model(release(0), x_sample="rows")
    gaussian = survival_regression_model(release(0), x_sample=None)
    assert "x_sample_whitened" not in gaussian


def test_a_binary_level_rarer_than_the_noise_can_resolve_raises_the_warning_with_its_figures():
    """Under the reference law the rare-level warning of the GLMs fires on the survival regression's
    release too (Σx over cells and exits, its noise summed likewise), and is recorded."""
    from pm_private.released.family import recorded_warnings

    rng = np.random.default_rng(9)
    n = 3000
    X = np.c_[rng.normal(size=n), rng.random(n) < 0.004]
    time, event = rng.exponential(1.0, n), (rng.random(n) < 0.7).astype(int)
    prep = pp.Preprocessing.from_public(np.c_[rng.normal(size=60), np.arange(60) % 20 == 0])
    common = dict(edges=[0.5, 1.0, 2.0], x_bound=4.0, delta=1e-6, rng=0, preprocessing=prep)
    with pytest.warns(CovariateLawWarning, match=r"rarer than the release's noise can resolve: x1 \(released share"):
        model = survival_regression_model(release_survival_regression_stats(time, event, X, epsilon=0.5, **common))
    (message,) = recorded_warnings(model)
    assert "x1" in message and "x0" not in message
    with warnings.catch_warnings():
        warnings.simplefilter("error", CovariateLawWarning)
        X[:, 1] = rng.random(n) < 0.3
        survival_regression_model(release_survival_regression_stats(time, event, X, epsilon=0.5, **common))

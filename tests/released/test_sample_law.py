"""The sample covariate law of the GLMs (``x_sample``) and the GLM row-bound rule."""

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from scipy.special import expit

from pm_private import GLMBounds, logistic_bounds, poisson_bounds
from pm_private.logistic import logistic_model, logistic_stats, set_logistic_stats
from pm_private.logistic.moments import logistic_stat_moments
from pm_private.poisson import poisson_model, poisson_stats
from pm_private.poisson.release import poisson_noise_plan
from pm_private.released.bounds import glm_bound_rule
from pm_private.released.glm import jackknife_samples, sample_law_moments, whitened_sample
from pm_private.released.release_normal import law_block


class _Stats:
    def __init__(self, d, x_bound=None):
        self.d, self.x_bound, self.preprocessing = d, x_bound, None


def _law(d, link):
    beta, mu, chol, b = pt.vector("beta"), pt.vector("mu"), pt.matrix("chol"), pt.scalar("b")
    z, reps = pt.matrix("z"), pt.tensor3("reps")
    k = 2 * d + 1 + d * (d + 1) // 2
    gaussian_mean, _ = logistic_stat_moments(beta, b, mu, chol @ chol.T, d)
    law, law_cov = sample_law_moments(z, reps, beta, b, mu, chol, link)
    block = law_block(k, d + 1)
    mean = pt.set_subtensor(gaussian_mean[block], law)
    extra = pt.zeros((k, k))[block[:, None], block[None, :]].set(law_cov)
    return pytensor.function([beta, b, mu, chol, z, reps], [gaussian_mean, mean, extra], mode="FAST_COMPILE")


def test_whitened_sample_has_mean_zero_and_identity_covariance():
    rng = np.random.default_rng(0)
    P = np.column_stack([rng.uniform(size=40) < 0.3, rng.lognormal(size=40), rng.normal(size=40)])
    z = whitened_sample(P, _Stats(3))
    np.testing.assert_allclose(z.mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(z.T @ z / z.shape[0], np.eye(3), atol=1e-10)
    assert jackknife_samples(P, _Stats(3)).shape == (40, 39, 3)
    with pytest.raises(ValueError, match="constant"):
        whitened_sample(np.column_stack([np.zeros(10), rng.normal(size=10)]), _Stats(2))
    with pytest.raises(ValueError, match="at least"):
        whitened_sample(rng.normal(size=(3, 2)), _Stats(2))


def test_a_link_linear_in_a_gives_the_exact_moments_and_no_sample_variance():
    """For g linear in a the means of y and y·x depend on μ and Σx only: the sample law must
    reproduce them whatever its shape, and its jackknife variance must vanish."""
    d = 3
    rng = np.random.default_rng(1)
    f = _law(d, lambda a: 0.2 + 0.1 * a)
    P = rng.lognormal(size=(60, d))
    beta, b, mu = rng.normal(size=d), 0.4, rng.normal(size=d)
    chol = np.linalg.cholesky(np.eye(d) + 0.3)
    _, mean, extra = f(beta, b, mu, chol, whitened_sample(P, _Stats(d)), jackknife_samples(P, _Stats(d)))
    m = beta @ mu + b
    cov = chol @ chol.T
    np.testing.assert_allclose(mean[d], 0.2 + 0.1 * m, atol=1e-12)
    np.testing.assert_allclose(mean[-d:], (0.2 + 0.1 * m) * mu + 0.1 * cov @ beta, atol=1e-12)
    np.testing.assert_allclose(extra, 0.0, atol=1e-20)


def test_sample_law_approaches_the_gaussian_moments_on_gaussian_rows():
    d = 2
    rng = np.random.default_rng(2)
    f = _law(d, lambda a: pt.tanh(0.5 * a))
    P = rng.normal(size=(4000, d))
    beta, b, mu = np.array([1.0, -0.5]), -0.7, np.array([0.3, 0.1])
    chol = np.linalg.cholesky(np.array([[1.0, 0.3], [0.3, 0.5]]))
    gaussian, mean, extra = f(beta, b, mu, chol, whitened_sample(P, _Stats(d)), jackknife_samples(P, _Stats(d)))
    index = np.r_[d, np.arange(mean.size - d, mean.size)]
    sd = np.sqrt(np.diag(extra)[index])
    assert np.all(np.abs(mean[index] - gaussian[index]) < 4 * sd)
    np.testing.assert_array_equal(np.delete(mean, index), np.delete(gaussian, index))


def test_sample_law_removes_most_of_the_bias_on_binary_covariates():
    """Mean of y·x under the true (binary) law against the Gaussian formula and the sample law."""
    d = 2
    rng = np.random.default_rng(3)
    f = _law(d, lambda a: pt.tanh(0.5 * a))
    big = np.column_stack([rng.uniform(size=200_000) < 0.15, rng.uniform(size=200_000) < 0.4]).astype(float)
    beta, b = np.array([2.5, -1.5]), -1.0
    truth = np.r_[np.mean(np.tanh(0.5 * (big @ beta + b))), (np.tanh(0.5 * (big @ beta + b))[:, None] * big).mean(0)]
    mu, chol = big.mean(0), np.linalg.cholesky(np.cov(big.T, bias=True))
    P = np.column_stack([rng.uniform(size=300) < 0.15, rng.uniform(size=300) < 0.4]).astype(float)
    gaussian, mean, extra = f(beta, b, mu, chol, whitened_sample(P, _Stats(d)), jackknife_samples(P, _Stats(d)))
    index = np.r_[d, np.arange(mean.size - d, mean.size)]
    assert np.abs(mean[index] - truth).max() < 0.3 * np.abs(gaussian[index] - truth).max()
    assert np.all(np.abs(mean[index] - truth) < 4 * np.sqrt(np.diag(extra)[index]) + 1e-3)


def test_models_build_and_swap_with_a_public_sample():
    rng = np.random.default_rng(4)
    X = np.column_stack([rng.uniform(size=500) < 0.3, rng.normal(size=500)]).astype(float)
    y = rng.uniform(size=500) < expit(X @ [1.0, -0.5] - 0.3)
    public = np.column_stack([rng.uniform(size=30) < 0.3, rng.normal(size=30)]).astype(float)
    model = logistic_model(logistic_stats(X, y), x_sample=public)
    assert model["x_sample_whitened"].get_value().shape == (30, 2)
    logp = model.compile_logp(mode="FAST_COMPILE")
    assert np.isfinite(logp(model.initial_point()))
    set_logistic_stats(logistic_stats(X[:400], y[:400]), model, x_sample=public[::-1])
    with pytest.raises(ValueError, match="rows"):
        set_logistic_stats(logistic_stats(X, y), model, x_sample=public[:20])
    plain = logistic_model(logistic_stats(X, y))
    with pytest.raises(ValueError, match="without one"):
        set_logistic_stats(logistic_stats(X, y), plain, x_sample=public)
    counts = rng.poisson(np.exp(X @ [0.3, 0.2]))
    pmodel = poisson_model(poisson_stats(X, counts, y_bound=10), x_sample=public)
    assert np.isfinite(pmodel.compile_logp(mode="FAST_COMPILE")(pmodel.initial_point()))


def test_logistic_bounds_rule():
    small = logistic_bounds(1000, 10, 1.0, 1e-6)
    assert isinstance(small, GLMBounds) and small.projected_share is None
    assert small.multiplier == 1.0 and small.x_bound == pytest.approx(np.sqrt(10))
    large = logistic_bounds(50_000, 10, 1.0, 1e-6)
    assert large.multiplier > 1.0
    assert large.noise_sd == pytest.approx(large.sampling_sd, rel=1e-3)  # the balance of the rule
    assert logistic_bounds(200_000, 10, 1.0, 1e-6).x_bound > large.x_bound
    assert logistic_bounds(50_000, 10, 3.0, 1e-6).x_bound > large.x_bound
    public = np.random.default_rng(0).normal(size=(50, 10)) * 2.0
    raised = logistic_bounds(5000, 10, 1.0, 1e-6, public_X=public, max_projected=0.1)
    assert raised.projected_share <= 0.1 and raised.x_bound >= logistic_bounds(5000, 10, 1.0, 1e-6).x_bound
    with pytest.raises(ValueError, match="public_X"):
        logistic_bounds(5000, 10, 1.0, 1e-6, public_X=public[:, :3])
    with pytest.raises(ValueError, match="epsilon"):
        logistic_bounds(5000, 10, -1.0, 1e-6)


def test_poisson_bounds_rule():
    pois = poisson_bounds(200_000, 5, 1.0, 1e-6, y_bound=10, response_sd=2.0)
    assert pois.multiplier > 1.0 and pois.noise_sd == pytest.approx(pois.sampling_sd, rel=1e-3)
    assert pois.sampling_sd == pytest.approx(2.0 * np.sqrt(200_000))
    # both statistic groups within their sampling spread at the bound, one of them at it
    plan = poisson_noise_plan(5, epsilon=1.0, delta=1e-6, x_bound=pois.x_bound, y_bound=10)
    counts = plan.noise_sd["Σy and Σ y·x (counts clipped to 10)"] / pois.sampling_sd
    covariates = plan.noise_sd["Σx and the other entries of Sxx"] / np.sqrt(200_000)
    assert max(counts, covariates) == pytest.approx(1.0, rel=1e-3) and min(counts, covariates) < 1.0
    assert poisson_bounds(1000, 5, 1.0, 1e-6, y_bound=10).x_bound == pytest.approx(np.sqrt(5))
    with pytest.raises(ValueError, match="y_bound"):
        poisson_bounds(1000, 3, 1.0, 1e-6, y_bound=0)
    with pytest.raises(ValueError, match="response_sd"):
        poisson_bounds(1000, 3, 1.0, 1e-6, y_bound=10, response_sd=0.0)


def test_the_bound_rule_with_an_exact_noise_function_matches_the_proportional_one():
    """The shared rule with a closed-form noise s.d. σ(B) = c·B²: m² = √n/(c·d)."""
    n, d, c = 40_000, 4, 0.5
    exact = glm_bound_rule(n, d, lambda b: c * b * b)
    shaped = glm_bound_rule(n, d, lambda b: c * b * b, noise_shape=lambda b: b * b)
    assert exact.multiplier == pytest.approx(np.sqrt(np.sqrt(n) / (c * d)), rel=1e-9)
    assert shaped.x_bound == pytest.approx(exact.x_bound, rel=1e-9)


def test_bound_examples_run():
    import doctest

    import pm_private.logistic.release as logistic_release
    import pm_private.poisson.release as poisson_release

    for function in (logistic_release.logistic_bounds, poisson_release.poisson_bounds):
        runner = doctest.DocTestRunner()
        for test in doctest.DocTestFinder(recurse=False).find(function, function.__name__, globs={}):
            runner.run(test)
        assert runner.summarize(verbose=False).failed == 0


def test_poisson_count_bound_from_public_counts():
    """B is the smallest count that clips at most max_clipped of the public counts, τ their clipped
    root mean square; a given y_bound is kept; without either the rule refuses, naming both."""
    counts = np.random.default_rng(1).poisson(2.0, size=400)
    bounds = poisson_bounds(20_000, 5, 1.0, 1e-6, public_y=counts, max_clipped=0.1)
    B = bounds.y_bound
    assert np.mean(counts > B) <= 0.1 < np.mean(counts > B - 1)
    assert bounds.clipped_share == pytest.approx(np.mean(counts > B))
    tau = np.sqrt(np.mean(np.minimum(counts, B) ** 2))
    assert bounds.sampling_sd == pytest.approx(tau * np.sqrt(20_000))
    assert bounds.x_bound == poisson_bounds(20_000, 5, 1.0, 1e-6, y_bound=B, response_sd=tau).x_bound
    kept = poisson_bounds(20_000, 5, 1.0, 1e-6, y_bound=7, public_y=counts)
    assert kept.y_bound == 7 and kept.clipped_share == pytest.approx(np.mean(counts > 7))
    # a looser count bound puts more noise on the count statistics, so the row bound tightens
    assert poisson_bounds(20_000, 5, 1.0, 1e-6, y_bound=10 * B, response_sd=tau).x_bound < bounds.x_bound
    assert poisson_bounds(20_000, 5, 1.0, 1e-6, public_y=np.zeros(50, int), response_sd=1.0).y_bound == 1
    with pytest.raises(ValueError, match="y_bound, or public counts public_y"):
        poisson_bounds(1000, 3, 1.0, 1e-6)
    with pytest.raises(ValueError, match="public_y"):
        poisson_bounds(1000, 3, 1.0, 1e-6, public_y=[1, 2.5])
    with pytest.raises(ValueError, match="all 0"):
        poisson_bounds(1000, 3, 1.0, 1e-6, public_y=np.zeros(10))
    with pytest.raises(ValueError, match="max_clipped"):
        poisson_bounds(1000, 3, 1.0, 1e-6, public_y=counts, max_clipped=1.0)
    # the count bound alone: the same B, for every share, without n, d or a guess of τ
    from pm_private.poisson import count_bound

    for share in (0.01, 0.05, 0.1, 0.3):
        B = count_bound(counts, max_clipped=share)
        assert np.mean(counts > B) <= share < np.mean(counts > B - 1)
        assert B == poisson_bounds(20_000, 5, 1.0, 1e-6, public_y=counts, max_clipped=share).y_bound
    assert count_bound(np.zeros(10, int)) == 1  # all 0: no refusal, there is no τ to guess
    with pytest.raises(ValueError, match="public_y"):
        count_bound([[1, 2]])
    with pytest.raises(ValueError, match="max_clipped"):
        count_bound(counts, max_clipped=0.0)

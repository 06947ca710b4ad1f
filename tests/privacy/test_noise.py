"""Goodness of fit of every noise sampler against the distribution it claims."""

import numpy as np
import pytest
from scipy import stats

from pm_private.privacy.noise import NoiseSource, as_noise_source, l2_gamma_vector, laplace_vector
from pm_private.privacy.primitives import laplace_mechanism

P_MIN = 1e-4  # a correct sampler fails a test with probability 1e-4 (secure, unseeded runs)


@pytest.fixture(params=["seeded", "secure"])
def source(request):
    return as_noise_source(20261122 if request.param == "seeded" else None)


def test_source_modes():
    assert as_noise_source(None).secure
    assert not as_noise_source(1).secure
    assert not as_noise_source(np.random.default_rng(1)).secure
    with pytest.raises(TypeError):
        as_noise_source("seed")
    a = as_noise_source(7).uniform(5)
    b = as_noise_source(7).uniform(5)
    np.testing.assert_array_equal(a, b)


def test_uniform(source):
    u = source.uniform(20000)
    assert 0 < u.min() and u.max() < 1
    assert stats.kstest(u, "uniform").pvalue > P_MIN


def test_exponential_laplace_normal(source):
    assert stats.kstest(source.exponential(20000), "expon").pvalue > P_MIN
    assert stats.kstest(source.laplace(2.5, 20000), stats.laplace(scale=2.5).cdf).pvalue > P_MIN
    assert stats.kstest(source.normal((100, 201)).ravel(), "norm").pvalue > P_MIN


def test_gamma(source):
    draws = source.gamma(7, 0.5, (20000,))
    assert stats.kstest(draws, stats.gamma(7, scale=0.5).cdf).pvalue > P_MIN
    with pytest.raises(ValueError):
        source.gamma(2.5, 1.0)


def test_laplace_vector_is_iid_laplace(source):
    draws = np.stack([laplace_vector(5, 2.0, source) for _ in range(4000)])
    for j in range(5):
        assert stats.kstest(draws[:, j], stats.laplace(scale=2.0).cdf).pvalue > P_MIN / 5


@pytest.mark.parametrize("dim", [1, 3, 20])
def test_l2_gamma_vector_radius_and_direction(source, dim):
    scale = 0.7
    draws = np.stack([l2_gamma_vector(dim, scale, source) for _ in range(4000)])
    radius = np.linalg.norm(draws, axis=1)
    assert stats.kstest(radius, stats.gamma(dim, scale=scale).cdf).pvalue > P_MIN
    if dim > 1:
        # uniform direction: the first coordinate of u has (u₁² ~ Beta(1/2, (dim−1)/2))
        u1 = draws[:, 0] / radius
        assert stats.kstest(u1**2, stats.beta(0.5, (dim - 1) / 2).cdf).pvalue > P_MIN
        assert abs(np.mean(np.sign(u1))) < 0.1


def test_laplace_mechanism_noise_and_certified_epsilon(source):
    values = np.linspace(-50, 50, 4000)
    release = laplace_mechanism(values, sensitivity=3.0, epsilon=2.0, source=source)
    assert release.private == source.secure
    assert release.epsilon == pytest.approx(2.0, rel=1e-12) and release.epsilon <= 2.0 * (1 + 1e-15)
    assert release.scale == pytest.approx(1.5, rel=1e-8) and release.scale >= 1.5
    noise = release.values - values
    assert stats.kstest(noise, stats.laplace(scale=1.5).cdf).pvalue > P_MIN
    with pytest.raises(ValueError, match="epsilon"):
        laplace_mechanism(values, sensitivity=1.0, epsilon=0.0, source=source)
    with pytest.raises(ValueError, match="sensitivity"):
        laplace_mechanism(values, sensitivity=float("nan"), epsilon=1.0, source=source)


def test_secure_laplace_outputs_differ_between_calls():
    source = NoiseSource()
    a = laplace_mechanism(np.zeros(10), sensitivity=1.0, epsilon=1.0, source=source).values
    b = laplace_mechanism(np.zeros(10), sensitivity=1.0, epsilon=1.0, source=source).values
    assert not np.array_equal(a, b)

"""Goodness of fit of every noise sampler against the distribution it claims."""

import numpy as np
import pytest
from scipy import stats

from pm_private.privacy.noise import (
    GRID_BITS_BELOW_SCALE,
    NoiseSource,
    add_gaussian_noise,
    as_noise_source,
    l2_gamma_vector,
    laplace_vector,
    secure_generator,
)
from pm_private.privacy.primitives import laplace_mechanism

# The seeded source has a fixed seed; the secure one cannot be seeded, so its tests use the
# suite's secure threshold (the p_min fixture) with samples (20000) large enough that the same
# test rejects a 25 % scale error.


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


def test_uniform(source, p_min):
    u = source.uniform(20000)
    assert 0 < u.min() and u.max() < 1
    assert stats.kstest(u, "uniform").pvalue > p_min(source.secure)


def test_exponential_laplace_normal(source, p_min):
    assert stats.kstest(source.exponential(20000), "expon").pvalue > p_min(source.secure)
    assert stats.kstest(source.laplace(2.5, 20000), stats.laplace(scale=2.5).cdf).pvalue > p_min(source.secure)
    assert stats.kstest(source.normal((100, 201)).ravel(), "norm").pvalue > p_min(source.secure)


def test_gamma(source, p_min):
    draws = source.gamma(7, 0.5, (20000,))
    assert stats.kstest(draws, stats.gamma(7, scale=0.5).cdf).pvalue > p_min(source.secure)
    with pytest.raises(ValueError):
        source.gamma(2.5, 1.0)


def test_laplace_vector_is_iid_laplace(source, p_min):
    draws = np.stack([laplace_vector(5, 2.0, source) for _ in range(20000)])
    for j in range(5):
        assert stats.kstest(draws[:, j], stats.laplace(scale=2.0).cdf).pvalue > p_min(source.secure) / 5


@pytest.mark.parametrize("dim", [1, 3, 20])
def test_l2_gamma_vector_radius_and_direction(source, dim, p_min):
    scale, n = 0.7, 20000
    draws = l2_gamma_vector(dim, scale, source, size=n)
    radius = np.linalg.norm(draws, axis=1)
    assert stats.kstest(radius, stats.gamma(dim, scale=scale).cdf).pvalue > p_min(source.secure)
    # the test has teeth: the same n rejects a radius scale 25 % off at the secure threshold
    assert stats.kstest(radius, stats.gamma(dim, scale=1.25 * scale).cdf).pvalue < p_min(True)
    if dim > 1:
        # uniform direction: the first coordinate of u has (u₁² ~ Beta(1/2, (dim−1)/2))
        u1 = draws[:, 0] / radius
        assert stats.kstest(u1**2, stats.beta(0.5, (dim - 1) / 2).cdf).pvalue > p_min(source.secure)
        assert abs(np.mean(np.sign(u1))) < 0.05


def test_one_l2_gamma_vector_is_a_row_of_many():
    one = l2_gamma_vector(4, 0.7, as_noise_source(5))
    many = l2_gamma_vector(4, 0.7, as_noise_source(5), size=1)
    assert one.shape == (4,) and many.shape == (1, 4)
    np.testing.assert_array_equal(one, many[0])


@pytest.mark.parametrize("scale", [0.3, 12.47])
def test_add_gaussian_noise_is_gaussian_of_the_stated_scale(source, scale, p_min):
    n = 20000
    values = np.linspace(-1e3, 1e3, n)
    noise = add_gaussian_noise(values, scale, source) - values
    assert stats.kstest(noise / scale, "norm").pvalue > p_min(source.secure)
    assert stats.kstest(noise / (1.25 * scale), "norm").pvalue < p_min(True)  # teeth
    if source.secure:  # OpenDP's discrete Gaussian: the outputs lie on the grid 2^k
        grid = 2.0 ** (np.floor(np.log2(scale)) - GRID_BITS_BELOW_SCALE)
        outputs = (values + noise) / grid
        np.testing.assert_array_equal(outputs, np.round(outputs))
    assert add_gaussian_noise(np.zeros((2, 3)), scale, source).shape == (2, 3)


@pytest.mark.parametrize("scale", [0.0, -1.0, float("inf"), float("nan")])
def test_add_gaussian_noise_refuses_a_bad_scale_before_drawing(source, scale):
    with pytest.raises(ValueError, match="noise scale must be finite and > 0"):
        add_gaussian_noise([1.0], scale, source)


def test_secure_gaussian_noise_reaches_beyond_the_box_muller_cut():
    # Box–Muller on 53-bit uniforms never exceeds about 8.65σ; the discrete Gaussian has no cut.
    # P(|Z| > 4) over 20000 draws: about 1.3 expected, and the grid keeps the values exact.
    noise = add_gaussian_noise(np.zeros(20000), 1.0, NoiseSource())
    assert np.abs(noise).max() > 3.0


def test_secure_generator_is_fresh_and_spawns():
    a, b = secure_generator(), secure_generator()
    assert a.bit_generator.seed_seq.entropy != b.bit_generator.seed_seq.entropy
    assert a.bit_generator.seed_seq.entropy.bit_length() > 200  # 256 random bits
    assert len(a.spawn(3)) == 3
    assert not np.array_equal(a.normal(size=4), b.normal(size=4))


def test_laplace_mechanism_noise_and_certified_epsilon(source, p_min):
    values = np.linspace(-50, 50, 20000)
    release = laplace_mechanism(values, sensitivity=3.0, epsilon=2.0, source=source)
    assert release.private == source.secure
    assert release.epsilon == pytest.approx(2.0, rel=1e-12) and release.epsilon <= 2.0 * (1 + 1e-15)
    assert release.scale == pytest.approx(1.5, rel=1e-8) and release.scale >= 1.5
    noise = release.values - values
    assert stats.kstest(noise, stats.laplace(scale=1.5).cdf).pvalue > p_min(source.secure)
    with pytest.raises(ValueError, match="epsilon"):
        laplace_mechanism(values, sensitivity=1.0, epsilon=0.0, source=source)
    with pytest.raises(ValueError, match="sensitivity"):
        laplace_mechanism(values, sensitivity=float("nan"), epsilon=1.0, source=source)


def test_secure_laplace_outputs_differ_between_calls():
    source = NoiseSource()
    a = laplace_mechanism(np.zeros(10), sensitivity=1.0, epsilon=1.0, source=source).values
    b = laplace_mechanism(np.zeros(10), sensitivity=1.0, epsilon=1.0, source=source).values
    assert not np.array_equal(a, b)

"""Closed-form moments of the binary-response statistics (logistic and probit links) against
brute-force Monte Carlo."""

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
from scipy.special import expit, ndtr

from pm_private.logistic.moments import logistic_stat_moments, probit_mixture
from pm_private.released.moments import binary_response_moments

#: The moments of each link, and the link itself from SciPy.
LINKS = {"logistic": (logistic_stat_moments, expit), "probit": (binary_response_moments, ndtr)}


def test_probit_mixture_is_within_its_stated_error_of_the_sigmoid():
    a = np.linspace(-40, 40, 200001)
    assert np.abs(probit_mixture(a) - expit(a)).max() < 5.3e-6


def _moments(d, moments=logistic_stat_moments):
    beta, mu, cov = pt.vector("beta"), pt.vector("mu"), pt.matrix("cov")
    intercept = pt.scalar("intercept")
    return pytensor.function([beta, intercept, mu, cov], moments(beta, intercept, mu, cov, d), mode="FAST_COMPILE")


@pytest.mark.parametrize("link", LINKS)
@pytest.mark.parametrize("d", [1, 3])
def test_moments_match_monte_carlo(d, link):
    """Rao–Blackwellised Monte Carlo (y integrated out given x): every mean and covariance entry
    within 5 Monte Carlo standard errors."""
    rng = np.random.default_rng(d)
    beta = 1.5 * rng.normal(size=d)
    b, mu = 0.7, 0.5 * rng.normal(size=d)
    A = rng.normal(size=(d, d))
    cov = A @ A.T / d + 0.3 * np.eye(d)
    moments, inverse_link = LINKS[link]
    mean, covariance = _moments(d, moments)(beta, b, mu, cov)
    n = 100_000
    x = rng.multivariate_normal(mu, cov, size=n)
    g = 2 * inverse_link(x @ beta + b) - 1
    y = np.where(rng.uniform(size=n) < (1 + g) / 2, 1.0, -1.0)
    i, j = np.triu_indices(d)
    t = np.column_stack([x, y, x[:, i] * x[:, j], y[:, None] * x])
    centred = t - t.mean(axis=0)
    mc_cov = centred.T @ centred / n
    se_mean = t.std(axis=0) / np.sqrt(n)
    products = centred[:, :, None] * centred[:, None, :]
    se_cov = products.std(axis=0) / np.sqrt(n)
    assert np.all(np.abs(mean - t.mean(axis=0)) < 5 * se_mean)
    assert np.all(np.abs(covariance - mc_cov) < 5 * se_cov + 1e-12)
    assert np.allclose(covariance, covariance.T) and np.linalg.eigvalsh(covariance).min() > 0


def test_moments_are_smooth_at_zero_coefficients():
    """β = 0: no division by the predictor's standard deviation; y is independent of x."""
    d = 2
    mean, covariance = _moments(d)(np.zeros(d), 0.0, np.array([0.3, -0.2]), np.eye(d))
    assert np.isfinite(covariance).all()
    assert mean[d] == pytest.approx(0.0, abs=1e-6)  # E[y] = 2σ(0) − 1
    assert covariance[d, d] == pytest.approx(1.0, abs=1e-6)
    assert np.allclose(mean[-d:], 0.0, atol=1e-6)  # E[yx] = E[y]E[x] = 0

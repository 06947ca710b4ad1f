"""DP-SGLD's release of the share of clipped gradients: the exact counts it noises, the noise law,
its place in the run's plan (dp-accounting recomposes the whole run), the warning, and refusals
that spend nothing."""

import math
import warnings

import numpy as np
import pymc as pm
import pytest
from dp_accounting import NeighboringRelation
from dp_accounting.pld.pld_privacy_accountant import PLDAccountant
from scipy import stats

from pm_private import PrivacyAccountant
from pm_private.privacy.budget import NoiseEvent, gaussian_multiplier, implied_epsilon
from pm_private.privacy.noise import as_noise_source
from pm_private.sampling import dp_sgld, plan_dp_sgld
from pm_private.sampling.clipped_share import ClippingWarning, clipped_counts, release_clipped_share, report_event
from pm_private.sampling.private_langevin import _gradient_functions


def _logistic(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2)) * [1.0, 3.0]
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-(X @ [1.0, -0.5])))).astype(int)
    with pm.Model() as model:
        beta = pm.Normal("beta", 0.0, 2.0, shape=2)
        pm.Bernoulli("y", logit_p=pm.math.dot(X, beta), observed=y)
    return model, X, y


def test_the_counts_are_the_records_whose_gradient_is_longer_than_the_clip():
    """Brute force: a logistic record's gradient is (yᵢ − σ(xᵢᵀβ))·xᵢ, times the preconditioner's
    scales; the counts at two points, across the chunks of the record pass, are those norms > C."""
    model, X, y = _logistic(n=9000)
    gradients, n, _, _ = _gradient_functions(model)
    points = np.array([[0.3, -0.2], [1.0, -0.5]])
    for scale in (None, np.array([2.0, 0.5])):
        counts = clipped_counts(gradients, points, n, 0.8, scale)
        residual = y[None, :] - 1 / (1 + np.exp(-(points @ X.T)))
        norms = np.linalg.norm(residual[:, :, None] * X[None] * (1.0 if scale is None else scale), axis=2)
        np.testing.assert_array_equal(counts, (norms > 0.8).sum(axis=1))
        assert 0 < counts.min() and counts.max() < n  # the clip splits the records


def test_the_released_share_is_the_mean_count_plus_gaussian_noise_of_the_stated_sd():
    source = as_noise_source(np.random.default_rng(1))
    counts, sd, n = np.array([400.0, 700.0]), 30.0, 2000
    released = np.array([release_clipped_share(counts, sd, n, source, 1.0)[0] for _ in range(4000)])
    share_sd = release_clipped_share(counts, sd, n, source, 1.0)[1]
    assert share_sd == pytest.approx(sd / (n * math.sqrt(2)))
    assert stats.kstest((released - counts.mean() / n) / share_sd, "norm").pvalue > 1e-4


def test_the_report_is_sized_by_its_share_and_the_run_recomposes_with_it():
    plan = plan_dp_sgld(1.0, 1e-5, n=10_000, sampling_rate=0.01, clip=2.0, steps=500, chains=3, clip_share=0.1)
    # the report takes 0.1 of the zCDP cost ρ = 1/(2m²) of the Gaussian mechanism that is (ε, δ)-DP
    # alone: its multiplier on the 3 counts (sensitivity √3) is m/√0.1
    m = gaussian_multiplier(1.0, 1e-5)
    assert implied_epsilon((NoiseEvent("gaussian", m, 1.0),), 1e-5) == pytest.approx(1.0, rel=1e-3)
    assert report_event(plan.report_sd, 3).scale / math.sqrt(3) == pytest.approx(m / math.sqrt(0.1), rel=1e-12)
    assert report_event(plan.report_sd, 3).sensitivity == pytest.approx(math.sqrt(3))
    theirs = PLDAccountant(NeighboringRelation.REPLACE_ONE)
    theirs.compose(plan.dp_event())
    assert plan.epsilon <= 1.0 and theirs.get_epsilon(1e-5) * (1 - 1e-3) <= plan.epsilon
    assert plan.epsilon <= theirs.get_epsilon(1e-5) * 1.02
    # the steps get less noise without the report: about half the share less (ρ adds up)
    alone = plan_dp_sgld(1.0, 1e-5, n=10_000, sampling_rate=0.01, clip=2.0, steps=500, chains=3, clip_share=0)
    assert alone.report_sd is None and 1.02 < plan.noise_multiplier / alone.noise_multiplier < 1.08
    assert len(alone.noise_events()) == 1 and len(plan.noise_events()) == 2


def test_a_run_releases_the_share_and_warns_when_most_records_are_clipped():
    """A clip far above the gradients releases a share within noise of 0 and no warning; on
    y ~ N(μ, 1) a clip of 0.1 is below |yᵢ − μ| for 92 % of the records wherever the chain is
    near the mean, and the run warns; a noise-dominated share (small ε, few records) does not."""
    model, _, _ = _logistic()
    common = dict(epsilon=4.0, delta=1e-5, sampling_rate=0.05, draws=100, tune=100, rng=2, progressbar=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ClippingWarning)
        roomy = dp_sgld(model, clip=50.0, thin=1, **common)
    assert roomy.attrs["clipped_share"] <= 5 * roomy.attrs["clipped_share_sd"]
    y = np.random.default_rng(3).normal(0.7, 1.0, 3000)
    with pm.Model() as normal:
        pm.Normal("y", pm.Normal("mu", 0.0, 10.0), 1.0, observed=y)
    with pytest.warns(ClippingWarning, match="follow the clipped score"):
        tight = dp_sgld(normal, clip=0.1, **common)
    assert 0.85 < tight.attrs["clipped_share"] < 0.99 and tight.attrs["clipped_share_sd"] < 0.01
    off = dp_sgld(normal, clip=0.1, clip_share=0, **common)
    assert "clipped_share" not in off.attrs
    with warnings.catch_warnings():
        warnings.simplefilter("error", ClippingWarning)
        noisy = dp_sgld(normal, clip=0.1, **(common | dict(epsilon=0.01)))
    assert noisy.attrs["clipped_share_sd"] > 0.2


@pytest.mark.parametrize("value", [1.0, 0.6, -0.1, 1e-4, "a", True])
def test_a_bad_clip_share_is_refused_naming_it_before_anything_is_spent(value):
    model, _, _ = _logistic(n=200)
    accountant = PrivacyAccountant(5.0, 1e-5)
    with pytest.raises(ValueError, match="clip_share"):
        dp_sgld(model, epsilon=1.0, delta=1e-5, sampling_rate=0.1, clip=1.0, accountant=accountant, clip_share=value)
    assert accountant.ledger == ()

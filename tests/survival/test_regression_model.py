"""The noise-aware proportional-hazards regression of the exit table with covariate moments:
its moments against brute-force Monte Carlo, the model's contract, and NUTS against lifelines' Cox
fit on exact statistics."""

import numpy as np
import pandas as pd
import pymc as pm
import pytensor
import pytensor.tensor as pt
import pytest

from pm_private.survival import (
    release_survival_regression_stats,
    set_survival_regression_stats,
    survival_regression_model,
    survival_regression_stats,
)
from pm_private.survival.regression.moments import exit_probabilities, regression_stat_moments, statistic_size


def _moments(beta, mu, cov, log_event, censor):
    b, m, c, le, ce = pt.vector(), pt.vector(), pt.matrix(), pt.vector(), pt.vector()
    mean, covariance = regression_stat_moments(b, m, c, le, ce, len(beta))
    return pytensor.function([b, m, c, le, ce], [mean, covariance])(beta, mu, cov, log_event, censor)


def test_moments_match_brute_force_monte_carlo():
    rng = np.random.default_rng(0)
    d, J = 2, 3
    beta, mu = np.array([0.7, -0.4]), np.array([0.3, -0.2])
    cov = np.array([[1.0, 0.4], [0.4, 0.6]])
    log_event, censor = np.log([0.3, 0.4, 0.5]), np.array([0.1, 0.0, 0.2])
    mean, covariance = _moments(beta, mu, cov, log_event, censor)
    assert mean.shape == (statistic_size(J, d),)
    N = 400_000
    x = rng.multivariate_normal(mu, cov, size=N)
    a = pt.vector()
    probs = pytensor.function([a], exit_probabilities(a, log_event, censor))(x @ beta)
    exits = np.minimum((rng.uniform(size=N)[:, None] > probs.cumsum(axis=1)).sum(axis=1), 2 * J)
    y = np.eye(2 * J + 1)[exits]
    i, j = np.triu_indices(d)
    t = np.concatenate([y, (y[:, :, None] * x[:, None, :]).reshape(N, -1), x[:, i] * x[:, j]], axis=1)
    se = np.sqrt(t.var(axis=0) / N)
    z = np.abs(t.mean(axis=0) - mean) / np.where(se > 0, se, np.inf)
    assert z.max() < 4.5
    batches = np.stack([np.cov(t[k::20].T) for k in range(20)])
    cse = batches.std(axis=0) / np.sqrt(20)
    zc = np.abs(np.cov(t.T) - covariance) / np.where(cse > 1e-12, cse, np.inf)
    assert zc.max() < 5.0 and (zc > 3).mean() < 0.02
    # the covariance is positive semi-definite, and at β = 0 the moments are smooth and x-free in the counts
    assert np.linalg.eigvalsh(covariance).min() > -1e-10
    zero_mean, _ = _moments(np.zeros(d), mu, cov, log_event, censor)
    sums = zero_mean[2 * J + 1 : (2 * J + 1) * (d + 1)].reshape(2 * J + 1, d)
    np.testing.assert_allclose(sums, zero_mean[: 2 * J + 1, None] * mu, rtol=1e-5)


def _data(n, seed, d=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    t = rng.exponential(np.exp(-X @ np.array([0.5, -0.3])[:d]))
    c = rng.exponential(3.0, n)
    return np.minimum(t, c), t <= c, X


EDGES = [0.2, 0.5, 1.0, 2.0]


def test_the_model_speaks_its_contract_and_swaps_statistics():
    time, event, X = _data(1500, seed=1)
    release = release_survival_regression_stats(
        time, event, pd.DataFrame(X, columns=["age", "dose"]), edges=EDGES, x_bound=4.0, epsilon=1.0, delta=1e-6,
        rng=2,
    )  # fmt: skip
    model = survival_regression_model(release)
    assert list(model.coords["feature"]) == ["age", "dose"]
    assert len(model.coords["statistic"]) == statistic_size(4, 2) == model["regression_vector"].get_value().size
    logp = model.compile_logp()
    point = model.initial_point()
    before = logp(point)
    assert np.isfinite(before)
    other = release_survival_regression_stats(time, event, X, edges=EDGES, x_bound=4.0, epsilon=1.0, delta=1e-6, rng=3)
    set_survival_regression_stats(other, model)
    assert logp(point) != pytest.approx(before)
    exact = survival_regression_stats(time, event, X, edges=EDGES, x_bound=4.0)
    with pytest.raises(ValueError, match="noise_aware=False"):
        set_survival_regression_stats(exact, model)
    with pytest.raises(ValueError, match="needs a release"):
        survival_regression_model(exact, noise_aware=True)
    with pytest.raises(ValueError, match="interval ends"):
        set_survival_regression_stats(
            release_survival_regression_stats(time, event, X, edges=[0.5, 1.0], x_bound=4.0, epsilon=1.0, delta=1e-6),
            model,
        )
    two = release_survival_regression_stats(
        time, event, X, np.where(X[:, 0] > 0, "a", "b"), edges=EDGES, cells=["a", "b"], x_bound=4.0, epsilon=1.0,
        delta=1e-6, rng=4,
    )  # fmt: skip
    with pytest.raises(ValueError, match="one cell"):
        survival_regression_model(two)
    with pytest.raises(ValueError, match="censoring"):
        survival_regression_model(release, censoring="weibull")


@pytest.mark.slow
def test_nuts_on_exact_statistics_agrees_with_lifelines_cox():
    from lifelines import CoxPHFitter

    time, event, X = _data(4000, seed=5)
    stats = survival_regression_stats(time, event, X, edges=EDGES, x_bound=5.0)
    with survival_regression_model(stats):
        idata = pm.sample(
            400, tune=400, chains=1, nuts_sampler="pymc", target_accept=0.9, progressbar=False, random_seed=6
        )
    beta = idata.posterior["beta"].values.reshape(-1, 2)
    frame = pd.DataFrame(X, columns=["a", "b"]).assign(T=time, E=event)
    cox = CoxPHFitter().fit(frame, "T", "E")
    # grouping into 4 intervals loses a little information: the posterior sd is about the Cox s.e.
    assert np.all(np.abs(beta.mean(axis=0) - cox.params_.values) < 2.5 * cox.standard_errors_.values)
    assert np.all(beta.std(axis=0) < 2.0 * cox.standard_errors_.values)

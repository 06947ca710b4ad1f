"""The noise-aware proportional-hazards regression of the exit table with covariate moments:
its moments against brute-force Monte Carlo, the model's contract, and NUTS against lifelines' Cox
fit on exact statistics."""

import warnings

import numpy as np
import pandas as pd
import pymc as pm
import pytensor
import pytensor.tensor as pt
import pytest

from pm_private.released.likelihood import normal_logp
from pm_private.survival import (
    release_survival_regression_stats,
    set_survival_regression_stats,
    survival_regression_model,
    survival_regression_stats,
)
from pm_private.survival.regression.likelihood import exit_table_normal_logp
from pm_private.survival.regression.moments import (
    dense_moments,
    exit_probabilities,
    regression_stat_blocks,
    regression_stat_moments,
    statistic_size,
)


def _moments(beta, mu, cov, log_event, censor):
    b, m, c, le, ce = pt.vector(), pt.vector(), pt.matrix(), pt.vector(), pt.vector()
    mean, covariance = regression_stat_moments(b, m, c, le, ce, len(beta), len(log_event))
    return pytensor.function([b, m, c, le, ce], [mean, covariance], mode="FAST_COMPILE")(
        beta, mu, cov, log_event, censor
    )


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
    probs = pytensor.function([a], exit_probabilities(a, log_event, censor), mode="FAST_COMPILE")(x @ beta)
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


def test_discrete_time_exit_probabilities_match_a_simulated_grouped_hazard():
    rng = np.random.default_rng(3)
    a = np.array([-0.7, 0.0, 0.9])
    gamma, censor = np.log([0.2, 0.3, 0.25]), np.array([0.1, 0.2, 0.05])
    x = pt.vector()
    probs = pytensor.function([x], exit_probabilities(x, gamma, censor, discrete=True), mode="FAST_COMPILE")(a)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=1e-12)
    N = 200_000
    for row, value in zip(probs, a, strict=True):
        hazard = 1.0 - np.exp(-np.exp(gamma + value))
        exits = np.full(N, 2 * len(gamma))
        alive = np.ones(N, dtype=bool)
        for j in range(len(gamma)):
            dies = alive & (rng.uniform(size=N) < hazard[j])
            exits[dies] = j
            leaves = alive & ~dies & (rng.uniform(size=N) < censor[j])
            exits[leaves] = len(gamma) + j
            alive &= ~dies & ~leaves
        shares = np.bincount(exits, minlength=row.size) / N
        assert np.all(np.abs(shares - row) < 4.5 * np.sqrt(row * (1 - row) / N) + 1e-12)


@pytest.mark.parametrize(("noise", "discrete"), [(25.0, False), (1e-6, False), (4.0, True)])
def test_block_log_density_equals_the_dense_one_with_its_gradient(noise, discrete):
    rng = np.random.default_rng(4)
    d, J = 3, 4
    b, m, c, le, ce = pt.vector(), pt.vector(), pt.matrix(), pt.vector(), pt.vector()
    value, noise_var, n = pt.vector(), pt.vector(), pt.scalar()
    blocks = regression_stat_blocks(b, m, c, le, ce, d, discrete)
    mean, cov = dense_moments(blocks, J, d)
    dense = normal_logp(value, n * mean, n * cov + pt.diag(noise_var))
    one_cell = [b[None] for b in blocks]
    block = exit_table_normal_logp(value[None], n, pt.ones(1), noise_var[None], type(blocks)(*one_cell), J, d)
    inputs = [value, noise_var, n, b, m, c, le, ce]
    wrt = [b, m, c, le, ce]
    f_dense = pytensor.function(inputs, [dense, *pytensor.grad(dense, wrt)], mode="FAST_COMPILE")
    f_block = pytensor.function(inputs, [block, *pytensor.grad(block, wrt)], mode="FAST_COMPILE")
    A = rng.normal(size=(d, d)) * 0.3
    params = (
        rng.normal(size=d) * 0.3, rng.normal(size=d) * 0.3, A @ A.T + np.eye(d), np.log(rng.uniform(0.05, 0.3, J)),
        rng.uniform(0.0, 0.2, J),
    )  # fmt: skip
    mu, V = pytensor.function(wrt, [mean, cov], mode="FAST_COMPILE")(*params)
    k = statistic_size(J, d)
    r = rng.multivariate_normal(5000 * mu, 5000 * V + noise * np.eye(k))
    if noise < 1e-3:  # exact statistics: the counts add up to n
        r[: 2 * J + 1] = rng.multinomial(5000, mu[: 2 * J + 1] / mu[: 2 * J + 1].sum())
    args = (r, np.full(k, noise), 5000.0, *params)
    expected, got = f_dense(*args), f_block(*args)
    assert np.isfinite(expected[0])
    assert got[0] == pytest.approx(expected[0], rel=1e-8)
    for e, g in zip(expected[1:], got[1:], strict=True):
        if e.ndim == 2:  # the covariance enters symmetrised: compare the symmetric parts
            e, g = e + e.T, g + g.T
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6 * np.abs(e).max())
    # a covariance that is not positive definite gives −∞, not an error
    bad = (*args[:5], -np.eye(d), *args[6:])
    assert f_block(*bad)[0] == -np.inf


def test_cells_factor_into_one_block_diagonal_normal_with_a_shared_rank_one_term():
    """Two cells: the block log-density equals the dense normal of the stacked statistics, whose
    covariance is n·(blockdiag(πc·E[tcₜcᵀ]) − mmᵀ) + D, m the stacked πc·E[tc]."""
    rng = np.random.default_rng(6)
    d, J, K, n = 2, 3, 2, 4000.0
    share = np.array([0.35, 0.65])
    b, c, le, ce = pt.vector(), pt.matrix(), pt.matrix(), pt.matrix()
    mu = pt.matrix()
    parts = [regression_stat_blocks(b, mu[k], c, le[k], ce[k], d) for k in range(K)]
    blocks = type(parts[0])(*(pt.stack(p) for p in zip(*parts, strict=True)))
    value, noise = pt.matrix(), pt.matrix()
    block = exit_table_normal_logp(value, n, share, noise, blocks, J, d)
    means, seconds = [], []
    for k in range(K):
        mean, cov = dense_moments(parts[k], J, d)
        means.append(share[k] * mean)
        seconds.append(share[k] * (cov + pt.outer(mean, mean)))
    mean = pt.concatenate(means)
    cov = pt.linalg.block_diag(*seconds) - pt.outer(mean, mean)
    dense = normal_logp(value.ravel(), n * mean, n * cov + pt.diag(noise.ravel()))
    inputs = [value, noise, b, mu, c, le, ce]
    f = pytensor.function(
        inputs, [block, dense, *pytensor.grad(block, [b, le]), *pytensor.grad(dense, [b, le])], mode="FAST_COMPILE"
    )
    params = (
        np.array([0.4, -0.3]), np.array([[0.2, -0.1], [-0.3, 0.4]]), np.array([[1.0, 0.3], [0.3, 0.8]]),
        np.log(rng.uniform(0.1, 0.3, (K, J))), rng.uniform(0.0, 0.2, (K, J)),
    )  # fmt: skip
    m, V = pytensor.function([b, mu, c, le, ce], [mean, cov], mode="FAST_COMPILE")(*params)
    k = statistic_size(J, d)
    noise_var = np.full((K, k), 9.0)
    r = rng.multivariate_normal(n * m, n * V + 9.0 * np.eye(K * k)).reshape(K, k)
    got, expected, *grads = f(r, noise_var, *params)
    assert got == pytest.approx(expected, rel=1e-9)
    for g, e in zip(grads[:2], grads[2:], strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-9)


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
    logp = model.compile_logp(mode="FAST_COMPILE")
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
    stratified = survival_regression_model(two)
    assert list(model.coords["cell"]) == ["all"]
    assert list(stratified.coords["cell"]) == ["a", "b"]
    assert stratified.named_vars_to_dims["baseline"] == ("cell", "interval")
    assert np.isfinite(stratified.compile_logp(mode="FAST_COMPILE")(stratified.initial_point()))
    with pytest.raises(ValueError, match="model's cells"):
        set_survival_regression_stats(two, model)
    with pytest.raises(ValueError, match="censoring"):
        survival_regression_model(release, censoring="weibull")
    with pytest.raises(ValueError, match="hazard"):
        survival_regression_model(release, hazard="logit")
    discrete = survival_regression_model(release, hazard="cloglog")
    assert np.isfinite(discrete.compile_logp(mode="FAST_COMPILE")(discrete.initial_point()))


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


def test_declared_binary_columns_raise_the_covariate_law_warning_and_the_model_records_it():
    """With the Gaussian law (``x_sample=None``) a release whose preprocessing declares a binary
    column warns at build time, naming it, and records the message for ``print_summary``;
    continuous columns alone, no declared kinds, or the default reference law do not warn."""
    from pm_private import Preprocessing
    from pm_private.released import CovariateLawWarning
    from pm_private.released.family import recorded_warnings

    rng = np.random.default_rng(5)
    n = 400
    X = np.c_[rng.normal(size=n), rng.random(n) < 0.3]
    time, event = rng.exponential(1.0, n), (rng.random(n) < 0.7).astype(int)
    public = np.c_[rng.normal(size=50), rng.random(50) < 0.3]

    def model(kinds, **kwargs):
        prep = None if kinds is None else Preprocessing.from_public(public, kinds=kinds)
        release = release_survival_regression_stats(
            time, event, X, edges=[0.5, 1.0, 2.0], x_bound=4.0, epsilon=1.0, delta=1e-6, rng=0, preprocessing=prep
        )
        return survival_regression_model(release, **kwargs)

    with pytest.warns(CovariateLawWarning, match=r"1 of its 2 columns not continuous: treated \(binary\)"):
        built = model("infer", feature_names=["age", "treated"], x_sample=None)
    (message,) = recorded_warnings(built)
    assert "Gaussian law" in message and "treated (binary)" in message
    with warnings.catch_warnings():
        warnings.simplefilter("error", CovariateLawWarning)
        assert recorded_warnings(model(("continuous", "continuous"), x_sample=None)) == []
        assert recorded_warnings(model(None)) == []
    with warnings.catch_warnings():  # at n = 400 the 30 % level is within the noise: the rare-level warning
        warnings.simplefilter("ignore", CovariateLawWarning)
        reference = model("infer")
    assert "x_sample_whitened" in reference
    assert not any("Gaussian law" in message for message in recorded_warnings(reference))

"""pSGLD step method: input checks, unbiased minibatch gradients, stationary moments, PyMC plumbing.

Stationary checks compare moments with their targets in units of the Monte Carlo standard error
(ESS from ArviZ of x and of (x − m)²) and allow 4 of them.  The paper's line-8 drift (twice ours)
must fail the same check: that is the evidence for the correction in SPEC §3.
"""

import arviz as az
import cloudpickle
import numpy as np
import pymc as pm
import pytest

from pm_private.sampling.psgld import PSGLD
from pm_private.sampling.sanitized import logistic_loss, sanitized_loss

CVM = {"mode": "CVM"}
Z_TOL = 4.0


def moment_z(draws, mean, var):
    """(mean − target)/MCSE and (variance about the target mean − target)/MCSE, per coordinate.

    ``draws`` has shape (chain, draw, ...); ``mean`` and ``var`` broadcast against the trailing axes.
    """
    x = np.asarray(draws, dtype=float)
    x = x.reshape(*x.shape[:2], -1)
    mean = np.broadcast_to(mean, x.shape[2:])
    var = np.broadcast_to(var, x.shape[2:])
    z_mean, z_var = [], []
    for j in range(x.shape[2]):
        xj = x[:, :, j]
        dev2 = (xj - mean[j]) ** 2
        z_mean.append((xj.mean() - mean[j]) / (xj.std() / np.sqrt(az.ess(xj, method="mean"))))
        z_var.append((dev2.mean() - var[j]) / (dev2.std() / np.sqrt(az.ess(dev2, method="mean"))))
    return np.array(z_mean), np.array(z_var)


def agreement_z(draws, reference):
    """Differences of mean and variance between two samples in units of their joint MCSE."""
    out = []
    for sample in (draws, reference):
        x = np.asarray(sample, dtype=float)
        x = x.reshape(*x.shape[:2], -1)
        m = x.mean(axis=(0, 1))
        dev2 = (x - m) ** 2
        ess_m = np.array([az.ess(x[:, :, j], method="mean") for j in range(x.shape[2])])
        ess_v = np.array([az.ess(dev2[:, :, j], method="mean") for j in range(x.shape[2])])
        out.append(
            (m, x.std(axis=(0, 1)) / np.sqrt(ess_m), dev2.mean(axis=(0, 1)), dev2.std(axis=(0, 1)) / np.sqrt(ess_v))
        )
    (m1, sm1, v1, sv1), (m2, sm2, v2, sv2) = out
    return (m1 - m2) / np.hypot(sm1, sm2), (v1 - v2) / np.hypot(sv1, sv2)


class PaperLine8(PSGLD):
    """Paper 000 Alg. 4 line 8 as printed: drift h·G·ḡ with noise N(0, h·G)."""

    def _move(self, q, grad, precond, h, noise):
        return q + h * precond * grad + np.sqrt(h * precond) * noise


def logistic_data(n, d, seed):
    rng = np.random.default_rng(seed)
    X = np.column_stack([np.ones(n), rng.normal(size=(n, d - 1))])
    beta = np.linspace(-1.0, 1.0, d)
    y = np.where(rng.random(n) < 1 / (1 + np.exp(-X @ beta)), 1.0, -1.0)
    return X, y


# ---------------------------------------------------------------- input checks (no compilation)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"mu": 1.0}, "mu"),
        ({"mu": -0.1}, "mu"),
        ({"lam": 0.0}, "lam"),
        ({"a": 0.0}, "a must"),
        ({"b": -1.0}, "b must"),
        ({"tau": -0.5}, "tau"),
        ({"thin": 0}, "thin"),
        ({"thin": 2.5}, "thin"),
        ({"batch_size": 10}, "batch_size applies"),
    ],
)
def test_bad_arguments(kwargs, match):
    with pm.Model():
        pm.Normal("x")
        with pytest.raises(ValueError, match=match):
            PSGLD(**kwargs)


@pytest.mark.parametrize("k", [0, 51])
def test_batch_size_outside_1_to_n(k):
    X, y = logistic_data(50, 2, 0)
    with pm.Model():
        f = pm.Flat("f", shape=2)
        sanitized_loss("U", logistic_loss, f, (X, y), epsilon=1.0)
        with pytest.raises(ValueError, match="batch_size must be an integer in"):
            PSGLD(batch_size=k)


def test_discrete_variable_refused():
    with pm.Model():
        pm.Normal("x")
        n = pm.Poisson("n", 3.0)
        with pytest.raises(ValueError, match="continuous variables only.*'n'"):
            PSGLD([n])


# ---------------------------------------------------------------- minibatch gradients


def test_compiled_minibatch_indices_are_uniform_distinct_subsets():
    """Floyd's algorithm in the compiled loop: k distinct indices, every k-subset equally likely."""
    from itertools import combinations

    from scipy import stats

    from pm_private.sampling.psgld import _distinct_indices

    rng, mark = np.random.default_rng(0), np.zeros(6, dtype=np.bool_)
    subsets = {s: i for i, s in enumerate(combinations(range(6), 3))}
    counts = np.zeros(len(subsets))
    for _ in range(20_000):
        idx = _distinct_indices(rng, 6, 3, mark)
        assert len(set(idx.tolist())) == 3 and not mark.any()
        counts[subsets[tuple(sorted(idx.tolist()))]] += 1
    assert stats.chisquare(counts).pvalue > 1e-3
    assert sorted(_distinct_indices(rng, 6, 6, mark).tolist()) == list(range(6))


@pytest.mark.slow
def test_sanitized_minibatch_gradient_is_unbiased_and_prior_is_not_scaled():
    X, y = logistic_data(60, 3, 1)
    q = np.array([0.3, -0.5, 0.8])
    with pm.Model():
        f = pm.Normal("f", 0.0, 2.0, shape=3)  # a prior on top of the regulariser: neither is scaled
        sanitized_loss("U", logistic_loss, f, (X, y), epsilon=2.0)
        full = PSGLD(batch_size=60, compile_kwargs=CVM)
        small = PSGLD(batch_size=7, compile_kwargs=CVM)
    logp, grad = full._fn(q, np.arange(60))
    # k = n is the full gradient whatever the order of the records
    perm = np.random.default_rng(0).permutation(60)
    np.testing.assert_allclose(full._fn(q, perm)[1], grad, rtol=1e-12)

    rng = np.random.default_rng(1)
    draws = np.array([small._fn(q, rng.choice(60, 7, replace=False))[1] for _ in range(4000)])
    se = draws.std(axis=0) / np.sqrt(len(draws))
    assert np.all(np.abs(draws.mean(axis=0) - grad) < 4 * se)
    assert np.all(draws.std(axis=0) > 0)


@pytest.mark.slow
def test_identical_records_give_the_exact_gradient_for_any_batch():
    # n/k·Σ_batch = Σ_all exactly when all records are equal; a scaled regulariser would differ.
    X = np.tile([[1.0, 0.5]], (40, 1))
    y = np.ones(40)
    q = np.array([0.2, -1.0])
    with pm.Model() as model:
        f = pm.Flat("f", shape=2)
        sanitized_loss("U", logistic_loss, f, (X, y), epsilon=1.0)
        step = PSGLD(batch_size=3, compile_kwargs=CVM)
    exact = model.compile_dlogp(mode="FAST_COMPILE")({"f": q})
    np.testing.assert_allclose(step._fn(q, np.array([4, 17, 30]))[1], exact, rtol=1e-12)


@pytest.mark.slow
def test_pm_minibatch_gradient_refreshes_every_call_and_is_unbiased():
    X, y01 = logistic_data(80, 2, 2)
    y01 = (y01 > 0).astype(float)
    q = np.array([0.4, -0.2])
    with pm.Model() as full_model:
        beta = pm.Normal("beta", 0.0, 1.0, shape=2)
        pm.Bernoulli("y", logit_p=X @ beta, observed=y01)
    exact = full_model.compile_dlogp(mode="FAST_COMPILE")({"beta": q})
    with pm.Model():
        beta = pm.Normal("beta", 0.0, 1.0, shape=2)
        Xb, yb = pm.Minibatch(X, y01, batch_size=10)
        pm.Bernoulli("y", logit_p=Xb @ beta, observed=yb, total_size=80)
        step = PSGLD(compile_kwargs=CVM)
    draws = np.array([step._fn(q)[1] for _ in range(4000)])
    assert np.unique(draws[:, 0]).size > 100  # a new minibatch on every call
    # the minibatches are not seeded: 6.1 standard errors fail a correct gradient once in 10⁹ runs
    se = draws.std(axis=0) / np.sqrt(len(draws))
    assert np.all(np.abs(draws.mean(axis=0) - exact) < 6.1 * se)


# ---------------------------------------------------------------- stationary moments


@pytest.mark.slow
def test_defaults_reproduce_a_standard_normal():
    with pm.Model():
        pm.Normal("x", 0.0, 1.0)
        idata = pm.sample(draws=10_000, chains=2, cores=1, step=PSGLD(), random_seed=11, progressbar=False)
    z_mean, z_var = moment_z(idata.posterior["x"], 0.0, 1.0)
    assert np.all(np.abs(z_mean) < Z_TOL) and np.all(np.abs(z_var) < Z_TOL), (z_mean, z_var)


@pytest.mark.slow
def test_paper_line8_drift_halves_the_variance():
    with pm.Model():
        pm.Normal("x", 0.0, 1.0)
        idata = pm.sample(
            draws=10_000, chains=2, cores=1, step=PaperLine8(compile_kwargs=CVM), random_seed=11, progressbar=False
        )
    x = idata.posterior["x"]
    _, z_var = moment_z(x, 0.0, 1.0)
    assert z_var[0] < -10  # the stationary check above rejects it by far
    _, z_half = moment_z(x, 0.0, 0.5)  # it samples exp(2·log p) = N(0, 1/2)
    assert abs(z_half[0]) < Z_TOL


@pytest.mark.slow
def test_correlated_gaussian_mean_and_covariance():
    mean = np.array([1.0, -2.0])
    cov = np.array([[1.0, 0.6], [0.6, 2.0]])
    with pm.Model():
        pm.MvNormal("x", mean, cov)
        idata = pm.sample(
            draws=20_000, chains=2, cores=1, step=PSGLD(compile_kwargs=CVM), random_seed=3, progressbar=False
        )
    x = idata.posterior["x"].values
    z_mean, z_var = moment_z(x, mean, np.diag(cov))
    z_cov, _ = moment_z(((x[..., 0] - mean[0]) * (x[..., 1] - mean[1]))[..., None], cov[0, 1], 1.0)
    assert np.all(np.abs(np.r_[z_mean, z_var, z_cov]) < Z_TOL), (z_mean, z_var, z_cov)


@pytest.mark.slow
def test_logistic_regression_with_pm_minibatch_matches_nuts():
    n = 500
    X, y = logistic_data(n, 3, 5)
    y01 = (y > 0).astype(float)
    with pm.Model():
        beta = pm.Normal("beta", 0.0, 2.0, shape=3)
        pm.Bernoulli("y", logit_p=X @ beta, observed=y01)
        nuts = pm.sample(draws=2000, chains=2, cores=1, random_seed=1, progressbar=False, compile_kwargs=CVM)
    with pm.Model():
        beta = pm.Normal("beta", 0.0, 2.0, shape=3)
        Xb, yb = pm.Minibatch(X, y01, batch_size=100)
        pm.Bernoulli("y", logit_p=Xb @ beta, observed=yb, total_size=n)
        step = PSGLD(a=0.1, thin=10, compile_kwargs=CVM)
        idata = pm.sample(draws=5000, tune=500, chains=2, cores=1, step=step, random_seed=2, progressbar=False)
    z_mean, z_var = agreement_z(idata.posterior["beta"], nuts.posterior["beta"])
    assert np.all(np.abs(np.r_[z_mean, z_var]) < Z_TOL), (z_mean, z_var)


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["CVM", "NUMBA"])
def test_sanitized_logistic_regression_matches_nuts_and_keeps_records_out(mode):
    X, y = logistic_data(400, 3, 6)

    def model():
        with pm.Model() as m:
            f = pm.Flat("f", shape=3)
            sanitized_loss("U", logistic_loss, f, (X, y), epsilon=4.0)
        return m

    with model():
        nuts = pm.sample(draws=2000, chains=2, cores=1, random_seed=1, progressbar=False, compile_kwargs=CVM)
    with model():
        step = PSGLD(a=0.3, thin=5, batch_size=50, compile_kwargs={"mode": mode})
        idata = pm.sample(draws=5000, tune=500, chains=2, cores=1, step=step, random_seed=2, progressbar=False)
    z_mean, z_var = agreement_z(idata.posterior["f"], nuts.posterior["f"])
    assert np.all(np.abs(np.r_[z_mean, z_var]) < Z_TOL), (z_mean, z_var)
    stored = [np.asarray(v) for node in idata.subtree for v in node.data_vars.values()]
    assert not any(a.shape[:1] == (400,) for a in stored)  # no record array in the release


# ---------------------------------------------------------------- PyMC plumbing


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["CVM", "NUMBA"])
def test_thinning_counts_updates_and_stats_reach_sample_stats(mode):
    with pm.Model():
        pm.Normal("x", 0.0, 1.0, shape=3)
        step = PSGLD(thin=7, record_loss=True, compile_kwargs={"mode": mode})
        assert (step._updates is not None) == (mode == "NUMBA")  # the compiled loop with Numba only
        idata = pm.sample(draws=40, tune=10, chains=1, cores=1, step=step, random_seed=0, progressbar=False)
    assert idata.posterior["x"].shape == (1, 40, 3)
    assert step.t == (10 + 40) * 7
    stats = idata.sample_stats
    np.testing.assert_allclose(stats["step_size"][0, -1], step.a * (step.b + step.t) ** -step.tau)
    assert {"precond_min", "precond_max", "minibatch_loss"} <= set(stats.data_vars)
    # the preconditioner is frozen while sampling
    assert np.ptp(stats["precond_min"].values) == 0 and np.ptp(stats["precond_max"].values) == 0
    assert np.all(np.isfinite(az.ess(idata)["x"].values))


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["CVM", "NUMBA"])
def test_default_stats_are_data_independent(mode):
    """Default sample stats (and progress-bar fields) depend on the settings only: two
    neighbouring data sets give identical stats with batch_size=1; record_loss=True opts in."""
    X, y = logistic_data(30, 2, 3)
    stats = []
    for flip in (False, True):
        y_ = y.copy()
        y_[0] = -y_[0] if flip else y_[0]
        with pm.Model():
            f = pm.Flat("f", shape=2)
            sanitized_loss("U", logistic_loss, f, (X, y_), epsilon=1.0)
            step = PSGLD(batch_size=1, thin=3, compile_kwargs={"mode": mode})
            idata = pm.sample(draws=20, tune=5, chains=1, cores=1, step=step, random_seed=4, progressbar=False)
        stats.append(idata.sample_stats)
    assert "step_size" in stats[0].data_vars and set(stats[0].data_vars) <= {"step_size", "tune"}
    for name in stats[0].data_vars:
        np.testing.assert_array_equal(stats[0][name].values, stats[1][name].values)
    columns, fields = step._progressbar_config(1)
    assert set(fields) == {"step_size"} and len(columns) == 1
    with pm.Model():
        f = pm.Flat("f", shape=2)
        sanitized_loss("U", logistic_loss, f, (X, y), epsilon=1.0)
        step = PSGLD(batch_size=1, record_loss=True, compile_kwargs={"mode": mode})
        idata = pm.sample(draws=5, tune=1, chains=1, cores=1, step=step, random_seed=4, progressbar=False)
    assert {"minibatch_loss", "precond_min", "precond_max"} <= set(idata.sample_stats.data_vars)
    assert "minibatch_loss" in step._progressbar_config(1)[1]
    with pm.Model():
        pm.Normal("x")
        with pytest.raises(TypeError, match="record_loss"):
            PSGLD(record_loss="yes")


@pytest.mark.slow
def test_running_preconditioner_keeps_adapting():
    with pm.Model():
        pm.Normal("x", 0.0, 1.0)
        step = PSGLD(freeze_preconditioner=False, record_loss=True, compile_kwargs=CVM)
        idata = pm.sample(draws=50, tune=10, chains=1, cores=1, step=step, random_seed=0, progressbar=False)
    assert np.ptp(idata.sample_stats["precond_min"].values) > 0


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["CVM", "NUMBA"])
def test_reproducible_over_processes_with_progress_bar(mode):
    X, y = logistic_data(100, 2, 7)
    with pm.Model():
        f = pm.Flat("f", shape=2)
        sanitized_loss("U", logistic_loss, f, (X, y), epsilon=2.0)
        runs = [
            pm.sample(
                draws=100,
                tune=50,
                chains=2,
                cores=2,
                random_seed=seed,
                progressbar=True,
                step=PSGLD(batch_size=10, thin=3, compile_kwargs={"mode": mode}),
            )
            .posterior["f"]
            .values
            for seed in (5, 5, 6)
        ]
    assert np.array_equal(runs[0], runs[1])
    assert not np.array_equal(runs[0], runs[2])
    assert not np.array_equal(runs[0][0], runs[0][1])


@pytest.mark.slow
def test_pm_minibatch_generator_is_reseeded_per_chain_after_pickling():
    X, y = logistic_data(50, 2, 8)
    with pm.Model():
        beta = pm.Normal("beta", shape=2)
        Xb, yb = pm.Minibatch(X, (y > 0).astype(float), batch_size=5)
        pm.Bernoulli("y", logit_p=Xb @ beta, observed=yb, total_size=50)
        step = cloudpickle.loads(cloudpickle.dumps(PSGLD(compile_kwargs=CVM)))
    q = np.zeros(2)

    def first_gradient(seed):
        step.setup_chain(np.random.default_rng(seed), tune=0, draws=1)
        return step._fn(q)[1]

    np.testing.assert_array_equal(first_gradient(1), first_gradient(1))
    assert not np.array_equal(first_gradient(1), first_gradient(2))

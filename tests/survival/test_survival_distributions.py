"""WeibullSurvival and DiscreteTimeHazard as PyMC distributions, and the logit Op in both backends.

- random draws follow the likelihood's own simulator (KS and χ² tests against simulate_weibull
  and simulate_discrete_time);
- the logp is per record and equals the NumPy losses; log-likelihood per record, LOO, posterior
  predictive after pm.set_data (new records, new n);
- pm.Minibatch with total_size: minibatch ADVI agrees with full-data ADVI within Monte Carlo error;
- the logit Op runs natively in Numba (no object-mode fallback) with the C backend's values, and
  refuses inconsistent lengths and out-of-range intervals or events instead of reading out of bounds.
"""

import warnings

import arviz as az
import numpy as np
import pymc as pm
import pytensor
import pytensor.tensor as pt
import pytest
from scipy import stats

from pm_private.survival import (
    DiscreteTimeHazard,
    WeibullSurvival,
    discrete_time_model,
    hazard_record_loss,
    record_loss_numpy,
    simulate_discrete_time,
    simulate_weibull,
    weibull_logp,
    weibull_model,
)

ALPHA = np.array([-3.0, 1.0, -0.5])
BETA = np.array([1.0, -0.5, 0.3])
Q = 15
CVM = {"mode": "CVM"}


# ---------------------------------------------------------------- random draws vs the simulators


def test_weibull_draws_match_the_simulator():
    n, shape, scale, horizon = 4000, 1.5, 2.0, 3.0
    draws = pm.draw(WeibullSurvival.dist(shape, scale, censoring=horizon, size=n), random_seed=1)
    sim = simulate_weibull(n, shape=shape, scale=scale, horizon=horizon, rng=2)
    assert draws.shape == (n, 2) and set(np.unique(draws[:, 1])) == {0.0, 1.0}
    assert stats.ks_2samp(draws[:, 0], sim.time).pvalue > 1e-3
    table = [[draws[:, 1].sum(), n - draws[:, 1].sum()], [sim.event.sum(), n - sim.event.sum()]]
    assert stats.chi2_contingency(table).pvalue > 1e-3
    assert (draws[draws[:, 1] == 0, 0] == horizon).all()  # censored exactly at the public horizon
    # a wrong shape is detected by the same test (power check)
    other = simulate_weibull(n, shape=1.2, scale=scale, horizon=horizon, rng=3)
    assert stats.ks_2samp(draws[:, 0], other.time).pvalue < 1e-3


def test_discrete_time_draws_match_the_simulator():
    sim = simulate_discrete_time(4000, alpha=ALPHA, beta=BETA, q=Q, censoring=0.0, rng=4)
    data = sim.data
    dist = DiscreteTimeHazard.dist(data.basis @ ALPHA, data.X @ BETA)
    draws = pm.draw(dist, random_seed=5)
    assert draws.shape == (data.n, 2) and draws.dtype == np.int32
    # same records (X), independent draws: the intervals and events follow one distribution
    observed = np.bincount(data.interval * 2 + data.event, minlength=2 * Q)
    drawn = np.bincount(draws[:, 0] * 2 + draws[:, 1], minlength=2 * Q)
    keep = (observed + drawn) > 0
    assert stats.chi2_contingency(np.array([observed[keep], drawn[keep]])).pvalue > 1e-3
    assert stats.ks_2samp(draws[:, 0], data.interval).pvalue > 1e-3
    shifted = pm.draw(DiscreteTimeHazard.dist(data.basis @ ALPHA + 0.3, data.X @ BETA), random_seed=5)
    assert stats.ks_2samp(shifted[:, 0], data.interval).pvalue < 1e-3  # power check
    # public censoring interval: nobody is followed beyond it
    capped = pm.draw(DiscreteTimeHazard.dist(data.basis @ ALPHA, data.X @ BETA, censoring=5), random_seed=6)
    assert capped[:, 0].max() == 5 and (capped[capped[:, 0] == 5, 1] == 0).any()


@pytest.mark.parametrize("link", ["logit", "cloglog", "probit"])
def test_discrete_time_logp_is_per_record(link):
    sim = simulate_discrete_time(60, alpha=ALPHA, beta=BETA, q=Q, link=link, rng=7)
    data = sim.data
    f = np.r_[ALPHA, BETA] + 0.1
    value = np.column_stack([data.interval, data.event])
    logp = pm.logp(DiscreteTimeHazard.dist(data.basis @ f[:3], data.X @ f[3:], link=link), value).eval(
        mode="FAST_COMPILE"
    )
    np.testing.assert_allclose(logp, -record_loss_numpy(f, data, link), rtol=1e-10)


def test_weibull_logp_is_per_record_and_checks_observed():
    sim = simulate_weibull(50, shape=1.3, scale=2.0, censor=(0.5, 4.0), rng=8)
    value = np.column_stack([sim.time, sim.event])
    logp = pm.logp(WeibullSurvival.dist(1.3, 2.0), value).eval(mode="FAST_COMPILE")
    expected = np.where(
        sim.event == 1,
        stats.weibull_min(1.3, scale=2.0).logpdf(sim.time),
        stats.weibull_min(1.3, scale=2.0).logsf(sim.time),
    )
    np.testing.assert_allclose(logp, expected, rtol=1e-10)
    np.testing.assert_allclose(
        weibull_logp(sim.time, sim.event, 1.3, 2.0).eval(mode="FAST_COMPILE"), expected, rtol=1e-10
    )
    with pm.Model():
        with pytest.raises(ValueError, match="event must be 0 or 1"):
            WeibullSurvival("t", 1.0, 1.0, observed=np.array([[1.0, 2.0]]))
        with pytest.raises(ValueError, match=r"\(n, 2\)"):
            WeibullSurvival("u", 1.0, 1.0, observed=np.array([1.0, 2.0]))
        with pytest.raises(ValueError, match="alpha"):
            WeibullSurvival("v", beta=2.0, observed=np.column_stack([sim.time, sim.event]))
        # the keyword form every PyMC user types, as pm.Weibull("t", alpha=…, beta=…)
        keyword = WeibullSurvival("w", alpha=1.3, beta=2.0, observed=np.column_stack([sim.time, sim.event]))
        assert str(keyword.owner.op).startswith("WeibullSurvival")
    np.testing.assert_allclose(pm.logp(keyword, value).eval(mode="FAST_COMPILE"), expected, rtol=1e-10)


# ---------------------------------------------------------------- LOO, set_data, posterior predictive


@pytest.mark.slow
def test_weibull_model_loo_and_prediction_after_set_data():
    sim = simulate_weibull(
        150,
        shape=1.4,
        scale=2.0,
        X=np.random.default_rng(9).normal(size=(150, 2)),
        beta=[0.5, -0.5],
        censor=(0.5, 5.0),
        rng=10,
    )
    model = weibull_model(sim.time, sim.event, sim.X, censoring=5.0)
    with model:
        idata = pm.sample(150, tune=200, chains=2, cores=1, random_seed=1, progressbar=False, compile_kwargs=CVM)
        pm.compute_log_likelihood(idata, progressbar=False, compile_kwargs=CVM)
        assert idata.log_likelihood["t"].shape == (2, 150, 150)
        loo = az.loo(idata)
        assert np.isfinite(loo["elpd"]) and (np.asarray(loo.pareto_k) < 0.7).all()
        X_new = np.array([[2.0, 0.0], [-2.0, 0.0], [0.0, 0.0]])
        pm.set_data({"X": X_new, "survival": np.zeros((3, 2))}, coords={"record": range(3)})
        pred = pm.sample_posterior_predictive(idata, random_seed=2, progressbar=False, compile_kwargs=CVM)
    times = pred.posterior_predictive["t"].values[..., 0].reshape(-1, 3)
    assert times.shape[1] == 3 and times.max() <= 5.0
    # β₁ = 0.5 multiplies survival times by e^(0.5·x): record 0 outlives record 1 (AFT)
    assert np.median(times[:, 0]) > 2 * np.median(times[:, 1])


@pytest.mark.slow
def test_discrete_time_model_loo_and_prediction_after_set_data():
    sim = simulate_discrete_time(300, alpha=ALPHA, beta=BETA, q=Q, rng=11)
    with discrete_time_model(sim.data) as model:
        prior = pm.sample_prior_predictive(draws=20, random_seed=3, compile_kwargs=CVM)
        assert prior.prior_predictive["likelihood"].shape == (1, 20, 300, 2)
        idata = pm.sample(150, tune=200, chains=2, cores=1, random_seed=3, progressbar=False, compile_kwargs=CVM)
        pm.compute_log_likelihood(idata, progressbar=False, compile_kwargs=CVM)
        assert idata.log_likelihood["likelihood"].shape == (2, 150, 300)
        assert np.isfinite(az.loo(idata)["elpd"])
        X_new = np.array([[0.9, 0.0, 0.0], [-0.9, 0.0, 0.0]])
        pm.set_data({"X": X_new, "survival": np.zeros((2, 2), dtype=np.int32)}, coords={"record": range(2)})
        pred = pm.sample_posterior_predictive(idata, random_seed=4, progressbar=False, compile_kwargs=CVM)
    drawn = pred.posterior_predictive["likelihood"].values.reshape(-1, 2, 2)
    assert str(model["likelihood"].owner.op).startswith("DiscreteTimeHazard")
    # β₀ = 1 raises the hazard of record 0: it dies earlier
    assert drawn[:, 0, 0].mean() < drawn[:, 1, 0].mean() - 1.0


# ---------------------------------------------------------------- Minibatch ADVI


@pytest.mark.slow
def test_minibatch_advi_matches_full_data_advi():
    """Mean-field ADVI on all 2000 records vs on minibatches of 200 with total_size: the means agree
    within 4 Monte Carlo standard errors (spread of the minibatch fits over 4 seeds) plus 0.25
    posterior sd, and the sds within 25 %."""
    sim = simulate_discrete_time(2000, alpha=ALPHA, beta=BETA, q=Q, rng=12)
    data = sim.data
    value = np.column_stack([data.interval, data.event]).astype(np.int32)

    def fit(minibatch, seed):
        with pm.Model():
            alpha = pm.Normal("alpha", 0.0, 10.0, shape=3)
            beta = pm.Normal("beta", 0.0, 10.0, shape=3)
            if minibatch:
                X, obs = pm.Minibatch(data.X, value, batch_size=200)
                kwargs = {"total_size": data.n}
            else:
                X, obs, kwargs = data.X, value, {}
            DiscreteTimeHazard("y", pt.as_tensor(data.basis) @ alpha, X @ beta, observed=obs, **kwargs)
            approx = pm.fit(
                20_000 if minibatch else 10_000,
                method="advi",
                random_seed=seed,
                progressbar=False,
                obj_optimizer=pm.adam(learning_rate=0.01),
                compile_kwargs=CVM,
            )
        return np.r_[approx.mean.eval(), approx.std.eval()]

    full = fit(False, 0)
    mini = np.array([fit(True, seed) for seed in range(4)])
    d = 6
    mc_se = mini[:, :d].std(axis=0, ddof=1) / 2.0
    assert np.all(np.abs(mini[:, :d].mean(axis=0) - full[:d]) < 4 * mc_se + 0.25 * full[d:]), (mini.mean(axis=0), full)
    np.testing.assert_allclose(mini[:, d:].mean(axis=0), full[d:], rtol=0.25)


# ---------------------------------------------------------------- the logit Op in both backends


@pytest.mark.slow
def test_logit_op_runs_natively_in_numba_with_the_c_backend_values():
    gamma, eta, weight = pt.dvector("gamma"), pt.dvector("eta"), pt.dvector("w")
    interval, event = pt.lvector("k"), pt.bvector("d")
    loss = hazard_record_loss(gamma, eta, interval, event)
    outputs = [loss, *pytensor.grad((weight * loss).sum(), [gamma, eta])]
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # an object-mode fallback warns
        warnings.filterwarnings("ignore", message=".*BLAS.*")
        numba_fn = pytensor.function([gamma, eta, interval, event, weight], outputs, mode="NUMBA")
    c_fn = pytensor.function([gamma, eta, interval, event, weight], outputs, mode="CVM")
    rng = np.random.default_rng(13)
    n, q = 500, 40
    args = (
        rng.normal(-2, 3, q),
        rng.normal(0, 3, n),
        rng.integers(0, q, n),
        rng.integers(0, 2, n).astype(np.int8),
        rng.normal(size=n),
    )
    for a, b in zip(numba_fn(*args), c_fn(*args), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    # far outside the product range (|z| ≫ 350) the kernels fall back to the softplus sums
    extreme = (args[0] * 200, *args[1:])
    values = numba_fn(*extreme)
    assert all(np.isfinite(v).all() for v in values)
    for fn in (numba_fn, c_fn):
        with pytest.raises(ValueError, match="same length"):
            fn(args[0], args[1], args[2][:10], args[3], args[4])
        with pytest.raises(ValueError, match="interval must lie"):
            fn(args[0], args[1], args[2] + q, args[3], args[4])
        with pytest.raises(ValueError, match="event must be 0 or 1"):
            fn(args[0], args[1], args[2], np.full(n, 2, dtype=np.int8), args[4])


@pytest.mark.slow
def test_psgld_with_minibatch_discrete_time_covers_the_mle():
    """PSGLD on pm.Minibatch records with total_size: the posterior mean lies within 4 posterior
    sds (Laplace, inverse Hessian at the MLE) of the MLE of all the records."""
    from pm_private import PSGLD
    from pm_private.survival import fit_discrete_time, loss_and_grad

    sim = simulate_discrete_time(2000, alpha=ALPHA, beta=BETA, q=Q, rng=14)
    data = sim.data
    value = np.column_stack([data.interval, data.event]).astype(np.int32)
    with pm.Model():
        f = pm.Flat("f", shape=6)
        X, obs = pm.Minibatch(data.X, value, batch_size=100)
        DiscreteTimeHazard("y", pt.as_tensor(data.basis) @ f[:3], X @ f[3:], observed=obs, total_size=data.n)
        step = PSGLD(a=0.05, thin=10, compile_kwargs=CVM)
        idata = pm.sample(
            draws=1000,
            tune=200,
            chains=1,
            cores=1,
            step=step,
            random_seed=5,
            progressbar=False,
            initvals={"f": np.r_[ALPHA, BETA]},
        )
    fit = fit_discrete_time(data)
    _, _, hess = loss_and_grad(fit.f, data, hessian=True)
    sd = np.sqrt(np.diag(np.linalg.inv(hess)) / data.n)
    mean = idata.posterior["f"].values.reshape(-1, 6).mean(axis=0)
    assert np.all(np.abs(mean - fit.f) < 4 * sd), (mean, fit.f, sd)

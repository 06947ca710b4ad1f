"""Censored Weibull likelihood, MLE and generator (Nguyên & Hui 2017b, §III)."""

import numpy as np
import pandas as pd
import pymc as pm
import pytest
from lifelines import WeibullAFTFitter, WeibullFitter

from pm_private.datasets.flchain import load_flchain
from pm_private.survival.weibull.fit import weibull_mle
from pm_private.survival.weibull.likelihood import WeibullSurvival, weibull_model
from pm_private.survival.weibull.simulate import simulate_weibull

CVM = {"mode": "CVM"}


@pytest.fixture(scope="module")
def flchain():
    ds = load_flchain()
    return np.maximum(ds.time, 1.0), ds.event  # 3 records have futime 0; ln t needs t > 0


@pytest.fixture(scope="module")
def aft_data():
    rng = np.random.default_rng(7)
    X = pd.DataFrame({"a": rng.normal(size=400), "b": rng.uniform(-1, 1, size=400)})
    return simulate_weibull(400, shape=1.4, scale=2.0, X=X, beta=[0.5, -0.8], censor=(0.5, 6.0), rng=8)


def test_mle_matches_lifelines_on_flchain(flchain):
    t, d = flchain
    mle = weibull_mle(t, d)
    ref = WeibullFitter().fit(t, d)
    assert mle.shape == pytest.approx(ref.rho_, rel=1e-4)
    assert mle.scale == pytest.approx(ref.lambda_, rel=1e-4)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_mle_matches_lifelines_on_synthetic(seed):
    sim = simulate_weibull(3000, shape=[0.6, 1.0, 3.0][seed], scale=5.0, censor=(1.0, 12.0), rng=seed)
    mle = weibull_mle(sim.time, sim.event)
    ref = WeibullFitter().fit(sim.time, sim.event)
    assert mle.shape == pytest.approx(ref.rho_, rel=1e-4)
    assert mle.scale == pytest.approx(ref.lambda_, rel=1e-4)


def test_mle_solves_equations_4_and_5_and_is_unit_free():
    sim = simulate_weibull(500, shape=1.7, scale=3.0, censor=(0.0, 5.0), rng=3)
    t, d = sim.time, sim.event
    p, lam = weibull_mle(t, d)
    w = t**p
    assert (w * np.log(t)).sum() / w.sum() == pytest.approx(1 / p + (d * np.log(t)).sum() / d.sum(), abs=1e-12)
    assert lam**p == pytest.approx(w.sum() / d.sum(), rel=1e-12)
    p2, lam2 = weibull_mle(1000 * t, d)
    assert p2 == pytest.approx(p, rel=1e-12) and lam2 == pytest.approx(1000 * lam, rel=1e-12)


def test_simulated_parameters_are_recovered_by_the_mle():
    sim = simulate_weibull(40_000, shape=1.3, scale=2.0, censor=(0.5, 3.0), horizon=2.5, rng=11)
    assert 0.2 < 1 - sim.event.mean() < 0.8 and sim.time.max() <= 2.5
    p, lam = weibull_mle(sim.time, sim.event)
    assert p == pytest.approx(1.3, rel=0.03) and lam == pytest.approx(2.0, rel=0.03)


@pytest.mark.parametrize(
    "time, event, match",
    [
        ([1.0, np.nan], [1, 0], "NaN"),
        ([1.0, -2.0], [1, 0], "≥ 0"),
        ([1.0, 2.0], [1, 2], "0 or 1"),
        ([1.0, 0.0], [1, 1], "> 0"),
        ([1.0, 2.0], [0, 0], "no events"),
        ([1.0, 2.0, 2.0], [0, 1, 1], "no finite root"),
    ],
)
def test_mle_rejects_bad_or_degenerate_input(time, event, match):
    with pytest.raises(ValueError, match=match):
        weibull_mle(time, event)


def test_simulate_weibull_validates():
    with pytest.raises(ValueError, match="n must"):
        simulate_weibull(0, shape=1, scale=1)
    with pytest.raises(ValueError, match="shape"):
        simulate_weibull(5, shape=-1, scale=1)
    with pytest.raises(ValueError, match="beta"):
        simulate_weibull(5, shape=1, scale=1, X=np.ones((5, 2)))


def _censored_model(t, d, X, p, b0, beta):
    upper = np.where(d == 1, np.inf, t)
    with pm.Model() as model:
        pm.Censored("t", pm.Weibull.dist(alpha=p, beta=np.exp(b0 + X @ beta)), lower=None, upper=upper, observed=t)
    return model


@pytest.mark.slow
def test_logp_equals_pm_censored_weibull(aft_data):
    t, d, X = aft_data.time, aft_data.event, aft_data.X.to_numpy()
    for p, b0, beta in [(1.4, 0.7, [0.5, -0.8]), (0.6, -0.3, [1.0, 0.2]), (3.0, 1.5, [0.0, 0.0])]:
        p = np.float64(p)  # a Python float would become a float32 constant in PyTensor
        with pm.Model() as ours:
            WeibullSurvival("t", p, np.exp(b0 + X @ np.array(beta)), observed=np.column_stack([t, d]))
        ref = _censored_model(t, d, X, p, b0, np.array(beta))
        ours_logp = ours.compile_logp(sum=False, mode="FAST_COMPILE")({})[0]
        ref_logp = ref.compile_logp(sum=False, mode="FAST_COMPILE")({})[0]
        np.testing.assert_allclose(ours_logp, ref_logp, rtol=1e-12, atol=1e-12)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:The optimizer did not converge:UserWarning")
def test_aft_map_with_flat_priors_matches_lifelines(aft_data):
    t, d, X = aft_data.time, aft_data.event, aft_data.X
    with pm.Model():
        log_p = pm.Flat("log_p")
        b0 = pm.Flat("b0")
        beta = pm.Flat("beta", shape=2)
        WeibullSurvival(
            "t", pm.math.exp(log_p), pm.math.exp(b0 + X.to_numpy() @ beta), observed=np.column_stack([t, d])
        )
        mle = pm.find_MAP(
            method="BFGS",
            jitter=False,
            return_inferencedata=False,
            progressbar=False,
            compile_kwargs=CVM,
            options={"gtol": 1e-10},
        )
    frame = X.assign(T=t, E=d)
    ref = WeibullAFTFitter().fit(frame, "T", "E").params_
    assert np.exp(mle["log_p"]) == pytest.approx(np.exp(ref[("rho_", "Intercept")]), rel=1e-4)
    assert mle["b0"] == pytest.approx(ref[("lambda_", "Intercept")], rel=1e-4)
    np.testing.assert_allclose(mle["beta"], [ref[("lambda_", "a")], ref[("lambda_", "b")]], rtol=1e-4)


@pytest.mark.slow
def test_nuts_posterior_covers_the_truth(aft_data):
    import arviz as az

    model = weibull_model(aft_data.time, aft_data.event, aft_data.X)
    with model:
        idata = pm.sample(400, tune=400, chains=2, cores=1, random_seed=5, progressbar=False, compile_kwargs=CVM)
    summary = az.summary(idata, var_names=["p", "intercept", "beta"], ci_prob=0.99)
    assert (summary["r_hat"] < 1.02).all()
    truth = [1.4, np.log(2.0), 0.5, -0.8]
    low, high = summary.filter(like="eti").to_numpy(dtype=float).T
    assert ((low <= truth) & (truth <= high)).all(), summary

"""Tests of the discrete-time hazard likelihood (Nguyên & Hui 2017a, §3).

What is checked:

- PyTensor :func:`record_loss` equals the NumPy :func:`record_loss_numpy` record by record, for
  all three links, also on a minibatch and at extreme linear predictors (|z| up to 40);
- gradients: PyTensor's symbolic gradient = NumPy's analytic one = central finite differences;
  the analytic Hessian = finite differences of the gradient; per-record gradients average to the
  mean gradient;
- agreement with a Binomial GLM (statsmodels, matching link) fitted on the explicitly expanded
  person-period table: log-likelihood and MLE to 1e-6, for logit, cloglog and probit, with the
  spline baseline and with free per-interval effects (identity basis);
- the compiled graph holds X and at most an (n, q) boolean mask, no person-period table;
- the PyMC term: model log-density = priors − Σℓ; NUTS on simulated data covers the true
  parameters (parameter recovery), and the simulator's MLE is within 4 standard errors of it;
- bad input raises ValueError.
"""

import numpy as np
import pymc as pm
import pytensor
import pytensor.tensor as pt
import pytest
import statsmodels.api as sm
from pytensor.graph.basic import Constant
from pytensor.graph.traversal import graph_inputs
from scipy import stats

from pm_private.survival import (
    LINKS,
    DiscreteTimeData,
    DiscreteTimeHazard,
    discrete_time_model,
    expand_person_period,
    fit_discrete_time,
    interval_basis,
    loss_and_grad,
    record_grad_numpy,
    record_loss,
    record_loss_numpy,
    simulate_discrete_time,
)

C_BACKEND = {"mode": "CVM"}
ALPHA = np.array([-3.0, 1.0, -0.5])
BETA = np.array([1.0, -0.5, 0.3])
Q = 15


@pytest.fixture(scope="module")
def sim():
    return simulate_discrete_time(400, alpha=ALPHA, beta=BETA, q=Q, rng=3)


@pytest.fixture(scope="module")
def compiled():
    """One compiled (losses, gradient of the mean) function per link, symbolic in data and basis."""
    f, X, basis, weight = pt.dvector("f"), pt.dmatrix("X"), pt.dmatrix("basis"), pt.dvector("weight")
    interval, event = pt.lvector("interval"), pt.bvector("event")
    out = {}
    for link in LINKS:
        losses = record_loss(f, X, interval, event, basis, link)
        fn = pytensor.function(
            [f, X, interval, event, basis, weight],
            [losses, pytensor.grad((weight * losses).sum(), f)],
            on_unused_input="ignore",
            **C_BACKEND,
        )
        # losses and the gradient of their mean; ``weight`` gives Σᵢ wᵢ∇ℓᵢ (as a sanitized loss needs)
        out[link] = lambda f_, X_, k_, d_, A_, w_=None, fn=fn: fn(
            f_, X_, k_, d_, A_, np.full(len(k_), 1 / len(k_)) if w_ is None else w_
        )
    return out


def _point(seed=0):
    return np.array([-2.5, 0.8, -0.3, 0.7, -0.2, 0.4]) + 0.1 * np.random.default_rng(seed).standard_normal(6)


@pytest.mark.slow
@pytest.mark.parametrize("link", LINKS)
def test_pytensor_equals_numpy(sim, compiled, link):
    data, f = sim.data, _point()
    losses, grad = compiled[link](f, data.X, data.interval, data.event, data.basis)
    np.testing.assert_allclose(losses, record_loss_numpy(f, data, link), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(grad, loss_and_grad(f, data, link)[1], rtol=1e-10, atol=1e-13)
    assert (losses >= 0).all()
    batch = np.array([5, 0, 399, 17])
    mini = data.subset(batch)
    np.testing.assert_allclose(compiled[link](f, mini.X, mini.interval, mini.event, mini.basis)[0], losses[batch])
    w = np.random.default_rng(1).uniform(-1, 2, data.n)
    weighted = compiled[link](f, data.X, data.interval, data.event, data.basis, w)[1]
    np.testing.assert_allclose(weighted, w @ record_grad_numpy(f, data, link), rtol=1e-10, atol=1e-12)
    with pytest.raises((ValueError, IndexError)):  # an interval ≥ q is refused, never read out of bounds
        compiled[link](f, data.X, np.r_[data.interval[:-1], Q], data.event, data.basis)


@pytest.mark.slow
@pytest.mark.parametrize("link", LINKS)
def test_extreme_linear_predictors_stay_finite(sim, compiled, link):
    data = sim.data
    for scale in (-40.0, 40.0):
        f = np.r_[scale, 0.0, 0.0, 0.0, 0.0, 0.0]
        losses, grad = compiled[link](f, data.X, data.interval, data.event, data.basis)
        expected = record_loss_numpy(f, data, link)
        assert np.isfinite(losses).all() and np.isfinite(grad).all()
        np.testing.assert_allclose(losses, expected, rtol=1e-9)


@pytest.mark.parametrize("link", LINKS)
def test_gradient_and_hessian_match_finite_differences(sim, link):
    data, f, h = sim.data, _point(1), 1e-6
    _, grad, hess = loss_and_grad(f, data, link, hessian=True)
    unit = np.eye(data.dim)
    fd_grad = np.array(
        [(loss_and_grad(f + h * u, data, link)[0] - loss_and_grad(f - h * u, data, link)[0]) / (2 * h) for u in unit]
    )
    fd_hess = np.array(
        [(loss_and_grad(f + h * u, data, link)[1] - loss_and_grad(f - h * u, data, link)[1]) / (2 * h) for u in unit]
    )
    np.testing.assert_allclose(grad, fd_grad, atol=1e-8)
    np.testing.assert_allclose(hess, fd_hess, atol=1e-7)
    np.testing.assert_allclose(hess, hess.T, atol=1e-14)
    np.testing.assert_allclose(record_grad_numpy(f, data, link).mean(axis=0), grad, atol=1e-14)
    np.testing.assert_allclose(record_loss_numpy(f, data, link).mean(), loss_and_grad(f, data, link)[0])


_SM_LINKS = {"logit": sm.families.links.Logit, "cloglog": sm.families.links.CLogLog, "probit": sm.families.links.Probit}


@pytest.mark.parametrize("link", LINKS)
@pytest.mark.parametrize("baseline", ["spline", "free"])
def test_agrees_with_glm_on_the_person_period_table(sim, link, baseline):
    data = (
        sim.data if baseline == "spline" else DiscreteTimeData(sim.data.X, sim.data.interval, sim.data.event, np.eye(Q))
    )
    design, response = expand_person_period(data)
    assert design.shape == ((data.interval + 1).sum(), data.dim)
    glm = sm.GLM(response, design, family=sm.families.Binomial(link=_SM_LINKS[link]())).fit(tol=1e-13, maxiter=100)
    fit = fit_discrete_time(data, link)
    assert fit.converged
    np.testing.assert_allclose(fit.f, glm.params, atol=1e-6)
    assert -data.n * fit.objective == pytest.approx(glm.llf, abs=1e-6)
    assert -record_loss_numpy(glm.params, data, link).sum() == pytest.approx(glm.llf, abs=1e-6)


@pytest.mark.slow
def test_graph_holds_no_person_period_table(sim):
    """The compiled logp+gradient holds X and at most an (n, q) boolean at-risk mask (PyTensor
    folds the comparison into a constant), never a float table of the person-period rows."""
    data = sim.data
    model = discrete_time_model(data)
    fn = model.compile_fn(
        [model.logp(), model.dlogp()], inputs=model.value_vars, on_unused_input="ignore", mode="FAST_COMPILE"
    )
    constants = []
    values = [v.data for v in graph_inputs(fn.f.maker.fgraph.outputs) if isinstance(v, Constant)]
    for value in values + [cell.storage[0] for cell in fn.f.input_storage]:  # constants and pm.Data
        if isinstance(value, np.ndarray) and not any(np.shares_memory(value, c) for c in constants):
            constants.append(value)  # a transposed view of X is not a copy
    held = sum(c.nbytes for c in constants)
    assert held <= data.X.nbytes + data.n * data.q + 10 * data.n + 4096  # X, mask, intervals, events
    assert all(c.dtype == bool or c.size <= data.n * data.d for c in constants)
    design, _ = expand_person_period(data)
    assert design.nbytes > 5 * (data.X.nbytes + data.n * data.q)
    assert np.isfinite(fn(model.initial_point())[0])


@pytest.mark.slow
def test_pymc_term_is_priors_minus_losses(sim):
    data = sim.data
    model = discrete_time_model(data, alpha_sigma=5.0, beta_sigma=2.0, feature_names=["a", "b", "c"])
    point = {"alpha": ALPHA + 0.1, "beta": BETA - 0.2}
    loss = record_loss_numpy(np.r_[point["alpha"], point["beta"]], data).sum()
    terms = model.compile_fn(
        model.logp(sum=False), inputs=model.value_vars, on_unused_input="ignore", mode="FAST_COMPILE"
    )(point)
    np.testing.assert_allclose(terms[-1], -record_loss_numpy(np.r_[point["alpha"], point["beta"]], data), rtol=1e-12)
    assert terms[-1].sum() == pytest.approx(-loss, rel=1e-13)  # the likelihood term, one value per record
    priors = stats.norm(0, 5).logpdf(point["alpha"]).sum() + stats.norm(0, 2).logpdf(point["beta"]).sum()
    assert model.compile_logp(mode="FAST_COMPILE")(point) == pytest.approx(priors - loss, rel=1e-9)
    # free per-interval baseline: γ_s as its own variable
    with pm.Model() as free:
        gamma = pm.Normal("gamma", -3.0, 2.0, shape=Q)
        beta = pm.Normal("beta", 0.0, 2.0, shape=3)
        DiscreteTimeHazard(
            "lik", gamma, data.X @ beta, link="cloglog", observed=np.column_stack([data.interval, data.event])
        )
    point = {"gamma": data.basis @ ALPHA, "beta": BETA}
    loss = record_loss_numpy(
        np.r_[point["gamma"], BETA], DiscreteTimeData(data.X, data.interval, data.event, np.eye(Q)), "cloglog"
    )
    expected = stats.norm(-3, 2).logpdf(point["gamma"]).sum() + stats.norm(0, 2).logpdf(BETA).sum() - loss.sum()
    assert free.compile_logp(mode="FAST_COMPILE")(point) == pytest.approx(expected, rel=1e-9)


@pytest.mark.slow
def test_nuts_recovers_the_true_parameters():
    sim = simulate_discrete_time(1500, alpha=ALPHA, beta=BETA, q=Q, rng=11)
    with discrete_time_model(sim.data):
        idata = pm.sample(400, tune=400, chains=2, cores=1, random_seed=5, progressbar=False, compile_kwargs=C_BACKEND)
    post = idata.posterior
    for name, truth in (("alpha", ALPHA), ("beta", BETA)):
        draws = post[name].values.reshape(-1, truth.size)
        lo, hi = np.quantile(draws, [0.005, 0.995], axis=0)
        assert ((lo <= truth) & (truth <= hi)).all(), (name, lo, hi, truth)


@pytest.mark.parametrize("link", LINKS)
def test_simulator_mle_is_consistent(link):
    """On 20 000 simulated records the MLE is within 4 standard errors (inverse Hessian) of the truth."""
    sim = simulate_discrete_time(20000, alpha=ALPHA, beta=BETA, q=Q, link=link, rng=2)
    fit = fit_discrete_time(sim.data, link)
    assert fit.converged
    _, _, hess = loss_and_grad(fit.f, sim.data, link, hessian=True)
    se = np.sqrt(np.diag(np.linalg.inv(hess)) / sim.data.n)
    z = (fit.f - np.r_[ALPHA, BETA]) / se
    assert np.abs(z).max() < 4, z
    assert se[3:].max() < 0.1
    assert sim.data.event.mean() > 0.1 and (sim.data.event == 0).any()
    np.testing.assert_array_equal(
        DiscreteTimeData.from_times(sim.data.X, sim.time, sim.data.event, q=Q).interval, sim.data.interval
    )


@pytest.mark.parametrize(
    "bad",
    [
        dict(X=np.full((2, 1), np.nan)),
        dict(X=np.zeros(2)),
        dict(interval=np.array([0, Q])),
        dict(interval=np.array([0.0, 1.0])),
        dict(event=np.array([0, 2])),
        dict(event=np.array([0])),
    ],
)
def test_bad_input(bad):
    args = {
        "X": np.zeros((2, 1)),
        "interval": np.array([0, 1]),
        "event": np.array([0, 1]),
        "basis": interval_basis(Q, 3),
        **bad,
    }
    with pytest.raises(ValueError):
        DiscreteTimeData(**args)


def test_bad_link_and_baseline(sim):
    with pytest.raises(ValueError, match="link"):
        record_loss_numpy(_point(), sim.data, "log")
    with pytest.raises(ValueError, match="length"):
        loss_and_grad(np.zeros(3), sim.data)
    with pm.Model(), pytest.raises(ValueError, match="needs baseline"):
        DiscreteTimeHazard("x", eta=np.zeros(3))
    with pm.Model(), pytest.raises(ValueError, match="link"):
        DiscreteTimeHazard("x", np.zeros(Q), link="log")
    with pm.Model(), pytest.raises(ValueError, match="baseline must be a vector"):
        DiscreteTimeHazard("x", np.zeros((2, Q)))
    with pm.Model(), pytest.raises(ValueError, match="observed events"):
        DiscreteTimeHazard("x", np.zeros(Q), observed=np.array([[1, 2]]))
    with pm.Model(), pytest.raises(ValueError, match=r"\(n, 2\)"):
        DiscreteTimeHazard("x", np.zeros(Q), observed=np.array([1, 0]))


def test_fit_refuses_baselines_without_an_mle(sim):
    """Free per-interval baseline: an interval without events, an empty risk set, or all at-risk
    records dying there has no finite MLE; a clear ValueError names the interval (l2 > 0 fits)."""
    d = sim.data
    free = DiscreteTimeData(d.X, d.interval, d.event, np.eye(Q))
    assert fit_discrete_time(free).converged
    no_events = d.event.copy()
    no_events[d.interval == 4] = 0
    with pytest.raises(ValueError, match="no events in interval 4"):
        fit_discrete_time(DiscreteTimeData(d.X, d.interval, no_events, np.eye(Q)))
    assert fit_discrete_time(DiscreteTimeData(d.X, d.interval, no_events, np.eye(Q)), l2=1e-2).converged
    with pytest.raises(ValueError, match=f"empty risk set: no record is at risk in interval {Q - 1}"):
        fit_discrete_time(DiscreteTimeData(d.X, np.minimum(d.interval, Q - 2), d.event, np.eye(Q)))
    all_die = d.event.copy()
    all_die[d.interval == Q - 1] = 1
    with pytest.raises(ValueError, match=f"every record at risk in interval {Q - 1}"):
        fit_discrete_time(DiscreteTimeData(d.X, d.interval, all_die, np.eye(Q)))
    with pytest.raises(ValueError, match="l2 must be"):
        fit_discrete_time(d, l2=-1.0)
    assert fit_discrete_time(DiscreteTimeData(d.X, d.interval, no_events, d.basis)).converged  # spline: fine


@pytest.mark.slow
def test_fl_model_script_runs(tmp_path):
    """models.discrete_time_survival end to end on 400 FL records with short chains."""
    import pandas as pd

    from models.discrete_time_survival import main

    main(["--n", "400", "--draws", "100", "--tune", "100", "--advi-steps", "200", "--out", str(tmp_path)])
    table = pd.read_csv(tmp_path / "coefficients.csv", index_col=0)
    assert list(table.index) == ["age", "sex", "sample_yr", "kappa", "lambda", "flc_grp", "creatinine", "mgus"]
    assert np.isfinite(table.to_numpy()).all()
    assert "Relative error" in (tmp_path / "report.txt").read_text()
    assert (tmp_path / "baseline.png").stat().st_size > 0

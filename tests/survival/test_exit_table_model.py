"""The survival models of an exit table, checked against what we did not write: brute-force
simulation of the continuous and discrete processes, SciPy's multivariate normal, NUTS recovery;
and the curves and medians read from a posterior."""

import warnings

import numpy as np
import pymc as pm
import pytest
import xarray as xr

from pm_private import predict_survival, release_survival_stats, survival_model
from pm_private.survival import median_survival, set_survival_stats, survival_function, survival_stats

EDGES = np.array([0.5, 1.0, 2.0, 3.0])
CELLS = ["control", "treated"]
N = 4000


def _fixed(model, **values):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pm.do(model, {k: np.asarray(v, dtype=float) for k, v in values.items()})


def _replicated_mean(model, draws=400):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pm.draw(model["likelihood"], draws, random_seed=1).mean(axis=0)


def test_exit_probabilities_of_the_piecewise_exponential_model_match_a_simulation():
    """Continuous times with piecewise-constant event and censoring hazards, simulated person by
    person, tabulated: the model's replicated table at the same parameters has the same mean."""
    rng = np.random.default_rng(1)
    ends = np.concatenate([[0.0], EDGES]) / EDGES[-1]  # the model's time scale u = t/τ
    log_rate, beta = np.array([0.2, 0.5, -0.1, 0.4]), 0.6
    censor = np.array([[-0.5, 0.0, 0.3, 0.1], [0.2, -0.3, 0.0, 0.5]])
    share = np.array([0.35, 0.65])

    def draw_times(rates, size):  # piecewise-exponential first-passage times on the u scale
        cumulative = np.concatenate([[0.0], np.cumsum(rates * np.diff(ends))])
        target = rng.exponential(size=size)
        j = np.searchsorted(cumulative, target, side="right") - 1
        inside = j < rates.size
        u = np.full(size, 2.0)  # past the horizon (u = 1): event-free at it
        u[inside] = ends[j[inside]] + (target[inside] - cumulative[j[inside]]) / rates[j[inside]]
        return u

    M = 400_000
    cell = rng.uniform(size=M) < share[1]
    time, event = np.empty(M), np.empty(M, dtype=bool)
    for k in (0, 1):
        rows = cell == k
        T = draw_times(np.exp(log_rate + beta * k), rows.sum())
        C = draw_times(np.exp(censor[k]), rows.sum())
        time[rows], event[rows] = np.minimum(T, C) * EDGES[-1], T <= C
    simulated = survival_stats(time, event, np.array(CELLS)[cell.astype(int)], edges=EDGES, cells=CELLS).table()
    stats = survival_stats(time[:N], event[:N], np.array(CELLS)[cell[:N].astype(int)], edges=EDGES, cells=CELLS)
    model = _fixed(survival_model(stats), beta=[beta], baseline=log_rate, censoring=censor, cell_share=share)
    probability = _replicated_mean(model, 4000) / N
    np.testing.assert_allclose(probability, simulated.ravel() / M, atol=0.004)


@pytest.mark.parametrize("link", ["logit", "cloglog"])
def test_exit_probabilities_of_the_discrete_time_model_match_a_simulation(link):
    rng = np.random.default_rng(2)
    gamma, beta = np.array([-1.5, -1.0, -1.2, -0.8]), -0.4
    censor = np.full((2, 4), -2.0)
    inverse = (lambda x: 1 / (1 + np.exp(-x))) if link == "logit" else (lambda x: 1 - np.exp(-np.exp(x)))
    M = 200_000
    cell = (rng.uniform(size=M) < 0.5).astype(int)
    outcome = np.full(M, 2 * 4)
    alive = np.ones(M, dtype=bool)
    for j in range(4):  # the event first, then censoring at the end of an interval survived
        h = inverse(gamma[j] + beta * cell)
        dies = alive & (rng.uniform(size=M) < h)
        outcome[dies] = j
        alive &= ~dies
        leaves = alive & (rng.uniform(size=M) < 1 / (1 + np.exp(2.0)))
        outcome[leaves] = 4 + j
        alive &= ~leaves
    simulated = np.zeros((2, 9))
    np.add.at(simulated, (cell, outcome), 1)
    time, event, labels = np.ones(N), np.ones(N), np.array(CELLS)[rng.integers(0, 2, N)]
    model = survival_model(survival_stats(time, event, labels, edges=EDGES, cells=CELLS), hazard=link)
    model = _fixed(model, beta=[beta], baseline=gamma, censoring=censor, cell_share=[0.5, 0.5])
    np.testing.assert_allclose(_replicated_mean(model, 4000) / N, simulated.ravel() / M, atol=0.004)


def _trial(n, seed, hazard_ratio=0.6):
    rng = np.random.default_rng(seed)
    arm = rng.choice(CELLS, n)
    T = rng.exponential(1 / (0.6 * np.where(arm == "treated", hazard_ratio, 1.0)))
    C = rng.uniform(0, 5, n)
    return np.minimum(T, C), T <= C, arm


@pytest.mark.slow
@pytest.mark.parametrize("hazard", ["piecewise_exponential", "weibull"])
def test_nuts_recovers_the_hazard_ratio_and_the_noise_widens_the_posterior(hazard):
    time, event, arm = _trial(3000, seed=3)
    fits = {}
    for name, stats in (
        ("exact", survival_stats(time, event, arm, edges=EDGES, cells=CELLS)),
        ("release", release_survival_stats(time, event, arm, edges=EDGES, cells=CELLS, epsilon=0.5, delta=1e-6, rng=4)),
    ):
        with survival_model(stats, hazard=hazard):
            # PyMC's NUTS loads the compiled model from the disk cache; nutpie (PyMC's default where
            # installed) compiles it again on every call
            idata = pm.sample(
                400,
                tune=400,
                chains=2,
                cores=1,
                progressbar=False,
                random_seed=5,
                target_accept=0.9,
                nuts_sampler="pymc",
            )
        fits[name] = idata.posterior["beta"].values.ravel()
    for draws in fits.values():
        assert abs(draws.mean() - np.log(0.6)) < 4 * draws.std()
    assert fits["release"].std() > fits["exact"].std()


def _posterior(H, hazard_code, shape=None):
    """A hand-made posterior DataTree: cumulative hazards (chain, draw, cell, interval)."""
    posterior = {"cumulative_hazard": (("chain", "draw", "cell", "interval"), H)}
    if shape is not None:
        posterior["shape"] = (("chain", "draw", "cell")[: shape.ndim], shape)
    coords = {"cell": CELLS, "interval": EDGES}
    constant = {"hazard_code": ((), np.int64(hazard_code)), "interval_end": (("interval",), EDGES)}
    labels = ["family=survival", "release=survival_stats", "transform=survival"]  # as record_fit writes it
    constant["fit_record"] = (("fit_field",), np.zeros(3))
    return xr.DataTree.from_dict(
        {
            "posterior": xr.Dataset(posterior, coords=coords),
            "constant_data": xr.Dataset(constant, coords={"interval": EDGES, "fit_field": labels}),
        }
    )


def test_curves_and_medians_follow_the_fitted_hazard_between_the_interval_ends():
    rate = np.array([0.4, 0.7])  # constant hazards per cell: H(t) = rate·t
    H = np.broadcast_to((rate[:, None] * EDGES)[None, None], (1, 3, 2, 4)).copy()
    times = [0.25, 0.75, 1.5, 3.0]
    pwe = predict_survival(_posterior(H, 0), times=times)
    np.testing.assert_allclose(pwe.loc["treated", "mean"].to_numpy(), np.exp(-0.7 * np.array(times)))
    med = median_survival(_posterior(H, 0))
    np.testing.assert_allclose(med["median"].to_numpy(), np.log(2) / rate)
    steps = predict_survival(_posterior(H, 1), times=times)  # discrete time: falls at the ends only
    np.testing.assert_allclose(steps.loc["control", "mean"].to_numpy(), np.exp(-0.4 * np.array([0.0, 0.5, 1.0, 3.0])))
    assert median_survival(_posterior(H, 2)).loc["control", "median"] == 2.0  # the first end with S ≤ ½
    weibull = _posterior(H, 3, shape=np.full((1, 3), 2.0))  # H(t) = H(τ)(t/τ)²
    np.testing.assert_allclose(
        predict_survival(weibull, "control", times=[1.5])["mean"].to_numpy(), np.exp(-0.4 * 3.0 * 0.25)
    )
    own = _posterior(H, 3, shape=np.broadcast_to([1.0, 3.0], (1, 3, 2)).copy())  # a shape per cell
    np.testing.assert_allclose(
        predict_survival(own, times=[1.5])["mean"].to_numpy(),
        np.exp(-np.array([0.4, 0.7]) * 3.0 * 0.5 ** np.array([1, 3])),
    )
    low = _posterior(H * 0.05, 0)
    assert median_survival(low)["beyond_horizon"].tolist() == [1.0, 1.0]
    assert np.isinf(median_survival(low)["median"]).all()
    with pytest.raises(ValueError, match="horizon"):
        predict_survival(_posterior(H, 0), times=[4.0])
    with pytest.raises(ValueError, match="cells"):
        predict_survival(_posterior(H, 0), cells="placebo")
    curve = survival_function(_posterior(H, 0), times, x="treated", interval=0.9)
    np.testing.assert_allclose(curve["mean"].to_numpy(), pwe.loc["treated", "mean"].to_numpy())


def test_the_model_is_refitted_on_a_swapped_table_and_refuses_bad_input():
    time, event, arm = _trial(800, seed=6)
    release = release_survival_stats(time, event, arm, edges=EDGES, cells=CELLS, epsilon=1.0, delta=1e-6, rng=7)
    model = survival_model(release, reference="treated")
    assert list(model.coords["feature"]) == ["control"]
    other = release_survival_stats(time, event, arm, edges=EDGES, cells=CELLS, epsilon=1.0, delta=1e-6, rng=8)
    set_survival_stats(other, model)
    np.testing.assert_array_equal(model["exit_table"].get_value(), other.table().ravel())
    exact = survival_stats(time, event, arm, edges=EDGES, cells=CELLS)
    with pytest.raises(ValueError, match="exact table"):
        set_survival_stats(exact, model)
    with pytest.raises(ValueError, match="cells"):
        set_survival_stats(survival_stats(time, event, edges=EDGES), model)
    with pytest.raises(ValueError, match="hazard"):
        survival_model(release, hazard="cox")
    with pytest.raises(ValueError, match="reference"):
        survival_model(release, reference="placebo")
    with pytest.raises(ValueError, match="noise_aware"):
        survival_model(exact, noise_aware=True)
    with pytest.raises(ValueError, match="beta_sigma"):
        survival_model(release, beta_sigma=-1.0)
    naive = survival_model(release, noise_aware=False)  # the noise ignored: the multinomial kernel
    assert not np.any(naive["exit_noise_var"].get_value())


def _competing(rates, censor, width):
    """π(event, j), π(censored, j), π(survivor) of constant competing hazards per interval (numpy)."""
    total = (rates + censor) * width
    at_risk = np.exp(-np.concatenate([[0.0], np.cumsum(total)[:-1]]))
    leave = at_risk * (1 - np.exp(-total))
    return np.concatenate([leave * rates / (rates + censor), leave * censor / (rates + censor), [np.exp(-total.sum())]])


def test_cells_with_their_own_baselines_draw_crossing_curves():
    """proportional=False: a baseline walk per cell and no beta; the exit probabilities are each
    cell's own competing-risk ones (computed here in numpy), so curves may cross."""
    time, event, arm = _trial(N, seed=9)
    stats = survival_stats(time, event, arm, edges=EDGES, cells=CELLS)
    model = survival_model(stats, proportional=False)
    assert "beta" not in model.named_vars and model.named_vars_to_dims["baseline"] == ("cell", "interval")
    baseline = np.log([[0.5, 0.5, 0.5, 0.5], [0.1, 0.4, 1.2, 2.0]])  # the second cell's hazard rises past the first's
    censor = np.log(np.full((2, 4), 0.3))
    fixed = _fixed(model, baseline=baseline, censoring=censor, cell_share=[0.5, 0.5])
    width = np.diff(np.concatenate([[0.0], EDGES])) / EDGES[-1]
    expected = np.concatenate([_competing(np.exp(b), np.exp(c), width) for b, c in zip(baseline, censor, strict=True)])
    np.testing.assert_allclose(_replicated_mean(fixed, 4000) / N, expected * 0.5, atol=0.004)
    weibull = survival_model(stats, hazard="weibull", proportional=False)
    assert weibull.named_vars_to_dims["shape"] == ("cell",) and "beta" not in weibull.named_vars


def test_without_censoring_before_the_horizon_the_censorings_are_zero_and_a_table_with_some_is_refused():
    """``censoring="none"``: a study that follows everyone to the horizon.  The replicated table of
    an exact fit has no censoring before it, its event and survivor probabilities are the event
    model's alone, and an exact table that does hold censorings is refused, naming the argument."""
    rng = np.random.default_rng(11)
    arm = rng.choice(CELLS, N)
    T = rng.exponential(np.where(arm == "treated", 3.0, 2.0))
    stats = survival_stats(T, np.ones(N), arm, edges=EDGES, cells=CELLS)  # follow-up to τ: no censoring
    model = survival_model(stats, censoring="none")
    assert "censoring" not in model.named_vars and "censoring_step" not in model.named_vars
    log_rate, share = np.array([-0.7, -0.7, -0.7, -0.7]), np.array([0.5, 0.5])
    fixed = _fixed(model, beta=[np.log(2 / 3)], baseline=log_rate, cell_share=share)
    probability = (_replicated_mean(fixed, 2000) / N).reshape(2, -1)
    J = EDGES.size
    np.testing.assert_array_equal(probability[:, J : 2 * J], 0.0)
    # exponential event times at rate e^{−0.7} per horizon unit in the reference cell, 2/3 of it treated
    for k, rate in enumerate(np.exp(log_rate[0]) * np.array([1.0, 2 / 3])):
        survival = np.exp(-rate * np.concatenate([[0.0], EDGES]) / EDGES[-1])
        np.testing.assert_allclose(probability[k, :J], 0.5 * -np.diff(survival), atol=0.005)
        np.testing.assert_allclose(probability[k, 2 * J], 0.5 * survival[-1], atol=0.005)
    censored = survival_stats(np.minimum(T, 1.5), T <= 1.5, arm, edges=EDGES, cells=CELLS)
    with pytest.raises(ValueError, match="censoring"):
        survival_model(censored, censoring="none")
    with pytest.raises(ValueError, match="censoring"):
        survival_model(stats, censoring="uniform")


def test_the_weibull_model_states_its_hazard_ratio_as_a_time_ratio():
    """Proportional Weibull hazards are an accelerated-failure-time model: with H_c(t) =
    e^{α+β}·t^ρ, T_c has the law of T_ref·e^{−β/ρ}; the model's ``log_time_ratio`` is −β/ρ, and
    the medians of the fitted curves are in that ratio."""
    time, event, arm = _trial(300, seed=12)
    release = release_survival_stats(time, event, arm, edges=EDGES, cells=CELLS, epsilon=1.0, delta=1e-6, rng=3)
    model = _fixed(survival_model(release, hazard="weibull"), beta=[-0.6], shape=1.5, intercept=0.2)
    assert float(model["log_time_ratio"].eval()[0]) == pytest.approx(0.4)
    H = model["cumulative_hazard"].eval()  # (cells, intervals): the treated cell's is e^{−0.6} times
    np.testing.assert_allclose(H[1] / H[0], np.exp(-0.6))

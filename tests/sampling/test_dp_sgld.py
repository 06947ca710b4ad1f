"""DP-SGLD: the planner against dp-accounting, the run charged as one recomposable ledger event,
the Poisson subsample's law, the sampler on a known posterior, the public preconditioner as the
plain chain of rescaled parameters, the public start, and refusals that spend nothing."""

import math

import numpy as np
import pymc as pm
import pytest
from dp_accounting import NeighboringRelation
from dp_accounting.pld.pld_privacy_accountant import PLDAccountant
from scipy import stats

from pm_private import PrivacyAccountant
from pm_private.privacy.budget import BudgetExceededError
from pm_private.privacy.noise import as_noise_source
from pm_private.privacy.projection import row_scale_factors
from pm_private.sampling import dp_sgld, plan_dp_sgld
from pm_private.sampling.private_langevin import _chain, _clipped_sum, _gradient_functions, _Progress, _subsamples


def test_planned_epsilon_is_dp_accountings_and_the_step_size_follows():
    plan = plan_dp_sgld(1.0, 1e-5, n=10_000, sampling_rate=0.01, clip=2.0, steps=500, chains=2)
    accountant = PLDAccountant(NeighboringRelation.REPLACE_ONE)
    accountant.compose(plan.dp_event())
    theirs = accountant.get_epsilon(1e-5)
    assert plan.epsilon <= 1.0 and theirs * (1 - 1e-3) <= plan.epsilon <= theirs * 1.02
    assert plan.step_size == pytest.approx((2 * 0.01 / (2.0 * plan.noise_multiplier)) ** 2)
    # a smaller z would overspend: the multiplier is the smallest to 10⁻³
    tighter = PLDAccountant(NeighboringRelation.REPLACE_ONE)
    tighter.compose(type(plan)(**{**plan.__dict__, "noise_multiplier": plan.noise_multiplier * 0.99}).dp_event())
    assert tighter.get_epsilon(1e-5) > 1.0 * 0.995
    for bad in (dict(sampling_rate=1.0), dict(sampling_rate=0.0), dict(clip=-1.0), dict(steps=0), dict(n=0)):
        args = dict(n=100, sampling_rate=0.1, clip=1.0, steps=10) | bad
        with pytest.raises(ValueError, match=next(iter(bad))):
            plan_dp_sgld(1.0, 1e-5, **args)


def test_poisson_subsamples_are_independent_bernoulli_draws():
    source = as_noise_source(np.random.default_rng(0))
    n, q, steps = 400, 0.05, 2000
    picks = np.zeros((steps, n), dtype=bool)
    for k, rows in enumerate(_subsamples(source, n, q, steps)):
        assert np.all(np.diff(rows) > 0) and rows.min(initial=0) >= 0 and rows.max(initial=0) < n
        picks[k, rows] = True
    sizes = picks.sum(axis=1)
    assert stats.binomtest(int(picks.sum()), n * steps, q).pvalue > 1e-3
    assert sizes.var() == pytest.approx(n * q * (1 - q), rel=0.15)  # binomial, not fixed
    per_record = picks.mean(axis=0)
    assert np.abs(per_record - q).max() < 6 * math.sqrt(q * (1 - q) / steps)


def _normal_mean_model(n=2000, seed=1):
    y = np.random.default_rng(seed).normal(0.7, 1.0, n)
    with pm.Model() as model:
        mu = pm.Normal("mu", 0.0, 10.0)
        pm.Normal("y", mu, 1.0, observed=y)
    return model, y


def test_the_run_is_one_ledger_entry_and_samples_a_known_posterior():
    """y ~ N(μ, 1), μ ~ N(0, 10²): the posterior is N(Σy/(n + 0.01), 1/(n + 0.01)); with a clip the
    records never reach, the draws' mean and s.d. are the posterior's (SGLD's own noise widens the
    s.d. a little)."""
    model, y = _normal_mean_model()
    accountant = PrivacyAccountant(50.0, 1e-5)
    idata = dp_sgld(
        model, epsilon=40.0, delta=1e-5, sampling_rate=0.2, clip=8.0, draws=3000, tune=500, chains=2, rng=3,
        accountant=accountant, thin=1,
    )  # fmt: skip
    (entry,) = accountant.ledger
    event, report = entry.noise  # the steps, then the report of clipped gradients
    assert event.count == 2 * 3500 and event.sampling_rate == 0.2 and event.sensitivity == 16.0
    assert report.count == 1 and report.sampling_rate == 1 and report.sensitivity == pytest.approx(math.sqrt(2))
    assert accountant.tight_epsilon() == pytest.approx(entry.epsilon, rel=1e-6) and entry.epsilon <= 40.0
    assert idata.attrs["private"] == 0 and idata.attrs["epsilon"] == entry.epsilon
    draws = idata.posterior["mu"].values.ravel()
    precision = y.size + 0.01
    assert draws.mean() == pytest.approx(y.sum() / precision, abs=4 / math.sqrt(precision))
    assert draws.std() == pytest.approx(1 / math.sqrt(precision), rel=0.35)


def test_the_progress_display_shows_the_epsilon_of_the_steps_taken(capsys):
    model, _ = _normal_mean_model(n=200)
    idata = dp_sgld(model, epsilon=2.0, delta=1e-5, sampling_rate=0.1, clip=4.0, draws=300, tune=300, rng=0)
    planned = idata.attrs["epsilon"]
    assert f"1200/1200 steps, ε spent {planned:.3g} of {planned:.3g}" in capsys.readouterr().out
    plan = plan_dp_sgld(2.0, 1e-5, n=200, sampling_rate=0.1, clip=4.0, steps=600, chains=2)
    spent = []
    with _Progress(plan, True) as progress:
        for _ in range(4):
            progress.advance(300)
            spent.append(progress.bar.tasks[0].fields["spent"])
        progress.reported()  # the report of clipped gradients completes the run's ε
        spent.append(progress.bar.tasks[0].fields["spent"])
    assert np.all(np.diff(spent) > 0) and spent[-1] == pytest.approx(plan.epsilon, rel=1e-9)
    # halfway, the ε is dp-accounting's for the steps taken so far (the first chain)
    halfway = PLDAccountant(NeighboringRelation.REPLACE_ONE)
    halfway.compose(type(plan)(**{**plan.__dict__, "chains": 1, "report_sd": None}).dp_event())
    theirs = halfway.get_epsilon(1e-5)
    assert theirs * (1 - 1e-3) <= spent[1] <= theirs * 1.02


def test_the_clipped_sum_bounds_every_record_and_agrees_with_the_library_clip():
    rng = np.random.default_rng(0)
    for scale in (1e-3, 1.0, 1e3):
        jacobian = scale * rng.standard_normal((300, 7)) * rng.exponential(size=(300, 1))
        expected = row_scale_factors(jacobian, 1.5) @ jacobian
        np.testing.assert_allclose(_clipped_sum(jacobian, 1.5), expected, rtol=1e-11, atol=1e-12 * scale)
    # each clipped row's computed norm is ≤ C, for rows just above the bound too
    rows = rng.standard_normal((2000, 30))
    rows *= (1.5 * (1 + rng.uniform(0, 1e-12, 2000)) / np.linalg.norm(rows, axis=1))[:, None]
    for row in rows:
        assert np.linalg.norm(_clipped_sum(row[None], 1.5)) <= 1.5
    # squares that overflow and non-finite entries go through the overflow-safe clip
    huge = np.array([[1e200, 1e200], [3.0, 4.0]])
    np.testing.assert_allclose(_clipped_sum(huge, 1.0), row_scale_factors(huge, 1.0) @ huge)


def test_the_records_are_held_out_of_the_compiled_gradients_constants():
    """A graph with the records as constants is compiled again in every call (left out of the disk
    cache); the per-record gradients hold them in shared variables instead, and still index them."""
    rng = np.random.default_rng(0)
    X, counts = rng.normal(size=(500, 3)), rng.poisson(2.0, 500)
    with pm.Model() as model:
        beta = pm.Normal("beta", 0.0, 1.0, shape=3)
        pm.Poisson("y", mu=pm.math.exp(pm.math.dot(X, beta)), observed=counts)
    gradients, n, start, _ = _gradient_functions(model)
    constants = [v for v in gradients.maker.fgraph.variables if hasattr(v, "data") and np.size(v.data) >= n]
    assert n == 500 and not constants
    theta = 0.1 * np.ones(3)
    jacobian, _ = gradients(theta, np.array([4, 17]))
    expected = (counts[[4, 17]] - np.exp(X[[4, 17]] @ theta))[:, None] * X[[4, 17]]
    np.testing.assert_allclose(jacobian, expected, rtol=1e-10)


def test_refusals_spend_nothing():
    model, _ = _normal_mean_model(200)
    accountant = PrivacyAccountant(0.5, 1e-5)
    with pytest.raises(BudgetExceededError):
        dp_sgld(model, epsilon=1.0, delta=1e-5, sampling_rate=0.1, clip=1.0, draws=10, tune=10, accountant=accountant)
    with pytest.raises(ValueError, match="clip"):
        dp_sgld(model, epsilon=0.1, delta=1e-5, sampling_rate=0.1, clip=0.0, draws=10, tune=10, accountant=accountant)
    with pm.Model() as empty:
        pm.Normal("z")
    with pytest.raises(ValueError, match="observed"):
        dp_sgld(empty, epsilon=0.1, delta=1e-5, sampling_rate=0.1, clip=1.0, accountant=accountant)
    assert accountant.ledger == ()


def test_a_likelihood_that_does_not_split_over_records_is_refused():
    """A multivariate normal across the records has one log-density for all of them: no record's
    gradient exists to clip, so the guarantee would not hold."""
    y = np.random.default_rng(2).normal(size=30)
    with pm.Model() as model:
        mu = pm.Normal("mu")
        pm.MvNormal("y", mu * np.ones(30), np.eye(30), observed=y)
    accountant = PrivacyAccountant(1.0, 1e-5)
    with pytest.raises(ValueError, match="split over"):
        dp_sgld(model, epsilon=0.5, delta=1e-5, sampling_rate=0.1, clip=1.0, draws=5, tune=5, accountant=accountant)
    assert accountant.ledger == ()


def test_a_preconditioned_chain_is_the_plain_chain_of_the_rescaled_parameters():
    """With a public scale s the chain is DP-SGLD on u = θ/s: the same draws, seed for seed, as the
    unpreconditioned chain of the model written in u (μ = s·u, u ~ N(0, (10/s)²)), whose guarantee
    is the plain one; the plan and the charge are the same."""
    y = np.random.default_rng(4).normal(0.7, 1.0, 500)
    with pm.Model() as model:
        mu = pm.Normal("mu", 0.0, 10.0)
        pm.Normal("y", mu, 1.0, observed=y)
    with pm.Model() as rescaled:
        u = pm.Normal("u", 0.0, 10.0 / 3.0)
        pm.Normal("y", pm.Deterministic("mu", 3.0 * u), 1.0, observed=y)
    common = dict(epsilon=2.0, delta=1e-5, sampling_rate=0.1, clip=2.0, draws=300, tune=100, rng=5, progressbar=False)
    accountants = [PrivacyAccountant(5.0, 1e-5), PrivacyAccountant(5.0, 1e-5)]
    preconditioned = dp_sgld(model, scale={"mu": 3.0}, accountant=accountants[0], **common)
    plain = dp_sgld(rescaled, accountant=accountants[1], **common)
    np.testing.assert_allclose(preconditioned.posterior["mu"].values, plain.posterior["mu"].values, rtol=1e-9)
    assert accountants[0].ledger[0].epsilon == accountants[1].ledger[0].epsilon
    assert preconditioned.attrs["preconditioned"] == 1 and plain.attrs["preconditioned"] == 0
    assert "preconditioner" in accountants[0].ledger[0].label
    # the scale moved the chain: without it the same seed gives other draws
    unscaled = dp_sgld(model, **common).posterior["mu"].values
    assert np.abs(unscaled - plain.posterior["mu"].values).max() > 1e-3


def test_the_chains_start_at_the_public_initvals_given():
    """``initvals`` on the variables' own scale (τ, not log τ), as ``pm.sample`` takes them: the
    first kept draw lies within two small steps (a small ε makes η small) of the start, not of the
    model's default start."""
    y = np.random.default_rng(6).normal(0.7, 1.0, 400)
    with pm.Model() as model:
        mu = pm.Normal("mu", 0.0, 10.0)
        tau = pm.HalfNormal("tau", 1.0)
        pm.Normal("y", mu, tau, observed=y)
    common = dict(epsilon=0.05, delta=1e-5, sampling_rate=0.1, clip=1.0, draws=2, tune=1, rng=2, progressbar=False)
    started = dp_sgld(model, initvals={"mu": 5.0, "tau": 3.0}, **common).posterior.isel(draw=0)
    default = dp_sgld(model, **common).posterior.isel(draw=0)
    assert np.abs(started["mu"].values - 5.0).max() < 0.3 and np.abs(started["tau"].values - 3.0).max() < 0.6
    assert np.abs(default["mu"].values).max() < 0.3


@pytest.mark.parametrize(
    "keyword, value, message",
    [
        ("scale", [3.0], "dict"),
        ("scale", {"sigma": 1.0}, "'sigma'"),
        ("scale", {"mu": 0.0}, r"scale\['mu'\]"),
        ("scale", {"mu": np.nan}, r"scale\['mu'\]"),
        ("scale", {"mu": "big"}, r"scale\['mu'\]"),
        ("scale", {"mu": [1.0, 2.0]}, "shape"),
        ("scale", {"mu": 1e9}, r"\[1e-06, 1e\+06\]"),
        ("initvals", [0.5], "dict"),
        ("initvals", {"sigma": 1.0}, "'sigma'"),
        ("initvals", {"y": 1.0}, "'y'"),
        ("initvals", {"mu": "big"}, r"initvals\['mu'\]"),
        ("initvals", {"mu": [1.0, 2.0]}, "shape"),
        ("initvals", {"mu": np.inf}, "support"),
        ("initvals", {"mu": True}, "booleans"),
    ],
)
def test_a_bad_scale_or_start_is_refused_naming_it_before_anything_is_spent(keyword, value, message):
    model, _ = _normal_mean_model(200)
    accountant = PrivacyAccountant(5.0, 1e-5)
    with pytest.raises(ValueError, match=message):
        dp_sgld(model, epsilon=1.0, delta=1e-5, sampling_rate=0.1, clip=1.0, accountant=accountant, **{keyword: value})
    assert accountant.ledger == ()


def test_at_a_large_epsilon_the_planned_thinning_keeps_the_draws_at_the_posteriors_width():
    """At ε = 40 the privacy allows steps so large that the unthinned chain's draws are about twice
    as wide as the posterior N(Σy/(n + 0.01), 1/(n + 0.01)); the planned thinning (the smallest
    power of two with η ≤ 1/(n·C²)) brings them within 15 %."""
    model, _ = _normal_mean_model()
    common = dict(epsilon=40.0, delta=1e-5, sampling_rate=0.2, clip=3.0, draws=1000, tune=200, rng=3)
    plain = dp_sgld(model, thin=1, progressbar=False, **common)
    planned = dp_sgld(model, progressbar=False, **common)
    posterior_sd = 1 / math.sqrt(2000.01)
    assert plain.posterior["mu"].values.std() > 1.5 * posterior_sd
    assert planned.posterior["mu"].values.std() == pytest.approx(posterior_sd, rel=0.15)
    thin = planned.attrs["thin"]
    assert planned.attrs["step_size"] <= 1 / (2000 * 3.0**2) and thin > 1 and thin & (thin - 1) == 0
    half = plan_dp_sgld(40.0, 1e-5, n=2000, sampling_rate=0.2, clip=3.0, steps=1200, chains=2, thin=thin // 2)
    assert half.step_size > 1 / (2000 * 3.0**2) and planned.attrs["steps_per_chain"] == 1200 * thin


def test_a_thinned_chain_keeps_every_thin_th_step_of_the_same_chain_and_plans_them_all():
    """``thin`` k: the kept draws are the last of every k steps of the chain that would keep every
    step (the same plan and noise), the warm-up k·tune steps; every step is planned and charged."""
    model, _ = _normal_mean_model(n=300)
    gradients, n, start, _ = _gradient_functions(model)
    plan = plan_dp_sgld(2.0, 1e-5, n=n, sampling_rate=0.1, clip=4.0, steps=70, clip_share=0, thin=3)
    thinned = _chain(gradients, start, plan, as_noise_source(np.random.default_rng(7)), 20, 50, thin=3)
    every = _chain(gradients, start, plan, as_noise_source(np.random.default_rng(7)), 60, 150)
    np.testing.assert_array_equal(thinned, every[2::3])
    accountant = PrivacyAccountant(5.0, 1e-5)
    idata = dp_sgld(
        model, epsilon=2.0, delta=1e-5, sampling_rate=0.1, clip=4.0, draws=50, tune=20, thin=3, rng=1,
        progressbar=False, accountant=accountant,
    )  # fmt: skip
    assert idata.posterior["mu"].shape == (2, 50) and idata.attrs["thin"] == 3
    assert idata.attrs["steps_per_chain"] == 210 and accountant.ledger[0].noise[0].count == 2 * 210
    with pytest.raises(ValueError, match="thin"):
        dp_sgld(model, epsilon=2.0, delta=1e-5, sampling_rate=0.1, clip=4.0, thin=0, accountant=accountant)
    assert len(accountant.ledger) == 1


def test_the_progress_display_composes_the_epsilon_a_hundred_times_a_run_at_most(monkeypatch):
    """Counting steps is per block of 256; each ε shown is a privacy-loss composition, so a run of
    many blocks recomputes it once a hundredth of the run has passed, and at its end."""
    import pm_private.sampling.private_langevin as langevin

    plan = plan_dp_sgld(16.0, 1e-5, n=10_000, sampling_rate=0.02, clip=2.0, steps=2000, chains=2)
    calls = []
    monkeypatch.setattr(langevin, "implied_epsilon", lambda *args: calls.append(args) or 1.0)
    with _Progress(plan, True) as progress:
        total = plan.steps * plan.chains
        for first in range(0, total, 256):
            progress.advance(min(256, total - first))
        assert progress.bar.tasks[0].completed == total and progress.shown == total
    assert total // 256 > 200 and len(calls) <= 101

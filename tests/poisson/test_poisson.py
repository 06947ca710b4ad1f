"""Noise-aware Poisson regression: the release's sensitivity and noise, the moments of the clipped
counts against brute force, the model (recovery of β on a near-exact release) and predictions."""

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest
import xarray as xr
from scipy import integrate
from scipy import stats as sps

from pm_private import BudgetExceededError, PrivacyAccountant, poisson_model, predict_poisson, release_poisson_stats
from pm_private.poisson import poisson_stats, set_poisson_stats
from pm_private.poisson.moments import (
    clipped_count_mean,
    poisson_lognormal,
    poisson_lognormal_values,
    poisson_stat_moments,
)
from pm_private.poisson.release import poisson_entry_weights, poisson_sensitivity
from pm_private.privacy.primitives import project_rows
from pm_private.released.degree2 import degree2_vector


def _weighted(X, y, bx, B):
    """The vector the Gaussian mechanism perturbs, from the records."""
    X = project_rows(np.asarray(X, dtype=float), bx)
    s = poisson_stats(X, y, y_bound=B)
    return poisson_entry_weights(X.shape[1], bx, B) * degree2_vector(s.x_sum, s.y_sum, s.xx, s.yx)


@pytest.mark.parametrize(("d", "bx", "B"), [(1, 0.4, 3), (2, 1.7, 10), (5, 3.0, 25)])
def test_sensitivity_bounds_random_neighbours(d, bx, B):
    rng = np.random.default_rng(d)
    bound = poisson_sensitivity(bx)
    worst = 0.0
    for _ in range(300):
        X = rng.normal(size=(5, d)) * rng.uniform(0.1, 3)
        y = rng.poisson(rng.uniform(0.1, 2 * B), 5)
        X2, y2 = X.copy(), y.copy()
        X2[0] = rng.normal(size=d) * rng.uniform(0.1, 3)
        y2[0] = rng.poisson(rng.uniform(0.1, 2 * B))
        worst = max(worst, np.linalg.norm(_weighted(X, y, bx, B) - _weighted(X2, y2, bx, B)))
    assert worst <= bound * (1 + 1e-12)


@pytest.mark.parametrize("bx", [0.3, 1.0, 4.0])
def test_sensitivity_is_attained_by_the_adversarial_neighbour(bx):
    """x′ = −x on the sphere with both counts at the bound (Bx² ≥ 1/3), or one count at 0 (below)."""
    B = 7
    X = np.array([[bx, 0.0], [0.2, -0.1]])
    X2 = X.copy()
    X2[0] = -X[0]
    y, y2 = np.array([B, 1]), np.array([B if bx**2 >= 1 / 3 else 0, 1])
    change = np.linalg.norm(_weighted(X, y, bx, B) - _weighted(X2, y2, bx, B))
    assert change == pytest.approx(poisson_sensitivity(bx), rel=1e-12)
    # a larger count is clipped and a row outside the ball projected: no further change
    X3, y3 = X2.copy(), y2.copy()
    X3[0] *= 100
    y3[0] = 100 * y2[0]
    assert np.linalg.norm(_weighted(X, y, bx, B) - _weighted(X3, y3, bx, B)) == pytest.approx(change, rel=1e-9)


def test_sensitivity_is_the_maximum_over_a_grid_of_neighbours():
    """Brute force over the reduced problem of the proof: ‖x‖ = ‖x′‖, angle, and both scaled counts."""
    for bx in (0.2, 0.6, 1.0, 2.5):
        p = bx**2
        t = np.linspace(0, bx, 41)
        c = np.linspace(-p, p, 81)
        T, T2, C = np.meshgrid(t, t, c, indexing="ij")
        change2 = 4 * p + 2 * p * p + 2 * p * (T**2 + T2**2) + 2 * (T - T2) ** 2 - 4 * C * (1 + T * T2) - 2 * C**2
        assert np.sqrt(change2.max()) == pytest.approx(poisson_sensitivity(bx), rel=1e-2)
        assert np.sqrt(change2.max()) <= poisson_sensitivity(bx) * (1 + 1e-12)


def test_release_is_the_statistics_plus_noise_of_the_stated_scale(monkeypatch):
    import pm_private.privacy.gaussian as gaussian

    calibrated = gaussian.gaussian_scale(13, poisson_sensitivity(2.0), 1.0, 1e-6)
    monkeypatch.setattr(gaussian, "gaussian_scale", lambda *args: calibrated)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = rng.poisson(3.0, 300)
    exact = poisson_stats(X, y, y_bound=5, x_bound=2.0)
    noise = np.random.default_rng(5)
    draws = [release_poisson_stats(X, y, epsilon=1.0, delta=1e-6, x_bound=2.0, y_bound=5, rng=noise) for _ in range(60)]
    first = draws[0]
    assert first.sensitivity == pytest.approx(2.0 * np.sqrt(40.0)) and first.y_bound == 5 and not first.private
    vectors = np.array([degree2_vector(r.x_sum, r.y_sum, r.xx, r.yx) for r in draws])
    standardised = (vectors - degree2_vector(exact.x_sum, exact.y_sum, exact.xx, exact.yx)) / np.sqrt(
        first.noise_variance()
    )
    assert abs(standardised.mean()) < 4 / np.sqrt(standardised.size)
    assert np.mean(standardised**2) == pytest.approx(1.0, abs=0.15)
    # the count statistics carry γ = B/Bx times the noise of the other off-diagonal entries
    assert first.noise_variance()[3] == pytest.approx(first.noise_scale**2 / 2 * (5 / 2.0) ** 2)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        (dict(y=[0, 1, 2.5, 1]), "y"),
        (dict(y=[-1, 0, 1, 1]), "y"),
        (dict(y_bound=0), "y_bound"),
        (dict(y_bound=2.0), "y_bound"),
        (dict(x_bound=0.0), "x_bound"),
        (dict(epsilon=-1.0), "epsilon"),
        (dict(X=[[1.0, np.nan]] * 4), "X"),
    ],
)
def test_bad_input_is_refused_before_anything_is_spent(kwargs, name):
    accountant = PrivacyAccountant(10.0, 1e-3)
    args = dict(X=np.ones((4, 2)), y=[0, 1, 3, 0], epsilon=1.0, delta=1e-6, x_bound=1.0, y_bound=2)
    args.update(kwargs, accountant=accountant, rng=0)
    with pytest.raises(ValueError, match=name):
        release_poisson_stats(**args)
    assert accountant.spent == (0.0, 0.0)
    small = PrivacyAccountant(0.5, 1e-3)
    with pytest.raises(BudgetExceededError):
        release_poisson_stats(
            np.ones((4, 2)), [0, 1, 1, 0], epsilon=1.0, delta=1e-6, x_bound=1, y_bound=2, accountant=small
        )
    assert small.spent == (0.0, 0.0)


def test_poisson_lognormal_probabilities_and_their_gradient():
    for m, s in ((0.3, 0.0), (1.0, 0.8), (-2.0, 2.0), (2.5, 1.5)):
        values = poisson_lognormal_values(m, s, 12)
        for j in (0, 3, 11):
            exact = integrate.quad(
                lambda u, j=j, m=m, s=s: sps.poisson.pmf(j, np.exp(m + s * u)) * sps.norm.pdf(u), -12, 12, limit=400
            )[0]
            assert values[j] == pytest.approx(exact, abs=1e-9 if s <= 1.5 else 1e-5)  # the stated errors
    rng = np.random.default_rng(0)
    pytensor.gradient.verify_grad(
        lambda m, s: poisson_lognormal(m, s, 9) * np.arange(1, 10.0), [np.array(0.4), np.array(0.7)], rng=rng
    )


@pytest.mark.parametrize("y_bound", [1, 10, 300])
@pytest.mark.parametrize("mode", ["NUMBA", "JAX", "FAST_RUN"])
def test_clipped_count_mean_is_scipys_and_its_gradient_checks(y_bound, mode):
    """E[min(y, B)] = Σ_{k=1}^{B} P(y ≥ k) by SciPy's Poisson, from rates far below to far above B
    (where the recursions start at the largest probability), and 60 < a where the rate is capped."""
    if mode == "JAX":
        pytest.importorskip("jax")
    a = np.concatenate([np.linspace(-25.0, 7.0, 161), [np.log(y_bound - 0.5), 59.9, 61.0, 90.0]])
    x = pt.dvector("a")
    g = clipped_count_mean(x, y_bound)
    f = pytensor.function([x], [g, pytensor.grad(g.sum(), x)], mode=mode)
    value, slope = f(a)
    rate = np.exp(np.minimum(a, 60.0))
    expected = sps.poisson.sf(np.arange(y_bound)[None, :], rate[:, None]).sum(axis=1)
    np.testing.assert_allclose(value, expected, rtol=1e-7, atol=1e-12 * y_bound)
    expected_slope = np.where(a < 60.0, rate * sps.poisson.cdf(y_bound - 1, rate), 0.0)
    np.testing.assert_allclose(slope, expected_slope, rtol=1e-7, atol=1e-12)
    pytensor.gradient.verify_grad(
        lambda v: clipped_count_mean(v, y_bound),
        [np.array([-1.0, 0.3, np.log(y_bound) + 0.2])],
        rng=np.random.default_rng(0),
        mode=mode,
    )


@pytest.mark.parametrize("d", [1, 3])
def test_moments_match_monte_carlo(d):
    """Every mean and covariance entry within 5 Monte Carlo standard errors, the covariance positive definite."""
    rng = np.random.default_rng(d)
    beta, b, mu = 0.5 * rng.normal(size=d), 0.8, 0.3 * rng.normal(size=d)
    A = rng.normal(size=(d, d))
    cov = A @ A.T / (2 * d) + 0.3 * np.eye(d)
    bb, bm, bc = pt.vector(), pt.vector(), pt.matrix()
    bi = pt.scalar()
    fn = pytensor.function([bb, bi, bm, bc], poisson_stat_moments(bb, bi, bm, bc, d, 6), mode="FAST_COMPILE")
    mean, covariance = fn(beta, b, mu, cov)
    n = 200_000
    x = rng.multivariate_normal(mu, cov, size=n)
    y = np.minimum(rng.poisson(np.exp(x @ beta + b)), 6).astype(float)
    i, j = np.triu_indices(d)
    t = np.column_stack([x, y, x[:, i] * x[:, j], y[:, None] * x])
    centred = t - t.mean(axis=0)
    se_cov = (centred[:, :, None] * centred[:, None, :]).std(axis=0) / np.sqrt(n)
    assert np.all(np.abs(mean - t.mean(axis=0)) < 5 * t.std(axis=0) / np.sqrt(n))
    assert np.all(np.abs(covariance - centred.T @ centred / n) < 5 * se_cov + 1e-12)
    assert np.allclose(covariance, covariance.T) and np.linalg.eigvalsh(covariance).min() > 0


def test_model_recovers_beta_from_a_near_exact_release():
    """ε = 500, n = 5000: the posterior mode is at the true coefficients (C backend: compiles fastest)."""
    import pymc as pm

    rng = np.random.default_rng(3)
    X = rng.normal(size=(5000, 2))
    y = rng.poisson(np.exp(X @ [0.5, -0.3] + 0.5))
    release = release_poisson_stats(X, y, epsilon=500.0, delta=1e-6, x_bound=5.0, y_bound=15, rng=0)
    model = poisson_model(release, feature_names=["a", "b"])
    assert model["y_bound"].get_value() == 15 and model["x_bound"].get_value() == 5.0
    with model:
        mode = pm.find_MAP(progressbar=False, compile_kwargs={"mode": "CVM"}, seed=1)
    assert np.all(np.abs(mode["beta"] - [0.5, -0.3]) < 0.04)
    assert mode["intercept"] == pytest.approx(0.5, abs=0.04)


def test_set_poisson_stats_checks_the_bound_and_the_naive_model_has_no_noise():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 2))
    y = rng.poisson(2.0, 200)
    release = release_poisson_stats(X, y, epsilon=1.0, delta=1e-6, x_bound=3.0, y_bound=8, rng=0)
    model = poisson_model(release)
    set_poisson_stats(poisson_stats(X[:50], y[:50], y_bound=8), model)
    assert model["stats_n"].get_value() == 50 and not model["stats_noise_var"].get_value().any()
    set_poisson_stats(release, model, noise_aware=False)
    assert not model["stats_noise_var"].get_value().any()
    with pytest.raises(ValueError, match="y_bound"):
        set_poisson_stats(poisson_stats(X, y, y_bound=9), model)
    with pytest.raises(ValueError, match="stats"):
        poisson_model("not statistics")
    with pytest.raises(ValueError, match="beta_sigma"):
        poisson_model(release, beta_sigma=-1.0)


def test_predict_averages_the_rates_of_the_draws_after_projection():
    beta = np.array([[1.0, 0.0], [0.5, 0.0]])
    intercept = np.array([0.0, 1.0])
    draws = xr.Dataset(
        {"beta": (("chain", "draw", "feature"), beta[None]), "intercept": (("chain", "draw"), intercept[None])}
    )
    posterior = xr.DataTree.from_dict({"posterior": draws, "constant_data": xr.Dataset({"x_bound": 2.0})})
    table = predict_poisson(posterior, [[0.5, 0.0], [10.0, 0.0]], interval=0.5)
    projected = np.array([[0.5, 0.0], [2.0, 0.0]])
    assert np.allclose(table["mean"], np.exp(projected @ beta.T + intercept).mean(axis=1))
    assert np.all(table["lower"] <= table["mean"]) and np.all(table["mean"] <= table["upper"])
    with pytest.raises(ValueError, match="X"):
        predict_poisson(posterior, np.ones((2, 3)))


def test_the_ledger_entry_states_the_gaussian_noise_for_tight_composition():
    from pm_private.privacy.primitives import gaussian_noise_event

    accountant = PrivacyAccountant(5.0, 1e-4)
    release_poisson_stats(
        np.ones((6, 2)), [0, 1, 4, 0, 2, 9], epsilon=1.0, delta=1e-6, x_bound=2.0, y_bound=4, accountant=accountant
    )
    (entry,) = accountant.history
    assert entry.noise == (gaussian_noise_event(8, poisson_sensitivity(2.0), 1.0, 1e-6),)
    assert accountant.tight_epsilon() <= 1.0 + 1e-9

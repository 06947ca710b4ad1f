"""The private release of logistic-regression statistics: sensitivity, noise, labels, refusals."""

import numpy as np
import pytest

from pm_private import BudgetExceededError, PrivacyAccountant, release_logistic_stats
from pm_private.logistic.release import logistic_sensitivity, logistic_stats, signed_labels
from pm_private.privacy.primitives import project_rows, symmetric_entry_weights
from pm_private.released.degree2 import degree2_pairs


def _weighted(X, y, bx):
    """The vector the Gaussian mechanism perturbs, from the records (labels ±1)."""
    X = project_rows(np.asarray(X, dtype=float), bx)
    u = np.column_stack([np.ones(len(X)), X, y])
    a, b = degree2_pairs(X.shape[1])
    return symmetric_entry_weights(a, b) * (u.T @ u)[a, b]


def test_stat_pairs_cover_every_non_constant_entry_once():
    d = 4
    a, b = degree2_pairs(d)
    pairs = set(zip(a.tolist(), b.tolist(), strict=True))
    every = {(i, j) for i in range(d + 2) for j in range(i, d + 2)} - {(0, 0), (d + 1, d + 1)}
    assert pairs == every and len(a) == len(pairs)


@pytest.mark.parametrize("d", [1, 2, 5])
def test_sensitivity_bounds_random_neighbours(d):
    rng = np.random.default_rng(d)
    bx = 1.7
    bound = logistic_sensitivity(bx)
    worst = 0.0
    for _ in range(300):
        X = rng.normal(size=(5, d)) * rng.uniform(0.1, 3)
        y = rng.choice([-1.0, 1.0], 5)
        X2, y2 = X.copy(), y.copy()
        X2[0] = rng.normal(size=d) * rng.uniform(0.1, 3)
        y2[0] = rng.choice([-1.0, 1.0])
        worst = max(worst, np.linalg.norm(_weighted(X, y, bx) - _weighted(X2, y2, bx)))
    assert worst <= bound * (1 + 1e-12)


@pytest.mark.parametrize("bx", [0.3, 1.0, 4.0])
def test_sensitivity_is_attained_by_the_adversarial_neighbour(bx):
    """Orthogonal rows on the sphere with opposite labels: uᵀu′ = 0, the bound is tight."""
    X = np.array([[bx, 0.0, 0.0], [0.2, 0.1, -0.3]])
    X2 = X.copy()
    X2[0] = [0.0, bx, 0.0]
    y, y2 = np.array([1.0, -1.0]), np.array([-1.0, -1.0])
    change = np.linalg.norm(_weighted(X, y, bx) - _weighted(X2, y2, bx))
    assert change == pytest.approx(logistic_sensitivity(bx), rel=1e-12)
    # a row outside the ball is projected: it moves the statistics no further
    X3 = X2.copy()
    X3[0] = [0.0, 100 * bx, 0.0]
    assert np.linalg.norm(_weighted(X, y, bx) - _weighted(X3, y2, bx)) == pytest.approx(change, rel=1e-9)


def test_release_is_the_statistics_plus_noise_of_the_stated_scale(monkeypatch):
    import pm_private.privacy.gaussian as gaussian

    calibrated = gaussian.gaussian_scale(13, np.sqrt(2) * 6, 1.0, 1e-6)
    monkeypatch.setattr(gaussian, "gaussian_scale", lambda *args: calibrated)  # calibrate once, not per draw
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = (rng.uniform(size=300) < 0.4).astype(int)
    exact = logistic_stats(X, y, x_bound=2.0)
    rng_noise = np.random.default_rng(5)
    draws = [release_logistic_stats(X, y, epsilon=1.0, delta=1e-6, x_bound=2.0, rng=rng_noise) for _ in range(60)]
    first = draws[0]
    assert first.sensitivity == pytest.approx(np.sqrt(2) * 6)
    assert np.allclose(first.xx, first.xx.T) and first.n == 300 and not first.private
    a, b = degree2_pairs(3)
    upper = np.triu_indices(3)

    def vec(s):
        return np.concatenate([s.x_sum, [s.y_sum], s.xx[upper], s.yx])

    standardised = (np.array([vec(r) for r in draws]) - vec(exact)) / np.sqrt(first.noise_variance())
    assert abs(standardised.mean()) < 4 / np.sqrt(standardised.size)
    diagonal = a == b
    assert first.noise_variance()[diagonal] == pytest.approx(first.noise_scale**2)
    for group in (diagonal, ~diagonal):  # σ² on the diagonal of Sxx, σ²/2 elsewhere
        assert np.mean(standardised[:, group] ** 2) == pytest.approx(1.0, abs=0.3)


def test_labels_zero_one_and_signed_give_the_same_release():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(50, 2))
    y01 = (rng.uniform(size=50) < 0.5).astype(int)
    r1 = release_logistic_stats(X, y01, epsilon=1.0, delta=1e-6, x_bound=2.0, rng=3)
    r2 = release_logistic_stats(X, 2 * y01 - 1, epsilon=1.0, delta=1e-6, x_bound=2.0, rng=3)
    r3 = release_logistic_stats(X, y01.astype(bool), epsilon=1.0, delta=1e-6, x_bound=2.0, rng=3)
    assert np.array_equal(r1.yx, r2.yx) and np.array_equal(r1.yx, r3.yx) and r1.y_sum == r2.y_sum
    assert np.array_equal(signed_labels([1, 1], 2), [1.0, 1.0])


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        (dict(y=[0, 1, 2, 1]), "y"),
        (dict(y=[-1, 0, 1, 1]), "y"),
        (dict(x_bound=0.0), "x_bound"),
        (dict(x_bound=np.inf), "x_bound"),
        (dict(epsilon=-1.0), "epsilon"),
        (dict(delta=1.5), "delta"),
        (dict(X=[[1.0, np.nan]] * 4), "X"),
    ],
)
def test_bad_input_is_refused_before_anything_is_spent(kwargs, name):
    accountant = PrivacyAccountant(10.0, 1e-3)
    args = dict(X=np.ones((4, 2)), y=[0, 1, 1, 0], epsilon=1.0, delta=1e-6, x_bound=1.0, accountant=accountant, rng=0)
    args.update(kwargs)
    with pytest.raises(ValueError, match=name):
        release_logistic_stats(**args)
    assert accountant.spent == (0.0, 0.0)


def test_over_budget_release_is_refused():
    accountant = PrivacyAccountant(0.5, 1e-3)
    with pytest.raises(BudgetExceededError):
        release_logistic_stats(
            np.ones((4, 2)), [0, 1, 1, 0], epsilon=1.0, delta=1e-6, x_bound=1.0, accountant=accountant
        )
    assert accountant.spent == (0.0, 0.0)


def test_secure_release_is_private():
    release = release_logistic_stats(np.ones((4, 2)), [0, 1, 1, 0], epsilon=1.0, delta=1e-6, x_bound=1.0)
    assert release.private and release.epsilon <= 1.0

"""Sanitized-loss exponential mechanism: log-density, sensitivity Δ_U ≤ v, accounting, input checks."""

import numpy as np
import pymc as pm
import pytensor
import pytensor.tensor as pt
import pytest

from pm_private.privacy.accounting import REPLACE_ONE, BudgetExceededError, PrivacyAccountant
from pm_private.sampling.sanitized import LABEL, logistic_loss, sanitized_loss, sanitized_utility


def data(n=30, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    return X, np.where(rng.random(n) < 0.5, -1.0, 1.0)


def utility_numpy(f, X, y, v, sigma):
    loss = np.logaddexp(0.0, -y * (X @ f))
    return -0.5 * sigma * f @ f - np.sum(v * np.tanh(loss / v))


@pytest.mark.slow
def test_model_log_density_is_the_scaled_utility_with_paper_defaults():
    X, y = data()
    eps = 0.8
    with pm.Model() as model:
        f = pm.Flat("f", shape=3)
        term = sanitized_loss("U", logistic_loss, f, (X, y), epsilon=eps)
    v = 2 * np.log(30)
    assert term.v == pytest.approx(v) and term.sigma == pytest.approx(1e-2 * 2 * v / eps)
    logp = model.compile_logp(mode="CVM")
    for f0 in np.random.default_rng(1).normal(scale=3.0, size=(5, 3)):
        expected = eps / (2 * v) * utility_numpy(f0, X, y, v, term.sigma)
        assert logp({"f": f0}) == pytest.approx(expected, rel=1e-10)


@pytest.fixture(scope="module")
def utility_fn():
    f, X, y = pt.dvector("f"), pt.dmatrix("X"), pt.dvector("y")
    v, sigma = pt.dscalar("v"), pt.dscalar("sigma")
    loss = lambda f, X, y: logistic_loss(f, X, y) - 5.0  # noqa: E731  may go negative: clipped
    return pytensor.function(
        [f, X, y, v, sigma],
        [sanitized_utility(logistic_loss, f, (X, y), v=v, sigma=sigma),
         sanitized_utility(loss, f, (X, y), v=v, sigma=sigma)],
        mode="CVM",
    )


@pytest.mark.slow
def test_sensitivity_of_utility_is_at_most_v_on_random_and_extreme_neighbours(utility_fn):
    rng = np.random.default_rng(2)
    v = 2 * np.log(50)
    worst = 0.0
    for trial in range(300):
        X, y = data(50, 4, seed=trial)
        f = rng.normal(scale=10.0 ** rng.uniform(-1, 3), size=4)
        i = rng.integers(50)
        X2, y2 = X.copy(), y.copy()
        if trial % 2:  # adversarial: a unit-norm record aligned against f with the worst label
            X2[i] = -np.sign(y[i]) * f / np.linalg.norm(f)
            y2[i] = 1.0
        else:
            X2[i], y2[i] = data(1, 4, seed=10_000 + trial)[0][0], -y[i]
        for u, u2 in zip(utility_fn(f, X, y, v, 0.3), utility_fn(f, X2, y2, v, 0.3), strict=True):
            # U holds (σ/2)‖f‖² up to ~10⁶ here: allow its rounding, not a larger change
            assert abs(u - u2) <= v + 1e-14 * max(abs(u), abs(u2))
            worst = max(worst, abs(u - u2))
    assert worst > 0.9 * v  # the bound is nearly attained, so the test has teeth


def test_accountant_records_epsilon_as_approximate():
    X, y = data()
    acct = PrivacyAccountant(epsilon=1.0)
    with pm.Model():
        f = pm.Flat("f", shape=3)
        term = sanitized_loss("U", logistic_loss, f, (X, y), epsilon=0.7, accountant=acct)
        (entry,) = acct.ledger
        assert (entry.epsilon, entry.label, entry.neighbours) == (0.7, LABEL, REPLACE_ONE)
        assert LABEL == "approximate (MCMC)" and term.label == LABEL
        with pytest.raises(BudgetExceededError):
            sanitized_loss("U2", logistic_loss, f, (X, y), epsilon=0.5, accountant=acct)
        assert [p.name for p in pm.modelcontext(None).potentials] == ["U"]
    assert acct.spent == (0.7, 0.0)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"epsilon": 0.0}, "epsilon"),
        ({"epsilon": -1.0}, "epsilon"),
        ({"epsilon": 1.0, "v": 0.0}, "v must"),
        ({"epsilon": 1.0, "sigma": -1.0}, "sigma"),
        ({"epsilon": 1.0, "data": (np.zeros((5, 2)), np.zeros(4))}, "same n"),
        ({"epsilon": 1.0, "data": (np.zeros((1, 3)), np.ones(1))}, "n ≥ 2"),
        ({"epsilon": 1.0, "loss": lambda f, X, y: logistic_loss(f, X, y).sum()}, "one value per record"),
    ],
)
def test_bad_input(kwargs, match):
    X, y = data()
    args = {"loss": logistic_loss, "data": (X, y)} | kwargs
    with pm.Model():
        f = pm.Flat("f", shape=3)
        with pytest.raises(ValueError, match=match):
            sanitized_loss("U", args.pop("loss"), f, args.pop("data"), **args)


@pytest.mark.slow
def test_loss_of_wrong_length_fails_when_evaluated():
    X, y = data()
    with pm.Model() as model:
        f = pm.Flat("f", shape=3)
        sanitized_loss("U", lambda f, X, y: logistic_loss(f, X[:-1], y[:-1]), f, (X, y), epsilon=1.0)
    with pytest.raises(AssertionError, match="one value per record"):
        model.compile_logp(mode="CVM")({"f": np.zeros(3)})

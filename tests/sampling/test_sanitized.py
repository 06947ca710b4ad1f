"""Sanitized-loss exponential mechanism: log-density, sensitivity Δ_U ≤ v, accounting, input checks."""

import numpy as np
import pymc as pm
import pytensor
import pytensor.tensor as pt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pm_private.privacy.accountant import PrivacyAccountant
from pm_private.privacy.budget import REPLACE_ONE, BudgetExceededError
from pm_private.sampling.sanitized import LABEL, bounded_terms, logistic_loss, sanitized_loss, sanitized_utility


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
    logp = model.compile_logp(mode="FAST_COMPILE")
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
        [
            sanitized_utility(logistic_loss, f, (X, y), v=v, sigma=sigma),
            sanitized_utility(loss, f, (X, y), v=v, sigma=sigma),
        ],
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


def test_loss_of_wrong_length_is_refused_before_anything_is_charged():
    X, y = data()
    acct = PrivacyAccountant(epsilon=1.0)
    with pm.Model() as model:
        f = pm.Flat("f", shape=3)
        with pytest.raises(ValueError, match="one value per record: got 29 values for n = 30"):
            sanitized_loss(
                "U", lambda f, X, y: logistic_loss(f, X[:-1], y[:-1]), f, (X, y), epsilon=1.0, accountant=acct
            )
    assert acct.spent == (0.0, 0.0) and model.potentials == []


def test_loss_without_shape_inference_is_checked_at_the_initial_point():
    X, y = data()

    class Opaque(pytensor.graph.op.Op):  # no infer_shape: the length needs a value of f
        __props__ = ()

        def make_node(self, x):
            x = pt.as_tensor(x)
            return pytensor.graph.basic.Apply(self, [x], [x.type()])

        def perform(self, node, inputs, outputs):
            outputs[0][0] = inputs[0][:-1]

    with pm.Model():
        f = pm.Normal("f", shape=3)
        with pytest.raises(ValueError, match="got 29 values for n = 30"):
            sanitized_loss("U", lambda f, X, y: Opaque()(logistic_loss(f, X, y)), f, (X, y), epsilon=1.0)


@pytest.mark.parametrize(
    "records, match",
    [
        ((np.full((30, 3), np.nan), np.ones(30)), "data array 0 contains NaN or infinite values"),
        ((np.zeros((30, 3)), np.r_[np.ones(29), np.inf]), r"data array 1 .* \(first in record 29\)"),
        ((np.zeros((30, 3)), np.array(["a"] * 30)), "data array 1 must hold numbers"),
        ((np.zeros((30, 3)), np.array([object()] * 30)), "data array 1 must hold numbers"),
        ((np.zeros((30, 3)) + 1j, np.ones(30)), "data array 0 must hold numbers"),
    ],
)
def test_non_finite_or_non_numeric_records_are_refused_without_printing_them(records, match):
    acct = PrivacyAccountant(epsilon=1.0)
    with pm.Model():
        f = pm.Flat("f", shape=3)
        with pytest.raises(ValueError, match=match) as info:
            sanitized_loss("U", logistic_loss, f, records, epsilon=1.0, accountant=acct)
    assert "nan" not in str(info.value) and "inf " not in str(info.value)
    assert acct.spent == (0.0, 0.0)


def test_term_refuses_to_be_pickled_or_copied():
    import copy
    import pickle

    import cloudpickle

    X, y = data()
    with pm.Model():
        f = pm.Flat("f", shape=3)
        term = sanitized_loss("U", logistic_loss, f, (X, y), epsilon=1.0)
    for dump in (pickle.dumps, cloudpickle.dumps, copy.deepcopy, copy.copy):
        with pytest.raises(TypeError, match="holds the private records"):
            dump(term)


@pytest.fixture(scope="module")
def terms_fn():
    losses, v = pt.dvector("losses"), pt.dscalar("v")
    return pytensor.function([losses, v], bounded_terms(losses, v), mode="CVM")


special = st.sampled_from([np.nan, np.inf, -np.inf, 1e308, -1e308, 5e-324, 0.0, -0.0])
loss_values = st.one_of(special, st.floats(allow_nan=True, allow_infinity=True))


@settings(max_examples=200, deadline=None)
@given(
    losses=st.lists(loss_values, min_size=1, max_size=20),
    replacement=loss_values,
    index=st.integers(0, 19),
    v=st.sampled_from([1e-3, 1.0, 2 * np.log(30), 1e6]),
)
def test_bounded_terms_keep_the_sensitivity_bound_for_any_loss_value(terms_fn, losses, replacement, index, v):
    losses = np.array(losses)
    neighbour = losses.copy()
    neighbour[index % len(losses)] = replacement
    terms, terms2 = terms_fn(losses, v), terms_fn(neighbour, v)
    assert np.all((terms >= 0) & (terms <= v)) and np.all((terms2 >= 0) & (terms2 <= v))
    assert abs(terms.sum() - terms2.sum()) <= v * (1 + 1e-12)
    assert np.all(terms[np.isnan(losses)] == v)


@pytest.mark.slow
def test_loss_that_returns_nan_gives_a_finite_density_with_the_term_at_v():
    X, y = data()
    X[0, 2] = -2.0  # a finite record on which the loss below is log(−1) = NaN

    def loss(f, X, y):
        return logistic_loss(f, X, y) + pt.log1p(X[:, 2])

    eps = 1.0
    with pm.Model() as model:
        f = pm.Flat("f", shape=3)
        term = sanitized_loss("U", loss, f, (X, y), epsilon=eps)
    f0 = np.array([1.0, -1.0, 0.5])
    rest = np.maximum(np.logaddexp(0.0, -y[1:] * (X[1:] @ f0)) + np.log1p(X[1:, 2]), 0.0)
    expected = eps / (2 * term.v) * (-0.5 * term.sigma * f0 @ f0 - term.v - np.sum(term.v * np.tanh(rest / term.v)))
    assert model.compile_logp(mode="FAST_COMPILE")({"f": f0}) == pytest.approx(expected, rel=1e-12)

"""Bad public parameters and records are refused before any spend, with the argument named.

Each case was found by the fuzz sweep (tests/contracts/test_fuzz.py explains it): before the checks these
calls returned NaN or infinite results, or failed with errors that did not name the argument.
"""

import numpy as np
import pymc as pm
import pytest

from pm_private.linear import adassp, linear_stats, release_linear_stats
from pm_private.linear.bounds import _tune_release
from pm_private.logistic import DPElasticNetLogisticRegression, data_perturbation_sgd, select_penalty
from pm_private.privacy.accountant import PrivacyAccountant
from pm_private.sampling.sanitized import logistic_loss, sanitized_loss
from pm_private.survival import (
    DiscreteTimeData,
    interval_basis,
    output_perturbation,
    scale_covariates,
    scale_times,
    simulate_discrete_time,
    simulate_weibull,
    weibull_laplace,
    weibull_private,
)

RNG = np.random.default_rng(0)
X = RNG.uniform(-1, 1, size=(40, 3)) / 2
Y = RNG.uniform(-1, 1, size=40)
LABELS = (RNG.random(40) < 0.5).astype(int)
TIME = RNG.uniform(0.05, 0.95, size=40)
EVENT = (RNG.random(40) < 0.6).astype(int)


def _sanitized(accountant, **kwargs):
    with pm.Model():
        f = pm.Flat("f", shape=3)
        sanitized_loss("U", logistic_loss, f, (X, np.sign(Y)), accountant=accountant, **kwargs)


CASES = {
    "x_bound overflows": (
        lambda a: release_linear_stats(X, Y, noise="laplace", epsilon=1.0, x_bound=1e308, y_bound=1.0, accountant=a),
        "x_bound",
    ),
    "y_bound underflows": (
        lambda a: release_linear_stats(X, Y, noise="laplace", epsilon=1.0, x_bound=1.0, y_bound=5e-324, accountant=a),
        "y_bound",
    ),
    "adassp x_bound overflows": (
        lambda a: adassp(X, Y, epsilon=1.0, delta=1e-5, x_bound=1e308, y_bound=1.0, accountant=a),
        "x_bound",
    ),
    "adassp rho underflows": (
        lambda a: adassp(X, Y, epsilon=1.0, delta=1e-5, x_bound=1.0, y_bound=1.0, rho=5e-324, accountant=a),
        "rho",
    ),
    "elastic net x_bound overflows": (
        lambda a: DPElasticNetLogisticRegression(x_bound=1e308, accountant=a).fit(X, LABELS),
        "x_bound",
    ),
    "sgd x_bound overflows": (
        lambda a: data_perturbation_sgd(X, LABELS, epsilon=1.0, delta=1e-5, x_bound=1e308, batch_size=10, accountant=a),
        "x_bound",
    ),
    "sgd batch_size not an integer": (
        lambda a: data_perturbation_sgd(
            X, LABELS, epsilon=1.0, delta=1e-5, x_bound=1.0, batch_size=np.nan, accountant=a
        ),
        "batch_size",
    ),
    "sanitized v underflows": (lambda a: _sanitized(a, epsilon=1.0, v=5e-324), "v must lie in"),
    "discrete-time regularization underflows": (
        lambda a: output_perturbation(X, TIME, EVENT, epsilon=1.0, regularization=5e-324, q=5, e=2, accountant=a),
        "regularization",
    ),
    "discrete-time q not an integer": (
        lambda a: output_perturbation(X, TIME, EVENT, epsilon=1.0, regularization=0.1, q=[1, 2], e=2, accountant=a),
        "q",
    ),
    "weibull omega underflows": (
        lambda a: weibull_private(TIME, EVENT, epsilon=1.0, horizon=1.0, omega=5e-324, accountant=a),
        "omega",
    ),
    "weibull omega overflows": (
        lambda a: weibull_private(TIME, EVENT, epsilon=1.0, horizon=1.0, omega=1e308, accountant=a),
        "omega",
    ),
    "weibull gamma overflows": (
        lambda a: weibull_laplace(TIME, EVENT, epsilon=1.0, horizon=1.0, gamma=1e308, accountant=a),
        "gamma",
    ),
    "time is a string": (lambda a: scale_times("abc", horizon=1.0), "time"),
    "floor is None": (lambda a: scale_times(TIME, horizon=1.0, floor=None), "floor"),
    "bound is a string": (lambda a: scale_covariates(X, bound="abc"), "bound"),
    "bound underflows": (lambda a: scale_covariates(X, bound=5e-324), "bound"),
    "records overflow": (lambda a: linear_stats(np.full((3, 2), 1e308), np.ones(3)), "X and y"),
    "q is NaN": (lambda a: interval_basis(np.nan, 3), "q"),
    "q is huge": (lambda a: interval_basis(1e308, 3), "q"),
    "alpha missing": (lambda a: simulate_discrete_time(10, alpha=None, beta=[0.5], q=5), "alpha"),
    "beta NaN": (lambda a: simulate_discrete_time(10, alpha=[-2.0, -1.0], beta=[np.nan], q=5), "beta"),
    "censoring a string": (
        lambda a: simulate_discrete_time(10, alpha=[-2.0, -1.0], beta=[0.5], censoring="abc"),
        "censoring",
    ),
    "n not an integer": (lambda a: simulate_weibull(np.inf, shape=1.0, scale=1.0), "n"),
    "split grid step underflows (was OverflowError; 1e-300 ran for ever)": (
        lambda a: _tune_release(40, 3, 1.0, 1.0, 1.0, split_grid_step=5e-324),
        "split_grid_step",
    ),
    "tune_release ω grid overflows": (lambda a: _tune_release(40, 3, 1.0, 1.0, 1.0, omegas=[0.5, 1e308]), "omegas"),
    "weibull gamma subnormal (was ZeroDivisionError after the reservation)": (
        lambda a: weibull_private(TIME, EVENT, epsilon=1.0, horizon=1.0, gamma=5e-324, accountant=a),
        "gamma",
    ),
    "select_penalty delta subnormal (was an infinite stability constant)": (
        lambda a: select_penalty(
            X, LABELS, lams=[0.5, 1.0], alpha=0.5, epsilon=1.0, delta=5e-324, x_bound=1.0, accountant=a
        ),
        "delta",
    ),
    "select_penalty lams strings": (
        lambda a: select_penalty(
            X, LABELS, lams=["x", "y"], alpha=0.5, epsilon=1.0, delta=1e-5, x_bound=1.0, accountant=a
        ),
        "lams",
    ),
    "basis a string": (lambda a: DiscreteTimeData(X, np.zeros(40, int), EVENT, "abc"), "basis"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_refused_before_spending_with_the_argument_named(case):
    call, name = CASES[case]
    accountant = PrivacyAccountant(10.0, 0.5)
    with pytest.raises(ValueError, match=name) as info:
        call(accountant)
    assert "could not convert" not in str(info.value)
    assert accountant.spent == (0.0, 0.0)

"""Errors name the argument and never print a private value (a record, a largest norm, a residual)."""

import re

import numpy as np
import pytest

from pm_private.logistic.elastic_net import to_signed_labels
from pm_private.logistic.proximal import ConvergenceError, solve_elastic_net_logistic
from pm_private.privacy.validation import as_matrix, as_vector
from pm_private.survival.data import check_survival, interval_index, scale_times
from pm_private.survival.discrete.mechanisms import output_perturbation
from pm_private.survival.discrete.ops import check_hazard_records

SECRET = 31337.25  # a private value that must not appear in any message
TEXT = "31337"


def _message(call) -> str:
    with pytest.raises(ValueError) as info:
        call()
    return str(info.value)


CASES = {
    "event value": (lambda: check_survival([1.0, 2.0], [1, SECRET]), "event"),
    "negative time": (lambda: scale_times([1.0, -SECRET], horizon=10.0), "time"),
    "time past the horizon": (lambda: scale_times([1.0, SECRET], horizon=10.0), "time"),
    "scaled time": (lambda: interval_index([0.5, SECRET], 4), "scaled times"),
    "label value": (lambda: to_signed_labels([0.0, 1.0, SECRET], 3), "labels y"),
    "string in X": (lambda: as_matrix([["31337", "a"]]), "X must be numeric"),
    "string in y": (lambda: as_vector(["31337"], 1), "y must be numeric"),
    "hazard event": (lambda: check_hazard_records(np.zeros((2, 1)), [0, 1], [0, SECRET], 3), "event"),
    "row norm of the discrete-time design": (
        lambda: output_perturbation(
            np.array([[0.1, 0.2], [SECRET, 0.0]]), [0.5, 0.5], [1, 0], epsilon=1.0, regularization=0.1, q=4, e=2
        ),
        r"X has rows with ‖x‖ > 1 \(first in row 1\)",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_error_names_the_argument_and_hides_the_value(case):
    call, names = CASES[case]
    message = _message(call)
    assert TEXT not in message and "largest" not in message
    assert re.search(names, message), message


def test_non_convergence_error_does_not_print_the_residual():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(50, 3)), np.where(rng.random(50) < 0.5, -1.0, 1.0)
    with pytest.raises(ConvergenceError) as info:
        solve_elastic_net_logistic(X, y, 1e-6, 0.0, max_iter=10)
    assert str(info.value) == "elastic-net solver did not converge to the KKT tolerance 1e-10 in 10 iterations"

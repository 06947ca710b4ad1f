"""Bad records for the discrete-time hazard likelihood are refused, never read out of bounds."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pymc as pm
import pytest

from pm_private.survival import DiscreteTimeHazard
from pm_private.survival.discrete.ops import check_hazard_records

ROOT = Path(__file__).resolve().parents[2]

# Run in a child process: before the checks, a short interval made the compiled kernel read
# past the end of the array and the process died with SIGSEGV.
CHILD = textwrap.dedent(
    """
    import numpy as np, pytensor, pytensor.tensor as pt
    import pymc as pm
    from pm_private.survival import check_hazard_records
    from pm_private.survival.discrete.ops import hazard_record_loss

    X = np.random.default_rng(0).normal(size=(50, 2))
    outcomes = []
    try:
        check_hazard_records(X, np.zeros(3, dtype=int), np.zeros(3), 5)
        outcomes.append("accepted")
    except ValueError as error:
        outcomes.append("interval" in str(error))
    g, eta = pt.dvector("g"), pt.dvector("eta")
    interval, event = pt.lvector("interval"), pt.bvector("event")
    for link in ("logit", "cloglog"):
        loss = hazard_record_loss(g, eta, interval, event, link)
        fn = pytensor.function([g, eta, interval, event], [loss, pytensor.grad(loss.sum(), [g, eta])[0]], mode="FAST_COMPILE")
        for k, d in [(np.zeros(3, int), np.zeros(50, np.int8)), (np.full(50, 5), np.zeros(50, np.int8)),
                     (np.full(50, -1), np.zeros(50, np.int8)), (np.zeros(50, int), np.full(50, 2, np.int8)),
                     (np.zeros(50, int), np.zeros(7, np.int8))]:
            try:
                fn(np.zeros(5), np.zeros(50), k, d)
                outcomes.append("accepted")
            except ValueError:
                outcomes.append(True)
    print(outcomes)
    assert all(o is True for o in outcomes), outcomes
    """
)


@pytest.mark.slow
def test_bad_intervals_and_events_are_refused_at_run_time_without_crashing():
    env = os.environ | {"PYTHONPATH": str(ROOT)}
    child = subprocess.run(
        [sys.executable, "-c", CHILD], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert child.returncode == 0, (child.returncode, child.stdout, child.stderr[-2000:])


@pytest.mark.parametrize(
    "X, interval, event, match",
    [
        (np.full((4, 2), np.nan), [0, 1, 2, 3], [0, 1, 0, 1], "X contains NaN"),
        (np.zeros((4, 2)), [0, 1, 2, 3], [0, 2, 0, 1], "event must be 0 or 1"),
        (np.zeros((4, 2)), [0, 1, 2, 3], [0, 0.5, 0, 1], "event must be 0 or 1"),
        (np.zeros((4, 2)), [0, 1, 2, 5], [0, 1, 0, 1], r"interval must hold integers in 0 … 4"),
        (np.zeros((4, 2)), [0, 1, -1, 3], [0, 1, 0, 1], "interval must hold integers"),
        (np.zeros((4, 2)), [0, 1, 1.5, 3], [0, 1, 0, 1], "interval must hold integers"),
        (np.zeros((4, 2)), [0, 1, 2], [0, 1, 0, 1], r"interval must have shape \(4,\)"),
        (np.zeros((4, 2)), [0, 1, 2, 3], [0, 1], r"event must have shape \(4,\)"),
        (np.zeros(4), [0, 1, 2, 3], [0, 1, 0, 1], "X must be 2-D"),
        ([["a", "b"]] * 4, [0, 1, 2, 3], [0, 1, 0, 1], "X must be numeric"),
        (np.zeros((4, 2)), ["a"] * 4, [0, 1, 0, 1], "interval must be numeric"),
    ],
)
def test_discrete_time_hazard_refuses_bad_records_naming_the_argument(X, interval, event, match):
    with pm.Model() as model:
        beta, gamma = pm.Normal("beta", shape=2), pm.Normal("gamma", shape=5)
        with pytest.raises(ValueError, match=match):
            X, interval, event = check_hazard_records(X, interval, event, 5)
            DiscreteTimeHazard("L", gamma, X @ beta, observed=np.column_stack([interval, event]))
    assert model.potentials == [] and model.observed_RVs == []


def test_check_hazard_records_converts_valid_records():
    X, k, d = check_hazard_records([[1, 2], [3, 4]], [0.0, 3.0], [True, False], 4)
    assert X.dtype == np.float64 and k.dtype == np.int64 and d.dtype == np.int8
    np.testing.assert_array_equal(k, [0, 3])
    np.testing.assert_array_equal(d, [1, 0])
    _, k, _ = check_hazard_records([[1.0]], [7], [0], None)  # q not known before run time
    assert k[0] == 7

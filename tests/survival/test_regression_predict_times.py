"""predict_survival_regression reads its curves at any times, as predict_survival does: between the
interval ends the cumulative hazard is linear (piecewise-exponential) or a step (cloglog)."""

import numpy as np
import pytest
import xarray as xr

from pm_private.survival import predict_survival_regression
from pm_private.survival.exits.model import HAZARDS

RNG = np.random.default_rng(0)
ENDS = [1.0, 2.0, 4.0]
H = np.cumsum(RNG.gamma(2.0, 0.1, size=(2, 30, 2, 3)), axis=-1)  # (chain, draw, cell, interval)
BETA = RNG.normal(0.0, 0.5, size=(2, 30, 2))
POSTERIOR = xr.Dataset(
    {"beta": (("chain", "draw", "feature"), BETA), "cumulative_hazard": (("chain", "draw", "cell", "interval"), H)},
    coords={"feature": ["age", "dose"], "cell": ["a", "b"], "interval": ENDS},
)
X = np.array([[0.3, -1.0], [1.2, 0.4]])


def _tree(hazard: str) -> xr.DataTree:
    constant = xr.Dataset({"hazard_code": ((), HAZARDS[hazard]), "x_bound": ((), np.inf)})
    return xr.DataTree.from_dict({"posterior": POSTERIOR, "constant_data": constant})


def _brute_force(times, cell: int, step: bool) -> np.ndarray:
    """S(t | x) per draw by hand: H₀ interpolated from (0, 0) through the ends, then exp(−H₀·e^η)."""
    knots = np.concatenate([[0.0], ENDS])
    padded = np.concatenate([np.zeros((2, 30, 1)), H[:, :, cell, :]], axis=-1)
    if step:
        hazard = padded[..., np.searchsorted(ENDS, times, side="right")]
    else:
        hazard = np.stack([[np.interp(times, knots, padded[c, s]) for s in range(30)] for c in range(2)])
    eta = BETA @ X.T  # (chain, draw, m)
    return np.exp(-hazard[..., None, :] * np.exp(eta)[..., None]).reshape(60, 2, -1).mean(axis=0)


@pytest.mark.parametrize("hazard", ["piecewise_exponential", "cloglog"])
def test_curves_at_any_times_match_a_brute_force_reading(hazard):
    times = np.array([0.0, 0.5, 1.0, 1.7, 3.0, 4.0])
    table = predict_survival_regression(_tree(hazard), X, times=times, cell="b")
    expected = _brute_force(times, 1, hazard == "cloglog")
    np.testing.assert_allclose(table["mean"].to_numpy().reshape(2, -1), expected, rtol=1e-12)
    assert table.index.get_level_values("time").tolist() == times.tolist() * 2


def test_the_default_times_are_the_interval_ends():
    at_ends = predict_survival_regression(_tree("piecewise_exponential"), X, times=ENDS, cell="a")
    default = predict_survival_regression(_tree("piecewise_exponential"), X, cell="a")
    np.testing.assert_allclose(at_ends.to_numpy(), default.to_numpy(), rtol=1e-12)


def test_times_beyond_the_horizon_or_without_the_record_are_refused():
    with pytest.raises(ValueError, match="horizon"):
        predict_survival_regression(_tree("piecewise_exponential"), X, times=[5.0], cell="a")
    with pytest.raises(ValueError, match="times: .*DataTree"):
        predict_survival_regression(POSTERIOR, X, times=[1.0], cell="a")

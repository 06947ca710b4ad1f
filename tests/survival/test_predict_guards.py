"""predict_survival_regression refuses cumulative hazards that are not one (NaN, infinite, negative,
decreasing) and returns survival probabilities in [0, 1] for every finite linear predictor."""

import numpy as np
import pytest
import xarray as xr

from pm_private.survival import predict_survival_regression

LOG2 = np.log(2.0)


def _posterior(hazard, beta=LOG2):
    """A posterior Dataset of one cell and two intervals: ``hazard`` of shape (draws, 2)."""
    hazard = np.asarray(hazard, dtype=np.float64)
    draws = hazard.shape[0]
    return xr.Dataset(
        {
            "beta": (("chain", "draw", "feature"), np.full((1, draws, 1), beta)),
            "cumulative_hazard": (("chain", "draw", "cell", "interval"), hazard[None, :, None, :]),
        },
        coords={"feature": ["dose"], "cell": ["all"], "interval": [1.0, 2.0]},
    )


@pytest.mark.parametrize(
    "hazard",
    [
        [[0.1, 0.5], [np.nan, 0.5]],
        [[0.1, 0.5], [0.1, np.inf]],
        [[0.1, 0.5], [-np.inf, 0.5]],
        [[0.1, 0.5], [-0.5, -1.0]],
        [[0.1, 0.5], [0.5, 0.1]],
    ],
    ids=["nan", "inf", "minus-inf", "negative", "decreasing"],
)
def test_a_cumulative_hazard_that_is_not_one_is_refused_naming_idata(hazard):
    with pytest.raises(ValueError, match=r"idata: its cumulative_hazard draws"):
        predict_survival_regression(_posterior(hazard), [[0.0], [1.0]])


def test_a_zero_hazard_survives_an_overflowing_linear_predictor():
    # exp(x·β) overflows to ∞ for x·β > 709: 0·∞ was NaN, S = exp(−H₀·e^η) is 1 at H₀ = 0
    table = predict_survival_regression(_posterior([[0.0, 0.5], [0.0, 0.7]], beta=1.0), [[800.0]])
    assert table["mean"].tolist() == [1.0, 0.0]
    assert np.isfinite(table[["mean", "lower", "upper"]].to_numpy()).all()


def test_survival_lies_in_the_unit_interval_and_matches_the_formula():
    rng = np.random.default_rng(0)
    hazard = np.cumsum(rng.exponential(0.3, size=(50, 2)), axis=1)
    hazard[0] = 0.0  # a draw with no hazard yet
    X = [[-30.0], [0.0], [2.0], [30.0]]
    table = predict_survival_regression(_posterior(hazard), X)
    values = table[["mean", "lower", "upper"]].to_numpy()
    assert ((values >= 0) & (values <= 1)).all()
    expected = np.exp(-hazard[None] * 2.0 ** np.array(X)[:, :, None]).mean(axis=1)  # (rows, interval)
    np.testing.assert_allclose(table["mean"].to_numpy(), expected.ravel(), rtol=1e-12, atol=1e-300)

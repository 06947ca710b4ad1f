"""fit_summary refuses draws that hold NaN or infinite values, naming the variable, rather than
printing a table of NaN."""

import io

import numpy as np
import pytest
import xarray as xr

from pm_private import print_summary
from pm_private.released.summary import fit_summary


def _tree(beta, intercept):
    posterior = xr.Dataset(
        {
            "beta": (("chain", "draw", "feature"), beta),
            "intercept": (("chain", "draw"), intercept),
        },
        coords={"feature": ["a", "b"]},
    )
    return xr.DataTree.from_dict({"posterior": posterior})


def _draws():
    rng = np.random.default_rng(0)
    return rng.normal(size=(2, 100, 2)), rng.normal(size=(2, 100))


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_coefficient_draws_are_refused_naming_them(bad):
    beta, intercept = _draws()
    beta[1, 7, 1] = bad
    with pytest.raises(ValueError, match=r"idata: the posterior draws of \['beta\[b\]'\] hold NaN or infinite"):
        fit_summary(_tree(beta, intercept))
    beta, intercept = _draws()
    intercept[0, 3] = bad
    with pytest.raises(ValueError, match=r"\['intercept'\]"):
        print_summary(_tree(beta, intercept), file=io.StringIO())


def test_finite_draws_give_a_table_without_nan():
    table = fit_summary(_tree(*_draws()))
    assert list(table.index) == ["intercept", "beta[a]", "beta[b]"]
    assert np.isfinite(table.to_numpy()).all()

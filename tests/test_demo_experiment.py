"""The demo's experiment: its rows carry Spearman and held-out R², and a subset of methods runs alone."""

import numpy as np
import pytest

from pm_private.demo import run_experiment


def test_adassp_alone_gives_rows_with_spearman_and_r2():
    results = run_experiment(
        n_drugs=1,
        genes=5,
        private_sizes=(200,),
        epsilons=(2.0,),
        repeats=2,
        seed=3,
        progress=False,
        methods=("AdaSSP",),
    )
    assert list(results.columns) == ["method", "n_private", "epsilon", "drug", "repeat", "spearman", "r2"]
    assert set(results.method) == {"AdaSSP"} and len(results) == 2
    assert np.all(results.r2 <= 1) and np.all(np.abs(results.spearman) <= 1)
    assert results.r2.nunique() == 2  # two splits, two different scores


def test_unknown_methods_are_refused_before_any_work():
    with pytest.raises(ValueError, match="non-empty subset"):
        run_experiment(methods=("AdaSSP", "ridge"), progress=False)
    with pytest.raises(ValueError, match="non-empty subset"):
        run_experiment(methods=(), progress=False)

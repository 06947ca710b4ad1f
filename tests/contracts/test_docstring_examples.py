"""The Examples sections of the mechanism entry points run and print what they show.

Each mechanism's docstring states its guarantee in a ``Privacy:`` paragraph of its Notes and
shows a seeded call (reproducible, hence marked not private).  The examples are run here with
:mod:`doctest`, so they cannot drift from the code.
"""

import doctest
import importlib

import pytest

MECHANISMS = {
    "pm_private.linear.release": ["release_linear_stats_laplace", "release_linear_stats", "clip_report"],
    "pm_private.linear.adaptive_ssp": ["adassp"],
    "pm_private.stats": ["release_logistic_stats"],
    "pm_private.poisson": ["release_poisson_stats"],
    "pm_private.survival.weibull.mechanisms": ["weibull_private", "weibull_laplace", "weibull_sample_aggregate"],
    "pm_private.survival.discrete.mechanisms": ["output_perturbation", "objective_perturbation"],
    "pm_private.privacy.primitives": ["laplace_mechanism", "gaussian_mechanism", "exponential_mechanism"],
    "pm_private.sampling.sanitized": ["sanitized_loss"],
}

ENTRY_POINTS = [(module, name) for module, names in MECHANISMS.items() for name in names]


def _function(module: str, name: str):
    return getattr(importlib.import_module(module), name)


@pytest.mark.parametrize(("module", "name"), ENTRY_POINTS, ids=[name for _, name in ENTRY_POINTS])
def test_mechanism_docstring_states_privacy_and_examples(module, name):
    doc = _function(module, name).__doc__
    assert "Privacy:" in doc and "Examples\n" in doc, f"{name}: no Privacy paragraph or Examples section"


@pytest.mark.parametrize(("module", "name"), ENTRY_POINTS, ids=[name for _, name in ENTRY_POINTS])
def test_mechanism_examples_run(module, name):
    function = _function(module, name)
    finder = doctest.DocTestFinder(recurse=False)
    tests = [t for t in finder.find(function, f"{module}.{name}", globs={}) if t.examples]
    assert tests, f"{name} has no runnable example"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in tests:
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples of {name} failed (see the output above)"

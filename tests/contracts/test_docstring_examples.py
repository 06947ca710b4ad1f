"""The Examples sections of the mechanism entry points run and print what they show.

Each mechanism's docstring states its guarantee in a ``Privacy:`` paragraph of its Notes and
shows a seeded call (reproducible, hence marked not private).  The examples are run here with
:mod:`doctest`, so they cannot drift from the code.
"""

import doctest
import importlib

import pytest
from cards import CARDS

#: (defining module, name) of each mechanism whose card asks for an example, and of the other
#: entry points with one.
ENTRY_POINTS = [(card.resolve().__module__, card.name) for card in CARDS if card.example] + [
    ("pm_private.linear.clipping", "clip_report"),
]


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

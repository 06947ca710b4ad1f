"""Every numpydoc section of every docstring in pm_private starts at the docstring's margin.

An indented header (``    Parameters`` under a summary at the margin) is read by numpydoc as
part of the text above it, so the section silently disappears from the rendered page.
"""

import ast
import inspect
from pathlib import Path

import pm_private

SECTIONS = {
    "Parameters",
    "Other Parameters",
    "Returns",
    "Yields",
    "Raises",
    "Warns",
    "Warnings",
    "See Also",
    "Notes",
    "References",
    "Examples",
    "Attributes",
    "Methods",
}
ROOT = Path(pm_private.__file__).parent


def misplaced_sections(docstring: str) -> list[str]:
    """Section headers (a section name over a rule of dashes) that are indented after cleandoc."""
    lines = inspect.cleandoc(docstring).splitlines()
    return [
        line
        for line, rule in zip(lines, lines[1:], strict=False)
        if line.strip() in SECTIONS and set(rule.strip()) == {"-"} and line != line.strip()
    ]


def test_no_indented_section_header():
    bad = []
    for path in sorted(ROOT.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)):
                docstring = ast.get_docstring(node, clean=False)
                if docstring and misplaced_sections(docstring):
                    bad.append(f"{path.relative_to(ROOT)}:{getattr(node, 'name', '<module>')}")
    assert bad == []


def test_the_check_sees_an_indented_header():
    assert misplaced_sections("Summary.\n\n        Parameters\n        ----------\n    x : int\n")
    assert not misplaced_sections("Summary.\n\n    Parameters\n    ----------\n    x : int\n        A value.\n")

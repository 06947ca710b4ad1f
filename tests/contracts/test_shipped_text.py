"""Shipped text cites papers by author and year only.

What a user gets (the package's source, hence its docstrings, error messages, CLI help and
mechanism names; the README; the notebooks; the model and benchmark scripts; the
documentation sources) must not point to material that does not ship: internal paper numbers,
the internal specification, issue numbers or test files.  Citations must be unambiguous
(Nguyên & Hui wrote two 2017 papers: 2017a, 2017b) and not doubled up.
"""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SHIPPED = [
    "pm_private/**/*.py",
    "README.md",
    "pyproject.toml",
    "notebooks/*.ipynb",
    "models/*.py",
    "benchmarks/*.py",
    "docs/*.md",
    "docs/*.py",
    "docs/_templates/**/*.rst",
]  # not docs/_build, docs/api or docs/examples: the docs build writes those from the files above

FORBIDDEN = {
    "internal paper number": r"\b[Pp]apers?\s+0\d\d\b",
    "internal specification": r"\bSPEC\b|shared/",
    "test file": r"\btests/",
    "issue number": r"\b[Ii]ssues?\s+#?\d+",
    "ambiguous Nguyên & Hui 2017 (a or b?)": r"Nguyên & Hui,? \(?2017(?![ab])",
    "doubled citation": r"(?P<a>\b[A-Z]\w+ (?:et al|& [A-Z]\w+))\.?(?:'s)?,? \(?\d{4}[ab]?\)?[^.()\n]{0,20}\((?P=a)"
    r"|Nguyên & Hui, Nguyên & Hui",
}


def _shipped_files() -> list[Path]:
    files = set()
    for pattern in SHIPPED:
        files.update(p for p in ROOT.glob(pattern) if p.is_file())
    return sorted(files)


def _hits(text: str) -> list[str]:
    found = []
    for what, pattern in FORBIDDEN.items():
        for match in re.finditer(pattern, text):
            line = text.count("\n", 0, match.start()) + 1
            found.append(f"line {line}: {what}: {match.group(0)!r}")
    return found


def test_shipped_files_are_found():
    names = {p.relative_to(ROOT).as_posix() for p in _shipped_files()}
    assert {"README.md", "pm_private/__init__.py", "docs/conf.py", "docs/privacy.md"} <= names
    assert any(n.startswith("notebooks/") for n in names) and any(n.startswith("models/") for n in names)


@pytest.mark.parametrize(
    "text",
    [
        "as in paper 003",
        "see SPEC (4)–(5)",
        "../shared/SPEC.md",
        "checked in tests/test_weibull.py",
        "fixed in issue #12",
        "(Nguyên & Hui 2017, Weibull)",
        "Kang et al. (2020) (Kang et al. 2020) adds",
        "Honkela et al's (2018) experiment (Honkela et al. 2018, §4.5)",
        "LSP + TLL (Nguyên & Hui, Nguyên & Hui (2017b))",
    ],
)
def test_patterns_catch_what_they_are_meant_to(text):
    assert _hits(text)


@pytest.mark.parametrize(
    "text",
    [
        "Nguyên & Hui (2017a) Alg. 2",
        "(Nguyên & Hui 2017b, §IV)",
        "Yu et al. (2014) Thm 2.1",
        "specification",
        "the test suite checks it",
    ],
)
def test_patterns_spare_proper_citations(text):
    assert not _hits(text)


def test_no_internal_references_in_shipped_text():
    problems = []
    for path in _shipped_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        problems += [f"{path.relative_to(ROOT)}: {hit}" for hit in _hits(text)]
    assert not problems, "shipped text cites internal material:\n" + "\n".join(problems)


def test_python_files_named_in_shipped_text_exist():
    """A module renamed or split leaves no reference to its old file name behind."""
    sources = ("pm_private/**/*.py", "models/*.py", "benchmarks/*.py", "tests/**/*.py", "docs/*.py")
    existing = {p.name for pattern in sources for p in ROOT.glob(pattern)}
    missing = []
    for path in _shipped_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        for match in re.finditer(r"\b[A-Za-z_][\w/.]*?\.py\b", text):
            if match.group(0).rsplit("/", 1)[-1] not in existing:
                missing.append(f"{path.relative_to(ROOT)}: {match.group(0)}")
    assert not missing, "shipped text names files that do not exist:\n" + "\n".join(missing)

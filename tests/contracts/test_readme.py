"""The README's commands and quick start work as written.

The quick start is the first ``python`` block after the "Quick start" heading; it is executed
unchanged (in this process, so PyTensor uses the suite's compile cache) and its results are
checked.  The first two shell commands are what ``.ci/run`` and new users run; they must not drift.
"""

import ast
import builtins
import re
import tomllib
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _blocks(language: str, text: str = README) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", text, flags=re.S | re.M)


def test_first_two_commands_are_setup_and_tests():
    commands = _blocks("bash")[0].strip().splitlines()[:2]
    assert commands == [
        "scripts/setup && .venv/bin/pm-private demo",
        "scripts/setup test && .venv/bin/python -m pytest -n 2",
    ]
    ci = (ROOT / ".ci" / "run").read_text()
    assert commands[1] in ci


def test_quick_start_block_is_found():
    section = README.split("## Quick start", 1)[1]
    code = _blocks("python", section)[0]
    assert "release_linear_stats" in code and "pm.sample" in code


#: The quick start's release call ends with this argument; the seeded run adds ``rng`` after it.
_RELEASE_LAST_ARGUMENT = "    accountant=budget,\n)"


def _run_quick_start(seed: int | None = None) -> dict:
    code = _blocks("python", README.split("## Quick start", 1)[1])[0]
    if seed is not None:
        assert code.count(_RELEASE_LAST_ARGUMENT) == 1
        code = code.replace(_RELEASE_LAST_ARGUMENT, f"    accountant=budget,\n    rng={seed},\n)")
    namespace: dict = {"__name__": "__readme__"}
    exec(compile(code, "README.md (quick start)", "exec"), namespace)
    return namespace


@pytest.mark.slow
def test_quick_start_runs_as_written():
    """As written: a real release (secure noise, new on every run), so only what holds for every
    draw of the noise is checked here; its numbers are checked on a seeded release below."""
    namespace = _run_quick_start()
    budget, release, idata = namespace["budget"], namespace["release"], namespace["idata"]
    assert budget.spent == (2.0, 1e-05)  # the one release took the whole budget
    assert release.releases[0].private  # secure noise: the quick start makes a real release
    beta = idata.posterior["beta"]
    assert beta.shape == (2, 500, 10)
    assert list(beta.coords["feature"].values) == list(namespace["X"].columns)  # DataFrame names carried
    assert np.all(np.isfinite(namespace["mean"])) and np.all(namespace["lower"] < namespace["upper"])


@pytest.mark.slow
def test_quick_start_numbers_on_a_seeded_release():
    """What the quick start promises, on the same block with its release seeded (reproducible):
    close to OLS on held-out patients, calibrated intervals."""
    namespace = _run_quick_start(seed=20261126)
    assert not namespace["release"].releases[0].private
    y_test, lower, upper = namespace["y_test"], namespace["lower"], namespace["upper"]
    assert namespace["r2"](namespace["mean"]) > namespace["r2"](namespace["ols_mean"]) - 0.2
    assert 0.75 <= np.mean((lower <= y_test) & (y_test <= upper)) <= 1.0


def _self_contained_blocks() -> dict[str, str]:
    """The README's python examples that need no file, server or earlier block, by what they show."""
    wanted = {
        "survival": "release_survival_stats",
        "elastic net": "DPElasticNetLogisticRegression",
        "pSGLD": "secure_sample",
        "DP-SGLD": "dp_sgld(",
    }
    blocks = _blocks("python")
    found = {name: [b for b in blocks if key in b] for name, key in wanted.items()}
    assert all(len(b) == 1 for b in found.values()), {k: len(v) for k, v in found.items()}
    return {name: b[0] for name, b in found.items()}


@pytest.mark.slow
@pytest.mark.parametrize("name", ["survival", "elastic net", "pSGLD", "DP-SGLD"])
def test_an_example_block_runs_on_its_own_within_its_budget(name, capsys):
    """Each block in a fresh namespace: its own imports, a shipped data set and a budget that
    covers what it spends."""
    code = _self_contained_blocks()[name]
    namespace: dict = {"__name__": "__readme__"}
    exec(compile(code, f"README.md ({name})", "exec"), namespace)
    if name == "elastic net":
        accuracy, majority = (float(v) for v in capsys.readouterr().out.split()[-2:])
        assert accuracy > majority  # better than predicting the majority class (0.72–0.74 in trials)
    if name == "pSGLD":
        assert namespace["budget"].spent.epsilon == pytest.approx(1.0)
        assert namespace["release"]["posterior"]["f"].shape == (1, 10, 8)
    if name == "DP-SGLD":  # the whole run charged once, at most its ε; every draw kept
        assert 0.99 <= namespace["budget"].spent.epsilon <= 1.0
        assert namespace["idata"].posterior["beta"].shape == (2, 1000, 3) and namespace["idata"].attrs["private"] == 1


def _free_names(code: str) -> set[str]:
    """Names a block reads but neither imports, assigns, defines nor finds among the builtins."""
    bound, loaded = set(dir(builtins)), set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Name):
            (loaded if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            bound |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
        elif isinstance(node, ast.FunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
    return loaded - bound


def test_every_python_block_has_its_own_imports():
    """A reader copies one block: every name it reads is imported or assigned in it."""
    blocks = _blocks("python")
    assert len(blocks) >= 6
    for block in blocks:
        assert not _free_names(block), (_free_names(block), block[:200])


def test_the_ledger_block_runs_on_its_own(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (code,) = [b for b in _blocks("python") if "PrivacyAccountant.open(" in b and "Client" not in b]
    exec(compile(code, "README.md (ledger)", "exec"), {"__name__": "__readme__"})
    assert (tmp_path / "budget.ledger").exists() and "Cost(" in capsys.readouterr().out


def test_the_readme_shows_the_check_and_the_plot_from_the_top_level():
    import pm_private

    imported = set()
    for block in _blocks("python"):
        for node in ast.walk(ast.parse(block)):
            if isinstance(node, ast.ImportFrom) and node.module == "pm_private":
                imported |= {alias.name for alias in node.names}
    for name in ("release_check", "plot_survival_function"):
        assert name in imported and name in pm_private._NAMES and callable(getattr(pm_private, name))


def test_model_to_graphviz_works_from_the_extra_the_readme_names():
    import pymc as pm

    import pm_private as pp

    (extra,) = re.findall(r'pip install "\.\[(\w+)\]"\s+# graphviz', README)
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert any(r.startswith("graphviz") for r in project["optional-dependencies"][extra])
    assert not any(r.startswith("graphviz") for r in project["dependencies"])  # not a base dependency
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(300, 2)), rng.uniform(size=300) < 0.4
    release = pp.release_logistic_stats(X, y, epsilon=1.0, delta=1e-6, x_bound=3.0, rng=0)
    graph = pm.model_to_graphviz(pp.logistic_model(release, feature_names=["age", "dose"]))
    assert "beta" in graph.source and "x_sd" in graph.source and "feature (2)" in graph.source

"""The package layout: every import points down, no cycles, lazy top-level names, no import of PyMC
for the accountant, no name clashes, and the base install (no extras) imports every public name."""

import ast
import importlib
import pkgutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from cards import PACKAGES  # noqa: E402  (every subpackage with lazy names, found by walking the package)

import pm_private


@pytest.mark.parametrize("package", PACKAGES)
def test_every_lazy_name_resolves_and_no_name_is_also_a_submodule(package):
    module = importlib.import_module(package)
    submodules = {info.name for info in pkgutil.iter_modules(module.__path__)}
    assert not set(module.__all__) & submodules, "a public name equal to a submodule is shadowed once it loads"
    for name in module.__all__:
        assert getattr(module, name) is not None


def test_names_survive_importing_their_submodules():
    import pm_private.linear.adaptive_ssp  # noqa: F401
    import pm_private.survival.weibull.mechanisms  # noqa: F401
    from pm_private.survival import weibull_private

    assert callable(weibull_private) and callable(pm_private.adassp)


def test_import_and_accountant_do_not_import_pymc():
    code = "import sys, pm_private; pm_private.PrivacyAccountant(epsilon=1.0); print('pymc' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


ROOT = Path(pm_private.__file__).parent

#: Floors, lowest first.  A module may import from a lower floor, and from its own floor only within
#: its own family (the model families of floor 3 never import each other).
_SHARED = [("pm_private._engine",), ("pm_private.privacy",), ("pm_private.datasets",), ("pm_private.released",)]
#: The model families: every other subpackage with lazy names (a new family folder joins by existing).
FAMILIES = tuple(p for p in PACKAGES if p != "pm_private" and (p,) not in _SHARED)
FLOORS = [*_SHARED, FAMILIES]


def _module_name(path: Path) -> str:
    parts = ["pm_private", *path.relative_to(ROOT).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """Every pm_private module and the pm_private modules it imports, at any depth of its code
    (imports inside functions count: a lazy import is still an arrow)."""
    modules = {_module_name(p): p for p in ROOT.rglob("*.py")}
    graph = {}
    for name, path in modules.items():
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                base = package[: len(package) - node.level + 1] if node.level else []
                target = ".".join(base + ([node.module] if node.module else []))
                for alias in node.names:
                    sub = f"{target}.{alias.name}"
                    targets.add(sub if sub in modules else target)
            elif isinstance(node, ast.Import):
                targets |= {alias.name for alias in node.names}
        graph[name] = {t for t in targets if t in modules and t != name}
    return graph


def _place(module: str) -> tuple[int, str]:
    """(floor, family) of a module; the top floor (the package, the command line, release files,
    the demo) is above every subpackage."""
    for floor, families in enumerate(FLOORS):
        for family in families:
            if module == family or module.startswith(family + "."):
                return floor, family
    return len(FLOORS), "pm_private"


def test_every_import_points_down():
    graph = import_graph()
    upward = []
    for module, targets in graph.items():
        floor, family = _place(module)
        for target in targets:
            target_floor, target_family = _place(target)
            if target_floor > floor or (target_floor == floor and target_family != family):
                upward.append(f"{module} -> {target}")
    assert not upward, "imports that point up or sideways:\n" + "\n".join(sorted(upward))


def test_no_import_cycle():
    graph = import_graph()
    state, cycles = {}, []

    def visit(module, path):
        state[module] = "open"
        for target in sorted(graph[module]):
            if state.get(target) == "open":
                cycles.append(" -> ".join(path[path.index(target) :] + [target]))
            elif target not in state:
                visit(target, path + [target])
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_the_families_are_the_model_folders():
    """The derived floor of families holds at least today's families (the walk found them)."""
    assert {"pm_private.linear", "pm_private.logistic", "pm_private.poisson", "pm_private.survival"} <= set(FAMILIES)


def test_the_graph_sees_lazy_imports():
    """The checks above would pass vacuously if the parser missed imports inside functions."""
    graph = import_graph()
    assert "pm_private.linear.dask_reduce" in graph["pm_private.linear.laplace_release"]  # imported inside a function
    assert "pm_private.privacy.budget" in graph["pm_private.privacy.ledger"]
    assert _place("pm_private.survival.discrete.fit") == (4, "pm_private.survival")
    assert _place("pm_private.cli") == (len(FLOORS), "pm_private")


#: Installed by the extras only (io, dask, models, test, docs): the base install has none of them.
EXTRAS_ONLY = ["statsmodels", "lifelines", "dask", "distributed", "pyarrow", "h5netcdf", "h5py", "pytest", "hypothesis"]


def test_base_install_imports_every_public_name():
    code = textwrap.dedent(
        f"""
        import importlib, sys

        for name in {EXTRAS_ONLY!r}:  # None in sys.modules: absent, as in an install without extras
            sys.modules[name] = None
        count = 0
        for package in {PACKAGES!r}:
            module = importlib.import_module(package)
            for name in module.__all__:
                getattr(module, name)
                count += 1
        print(count)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout) > 100


def test_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        pm_private.nope  # noqa: B018 (the attribute access itself must raise)

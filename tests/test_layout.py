"""The package layout: lazy top-level names, no import of PyMC for the accountant, no name clashes."""

import importlib
import pkgutil
import subprocess
import sys

import pytest

import pm_private

PACKAGES = [
    "pm_private",
    "pm_private.privacy",
    "pm_private.linear",
    "pm_private.logistic",
    "pm_private.sampling",
    "pm_private.survival",
]


@pytest.mark.parametrize("package", PACKAGES)
def test_every_lazy_name_resolves_and_no_name_is_also_a_submodule(package):
    module = importlib.import_module(package)
    submodules = {info.name for info in pkgutil.iter_modules(module.__path__)}
    assert not set(module.__all__) & submodules, "a public name equal to a submodule is shadowed once it loads"
    for name in module.__all__:
        assert getattr(module, name) is not None


def test_names_survive_importing_their_submodules():
    import pm_private.linear.adaptive_ssp  # noqa: F401
    import pm_private.survival.weibull_mechanisms  # noqa: F401
    from pm_private.survival import weibull_private

    assert callable(weibull_private) and callable(pm_private.adassp)


def test_import_and_accountant_do_not_import_pymc():
    code = "import sys, pm_private; pm_private.PrivacyAccountant(epsilon=1.0); print('pymc' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_datasets_never_import_upward():
    """datasets may use the bottom layer (privacy: input validation) and nothing above it."""
    code = (
        "import sys, pm_private.datasets; "
        "print(sorted(m for m in sys.modules if m.startswith('pm_private.') and not m.startswith(('pm_private.datasets', 'pm_private._lazy', 'pm_private.privacy'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        pm_private.nope  # noqa: B018 (the attribute access itself must raise)

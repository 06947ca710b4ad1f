"""Lazy attributes for packages (PEP 562): ``import pm_private`` stays cheap and imports PyMC
only when a name that needs it is first used."""

from __future__ import annotations

import importlib


def attach(package: str, names: dict[str, str]):
    """``(__getattr__, __dir__, __all__)`` for a package whose public ``names`` map to the
    submodule (relative to ``package``) that defines each."""

    def __getattr__(name: str):
        try:
            module = names[name]
        except KeyError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        value = getattr(importlib.import_module(module, package), name)
        globals_ = importlib.import_module(package).__dict__
        globals_[name] = value  # later look-ups skip __getattr__
        return value

    def __dir__():
        return sorted(names)

    return __getattr__, __dir__, sorted(names)

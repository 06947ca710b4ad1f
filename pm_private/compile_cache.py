"""One PyTensor compile cache for the command line, the experiment scripts, the benchmarks and
the tests: compiling is the slow part of a first run, so every entry point shares one directory.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["COMPILE_CACHE", "use_compile_cache"]

#: PyTensor's base_compiledir for pm_private's entry points.
COMPILE_CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pm_private" / "pytensor"


def use_compile_cache() -> None:
    """Point PyTensor at :data:`COMPILE_CACHE` unless ``PYTENSOR_FLAGS`` is already set.

    Call it before PyTensor (or PyMC) is first imported: PyTensor reads its flags once.
    """
    os.environ.setdefault("PYTENSOR_FLAGS", f"base_compiledir={COMPILE_CACHE}")

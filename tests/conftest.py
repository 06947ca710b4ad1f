"""Shared test setup: one PyTensor compile cache for the whole run (and the notebooks it runs)."""

import os
from pathlib import Path

_CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "pm_private" / "pytensor"
os.environ.setdefault("PYTENSOR_FLAGS", f"base_compiledir={_CACHE}")

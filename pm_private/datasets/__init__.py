"""Data sets for the examples and benchmarks (no PyMC import here).

FL (the serum free light chain survival study) ships inside scikit-survival: :func:`load_flchain`.
GDSC (Genomics of Drug Sensitivity in Cancer), the data of Honkela et al. (2018), cannot be downloaded in
this project's environment.  :func:`make_gdsc_like` generates a seeded *synthetic stand-in* with
GDSC's shape; :func:`load_gdsc` reads the real GDSC files where a user has them.
"""

from .._engine.lazy import attach

_NAMES = {
    "DrugSensitivityData": ".gdsc",
    "load_gdsc": ".gdsc",
    "make_gdsc_like": ".gdsc",
    "FLCHAIN_DOMAIN": ".flchain",
    "FLCHAIN_HORIZON_DAYS": ".flchain",
    "SurvivalDataset": ".flchain",
    "load_flchain": ".flchain",
    "split_keeping_identical_rows": ".splits",
}

__getattr__, __dir__, __all__ = attach(__name__, _NAMES)

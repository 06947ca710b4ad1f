"""Data sets for the examples and benchmarks (no PyMC import here).

FL (the serum free light chain survival study) ships inside scikit-survival: :func:`load_flchain`.
GDSC (Genomics of Drug Sensitivity in Cancer), the data of Honkela et al. (2018), cannot be downloaded in
this project's environment.  :func:`make_gdsc_like` generates a seeded *synthetic stand-in* with
GDSC's shape; :func:`load_gdsc` reads the real GDSC files where a user has them.
"""

from .flchain import FLCHAIN_DOMAIN, FLCHAIN_HORIZON_DAYS, SurvivalDataset, load_flchain
from .gdsc import DrugSensitivityData, load_gdsc, make_gdsc_like

__all__ = [
    "DrugSensitivityData",
    "load_gdsc",
    "make_gdsc_like",
    "FLCHAIN_DOMAIN",
    "FLCHAIN_HORIZON_DAYS",
    "SurvivalDataset",
    "load_flchain",
]

"""Data sets for the examples and benchmarks (no PyMC import here).

GDSC (Genomics of Drug Sensitivity in Cancer), the data of paper 004, cannot be downloaded in
this project's environment.  :func:`make_gdsc_like` generates a seeded *synthetic stand-in* with
GDSC's shape; :func:`load_gdsc` reads the real GDSC files where a user has them.
"""

from .gdsc import DrugSensitivityData, load_gdsc, make_gdsc_like, preprocess

__all__ = ["DrugSensitivityData", "load_gdsc", "make_gdsc_like", "preprocess"]

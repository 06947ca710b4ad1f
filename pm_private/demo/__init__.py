"""The main job, ``pm-private demo``: what pm_private does, in four parts on data that ship with its
dependencies, each ending in a one-line headline.

1. ``release``: a Gaussian release of the sufficient statistics of scikit-learn's diabetes data
   into a ledger file and a release file (:mod:`pm_private.demo.linear_parts`);
2. ``fit``: the noise-aware model of that release (Bernstein & Sheldon 2019) by NUTS, its
   ``print_summary`` beside least squares on the private rows, and predictions for held-out
   patients;
3. ``survival``: a person-level release of the exit table of the serum free light chain study by
   age group, the noise-aware survival model, its survival curves and hazard ratio beside
   Kaplan–Meier curves and Cox's regression (:mod:`pm_private.demo.survival_part`);
4. ``drug-sensitivity``: private drug-sensitivity prediction (Honkela et al. 2018) on GDSC-shaped
   built-in data, in small (:mod:`pm_private.demo.drug_sensitivity`; ``--full`` runs the full
   study).

Parts 1 and 3 are real releases (secure noise) charged to a ledger in the output folder; the
study of part 4 seeds its noise, a simulation marked not private.  :func:`main` runs the demo
(:mod:`pm_private.demo.tour`); the names of the drug-sensitivity study are importable from here.
"""

from .drug_sensitivity import (
    METHODS,
    Split,
    calibration_study,
    design_problem,
    drug_splits,
    format_table,
    make_split,
    plot,
    plot_calibration,
    quiet_sampler,
    run_experiment,
    summarise,
)
from .tour import PARTS, build_parser, check_args, main

__all__ = [
    "METHODS",
    "PARTS",
    "Split",
    "build_parser",
    "calibration_study",
    "check_args",
    "design_problem",
    "drug_splits",
    "format_table",
    "main",
    "make_split",
    "plot",
    "plot_calibration",
    "quiet_sampler",
    "run_experiment",
    "summarise",
]

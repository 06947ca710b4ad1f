"""The main job, ``pm-private demo``."""

from .drug_sensitivity import (
    METHODS,
    Split,
    build_parser,
    calibration_study,
    check_args,
    design_problem,
    drug_splits,
    format_table,
    main,
    make_split,
    plot,
    plot_calibration,
    quiet_sampler,
    run_experiment,
    summarise,
)

__all__ = [
    "METHODS",
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

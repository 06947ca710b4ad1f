"""Command line: ``pm-private demo`` runs the private drug-sensitivity experiment on built-in data."""

from __future__ import annotations

import argparse

from .compile_cache import use_compile_cache


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="pm-private", description="pm_private: differentially private Bayesian inference for PyMC")
    commands = parser.add_subparsers(dest="command", required=True)
    use_compile_cache()
    from pm_private.experiments import drug_sensitivity

    demo = commands.add_parser(
        "demo",
        help="private drug-sensitivity prediction (Honkela et al. 2018) on GDSC-shaped built-in data",
        description=drug_sensitivity.__doc__.split("\n\n")[0],
    )
    drug_sensitivity.build_parser(demo)
    args = parser.parse_args(argv)
    drug_sensitivity.main(args)
    return 0

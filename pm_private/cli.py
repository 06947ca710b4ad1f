"""Command line: ``pm-private demo`` runs the private drug-sensitivity experiment on built-in data."""

from __future__ import annotations

import argparse
import os
from pathlib import Path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="pm-private", description="pm_private: differentially private Bayesian inference for PyMC")
    commands = parser.add_subparsers(dest="command", required=True)
    # one PyTensor compile cache for every run (compiling is the slow part of a first run)
    os.environ.setdefault("PYTENSOR_FLAGS", f"base_compiledir={Path.home() / '.cache' / 'pm_private' / 'pytensor'}")
    from models import drug_sensitivity

    demo = commands.add_parser(
        "demo",
        help="private drug-sensitivity prediction (paper 004) on GDSC-shaped built-in data",
        description=drug_sensitivity.__doc__.split("\n\n")[0],
    )
    drug_sensitivity.build_parser(demo)
    args = parser.parse_args(argv)
    drug_sensitivity.main(args)
    return 0

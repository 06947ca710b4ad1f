"""Command line ``pm-private``: the data holder's releases against a ledger file, the ledger
itself, fitting a model on a release file, and the main job (a tour of the library).

* ``pm-private release linear-stats DATA`` — sufficient statistics for linear regression, ε-DP by
  the Laplace mechanism (Honkela et al. 2018) or (ε, δ)-DP by the Gaussian mechanism (Sheffet
  2017; Wang 2018), after a public centre and scale (``--standardize-from`` a public file, or
  declared constants) that the release carries;
* ``pm-private release weibull DATA`` — ε-DP Weibull (p, λ) by LSP + TLL (Nguyên & Hui 2017b);
* ``pm-private release logistic-stats DATA`` and ``… poisson-stats DATA`` — (ε, δ)-DP degree-2
  statistics of logistic or Poisson regression by the Gaussian mechanism (Kulkarni et al. 2021),
  after a public centre and scale of the features that the release file carries;
* ``pm-private ledger LEDGER`` — show a ledger (basic and tight totals, the cost of a next
  release), export it as CSV or JSON, or upgrade a format-1 ledger once;
* ``pm-private fit RELEASE`` — noise-aware Bayesian linear regression on released statistics
  (Bernstein & Sheldon 2019; Honkela et al. 2018), or logistic or Poisson regression on released
  GLM statistics (Kulkarni et al. 2021): posterior as netCDF, whose attributes record
  the release's ε, δ, mechanism, the release file's SHA-256 and the library version, and a
  summary CSV;
* ``pm-private demo`` — a tour of the library on built-in data: a release into a ledger and a release
  file, a NUTS fit with its summary, a private survival curve and hazard ratio, and a private
  drug-sensitivity ranking (``pm-private demo drug-sensitivity --full`` for the whole study);

Every argument is checked before any data is read or budget spent: bad values are usage
errors (exit code 2); a refused budget exits with code 1 and spends nothing.  A release's
``--note`` is stored with its ledger entry; ``--dry-run`` prints the noise scales and the budget
without reading a data row or opening the ledger.

Each subcommand is a module of this package (``release_linear``, ``release_weibull``,
``release_glm``, ``release_survival``, ``ledger``, ``fit``, ``demo``) whose ``add_parser`` adds its arguments and sets
the function that runs it; what they share (the release arguments, reading the table, the ledger
check, writing a release file, the dry run, the public preprocessing) is in ``common``, the
argparse types in ``argtypes``.  The kinds of release that ``fit`` can fit are the entries of
``fit.FAMILIES``, the GLM statistics releases those of ``release_glm.FAMILIES``.
"""

from __future__ import annotations

import argparse
import sys

from . import demo as demo_command
from . import fit, ledger, release_glm, release_linear, release_survival, release_weibull
from .common import Refused

__all__ = ["build_parser", "main"]

#: The kinds of ``pm-private release``, in the order of its help.
_RELEASES = (release_linear, release_glm, release_weibull, release_survival)
#: The subcommands after ``demo`` and ``release``, in the order of the help.
_COMMANDS = (ledger, fit)


def build_parser(demo: bool = True) -> argparse.ArgumentParser:
    """The ``pm-private`` parser with its subcommands.

    Parameters
    ----------
    demo : bool, default True
        Add the demo's own arguments.  False leaves them out (importing the experiment takes
        seconds): :func:`main` adds them only when the command is ``demo``.

    Returns
    -------
    argparse.ArgumentParser
        The parser; each subcommand's parsed arguments carry ``run`` (the function that runs it)
        and ``command_parser`` (the subcommand's parser, for usage errors).
    """
    parser = argparse.ArgumentParser(
        prog="pm-private", description="pm_private: differentially private Bayesian inference for PyMC"
    )
    commands = parser.add_subparsers(dest="command", required=True)
    demo_command.add_parser(commands, full=demo)
    release = commands.add_parser("release", help="release private statistics of a CSV/Parquet file against a ledger")
    kinds = release.add_subparsers(dest="kind", required=True)
    for module in _RELEASES:
        module.add_parser(kinds)
    for module in _COMMANDS:
        module.add_parser(commands)
    return parser


def main(argv=None) -> int:
    """Run ``pm-private``.

    Parameters
    ----------
    argv : list of str, optional
        The arguments after the program name (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit code: 0 done, 1 the release was refused (over budget: nothing spent; or the
        ``--standardize-from`` rows include rows of DATA: the release's budget spent, since a
        free refusal would tell whether given rows are private).  Usage errors exit with code 2
        (``SystemExit``) before any budget is spent; they read DATA only for its domain (columns,
        numbers), never against a public argument.
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(demo=argv[:1] == ["demo"])
    args = parser.parse_args(argv)
    try:
        args.run(args.command_parser, args)
    except Refused as error:
        sys.stderr.write(f"pm-private {args.command}: refused: {error}\n")
        return 1
    return 0

"""``pm-private demo``: the private drug-sensitivity experiment (Honkela et al. 2018) on built-in
data, with the arguments of :mod:`pm_private.demo`."""

from __future__ import annotations

_HELP = "private drug-sensitivity prediction (Honkela et al. 2018) on GDSC-shaped built-in data"


def add_parser(subparsers, full: bool = True) -> None:
    """Add the ``demo`` subcommand to ``pm-private``.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        The subcommands of ``pm-private``; the new parser's ``run`` default runs the experiment.
    full : bool, default True
        Add the experiment's own arguments and description.  False leaves them out: importing
        the experiment takes seconds, and only the ``demo`` command needs them.
    """
    if full:
        from .. import demo as experiment

        parser = subparsers.add_parser("demo", help=_HELP, description=experiment.__doc__.split("\n\n")[0])
        experiment.build_parser(parser)
    else:
        parser = subparsers.add_parser("demo", help=_HELP)
    parser.set_defaults(run=_run, command_parser=parser)


def _run(parser, args) -> None:
    from .. import demo as experiment

    experiment.check_args(args, parser)
    experiment.main(args)

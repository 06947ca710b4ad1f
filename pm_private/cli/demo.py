"""``pm-private demo``: the main job, a tour of pm_private in four parts on built-in data (a release
into a ledger, a NUTS fit of it, a private survival analysis, private drug-sensitivity
prediction), with the arguments of :mod:`pm_private.demo.tour`."""

from __future__ import annotations

_HELP = "a tour: a release into a ledger, its NUTS fit, private survival, drug-sensitivity prediction"


def add_parser(subparsers, full: bool = True) -> None:
    """Add the ``demo`` subcommand to ``pm-private``.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        The subcommands of ``pm-private``; the new parser's ``run`` default runs the demo.
    full : bool, default True
        Add the demo's own arguments and description.  False leaves them out: importing the
        demo takes seconds, and only the ``demo`` command needs them.
    """
    if full:
        from ..demo import tour

        parser = subparsers.add_parser("demo", help=_HELP, description=tour.DESCRIPTION)
        tour.build_parser(parser)
    else:
        parser = subparsers.add_parser("demo", help=_HELP)
    parser.set_defaults(run=_run, command_parser=parser)


def _run(parser, args) -> None:
    from ..demo import tour

    tour.main(args, parser)

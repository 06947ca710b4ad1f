"""``pm-private release weibull DATA``: ε-DP Weibull shape and scale (p, λ) of censored survival
times by LSP + TLL (Nguyên & Hui 2017b)."""

from __future__ import annotations

from ..privacy import argtypes as types
from .common import (
    add_relation_argument,
    add_release_parser,
    check_columns,
    dry_run,
    numeric,
    open_ledger,
    read,
    table_columns,
    unit_argument,
    unit_columns,
    unit_rows_text,
    unit_values,
    write_release,
)


def add_parser(subparsers) -> None:
    """Add the ``weibull`` release to ``subparsers``, the kinds of ``pm-private release``."""
    parser = add_release_parser(
        subparsers,
        "weibull",
        _run,
        help="ε-DP Weibull shape and scale by LSP + TLL (Nguyên & Hui 2017b)",
        description="Weibull (p, λ) of censored survival times by LSP (ε/2) and TLL (ε/2) (Nguyên & Hui 2017b).",
    )
    parser.add_argument(
        "--time", required=True, help="survival-time column (≥ 0; later than --horizon: censored there)"
    )
    parser.add_argument("--event", required=True, help="event column: 1 = event, 0 = censored")
    parser.add_argument("--horizon", type=types.bound, required=True, help="public upper bound on the times")
    parser.add_argument("--K", type=types.positive_int, default=500, help="ladder rungs (default 500)")
    parser.add_argument("--gamma", type=types.bound, default=10.0, help="range γ of p and λ/horizon (default 10)")
    parser.add_argument("--omega", type=types.bound, default=6.0, help="times floored at e^-ω·horizon (default 6)")
    add_relation_argument(parser)
    unit_argument(parser, history=True)


def _run(parser, args) -> None:
    from ..privacy.relations import REPLACE_ONE
    from ..survival.weibull.mechanisms import check_weibull_arguments, weibull_noise_plan

    # the ladder's memory for any n, before the data are read, where the file's row count is not n public
    n_private = args.relation != REPLACE_ONE or args.unit_column is not None
    try:
        check_weibull_arguments(
            epsilon=args.epsilon, horizon=args.horizon, gamma=args.gamma, omega=args.omega, K=args.K,
            n=None if n_private else 1,
        )  # fmt: skip
        plan = weibull_noise_plan(epsilon=args.epsilon)
    except ValueError as error:
        parser.error(str(error))
    check_columns(parser, args, table_columns(parser, args), [args.time, args.event, *unit_columns(args)])
    if args.dry_run:
        dry_run(
            args,
            [
                *plan.lines(),
                f"horizon {args.horizon:g}, K = {args.K}, γ = {args.gamma:g}, ω = {args.omega:g} "
                "(the ladder of LSP's levels also depends on the data rows)",
            ],
        )
        return
    accountant = open_ledger(parser, args)
    frame = read(args.data, [args.time, args.event, *unit_columns(args)])
    values = numeric(parser, frame, [args.time, args.event])
    time, event = values[:, 0], values[:, 1]
    # times beyond the public horizon are censored there by the mechanism: a refusal would read the private maximum
    if (time < 0).any():
        parser.error(f"column {args.time!r} must hold times ≥ 0")
    if not ((event == 0) | (event == 1)).all():
        parser.error(f"column {args.event!r} must be 0 (censored) or 1 (event)")
    try:  # the ladder's memory with the public n, the file's rows
        if not n_private:
            check_weibull_arguments(horizon=args.horizon, gamma=args.gamma, omega=args.omega, K=args.K, n=time.size)
    except ValueError as error:
        parser.error(str(error))
    from ..survival.weibull.mechanisms import weibull_private

    write_release(
        parser,
        args,
        accountant,
        lambda: weibull_private(
            time,
            event,
            epsilon=args.epsilon,
            horizon=args.horizon,
            K=args.K,
            gamma=args.gamma,
            omega=args.omega,
            accountant=accountant,
            relation=args.relation,
            unit=unit_values(args, frame),
        ),
        time=args.time,
        event=args.event,
        preprocessing={"rows": unit_rows_text(args, history=True)},
    )

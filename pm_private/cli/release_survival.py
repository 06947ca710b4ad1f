"""``pm-private release survival DATA``: the person-level exit table of a survival study (events
and censorings per public interval and cell, survivors at the horizon) with Gaussian or Laplace
noise, for the noise-aware survival models (``pm-private fit``); ``pm-private release
survival-regression DATA``: the same table with the covariate moments of each exit, for the
noise-aware proportional-hazards regression."""

from __future__ import annotations

from ..privacy import argtypes as types
from .common import (
    add_relation_argument,
    add_release_parser,
    check_columns,
    dry_run,
    numeric,
    open_ledger,
    public_feature_group,
    public_preprocessing,
    read,
    table_columns,
    unit_argument,
    unit_columns,
    unit_rows_text,
    unit_values,
    write_release,
)


def _edges(text: str) -> list[float]:
    try:
        return [float(v) for v in text.split(",")]
    except ValueError:
        raise types.argparse.ArgumentTypeError(f"must be comma-separated interval ends, got {text!r}") from None


def _labels(text: str) -> list[str]:
    labels = [v.strip() for v in text.split(",")]
    if not all(labels):
        raise types.argparse.ArgumentTypeError(f"must be comma-separated cell labels, got {text!r}")
    return labels


def add_parser(subparsers) -> None:
    """Add the ``survival`` and ``survival-regression`` releases to ``subparsers``, the kinds of
    ``pm-private release``."""
    parser = add_release_parser(
        subparsers,
        "survival",
        _run,
        help="private exit table of a survival study (per interval and cell), person-level",
        description="Events and censorings per public interval and cell, and the people event-free at the "
        "horizon, with Gaussian ((ε, δ)-DP) or Laplace (ε-DP) noise of sensitivity √2 (ℓ2) or 2 (ℓ1) under "
        "replace-one neighbours, or 1 under add/remove neighbours (--relation add-remove: n private, latent in "
        "the fit), the unit a person (Gondara & Wang 2020).  n (under replace-one), the interval ends and the "
        "cell labels are public; each person's time, event and cell are private.  Fit it with 'pm-private fit'.",
    )
    unit_argument(parser, history=True)
    parser.add_argument("--delta", type=types.delta, help="δ of a Gaussian release (omit with --noise laplace)")
    parser.add_argument("--time", required=True, help="follow-up time column (≥ 0; past the horizon: alive at it)")
    parser.add_argument("--event", required=True, help="event column: 1 = event, 0 = censored")
    parser.add_argument("--cell", help="cell column (arm, sex, …): its labels must be among --cells")
    parser.add_argument("--cells", type=_labels, help="the public cell labels, comma-separated (needs --cell)")
    parser.add_argument(
        "--edges", type=_edges, required=True, help="public interval ends t1,…,tJ (the last is the horizon)"
    )
    parser.add_argument("--noise", choices=("gaussian", "laplace"), default="gaussian")
    add_relation_argument(parser)
    _add_regression_parser(subparsers)


def _add_regression_parser(subparsers) -> None:
    parser = add_release_parser(
        subparsers,
        "survival-regression",
        _run_regression,
        help="private exit table with the covariate moments of each exit, for proportional-hazards regression",
        description="Per public interval: the people whose exit is an event or a censoring there, and their "
        "covariate sums; the people event-free at the horizon and theirs; Σxxᵀ; the number of rows projected "
        "onto the x bound.  Gaussian noise ((ε, δ)-DP) of ℓ2 sensitivity √7 on the weighted vector under "
        "replace-one neighbours, or 2 under add/remove neighbours (--relation add-remove: n private, latent in "
        "the fitted model), the unit a person.  The interval ends and the bound are public, and n under "
        "replace-one; each person's time, event and covariates are private.  Fit it with 'pm-private fit'.",
    )
    unit_argument(parser, history=True)
    parser.add_argument("--delta", type=types.delta, required=True, help="δ of the release, spent from the ledger")
    parser.add_argument("--time", required=True, help="follow-up time column (≥ 0; past the horizon: alive at it)")
    parser.add_argument("--event", required=True, help="event column: 1 = event, 0 = censored")
    parser.add_argument("--features", nargs="+", required=True, help="covariate columns")
    parser.add_argument(
        "--edges", type=_edges, required=True, help="public interval ends t1,…,tJ (the last is the horizon)"
    )
    parser.add_argument(
        "--x-bound",
        type=types.bound,
        required=True,
        help="public bound on the ℓ2 norm of a (preprocessed) covariate row; rows beyond are projected onto it; "
        "the library's rule for standardised covariates, from n, d, ε, δ, the edges (and public rows), is "
        "pm_private.survival_regression_bounds in Python",
    )
    public_feature_group(parser)
    add_relation_argument(parser)


def _run(parser, args) -> None:
    from ..survival.exits.release import release_survival_stats, survival_noise_plan

    if (args.cell is None) != (args.cells is None):
        parser.error("--cell and --cells go together: the column of each person's cell and the public labels")
    delta = args.delta if args.noise == "gaussian" else None
    if args.noise == "laplace" and args.delta is not None:
        parser.error("--delta is for Gaussian noise: omit it with --noise laplace (pure ε-DP)")
    try:
        plan = survival_noise_plan(
            args.edges, args.cells, epsilon=args.epsilon, delta=delta, noise=args.noise, relation=args.relation
        )
    except ValueError as error:
        parser.error(str(error))
    columns = [args.time, args.event] + ([args.cell] if args.cell else []) + unit_columns(args)
    check_columns(parser, args, table_columns(parser, args), columns)
    if args.dry_run:
        dry_run(args, plan.lines())
        return
    accountant = open_ledger(parser, args)
    frame = read(args.data, columns)
    values = numeric(parser, frame, [args.time, args.event])
    cell = None if args.cell is None else frame[args.cell].astype(str).to_numpy()
    write_release(
        parser,
        args,
        accountant,
        lambda: release_survival_stats(
            values[:, 0],
            values[:, 1],
            cell,
            edges=args.edges,
            cells=args.cells,
            epsilon=args.epsilon,
            delta=delta,
            noise=args.noise,
            accountant=accountant,
            unit=unit_values(args, frame),
            relation=args.relation,
        ),
        time=args.time,
        event=args.event,
        preprocessing={"rows": unit_rows_text(args, history=True)},
    )


def _run_regression(parser, args) -> None:
    from ..survival.regression.release import release_survival_regression_stats, survival_regression_noise_plan

    try:
        plan = survival_regression_noise_plan(
            args.edges,
            d=len(args.features),
            x_bound=args.x_bound,
            epsilon=args.epsilon,
            delta=args.delta,
            relation=args.relation,
        )
    except ValueError as error:
        parser.error(str(error))
    columns = [args.time, args.event, *args.features]
    check_columns(parser, args, table_columns(parser, args), columns + unit_columns(args))
    preprocessing = public_preprocessing(parser, args, args.features, response=False)  # or None
    if args.dry_run:
        dry_run(args, plan.lines())
        return
    frame = read(args.data, columns + unit_columns(args))
    values = numeric(parser, frame, columns)
    accountant = open_ledger(parser, args)
    write_release(
        parser,
        args,
        accountant,
        lambda: release_survival_regression_stats(
            values[:, 0],
            values[:, 1],
            frame[args.features],
            edges=args.edges,
            x_bound=args.x_bound,
            epsilon=args.epsilon,
            delta=args.delta,
            preprocessing=preprocessing,
            accountant=accountant,
            unit=unit_values(args, frame),
            relation=args.relation,
        ),
        time=args.time,
        event=args.event,
        features=list(args.features),
        preprocessing={"rows": unit_rows_text(args, history=True)},
    )

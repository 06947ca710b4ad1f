"""``pm-private release logistic-stats DATA`` and ``… poisson-stats DATA``: (ε, δ)-DP degree-2
statistics of logistic or Poisson regression by the Gaussian mechanism (Kulkarni et al. 2021),
after a public centre and scale of the features that the release file carries.

Each family is a registry object (:mod:`pm_private.families`) whose hooks the parser, the checks,
the dry run and the release read."""

from __future__ import annotations

from ..logistic.family import LOGISTIC
from ..poisson.family import POISSON
from ..privacy import argtypes as types
from ..released.family import Family, Hook
from .common import (
    add_max_rows_argument,
    add_relation_argument,
    add_release_parser,
    check_max_rows_argument,
    dry_run,
    open_ledger,
    preprocessing_source,
    public_feature_group,
    public_file_columns,
    public_preprocessing,
    regression_column_arguments,
    regression_features,
    regression_rows,
    unit_rows_text,
    write_release,
)

#: The families whose degree-2 statistics ``pm-private release`` releases, by subcommand name.
GLM_FAMILIES = {family.command: family for family in (LOGISTIC, POISSON)}
#: The largest count bound of a Poisson release (imported when used).
_MAX_Y_BOUND = Hook("pm_private.poisson.release:MAX_Y_BOUND")


def _counts(family: Family) -> bool:
    """Whether the family's target is a count clipped to ``--y-bound`` (else a 0/1 or ±1 label)."""
    return family is POISSON


def add_parser(subparsers) -> None:
    """Add one release per entry of :data:`GLM_FAMILIES` to ``subparsers``, the kinds of
    ``pm-private release``."""
    for name, family in GLM_FAMILIES.items():
        counts = _counts(family)
        parser = add_release_parser(
            subparsers,
            name,
            _run,
            help=f"(ε, δ)-DP degree-2 statistics of {family.title} for the noise-aware model (Kulkarni et al. 2021)",
            description=f"Gaussian release of Σx, Σy, Sxx, Σ y·x of {family.title} "
            "(Kulkarni et al. 2021; Huggins, Adams & Broderick 2017), rows projected onto the x bound"
            + (", counts clipped to the y bound" if counts else ", labels 0/1 or ±1")
            + ".  Fit it with 'pm-private fit'.",
        )
        regression_column_arguments(parser, target="count column" if counts else "label column (0/1 or ±1)")
        parser.add_argument("--delta", type=types.delta, required=True, help="δ of the release, spent from the ledger")
        rule = "poisson_bounds" if counts else "logistic_bounds"
        parser.add_argument(
            "--x-bound",
            type=types.bound,
            required=True,
            help="public bound on the ℓ2 norm of a (preprocessed) row; the library's rule for standardised "
            f"covariates, from n, d, ε and δ (and public rows), is pm_private.{rule} in Python",
        )
        if counts:
            parser.add_argument(
                "--y-bound",
                type=types.positive_int,
                help="public count bound (an integer ≤ 1000): larger counts are clipped to it; omitted, the "
                "smallest count with at most 5 %% of the --standardize-from file's counts (its --target column) "
                "above it (pm_private.poisson.count_bound)",
            )
        public_feature_group(parser)
        parser.add_argument(
            "--binary-columns",
            nargs="+",
            metavar="COLUMN",
            help="features whose values are 0 or 1 (a public declaration, carried in the release file): the "
            "fitted model then takes the covariates' law matched to the released moments and these kinds",
        )
        add_relation_argument(parser)
        add_max_rows_argument(parser)


def _noise_plan(args, family: Family, d: int):
    """The noise plan of a GLM statistics release: a function of the public arguments and d only
    (ValueError naming an argument the release would refuse)."""
    bounds = {"y_bound": args.y_bound} if _counts(family) else {}
    return family.noise_plan(
        d,
        epsilon=args.epsilon,
        delta=args.delta,
        x_bound=args.x_bound,
        relation=args.relation,
        max_rows=args.max_rows,
        **bounds,
    )


def _run(parser, args) -> None:
    from ..privacy.validation import check_count

    family = GLM_FAMILIES[args.kind]
    chosen = _counts(family) and args.y_bound is None  # the count bound from the public file's counts
    if chosen:
        args.y_bound = _public_count_bound(parser, args)
    if _counts(family):
        try:
            check_count("--y-bound", args.y_bound, 1, _MAX_Y_BOUND.resolve())
        except ValueError as error:
            parser.error(str(error))
    check_max_rows_argument(parser, args)
    features = regression_features(parser, args)
    unknown = sorted(set(args.binary_columns or ()) - set(features))
    if unknown:
        parser.error(f"--binary-columns {', '.join(map(repr, unknown))} are not features")
    try:
        plan = _noise_plan(args, family, len(features))
    except ValueError as error:
        parser.error(str(error))
    preprocessing = public_preprocessing(parser, args, features, response=False)  # the features only, or None
    context = _context(args, family, preprocessing, len(features))
    if args.dry_run:
        lines = plan.lines()
        if preprocessing is not None:
            lines.append("public preprocessing: " + context["constants"])
        if chosen:
            from ..poisson.release import MAX_CLIPPED

            lines.append(
                f"count bound {args.y_bound}: the smallest with at most {MAX_CLIPPED:.0%} of the public file's counts "
                "above it"
            )
        dry_run(args, lines)
        return
    X, y, unit = regression_rows(parser, args, features)
    accountant = open_ledger(parser, args)
    bounds = {"y_bound": args.y_bound} if _counts(family) else {}

    def release():
        return family.release(
            X,
            y,
            epsilon=args.epsilon,
            delta=args.delta,
            x_bound=args.x_bound,
            preprocessing=preprocessing,
            accountant=accountant,
            unit=unit,
            relation=args.relation,
            max_rows=args.max_rows,
            **bounds,
        )

    write_release(parser, args, accountant, release, features=features, target=args.target, preprocessing=context)


def _public_count_bound(parser, args) -> int:
    """The count bound from the public file's target column (``count_bound``), before anything
    private is read; a usage error naming ``--y-bound`` where there is no public file."""
    from ..poisson.release import count_bound

    if args.standardize_from is None:
        parser.error("--y-bound: give it, or --standardize-from with public counts in the target column to choose it")
    counts = public_file_columns(parser, args, [args.target])[:, 0]
    try:
        return count_bound(counts)
    except ValueError as error:
        parser.error(f"--y-bound from --standardize-from: {error}")


def _context(args, family: Family, preprocessing, d: int) -> dict:
    """What was done to the rows before the release, with the public constants (for predictions)."""
    context = {
        "rows": unit_rows_text(args),
        "features": "as read; rows projected by the mechanism onto the x bound",
        "target": "counts clipped by the mechanism to the y bound" if _counts(family) else "labels as ±1",
    }
    if preprocessing is not None:
        from ..released.preprocessing import affine_vectors

        center, scale = affine_vectors(preprocessing, d)
        context.update(
            features="(x − x_center)/x_scale with the public constants below, then rows projected onto the x bound",
            constants=preprocessing_source(args, ("x_center", "x_scale")),
            x_center=center,
            x_scale=scale,
        )
    return context

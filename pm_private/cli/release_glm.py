"""``pm-private release logistic-stats DATA`` and ``… poisson-stats DATA``: (ε, δ)-DP degree-2
statistics of logistic or Poisson regression by the Gaussian mechanism (Kulkarni et al. 2021),
after a public centre and scale of the features that the release file carries.

Each family is one entry of :data:`FAMILIES`; the parser, the checks, the dry run and the release
read it."""

from __future__ import annotations

from dataclasses import dataclass

from ..privacy import argtypes as types
from .common import (
    check_columns,
    dry_run,
    load,
    numeric,
    open_ledger,
    preprocessing_source,
    public_feature_group,
    public_preprocessing,
    read,
    refuse_raw_covariates,
    release_arguments,
    table_columns,
    write_release,
)


@dataclass(frozen=True)
class GlmStats:
    """A GLM family whose degree-2 statistics ``pm-private release`` can release.

    The other fields are import paths (``"module:name"``, imported when used): the family's noise
    plan (a function of d and the public arguments, :class:`~pm_private.released.noise_plan.NoisePlan`)
    and its release function; for a count target clipped to ``--y-bound``, the largest bound it
    takes (None for a target of labels 0/1 or ±1, which has no y bound).
    """

    family: str
    noise_plan: str
    release: str
    max_y_bound: str | None = None

    @property
    def counts(self) -> bool:
        """Whether the target is a count clipped to ``--y-bound`` (else a 0/1 or ±1 label)."""
        return self.max_y_bound is not None


#: The GLM statistics releases by subcommand name.
FAMILIES = {
    "logistic-stats": GlmStats(
        family="logistic",
        noise_plan="pm_private.logistic.release:logistic_noise_plan",
        release="pm_private.logistic.release:release_logistic_stats",
    ),
    "poisson-stats": GlmStats(
        family="Poisson",
        noise_plan="pm_private.poisson.release:poisson_noise_plan",
        release="pm_private.poisson.release:release_poisson_stats",
        max_y_bound="pm_private.poisson.release:MAX_Y_BOUND",
    ),
}


def add_parser(subparsers) -> None:
    """Add one release per entry of :data:`FAMILIES` to the kinds of ``pm-private release``.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        The release kinds (the subparsers of ``pm-private release``); each new parser's ``run``
        default makes the release.
    """
    for name, stats in FAMILIES.items():
        family = stats.family
        parser = subparsers.add_parser(
            name,
            help=f"(ε, δ)-DP degree-2 statistics of {family} regression for the noise-aware model "
            "(Kulkarni et al. 2021)",
            description=f"Gaussian release of Σx, Σy, Sxx, Σ y·x of {family} regression "
            "(Kulkarni et al. 2021; Huggins, Adams & Broderick 2017), rows projected onto the x bound"
            + (", counts clipped to the y bound" if stats.counts else ", labels 0/1 or ±1")
            + ", replace-one neighbours.  Fit it with 'pm-private fit'.",
        )
        release_arguments(parser)
        parser.add_argument(
            "--target", required=True, help="count column" if stats.counts else "label column (0/1 or ±1)"
        )
        parser.add_argument("--features", nargs="+", help="feature columns (default: every other column)")
        parser.add_argument("--delta", type=types.delta, required=True, help="δ of the release, spent from the ledger")
        rule = "poisson_bounds" if stats.counts else "logistic_bounds"
        parser.add_argument(
            "--x-bound",
            type=types.bound,
            required=True,
            help="public bound on the ℓ2 norm of a (preprocessed) row; the library's rule for standardised "
            f"covariates, from n, d, ε and δ (and public rows), is pm_private.{rule} in Python",
        )
        if stats.counts:
            parser.add_argument(
                "--y-bound",
                type=types.positive_int,
                required=True,
                help="public count bound (an integer ≤ 1000): larger counts are clipped to it",
            )
        public_feature_group(parser)
        parser.set_defaults(run=_run, command_parser=parser)


def _noise_plan(args, stats: GlmStats, d: int):
    """The noise plan of a GLM statistics release: a function of the public arguments and d only
    (ValueError naming an argument the release would refuse)."""
    bounds = {"y_bound": args.y_bound} if stats.counts else {}
    return load(stats.noise_plan)(d, epsilon=args.epsilon, delta=args.delta, x_bound=args.x_bound, **bounds)


def _run(parser, args) -> None:
    from ..privacy.validation import check_count

    stats = FAMILIES[args.kind]
    if stats.counts:
        try:
            check_count("--y-bound", args.y_bound, 1, load(stats.max_y_bound))
        except ValueError as error:
            parser.error(str(error))
    available = table_columns(parser, args)
    features = args.features or [c for c in available if c != args.target]
    if not features:
        parser.error("no feature column: give --features")
    check_columns(parser, args, available, [*features, args.target])
    try:
        plan = _noise_plan(args, stats, len(features))
    except ValueError as error:
        parser.error(str(error))
    refuse_raw_covariates(parser, args)
    preprocessing = public_preprocessing(parser, args, features, response=False)  # the features only, or None
    context = _context(args, stats, preprocessing, len(features))
    if args.dry_run:
        lines = plan.lines()
        if preprocessing is not None:
            lines.append("public preprocessing: " + context["constants"])
        dry_run(args, lines)
        return
    frame = read(args.data, [*features, args.target])
    X = numeric(parser, frame, features)
    y = numeric(parser, frame, [args.target])[:, 0]
    accountant = open_ledger(parser, args)
    bounds = {"y_bound": args.y_bound} if stats.counts else {}

    def release():
        return load(stats.release)(
            X,
            y,
            epsilon=args.epsilon,
            delta=args.delta,
            x_bound=args.x_bound,
            preprocessing=preprocessing,
            accountant=accountant,
            **bounds,
        )

    write_release(parser, args, accountant, release, features=features, target=args.target, preprocessing=context)


def _context(args, stats: GlmStats, preprocessing, d: int) -> dict:
    """What was done to the rows before the release, with the public constants (for predictions)."""
    context = {
        "rows": "all rows of the file (none dropped; n is public)",
        "features": "as read; rows projected by the mechanism onto the x bound",
        "target": "counts clipped by the mechanism to the y bound" if stats.counts else "labels as ±1",
    }
    if preprocessing is not None:
        import numpy as np

        context.update(
            features="(x − x_center)/x_scale with the public constants below, then rows projected onto the x bound",
            constants=preprocessing_source(args, ("x_center", "x_scale")),
            x_center=np.broadcast_to(preprocessing.x_center if preprocessing.x_center is not None else 0.0, (d,)),
            x_scale=np.broadcast_to(preprocessing.x_scale if preprocessing.x_scale is not None else 1.0, (d,)),
        )
    return context

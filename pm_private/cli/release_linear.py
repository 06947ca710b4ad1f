"""``pm-private release linear-stats DATA``: sufficient statistics for linear regression, ε-DP by
the Laplace mechanism (Honkela et al. 2018) or (ε, δ)-DP by the Gaussian mechanism (Sheffet 2017;
Wang 2018), after a public centre and scale that the release carries."""

from __future__ import annotations

import argparse
import math

from ..privacy import argtypes as types
from ..privacy.relations import ADD_REMOVE
from .common import (
    add_max_rows_argument,
    add_relation_argument,
    add_release_parser,
    check_max_rows_argument,
    dry_run,
    numeric,
    open_ledger,
    preprocessing_source,
    print_clip_report,
    public_feature_arguments,
    public_preprocessing,
    read,
    regression_column_arguments,
    regression_features,
    regression_rows,
    unit_rows_text,
    write_release,
)

DEFAULT_SPLIT = [0.60, 0.35, 0.05]


def add_parser(subparsers) -> None:
    """Add the ``linear-stats`` release to ``subparsers``, the kinds of ``pm-private release``."""
    parser = add_release_parser(
        subparsers,
        "linear-stats",
        _run,
        help="ε-DP sufficient statistics for linear regression (Honkela et al. 2018)",
        description="Clipped, Laplace- or Gaussian-perturbed Sxx, Sxy, Syy (Honkela et al. 2018; Sheffet 2017), "
        "replace-one neighbours (n public) or add-remove (n private).",
    )
    add_relation_argument(parser)
    add_max_rows_argument(parser)
    regression_column_arguments(parser, target="response column")
    parser.add_argument(
        "--noise",
        "--mechanism",
        dest="noise",
        choices=("laplace", "gaussian"),
        default="laplace",
        help="laplace: pure ε-DP, entrywise bounds (Honkela et al. 2018); gaussian: (ε, δ)-DP, row-norm bound, "
        "far less noise at d ≥ 5 (Sheffet 2017; Wang 2018).  --mechanism is its former spelling",
    )
    parser.add_argument("--delta", type=types.delta, help="δ of a gaussian release, spent from the ledger")
    parser.add_argument(
        "--x-bound",
        type=types.bound,
        help="public bound on the (preprocessed) features: on each |value| (laplace) or on each row's ℓ2 norm "
        "(gaussian); required for laplace; for gaussian with public standardisation, leave both bounds out to "
        "have them chosen from n, ε and δ (pm_private.gaussian_bounds: looser as n and ε grow)",
    )
    parser.add_argument(
        "--y-bound", type=types.bound, help="public bound on the (preprocessed) |response| (see --x-bound)"
    )
    parser.add_argument(
        "--split",
        type=types.open_unit_interval,
        nargs=3,
        default=DEFAULT_SPLIT,
        metavar=("P_XX", "P_XY", "P_YY"),
        help="laplace: budget shares of Sxx, Sxy, Syy, summing to 1 (default 0.6 0.35 0.05)",
    )
    parser.add_argument(
        "--scale-response",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="scale a row whose features exceed --x-bound (ℓ2 norm for gaussian, largest |value| for laplace) "
        "as a whole, response included, before clipping the response: fitted coefficients stay the "
        "population's.  Default on for gaussian; off for laplace, which clips each value as Honkela et al. "
        "(2018) do (--no-scale-response projects the gaussian features alone, as Wang 2018 does; both bias "
        "the coefficients when the bound bites)",
    )
    parser.add_argument(
        "--intercept",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="prepend a constant column so that the statistics hold n and the first moments and the fit has an "
        "intercept (default); --no-intercept releases the statistics of the features alone (laplace: the "
        "intercept needs --x-bound ≥ 1)",
    )
    parser.add_argument(
        "--clip-share",
        type=types.unit_interval,
        default=0.05,
        help="share of ε spent on counting the clipped rows and responses (0: none; default 0.05)",
    )
    public = parser.add_argument_group(
        "public preprocessing",
        "x ↦ (x − x_center)/x_scale and y ↦ (y − y_center)/y_scale before clipping; the constants must be public "
        "(declared in advance, or from rows that are not private) and are carried in the release, so that the "
        "fit and its predictions use the same map.  A flag overrides the value from --standardize-from.",
    )
    public_feature_arguments(public)
    public.add_argument("--y-center", type=types.finite_float, metavar="C")
    public.add_argument("--y-scale", type=types.positive_float, metavar="S")


def _preprocessing_context(args, preprocessing) -> dict:
    rows = unit_rows_text(args)
    if preprocessing is None:
        return {
            "rows": rows,
            "features": "as read; clipped by the mechanism to the x bound",
            "target": "as read; clipped by the mechanism to the y bound",
        }
    return {
        "rows": rows,
        "features": "(x − x_center)/x_scale with the public constants of the release, then clipped to the x bound",
        "target": "(y − y_center)/y_scale with the public constants of the release, then clipped to the y bound",
        "constants": preprocessing_source(args, ("x_center", "x_scale", "y_center", "y_scale")),
    }


def _mechanism(args) -> dict:
    """The arguments of the release and of its noise plan that ``--noise`` decides: the mechanism,
    δ (gaussian), the budget split (laplace) and whether a scaled row's response is scaled with it
    (``--scale-response``: default on for gaussian, off for laplace)."""
    gaussian = args.noise == "gaussian"
    return {
        "noise": args.noise,
        "delta": args.delta if gaussian else None,
        "split": None if gaussian else tuple(args.split),
        "scale_response": args.scale_response is not False if gaussian else args.scale_response is True,
        "relation": args.relation,
        "max_rows": args.max_rows,
    }


def _noise_plan(args, d: int):
    """The :class:`~pm_private.released.noise_plan.NoisePlan` of the release the arguments ask for
    (public arguments and d only); ValueError naming an argument the release would refuse."""
    from ..linear.release import linear_noise_plan

    return linear_noise_plan(
        d,
        epsilon=args.epsilon,
        x_bound=args.x_bound,
        y_bound=args.y_bound,
        clip_share=args.clip_share,
        intercept=args.intercept,
        **_mechanism(args),
    )


def _clipping(args) -> str:
    """How the rows are bounded (not noise: a public fact of the release the dry run states)."""
    with_responses = _mechanism(args)["scale_response"]
    if args.noise == "gaussian":
        return "rows with ‖x‖ > x bound are scaled onto it" + (
            " with their responses" if with_responses else " (features only)"
        )
    return (
        "rows with a |feature| > x bound are scaled into the bound with their responses"
        if with_responses
        else "each feature is clipped to ±x bound"
    )


def _suff_stats_bounds(parser, args, d: int, preprocessing):
    """Fill in ``--x-bound`` and ``--y-bound`` of a Gaussian release given neither, from n (the row
    count of DATA, public), d, ε and δ by :func:`pm_private.linear.gaussian_bounds`, on the scale of
    the public standardisation; (n, multiplier) when chosen, else None.  Refuses half-given bounds,
    Laplace releases without bounds and chosen bounds without a public standardisation."""
    given = (args.x_bound is not None, args.y_bound is not None)
    if all(given):
        return None
    if any(given):
        parser.error("give both --x-bound and --y-bound, or neither (gaussian: chosen from n, ε and δ)")
    if args.noise != "gaussian":
        parser.error("--noise laplace needs --x-bound and --y-bound")
    if args.relation == ADD_REMOVE:
        parser.error("--relation add-remove keeps n private, so the bounds cannot be chosen from it: give --x-bound "
                     "and --y-bound")  # fmt: skip
    constants = (args.x_center, args.x_scale, args.y_center, args.y_scale)
    if args.standardize_from is None and any(value is None for value in constants):
        parser.error(
            "bounds are chosen on a standardised scale: give --standardize-from (or all of --x-center, --x-scale, "
            "--y-center and --y-scale), or give --x-bound and --y-bound"
        )
    from ..linear.bounds import gaussian_bounds
    from ..privacy.primitives import check_gaussian_epsilon

    try:
        check_gaussian_epsilon(args.epsilon)
    except ValueError as error:
        parser.error(str(error))
    n = _public_n(args)
    if n < 2:
        parser.error(f"{args.data.name} has {n} data row(s); a release needs at least 2")
    public_y = None
    if args.standardize_from is not None:  # at most max_y_clip of the public responses clipped
        public = numeric(parser, read(args.standardize_from, [args.target]), [args.target])[:, 0]
        public_y = preprocessing.transform_y(public)
    try:
        chosen = gaussian_bounds(
            n,
            d,
            args.epsilon,
            args.delta,
            public_y=public_y,
            clip_share=args.clip_share,
            scale_response=args.scale_response is not False,
            intercept=args.intercept,
        )
    except ValueError as error:
        parser.error(str(error))
    args.x_bound, args.y_bound = chosen.x_bound, chosen.y_bound
    return n, chosen.multiplier


def _public_n(args) -> int:
    """The public n the bounds are chosen for: the rows of DATA, or with ``--unit-column`` its persons."""
    if args.unit_column is None:
        return len(read(args.data, [args.target]))
    return int(read(args.data, [args.unit_column])[args.unit_column].nunique(dropna=False))


def _check_mechanism_options(parser, args) -> None:
    """``--split``, ``--delta`` and ``--clip-share`` against ``--noise`` (``parser.error`` otherwise)."""
    if abs(math.fsum(args.split) - 1) > 1e-9:
        parser.error(f"--split must sum to 1, got {' '.join(map(str, args.split))}")
    if args.noise == "gaussian":
        if args.delta is None:
            parser.error("--noise gaussian needs --delta (the δ of the release, in (0, 1))")
        if args.split != DEFAULT_SPLIT:
            parser.error("--split applies to the Laplace mechanism only (the Gaussian release adds one noise)")
    elif args.delta is not None:
        parser.error("--delta applies to --noise gaussian only (the Laplace release is pure ε-DP)")
    if not (args.clip_share == 0 or 0.001 <= args.clip_share <= 0.5):
        parser.error(f"--clip-share must be 0 or in [0.001, 0.5], got {args.clip_share:g}")


def _run(parser, args) -> None:
    _check_mechanism_options(parser, args)
    check_max_rows_argument(parser, args)
    features = regression_features(parser, args)
    preprocessing = public_preprocessing(parser, args, features)
    chosen_bounds = _suff_stats_bounds(parser, args, len(features), preprocessing)
    try:
        plan = _noise_plan(args, len(features))
    except ValueError as error:
        parser.error(str(error))
    if args.dry_run:
        lines = [*plan.lines(), _clipping(args)]
        if chosen_bounds is not None:
            lines.append(
                f"bounds chosen by gaussian_bounds for n = {chosen_bounds[0]}: x bound {args.x_bound:.6g}, "
                f"y bound {args.y_bound:.6g} (multiplier {chosen_bounds[1]:.4g} of √d and 2)"
            )
        if preprocessing is not None:
            lines.append("public preprocessing: " + _preprocessing_context(args, preprocessing)["constants"])
        dry_run(args, lines, counted_rows=chosen_bounds is not None)
        return
    X, y, unit = regression_rows(parser, args, features)
    if chosen_bounds is not None and args.unit_column is None and len(y) != chosen_bounds[0]:
        parser.error(f"{args.data.name} changed while it was read: the bounds were chosen for {chosen_bounds[0]} rows")
    accountant = open_ledger(parser, args)
    from ..linear.release import release_linear_stats

    def release():
        return release_linear_stats(
            X,
            y,
            epsilon=args.epsilon,
            x_bound=args.x_bound,
            y_bound=args.y_bound,
            accountant=accountant,
            preprocessing=preprocessing,
            clip_share=args.clip_share,
            intercept=args.intercept,
            unit=unit,
            **_mechanism(args),
        )

    stats = write_release(
        parser,
        args,
        accountant,
        release,
        features=features,
        target=args.target,
        preprocessing=_preprocessing_context(args, preprocessing),
    )
    print_clip_report(stats)

"""Command line ``pm-private``: the data holder's releases against a ledger file, the ledger
itself, fitting a model on a release file, and the drug-sensitivity demo.

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
* ``pm-private demo`` — the private drug-sensitivity experiment on built-in data.

Every argument is checked before any data is read or budget spent: bad values are usage
errors (exit code 2); a refused budget exits with code 1 and spends nothing.  A release's
``--note`` is stored with its ledger entry; ``--dry-run`` prints the noise scales and the budget
without reading a data row or opening the ledger.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import os
import sys
import tempfile
from pathlib import Path

from . import _argtypes as types
from .compile_cache import use_compile_cache

__all__ = ["build_parser", "main"]

_TABLE_SUFFIXES = {".csv": "CSV", ".parquet": "Parquet", ".pq": "Parquet"}
_DEFAULT_SPLIT = [0.60, 0.35, 0.05]
_LEDGER_FIELDS = (
    "id",
    "time",
    "status",
    "mechanism",
    "epsilon",
    "delta",
    "neighbours",
    "label",
    "note",
    "process",
    "noise",
)


class _Refused(Exception):
    """The release cannot go ahead (budget); reported with exit code 1."""


# ------------------------------------------------------------------------------ release


def _release_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("data", type=types.existing_file, help="CSV or Parquet file of the private records")
    parser.add_argument("--ledger", type=types.ledger_path, required=True, help="ledger file (created if missing)")
    parser.add_argument(
        "--total-epsilon", type=types.positive_float, help="total ε of a new ledger (required to create one)"
    )
    parser.add_argument("--total-delta", type=types.unit_interval, help="total δ of a new ledger (default 0)")
    parser.add_argument("--epsilon", type=types.epsilon, required=True, help="ε of this release, spent from the ledger")
    parser.add_argument(
        "--out", type=types.new_file, required=True, help="release file to write (JSON; must not exist)"
    )
    parser.add_argument(
        "--note",
        default="",
        help="public note stored with the ledger entry (who asked for the release and why); never a private value",
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="print the noise scales and the budget the release would spend, then stop: no data row is read, "
        "the ledger is not opened and nothing is written",
    )


def _columns(path: Path) -> list[str]:
    import pandas as pd

    if _TABLE_SUFFIXES[path.suffix.lower()] == "Parquet":
        import pyarrow.parquet as pq

        return list(pq.read_schema(path).names)
    return list(pd.read_csv(path, nrows=0).columns)


def _read(path: Path, columns: list[str]):
    import pandas as pd

    if _TABLE_SUFFIXES[path.suffix.lower()] == "Parquet":
        return pd.read_parquet(path, columns=columns)
    return pd.read_csv(path, usecols=columns)


def _table_columns(parser, args) -> list[str]:
    """The columns of DATA, after checking its format (nothing else is read)."""
    suffix = args.data.suffix.lower()
    if suffix not in _TABLE_SUFFIXES:
        parser.error(f"DATA must be a .csv, .parquet or .pq file, got {args.data.name!r}")
    if _TABLE_SUFFIXES[suffix] == "Parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            parser.error("reading Parquet needs pyarrow: pip install 'pm_private[io]'")
    try:
        return _columns(args.data)
    except Exception as error:  # unreadable header: pandas and pyarrow raise their own types
        parser.error(f"cannot read the columns of {str(args.data)!r}: {error}")


def _check_columns(parser, args, available: list[str], needed: list[str]) -> None:
    missing = [c for c in needed if c not in available]
    if missing:
        parser.error(
            f"{str(args.data)!r} has no column {', '.join(map(repr, missing))} (columns: {', '.join(available)})"
        )
    if len(set(needed)) != len(needed):
        parser.error(f"a column is used twice: {', '.join(needed)}")


def _open_ledger(parser, args):
    from .privacy.accountant import PrivacyAccountant
    from .privacy.budget import BudgetExceededError

    delta = getattr(args, "delta", None) or 0.0
    if not args.ledger.exists():
        if args.total_epsilon is None:
            parser.error(
                f"--ledger {str(args.ledger)!r} does not exist; creating it needs --total-epsilon (and --total-delta)"
            )
        # a ledger's totals are fixed when it is created: refuse a release it could never hold
        # before the file exists, so that the corrected command can create it
        total_delta = args.total_delta or 0.0
        if args.epsilon > args.total_epsilon or delta > total_delta:
            parser.error(
                f"--ledger {str(args.ledger)!r} does not exist, and the totals it would be created with "
                f"(--total-epsilon {args.total_epsilon:g}, --total-delta {total_delta:g}) are below this "
                f"release's (--epsilon {args.epsilon:g}, --delta {delta:g}); nothing was created"
            )
    try:
        accountant = PrivacyAccountant.open(args.ledger, epsilon=args.total_epsilon, delta=args.total_delta)
    except (ValueError, OSError) as error:
        parser.error(f"--ledger: {error}")
    try:
        accountant.check(args.epsilon, delta)
    except BudgetExceededError as error:
        raise _Refused(f"{_budget_text(args)}: {error}") from None
    return accountant


def _numeric(parser, frame, columns: list[str]):
    import numpy as np
    import pandas as pd

    for column in columns:
        series = frame[column]
        if not (pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series)):
            parser.error(f"column {column!r} is not numeric (dtype {series.dtype})")
        if not np.isfinite(series.to_numpy(dtype=np.float64)).all():
            parser.error(f"column {column!r} has missing or non-finite values; pm-private drops no rows (n is public)")
    return frame[columns].to_numpy(dtype=np.float64)


def _write_release(parser, args, accountant, release, **context):
    """Release (the ledger entry carries ``--note``), then write the release file atomically: a
    failed release leaves no file, and the file never exists half written (it is written under a
    hidden name in the same folder, made before the release so that an unwritable folder spends
    nothing, then linked into place).  Returns the release."""
    from .privacy.accountant import ledger_note
    from .privacy.budget import BudgetExceededError
    from .release_file import release_to_dict, write_release_file

    try:
        descriptor, partial = tempfile.mkstemp(dir=args.out.parent, prefix=f".{args.out.name}.", suffix=".partial")
    except OSError as error:
        parser.error(f"--out: cannot write into {str(args.out.parent)!r}: {error.strerror}")
    partial = Path(partial)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        try:
            with ledger_note(args.note):
                result = release()
            write_release_file(handle, [release_to_dict(result, **context)])
        except BaseException as error:
            handle.close()
            partial.unlink()
            if isinstance(error, BudgetExceededError):  # another process spent since the check
                raise _Refused(f"{_budget_text(args)}: {error}") from None
            if isinstance(error, ValueError):  # a public argument refused before any charge
                parser.error(str(error))
            raise
    try:
        os.link(partial, args.out)  # fails if --out appeared meanwhile: never overwritten
    except FileExistsError:
        kept = args.out.with_name(f"{args.out.stem}.{os.getpid()}{args.out.suffix}")
        os.replace(partial, kept)
        sys.stderr.write(f"pm-private: {args.out} appeared during the release; the release was written to {kept}\n")
        args.out = kept
    else:
        partial.unlink()
    eps, delta = accountant.spent
    print(f"released {args.kind} of {args.data.name} with {_budget_text(args)}; wrote {args.out}")
    print(f"ledger {args.ledger}: spent ε {eps:g} of {accountant.epsilon:g}, δ {delta:g} of {accountant.delta:g}")
    return result


def _budget_text(args) -> str:
    delta = getattr(args, "delta", None)
    return f"ε = {args.epsilon:g}" + (f", δ = {delta:g}" if delta else "")


def _dry_run(args, lines: list[str], *, counted_rows: bool = False) -> None:
    """Print what a release would spend and add, having read no data value (only the public row
    count where ``counted_rows``) and opened no ledger."""
    print(f"dry run: release {args.kind} of {args.data.name} would spend {_budget_text(args)} from {args.ledger}")
    for line in lines:
        print(f"  {line}")
    read = (
        "only the number of data rows was read (n is public)" if counted_rows else "nothing was read from the data rows"
    )
    print(f"{read}, the ledger was not opened and no file was written")


def _per_feature(parser, option: str, values, features: list[str]):
    """One public constant per feature from ``values`` (one value for all, or one per feature)."""
    if values is None:
        return None
    if len(values) not in (1, len(features)):
        parser.error(f"{option} takes 1 value or one per feature ({len(features)}), got {len(values)}")
    return values[0] if len(values) == 1 else list(values)


def _public_preprocessing(parser, args, features: list[str]):
    """The release's public centre and scale, from ``--standardize-from`` and the constant flags
    (a flag overrides the file's value), or None when none is given."""
    import numpy as np

    from .released.preprocessing import Preprocessing

    constants = {
        "x_center": _per_feature(parser, "--x-center", args.x_center, features),
        "x_scale": _per_feature(parser, "--x-scale", args.x_scale, features),
        "y_center": args.y_center,
        "y_scale": args.y_scale,
    }
    derived = {}
    if args.standardize_from is not None:
        source = argparse.Namespace(data=args.standardize_from)
        available = _table_columns(parser, source)
        columns = [*features, args.target]
        missing = [c for c in columns if c not in available]
        if missing:
            parser.error(
                f"--standardize-from {str(args.standardize_from)!r} has no column {', '.join(map(repr, missing))}"
            )
        values = _numeric(parser, _read(args.standardize_from, columns), columns)
        if len(values) < 2:
            parser.error(f"--standardize-from {str(args.standardize_from)!r} needs at least 2 rows")
        mean, sd = values.mean(axis=0), values.std(axis=0)
        sd = np.where(sd > 0, sd, 1.0)  # a constant public column is centred, not scaled
        derived = {"x_center": mean[:-1], "x_scale": sd[:-1], "y_center": mean[-1], "y_scale": sd[-1]}
    chosen = {k: v for k, v in {**derived, **{k: v for k, v in constants.items() if v is not None}}.items()}
    if not chosen:
        return None
    try:
        return Preprocessing(**chosen)
    except ValueError as error:
        parser.error(f"public preprocessing: {error}")


def _preprocessing_context(args, preprocessing) -> dict:
    rows = "all rows of the file (none dropped; n is public)"
    if preprocessing is None:
        return {
            "rows": rows,
            "features": "as read; clipped by the mechanism to the x bound",
            "target": "as read; clipped by the mechanism to the y bound",
        }
    source = []
    if args.standardize_from is not None:
        source.append(f"means and standard deviations of the public file {args.standardize_from.name}")
    flags = [
        f"--{k.replace('_', '-')}"
        for k in ("x_center", "x_scale", "y_center", "y_scale")
        if getattr(args, k) is not None
    ]
    if flags:
        source.append(f"declared constants ({', '.join(flags)})")
    return {
        "rows": rows,
        "features": "(x − x_center)/x_scale with the public constants of the release, then clipped to the x bound",
        "target": "(y − y_center)/y_scale with the public constants of the release, then clipped to the y bound",
        "constants": " and ".join(source),
    }


def _suff_stats_noise(args, d: int) -> list[str]:
    """The noise of a linear-stats release: a function of the public arguments and d only."""
    from .linear.release import gaussian_release_vector, sensitivities

    p = args.clip_share
    if args.mechanism == "gaussian":
        from .privacy.primitives import gaussian_scale

        size, sensitivity, _ = gaussian_release_vector(
            d, args.x_bound, args.y_bound, p, scale_response=args.scale_response is not False
        )
        sigma = gaussian_scale(size, sensitivity, args.epsilon, args.delta)
        lines = [
            f"Gaussian mechanism, (ε, δ) = ({args.epsilon:g}, {args.delta:g}), replace-one neighbours",
            f"ℓ2 sensitivity {sensitivity:.6g}; noise s.d. σ = {sigma:.6g} on each diagonal entry, "
            f"σ/√2 = {sigma / math.sqrt(2):.6g} off it",
            "rows with ‖x‖ > x bound are scaled onto it"
            + (" with their responses" if args.scale_response is not False else " (features only)"),
        ]
        if p > 0:
            counts = "clipped-row and clipped-response counts" + (
                " and the rows' summed squared scale factors" if args.scale_response is not False else ""
            )
            lines.append(f"{counts}: {p:.0%} of the privacy cost, in the same mechanism")
        return lines
    lines = [f"Laplace mechanism, ε = {args.epsilon:g} (pure), replace-one neighbours; d = {d}"]
    for name, share, sensitivity in zip(
        ("Sxx", "Sxy", "Syy"), args.split, sensitivities(d, args.x_bound, args.y_bound), strict=True
    ):
        eps = share * (1.0 - p) * args.epsilon
        lines.append(f"{name}: ε {eps:.6g}, ℓ1 sensitivity {sensitivity:.6g}, Laplace scale {sensitivity / eps:.6g}")
    if p > 0:
        lines.append(
            f"clipped-row and clipped-response counts: ε {p * args.epsilon:.6g}, Laplace scale {2 / (p * args.epsilon):.6g}"
        )
    lines.append(
        "rows with a |feature| > x bound are scaled into the bound with their responses"
        if args.scale_response
        else "each feature is clipped to ±x bound"
    )
    return lines


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
    if args.mechanism != "gaussian":
        parser.error("--mechanism laplace needs --x-bound and --y-bound")
    constants = (args.x_center, args.x_scale, args.y_center, args.y_scale)
    if args.standardize_from is None and any(value is None for value in constants):
        parser.error(
            "bounds are chosen on a standardised scale: give --standardize-from (or all of --x-center, --x-scale, "
            "--y-center and --y-scale), or give --x-bound and --y-bound"
        )
    from .linear.bounds import gaussian_bounds
    from .privacy.primitives import check_gaussian_epsilon

    try:
        check_gaussian_epsilon(args.epsilon)
    except ValueError as error:
        parser.error(str(error))
    n = len(_read(args.data, [args.target]))
    if n < 2:
        parser.error(f"{args.data.name} has {n} data row(s); a release needs at least 2")
    public_y = None
    if args.standardize_from is not None:  # at most max_y_clip of the public responses clipped
        public = _numeric(parser, _read(args.standardize_from, [args.target]), [args.target])[:, 0]
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
        )
    except ValueError as error:
        parser.error(str(error))
    args.x_bound, args.y_bound = chosen.x_bound, chosen.y_bound
    return n, chosen.multiplier


def _release_suff_stats(parser, args) -> None:
    if abs(math.fsum(args.split) - 1) > 1e-9:
        parser.error(f"--split must sum to 1, got {' '.join(map(str, args.split))}")
    if args.mechanism == "gaussian":
        if args.delta is None:
            parser.error("--mechanism gaussian needs --delta (the δ of the release, in (0, 1))")
        if args.split != _DEFAULT_SPLIT:
            parser.error("--split applies to the Laplace mechanism only (the Gaussian release adds one noise)")
    elif args.delta is not None:
        parser.error("--delta applies to --mechanism gaussian only (the Laplace release is pure ε-DP)")
    if not (args.clip_share == 0 or 0.001 <= args.clip_share <= 0.5):
        parser.error(f"--clip-share must be 0 or in [0.001, 0.5], got {args.clip_share:g}")
    available = _table_columns(parser, args)
    features = args.features or [c for c in available if c != args.target]
    if not features:
        parser.error("no feature column: give --features")
    _check_columns(parser, args, available, [*features, args.target])
    preprocessing = _public_preprocessing(parser, args, features)
    chosen_bounds = _suff_stats_bounds(parser, args, len(features), preprocessing)
    from .linear.release import check_release_arguments, gaussian_release_vector
    from .privacy.primitives import check_gaussian_epsilon, check_noise_scale

    try:
        if args.mechanism == "gaussian":
            check_gaussian_epsilon(args.epsilon)
            _, sensitivity, _ = gaussian_release_vector(
                len(features),
                args.x_bound,
                args.y_bound,
                args.clip_share,
                scale_response=args.scale_response is not False,
            )
            check_noise_scale(sensitivity, args.epsilon)
        else:
            check_release_arguments(
                len(features),
                epsilon=args.epsilon,
                x_bound=args.x_bound,
                y_bound=args.y_bound,
                split=tuple(args.split),
                clip_share=args.clip_share,
            )
    except ValueError as error:
        parser.error(str(error))
    if args.dry_run:
        lines = _suff_stats_noise(args, len(features))
        if chosen_bounds is not None:
            lines.append(
                f"bounds chosen by gaussian_bounds for n = {chosen_bounds[0]}: x bound {args.x_bound:.6g}, "
                f"y bound {args.y_bound:.6g} (multiplier {chosen_bounds[1]:.4g} of √d and 2)"
            )
        if preprocessing is not None:
            lines.append("public preprocessing: " + _preprocessing_context(args, preprocessing)["constants"])
        _dry_run(args, lines, counted_rows=chosen_bounds is not None)
        return
    accountant = _open_ledger(parser, args)
    frame = _read(args.data, [*features, args.target])
    if chosen_bounds is not None and len(frame) != chosen_bounds[0]:
        parser.error(f"{args.data.name} changed while it was read: the bounds were chosen for {chosen_bounds[0]} rows")
    X = _numeric(parser, frame, features)
    y = _numeric(parser, frame, [args.target])[:, 0]
    from .linear.release import release_linear_stats, release_linear_stats_laplace

    if args.mechanism == "gaussian":

        def release():
            return release_linear_stats(
                X,
                y,
                epsilon=args.epsilon,
                delta=args.delta,
                x_bound=args.x_bound,
                y_bound=args.y_bound,
                accountant=accountant,
                preprocessing=preprocessing,
                clip_share=args.clip_share,
                scale_response=args.scale_response is not False,
            )
    else:

        def release():
            return release_linear_stats_laplace(
                X,
                y,
                epsilon=args.epsilon,
                x_bound=args.x_bound,
                y_bound=args.y_bound,
                split=tuple(args.split),
                accountant=accountant,
                preprocessing=preprocessing,
                clip_share=args.clip_share,
                scale_response=args.scale_response is True,
            )

    stats = _write_release(
        parser,
        args,
        accountant,
        release,
        features=features,
        target=args.target,
        preprocessing=_preprocessing_context(args, preprocessing),
    )
    _print_clip_report(stats)


def _print_clip_report(stats) -> None:
    """The release's own estimate of how much its clipping changed, with a warning when it is large."""
    from .linear.clipping import clip_report

    for report in clip_report(stats, warn=False):
        print(f"estimated from the release: {report}")
        if report.large:
            print(
                "warning: much of the data was clipped, so the statistics describe the clipped rows and "
                "fitted coefficients are biased (towards zero where responses were clipped); choose wider "
                "bounds (on public data) if you can"
            )


def _release_weibull(parser, args) -> None:
    from .survival.weibull.mechanisms import check_weibull_arguments

    try:
        check_weibull_arguments(
            epsilon=args.epsilon, horizon=args.horizon, gamma=args.gamma, omega=args.omega, K=args.K
        )
    except ValueError as error:
        parser.error(str(error))
    _check_columns(parser, args, _table_columns(parser, args), [args.time, args.event])
    if args.dry_run:
        _dry_run(
            args,
            [
                f"LSP (ε/2 = {args.epsilon / 2:g}) + TLL (ε/2 = {args.epsilon / 2:g}), pure ε-DP, replace-one neighbours",
                f"horizon {args.horizon:g}, K = {args.K}, γ = {args.gamma:g}, ω = {args.omega:g} "
                "(the noise scales also depend on n, which only the data rows give)",
            ],
        )
        return
    accountant = _open_ledger(parser, args)
    frame = _read(args.data, [args.time, args.event])
    values = _numeric(parser, frame, [args.time, args.event])
    time, event = values[:, 0], values[:, 1]
    if (time < 0).any() or (time > args.horizon).any():
        parser.error(f"column {args.time!r} must lie in [0, --horizon {args.horizon:g}] (the horizon is public)")
    if not ((event == 0) | (event == 1)).all():
        parser.error(f"column {args.event!r} must be 0 (censored) or 1 (event)")
    try:  # the ladder's memory with the public n
        check_weibull_arguments(horizon=args.horizon, gamma=args.gamma, omega=args.omega, K=args.K, n=time.size)
    except ValueError as error:
        parser.error(str(error))
    from .survival.weibull.mechanisms import weibull_private

    _write_release(
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
        ),
        time=args.time,
        event=args.event,
        preprocessing={"rows": "all rows of the file (none dropped; n is public)"},
    )


_GLM_KINDS = {"logistic-stats": "logistic_stats", "poisson-stats": "poisson_stats"}


def _glm_noise(args, d: int) -> list[str]:
    """The noise of a GLM statistics release: a function of the public arguments and d only."""
    from .logistic.release import logistic_sensitivity
    from .poisson.release import poisson_entry_weights, poisson_sensitivity
    from .privacy.primitives import gaussian_scale
    from .released.degree2 import stat_pairs

    size = stat_pairs(d)[0].size
    poisson = args.kind == "poisson-stats"
    sensitivity = poisson_sensitivity(args.x_bound) if poisson else logistic_sensitivity(args.x_bound)
    sigma = gaussian_scale(size, sensitivity, args.epsilon, args.delta)
    lines = [
        f"Gaussian mechanism, (ε, δ) = ({args.epsilon:g}, {args.delta:g}), replace-one neighbours; "
        f"{size} statistics (d = {d})",
        f"ℓ2 sensitivity {sensitivity:.6g}; noise s.d. σ = {sigma:.6g} on the diagonal of Sxx, "
        f"σ/√2 = {sigma / math.sqrt(2):.6g} on Σx and the other entries of Sxx",
    ]
    if poisson:
        weight = poisson_entry_weights(d, args.x_bound, args.y_bound)[d]
        lines.append(f"counts clipped to {args.y_bound}; noise s.d. {sigma / weight:.6g} on Σy and Σ y·x")
    else:
        lines.append(f"labels as ±1; noise s.d. σ/√2 = {sigma / math.sqrt(2):.6g} on Σy and Σ y·x")
    return lines


def _glm_preprocessing(parser, args, features: list[str]):
    """The public centre and scale of the features (the labels or counts are not transformed), or None."""
    if args.standardize_from is None and args.x_center is None and args.x_scale is None:
        return None
    # the linear release's preprocessing with the response left as it is
    features_only = argparse.Namespace(**{**vars(args), "y_center": 0.0, "y_scale": 1.0})
    return _public_preprocessing(parser, features_only, features)


def _release_glm_stats(parser, args) -> None:
    from .logistic.release import logistic_sensitivity
    from .poisson.release import MAX_Y_BOUND, poisson_sensitivity
    from .privacy.primitives import check_gaussian_epsilon, check_noise_scale
    from .privacy.validation import check_count

    poisson = args.kind == "poisson-stats"
    try:
        check_gaussian_epsilon(args.epsilon)
        sensitivity = poisson_sensitivity(args.x_bound) if poisson else logistic_sensitivity(args.x_bound)
        check_noise_scale(sensitivity, args.epsilon)
        if poisson:
            check_count("--y-bound", args.y_bound, 1, MAX_Y_BOUND)
    except ValueError as error:
        parser.error(str(error))
    available = _table_columns(parser, args)
    features = args.features or [c for c in available if c != args.target]
    if not features:
        parser.error("no feature column: give --features")
    _check_columns(parser, args, available, [*features, args.target])
    preprocessing = _glm_preprocessing(parser, args, features)
    context = _glm_context(args, preprocessing, len(features))
    if args.dry_run:
        lines = _glm_noise(args, len(features))
        if preprocessing is not None:
            lines.append("public preprocessing: " + context["constants"])
        _dry_run(args, lines)
        return
    accountant = _open_ledger(parser, args)
    frame = _read(args.data, [*features, args.target])
    X = _numeric(parser, frame, features)
    y = _numeric(parser, frame, [args.target])[:, 0]
    if preprocessing is not None:
        X = preprocessing.transform_x(X)
    from .logistic.release import release_logistic_stats
    from .poisson.release import release_poisson_stats

    def release():
        common = dict(epsilon=args.epsilon, delta=args.delta, x_bound=args.x_bound, accountant=accountant)
        if poisson:
            return release_poisson_stats(X, y, y_bound=args.y_bound, **common)
        return release_logistic_stats(X, y, **common)

    _write_release(parser, args, accountant, release, features=features, target=args.target, preprocessing=context)


def _glm_context(args, preprocessing, d: int) -> dict:
    """What was done to the rows before the release, with the public constants (for predictions)."""
    context = {
        "rows": "all rows of the file (none dropped; n is public)",
        "features": "as read; rows projected by the mechanism onto the x bound",
        "target": "labels as ±1" if args.kind == "logistic-stats" else "counts clipped by the mechanism to the y bound",
    }
    if preprocessing is not None:
        source = []
        if args.standardize_from is not None:
            source.append(f"means and standard deviations of the public file {args.standardize_from.name}")
        flags = [f"--{k.replace('_', '-')}" for k in ("x_center", "x_scale") if getattr(args, k) is not None]
        if flags:
            source.append(f"declared constants ({', '.join(flags)})")
        import numpy as np

        context.update(
            features="(x − x_center)/x_scale with the public constants below, then rows projected onto the x bound",
            constants=" and ".join(source),
            x_center=np.broadcast_to(preprocessing.x_center if preprocessing.x_center is not None else 0.0, (d,)),
            x_scale=np.broadcast_to(preprocessing.x_scale if preprocessing.x_scale is not None else 1.0, (d,)),
        )
    return context


# ------------------------------------------------------------------------------ ledger


def _ledger_value(entry, name):
    if name == "time":
        return entry.time.date().isoformat()  # kept to the day
    if name == "noise":
        return json.dumps([[e.kind, e.scale, e.sensitivity] for e in entry.noise])
    return getattr(entry, name)


def _ledger_rows(accountant) -> list[dict]:
    return [{name: _ledger_value(e, name) for name in _LEDGER_FIELDS} for e in accountant.history]


def _next_noise(kind: str, epsilon: float, delta: float | None):
    from .privacy.primitives import gaussian_noise_event, laplace_noise_event

    if kind == "gaussian":
        return (gaussian_noise_event(1, 1.0, epsilon, delta),)
    if kind == "laplace":
        return (laplace_noise_event(1.0, epsilon),)
    return ()


def _export(target: str, text: str) -> None:
    if target == "-":
        sys.stdout.write(text)
    else:
        Path(target).write_text(text, encoding="utf-8")


def _show_ledger(parser, args) -> None:
    from .privacy.accountant import PrivacyAccountant

    for option in ("csv", "json"):
        target = getattr(args, option)
        if target not in (None, "-"):
            try:
                types.output_file(target)
            except argparse.ArgumentTypeError as error:
                parser.error(f"--{option}: {error}")
    if args.next is None and (args.epsilon is not None or args.delta is not None):
        parser.error("--epsilon and --delta describe the release of --next; give --next")
    if args.next is not None and args.epsilon is None:
        parser.error("--next needs --epsilon (and --delta for gaussian)")
    if args.next == "gaussian" and not args.delta:
        parser.error("--next gaussian needs --delta > 0")
    if args.next == "laplace" and args.delta:
        parser.error("--next laplace is pure ε-DP: give no --delta")
    if args.upgrade:
        from .privacy.ledger import upgrade_ledger

        try:
            backup = upgrade_ledger(args.ledger)
        except (ValueError, OSError) as error:
            parser.error(str(error))
        print(f"ledger {args.ledger} upgraded to the current format; the original is kept as {backup}")
    try:
        accountant = PrivacyAccountant.open(args.ledger)
    except (ValueError, OSError) as error:
        parser.error(str(error))
    rows = _ledger_rows(accountant)
    eps, delta = accountant.spent
    tight = accountant.tight_epsilon()
    cost = None
    if args.next is not None:
        delta_next = args.delta or 0.0
        try:
            noise = _next_noise(args.next, args.epsilon, delta_next)
        except ValueError as error:
            parser.error(f"--next: {error}")
        cost = accountant.cost(args.epsilon, delta_next, noise=noise)
        fits = (
            cost[0] <= accountant.epsilon * (1 + 1e-9) and delta + delta_next <= accountant.delta * (1 + 1e-9)
        ) or cost[1] <= accountant.epsilon * (1 + 1e-9)
    if args.csv:
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=_LEDGER_FIELDS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        _export(args.csv, buffer.getvalue())
    if args.json:
        document = {
            "ledger": str(args.ledger),
            "total": {"epsilon": accountant.epsilon, "delta": accountant.delta},
            "spent": {"epsilon": eps, "delta": delta},
            "remaining": dict(zip(("epsilon", "delta"), accountant.remaining, strict=True)),
            "tight": {"epsilon": tight, "delta": accountant.delta},
            "entries": rows,
        }
        if cost is not None:
            document["next"] = {
                "kind": args.next,
                "epsilon": args.epsilon,
                "delta": args.delta or 0.0,
                "basic_epsilon_after": cost[0],
                "tight_epsilon_after": cost[1],
                "fits": fits,
            }
        _export(args.json, json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    if args.csv == "-" or args.json == "-":
        return
    print(f"ledger {args.ledger}")
    print(f"total   ε {accountant.epsilon:g}, δ {accountant.delta:g}")
    print(f"spent   ε {eps:g}, δ {delta:g} (basic composition, reservations included)")
    print(f"tight   ε {tight:.6g} at δ {accountant.delta:g} (Gaussian and Laplace noise composed by PLD)")
    print(f"remains ε {accountant.remaining[0]:g}, δ {accountant.remaining[1]:g} (basic)")
    if cost is not None:
        print(
            f"next    {args.next} release at ε {args.epsilon:g}, δ {args.delta or 0.0:g}: basic ε {cost[0]:.6g}, "
            f"tight ε {cost[1]:.6g} at δ {accountant.delta:g} -> {'fits' if fits else 'refused'} (dry run, nothing spent)"
        )
    if rows:
        print(f"\n{'id':>4}  {'day (UTC)':<19}  {'status':<8}  {'ε':>9}  {'δ':>9}  mechanism, label")
    for row in rows:
        note = f" [{row['note']}]" if row["note"] else ""
        print(
            f"{row['id']:>4}  {row['time']:<19}  {row['status']:<8}  {row['epsilon']:>9.4g}  {row['delta']:>9.3g}  "
            f"{row['mechanism']}, {row['label']}{note}"
        )


# ------------------------------------------------------------------------------ fit


def _choose_entry(parser, args, entries: list[dict]) -> int:
    """The position of the sufficient-statistics release to fit; a usage error that says what
    the file holds when it holds none (or several and no ``--index``)."""
    from .release_file import SUFF_STATS

    candidates = [i for i, e in enumerate(entries) if e["kind"] in (SUFF_STATS, *_GLM_KINDS.values())]
    if not candidates:
        held = "; ".join(
            f"{i}: {e['kind']} ({e.get('mechanism', '?')}), outputs {', '.join(e.get('outputs', {})) or 'none'}"
            for i, e in enumerate(entries)
        )
        parser.error(
            f"{str(args.release)!r} holds no release that 'pm-private fit' can fit: it fits Bayesian linear "
            f"regression on sufficient statistics (kind {SUFF_STATS!r}, written by 'pm-private release "
            "linear-stats') and noise-aware logistic or Poisson regression on their statistics (kinds "
            "'logistic_stats', 'poisson_stats', written by 'pm-private release logistic-stats' or "
            f"'poisson-stats'). The file holds [{held or 'nothing'}]; such a release is itself the private "
            "estimate: read its outputs with pm_private.release_file.read_release_file"
        )
    if args.index is None:
        if len(candidates) != 1:
            parser.error(
                f"{str(args.release)!r} holds {len(candidates)} releases that can be fitted (at {candidates}); "
                "choose one with --index"
            )
        return candidates[0]
    if args.index not in candidates:
        parser.error(f"--index {args.index}: no release that can be fitted at that position (found {candidates})")
    return args.index


def _provenance(args, entry: dict, index: int) -> dict:
    """Attributes of the posterior file: the release's privacy and where it came from."""
    import hashlib
    from importlib.metadata import PackageNotFoundError, version

    try:
        library = version("pm_private")
    except PackageNotFoundError:  # run from a source tree
        library = "unknown (not installed)"
    return {
        "pm_private_version": library,
        "release_file": args.release.name,
        "release_file_sha256": hashlib.sha256(args.release.read_bytes()).hexdigest(),
        "release_index": index,
        "release_kind": entry["kind"],
        "mechanism": entry["mechanism"],
        "epsilon": float(entry["epsilon"]),
        "delta": float(entry["delta"]),
        "neighbours": entry["neighbours"],
        "private": int(bool(entry["private"])),
        "model": "noise-aware Bayesian linear regression on released sufficient statistics "
        "(Bernstein & Sheldon 2019; Honkela et al. 2018)",
    }


class _ProgressLines:
    """A line every ``every`` (fraction) of the sampler's iterations, for output that is not a
    terminal (a log file shows the sampler is alive and how long it has left).  The clock starts
    at the first iteration, so compiling does not distort the estimate."""

    def __init__(self, total: int, every: float = 0.1):
        import time

        self._clock = time.monotonic
        self.total = total
        self.step = max(1, math.ceil(total * every))
        self.done = 0
        self.created = self._clock()
        self.start = None

    def __call__(self, trace=None, draw=None) -> None:
        now = self._clock()
        self.done += 1
        if self.start is None:
            self.start = now
            print(f"fit: compiled and initialised in {now - self.created:.0f} s; sampling", flush=True)
        if self.done % self.step and self.done != self.total:
            return
        elapsed = now - self.start
        left = elapsed * (self.total - self.done) / max(self.done - 1, 1)
        phase = "tuning" if draw is not None and draw.tuning else "drawing"
        chain = f"chain {draw.chain + 1}, " if draw is not None else ""
        print(
            f"fit: {100 * self.done / self.total:3.0f}% of {self.total} iterations ({chain}{phase}), "
            f"{elapsed:.0f} s sampling, about {left:.0f} s left",
            flush=True,
        )


def _fit(parser, args) -> None:
    from .release_file import read_release_file

    try:
        entries = read_release_file(args.release)
    except (ValueError, OSError) as error:
        parser.error(str(error))
    index = _choose_entry(parser, args, entries)
    entry = entries[index]
    stem = args.release.with_suffix("")
    posterior = args.posterior or Path(f"{stem}.posterior.nc")
    summary = args.summary or Path(f"{stem}.summary.csv")
    for option, path in (("--posterior", posterior), ("--summary", summary)):
        try:
            types.output_file(str(path))
        except argparse.ArgumentTypeError as error:
            parser.error(f"{option}: {error}")
    try:
        import h5netcdf  # noqa: F401
        import h5py  # noqa: F401
    except ImportError:
        parser.error("writing netCDF needs h5netcdf and h5py: pip install 'pm_private[io]'")

    use_compile_cache()
    import logging
    import warnings

    # The C backend warns that it found no BLAS to link; this model is small dense algebra.
    warnings.filterwarnings("ignore", message="PyTensor could not link to a BLAS")
    # PyMC calls its dense mass-matrix adaptation experimental on every run.
    warnings.filterwarnings("ignore", message="QuadPotentialFullAdapt is an experimental feature")
    logging.getLogger("pytensor.tensor.blas").setLevel(logging.ERROR)
    import arviz as az
    import pymc as pm

    from .linear.model import linear_model
    from .released.sampling import laplace_nuts, laplace_start

    bar = not args.no_progress and sys.stdout.isatty()
    lines = None if args.no_progress or bar else _ProgressLines(args.chains * (args.draws + args.tune))
    glm = entry["kind"] in _GLM_KINDS.values()
    model, variables = _glm_fit_model(entry) if glm else (linear_model, ["beta", "noise_precision", "prior_precision"])
    compile_kwargs = {"mode": "CVM" if args.backend == "c" else "NUMBA"}
    with model(entry["release"], feature_names=entry.get("features")):
        # GLMs: NUTS started at the posterior mode, its dense mass matrix at the Laplace
        # approximation there (far fewer leapfrog steps than a dense adaptation from the identity).
        if glm:
            step = laplace_nuts(target_accept=args.target_accept, compile_kwargs=compile_kwargs)
            nuts = {"step": step, "initvals": laplace_start(step)}
        else:
            nuts = {"target_accept": args.target_accept}
        idata = pm.sample(
            **nuts,
            draws=args.draws,
            tune=args.tune,
            chains=args.chains,
            cores=1,
            random_seed=args.seed,
            # A dense mass matrix: the statistics tie the coefficients to the covariates' covariance.
            # On diabetes releases it took 2.5x fewer leapfrog steps than a diagonal one, with more ESS.
            init="jitter+adapt_full",
            nuts_sampler="pymc",
            progressbar=bar,
            callback=lines,
            compile_kwargs=compile_kwargs,
        )
    idata.attrs.update(_provenance(args, entry, index))
    if glm:
        idata.attrs.update(_glm_provenance(entry))
    idata.to_netcdf(posterior, engine="h5netcdf")
    table = az.summary(idata, var_names=variables)
    table.to_csv(summary)
    print(table.to_string())
    divergent = int(idata["sample_stats"]["diverging"].sum())
    print(f"\ndivergent draws: {divergent} of {args.chains * args.draws}")
    if not glm:
        _print_clip_report(entry["release"])
    print(f"\nwrote {posterior} and {summary}")


def _glm_fit_model(entry: dict):
    """(model builder, summary variables) of a GLM statistics release."""
    from .logistic.model import logistic_model
    from .poisson.model import poisson_model

    model = logistic_model if entry["kind"] == _GLM_KINDS["logistic-stats"] else poisson_model
    return model, ["beta", "intercept"]


def _glm_provenance(entry: dict) -> dict:
    """The model and the release's public preprocessing (for predictions on new rows)."""
    family = "logistic" if entry["kind"] == _GLM_KINDS["logistic-stats"] else "Poisson"
    attrs = {
        "model": f"noise-aware Bayesian {family} regression on released degree-2 statistics "
        "(Kulkarni et al. 2021; Bernstein & Sheldon 2019)"
    }
    preprocessing = entry.get("preprocessing") or {}
    for key in ("x_center", "x_scale"):
        if key in preprocessing:
            attrs[key] = json.dumps(preprocessing[key])
    return attrs


# ------------------------------------------------------------------------------ parser


def build_parser(demo: bool = True) -> argparse.ArgumentParser:
    """The ``pm-private`` parser with its subcommands.

    ``demo=False`` leaves out the demo's own arguments (importing the experiment takes seconds):
    :func:`main` builds them only when the command is ``demo``.
    """
    parser = argparse.ArgumentParser(
        prog="pm-private", description="pm_private: differentially private Bayesian inference for PyMC"
    )
    commands = parser.add_subparsers(dest="command", required=True)

    demo_help = "private drug-sensitivity prediction (Honkela et al. 2018) on GDSC-shaped built-in data"
    if demo:
        from . import demo as experiment

        demo_parser = commands.add_parser("demo", help=demo_help, description=experiment.__doc__.split("\n\n")[0])
        experiment.build_parser(demo_parser)
    else:
        demo_parser = commands.add_parser("demo", help=demo_help)
    demo_parser.set_defaults(run=_demo, command_parser=demo_parser)

    release = commands.add_parser("release", help="release private statistics of a CSV/Parquet file against a ledger")
    kinds = release.add_subparsers(dest="kind", required=True)
    suff = kinds.add_parser(
        "linear-stats",
        help="ε-DP sufficient statistics for linear regression (Honkela et al. 2018)",
        description="Clipped, Laplace-perturbed Sxx, Sxy, Syy (Honkela et al. 2018), replace-one neighbours.",
    )
    _release_arguments(suff)
    suff.add_argument("--target", required=True, help="response column")
    suff.add_argument("--features", nargs="+", help="feature columns (default: every other column)")
    suff.add_argument(
        "--mechanism",
        choices=("laplace", "gaussian"),
        default="laplace",
        help="laplace: pure ε-DP, entrywise bounds (Honkela et al. 2018); gaussian: (ε, δ)-DP, row-norm bound, "
        "far less noise at d ≥ 5 (Sheffet 2017; Wang 2018)",
    )
    suff.add_argument("--delta", type=types.delta, help="δ of a gaussian release, spent from the ledger")
    suff.add_argument(
        "--x-bound",
        type=types.bound,
        help="public bound on the (preprocessed) features: on each |value| (laplace) or on each row's ℓ2 norm "
        "(gaussian); required for laplace; for gaussian with public standardisation, leave both bounds out to "
        "have them chosen from n, ε and δ (pm_private.gaussian_bounds: looser as n and ε grow)",
    )
    suff.add_argument(
        "--y-bound", type=types.bound, help="public bound on the (preprocessed) |response| (see --x-bound)"
    )
    suff.add_argument(
        "--split",
        type=types.open_unit_interval,
        nargs=3,
        default=_DEFAULT_SPLIT,
        metavar=("P_XX", "P_XY", "P_YY"),
        help="laplace: budget shares of Sxx, Sxy, Syy, summing to 1 (default 0.6 0.35 0.05)",
    )
    suff.add_argument(
        "--scale-response",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="scale a row whose features exceed --x-bound (ℓ2 norm for gaussian, largest |value| for laplace) "
        "as a whole, response included, before clipping the response: fitted coefficients stay the "
        "population's.  Default on for gaussian; off for laplace, which clips each value as Honkela et al. "
        "(2018) do (--no-scale-response projects the gaussian features alone, as Wang 2018 does; both bias "
        "the coefficients when the bound bites)",
    )
    suff.add_argument(
        "--clip-share",
        type=types.unit_interval,
        default=0.05,
        help="share of ε spent on counting the clipped rows and responses (0: none; default 0.05)",
    )
    public = suff.add_argument_group(
        "public preprocessing",
        "x ↦ (x − x_center)/x_scale and y ↦ (y − y_center)/y_scale before clipping; the constants must be public "
        "(declared in advance, or from rows that are not private) and are carried in the release, so that the "
        "fit and its predictions use the same map.  A flag overrides the value from --standardize-from.",
    )
    public.add_argument(
        "--standardize-from",
        type=types.existing_file,
        metavar="PUBLIC_FILE",
        help="CSV/Parquet file of public rows with the same columns: centres are their means, scales their "
        "standard deviations",
    )
    public.add_argument(
        "--x-center", type=types.finite_float, nargs="+", metavar="C", help="one value, or one per feature"
    )
    public.add_argument(
        "--x-scale", type=types.positive_float, nargs="+", metavar="S", help="one value, or one per feature"
    )
    public.add_argument("--y-center", type=types.finite_float, metavar="C")
    public.add_argument("--y-scale", type=types.positive_float, metavar="S")
    suff.set_defaults(run=_release_suff_stats, command_parser=suff)
    for name, family in (("logistic-stats", "logistic"), ("poisson-stats", "Poisson")):
        glm = kinds.add_parser(
            name,
            help=f"(ε, δ)-DP degree-2 statistics of {family} regression for the noise-aware model "
            "(Kulkarni et al. 2021)",
            description=f"Gaussian release of Σx, Σy, Sxx, Σ y·x of {family} regression "
            "(Kulkarni et al. 2021; Huggins, Adams & Broderick 2017), rows projected onto the x bound"
            + (", counts clipped to the y bound" if family == "Poisson" else ", labels 0/1 or ±1")
            + ", replace-one neighbours.  Fit it with 'pm-private fit'.",
        )
        _release_arguments(glm)
        glm.add_argument(
            "--target", required=True, help="label column (0/1 or ±1)" if family == "logistic" else "count column"
        )
        glm.add_argument("--features", nargs="+", help="feature columns (default: every other column)")
        glm.add_argument("--delta", type=types.delta, required=True, help="δ of the release, spent from the ledger")
        glm.add_argument(
            "--x-bound", type=types.bound, required=True, help="public bound on the ℓ2 norm of a (preprocessed) row"
        )
        if family == "Poisson":
            glm.add_argument(
                "--y-bound",
                type=types.positive_int,
                required=True,
                help="public count bound (an integer ≤ 1000): larger counts are clipped to it",
            )
        public = glm.add_argument_group(
            "public preprocessing",
            "x ↦ (x − x_center)/x_scale before the projection; the constants must be public and are written "
            "to the release file.  A flag overrides the value from --standardize-from.",
        )
        public.add_argument(
            "--standardize-from",
            type=types.existing_file,
            metavar="PUBLIC_FILE",
            help="CSV/Parquet file of public rows with the same columns: centres are their means, scales their "
            "standard deviations",
        )
        public.add_argument(
            "--x-center", type=types.finite_float, nargs="+", metavar="C", help="one value, or one per feature"
        )
        public.add_argument(
            "--x-scale", type=types.positive_float, nargs="+", metavar="S", help="one value, or one per feature"
        )
        glm.set_defaults(run=_release_glm_stats, command_parser=glm)
    weibull = kinds.add_parser(
        "weibull",
        help="ε-DP Weibull shape and scale by LSP + TLL (Nguyên & Hui 2017b)",
        description="Weibull (p, λ) of censored survival times by LSP (ε/2) and TLL (ε/2) (Nguyên & Hui 2017b).",
    )
    _release_arguments(weibull)
    weibull.add_argument("--time", required=True, help="survival-time column (≥ 0, ≤ horizon)")
    weibull.add_argument("--event", required=True, help="event column: 1 = event, 0 = censored")
    weibull.add_argument("--horizon", type=types.bound, required=True, help="public upper bound on the times")
    weibull.add_argument("--K", type=types.positive_int, default=500, help="ladder rungs (default 500)")
    weibull.add_argument("--gamma", type=types.bound, default=10.0, help="range γ of p and λ/horizon (default 10)")
    weibull.add_argument("--omega", type=types.bound, default=6.0, help="times floored at e^-ω·horizon (default 6)")
    weibull.set_defaults(run=_release_weibull, command_parser=weibull)

    ledger = commands.add_parser(
        "ledger", help="show a ledger file (basic and tight totals, a dry run of the next release); export it"
    )
    ledger.add_argument("ledger", type=types.existing_file, help="ledger file")
    ledger.add_argument("--csv", metavar="FILE", help="write the entries as CSV ('-': standard output)")
    ledger.add_argument("--json", metavar="FILE", help="write the ledger as JSON ('-': standard output)")
    ledger.add_argument(
        "--next",
        choices=("gaussian", "laplace", "other"),
        help="dry run: the basic and tight totals after one more release of this kind (nothing is spent)",
    )
    ledger.add_argument("--epsilon", type=types.epsilon, help="ε of the --next release")
    ledger.add_argument("--delta", type=types.unit_interval, help="δ of the --next release (gaussian, other)")
    ledger.add_argument(
        "--upgrade",
        action="store_true",
        help="convert a format-1 ledger (no integrity digests) to the current format once; the original is kept",
    )
    ledger.set_defaults(run=_show_ledger, command_parser=ledger)

    fit = commands.add_parser(
        "fit",
        help="Bayesian linear (Honkela et al. 2018), logistic or Poisson regression on a release file's statistics",
        description="NUTS on the noise-aware regression model of released sufficient statistics (Bernstein & Sheldon 2019; "
        "the release's noise scales enter the likelihood); no budget is spent.  The posterior file's attributes record "
        "the release's ε, δ, mechanism, the release file's SHA-256 and the library version.",
    )
    fit.add_argument(
        "release",
        type=types.existing_file,
        help="release file written by 'pm-private release linear-stats', 'logistic-stats' or 'poisson-stats'",
    )
    fit.add_argument("--index", type=types.nonnegative_int, help="which release of the file (default: the only one)")
    fit.add_argument("--posterior", type=types.output_file, help="netCDF file (default RELEASE.posterior.nc)")
    fit.add_argument("--summary", type=types.output_file, help="summary CSV (default RELEASE.summary.csv)")
    fit.add_argument(
        "--draws",
        type=types.positive_int,
        default=1000,
        help="draws per chain (default 1000: with 2 chains enough for R-hat < 1.01 on typical releases)",
    )
    fit.add_argument(
        "--tune", type=types.nonnegative_int, default=500, help="tuning iterations per chain (default 500)"
    )
    fit.add_argument("--chains", type=types.positive_int, default=2)
    fit.add_argument("--seed", type=types.nonnegative_int, default=0)
    fit.add_argument(
        "--target-accept",
        type=types.open_unit_interval,
        default=0.95,
        help="NUTS target acceptance rate (default 0.95; raise it if PyMC reports divergences)",
    )
    fit.add_argument(
        "--backend",
        choices=("numba", "c"),
        default="numba",
        help="PyTensor backend (default numba: gradients several times faster; c compiles sooner)",
    )
    fit.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress bar (on a terminal) and no progress lines (otherwise: one every 10%% of the iterations)",
    )
    fit.set_defaults(run=_fit, command_parser=fit)
    return parser


def _demo(parser, args) -> None:
    from . import demo as experiment

    experiment.check_args(args, parser)
    experiment.main(args)


def main(argv=None) -> int:
    """Entry point of ``pm-private``; returns the exit code (usage errors exit with 2)."""
    use_compile_cache()
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(demo=argv[:1] == ["demo"])
    args = parser.parse_args(argv)
    try:
        args.run(args.command_parser, args)
    except _Refused as error:
        sys.stderr.write(f"pm-private {args.command}: refused: {error}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What the subcommands of ``pm-private`` share: the arguments of every release, reading the
data table, the ledger check before any data is read, writing a release file atomically, the dry
run's report and the public preprocessing of features and response."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import tempfile
import warnings
from pathlib import Path

from ..privacy import argtypes as types

_TABLE_SUFFIXES = {".csv": "CSV", ".parquet": "Parquet", ".pq": "Parquet"}


def load(path: str):
    """The object named by an import path ``"package.module:name"`` (imported only when needed:
    the model builders import PyMC, which ``pm-private --help`` should not wait for)."""
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


class Refused(Exception):
    """The release cannot go ahead (budget); reported with exit code 1."""


def add_release_parser(subparsers, name: str, run, *, help: str, description: str) -> argparse.ArgumentParser:
    """Add a kind of ``pm-private release`` with the arguments of every release: DATA, the ledger
    and its totals, ε, ``--out``, ``--note`` and ``--dry-run``.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        The release kinds (the subparsers of ``pm-private release``).
    name : str
        The kind, as typed after ``pm-private release``.
    run : callable
        ``run(parser, args)`` makes the release (the new parser's ``run`` default).
    help, description : str
        The kind's line in ``pm-private release --help`` and the head of its own help.

    Returns
    -------
    argparse.ArgumentParser
        The new parser, for the kind's own arguments (after the shared ones in its help).
    """
    parser = subparsers.add_parser(name, help=help, description=description)
    parser.set_defaults(run=run, command_parser=parser)
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
    return parser


def unit_argument(parser: argparse.ArgumentParser, *, history: bool = False) -> None:
    """``--unit-column``: the column of DATA that identifies each row's person (``history``: rows
    are intervals of a person's follow-up, made one record)."""
    kept = (
        "making each person's intervals of follow-up (the time column their ends) one record, their first exit"
        if history
        else "keeping one row per person chosen at random"
    )
    parser.add_argument(
        "--unit-column",
        metavar="COLUMN",
        help=f"column identifying each row's person (any values, none missing): the release then protects a "
        f"person with all their rows, {kept}; without it a person with m rows is protected at m times ε",
    )


def unit_rows_text(args, *, history: bool = False) -> str:
    """The ``rows`` entry of a release file's preprocessing context (``history``: a person's rows
    are intervals of one follow-up, made one record)."""
    from ..privacy.relations import REPLACE_ONE

    n = "public" if getattr(args, "relation", REPLACE_ONE) == REPLACE_ONE else "private"
    if getattr(args, "unit_column", None) is None:
        return f"all rows of the file (none dropped; n is {n})"
    if history:
        return (
            f"each person's intervals (column {args.unit_column!r}) made one record: their first exit, with the "
            f"cell and covariates of their earliest interval (n persons is {n})"
        )
    k = getattr(args, "max_rows", 1)
    if k > 1:
        return f"up to {k} rows per person of column {args.unit_column!r}, chosen at random (n rows kept is private)"
    return f"one row per person of column {args.unit_column!r}, chosen at random (n persons is {n})"


def unit_columns(args) -> list[str]:
    """``[--unit-column]``, or no column without it: what a release reads beside its own columns."""
    return [] if getattr(args, "unit_column", None) is None else [args.unit_column]


def unit_values(args, frame):
    """The identifiers of ``--unit-column`` as read (None without it)."""
    return None if getattr(args, "unit_column", None) is None else frame[args.unit_column].to_numpy()


def _columns(path: Path) -> list[str]:
    import pandas as pd

    if _TABLE_SUFFIXES[path.suffix.lower()] == "Parquet":
        import pyarrow.parquet as pq

        return list(pq.read_schema(path).names)
    return list(pd.read_csv(path, nrows=0).columns)


def read(path: Path, columns: list[str]):
    """The given columns of a CSV or Parquet file, as a data frame."""
    import pandas as pd

    if _TABLE_SUFFIXES[path.suffix.lower()] == "Parquet":
        return pd.read_parquet(path, columns=columns)
    return pd.read_csv(path, usecols=columns)


def table_columns(parser, args) -> list[str]:
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


def check_columns(parser, args, available: list[str], needed: list[str]) -> None:
    """A usage error unless DATA has each needed column, and each is needed once."""
    missing = [c for c in needed if c not in available]
    if missing:
        parser.error(
            f"{str(args.data)!r} has no column {', '.join(map(repr, missing))} (columns: {', '.join(available)})"
        )
    if len(set(needed)) != len(needed):
        parser.error(f"a column is used twice: {', '.join(needed)}")


def open_ledger(parser, args):
    """The ledger of the release, opened (or created with ``--total-epsilon``) and checked to hold
    its ε and δ: a usage error for a bad ledger, :class:`Refused` when the budget is short."""
    from ..privacy.accountant import PrivacyAccountant
    from ..privacy.budget import BudgetExceededError

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
        raise Refused(f"{_budget_text(args)}: {error}") from None
    return accountant


def numeric(parser, frame, columns: list[str]):
    """The columns as a float array; a usage error for a column that is not numeric or not finite (a file
    of no rows passes: its columns have no type, and a release under add/remove releases it)."""
    import numpy as np
    import pandas as pd

    for column in columns:
        series = frame[column]
        numeric_type = pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series)
        if len(series) and not numeric_type:  # a file of no rows has columns of no type (released under add/remove)
            parser.error(f"column {column!r} is not numeric (dtype {series.dtype})")
        if not np.isfinite(series.to_numpy(dtype=np.float64)).all():
            parser.error(f"column {column!r} has missing or non-finite values; pm-private drops no rows (n is public)")
    return frame[columns].to_numpy(dtype=np.float64)


def regression_column_arguments(parser, *, target: str) -> None:
    """``--unit-column``, ``--target`` (with the help ``target``) and ``--features``: the columns
    of a regression release, read by :func:`regression_features` and :func:`regression_rows`."""
    unit_argument(parser)
    parser.add_argument("--target", required=True, help=target)
    parser.add_argument("--features", nargs="+", help="feature columns (default: every other column)")


def regression_features(parser, args) -> list[str]:
    """The feature columns of a regression release: ``--features``, or every column of DATA but the
    target and ``--unit-column``; a usage error unless DATA has them, the target and the unit
    column, each once.  Reads DATA's header only."""
    available = table_columns(parser, args)
    features = args.features or [c for c in available if c not in (args.target, args.unit_column)]
    if not features:
        parser.error("no feature column: give --features")
    check_columns(parser, args, available, [*features, args.target, *unit_columns(args)])
    return features


def regression_rows(parser, args, features: list[str]):
    """The rows of a regression release, read from DATA: (X, y, unit), the features and the target
    as float arrays and the ``--unit-column`` identifiers (None without it)."""
    frame = read(args.data, [*features, args.target, *unit_columns(args)])
    return numeric(parser, frame, features), numeric(parser, frame, [args.target])[:, 0], unit_values(args, frame)


def write_release(parser, args, accountant, release, **context):
    """Release (the ledger entry carries ``--note``), then write the release file atomically: a
    failed release leaves no file, and the file never exists half written (it is written under a
    hidden name in the same folder, made before the release so that an unwritable folder spends
    nothing, then linked into place).  Returns the release."""
    from ..privacy.accountant import ledger_note
    from ..privacy.budget import BudgetExceededError
    from ..privacy.release import ChargedRefusal
    from ..release_file import release_to_dict, write_release_file

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
                raise Refused(f"{_budget_text(args)}: {error}") from None
            if isinstance(error, ChargedRefusal):  # a check of the private data, after the spend
                raise Refused(str(error)) from None
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


def dry_run(args, lines: list[str], *, counted_rows: bool = False) -> None:
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


def public_file_columns(parser, args, columns: list[str]):
    """The numeric ``columns`` of the ``--standardize-from`` file, as an (m, len(columns)) array,
    after checking that it is not the private data file, that it has the columns, and that it has
    no person column (usage errors naming the file); reads nothing private."""
    refuse_private_as_public(parser, args)
    available = table_columns(parser, argparse.Namespace(data=args.standardize_from))
    missing = [c for c in columns if c not in available]
    if missing:
        parser.error(f"--standardize-from {str(args.standardize_from)!r} has no column {', '.join(map(repr, missing))}")
    if getattr(args, "unit_column", None) in available:
        parser.error(
            f"--standardize-from {str(args.standardize_from)!r} has the person column {args.unit_column!r}: "
            "public rows identify no person of the private data; drop the column from the public file"
        )
    return numeric(parser, read(args.standardize_from, columns), columns)


def public_preprocessing(parser, args, features: list[str], *, response: bool = True):
    """The release's public centre and scale, from ``--standardize-from`` and the constant flags
    (a flag overrides the file's value), or None when none is given; ``response=False`` leaves
    the response as it is (labels and counts of the GLM releases).  Features with no public centre
    are refused first, unless ``--raw-covariates`` (:func:`_refuse_raw_covariates`)."""
    import numpy as np

    from ..released.preprocessing import Preprocessing, inferred_kinds

    _refuse_raw_covariates(parser, args)
    constants = {
        "x_center": _per_feature(parser, "--x-center", args.x_center, features),
        "x_scale": _per_feature(parser, "--x-scale", args.x_scale, features),
        "y_center": args.y_center if response else None,
        "y_scale": args.y_scale if response else None,
    }
    derived = {}
    if args.standardize_from is not None:
        target = getattr(args, "target", None)  # None: a release without a response column (survival regression)
        columns = [*features] + ([] if target is None else [target])
        values = public_file_columns(parser, args, columns)
        if len(values) < 2:
            parser.error(f"--standardize-from {str(args.standardize_from)!r} needs at least 2 rows")
        mean, sd = values.mean(axis=0), values.std(axis=0)
        sd = np.where(sd > 0, sd, 1.0)  # a constant public column is centred, not scaled
        width = len(features)
        derived = {"x_center": mean[:width], "x_scale": sd[:width], "x_public": values[:, :width]}
        if response:
            derived.update(y_center=mean[-1], y_scale=sd[-1])
    chosen = {k: v for k, v in {**derived, **{k: v for k, v in constants.items() if v is not None}}.items()}
    binary = getattr(args, "binary_columns", None)
    if binary:
        chosen["x_kinds"] = tuple("binary" if name in binary else "continuous" for name in features)
    elif hasattr(args, "binary_columns") and "x_public" in derived:  # a GLM release: as from_public infers them
        chosen["x_kinds"] = inferred_kinds(derived["x_public"])
    if not chosen:
        return None
    try:
        return Preprocessing(**chosen)
    except ValueError as error:
        parser.error(f"public preprocessing: {error}")


def _digest(path: Path) -> bytes:
    import hashlib

    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.digest()


def refuse_private_as_public(parser, args) -> None:
    """A usage error when ``--standardize-from`` is DATA itself: the same file (by path, hard or
    symbolic link: same device and inode) or the same bytes.  Reads no values (a dry run may call it).

    Public constants are written to the release file without noise: from the private rows they
    would publish the private columns' exact means and standard deviations.
    """
    public, private = Path(args.standardize_from), Path(args.data)
    try:
        same = os.path.samefile(public, private)  # st_dev and st_ino: resolved paths, hard and symbolic links
        same = same or (os.path.getsize(public) == os.path.getsize(private) and _digest(public) == _digest(private))
    except OSError as error:
        parser.error(f"cannot compare --standardize-from {str(public)!r} with DATA {str(private)!r}: {error}")
    if same:
        parser.error(
            f"--standardize-from {str(public)!r} is the private DATA file {str(private)!r} (the same file or the "
            "same bytes): its means and standard deviations would be published without noise; give a file of "
            "public rows"
        )


def print_linear_report(stats) -> None:
    """What a linear release says about itself: its signal-to-noise figures, with a warning outside the
    range where the calibration benchmark validated the noise-aware intervals, and its clipping."""
    from ..linear.integrated import release_signal_to_noise, signal_to_noise_warning

    figures = release_signal_to_noise(stats)
    print(
        f"\nsignal to noise of the release: covariate statistics {figures['gram_snr']:.3g} "
        f"(mean eigenvalue over the noise's spectral radius), Sxy {figures['xy_snr']:.3g}"
    )
    message = signal_to_noise_warning(figures)
    if message is not None:
        print(f"warning: {message}")
    print_clip_report(stats)


def print_glm_report(stats) -> None:
    """What a GLM release says about itself: its noise against the sampling spread of Σ y·x, and the
    covariate law its model assumes."""
    from ..released.copula_law import ReferenceLaw
    from ..released.glm import (
        PUBLIC_ROWS,
        CovariateLawWarning,
        glm_signal_to_noise,
        glm_signal_to_noise_warning,
        resolve_x_sample,
    )

    figures = glm_signal_to_noise(stats)
    print(
        f"\nnoise of the release: s.d. {figures['yx_noise_sd']:.3g} on each Σ y·x against a sampling s.d. of "
        f"{figures['sampling_sd']:.3g} (ratio {figures['yx_noise_to_sampling']:.2f}; the bound rule keeps it ≤ 1)"
    )
    message = glm_signal_to_noise_warning(figures)
    if message is not None:
        print(f"warning: {message}")
    rows, fall_back = resolve_x_sample(PUBLIC_ROWS, stats)
    if fall_back is not None:
        warnings.warn(fall_back, CovariateLawWarning, stacklevel=2)
    if rows is None:
        print(
            "note: the model takes the covariates to be Gaussian; on binary or skewed covariates its intervals "
            "miss the coefficients more often as n grows (release with --binary-columns and --standardize-from "
            "public rows, or give public covariate rows as x_sample to the model in Python)"
        )
    elif isinstance(rows, ReferenceLaw):
        print(
            f"note: the model takes the covariates' law from the released moments and the declared kinds "
            f"({sum(kind == 'binary' for kind in rows.kinds)} binary columns), integrated on {len(rows)} fixed rows"
        )
    else:
        print(
            f"note: the model takes the covariates' law from the {len(rows)} public rows the release kept "
            "(--standardize-from), moved onto the fitted mean and covariance"
        )


def print_survival_report(stats) -> None:
    """What an exit-table release says about itself: its noise against its typical count."""
    import numpy as np

    table = stats.table()
    sd = float(np.sqrt(stats.noise_variance().ravel()[0]))
    print(
        f"\nnoise of the release: s.d. {sd:.3g} on every count of the {table.size} exits "
        f"(median released count {float(np.median(table)):.3g}); hazard ratios are exp(beta)"
    )


def print_clip_report(stats) -> None:
    """The release's own estimate of how much its clipping changed, with a warning when it is large."""
    from ..linear.clipping import clip_report

    for report in clip_report(stats, warn=False):
        print(f"estimated from the release: {report}")
        if report.large:
            print(
                "warning: much of the data was clipped, so the statistics describe the clipped rows and "
                "fitted coefficients are biased (towards zero where responses were clipped); choose wider "
                "bounds (on public data) if you can"
            )


def public_feature_arguments(group) -> None:
    """The public centre and scale of the features: ``--standardize-from``, ``--x-center`` and
    ``--x-scale`` (added to ``group``, an argument group of a release's parser)."""
    group.add_argument(
        "--standardize-from",
        type=types.existing_file,
        metavar="PUBLIC_FILE",
        help="CSV/Parquet file of public rows with the same columns: centres are their means, scales their "
        "standard deviations",
    )
    group.add_argument(
        "--x-center", type=types.finite_float, nargs="+", metavar="C", help="one value, or one per feature"
    )
    group.add_argument(
        "--x-scale", type=types.positive_float, nargs="+", metavar="S", help="one value, or one per feature"
    )
    group.add_argument(
        "--raw-covariates",
        action="store_true",
        help="release the features as DATA holds them, with no public centre: only for features already centred "
        "near 0 on the scale of --x-bound, since rows far from 0 are pulled onto the bound and the coefficients "
        "are biased.  Without this flag a release given neither --standardize-from nor --x-center is refused "
        "before the ledger is opened",
    )


def _refuse_raw_covariates(parser, args) -> None:
    """A usage error for a regression release whose features get no public centre (neither
    ``--standardize-from`` nor ``--x-center``) unless ``--raw-covariates`` says so, and for
    ``--raw-covariates`` beside a centre.  Reads the arguments only: no data row, no ledger.

    On features far from 0 (ages, blood pressures) most rows lie outside any useful ``--x-bound``:
    the release would spend its ε on rows pulled onto the bound, with coefficients biased by it.
    """
    centred = args.standardize_from is not None or args.x_center is not None
    if centred and args.raw_covariates:
        parser.error(
            "--raw-covariates contradicts --standardize-from and --x-center, which centre the features: give one "
            "or the other"
        )
    if not centred and not args.raw_covariates:
        parser.error(
            "the features would be released uncentred, as DATA holds them, and rows far from 0 pulled onto "
            "--x-bound (biasing the coefficients): give --standardize-from PUBLIC_FILE or --x-center (public "
            "constants), or --raw-covariates if the features are already centred on the scale of --x-bound"
        )


def add_relation_argument(parser) -> None:
    """``--relation``: the neighbour relation of a release (:mod:`pm_private.privacy.relations`)."""
    from ..privacy.relations import RELATIONS, REPLACE_ONE

    parser.add_argument(
        "--relation",
        choices=RELATIONS,
        default=REPLACE_ONE,
        help="neighbour relation: replace-one (n public, in the release) or add-remove (n private, released with "
        "noise and latent in the fitted model); a ledger charges an add-remove release as the replace-one "
        "release it also is",
    )


def add_max_rows_argument(parser) -> None:
    """``--max-rows K``: the most rows a release keeps per person of ``--unit-column`` (above 1
    under ``--relation add-remove`` only; :func:`pm_private.privacy.check_max_rows`)."""
    parser.add_argument(
        "--max-rows",
        type=int,
        default=1,
        metavar="K",
        help="with --unit-column and --relation add-remove: keep up to K rows per person, chosen at random "
        "(default 1); the noise is that of K rows (K times the sensitivity)",
    )


def check_max_rows_argument(parser, args) -> None:
    """``--max-rows`` above 1 needs ``--unit-column`` (``parser.error`` otherwise, before any data is read)."""
    if args.max_rows > 1 and args.unit_column is None:
        parser.error("--max-rows above 1 needs --unit-column: it bounds the rows of each person")


def public_feature_group(parser) -> None:
    """The argument group "public preprocessing" of a release whose response is not transformed
    (the GLMs, survival regression): :func:`public_feature_arguments` under their shared help."""
    public_feature_arguments(
        parser.add_argument_group(
            "public preprocessing",
            "x ↦ (x − x_center)/x_scale before the projection; the constants must be public and are written "
            "to the release file.  A flag overrides the value from --standardize-from.",
        )
    )


def preprocessing_source(args, keys: tuple[str, ...]) -> str:
    """Where the public constants of a release came from: the public file and the flags among
    ``keys`` (argument names such as ``x_center``) that were given."""
    source = []
    if args.standardize_from is not None:
        source.append(f"means and standard deviations of the public file {args.standardize_from.name}")
    flags = [f"--{k.replace('_', '-')}" for k in keys if getattr(args, k) is not None]
    if flags:
        source.append(f"declared constants ({', '.join(flags)})")
    return " and ".join(source)

"""Command line ``pm-private``: the data holder's releases against a ledger file, the ledger
itself, fitting a model on a release file, and the drug-sensitivity demo.

* ``pm-private release suff-stats DATA`` — ε-DP sufficient statistics (Honkela et al. 2018);
* ``pm-private release weibull DATA`` — ε-DP Weibull (p, λ) by LSP + TLL (Nguyên & Hui 2017b);
* ``pm-private ledger LEDGER`` — show a ledger, export it as CSV or JSON;
* ``pm-private fit RELEASE`` — Bayesian linear regression on released statistics (Honkela et al.
  2018): posterior as netCDF and a summary CSV;
* ``pm-private demo`` — the private drug-sensitivity experiment on built-in data.

Every argument is checked before any data is read or budget spent: bad values are usage
errors (exit code 2); a refused budget exits with code 1 and spends nothing.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import sys
from pathlib import Path

from . import _argtypes as types
from .compile_cache import use_compile_cache

__all__ = ["build_parser", "main"]

_TABLE_SUFFIXES = {".csv": "CSV", ".parquet": "Parquet", ".pq": "Parquet"}
_LEDGER_FIELDS = ("id", "time", "status", "mechanism", "epsilon", "delta", "neighbours", "label", "note", "process")


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

    if not args.ledger.exists() and args.total_epsilon is None:
        parser.error(
            f"--ledger {str(args.ledger)!r} does not exist; creating it needs --total-epsilon (and --total-delta)"
        )
    try:
        accountant = PrivacyAccountant.open(args.ledger, epsilon=args.total_epsilon, delta=args.total_delta)
    except ValueError as error:
        parser.error(f"--ledger: {error}")
    try:
        accountant.check(args.epsilon)
    except BudgetExceededError as error:
        raise _Refused(f"--epsilon {args.epsilon:g}: {error}") from None
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
    """Reserve the output file, release, write; a failed release leaves no file.  Returns the release."""
    from .privacy.budget import BudgetExceededError
    from .release_file import release_to_dict, write_release_file

    try:
        handle = open(args.out, "x", encoding="utf-8")
    except OSError as error:
        parser.error(f"--out: cannot create {str(args.out)!r}: {error.strerror}")
    try:
        result = release()
        write_release_file(handle, [release_to_dict(result, **context)])
    except BaseException as error:
        handle.close()
        args.out.unlink()
        if isinstance(error, BudgetExceededError):  # another process spent since the check
            raise _Refused(f"--epsilon {args.epsilon:g}: {error}") from None
        raise
    handle.close()
    eps, delta = accountant.spent
    print(f"released {args.kind} of {args.data.name} with ε = {args.epsilon:g}; wrote {args.out}")
    print(f"ledger {args.ledger}: spent ε {eps:g} of {accountant.epsilon:g}, δ {delta:g} of {accountant.delta:g}")
    return result


def _release_suff_stats(parser, args) -> None:
    if abs(math.fsum(args.split) - 1) > 1e-9:
        parser.error(f"--split must sum to 1, got {' '.join(map(str, args.split))}")
    if not (args.clip_share == 0 or 0.001 <= args.clip_share <= 0.5):
        parser.error(f"--clip-share must be 0 or in [0.001, 0.5], got {args.clip_share:g}")
    available = _table_columns(parser, args)
    features = args.features or [c for c in available if c != args.target]
    if not features:
        parser.error("no feature column: give --features")
    _check_columns(parser, args, available, [*features, args.target])
    accountant = _open_ledger(parser, args)
    frame = _read(args.data, [*features, args.target])
    X = _numeric(parser, frame, features)
    y = _numeric(parser, frame, [args.target])[:, 0]
    from .linear.suffstats import release_suff_stats

    preprocessing = {
        "rows": "all rows of the file (none dropped; n is public)",
        "features": "as read; clipped by the mechanism to [-x_bound, x_bound]",
        "target": "as read; clipped by the mechanism to [-y_bound, y_bound]",
    }
    stats = _write_release(
        parser,
        args,
        accountant,
        lambda: release_suff_stats(
            X,
            y,
            epsilon=args.epsilon,
            x_bound=args.x_bound,
            y_bound=args.y_bound,
            split=tuple(args.split),
            accountant=accountant,
            clip_share=args.clip_share,
        ),
        features=features,
        target=args.target,
        preprocessing=preprocessing,
    )
    _print_clip_report(stats)


def _print_clip_report(stats) -> None:
    """The release's own estimate of how much its clipping changed, with a warning when it is large."""
    from .linear.suffstats import clip_report

    for report in clip_report(stats, warn=False):
        print(f"estimated from the release: {report}")
        if report.large:
            print(
                "warning: much of the data was clipped, so the statistics describe the clipped rows and "
                "fitted coefficients are biased; choose wider bounds (on public data) if you can"
            )


def _release_weibull(parser, args) -> None:
    _check_columns(parser, args, _table_columns(parser, args), [args.time, args.event])
    accountant = _open_ledger(parser, args)
    frame = _read(args.data, [args.time, args.event])
    values = _numeric(parser, frame, [args.time, args.event])
    time, event = values[:, 0], values[:, 1]
    if (time < 0).any() or (time > args.horizon).any():
        parser.error(f"column {args.time!r} must lie in [0, --horizon {args.horizon:g}] (the horizon is public)")
    if not ((event == 0) | (event == 1)).all():
        parser.error(f"column {args.event!r} must be 0 (censored) or 1 (event)")
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


# ------------------------------------------------------------------------------ ledger


def _ledger_rows(accountant) -> list[dict]:
    return [
        {name: (getattr(e, name).isoformat() if name == "time" else getattr(e, name)) for name in _LEDGER_FIELDS}
        for e in accountant.history
    ]


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
    try:
        accountant = PrivacyAccountant.open(args.ledger)
    except ValueError as error:
        parser.error(str(error))
    rows = _ledger_rows(accountant)
    eps, delta = accountant.spent
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
            "entries": rows,
        }
        _export(args.json, json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    if args.csv == "-" or args.json == "-":
        return
    print(f"ledger {args.ledger}")
    print(f"total   ε {accountant.epsilon:g}, δ {accountant.delta:g}")
    print(f"spent   ε {eps:g}, δ {delta:g} (reservations included)")
    print(f"remains ε {accountant.remaining[0]:g}, δ {accountant.remaining[1]:g}")
    if rows:
        print(f"\n{'id':>4}  {'time (UTC)':<19}  {'status':<8}  {'ε':>9}  {'δ':>9}  mechanism, label")
    for row in rows:
        note = f" [{row['note']}]" if row["note"] else ""
        print(
            f"{row['id']:>4}  {row['time'][:19]:<19}  {row['status']:<8}  {row['epsilon']:>9.4g}  {row['delta']:>9.3g}  "
            f"{row['mechanism']}, {row['label']}{note}"
        )


# ------------------------------------------------------------------------------ fit


def _fit(parser, args) -> None:
    from .release_file import SUFF_STATS, read_release_file

    try:
        entries = read_release_file(args.release)
    except (ValueError, OSError) as error:
        parser.error(str(error))
    candidates = [i for i, e in enumerate(entries) if e["kind"] == SUFF_STATS]
    if args.index is None:
        if len(candidates) != 1:
            parser.error(
                f"{str(args.release)!r} holds {len(candidates)} sufficient-statistics releases; choose one with --index"
            )
        index = candidates[0]
    elif args.index not in candidates:
        parser.error(f"--index {args.index}: no sufficient-statistics release at that position (found {candidates})")
    else:
        index = args.index
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
    import warnings

    # The C backend warns that it found no BLAS to link; this model is d×d.
    warnings.filterwarnings("ignore", message="PyTensor could not link to a BLAS")
    import arviz as az
    import pymc as pm

    from .linear.regression import regression_model

    stats = entry["release"]
    with regression_model(stats, feature_names=entry.get("features")):
        idata = pm.sample(
            draws=args.draws,
            tune=args.tune,
            chains=args.chains,
            cores=1,
            random_seed=args.seed,
            target_accept=args.target_accept,
            progressbar=not args.no_progress,
            compile_kwargs={"mode": "CVM" if args.backend == "c" else "NUMBA"},
        )
    idata.to_netcdf(posterior, engine="h5netcdf")
    table = az.summary(idata, var_names=["beta", "noise_precision", "prior_precision"])
    table.to_csv(summary)
    print(table.to_string())
    divergent = int(idata["sample_stats"]["diverging"].sum())
    print(f"\ndivergent draws: {divergent} of {args.chains * args.draws}")
    _print_clip_report(stats)
    print(f"\nwrote {posterior} and {summary}")


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
        "suff-stats",
        help="ε-DP sufficient statistics for linear regression (Honkela et al. 2018)",
        description="Clipped, Laplace-perturbed Sxx, Sxy, Syy (Honkela et al. 2018), replace-one neighbours.",
    )
    _release_arguments(suff)
    suff.add_argument("--target", required=True, help="response column")
    suff.add_argument("--features", nargs="+", help="feature columns (default: every other column)")
    suff.add_argument("--x-bound", type=types.positive_float, required=True, help="public bound Bx on |feature| values")
    suff.add_argument("--y-bound", type=types.positive_float, required=True, help="public bound By on |response|")
    suff.add_argument(
        "--split",
        type=types.open_unit_interval,
        nargs=3,
        default=[0.60, 0.35, 0.05],
        metavar=("P_XX", "P_XY", "P_YY"),
        help="budget shares of Sxx, Sxy, Syy, summing to 1 (default 0.6 0.35 0.05)",
    )
    suff.add_argument(
        "--clip-share",
        type=types.unit_interval,
        default=0.05,
        help="share of ε spent on counting the clipped rows and responses (0: none; default 0.05)",
    )
    suff.set_defaults(run=_release_suff_stats, command_parser=suff)
    weibull = kinds.add_parser(
        "weibull",
        help="ε-DP Weibull shape and scale by LSP + TLL (Nguyên & Hui 2017b)",
        description="Weibull (p, λ) of censored survival times by LSP (ε/2) and TLL (ε/2) (Nguyên & Hui 2017b).",
    )
    _release_arguments(weibull)
    weibull.add_argument("--time", required=True, help="survival-time column (≥ 0, ≤ horizon)")
    weibull.add_argument("--event", required=True, help="event column: 1 = event, 0 = censored")
    weibull.add_argument("--horizon", type=types.positive_float, required=True, help="public upper bound on the times")
    weibull.add_argument("--K", type=types.positive_int, default=500, help="ladder rungs (default 500)")
    weibull.add_argument(
        "--gamma", type=types.positive_float, default=10.0, help="range γ of p and λ/horizon (default 10)"
    )
    weibull.add_argument(
        "--omega", type=types.positive_float, default=6.0, help="times floored at e^-ω·horizon (default 6)"
    )
    weibull.set_defaults(run=_release_weibull, command_parser=weibull)

    ledger = commands.add_parser("ledger", help="show a ledger file; export it as CSV or JSON")
    ledger.add_argument("ledger", type=types.existing_file, help="ledger file")
    ledger.add_argument("--csv", metavar="FILE", help="write the entries as CSV ('-': standard output)")
    ledger.add_argument("--json", metavar="FILE", help="write the ledger as JSON ('-': standard output)")
    ledger.set_defaults(run=_show_ledger, command_parser=ledger)

    fit = commands.add_parser(
        "fit",
        help="Bayesian linear regression (Honkela et al. 2018) on a release file's statistics",
        description="NUTS on the noise-aware regression model of released sufficient statistics (Bernstein & Sheldon 2019; the release's noise scales enter the likelihood); no budget is spent.",
    )
    fit.add_argument(
        "release", type=types.existing_file, help="release file written by 'pm-private release suff-stats'"
    )
    fit.add_argument("--index", type=types.nonnegative_int, help="which release of the file (default: the only one)")
    fit.add_argument("--posterior", type=types.output_file, help="netCDF file (default RELEASE.posterior.nc)")
    fit.add_argument("--summary", type=types.output_file, help="summary CSV (default RELEASE.summary.csv)")
    fit.add_argument("--draws", type=types.positive_int, default=1000)
    fit.add_argument("--tune", type=types.nonnegative_int, default=1000)
    fit.add_argument("--chains", type=types.positive_int, default=2)
    fit.add_argument("--seed", type=types.nonnegative_int, default=0)
    fit.add_argument(
        "--target-accept",
        type=types.open_unit_interval,
        default=0.95,
        help="NUTS target acceptance rate (default 0.95; raise it if PyMC reports divergences)",
    )
    fit.add_argument(
        "--backend", choices=("c", "numba"), default="c", help="PyTensor backend (default c: faster to compile)"
    )
    fit.add_argument("--no-progress", action="store_true")
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

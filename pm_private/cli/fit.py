"""``pm-private fit RELEASE``: noise-aware Bayesian regression on the statistics of a release file
(Bernstein & Sheldon 2019): linear regression on sufficient statistics (Honkela et al. 2018),
logistic or Poisson regression on degree-2 GLM statistics (Kulkarni et al. 2021), or a
piecewise-exponential survival model of an exit table.  Writes the
posterior as netCDF, whose attributes record the release's ε, δ, mechanism, the release file's
SHA-256 and the library version, and the coefficients' summary (``fit_summary``, printed as
``print_summary`` prints it) as CSV, where the model has coefficients (an exit table of one cell
has none: its survival curves are the answer).

The kinds of release it fits are those of the family registry (:mod:`pm_private.families`): each
family object names its model builder, its NUTS start and what the
posterior file records."""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
from pathlib import Path

from ..families import released_families
from ..privacy import argtypes as types
from ..released.family import Family


def _either(words: list[str]) -> str:
    """``a, b or c``."""
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"


def add_parser(subparsers) -> None:
    """Add the ``fit`` subcommand to ``pm-private``.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        The subcommands of ``pm-private``; the new parser's ``run`` default fits the release.
    """
    families = released_families().values()
    first, *others = (family.command for family in families)
    written = _either([f"'pm-private release {first}'", *(f"'{command}'" for command in others)])
    parser = subparsers.add_parser(
        "fit",
        help=f"Bayesian {_either([family.title for family in families])} on a release file's statistics",
        description="NUTS on the noise-aware regression model of released sufficient statistics (Bernstein & Sheldon 2019; "
        "the release's noise scales enter the likelihood); no budget is spent.  The posterior file's attributes record "
        "the release's ε, δ, mechanism, the release file's SHA-256 and the library version.",
    )
    parser.add_argument(
        "release",
        type=types.existing_file,
        help=f"release file written by {written}",
    )
    parser.add_argument("--index", type=types.nonnegative_int, help="which release of the file (default: the only one)")
    parser.add_argument("--posterior", type=types.output_file, help="netCDF file (default RELEASE.posterior.nc)")
    parser.add_argument(
        "--summary",
        type=types.output_file,
        help="summary CSV of the coefficients (default RELEASE.summary.csv; none without coefficients)",
    )
    parser.add_argument(
        "--draws",
        type=types.positive_int,
        default=1000,
        help="draws per chain (default 1000: with 2 chains enough for R-hat < 1.01 on typical releases)",
    )
    parser.add_argument(
        "--tune", type=types.nonnegative_int, default=500, help="tuning iterations per chain (default 500)"
    )
    parser.add_argument("--chains", type=types.positive_int, default=2)
    parser.add_argument("--seed", type=types.nonnegative_int, default=0)
    parser.add_argument(
        "--target-accept",
        type=types.open_unit_interval,
        default=0.95,
        help="NUTS target acceptance rate (default 0.95; raise it if PyMC reports divergences)",
    )
    parser.add_argument(
        "--backend",
        choices=("numba", "c"),
        default="numba",
        help="PyTensor backend (default numba: gradients several times faster; c compiles sooner)",
    )
    parser.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress bar (on a terminal) and no progress lines (otherwise: one every 10%% of the iterations)",
    )
    parser.set_defaults(run=_run, command_parser=parser)


def _choose_entry(parser, args, entries: list[dict]) -> int:
    """The position of the release to fit; a usage error that says what the file holds when it
    holds none that can be fitted (or several and no ``--index``)."""
    families = released_families()
    candidates = [i for i, e in enumerate(entries) if e["kind"] in families]
    if not candidates:
        held = "; ".join(
            f"{i}: {e['kind']} ({e.get('mechanism', '?')}), outputs {', '.join(e.get('outputs', {})) or 'none'}"
            for i, e in enumerate(entries)
        )
        fitted = "; ".join(
            f"{family.title} on kind {kind!r}, written by 'pm-private release {family.command}'"
            for kind, family in families.items()
        )
        parser.error(
            f"{str(args.release)!r} holds no release that 'pm-private fit' can fit: it fits noise-aware Bayesian "
            f"regression on released statistics ({fitted}). The file holds [{held or 'nothing'}]; such a release "
            "is itself the private estimate: read its outputs with pm_private.release_file.read_release_file"
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


def _provenance(args, entry: dict, index: int, family: Family) -> dict:
    """Attributes of the posterior file: the release's privacy, where it came from, the model and
    the release's public preprocessing constants that the family records."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        library = version("pm_private")
    except PackageNotFoundError:  # run from a source tree
        library = "unknown (not installed)"
    attrs = {
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
        "model": family.description,
    }
    preprocessing = entry.get("preprocessing") or {}
    for key in family.constants:
        if key in preprocessing:
            attrs[key] = json.dumps(preprocessing[key])
    return attrs


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


def _run(parser, args) -> None:
    from ..release_file import read_release_file

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

    import logging
    import warnings

    # The C backend warns that it found no BLAS to link; this model is small dense algebra.
    warnings.filterwarnings("ignore", message="PyTensor could not link to a BLAS")
    # PyMC calls its dense mass-matrix adaptation experimental on every run.
    warnings.filterwarnings("ignore", message="QuadPotentialFullAdapt is an experimental feature")
    logging.getLogger("pytensor.tensor.blas").setLevel(logging.ERROR)
    import pymc as pm

    from ..released.sampling import laplace_nuts, laplace_start
    from ..released.summary import fit_summary, print_summary

    family = released_families()[entry["kind"]]
    bar = not args.no_progress and sys.stdout.isatty()
    lines = None if args.no_progress or bar else _ProgressLines(args.chains * (args.draws + args.tune))
    compile_kwargs = {"mode": "CVM" if args.backend == "c" else "NUMBA"}
    names = {"feature_names": entry.get("features")} if family.features else {}
    with family.builder(entry["release"], **names):
        if family.start == "laplace":
            step = laplace_nuts(target_accept=args.target_accept, compile_kwargs=compile_kwargs)
            nuts = {"step": step, "initvals": laplace_start(step)}
        else:
            # A dense mass matrix where the family asks for one: the statistics tie the coefficients to the
            # covariates' covariance (on diabetes releases 2.5x fewer leapfrog steps than a diagonal one).
            nuts = {"target_accept": args.target_accept, "init": f"jitter+{family.start}"}
        idata = pm.sample(
            **nuts,
            draws=args.draws,
            tune=args.tune,
            chains=args.chains,
            cores=1,
            random_seed=args.seed,
            nuts_sampler="pymc",
            progressbar=bar,
            callback=lines,
            compile_kwargs=compile_kwargs,
        )
    idata.attrs.update(_provenance(args, entry, index, family))
    idata.to_netcdf(posterior, engine="h5netcdf")
    if any(name in idata["posterior"] for name in ("intercept", "beta")):
        fit_summary(idata).to_csv(summary)
        print_summary(idata, entry["release"])
    else:  # an exit table of one cell, or a baseline per cell: its report below is the answer
        print("no coefficients to summarise (one cell, or a baseline per cell); no summary CSV written")
    divergent = int(idata["sample_stats"]["diverging"].sum())
    print(f"\ndivergent draws: {divergent} of {args.chains * args.draws}")
    if family.report is not None:
        family.report(entry["release"])
    print(f"\nwrote {posterior} and {summary}")

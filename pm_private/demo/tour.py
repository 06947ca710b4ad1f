"""``pm-private demo`` from its command line to its closing summary: the plan (parts and their
settings), a fresh ledger, the parts in turn with the second process that compiles the later
parts' models meanwhile, and the last part, the drug-sensitivity study of Honkela et al. (2018).

The linear parts are in :mod:`pm_private.demo.linear_parts`, the survival part in
:mod:`pm_private.demo.survival_part`, what they share in :mod:`pm_private.demo.shared`, the second
process in :mod:`pm_private.demo.warmup`.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from ..privacy.argtypes import nonnegative_int, output_folder
from . import drug_sensitivity
from .display import Display
from .shared import LEDGER, LEDGER_TOTAL, Sampling, quiet
from .warmup import Warmup

__all__ = ["PARTS", "Plan", "build_parser", "check_args", "main"]

#: The parts, in the order they run: ``fit`` fits the release of ``release`` (and so runs it too).
PARTS = ("release", "fit", "survival", "drug-sensitivity")

#: The files the demo writes into its output folder (the study's own are added by its part).
OWN_FILES = (
    LEDGER,
    f"{LEDGER}-wal",
    f"{LEDGER}-shm",
    "diabetes.release.json",
    "diabetes_heldout.png",
    "flchain.release.json",
    "flchain_survival.png",
)

#: Sampling of the tour and of ``--quick``, and the drug-sensitivity settings of each.
TOUR_SAMPLING = Sampling(draws=500, tune=500, chains=2)
QUICK_SAMPLING = Sampling(draws=200, tune=200, chains=2)
TOUR_STUDY = dict(
    drugs=2, genes=5, sizes=[100, 400], epsilons=[1.0], repeats=2, public=30, advi_steps=1500, calibration_reps=0
)
#: The study's methods in the tour: the comparison of Honkela et al. (2018), whose models compile
#: in a fraction of the time of the batched noise-aware model (parts 2 and 3 show noise-aware
#: models; ``--full`` adds it to the study).
TOUR_METHODS = tuple(method for method in drug_sensitivity.METHODS if method != "noise-aware private LR")
QUICK_STUDY = dict(
    drugs=1, genes=5, sizes=[200], epsilons=[1.0], repeats=2, public=30, advi_steps=500, calibration_reps=0
)


@dataclass
class Plan:
    """What a run of the demo does: parts, settings and output folder.

    Parameters
    ----------
    parts : tuple of str
        The parts to run, among :data:`PARTS`, in their order.
    sampling : Sampling
        NUTS settings of the fits.
    study : argparse.Namespace
        The drug-sensitivity study's settings (those of :func:`drug_sensitivity.build_parser`).
    out : pathlib.Path
        The output folder.
    seed : int
        Seed of the splits, the samplers and the study (never of a release's noise).
    gdsc : object, optional
        The study's data, checked against its design (None when the study does not run).
    methods : tuple of str
        The study's methods.
    """

    parts: tuple[str, ...]
    sampling: Sampling
    study: argparse.Namespace
    out: Path
    seed: int
    gdsc: object = None
    methods: tuple[str, ...] = TOUR_METHODS
    results: dict = field(default_factory=dict)


#: The demo's description in its ``--help``.
DESCRIPTION = (
    "A tour of pm_private on data that ship with its dependencies: (1) a release of the diabetes data's "
    "statistics into a ledger and a release file, (2) the noise-aware model of it by NUTS beside least squares, "
    "(3) a private survival curve and hazard ratio beside Kaplan–Meier and Cox, (4) private drug-sensitivity "
    "prediction (Honkela et al. 2018) in small.  The first run on a machine spends a minute or two compiling the "
    "models; later runs load them from PyTensor's cache and take well under a minute."
)


def build_parser(parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    """The demo's arguments; every value is type- and range-checked while parsing."""
    parser = parser or argparse.ArgumentParser(prog="pm-private demo", description=DESCRIPTION)
    parser.add_argument(
        "parts",
        nargs="*",
        metavar="PART",
        help=f"parts to run, among {', '.join(PARTS)} (default: all; fit runs release too)",
    )
    parser.add_argument("--quick", action="store_true", help="shorter fits and a one-drug study (under a minute warm)")
    parser.add_argument(
        "--full", action="store_true", help="the full drug-sensitivity study with its calibration study (minutes)"
    )
    parser.add_argument("--seed", type=nonnegative_int, default=0, help="seed of splits, samplers and the study")
    parser.add_argument("--out", type=output_folder, default=Path("results"), help="output folder (default results/)")
    parser.add_argument("--no-progress", action="store_true", help="plain lines, no live display or progress bar")
    drug_sensitivity.add_study_arguments(parser)
    return parser


def check_args(args: argparse.Namespace, parser: argparse.ArgumentParser) -> Plan:
    """Checks across arguments, before any work (errors go through ``parser.error``, exit 2);
    returns the plan."""
    unknown = [part for part in args.parts if part not in PARTS]
    if unknown:
        parser.error(f"unknown part {unknown[0]!r}: choose among {', '.join(PARTS)}")
    if args.quick and args.full:
        parser.error("--quick and --full exclude each other")
    chosen = set(args.parts or PARTS) | ({"release"} if "fit" in args.parts else set())
    parts = tuple(part for part in PARTS if part in chosen)
    defaults = drug_sensitivity.FULL if args.full else QUICK_STUDY if args.quick else TOUR_STUDY
    for name, value in defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    try:
        args.out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        parser.error(f"--out: cannot create {str(args.out)!r}: {error.strerror}")
    gdsc = drug_sensitivity.check_args(args, parser) if "drug-sensitivity" in parts else None
    sampling = QUICK_SAMPLING if args.quick else TOUR_SAMPLING
    methods = drug_sensitivity.METHODS if args.full else TOUR_METHODS
    return Plan(parts=parts, sampling=sampling, study=args, out=args.out, seed=args.seed, gdsc=gdsc, methods=methods)


def open_fresh_ledger(display: Display, out: Path):
    """The run's ledger, new: the demo's own files of an earlier run in ``out`` are removed first."""
    from ..privacy.accountant import PrivacyAccountant

    old = [out / name for name in OWN_FILES if (out / name).exists()]
    for path in old:
        path.unlink()
    if old:
        display.print(
            f"  (removed the previous run's {', '.join(p.name for p in old)}: the demo's data are public, so each run "
            "starts a new ledger; a data holder never deletes one)"
        )
    ledger = PrivacyAccountant.open(out / LEDGER, epsilon=LEDGER_TOTAL[0], delta=LEDGER_TOTAL[1])
    display.wrote(out / LEDGER)
    return ledger


def study_part(display: Display, plan: Plan) -> None:
    """The drug-sensitivity study (Honkela et al. 2018) at the plan's settings."""
    study = plan.study
    settings = (
        f"{study.drugs} drug(s) × {study.repeats} repeat(s), {study.genes} genes, private sizes "
        f"{', '.join(map(str, study.sizes))}, ε {', '.join(f'{e:g}' for e in study.epsilons)}"
    )
    from ..released.family import NoiseDominatedWarning

    fitting = f"fitting {len(plan.methods)} methods (batched ADVI; AdaSSP a point estimate): {settings}"
    with display.step(fitting, spinner=False), warnings.catch_warnings():
        # at a hundred private lines the noise dominates: the table shows what that costs
        warnings.simplefilter("ignore", NoiseDominatedWarning)
        results, summary = drug_sensitivity.run_study(study, plan.gdsc, progress=display.live, methods=plan.methods)
    for path in drug_sensitivity.write_study(results, summary, plan.out):
        display.wrote(path)
    display.print("  Mean Spearman correlation ± s.e. on 100 held-out cell lines per drug and repeat:")
    for line in drug_sensitivity.format_table(summary).splitlines():
        display.print(f"    {line}")
    if study.calibration_reps > 0:
        with display.step(f"calibration study: {study.calibration_reps} replicates of both models by NUTS"):
            text, path = drug_sensitivity.calibration_report(study.calibration_reps, plan.seed, plan.out)
        display.wrote(path)
        for line in text.splitlines():
            display.print(f"    {line}")
    largest, epsilon = max(study.sizes), min(study.epsilons)
    at = summary[(summary.n_private == largest) & ((summary.epsilon == epsilon) | ~(summary.epsilon < float("inf")))]
    ranking = " > ".join(
        f"{row.method} {row['mean']:+.2f}" for _, row in at.sort_values("mean", ascending=False).iterrows()
    )
    display.headline(f"drug sensitivity, Spearman at {largest} private lines and ε = {epsilon:g}: {ranking}")


def main(args: argparse.Namespace | None = None, parser: argparse.ArgumentParser | None = None) -> Plan:
    """Run the demo.

    Parameters
    ----------
    args : argparse.Namespace, optional
        Parsed arguments (default: parsed from ``sys.argv``).
    parser : argparse.ArgumentParser, optional
        The parser that parsed them, for usage errors (default: :func:`build_parser`'s).

    Returns
    -------
    Plan
        What ran, with the parts' results in ``results``.
    """
    parser = parser or build_parser()
    if args is None:
        args = parser.parse_args()
    plan = check_args(args, parser)
    display = Display(live=not args.no_progress and sys.stdout.isatty())
    display.print(
        f"pm-private demo: {', '.join(plan.parts)} ({'quick' if args.quick else 'full study' if args.full else 'tour'}"
        f"; output in {plan.out}/)"
    )
    if {"release", "survival"} & set(plan.parts):
        display.print(
            "The diabetes and survival releases are real: secure noise (rng=None), charged to a new ledger in "
            f"{plan.out}/."
        )
    if "drug-sensitivity" in plan.parts:
        display.print("The drug-sensitivity study seeds its noise: a simulation of the mechanisms, marked not private.")
    from .._engine.threads import single_threaded_blas

    warmup = Warmup(plan.parts, plan.seed, plan.study, plan.methods)
    try:
        if warmup.describe():
            display.print(f"({warmup.describe()})")
        with display.step("importing PyMC"):
            import pymc  # noqa: F401  (before quiet(): importing PyMC sets its logger's level)
        with quiet(), single_threaded_blas():  # small dense algebra: threads only add synchronisation
            _run_parts(display, plan, warmup)
    finally:
        warmup.close()
    display.close()
    return plan


def _run_parts(display: Display, plan: Plan, warmup: Warmup) -> None:
    from . import linear_parts, survival_part

    titles = {
        "release": "A release into a ledger and a release file (diabetes progression, scikit-learn)",
        "fit": "The noise-aware model by NUTS, beside least squares on the private rows",
        "survival": "A private survival curve and hazard ratio (serum free light chain study)",
        "drug-sensitivity": "Private drug-sensitivity prediction (Honkela et al. 2018), in small",
    }
    ledger = open_fresh_ledger(display, plan.out) if {"release", "survival"} & set(plan.parts) else None
    for number, part in enumerate(plan.parts, start=1):
        display.part(number, len(plan.parts), titles[part])
        if part == "release":
            plan.results["release"] = linear_parts.release_part(display, plan, ledger)
        elif part == "fit":
            plan.results["fit"] = linear_parts.fit_part(display, plan, plan.results["release"])
        elif part == "survival":
            warmup.wait(part, display)
            plan.results["survival"] = survival_part.survival_part(display, plan, ledger)
        else:
            warmup.wait(part, display)
            study_part(display, plan)

"""``pm-private ledger LEDGER``: show a ledger (basic and tight totals, the cost of a next
release), export it as CSV or JSON, or upgrade a format-1 ledger once."""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from pathlib import Path

from ..privacy import argtypes as types

FIELDS = (
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


def add_parser(subparsers) -> None:
    """Add the ``ledger`` subcommand to ``pm-private``.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        The subcommands of ``pm-private``; the new parser's ``run`` default shows, exports or
        upgrades the ledger.
    """
    parser = subparsers.add_parser(
        "ledger", help="show a ledger file (basic and tight totals, a dry run of the next release); export it"
    )
    parser.add_argument("ledger", help="ledger file")
    parser.add_argument("--csv", metavar="FILE", help="write the entries as CSV ('-': standard output)")
    parser.add_argument("--json", metavar="FILE", help="write the ledger as JSON ('-': standard output)")
    parser.add_argument(
        "--next",
        choices=("gaussian", "laplace", "other"),
        help="dry run: the basic and tight totals after one more release of this kind (nothing is spent)",
    )
    parser.add_argument("--epsilon", type=types.epsilon, help="ε of the --next release")
    parser.add_argument("--delta", type=types.unit_interval, help="δ of the --next release (gaussian, other)")
    parser.add_argument(
        "--rows-per-person",
        type=types.positive_int,
        metavar="M",
        help="also state the ε the releases give a person with at most M rows: person-level entries as they are, "
        "record-level ones by group privacy over M rows (sensitivities M-fold)",
    )
    parser.add_argument(
        "--upgrade",
        action="store_true",
        help="convert a format-1 ledger (no integrity digests) to the current format once; the original is kept",
    )
    parser.add_argument(
        "--recover-from",
        metavar="BACKUP",
        help="put BACKUP, an earlier copy of LEDGER (refused as behind its witness, or damaged), back with one "
        "more entry charging as spent what the ledger's witness recorded beyond it; the replaced file is kept",
    )
    parser.set_defaults(run=_run, command_parser=parser)


def _ledger_value(entry, name):
    if name == "time":
        return entry.time.date().isoformat()  # kept to the day
    if name == "noise":
        return json.dumps([[e.kind, e.scale, e.sensitivity] for e in entry.noise])
    return getattr(entry, name)


def _ledger_rows(accountant) -> list[dict]:
    return [{name: _ledger_value(e, name) for name in FIELDS} for e in accountant.history]


def _next_noise(kind: str, epsilon: float, delta: float | None):
    from ..privacy.primitives import gaussian_noise_event, laplace_noise_event

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


def _run(parser, args) -> None:
    from ..privacy.accountant import PrivacyAccountant

    _check_options(parser, args)
    _recover_or_check(parser, args)
    _upgrade(parser, args)
    try:
        accountant = PrivacyAccountant.open(args.ledger)
    except (ValueError, OSError) as error:
        parser.error(str(error))
    rows = _ledger_rows(accountant)
    totals = accountant._store.head(), accountant.spent, accountant.tight_epsilon()
    cost, fits = _next_cost(parser, args, accountant, totals)
    if args.csv:
        _export_csv(args.csv, rows)
    if args.json:
        _export_json(args, accountant, rows, totals, cost, fits)
    if args.csv == "-" or args.json == "-":
        return
    _print_report(args, accountant, rows, totals, cost, fits)


def _check_options(parser, args) -> None:
    """The export targets and the options of ``--next``, checked (``parser.error`` otherwise)."""
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


def _recover_or_check(parser, args) -> None:
    """``--recover-from``: put the backup back and say what was carried; else check LEDGER exists."""
    if args.recover_from is not None:
        from ..privacy.ledger import recover_ledger

        try:
            recovery = recover_ledger(args.ledger, args.recover_from)
        except (ValueError, OSError) as error:
            parser.error(str(error))
        print(
            f"ledger {args.ledger} recovered from {args.recover_from}: it held {recovery.backup_rows} records, its "
            f"witness {recovery.witnessed_rows}; ε {recovery.carried[0]:g}, δ {recovery.carried[1]:g} carried "
            f"forward as spent; head now record {recovery.rows} (digest {recovery.digest[:12]})"
            + (f"; the replaced file is kept as {recovery.kept}" if recovery.kept else "")
        )
    else:
        try:
            types.existing_file(args.ledger)
        except argparse.ArgumentTypeError as error:
            parser.error(f"argument ledger: {error}")


def _upgrade(parser, args) -> None:
    """``--upgrade``: upgrade a format-1 ledger once, keeping the original."""
    if args.upgrade:
        from ..privacy.ledger import upgrade_ledger

        try:
            backup = upgrade_ledger(args.ledger)
        except (ValueError, OSError) as error:
            parser.error(str(error))
        print(f"ledger {args.ledger} upgraded to the current format; the original is kept as {backup}")


def _next_cost(parser, args, accountant, totals):
    """(cost, fits) of the dry-run release of ``--next``: the basic and tight ε after it and whether
    it fits the budget; (None, None) without ``--next``.  ``totals``: (head, spent (ε, δ), tight ε)."""
    _, (_, delta), _ = totals
    fits = None
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
    return cost, fits


def _export_csv(target: str, rows) -> None:
    """The ledger's entries as CSV to ``target`` (``-``: standard output)."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=FIELDS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    _export(target, buffer.getvalue())


def _export_json(args, accountant, rows, totals, cost, fits) -> None:
    """The ledger's totals, head, entries and the ``--next`` dry run as JSON to ``--json``."""
    head, (eps, delta), tight = totals
    document = {
        "ledger": str(args.ledger),
        "total": {"epsilon": accountant.epsilon, "delta": accountant.delta},
        "spent": {"epsilon": eps, "delta": delta},
        "remaining": dict(zip(("epsilon", "delta"), accountant.remaining, strict=True)),
        "tight": {"epsilon": tight, "delta": accountant.delta},
        "head": {"records": head.rows, "digest": head.digest, "ledger": head.ledger},
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


def _print_report(args, accountant, rows, totals, cost, fits) -> None:
    """The ledger's totals, head, the ``--next`` dry run and its entries, printed."""
    head, (eps, delta), tight = totals
    print(f"ledger {args.ledger}")
    print(f"head    record {head.rows}, digest {head.digest} (witnessed in {accountant._store.witness_file()})")
    print(f"total   ε {accountant.epsilon:g}, δ {accountant.delta:g}")
    print(f"spent   ε {eps:g}, δ {delta:g} (basic composition, reservations included)")
    print(f"tight   ε {tight:.6g} at δ {accountant.delta:g} (the stated noise events composed by PLD)")
    print(f"remains ε {accountant.remaining[0]:g}, δ {accountant.remaining[1]:g} (basic)")
    if args.rows_per_person is not None:
        person = accountant.person_epsilon(args.rows_per_person)
        print(
            f"person  ε {person:.6g} at δ {accountant.delta:g} for a person with at most {args.rows_per_person} rows "
            "(record-level entries by group privacy)"
        )
    if cost is not None:
        print(
            f"next    {args.next} release at ε {args.epsilon:g}, δ {args.delta or 0.0:g}: basic ε {cost[0]:.6g}, "
            f"tight ε {cost[1]:.6g} at δ {accountant.delta:g} -> {'fits' if fits else 'refused'} (dry run, nothing spent)"
        )
    if rows:
        print(
            f"\n{'id':>4}  {'day (UTC)':<19}  {'status':<8}  {'ε':>9}  {'δ':>9}  {'neighbours':<18}  mechanism, label"
        )
    for row in rows:
        note = f" [{row['note']}]" if row["note"] else ""
        print(
            f"{row['id']:>4}  {row['time']:<19}  {row['status']:<8}  {row['epsilon']:>9.4g}  {row['delta']:>9.3g}  "
            f"{row['neighbours']:<18}  {row['mechanism']}, {row['label']}{note}"
        )

"""``paysdk reconcile --ledger URL``: what the service lists against what the ledger fulfilled.

It exits 0 when nothing needs attention and 4 (``EXIT_ATTENTION``) when something does (a missed
payment, or an alarm: fulfilled but not completed, not listed, or for another amount or
currency); the other codes are every command's (``_exits``). Progress goes to stderr, and only
when stderr is a terminal.
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
from typing import TYPE_CHECKING, Any

from .._errors import ConfigurationError
from ..ledger import DEFAULT_TABLE, MAX_DISCREPANCIES, sqlite_file
from ._connection import client_from
from ._exits import EXIT_ATTENTION, EXIT_OK, EXIT_USAGE, exit_codes_help
from ._report import print_error, print_json, print_table

if TYPE_CHECKING:
    from ..ledger import Discrepancy, ReconcileReport

__all__ = ["add_reconcile_command"]


_COLUMNS = (
    "kind",
    "reference",
    "status",
    "amount",
    "currency",
    "fulfilled_amount",
    "fulfilled_currency",
)


def add_reconcile_command(commands: Any, client: argparse.ArgumentParser) -> None:
    """Register ``reconcile`` on the ``paysdk`` parser's subcommands."""
    reconcile = commands.add_parser(
        "reconcile",
        parents=[client],
        help="compare the service's payments with a fulfilment ledger",
        epilog=exit_codes_help(),
    )
    reconcile.add_argument(
        "--ledger", required=True, help="sqlite:///path.db, a path, or postgresql://..."
    )
    reconcile.add_argument("--table", default=DEFAULT_TABLE, help="the ledger's table")
    reconcile.add_argument(
        "--max-discrepancies",
        type=int,
        default=MAX_DISCREPANCIES,
        metavar="N",
        help="list at most N payments (all are counted); default %(default)s",
    )
    formats = reconcile.add_mutually_exclusive_group()
    formats.add_argument(
        "--json",
        dest="format",
        action="store_const",
        const="json",
        help="print the summary and the payments as JSON",
    )
    formats.add_argument(
        "--csv",
        dest="format",
        action="store_const",
        const="csv",
        help="print the payments as CSV (the summary is not included)",
    )
    reconcile.set_defaults(command=_reconcile, format="table")


def _reconcile(args: argparse.Namespace) -> int:
    from ..ledger import Kind, Ledger

    missing = _missing_sqlite_file(args.ledger)
    if missing is not None:  # a typo, most likely: say so, rather than as a database failure
        return print_error(
            f"--ledger: the ledger {missing!r} does not exist (reconcile reads a ledger, "
            "never creates one)",
            EXIT_USAGE,
        )
    progress = _Progress() if sys.stderr.isatty() else None
    with (
        Ledger(args.ledger, table=args.table, create_table=False) as ledger,
        client_from(args) as c,
    ):
        try:
            report = ledger.reconcile(
                c, progress=progress, max_discrepancies=args.max_discrepancies
            )
        finally:
            if progress is not None:
                progress.clear()
    order = list(Kind)  # missed first, then the alarms
    report.discrepancies.sort(key=lambda d: (order.index(d.kind), d.reference))
    {"json": _print_json, "csv": _print_csv}.get(args.format, _print_table)(report)
    if report.truncated and args.format != "table":
        sys.stderr.write(_cut(report) + "\n")
    return EXIT_ATTENTION if report.needs_attention else EXIT_OK


def _missing_sqlite_file(ledger: str) -> str | None:
    """The file a SQLite ledger URL or path names, if there is none (else ``None``)."""
    try:
        path = sqlite_file(ledger)
    except ConfigurationError:  # a URL the ledger refuses: it says so when opened
        return None
    return None if path is None or os.path.exists(path) else path


class _Progress:
    """``checked 12500 payments`` on one line of stderr, rewritten in place."""

    def __call__(self, checked: int) -> None:
        sys.stderr.write(f"\rchecked {checked} payments")
        sys.stderr.flush()

    def clear(self) -> None:
        sys.stderr.write("\r\033[K")
        sys.stderr.flush()


def _cells(discrepancy: Discrepancy) -> list[str]:
    values = discrepancy.as_dict()
    return ["-" if values[name] is None else str(values[name]) for name in _COLUMNS]


def _summary(report: ReconcileReport) -> dict[str, int]:
    return {
        "listed": report.listed,
        "completed": report.completed,
        "fulfilled_ok": report.fulfilled_ok,
        **report.counts,
    }


def _cut(report: ReconcileReport) -> str:
    found = sum(report.counts.values())
    return (
        f"the list was cut: {len(report.discrepancies)} of {found} discrepancies shown "
        "(--max-discrepancies); the counts cover them all"
    )


def _print_table(report: ReconcileReport) -> None:
    if report.discrepancies:
        header = [name.replace("_", " ").upper() for name in _COLUMNS]
        right = [name.endswith("amount") for name in _COLUMNS]
        print_table([_cells(d) for d in report.discrepancies], header=header, right=right)
        print()
    if report.truncated:
        print(_cut(report))
    summary = _summary(report)
    print(
        f"{summary['listed']} listed, {summary['completed']} completed, "
        f"{summary['fulfilled_ok']} fulfilled as paid; "
        + ", ".join(f"{count} {kind.replace('_', ' ')}" for kind, count in report.counts.items())
    )
    print("needs attention" if report.needs_attention else "nothing needs attention")


def _print_json(report: ReconcileReport) -> None:
    print_json(
        {
            "summary": _summary(report),
            "needs_attention": report.needs_attention,
            "truncated": report.truncated,
            "discrepancies": [d.as_dict() for d in report.discrepancies],
        }
    )


def _print_csv(report: ReconcileReport) -> None:
    writer = csv.writer(sys.stdout, lineterminator="\n")
    writer.writerow(_COLUMNS)
    writer.writerows(_cells(d) for d in report.discrepancies)

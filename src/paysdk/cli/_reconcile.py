"""``paysdk reconcile --ledger URL``: what the service lists against what the ledger fulfilled.

It exits 4 (``EXIT_ATTENTION``) for a missed payment or an alarm (``ledger.ALARMS``); refused,
ignored and not-ours payments are listed, never a reason to fail. Progress goes to stderr, only
when it is a terminal.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from typing import TYPE_CHECKING, Any

from .._errors import ConfigurationError
from ..ledger import MAX_DISCREPANCIES
from ._command import add_formats
from ._connection import client_from, positive_count
from ._escape import cells_text
from ._exits import EXIT_ATTENTION, EXIT_OK
from ._imports import import_callable
from ._ledger_options import ledger_options, open_ledger
from ._report import print_csv, print_json, print_table

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
    "reason",
    "fulfilment",
)
"""The CSV's columns; the table shows ``fulfilment`` only when ``--fulfil`` ran."""

_CODES = frozenset({"status", "currency", "fulfilled_currency"})
"""The columns the service contract makes ASCII: a table escapes any other character of them."""

_OUTCOMES = {
    "fulfilled": "fulfilled now",
    "already_fulfilled": "already fulfilled",
    "in_progress": "not fulfilled: in progress elsewhere",
}
"""What ``--fulfil`` did to a missed payment, in the table's words; any other is why not."""


def add_reconcile_command(commands: Any, client: argparse.ArgumentParser) -> None:
    """Register ``reconcile`` on the ``paysdk`` parser's subcommands."""
    reconcile = commands.add_parser(
        "reconcile",
        parents=[client, ledger_options()],
        help="compare the service's payments with a fulfilment ledger",
    )
    reconcile.add_argument(
        "--lookup",
        metavar="MODULE:FUNCTION",
        help="your order lookup (reference -> order with amount and currency, or None), imported "
        "from the current directory: a paid payment with no order is not yours, not missed",
    )
    reconcile.add_argument(
        "--fulfil",
        metavar="MODULE:FUNCTION",
        help="your fulfilment (called with the verified payment), to fulfil missed payments "
        "that match their order, once each; needs --lookup",
    )
    reconcile.add_argument(
        "--max-discrepancies",
        type=positive_count,
        default=MAX_DISCREPANCIES,
        metavar="N",
        help="list at most N payments (all are counted); default %(default)s",
    )
    add_formats(
        reconcile,
        "table",
        json="print the summary and the payments as JSON",
        csv="print the payments as CSV (the summary is not included)",
    )
    reconcile.set_defaults(command=_reconcile)


def _reconcile(args: argparse.Namespace) -> int:
    from ..ledger import Kind

    if args.fulfil is not None and args.lookup is None:
        raise ConfigurationError(
            "--fulfil needs --lookup, so a missed payment is fulfilled only if it matches its "
            "order's amount and currency"
        )
    # the merchant's code (its import, Django's setup, each call) may print: to stderr, so
    # stdout holds the report alone (`--json > report.json`)
    with contextlib.redirect_stdout(sys.stderr):
        report, fulfilling = _reconciled(args)
    order = list(Kind)  # missed first, then the alarms, then those set aside
    report.discrepancies.sort(key=lambda d: (order.index(d.kind), d.reference))
    if args.format == "json":
        print_json(
            {
                "account": report.account,
                "summary": _summary(report),
                "needs_attention": report.needs_attention,
                "truncated": report.truncated,
                "discrepancies": [d.as_dict() for d in report.discrepancies],
            }
        )
    elif args.format == "csv":
        print_csv(_COLUMNS, (_values(d) for d in report.discrepancies))
    else:
        _print_table(report, fulfilling=fulfilling)
    if report.truncated and args.format != "table":
        sys.stderr.write(_cut(report) + "\n")
    return EXIT_ATTENTION if report.needs_attention else EXIT_OK


def _reconciled(args: argparse.Namespace) -> tuple[ReconcileReport, bool]:
    """The report of ``ledger.reconcile`` with the ``--lookup`` and ``--fulfil`` given, and
    whether it fulfilled (``--fulfil`` was given)."""
    lookup = None if args.lookup is None else import_callable(args.lookup, "--lookup")
    fulfil = None if args.fulfil is None else import_callable(args.fulfil, "--fulfil")
    progress = _Progress() if _Progress.shown() else None
    with open_ledger(args) as ledger, client_from(args) as c:
        try:
            report = ledger.reconcile(
                c,
                fulfil=fulfil,
                lookup=lookup,
                progress=progress,
                max_discrepancies=args.max_discrepancies,
            )
        finally:
            if progress is not None:
                progress.clear()
    return report, fulfil is not None


class _Progress:
    """``checked 12500 payments`` on one line of stderr, rewritten in place."""

    @staticmethod
    def shown() -> bool:
        """Whether stderr is a terminal that rewrites a line: not a file, nor ``TERM=dumb``
        (an editor's shell buffer, which would show the escape that clears it)."""
        return sys.stderr.isatty() and os.environ.get("TERM") != "dumb"

    def __call__(self, checked: int) -> None:
        sys.stderr.write(f"\rchecked {checked} payments")
        sys.stderr.flush()

    def clear(self) -> None:
        sys.stderr.write("\r\033[K")
        sys.stderr.flush()


def _values(discrepancy: Discrepancy, columns: tuple[str, ...] = _COLUMNS) -> list[object]:
    values = discrepancy.as_dict()
    return [values[name] for name in columns]


def _table_cells(discrepancy: Discrepancy, columns: tuple[str, ...]) -> list[str]:
    """A row of the table: ``fulfilment`` said as what happened (fulfilled now, or why not)."""
    cells = cells_text(columns, _values(discrepancy, columns), _CODES)
    if "fulfilment" in columns and discrepancy.fulfilment is not None:
        said = _OUTCOMES.get(discrepancy.fulfilment, f"not fulfilled: {discrepancy.fulfilment}")
        cells[columns.index("fulfilment")] = said
    return cells


def _summary(report: ReconcileReport) -> dict[str, int]:
    return {
        "listed": report.listed,
        "completed": report.completed,
        "fulfilled_ok": report.fulfilled_ok,
        **report.counts,
        # missed payments this run fulfilled (or found fulfilled meanwhile), kept or not
        "missed_fulfilled_now": report.counts["missed"] - report.unresolved_missed,
    }


def _cut(report: ReconcileReport) -> str:
    found = sum(report.counts.values())
    return (
        f"the list was cut: {len(report.discrepancies)} of {found} discrepancies shown "
        "(--max-discrepancies); the counts cover them all"
    )


def _print_table(report: ReconcileReport, *, fulfilling: bool) -> None:
    columns = _COLUMNS if fulfilling else _COLUMNS[:-1]
    if report.discrepancies:
        right = [name.endswith("amount") for name in columns]
        rows = [_table_cells(d, columns) for d in report.discrepancies]
        print_table(rows, header=columns, right=right)
        print()
    if report.truncated:
        print(_cut(report))
    summary = _summary(report)
    counts = [f"{count} {kind.replace('_', ' ')}" for kind, count in report.counts.items()]
    missed = report.counts["missed"]
    if fulfilling and missed:
        now = summary["missed_fulfilled_now"]
        counts[list(report.counts).index("missed")] += f" ({now} fulfilled now, {missed - now} not)"
    account = f"account {report.account}: " if report.account else ""
    print(
        f"{account}{summary['listed']} listed, {summary['completed']} completed, "
        f"{summary['fulfilled_ok']} fulfilled as paid; " + ", ".join(counts)
    )
    print(_verdict(report, fulfilling=fulfilling))


def _verdict(report: ReconcileReport, *, fulfilling: bool) -> str:
    """The last line: what needs attention, or that all is clear (what was set aside is not)."""
    from ..ledger import ALARMS

    if not report.needs_attention:
        return "all clear: nothing needs attention"
    alarms = sum(report.counts[str(kind)] for kind in ALARMS)
    missed = "missed and not fulfilled" if fulfilling else "missed"
    return f"needs attention: {report.unresolved_missed} {missed}, {alarms} alarms"

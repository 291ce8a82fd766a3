"""``paysdk ledger``: list the fulfilment ledger, record what a person decided about a payment,
clear an old key's fingerprints. A change the ledger declines (a fulfilled or claimed row keeps
its state) exits 1 and says why."""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from .._errors import ConfigurationError
from .._models.timestamps import as_utc
from ._command import add_formats, add_reference
from ._connection import positive_count, utf8_text
from ._escape import cells_text, printable
from ._exits import EXIT_FAILURE, EXIT_OK
from ._ledger_options import ledger_options, open_ledger
from ._report import PROG, print_csv, print_error, print_json, print_table

if TYPE_CHECKING:
    from ..ledger import Ledger, LedgerRow

__all__ = ["add_ledger_command"]

PAGE = 500
"""Rows read from the database at a time."""

_COLUMNS = ("reference", "state", "amount", "currency", "attempts", "fulfilled_at", "reason")


def add_ledger_command(commands: Any) -> None:
    """Register ``ledger`` and its subcommands on the ``paysdk`` parser's subcommands."""
    from ..ledger import STATES

    ledger = commands.add_parser(
        "ledger",
        help="list the fulfilment ledger; refuse, ignore or resolve a payment; retire an old key",
    )
    actions = ledger.add_subparsers(
        title="actions",
        required=True,
        metavar="ACTION",
        parser_class=type(ledger),
        help="run 'paysdk ledger ACTION --help' for its options",
    )
    options = ledger_options()

    list_ = actions.add_parser("list", parents=[options], help="list rows in reference order")
    list_.add_argument("--state", type=_state, help="only rows in this state: " + ", ".join(STATES))
    list_.add_argument(
        "--limit", type=positive_count, metavar="N", help="list at most N rows (default: all)"
    )
    add_formats(list_, "table", json="print JSON lines", csv="print CSV")
    list_.set_defaults(command=_list)

    for name, state, doing in (
        ("refuse", "refused", "you declined a payment (underpaid, no such order)"),
        ("ignore", "ignored", "a payment is not yours to fulfil (another shop's, a test)"),
    ):
        action = actions.add_parser(
            name,
            parents=[options],
            help=f"record that {doing}: reconcile then shows it, never as missed",
        )
        add_reference(action, utf8_text)
        action.add_argument(
            "--reason", type=utf8_text, required=True, help="why, as reconcile will show it"
        )
        action.set_defaults(command=functools.partial(_set_aside, state=state))

    resolve = actions.add_parser(
        "resolve",
        parents=[options],
        help="settle a payment whose outcome is unknown, once you checked whether it shipped",
    )
    add_reference(resolve, utf8_text)
    ran = resolve.add_mutually_exclusive_group(required=True)
    ran.add_argument(
        "--ran", dest="ran", action="store_true", help="the action ran: record it fulfilled"
    )
    ran.add_argument(
        "--did-not-run",
        dest="ran",
        action="store_false",
        help="it did not: release the claim, so the next delivery (or reconcile) runs it",
    )
    resolve.set_defaults(command=_resolve)

    retire = actions.add_parser(
        "retire-key",
        parents=[options],
        help="after rotating the unlabelled client's secret key: clear the old key's "
        "fingerprints, so the new key's payments are fulfilled and old ones stay fulfilled",
    )
    retire.set_defaults(command=_retire_key)


def _state(text: str) -> str:
    from ..ledger import STATES

    if text not in STATES:
        raise argparse.ArgumentTypeError(
            f"unknown state {text!a}: expected one of {', '.join(STATES)}"
        )
    return text


def _rows(
    ledger: Ledger, state: str | None, limit: int | None, account: str
) -> Iterator[LedgerRow]:
    """Every row (of ``state``) of ``account``, up to ``limit``, a page at a time: memory stays
    flat."""
    after, left = "", limit
    while left is None or left > 0:
        size = PAGE if left is None else min(PAGE, left)
        page = ledger.rows_after(after, size, state=state, account=account)
        yield from page
        if not page:
            return
        after = page[-1].reference
        left = None if left is None else left - len(page)


def _values(row: LedgerRow) -> dict[str, object]:
    """The row's ``_COLUMNS``, in their order; ``fulfilled_at`` in UTC, with microseconds and
    ``+00:00`` (``2026-11-05T09:00:14.000000+00:00``), whatever the database gave (a time
    without an offset is UTC, as the ledger keeps it): ``isoformat`` alone drops a fraction of
    zero, and writes no offset for a time without one."""
    values: dict[str, object] = {name: getattr(row, name) for name in _COLUMNS}
    if row.fulfilled_at is not None:
        values["fulfilled_at"] = as_utc(row.fulfilled_at).isoformat(timespec="microseconds")
    return values


def _list(args: argparse.Namespace) -> int:
    with open_ledger(args) as ledger:
        listed = [0]
        rows = _counted(_rows(ledger, args.state, args.limit, args.account), listed)
        if args.format == "json":  # one object a line: streams, however many rows
            for row in rows:
                print_json(_values(row), indent=None)
        elif args.format == "csv":
            print_csv(_COLUMNS, (_cells(row) for row in rows))
        else:
            _print_pages(rows)
        held = None if listed[0] else ledger._label_meant(args.account)
    if held is not None:
        print(printable(f"{PROG}: note: {_held_elsewhere(args.account, held)}"), file=sys.stderr)
    return EXIT_OK


def _held_elsewhere(account: str, held: str) -> str:
    """Why ``ledger list`` of ``account`` found nothing where ``held`` holds payments."""
    if account:
        return (
            f"this ledger holds no payment under account {account!r}, and holds payments under "
            f"account {held!r}, its label in another case: a label is matched to the letter "
            f"(--account {held})"
        )
    return (
        f"this ledger holds no payment without an account, and holds payments under account "
        f"{held!r} (and maybe others): name the account as its client does (--account {held})"
    )


def _counted(rows: Iterator[LedgerRow], count: list[int]) -> Iterator[LedgerRow]:
    """``rows``, counting in ``count[0]`` how many went by."""
    for row in rows:
        count[0] += 1
        yield row


def _print_pages(rows: Iterator[LedgerRow]) -> None:
    """An aligned table a page at a time (each page its own widths), so memory stays flat."""
    right = [name in ("amount", "attempts") for name in _COLUMNS]
    page: list[list[str]] = []
    shown = False
    for row in rows:
        page.append(cells_text(_COLUMNS, _cells(row), codes=("currency",)))
        if len(page) == PAGE:
            print_table(page, header=None if shown else _COLUMNS, right=right)
            page, shown = [], True
    if page or not shown:
        print_table(page, header=None if shown else _COLUMNS, right=right)


def _cells(row: LedgerRow) -> list[object]:
    """A row's values for a table or CSV, where an empty reason is a missing one."""
    return [None if value == "" else value for value in _values(row).values()]


def _set_aside(args: argparse.Namespace, state: str) -> int:
    with open_ledger(args) as ledger:
        record = ledger.refuse if state == "refused" else ledger.ignore
        row = record(args.reference, args.reason, account=args.account)
    if row.state != state:  # fulfilled, or a worker is fulfilling it: never undone
        return print_error(
            f"{row.reference} is {row.state}, and keeps that state: the ledger never sets aside "
            "a payment that is fulfilled or being fulfilled",
            EXIT_FAILURE,
        )
    print(printable(f"{row.reference}: {row.state} ({row.reason})"))
    return EXIT_OK


def _resolve(args: argparse.Namespace) -> int:
    with open_ledger(args) as ledger:
        row = ledger.resolve(args.reference, ran=args.ran, account=args.account)
    print(printable(f"{row.reference}: {row.state}"))
    return EXIT_OK


def _retire_key(args: argparse.Namespace) -> int:
    """``Ledger.retire_key``: only the unlabelled account's rows hold a key check, so a label
    is the user's mistake, refused before the ledger is opened."""
    if args.account:
        raise ConfigurationError(
            "retire-key clears the unlabelled account's key fingerprints; a labelled account's "
            "rows are never checked against a key: leave out --account"
        )
    with open_ledger(args) as ledger:
        cleared = ledger.retire_key()
    rows = "row" if cleared == 1 else "rows"
    print(
        f"cleared the key fingerprint of {cleared} unlabelled {rows}: "
        "the next payment records its key"
    )
    return EXIT_OK

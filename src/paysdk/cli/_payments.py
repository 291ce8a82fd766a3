"""``paysdk verify``, ``confirm`` and ``list``: the service's payments, shown as a table, JSON or
CSV. ``--json`` prints each payment as the service sent it; ``--status`` and ``--since`` are
read here, before anything is sent."""

from __future__ import annotations

import argparse
import calendar
import dataclasses
import datetime as dt
import json
import re
import string
import sys
from collections.abc import Callable
from typing import Any, cast

import paysdk
from paysdk._models.timestamps import read_timestamp, wire_timestamp
from paysdk.cli._command import add_formats, add_reference
from paysdk.cli._connection import client_from, whole_amount
from paysdk.cli._escape import Code, cell_text, part_text, printable
from paysdk.cli._exits import EXIT_OK
from paysdk.cli._report import PROG, as_received, print_csv, print_json, print_table

__all__ = ["add_payment_commands", "parse_since", "parse_status"]


def add_payment_commands(commands: Any, client: argparse.ArgumentParser) -> None:
    """Register ``verify``, ``confirm`` and ``list`` on the ``paysdk`` subcommands."""
    verify = commands.add_parser(
        "verify", parents=[client], help="show one payment by its reference"
    )
    add_reference(verify)
    add_formats(verify, "text", json="print the payment as the service sent it, as JSON")
    verify.set_defaults(command=_verify)

    confirm = commands.add_parser(
        "confirm",
        parents=[client],
        help="exit 0 only if a payment succeeded with this amount and currency",
    )
    add_reference(confirm)
    confirm.add_argument(
        "--amount",
        type=whole_amount,
        required=True,
        help="expected amount: an integer in the unit the service reports, e.g. 2500000",
    )
    confirm.add_argument("--currency", required=True, help="expected currency, e.g. NGN")
    confirm.set_defaults(command=_confirm)

    list_ = commands.add_parser("list", parents=[client], help="list payments")
    add_formats(
        list_,
        "table",
        json="print the payments as the service sent them, as JSON",
        csv="print CSV, every column",
    )
    statuses = ", ".join(status.value for status in paysdk.PaymentStatus)
    list_.add_argument(
        "--status", type=parse_status, help=f"only payments with this status: {statuses} (any case)"
    )
    list_.add_argument(
        "--since", type=parse_since, help="only payments created at or after this date/time (UTC)"
    )
    list_.set_defaults(command=_list)


def _verify(args: argparse.Namespace) -> int:
    with client_from(args) as client:
        if args.format == "json":  # what the service sent, to print back exactly
            raw = client.with_raw_response.verify(args.reference)
            print_json(_as_sent(raw.parse(), _data(raw.content)))
            return EXIT_OK
        payment = client.verify(args.reference)
    products = ", ".join(f"{part_text(p.name)} ({cell_text(p.amount)})" for p in payment.products)
    metadata = ", ".join(f"{part_text(k)}={part_text(v)}" for k, v in payment.metadata.items())
    rows = [
        ("reference", payment.reference),
        ("success", "yes" if payment.succeeded else "no"),
        ("amount", Code(f"{payment.amount} {payment.currency}")),
        ("fee", cell_text(payment.fee)),
        ("transaction_id", cell_text(payment.transaction_id)),
        ("customer", _customer(payment.customer)),
        ("products", products or "-"),
        ("card", _card(payment.authorization)),
        ("metadata", metadata or "-"),
    ]
    print_table([(f"{name}:", value) for name, value in rows], header=None)
    return EXIT_OK


def _confirm(args: argparse.Namespace) -> int:
    with client_from(args) as client:
        payment = client.confirm(args.reference, amount=args.amount, currency=args.currency)
    print(printable(f"confirmed: {payment.reference} paid {payment.amount} {payment.currency}"))
    return EXIT_OK


def _customer(customer: paysdk.Customer | None) -> str:
    if customer is None:
        return "-"
    name, phone = (part_text(part) if part else part for part in (customer.name, customer.phone))
    email = customer.email and f"<{part_text(customer.email)}>"
    return " ".join(part for part in (name, email, phone) if part) or "-"


def _card(card: paysdk.CardAuthorization | None) -> str:
    """The card line: a `Code`, as the contract makes each part ASCII (a scheme in lower case,
    digits, ``MM/YY``), so ``v\\u0456sa`` (a Cyrillic i) or fullwidth digits are escaped; a
    part the service left out (or sent unreadable) is ``-``."""
    if card is None:
        return "- (not a card payment)"
    scheme, first, last, expiry = map(
        cell_text, (card.card_type, card.first_six, card.last_four, card.expiry)
    )
    return Code(f"{scheme} {first}...{last} expires {expiry}")


@dataclasses.dataclass(frozen=True)
class _Column:
    name: str
    value: Callable[[paysdk.ListedPayment], object]
    in_table: bool = True
    right: bool = False


_COLUMNS = (
    _Column("id", lambda p: p.id, in_table=False),
    _Column("reference", lambda p: p.reference),
    _Column("status", lambda p: Code(p.status)),
    _Column("amount", lambda p: p.amount, right=True),
    _Column("fee", lambda p: p.fee, right=True),
    _Column("currency", lambda p: Code(p.currency)),
    _Column("customer_paid", lambda p: p.customer_paid, in_table=False),
    _Column("customer_email", lambda p: p.customer and p.customer.email),
    _Column("created_at", lambda p: _timestamp(p.created_at)),
    _Column("updated_at", lambda p: _timestamp(p.updated_at), in_table=False),
)
"""The list's columns: all of them in CSV, those ``in_table`` in the table for people. Each
gives the value itself (an integer, a boolean, text or ``None``): CSV keeps numbers numbers."""


def _list(args: argparse.Namespace) -> int:
    with client_from(args) as client:
        if args.format == "json":  # what the service sent, to print back exactly
            raw = client.with_raw_response.list_payments()
            listed, sent = raw.parse(), raw.content
        else:
            listed, sent = client.list_payments(), None
    payments = [
        (n, p)
        for n, p in enumerate(listed)
        if args.status is None or p.status == args.status  # as `succeeded` reads it
    ]
    if args.since is not None:
        undated = sum(p.created_at is None for _, p in payments)
        payments = [
            (n, p) for n, p in payments if p.created_at is not None and p.created_at >= args.since
        ]
        if undated:  # may be from any time: left out, never silently
            which = "1 payment" if undated == 1 else f"{undated} payments"
            whose = "its" if undated == 1 else "their"
            print(
                f"{PROG}: note: {which} left out by --since: {whose} created_at is missing or "
                "not a time paysdk reads (--json without --since shows them as sent)",
                file=sys.stderr,
            )
    if sent is not None:
        elements = _elements(sent, len(listed))
        print_json([_as_sent(p, None if elements is None else elements[n]) for n, p in payments])
        return EXIT_OK
    if args.format == "csv":
        print_csv(
            [column.name for column in _COLUMNS],
            ([column.value(p) for column in _COLUMNS] for _, p in payments),
        )
    elif not payments:
        print("No payments.")
    else:
        columns = [column for column in _COLUMNS if column.in_table]
        rows = [[cell_text(column.value(p)) for column in columns] for _, p in payments]
        header = [column.name for column in columns]
        print_table(rows, header=header, right=[column.right for column in columns])
    return EXIT_OK


def _data(content: bytes) -> object:
    """A body's ``data``, as JSON reads it; ``None`` for a body that is no JSON without the
    client's repairs (bytes that are not UTF-8), or holds no ``data``."""
    try:
        body: object = json.loads(content)
    except (ValueError, RecursionError):
        return None
    return cast("dict[str, object]", body).get("data") if isinstance(body, dict) else None


def _elements(content: bytes, count: int) -> list[object] | None:
    """The ``count`` payments of a list body, as JSON reads them (`_data`); ``None`` for a body
    that is no JSON without the client's repairs."""
    data = _data(content)
    if not isinstance(data, list):
        return None
    elements = cast("list[object]", data)
    return elements if len(elements) == count else None


_TIMES = ("created_at", "updated_at")
_EMPTIED = ("products", "metadata")
"""The fields whose ``null`` the models read as empty (``[]``, ``{}``): nothing there."""


def _as_sent(
    payment: paysdk.ListedPayment | paysdk.VerifiedPayment, element: object
) -> dict[str, object]:
    """``payment`` as ``as_received`` gives it, each field the model holds in another form than
    the one sent as the service sent it (``element``, its JSON): a timestamp, which the model
    holds as a UTC datetime, whose wire text is not the text or number sent (``+01:00``,
    milliseconds, a Unix time), and a ``null`` the model reads as empty products or metadata."""
    shown = as_received(payment)
    if isinstance(element, dict):
        sent = cast("dict[str, object]", element)
        fields = type(payment).model_fields
        for name in _TIMES:
            if name in fields and getattr(payment, name) is not None and name in sent:
                shown[name] = sent[name]
        for name in _EMPTIED:
            if name in fields and name in sent and sent[name] is None:
                shown[name] = None
    return shown


def _timestamp(value: dt.datetime | None) -> str | None:
    return None if value is None else wire_timestamp(value)


def parse_status(text: str) -> str:
    """``--status``: one of the statuses paysdk knows (``paysdk.PaymentStatus``), any case."""
    known = [status.value for status in paysdk.PaymentStatus]
    # ASCII alone: Unicode's case mapping would read ``failed`` spelt with a dotless i (U+0131)
    # as ``FAILED``; and ASCII blanks stripped alone: str.strip() takes U+00A0 and more
    status = text.upper().strip(string.whitespace) if text.isascii() else None
    if status not in known:
        raise argparse.ArgumentTypeError(
            f"unknown status {text!a}: expected one of {', '.join(known)} (any case)"
        )
    return status


def _impossible(year: int, month: int, day: int) -> str | None:
    """What makes the date impossible, in words of our own (Python's change between versions),
    or ``None`` if it exists."""
    if not 1 <= year <= dt.MAXYEAR:
        return f"year {year} is not one a date can have (1 to {dt.MAXYEAR})"
    if not 1 <= month <= 12:
        return f"month {month} does not exist (1 to 12)"
    days = calendar.monthrange(year, month)[1]
    if not 1 <= day <= days:
        return f"day {day} does not exist in {calendar.month_name[month]} {year} (1 to {days})"
    return None


def parse_since(text: str) -> dt.datetime:
    """``--since``: a date (midnight UTC) or an ISO 8601 datetime (UTC unless it says)."""
    text = text.strip(string.whitespace)  # ASCII blanks alone: 2026-11-05\xa0 is no date
    date = re.match(r"([0-9]{4})-([0-9]{2})-([0-9]{2})(?![0-9])", text)
    if date is not None:  # shaped like a date: say which part is out of range
        problem = _impossible(*(int(part) for part in date.groups()))
        if problem is not None:
            raise argparse.ArgumentTypeError(f"{text!r} is not a real date: {problem}")
    try:
        value = read_timestamp(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a date like 2026-01-01 or an ISO 8601 datetime, not {text!r}"
        ) from None
    return value if value.tzinfo is not None else value.replace(tzinfo=dt.timezone.utc)

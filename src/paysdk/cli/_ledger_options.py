"""The options every command that reads the fulfilment ledger takes, and the ledger they open."""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING

from .._errors import ConfigurationError
from ._command import Command

if TYPE_CHECKING:
    from ..ledger import Ledger

__all__ = ["ledger_options", "open_ledger"]

ENV_LEDGER = "PAYSDK_LEDGER"
"""The ledger's URL when ``--ledger`` is not given."""


def ledger_options() -> Command:
    """A parent parser with ``--ledger`` and ``--table``."""
    from ..ledger import DEFAULT_TABLE

    options = Command(add_help=False)
    group = options.add_argument_group("ledger")
    group.add_argument(
        "--ledger",
        help=f"sqlite:///path.db, a path, or postgresql://... (default: ${ENV_LEDGER})",
    )
    group.add_argument(
        "--table", default=DEFAULT_TABLE, help="the ledger's table (default: %(default)s)"
    )
    group.add_argument(
        "--account",
        type=account_label,
        default="",
        metavar="LABEL",
        help="the merchant account, as your clients label it (Client(account=...)); default: "
        "the unlabelled one",
    )
    return options


def account_label(text: str) -> str:
    """An argparse type: an account label, checked as ``Client(account=...)`` checks it."""
    from .._core.config import check_account

    try:
        return check_account(text)
    except ConfigurationError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def open_ledger(args: argparse.Namespace) -> Ledger:
    """The ledger the options name; never creates one, as these commands only read or amend it.

    Raises:
        ConfigurationError: no ledger was named, a SQLite file that does not exist, or a table
            the ledger lacks (a typo, most likely: said so, rather than as a database failure).
    """
    from ..ledger import Ledger, sqlite_file

    url = args.ledger if args.ledger is not None else os.environ.get(ENV_LEDGER, "")
    source = "--ledger" if args.ledger is not None else ENV_LEDGER
    if not url.strip():
        raise ConfigurationError(f"no ledger: pass --ledger or set {ENV_LEDGER}")
    try:
        path = sqlite_file(url)
    except ConfigurationError:  # a URL the ledger refuses: it says so when opened
        path = None
    if path is not None and not os.path.exists(path):
        where = "" if os.path.isabs(path) else _in_working_directory()
        raise ConfigurationError(
            f"{source}: the ledger {path!r} does not exist{where} (paysdk never creates one): "
            "name the file your app's Ledger writes to, which it creates when it first records "
            "a payment"
        )
    ledger = Ledger(url, table=args.table, create_table=False)
    try:
        _check_table(ledger, args.table)
    except BaseException:
        ledger.close()
        raise
    return ledger


def _in_working_directory() -> str:
    """`` in <the working directory>``; ``""`` where it has no name (removed since)."""
    try:
        return f" in {os.getcwd()}"
    except OSError:
        return ""


def _check_table(ledger: Ledger, table: str) -> None:
    """Read one row, so a table the ledger lacks is the user's error (a usage error, named as
    such) rather than a database failure halfway through the command."""
    from ..ledger import DEFAULT_TABLE, LedgerError

    try:
        ledger.rows_after("", 1)
    except LedgerError as exc:
        text = str(exc)
        if "no such table" in text or ("relation" in text and "does not exist" in text):
            raise ConfigurationError(
                f"--table: the ledger has no table {table!r} (default: {DEFAULT_TABLE}): name "
                "the table your app's Ledger writes to"
            ) from None
        raise

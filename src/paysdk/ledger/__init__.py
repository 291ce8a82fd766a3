"""The fulfilment ledger: fulfil each payment exactly once, and reconcile what callbacks missed.

    ledger = paysdk.Ledger("sqlite:///orders.db")      # or postgresql://user@host/db
    result = ledger.fulfil_once(payment, ship_order)   # payment: a paysdk.VerifiedPayment
    report = ledger.reconcile(client)                  # missed callbacks, alarms

On the app's own SQLAlchemy engine: `paysdk.ledger.sqlalchemy` (the ``sqlalchemy`` extra).
See [Fulfilment](fulfilment.md) for the schema, the lease and reconciliation as a cron job. Imported
only when used (``paysdk.Ledger`` loads it), so ``import paysdk`` never loads sqlite3 or psycopg.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._lazy import lazy_names

# The API reference lists these in the order they are imported here: the ledger, then its async
# twin, what their calls return, what reconcile reports, and what they raise.
if TYPE_CHECKING:
    # isort: off
    from ._sync.ledger import Ledger
    from ._async.ledger import AsyncLedger
    from ._rows import FulfilResult, LedgerRow, Outcome
    from ._reconcile.report import ALARMS, MAX_DISCREPANCIES, Discrepancy, Kind, ReconcileReport
    from ._schema import DEFAULT_TABLE
    from ._statements import STATES
    from ._errors import (
        LedgerError,
        LeaseLostError,
        UnrecordedFulfilmentError,
        UnverifiedPaymentError,
        AmountOutOfRangeError,
    )
    from ._base import sqlite_file
    # isort: on

__all__ = [
    "ALARMS",
    "DEFAULT_TABLE",
    "MAX_DISCREPANCIES",
    "STATES",
    "AmountOutOfRangeError",
    "AsyncLedger",
    "Discrepancy",
    "FulfilResult",
    "Kind",
    "LeaseLostError",
    "Ledger",
    "LedgerError",
    "LedgerRow",
    "Outcome",
    "ReconcileReport",
    "UnrecordedFulfilmentError",
    "UnverifiedPaymentError",
    "sqlite_file",
]

_HOMES = {
    "Ledger": "._sync.ledger",
    "AsyncLedger": "._async.ledger",
    **dict.fromkeys(["FulfilResult", "LedgerRow", "Outcome"], "._rows"),
    **dict.fromkeys(
        ["ALARMS", "MAX_DISCREPANCIES", "Discrepancy", "Kind", "ReconcileReport"],
        "._reconcile.report",
    ),
    "DEFAULT_TABLE": "._schema",
    "STATES": "._statements",
    **dict.fromkeys(
        [
            "LedgerError",
            "LeaseLostError",
            "UnrecordedFulfilmentError",
            "UnverifiedPaymentError",
            "AmountOutOfRangeError",
        ],
        "._errors",
    ),
    "sqlite_file": "._base",
}
"""Each name is loaded on first use, its module with it: the command line reads
``MAX_DISCREPANCIES`` without loading the ledger, its client and its drivers."""

_load, _names = lazy_names(__name__, _HOMES)


def __getattr__(name: str) -> Any:
    return _load(name)


def __dir__() -> list[str]:
    return _names()

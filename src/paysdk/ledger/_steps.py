"""The words a ledger plan speaks: the steps it yields to its driver and the answers it gets.

A plan (``_plans``) is a generator of these steps; a driver (``_sync/run``, ``_async/run``)
carries each out on its database and sends back ``Rows`` for a ``Query`` and ``Acted`` for an
``Act``. Nothing here does I/O.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Generator, Sequence
from typing import Any, TypeAlias, TypeVar

__all__ = ["Act", "Acted", "Begin", "Commit", "LedgerPlan", "LedgerStep", "Pause", "Query", "Rows"]

T = TypeVar("T")


@dataclasses.dataclass(frozen=True)
class Begin:
    """Start a transaction: a write one (SQLite: ``BEGIN IMMEDIATE``, taking the write lock),
    or with ``write=False`` a read, which waits for no writer (SQLite: plain ``BEGIN``)."""

    write: bool = True


@dataclasses.dataclass(frozen=True)
class Query:
    """Run one statement (``?`` placeholders) in the open transaction; answered with Rows."""

    sql: str
    params: Sequence[object] = ()


@dataclasses.dataclass(frozen=True)
class Commit:
    """Commit the open transaction and give its connection back."""


@dataclasses.dataclass(frozen=True)
class Act:
    """Run the merchant's action, no transaction open; answered with Acted."""


@dataclasses.dataclass(frozen=True)
class Pause:
    """Wait this many seconds, no transaction open, before trying a failed write again."""

    seconds: float


@dataclasses.dataclass(frozen=True)
class Rows:
    rows: list[tuple[Any, ...]]
    rowcount: int


@dataclasses.dataclass(frozen=True)
class Acted:
    """What the action returned, or the exception it raised."""

    value: object = None
    error: BaseException | None = None


LedgerStep: TypeAlias = "Begin | Query | Commit | Act | Pause"
LedgerPlan: TypeAlias = Generator[LedgerStep, Any, T]

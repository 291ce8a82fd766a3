"""What a ledger backend must do: open a transaction (write or read), run a statement, commit.
It holds no decisions (those are the plans'), and turns its database's errors into LedgerError."""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Generic, Protocol, TypeVar

from .._schema import Dialect
from .._steps import Rows

__all__ = ["AsyncConnection", "AsyncDriver", "Connection", "Driver", "Idle"]

C = TypeVar("C")


class Connection(Protocol):
    """A connection with a transaction open."""

    def execute(self, sql: str, params: Sequence[object]) -> Rows: ...
    def commit(self) -> None: ...
    def rollback(self) -> None: ...


class Driver(Protocol):
    dialect: Dialect

    def begin(self, write: bool = True) -> Connection: ...
    def done(self, connection: Connection) -> None: ...
    def close(self) -> None: ...


class AsyncConnection(Protocol):
    async def execute(self, sql: str, params: Sequence[object]) -> Rows: ...
    async def commit(self) -> None: ...
    async def rollback(self) -> None: ...


class AsyncDriver(Protocol):
    dialect: Dialect

    async def begin(self, write: bool = True) -> AsyncConnection: ...
    async def done(self, connection: AsyncConnection) -> None: ...
    async def close(self) -> None: ...


class Idle(Generic[C]):
    """Idle connections to reuse, thread-safe, forgotten in a forked child (never shared)."""

    def __init__(self, limit: int = 8) -> None:
        self._limit = limit
        self._items: list[C] = []
        self._pid = os.getpid()
        self._lock = threading.Lock()

    def _mine(self) -> None:
        """In a forked child, start with none, and a lock of its own: a thread of the parent
        may have held the inherited one, and would never let it go here."""
        if self._pid != os.getpid():
            self._items, self._lock, self._pid = [], threading.Lock(), os.getpid()

    def take(self) -> C | None:
        self._mine()
        with self._lock:
            return self._items.pop() if self._items else None

    def give(self, item: C) -> bool:
        """Keep ``item`` for reuse; False if there are enough already (the caller closes it)."""
        if self._pid != os.getpid():  # begun before a fork: never reused
            return False
        with self._lock:
            if len(self._items) < self._limit:
                self._items.append(item)
                return True
            return False

    def drain(self) -> list[C]:
        self._mine()
        with self._lock:
            items, self._items = self._items, []
            return items

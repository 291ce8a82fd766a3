"""Where the sync and async runners genuinely differ, in small helpers kept out of ``_async/``.

``scripts/unasync.py`` makes ``_sync/`` from ``_async/`` by renaming: each ``async_`` helper here
becomes its plain-named twin beside it (``async_take`` -> ``take``), so the generated code calls
the sync one. Everything else the two share, word for word.
"""

from __future__ import annotations

import contextlib
import inspect
import itertools
import time
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, TypeAlias

from .._client._twins import async_order_of, order_of  # as the clients' verify_callback
from .._core.expected import refuse_awaitable
from .._models.listed import ListedPayment

if TYPE_CHECKING:
    import anyio

__all__ = [
    "AsyncPayments",
    "Payments",
    "async_order_of",
    "async_result_of",
    "async_shield",
    "async_sleep",
    "async_take",
    "order_of",
    "result_of",
    "shield",
    "sleep",
    "take",
]

AWAITABLE_ACTION = "the action returned an awaitable: use paysdk.AsyncLedger"

Payments: TypeAlias = Iterator[ListedPayment]
AsyncPayments: TypeAlias = AsyncIterator[ListedPayment]


def result_of(value: object) -> object:
    """What an action returned; an awaitable is refused (ConfigurationError): sync cannot await."""
    refuse_awaitable(value, AWAITABLE_ACTION)
    return value


async def async_result_of(value: object) -> object:
    """What an action returned, awaited if it is awaitable: async actions are welcome here."""
    if inspect.isawaitable(value):
        return await value
    return value


def shield(timeout: float) -> contextlib.nullcontext[None]:
    """Nothing: sync code is never cancelled, so a rollback needs no shield."""
    return contextlib.nullcontext()


def async_shield(timeout: float) -> anyio.CancelScope:
    """Shield what it holds from cancellation, for no longer than ``timeout`` seconds: a rollback
    cut short by a cancelled task would leave its transaction (and its lock) open."""
    import anyio  # httpx depends on anyio; loaded only by async users

    return anyio.move_on_after(timeout, shield=True)


def sleep(seconds: float) -> None:
    """Wait, blocking the thread: a plan's Pause before it tries a failed write again.

    Args:
        seconds: how long.
    """
    time.sleep(seconds)


async def async_sleep(seconds: float) -> None:
    """Wait without blocking the event loop: a plan's Pause before it tries a write again.

    Args:
        seconds: how long.
    """
    import anyio

    await anyio.sleep(seconds)


def take(payments: Payments, size: int) -> list[ListedPayment]:
    """Up to ``size`` more payments of the stream, leaving the rest in it."""
    return list(itertools.islice(payments, size))


async def async_take(payments: AsyncPayments, size: int) -> list[ListedPayment]:
    """Up to ``size`` more payments of the stream, leaving the rest in it."""
    taken: list[ListedPayment] = []
    for _ in range(size):
        try:
            taken.append(await anext(payments))
        except StopAsyncIteration:
            break
    return taken

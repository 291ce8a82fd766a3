"""Where the sync and async ledgers differ, in small helpers kept out of ``_async/``: unasync
renames each ``async_`` one (and ``AsyncFulfilOnce``) to its plain-named twin here."""

from __future__ import annotations

import contextlib
import inspect
import itertools
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterator
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar, overload

from .._client._twins import async_order_of, order_of  # as the clients' verify_callback
from .._core.expected import refuse_awaitable
from .._errors import ConfigurationError
from .._models.listed import ListedPayment
from .._models.verified import VerifiedPayment
from ._rows import FulfilResult
from ._steps import Listed

if TYPE_CHECKING:
    import anyio

__all__ = [
    "AsyncFulfilOnce",
    "AsyncPayments",
    "FulfilOnce",
    "Payments",
    "async_order_of",
    "async_result_of",
    "async_shield",
    "async_sleep",
    "async_take",
    "async_uncancellable",
    "async_uncancelled",
    "order_of",
    "result_of",
    "shield",
    "sleep",
    "take",
    "uncancellable",
    "uncancelled",
]

T = TypeVar("T")

Payments: TypeAlias = Iterator[ListedPayment]
AsyncPayments: TypeAlias = AsyncIterator[ListedPayment]


def result_of(value: object) -> object:
    """What an action returned; an awaitable is refused (ConfigurationError): sync cannot await."""
    refuse_awaitable(value, "the action returned an awaitable: use paysdk.AsyncLedger")
    return value


async def async_result_of(value: object) -> object:
    """What an action returned, awaited if it is awaitable: async actions are welcome here."""
    return await value if inspect.isawaitable(value) else value


def shield(timeout: float) -> contextlib.nullcontext[None]:
    """Nothing: sync code is never cancelled, so a rollback needs no shield."""
    return contextlib.nullcontext()


def async_shield(timeout: float) -> anyio.CancelScope:
    """Shield what it holds from cancellation, for no longer than ``timeout`` seconds: a rollback
    cut short by a cancelled task would leave its transaction (and its lock) open."""
    import anyio  # httpx depends on anyio; loaded only by async users

    return anyio.move_on_after(timeout, shield=True)


def uncancellable() -> contextlib.nullcontext[None]:
    """Nothing: sync code is never cancelled, so what follows an action needs no shield."""
    return contextlib.nullcontext()


def async_uncancellable() -> anyio.CancelScope:
    """Shield the record or release of an action that ran (or was cancelled) from a cancel scope,
    which would cut it at its first await, leaving the claim held, then ``unknown``; the ledger's
    timeouts and retry budget bound it."""
    import anyio

    return anyio.CancelScope(shield=True)


def uncancelled(work: T, defer: Callable[[BaseException], None]) -> T:
    """What ``work`` gave: sync code is never cancelled, so there is nothing to defer."""
    return work


async def async_uncancelled(
    work: Coroutine[Any, Any, T], defer: Callable[[BaseException], None]
) -> T:
    """``work`` carried to its end even if asyncio cancels the caller (``asyncio.timeout``,
    ``Task.cancel``: anyio's shield does not stop it); ``defer`` keeps the cancellation to raise
    once the ledger's steps are done."""
    import asyncio

    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # trio: only cancel scopes, which the caller's shield holds off
        return await work
    task = loop.create_task(work)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError as cancelled:
        defer(cancelled)
        import anyio

        with anyio.CancelScope(shield=True):
            while not task.done():  # cancelled again: deferred as the first was
                with contextlib.suppress(asyncio.CancelledError):
                    await asyncio.shield(task)
        return task.result()


def sleep(seconds: float) -> None:
    """Wait ``seconds``, blocking the thread (a plan's Sleep before it retries a write)."""
    time.sleep(seconds)


async def async_sleep(seconds: float) -> None:
    """Wait ``seconds`` without blocking the event loop (a plan's Sleep before it retries)."""
    import anyio

    await anyio.sleep(seconds)


def take(payments: Payments, size: int) -> list[Listed]:
    """Up to ``size`` more payments of the stream, as reconcile compares them; the rest stay."""
    return [Listed.of(payment) for payment in itertools.islice(payments, size)]


async def async_take(payments: AsyncPayments, size: int) -> list[Listed]:
    """Up to ``size`` more payments of the stream, as reconcile compares them; the rest stay."""
    taken: list[Listed] = []
    for _ in range(size):
        try:
            taken.append(Listed.of(await anext(payments)))
        except StopAsyncIteration:
            break
    return taken


class FulfilOnce:
    """``Ledger.fulfil_once``: refuses an async action, then fulfils through ``_fulfil``."""

    def fulfil_once(
        self, payment: VerifiedPayment, action: Callable[[VerifiedPayment], T]
    ) -> FulfilResult[T]:
        """Run ``action(payment)`` unless this reference was fulfilled or is being fulfilled.

        If ``action`` raises, nothing is recorded as fulfilled, the claim is released (the next
        delivery retries) and the exception propagates. An action that returns an awaitable is
        refused the same way (ConfigurationError): only ``AsyncLedger`` can await it.

        Args:
            payment: the verified payment (from ``verify_callback``, ``confirm``...).
            action: what fulfilling it means (ship the order...); called with the payment.

        Returns:
            Whether it ran here (and what it returned), was already fulfilled, or is being
            fulfilled by another worker.

        Raises:
            UnverifiedPaymentError: ``payment`` is not a ``VerifiedPayment``.
            ConfigurationError: ``action`` is async.
            UnrecordedFulfilmentError: the action ran but could not be recorded.
            LeaseLostError: the action ran, but a person resolved its claim meanwhile.
            LedgerError: the database failed or refused (the cause is chained).
        """
        if inspect.iscoroutinefunction(action):
            raise ConfigurationError("an async action needs paysdk.AsyncLedger")
        return self._fulfil(payment, action)

    def _fulfil(
        self, payment: VerifiedPayment, action: Callable[[VerifiedPayment], object]
    ) -> FulfilResult[Any]:
        raise NotImplementedError


class AsyncFulfilOnce:
    """``AsyncLedger.fulfil_once``: a plain or an async action, fulfilled through ``_fulfil``."""

    @overload
    async def fulfil_once(
        self, payment: VerifiedPayment, action: Callable[[VerifiedPayment], Awaitable[T]]
    ) -> FulfilResult[T]: ...

    @overload
    async def fulfil_once(
        self, payment: VerifiedPayment, action: Callable[[VerifiedPayment], T]
    ) -> FulfilResult[T]: ...

    async def fulfil_once(
        self, payment: VerifiedPayment, action: Callable[[VerifiedPayment], object]
    ) -> FulfilResult[Any]:
        """Run ``action(payment)``, awaiting what it returns if awaitable, unless this reference
        was fulfilled or is being fulfilled. A plain function runs on the event loop: keep it quick.

        Args:
            payment: the verified payment.
            action: what fulfilling it means; a coroutine function or a plain one.

        Returns:
            Whether it ran here (and what it returned), was already fulfilled, or is being
            fulfilled by another worker.

        Raises:
            UnverifiedPaymentError: ``payment`` is not a ``VerifiedPayment``.
            UnrecordedFulfilmentError: the action ran but could not be recorded.
            LeaseLostError: the action ran, but a person resolved its claim meanwhile.
            LedgerError: the database failed or refused (the cause is chained).
        """
        return await self._fulfil(payment, action)

    async def _fulfil(
        self, payment: VerifiedPayment, action: Callable[[VerifiedPayment], object]
    ) -> FulfilResult[Any]:
        raise NotImplementedError

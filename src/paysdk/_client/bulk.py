"""``verify_many``: many verifies at bounded concurrency, results in input order. A window of at
most ``concurrency`` calls: the next reference is read only once the oldest result is handed out,
so nothing piles up. A result holds the payment or that reference's ``PaySDKError``; anything
else is a bug, raised."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import threading
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from itertools import islice
from typing import TYPE_CHECKING, Any

from typing_extensions import Self

from .._core.closing import AsyncCloses, Closes
from .._errors import ClientClosedError, ConfigurationError, PaySDKError
from .._errors.quoting import quoted
from .._lazy import publish
from .._models.verified import VerifiedPayment

if TYPE_CHECKING:
    from .trio_task import TrioTask

__all__ = ["AsyncBulk", "Bulk", "VerifyResult"]

MAX_CONCURRENCY = 1000


@dataclasses.dataclass(frozen=True)
class VerifyResult:
    """One reference's outcome: ``payment`` if it was verified, else the ``error`` it met.

    Attributes:
        reference: the reference, as it was given.
        payment: the verified payment; ``None`` if the call failed.
        error: the paysdk exception the call met; ``None`` if it succeeded.
        request_id: the last answer's ``X-Request-Id`` (or ``Request-Id``), if the service sent
            one (for an error that was an answer, ``error.request_id``).
    """

    reference: str
    payment: VerifiedPayment | None = None
    error: PaySDKError | None = None
    request_id: str | None = None

    @property
    def ok(self) -> bool:
        """Whether the reference was verified (``payment`` is set)."""
        return self.error is None

    def unwrap(self) -> VerifiedPayment:
        """The payment, or the error raised.

        Raises:
            PaySDKError: the error this reference met (its own subclass).
        """
        if self.error is not None:
            raise self.error
        assert self.payment is not None
        return self.payment


def _verified(reference: str, identified: Identified) -> VerifyResult:
    payment, request_id = identified
    return VerifyResult(reference, payment=payment, request_id=request_id)


def _failed(reference: str, error: PaySDKError) -> VerifyResult:
    return VerifyResult(reference, error=error, request_id=getattr(error, "request_id", None))


def _check_concurrency(concurrency: object) -> int:
    if (
        isinstance(concurrency, bool)
        or not isinstance(concurrency, int)
        or not 1 <= concurrency <= MAX_CONCURRENCY
    ):
        raise ConfigurationError(
            f"concurrency must be a whole number from 1 to {MAX_CONCURRENCY}, "
            f"got {quoted(concurrency)}"
        )
    return concurrency


def _references(references: Iterable[str]) -> Iterator[Any]:
    """An iterator over ``references``, read lazily; a ``str`` or bytes-like object is refused
    with ``TypeError``: each of its characters would be verified."""
    if isinstance(references, (str, bytes, bytearray, memoryview)):
        raise TypeError(
            f"verify_many takes an iterable of references, not {type(references).__name__} "
            "(which would verify each character): for one reference, use verify(reference) "
            "or verify_many([reference])"
        )
    return iter(references)


Identified = tuple[VerifiedPayment, "str | None"]
"""A verified payment and the request id of the answer that brought it."""

Sleeper = Callable[[float], None]
"""How a worker waits before a retry: ``Bulk`` hands it one that ``close()`` cuts short."""


class Bulk(Closes):
    """``VerifyResult`` s in input order; ``close()`` (or ``with``) to stop early. ``verify``
    waits between retries with the ``sleep`` it is given, which ``close()`` cuts short: closing
    waits for the attempts in flight, never for their backoff."""

    def __init__(
        self,
        references: Iterable[str],
        verify: Callable[[str, Sleeper], Identified],
        concurrency: int,
    ) -> None:
        self._concurrency = _check_concurrency(concurrency)
        self._references = _references(references)
        self._verify = verify
        self._executor: ThreadPoolExecutor | None = None
        self._window: deque[tuple[Any, Future[Identified]]] = deque()
        self._closing = threading.Event()

    def __iter__(self) -> Iterator[VerifyResult]:
        return self

    def __next__(self) -> VerifyResult:
        if self._executor is None:
            self._executor = ThreadPoolExecutor(self._concurrency, thread_name_prefix="paysdk")
        for reference in islice(self._references, self._concurrency - len(self._window)):
            future = self._executor.submit(self._verify, reference, self._sleep)
            self._window.append((reference, future))
        if not self._window:
            self.close()
            raise StopIteration
        reference, future = self._window.popleft()
        try:
            return _verified(reference, future.result())
        except PaySDKError as exc:
            return _failed(reference, exc)

    def _sleep(self, seconds: float) -> None:
        if self._closing.wait(seconds):
            raise ClientClosedError("verify_many was closed while this call waited to retry")

    def close(self) -> None:
        self._closing.set()
        for _, future in self._window:
            future.cancel()
        self._window.clear()
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)


def _trio_task(work: Callable[[], Awaitable[VerifyResult]]) -> TrioTask[VerifyResult]:
    """``work`` in a task of trio's own (its module, and trio, loaded only under trio)."""
    from .trio_task import TrioTask

    return TrioTask(work)


class AsyncBulk(AsyncCloses):
    """``async for`` ``VerifyResult`` s in input order; ``aclose()`` or ``async with``. ``verify``
    (given no sleep) waits between retries as its client does: ``aclose()`` cancels the tasks,
    backoff and all, so no sleep of its own is needed (``Bulk`` needs one). Under asyncio each
    call is an asyncio task; under trio, a ``TrioTask``."""

    def __init__(
        self,
        references: Iterable[str],
        verify: Callable[[str, None], Awaitable[Identified]],
        concurrency: int,
    ) -> None:
        self._concurrency = _check_concurrency(concurrency)
        self._references = _references(references)
        self._verify = verify
        self._window: deque[tuple[Any, asyncio.Task[VerifyResult] | TrioTask[VerifyResult]]] = (
            deque()
        )

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> VerifyResult:
        if len(self._window) < self._concurrency:
            try:
                loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
            except RuntimeError:  # trio: no asyncio loop to make tasks in
                loop = None
            for reference in islice(self._references, self._concurrency - len(self._window)):
                task: asyncio.Task[VerifyResult] | TrioTask[VerifyResult] = (
                    loop.create_task(self._result(reference))
                    if loop is not None
                    else _trio_task(functools.partial(self._result, reference))
                )
                self._window.append((reference, task))
        if not self._window:
            raise StopAsyncIteration
        # Left in the window while awaited: a cancelled caller's aclose() ends it. Shielded: a
        # caller's cancellation is its own, not the call's (anyio before 4.6 took the call's
        # CancelledError for another scope's and let it through the caller's move_on_after).
        _, task = self._window[0]
        result = await (asyncio.shield(task) if isinstance(task, asyncio.Task) else task.result())
        self._window.popleft()
        return result

    async def _result(self, reference: Any) -> VerifyResult:
        """One reference's result: never raises a paysdk error, so a task left behind by an
        early ``break`` has nothing unretrieved to complain about."""
        try:
            return _verified(reference, await self._verify(reference, None))
        except PaySDKError as exc:
            return _failed(reference, exc)

    async def close(self) -> None:
        """Cancel the window's calls and wait for them to end: shielded, so a caller's own
        cancelled scope (``move_on_after`` around the loop) still waits, its cancellation then
        raised as it came (a second one, raised from here, anyio before 4.6 took for another's)."""
        tasks = [task for _, task in self._window]
        self._window.clear()
        for task in tasks:
            task.cancel()
        if not tasks:
            return
        import anyio

        with anyio.CancelScope(shield=True):
            asyncio_tasks = [task for task in tasks if isinstance(task, asyncio.Task)]
            if asyncio_tasks:
                await asyncio.gather(*asyncio_tasks, return_exceptions=True)
            for trio_task in tasks:
                if not isinstance(trio_task, asyncio.Task):
                    await trio_task.wait()


publish("paysdk", VerifyResult)

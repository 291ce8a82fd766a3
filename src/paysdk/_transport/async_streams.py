"""What every async sender (httpx or aiohttp) offers the client, and the stream both leave open;
imported with the first ``AsyncClient``, so sync users load neither asyncio nor anyio."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Protocol

from anyio import CancelScope, move_on_after, sleep

from .._core.body import read_timed_out, stream_failure
from .._core.steps import Answer, Failure, Opened, Read, Send
from .._errors import EventLoopError
from .._errors.connection import closed_error
from .forks import PerProcess

__all__ = ["AsyncOpenStream", "AsyncSender", "AsyncStream", "LoopBinding", "running_loop"]


class AsyncSender(Protocol):
    """What an async client needs of whatever sends for it (httpx or aiohttp)."""

    binding: LoopBinding

    @property
    def is_closed(self) -> bool: ...
    def send(self, request: Send) -> Awaitable[Answer | Failure | AsyncOpenStream]: ...
    async def close(self) -> None: ...


class AsyncOpenStream(Protocol):
    opened: Opened

    async def read(self, step: Read) -> bytes | Failure: ...
    async def close(self) -> None: ...


def running_loop() -> asyncio.AbstractEventLoop | None:
    """The asyncio loop running the caller; ``None`` if none does (under trio)."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


class _Bound:
    """The loop of this process's connections; set once, under ``lock``: the first calls of
    two loops in two threads at once would otherwise each take the connections for its own."""

    __slots__ = ("lock", "loop")

    def __init__(self) -> None:
        self.loop: asyncio.AbstractEventLoop | None = None
        self.lock = threading.Lock()


class LoopBinding:
    """The event loop an async sender's connections belong to: the first one it is used in,
    in each process (a forked child is not a second loop: it starts afresh)."""

    __slots__ = ("_bound", "_waiting")

    def __init__(self) -> None:
        self._bound = PerProcess(_Bound)
        self._waiting: PerProcess[set[CancelScope]] = PerProcess(set)
        """The scopes of the retries' waits under way in the loop, which closing cancels."""

    @property
    def loop(self) -> asyncio.AbstractEventLoop | None:
        bound = self._bound.current()
        return bound.loop if bound is not None else None

    def check(self) -> None:
        """Tie the sender to the running loop on first use; refuse any other loop after."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # another async library (trio): no asyncio loop to hold on to
            return
        bound = self._bound.get()
        if bound.loop is None:
            with bound.lock:
                if bound.loop is None:
                    bound.loop = loop
        if loop is not bound.loop:
            raise EventLoopError(
                "this AsyncClient was first used in another event loop, and its connections "
                "belong to it; make one AsyncClient per event loop (inside asyncio.run, or in "
                "your app's lifespan)"
            )

    async def wait_to_retry(self, seconds: float) -> None:
        """Wait ``seconds`` before a retry, or until ``close``: a call waiting to retry ends
        with the client's closing, as one under way does (its next request says so)."""
        waiting = self._waiting.get()
        with CancelScope() as scope:
            waiting.add(scope)
            try:
                await sleep(seconds)
            finally:
                waiting.discard(scope)

    async def close(self, close: Callable[[], Awaitable[None]]) -> None:
        """Run ``close`` in the loop the connections belong to, whichever loop awaits this: a
        loop running in another thread runs it, one stopped but not closed is run in a worker
        thread until done; a closed one took them with it (collecting the client frees them), as
        does one that ends while it runs ``close``. The retries' waits under way in that loop end
        first (``wait_to_retry``)."""
        owner, current = self.loop, running_loop()
        if owner is None or current is None or owner is current:
            await self._closing(close)
        elif owner.is_closed():
            return
        elif owner.is_running():
            closing = self._closing(close)
            done = asyncio.wrap_future(asyncio.run_coroutine_threadsafe(closing, owner))
            try:
                await asyncio.shield(done)  # this task cancelled: the closing still ends there
            except asyncio.CancelledError:
                if not done.cancelled():  # this task's cancellation: raised as it came
                    raise
                # that loop cancelled it as it ended (its asyncio.run returned meanwhile): the
                # connections went with it, as with a loop closed before
        else:
            from anyio import to_thread

            await to_thread.run_sync(owner.run_until_complete, self._closing(close))

    async def _closing(self, close: Callable[[], Awaitable[None]]) -> None:
        """``close``, in the connections' loop, once the waits to retry there are cut short."""
        for scope in list(self._waiting.current() or ()):
            scope.cancel()
        await close()


class AsyncStream:
    """A successful answer left open for ``iter_payments``, for either async backend: one
    decoded piece per ``Read``, each within the step's budget (one cancel scope)."""

    def __init__(
        self,
        opened: Opened,
        pieces: AsyncIterator[bytes],
        close: Callable[[], Awaitable[None]],
        closed: Callable[[], bool],
        failure: Callable[[Exception], Failure | None],
    ) -> None:
        """
        Args:
            opened: the answer's status and headers.
            pieces: the decoded body (``b""`` for a chunk that inflated to nothing).
            close: releases the answer's connection.
            closed: whether the client was closed.
            failure: reads the backend's exceptions; ``None`` for one that is a bug.
        """
        self.opened = opened
        self._pieces = pieces
        self._close = close
        self._closed = closed
        self._failure = failure

    async def read(self, step: Read) -> bytes | Failure:
        with move_on_after(step.budget):  # only its own cancel scope is a timeout
            try:
                async for piece in self._pieces:
                    if piece:
                        return piece
                return b""
            except Exception as exc:
                if self._closed():
                    raise closed_error("AsyncClient") from None
                if (failure := stream_failure(self.opened, exc, self._failure)) is None:
                    raise
                return failure
        return read_timed_out(step.budget)

    async def close(self) -> None:
        await self._close()

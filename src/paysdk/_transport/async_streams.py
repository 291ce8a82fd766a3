"""What every async sender (httpx or aiohttp) offers the client, and the stream both leave open.

Imported with the first ``AsyncClient``, so sync users load neither asyncio nor anyio.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Protocol

from anyio import move_on_after

from .._core.body import read_timed_out, stream_failure
from .._core.steps import Answer, Failure, Opened, Read, Send
from .._errors import EventLoopError, closed_error

__all__ = ["AsyncOpenStream", "AsyncSender", "AsyncStream", "bind_loop"]


class AsyncSender(Protocol):
    """What an async client needs of whatever sends for it (httpx or aiohttp)."""

    loop: asyncio.AbstractEventLoop | None

    @property
    def is_closed(self) -> bool: ...
    async def send(self, request: Send) -> Answer | Failure | AsyncOpenStream: ...
    async def close(self) -> None: ...


class AsyncOpenStream(Protocol):
    opened: Opened

    async def read(self, step: Read) -> bytes | Failure: ...
    async def close(self) -> None: ...


def bind_loop(sender: AsyncSender) -> None:
    """Tie ``sender`` to the running event loop on first use; refuse any other loop after."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # another async library (trio): no asyncio loop to hold on to
        return
    if sender.loop is None:
        sender.loop = loop
    elif loop is not sender.loop:
        raise EventLoopError(
            "this AsyncClient was first used in another event loop, and its connections "
            "belong to it; make one AsyncClient per event loop (inside asyncio.run, or in "
            "your app's lifespan)"
        )


class AsyncStream:
    """A successful answer left open for ``iter_payments``, for either async backend: one
    decoded piece per :class:`Read`, each within the step's budget (one cancel scope)."""

    def __init__(
        self,
        opened: Opened,
        pieces: AsyncIterator[bytes],
        close: Callable[[], Awaitable[None]],
        closed: Callable[[], bool],
        failure: Callable[[Exception], Failure],
    ) -> None:
        """``pieces``: the decoded body (``b""`` for a chunk that inflated to nothing);
        ``closed``: whether the client was closed; ``failure``: reads the backend's exceptions."""
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
                return stream_failure(self.opened, exc, self._failure)
        return read_timed_out(step.budget)

    async def close(self) -> None:
        await self._close()

"""The async httpx sender, and what every async sender (httpx or aiohttp) offers the client.

Like the sync sender, bodies go through :class:`BodyReader` (the same caps); an attempt is bounded
as a whole by one cancel scope. Imported with the first ``AsyncClient``, so sync users load
neither asyncio nor anyio.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Protocol

import httpx
from anyio import move_on_after

from ._decoding import adecoded
from ._errors import EventLoopError
from ._senders import HttpxDefaults, RequestBuilder, body_source, closed_error
from ._steps import (
    Answer,
    BodyReader,
    Failure,
    Opened,
    Read,
    Send,
    attempt_timed_out,
    failure_from_httpx,
    read_timed_out,
    stream_failure,
)

__all__ = ["AsyncHttpxSender", "AsyncOpenStream", "AsyncSender", "AsyncStream", "bind_loop"]


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


async def async_body(response: httpx.Response) -> AsyncIterator[bytes]:
    """The decoded body, inflated in bounded steps as it arrives (for streams)."""
    encoding, chunks = async_raw_body(response)
    async for piece in adecoded(encoding, chunks):
        yield piece


def async_raw_body(response: httpx.Response) -> tuple[str | None, AsyncIterator[bytes]]:
    """The async twin of ``_senders.raw_body``."""
    encoding, read = body_source(response)
    return encoding, _once(read) if read is not None else response.aiter_raw()


async def _once(content: bytes) -> AsyncIterator[bytes]:
    yield content


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
        failure: Callable[[Exception], Failure] = failure_from_httpx,
    ) -> None:
        """``pieces``: the decoded body (``b""`` for a chunk that inflated to nothing);
        ``closed``: whether the client was closed; ``failure``: reads the backend's exceptions."""
        self.opened = opened
        self._pieces = pieces
        self._close = close
        self._closed = closed
        self._failure = failure

    @classmethod
    def of_httpx(cls, response: httpx.Response, closed: Callable[[], bool]) -> AsyncStream:
        opened = Opened(response.status_code, response.headers)
        return cls(opened, async_body(response), response.aclose, closed)

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


class AsyncHttpxSender:
    """Sends with an ``httpx.AsyncClient``, each attempt inside one cancel scope."""

    def __init__(self, http: httpx.AsyncClient, *, defaults: HttpxDefaults | None = None) -> None:
        """``defaults``: as for :class:`SyncHttpxSender`."""
        self.http = http
        self.loop: asyncio.AbstractEventLoop | None = None
        self._requests = RequestBuilder(defaults)

    @property
    def is_closed(self) -> bool:
        return self.http.is_closed

    async def send(self, request: Send) -> Answer | Failure | AsyncStream:
        started = time.monotonic()
        with move_on_after(request.budget):  # only its own cancel scope is a timeout
            return await self._attempt(request, started)
        return attempt_timed_out(request.budget)

    async def _attempt(self, request: Send, started: float) -> Answer | Failure | AsyncStream:
        try:
            response = await self.http.send(self._requests.build(self.http, request), stream=True)
        except Exception as exc:
            return self._failure(exc)
        if request.opens(response.status_code):
            return AsyncStream.of_httpx(response, lambda: self.http.is_closed)
        encoding, chunks = async_raw_body(response)
        reader = BodyReader(
            request, response.status_code, response.headers, started, encoding=encoding
        )
        try:
            async for raw in chunks:
                if (done := reader.take(raw)) is not None:
                    return done
            return reader.finish()
        except Exception as exc:
            return self._failure(exc)
        finally:
            await response.aclose()

    def _failure(self, exc: Exception) -> Failure:
        if self.http.is_closed:
            raise closed_error("AsyncClient") from None
        return failure_from_httpx(exc)

    async def close(self) -> None:
        await self.http.aclose()

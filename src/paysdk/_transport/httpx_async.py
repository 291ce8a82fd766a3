"""The async httpx sender: each attempt inside one cancel scope, bodies through ``BodyReader``.

Like the sync sender, bodies go through ``BodyReader`` (the same caps); an attempt is bounded
as a whole by one cancel scope. Imported with the first httpx ``AsyncClient``.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable

import httpx
from anyio import move_on_after

from .._core.body import attempt_timed_out
from .._core.steps import Answer, Failure, Opened, Send
from .._errors import closed_error
from .._parsing.decoding import adecoded
from ._async.answers import read_answer
from ._async.pool import AsyncPoolTransport
from .async_streams import AsyncStream, LoopBinding
from .httpx_common import (
    HttpxDefaults,
    RequestBuilder,
    async_raw_body,
    failure_from_httpx,
    httpx_timeout,
)
from .network import Network

__all__ = ["AsyncHttpxSender", "httpx_stream", "own_async_client"]


def own_async_client(network: Network, defaults: HttpxDefaults) -> httpx.AsyncClient:
    """The ``httpx.AsyncClient`` paysdk makes: its pools go through ``network``, belong to one
    process, and it sends ``defaults`` itself rather than per request."""
    return httpx.AsyncClient(
        headers=defaults.headers,
        timeout=httpx_timeout(defaults.timeout),
        transport=AsyncPoolTransport(network),
        trust_env=False,  # the transport follows the environment's proxies itself
    )


async def async_body(response: httpx.Response) -> AsyncIterator[bytes]:
    """The decoded body, inflated in bounded steps as it arrives (for streams)."""
    encoding, chunks = async_raw_body(response)
    async for piece in adecoded(encoding, chunks):
        yield piece


def httpx_stream(response: httpx.Response, closed: Callable[[], bool]) -> AsyncStream:
    """A successful httpx answer left open for ``iter_payments``."""
    opened = Opened(response.status_code, response.headers)
    return AsyncStream(opened, async_body(response), response.aclose, closed, failure_from_httpx)


class AsyncHttpxSender:
    """Sends with an ``httpx.AsyncClient``, each attempt inside one cancel scope; closes it in
    the event loop its connections belong to."""

    def __init__(self, http: httpx.AsyncClient, *, defaults: HttpxDefaults | None = None) -> None:
        """
        Args:
            http: the client to send with.
            defaults: as for ``SyncHttpxSender``.
        """
        self.http = http
        self.binding = LoopBinding()
        self._requests = RequestBuilder(defaults)
        self._closed = False

    @property
    def is_closed(self) -> bool:
        return self._closed or self.http.is_closed

    async def send(self, request: Send) -> Answer | Failure | AsyncStream:
        started = time.monotonic()
        with move_on_after(request.budget):  # only its own cancel scope is a timeout
            return await self._attempt(request, started)
        return attempt_timed_out(request.budget)

    async def _attempt(self, request: Send, started: float) -> Answer | Failure | AsyncStream:
        try:
            response = await self.http.send(self._requests.build(self.http, request), stream=True)
        except Exception as exc:
            if (failure := self._failure(exc)) is None:
                raise
            return failure
        if request.opens(response.status_code):
            return httpx_stream(response, lambda: self.is_closed)
        return await read_answer(request, response, started, self._failure)

    def _failure(self, exc: Exception) -> Failure | None:
        """What ``exc`` stands for; ``None`` for a bug, which the caller re-raises."""
        if self.is_closed:
            raise closed_error("AsyncClient") from None
        return failure_from_httpx(exc)

    async def close(self) -> None:
        self._closed = True
        await self.binding.close(self.http.aclose)

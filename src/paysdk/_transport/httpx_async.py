"""The async httpx sender (loaded with the first ``AsyncClient``): each attempt in one cancel
scope, bodies through ``BodyReader``. paysdk's own client has no auth, redirects, cookies or
hooks, so its attempts go to its pools (``AsyncRoutes``) as httpcore's request, past httpx's
machinery (a quarter of a call's CPU); a merchant's client, and paysdk's own while OpenTelemetry
instruments httpx (its spans come from the transport) or something replaced
``httpx.AsyncClient.send`` (a tracer: ``httpx_tracing.sends_past``), send through httpx."""

from __future__ import annotations

import functools
import time

import httpx
from anyio import move_on_after

from .._core.body import attempt_timed_out
from .._core.steps import Answer, Failure, Opened, Send
from .._errors.connection import closed_error
from .._parsing.decoding import async_decoded
from . import httpx_tracing
from ._async.answers import read_answer, send_core
from ._async.pool import AsyncPoolTransport, AsyncRoutes
from .async_direct import AsyncDirectConnections
from .async_streams import AsyncStream, LoopBinding
from .asyncio_network import AsyncioBackend
from .closing_tls import ClosingTLSBackend
from .httpx_common import (
    HttpxDefaults,
    RequestBuilder,
    async_raw_body,
    failure_from_httpcore,
    failure_from_httpx,
    own_client_options,
)
from .network import Network, through_proxy

__all__ = ["AsyncHttpxSender", "own_async_client", "own_async_sender"]


def own_async_client(transport: AsyncPoolTransport, defaults: HttpxDefaults) -> httpx.AsyncClient:
    """The ``httpx.AsyncClient`` paysdk makes: through ``transport`` (this process's pools on its
    network), sending ``defaults`` itself rather than per request."""
    return httpx.AsyncClient(transport=transport, **own_client_options(defaults))


def own_async_sender(network: Network, defaults: HttpxDefaults) -> AsyncHttpxSender:
    """The sender on an ``own_async_client`` over ``network``: without a proxy, on paysdk's own
    HTTP/1.1 connections (``async_direct.py``) and asyncio's transports (``asyncio_network.py``);
    through one (TLS inside TLS for an HTTPS one), on httpcore's backend (``closing_tls.py``)."""
    transport = AsyncPoolTransport(
        network,
        network_backend=ClosingTLSBackend(),
        direct_backend=AsyncioBackend(),
        direct_connections=AsyncDirectConnections,
    )
    http = own_async_client(transport, defaults)
    return AsyncHttpxSender(http, defaults=defaults, routes=transport.routes)


class AsyncHttpxSender:
    """Sends with an ``httpx.AsyncClient``, each attempt inside one cancel scope; closes it in
    the event loop its connections belong to."""

    def __init__(
        self,
        http: httpx.AsyncClient,
        *,
        defaults: HttpxDefaults | None = None,
        routes: AsyncRoutes | None = None,
    ) -> None:
        """
        Args:
            http: the client to send with.
            defaults: as for ``SyncHttpxSender``.
            routes: the pools under ``http``, where ``http`` is paysdk's own: each untraced
                attempt is sent to them directly. ``None``: every attempt goes through ``http``.
        """
        self.http = http
        self.binding = LoopBinding()
        self._requests = RequestBuilder(defaults)
        self._routes = routes
        self._network = routes.network if routes is not None else None
        self._closed = False

    @property
    def is_closed(self) -> bool:
        return self._closed or self.http.is_closed

    async def send(self, request: Send) -> Answer | Failure | AsyncStream:
        started = time.monotonic()
        with move_on_after(request.budget):  # only its own cancel scope is a timeout
            return through_proxy(await self._attempt(request, started), request, self._network)
        return through_proxy(attempt_timed_out(request.budget), request, self._network)

    async def _attempt(self, request: Send, started: float) -> Answer | Failure | AsyncStream:
        routes = self._routes
        if routes is not None and httpx_tracing.sends_past(httpx.AsyncClient):
            return await self._direct(routes, request, started)
        try:
            response = await self.http.send(self._requests.build(self.http, request), stream=True)
        except Exception as exc:
            if (failure := self._failure(exc)) is None:
                raise
            return failure
        if request.opens(response.status_code):  # left open for iter_payments
            opened = Opened(response.status_code, response.headers)
            pieces = async_decoded(*async_raw_body(response))  # inflated as it arrives
            return AsyncStream(
                opened, pieces, response.aclose, lambda: self.is_closed, failure_from_httpx
            )
        return await read_answer(request, response, started, self._failure)

    async def _direct(
        self, routes: AsyncRoutes, request: Send, started: float
    ) -> Answer | Failure | AsyncStream:
        """The attempt sent to ``routes`` as httpcore's request, past httpx's client: its
        answer read as ``_attempt`` reads httpx's (``_async/answers.py``'s ``send_core``)."""
        failed = functools.partial(self._failure, sent=request)
        core = self._requests.core(self.http, request)
        return await send_core(routes, core, (request, started), failed, lambda: self.is_closed)

    def _failure(self, exc: Exception, sent: Send | None = None) -> Failure | None:
        """What ``exc`` stands for (raised sending or reading ``sent`` through httpcore, if
        given); ``None`` for a bug, which the caller re-raises."""
        if self.is_closed:
            raise closed_error("AsyncClient") from None
        return failure_from_httpx(exc) if sent is None else failure_from_httpcore(exc, sent)

    async def close(self) -> None:
        self._closed = True
        await self.binding.close(self.http.aclose)

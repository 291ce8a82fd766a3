"""The httpx transport of the clients paysdk makes (``AsyncPoolTransport``), over pools of
paysdk's own (``AsyncRoutes``), on httpx's and httpcore's public names alone."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterable, AsyncIterator
from typing import Any, TypedDict

import httpcore
import httpx
from typing_extensions import Unpack

from .. import httpx_tracing
from ..forks import PerProcess
from ..httpcore_edge import (
    AsyncBodyStream,
    check_unmocked,
    core_request,
    extensions_of,
    httpx_error,
)
from ..httpx_common import LIMITS, MAX_CONNECTIONS
from ..network import Network, Proxy
from .connections import AsyncConnectionMaker, AsyncConnections, AsyncDirectMaker

__all__ = ["AsyncPoolTransport", "AsyncRoutes"]


class AsyncRouteOptions(TypedDict, total=False):
    """How the pools connect: ``network_backend`` opens sockets (``None``: httpcore's own),
    ``direct_backend`` in its place without a proxy, and ``direct_connections`` makes those
    requests' connections from httpcore's pool for them (``None``: httpcore's connections)."""

    network_backend: httpcore.AsyncNetworkBackend | None
    direct_backend: httpcore.AsyncNetworkBackend | None
    direct_connections: AsyncDirectMaker | None


class AsyncPools:
    """One process's pools, each opened on first use: by proxy (or none), and apart for
    plain-HTTP routes, which need no TLS context."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.by_route: dict[tuple[Proxy | None, bool], AsyncConnections] = {}


class AsyncRoutes:
    """What the transport sends through, in httpcore's terms: each request goes to this
    process's pool for its route."""

    def __init__(self, network: Network, **options: Unpack[AsyncRouteOptions]) -> None:
        self.network = network
        self._backend = options.get("network_backend")
        self._direct_backend = options.get("direct_backend") or self._backend
        self._direct_connections = options.get("direct_connections")
        self._pools = PerProcess(AsyncPools)

    def _route(self, url: httpcore.URL) -> AsyncConnections:
        pools = self._pools.get()
        scheme, host = url.scheme.decode("ascii"), url.host.decode("ascii")
        proxy = self.network.proxy_for(scheme, host, url.port)
        if proxy is not None:
            check_unmocked(f"{scheme}://{host}", proxy.named)
        tls = url.scheme == b"https" or (proxy is not None and proxy.url.startswith("https:"))
        pool = pools.by_route.get((proxy, tls))
        if pool is None:
            with pools.lock:
                pool = pools.by_route.get((proxy, tls))
                if pool is None:
                    pool = pools.by_route[proxy, tls] = self._open(proxy, tls)
        return pool

    def _open(self, proxy: Proxy | None, tls: bool) -> AsyncConnections:
        """A route's pool over httpcore's pool (or ``direct_connections``'s maker) or proxy.
        Every idle connection is kept until its keep-alive expires: keeping fewer (httpx keeps
        20 of 100) would close, and reopen, those past them whenever a burst of calls ends."""
        context = self.network.ssl_context if tls else None
        options: dict[str, Any] = {
            "keepalive_expiry": LIMITS.keepalive_expiry,
            "network_backend": self._backend,
        }
        factory: AsyncConnectionMaker
        if proxy is None:
            options["network_backend"] = backend = self._direct_backend
            factory = pool = httpcore.AsyncConnectionPool(ssl_context=context, **options)
            if self._direct_connections is not None:
                factory = self._direct_connections(pool, backend, context, LIMITS.keepalive_expiry)
        else:
            factory = httpcore.AsyncHTTPProxy(
                proxy_url=proxy.url,
                proxy_auth=proxy.credentials,
                ssl_context=context,  # the service's certificate, checked end to end in the tunnel
                proxy_ssl_context=context if proxy.url.startswith("https:") else None,
                **options,
            )
        return AsyncConnections(factory, max_connections=MAX_CONNECTIONS, max_idle=MAX_CONNECTIONS)

    async def handle_async_request(self, request: httpcore.Request) -> httpcore.Response:
        return await self._route(request.url).handle_async_request(request)

    async def aclose(self) -> None:
        pools = self._pools.reset()
        for pool in pools.by_route.values() if pools is not None else ():
            await pool.aclose()


class AsyncRoutesTransport(httpx.AsyncBaseTransport):
    """httpx's request sent as httpcore's through ``AsyncRoutes``; the answer, and httpcore's
    failures, handed back as httpx's, as httpx's own transport does."""

    def __init__(self, routes: AsyncRoutes) -> None:
        self.routes = routes

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        content = request.stream
        assert isinstance(content, AsyncBodyStream), "an httpx.AsyncClient's request"
        try:
            response = await self.routes.handle_async_request(core_request(request, content))
        except Exception as exc:
            if (mapped := httpx_error(exc, request)) is None:
                raise
            raise mapped from mapped.__cause__  # exc, unless its words quote the key
        body = response.stream
        assert isinstance(body, AsyncIterable)
        extensions = extensions_of(response)
        # The server's reason phrase is its own text, which httpx's log line of each request
        # shows as it is (an echoed key, terminal escapes): the status's standard phrase instead.
        extensions["reason_phrase"] = httpx.codes.get_reason_phrase(response.status).encode()
        return httpx.Response(
            status_code=response.status,
            headers=response.headers,
            stream=AsyncResponseBody(body, request),
            extensions=extensions,
        )

    async def aclose(self) -> None:
        await self.routes.aclose()


class AsyncResponseBody(AsyncBodyStream):
    """An httpx response's body, read from httpcore's: its failures raised as httpx's, and
    closing it closes httpcore's (which gives the connection back to its pool)."""

    def __init__(self, body: AsyncIterable[bytes], request: httpx.Request) -> None:
        self._body = body
        self._request = request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._body:
                yield chunk
        except Exception as exc:
            if (mapped := httpx_error(exc, self._request)) is None:
                raise
            raise mapped from mapped.__cause__  # exc, unless its words quote the key

    async def aclose(self) -> None:
        aclose = getattr(self._body, "aclose", None)
        if aclose is not None:
            await aclose()


class AsyncPoolTransport(httpx.AsyncBaseTransport):
    """The transport of the httpx clients paysdk makes: it sends through
    ``AsyncRoutesTransport``, inside OpenTelemetry's tracing transport while its httpx
    instrumentation is on (``httpx_tracing.py``)."""

    def __init__(self, network: Network, **options: Unpack[AsyncRouteOptions]) -> None:
        """
        Args:
            network: the TLS context and the proxy (or the environment's) to use.
            **options: how its pools connect (``AsyncRouteOptions``).
        """
        self.routes = AsyncRoutes(network, **options)
        self._untraced = AsyncRoutesTransport(self.routes)
        self._traced: httpx.AsyncBaseTransport | None = None  # made when first traced

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        instrumentation = httpx_tracing.instrumentation()
        if instrumentation is None:
            return await self._untraced.handle_async_request(request)
        traced = self._traced
        if traced is None:  # a race makes two, each whole; one is kept
            traced = self._traced = httpx_tracing.async_traced(self._untraced, instrumentation)
        return await traced.handle_async_request(request)

    async def aclose(self) -> None:
        await self.routes.aclose()

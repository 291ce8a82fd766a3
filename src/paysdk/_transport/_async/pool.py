"""The httpx transport of the clients paysdk makes, on httpcore's public connection pools.

httpx's own transport offers no way to give its pool a network backend, and none to route each
request through a proxy paysdk chose; this one is built from the public parts instead:
``httpcore.AsyncConnectionPool`` and ``httpcore.AsyncHTTPProxy`` with paysdk's TLS context, its
network backend (the sync twin's bounds every socket operation by the attempt's deadline), and
pools that belong to one process (:mod:`paysdk._transport.forks`).
"""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from typing import Any

import httpcore
import httpx

from ..forks import PerProcess
from ..httpx_common import HTTPCORE_ERRORS, LIMITS, as_httpx_error
from ..network import Network, Proxy

__all__ = ["AsyncPoolTransport"]


class AsyncPools:
    """One process's pools: one direct, one per proxy, each opened on first use."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.by_proxy: dict[Proxy | None, httpcore.AsyncConnectionPool] = {}


class AsyncPoolTransport(httpx.AsyncBaseTransport):
    """Sends each request through the pool its route needs: direct, or by a proxy."""

    def __init__(
        self, network: Network, *, network_backend: httpcore.AsyncNetworkBackend | None = None
    ) -> None:
        """
        Args:
            network: the TLS context and the proxy (or the environment's) to use.
            network_backend: what opens sockets; ``None`` for httpcore's own.
        """
        self._network = network
        self._backend = network_backend
        self._pools = PerProcess(AsyncPools)

    def _pool(self, url: httpx.URL) -> httpcore.AsyncConnectionPool:
        pools = self._pools.get()
        proxy = self._network.proxy_for(url.scheme, url.host)
        pool = pools.by_proxy.get(proxy)
        if pool is None:
            with pools.lock:
                pool = pools.by_proxy.get(proxy)
                if pool is None:
                    pool = pools.by_proxy[proxy] = self._open(proxy)
        return pool

    def _open(self, proxy: Proxy | None) -> httpcore.AsyncConnectionPool:
        context = self._network.ssl_context
        limits: dict[str, Any] = {
            "max_connections": LIMITS.max_connections,
            "max_keepalive_connections": LIMITS.max_keepalive_connections,
            "keepalive_expiry": LIMITS.keepalive_expiry,
            "network_backend": self._backend,
        }
        if proxy is None:
            return httpcore.AsyncConnectionPool(ssl_context=context, **limits)
        return httpcore.AsyncHTTPProxy(
            proxy_url=proxy.url,
            proxy_auth=proxy.auth,
            ssl_context=context,  # the service's certificate, checked end to end in the tunnel
            proxy_ssl_context=context if proxy.url.startswith("https:") else None,
            **limits,
        )

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        sent = httpcore.Request(
            method=request.method,
            url=httpcore.URL(
                scheme=url.raw_scheme, host=url.raw_host, port=url.port, target=url.raw_path
            ),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        try:
            answer = await self._pool(url).handle_async_request(sent)
        except HTTPCORE_ERRORS as exc:
            raise as_httpx_error(exc, request) from exc
        extensions: dict[str, Any] = dict(answer.extensions)  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
        return httpx.Response(
            status_code=answer.status,
            headers=answer.headers,
            stream=AsyncAnswerBody(answer.stream, request),
            extensions=extensions,
        )

    async def aclose(self) -> None:
        pools = self._pools.reset()
        for pool in pools.by_proxy.values() if pools is not None else ():
            await pool.aclose()


class AsyncAnswerBody(httpx.AsyncByteStream):
    """An answer's body as httpx reads it, with httpcore's failures in httpx's words."""

    def __init__(self, stream: Any, request: httpx.Request) -> None:
        self._stream = stream
        self._request = request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for part in self._stream:
                yield part
        except HTTPCORE_ERRORS as exc:
            raise as_httpx_error(exc, self._request) from exc

    async def aclose(self) -> None:
        await self._stream.aclose()

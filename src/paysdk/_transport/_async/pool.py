"""The httpx transport of the clients paysdk makes: httpx's own, sending through connection pools
of paysdk's own.

``AsyncPoolTransport`` is an ``httpx.AsyncHTTPTransport``, so whatever wraps httpx's transports
(OpenTelemetry's httpx instrumentation, say) sees paysdk's requests too, and httpx turns
httpcore's failures into its own exceptions as ever. What it sends through is an
``AsyncRoutes``: for each request, this process's pool for its route (direct, or by a proxy),
an ``AsyncConnections`` (``connections.py``) of httpcore's connections, made with paysdk's TLS
context and network backend (the sync twin's bounds every socket operation by the attempt's
deadline).
"""

from __future__ import annotations

import inspect
import threading
from types import TracebackType
from typing import Any

import httpcore
import httpx

from ..._errors import ConfigurationError
from ..forks import PerProcess
from ..httpx_common import LIMITS, MAX_CONNECTIONS
from ..network import Network, Proxy
from .connections import AsyncConnections

__all__ = ["AsyncPoolTransport", "AsyncRoutes"]


class AsyncPools:
    """One process's pools, each opened on first use: by proxy (or none), and apart for
    plain-HTTP routes, which need no TLS context."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.by_route: dict[tuple[Proxy | None, bool], AsyncConnections] = {}


class AsyncRoutes:
    """What the transport sends through, in httpcore's terms: each request goes to this
    process's pool for its route."""

    def __init__(
        self, network: Network, network_backend: httpcore.AsyncNetworkBackend | None = None
    ) -> None:
        self._network = network
        self._backend = network_backend
        self._pools = PerProcess(AsyncPools)

    def _pool(self, url: httpcore.URL) -> AsyncConnections:
        pools = self._pools.get()
        proxy = self._network.proxy_for(url.scheme.decode("ascii"), url.host.decode("ascii"))
        tls = url.scheme == b"https" or (proxy is not None and proxy.url.startswith("https:"))
        pool = pools.by_route.get((proxy, tls))
        if pool is None:
            with pools.lock:
                pool = pools.by_route.get((proxy, tls))
                if pool is None:
                    pool = pools.by_route[proxy, tls] = self._open(proxy, tls)
        return pool

    def _open(self, proxy: Proxy | None, tls: bool) -> AsyncConnections:
        """A pool for a route. Every idle connection is kept (until httpx's keep-alive expiry):
        keeping fewer than may be open at once (httpx keeps 20 of 100) would close, and open
        again, every connection past them whenever a burst of calls ends together."""
        return AsyncConnections(
            self._factory(proxy, tls),
            max_connections=MAX_CONNECTIONS,
            max_idle=MAX_CONNECTIONS,
        )

    def _factory(self, proxy: Proxy | None, tls: bool) -> httpcore.AsyncConnectionPool:
        """httpcore's pool for a route, used only to make its connections (with
        ``create_connection``): direct ones, or tunnels and forwarding through the proxy."""
        context = self._network.ssl_context if tls else None
        options: dict[str, Any] = {
            "keepalive_expiry": LIMITS.keepalive_expiry,
            "network_backend": self._backend,
        }
        if proxy is None:
            return httpcore.AsyncConnectionPool(ssl_context=context, **options)
        return httpcore.AsyncHTTPProxy(
            proxy_url=proxy.url,
            proxy_auth=proxy.auth,
            ssl_context=context,  # the service's certificate, checked end to end in the tunnel
            proxy_ssl_context=context if proxy.url.startswith("https:") else None,
            **options,
        )

    async def handle_async_request(self, request: httpcore.Request) -> httpcore.Response:
        return await self._pool(request.url).handle_async_request(request)

    async def aclose(self) -> None:
        pools = self._pools.reset()
        for pool in pools.by_route.values() if pools is not None else ():
            await pool.aclose()

    async def __aenter__(self) -> AsyncRoutes:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None = None,
        exc_value: BaseException | None = None,
        traceback: TracebackType | None = None,
    ) -> None:
        await self.aclose()


class AsyncPoolTransport(httpx.AsyncHTTPTransport):
    """httpx's transport, sending through ``AsyncRoutes`` instead of a pool of its own."""

    def __init__(
        self, network: Network, *, network_backend: httpcore.AsyncNetworkBackend | None = None
    ) -> None:
        """httpx's ``__init__`` is not called: it would open a pool (and a TLS context) that
        nothing uses.

        Args:
            network: the TLS context and the proxy (or the environment's) to use.
            network_backend: what opens sockets; ``None`` for httpcore's own.
        """
        check_sends_through_pool(httpx.AsyncHTTPTransport.handle_async_request)
        self._pool = AsyncRoutes(network, network_backend)  # type: ignore[assignment]


def check_sends_through_pool(method: object) -> None:
    """Refuse, when a client is made, an httpx whose transport no longer sends through its
    ``_pool``: paysdk's routes, proxies and deadline-bound sockets would be passed by."""
    code = getattr(inspect.unwrap(method), "__code__", None)  # type: ignore[arg-type]
    if code is None or "_pool" not in code.co_names:
        raise ConfigurationError(
            f"httpx {httpx.__version__}'s transport does not send through its connection pool "
            "as paysdk expects; install an httpx paysdk supports: pip install python-paysdk"
        )

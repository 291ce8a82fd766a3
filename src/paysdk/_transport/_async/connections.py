"""A route's connections, pooled by paysdk, each used by one request at a time.

httpcore's pool or proxy (or ``async_direct.py``) only makes them: its pool scans every
connection per request and close, may hand one idle connection to several waiters, and asks
sniffio which library runs per event and shield. Here a request checks only its origin's
connection last given back, and a check-in expires that origin's oldest idle one: no more are
open than requests ran at once."""

from __future__ import annotations

import ssl
import threading
from collections import deque
from collections.abc import AsyncIterable, AsyncIterator, Mapping
from typing import Protocol

import httpcore

from .. import httpcore_edge
from ..async_slots import AsyncSlots, async_shielded

__all__ = ["AsyncConnectionMaker", "AsyncConnections", "AsyncDirectMaker"]

Origin = tuple[bytes, bytes, int]
"""A connection's scheme, host and port: which requests it may carry."""


class AsyncConnectionMaker(Protocol):
    """What makes a route's connections: httpcore's pools and proxies, or ``async_direct.py``'s."""

    def create_connection(self, origin: httpcore.Origin) -> httpcore.AsyncConnectionInterface: ...


class AsyncDirectMaker(Protocol):
    """What makes the connection maker of a route without a proxy in place of httpcore's pool
    for it, from that pool, the backend, the TLS context and the keep-alive expiry."""

    def __call__(
        self,
        pool: httpcore.AsyncConnectionPool,
        backend: httpcore.AsyncNetworkBackend | None,
        ssl_context: ssl.SSLContext | None,
        keepalive_expiry: float | None,
        /,
    ) -> AsyncConnectionMaker: ...


class AsyncConnections:
    """One route's connections: each request on a connection of its own, at most
    ``max_connections`` at once, the rest waiting up to the pool timeout; idle ones kept for
    the next request, newest first, up to ``max_idle``."""

    def __init__(self, factory: AsyncConnectionMaker, max_connections: int, max_idle: int) -> None:
        """
        Args:
            factory: what makes a connection for an origin (its ``create_connection``); it
                sends nothing itself.
            max_connections: the most connections open at once.
            max_idle: the most connections kept open while no request uses them.
        """
        self._factory = factory
        self._max_connections = max_connections
        self._max_idle = min(max_idle, max_connections)
        self._slots = AsyncSlots(max_connections)
        self._lock = threading.Lock()  # never held across an await
        self._idle: dict[Origin, deque[httpcore.AsyncConnectionInterface]] = {}
        self._idle_count = 0
        self._busy: set[httpcore.AsyncConnectionInterface] = set()
        self._closed = False
        self.opened = 0
        """Connections made so far: what the tests count."""

    @property
    def connections(self) -> int:
        """Connections open now, busy or idle."""
        return len(self._busy) + self._idle_count

    async def handle_async_request(self, request: httpcore.Request) -> httpcore.Response:
        url = request.url
        origin = (url.scheme, url.host, url.port or (443 if url.scheme == b"https" else 80))
        extensions = httpcore_edge.extensions_of(request)
        timeouts: Mapping[str, float | None] = extensions.get("timeout", {})
        await self._slots.acquire(timeouts.get("pool"))
        try:
            while True:
                connection, closing = self._checkout(origin, url.origin)
                if closing:  # mostly nothing: then no shielded scope is set up
                    await self._close(closing)
                try:
                    response = await connection.handle_async_request(request)
                except BaseException as exc:
                    await self._drop(connection)
                    if isinstance(exc, httpcore.ConnectionNotAvailable):
                        continue  # taken by another meanwhile: try the next
                    raise
                break
        except BaseException:
            self._slots.release()
            raise
        stream = response.stream
        assert isinstance(stream, AsyncIterable)
        return httpcore.Response(
            status=response.status,
            headers=response.headers,
            content=AsyncPooledStream(stream, self, connection, origin),
            extensions=httpcore_edge.extensions_of(response),
        )

    def _checkout(
        self, origin: Origin, url_origin: httpcore.Origin
    ) -> tuple[httpcore.AsyncConnectionInterface, list[httpcore.AsyncConnectionInterface]]:
        """A connection for ``origin`` (the last given back, or a new one) and those to close: the
        expired idle ones met on the way, or one idle connection of another origin to make room."""
        closing: list[httpcore.AsyncConnectionInterface] = []
        with self._lock:
            while origin in self._idle:
                connection = self._take(origin, newest=True)
                if connection.is_available() and not connection.has_expired():
                    self._busy.add(connection)
                    return connection, closing
                closing.append(connection)
            if self.connections >= self._max_connections and self._idle:
                other = next(iter(self._idle))  # another origin's: this one has none idle
                closing.append(self._take(other))
            connection = self._factory.create_connection(url_origin)
            self.opened += 1
            self._busy.add(connection)
            return connection, closing

    def _take(self, origin: Origin, newest: bool = False) -> httpcore.AsyncConnectionInterface:
        """One of ``origin``'s idle connections, taken off its queue: its oldest, or newest."""
        idle = self._idle[origin]
        connection = idle.pop() if newest else idle.popleft()
        self._idle_count -= 1
        if not idle:
            del self._idle[origin]
        return connection

    async def checkin(self, connection: httpcore.AsyncConnectionInterface, origin: Origin) -> None:
        """Take back the connection of a response closed: kept if it can carry another
        request and there is room; its origin's oldest idle connection is closed if expired."""
        closing: list[httpcore.AsyncConnectionInterface] = []
        with self._lock:
            self._busy.discard(connection)
            # a pool closed while the connection connected: nothing would close it later
            if not self._closed and connection.is_idle() and not connection.is_closed():
                self._idle.setdefault(origin, deque()).append(connection)
                self._idle_count += 1
                oldest = self._idle[origin][0]
                if self._idle_count > self._max_idle or (
                    oldest is not connection and oldest.has_expired()
                ):
                    closing.append(self._take(origin))
            elif not connection.is_closed():
                closing.append(connection)
        self._slots.release()
        if closing:
            await self._close(closing)

    async def _drop(self, connection: httpcore.AsyncConnectionInterface) -> None:
        with self._lock:
            self._busy.discard(connection)
        await self._close([connection])

    async def _close(self, closing: list[httpcore.AsyncConnectionInterface]) -> None:
        with async_shielded():
            for connection in closing:
                await connection.aclose()

    async def aclose(self) -> None:
        """Close every connection, busy or idle."""
        with self._lock:
            self._closed = True
            closing = [*self._busy, *(idle for queue in self._idle.values() for idle in queue)]
            self._busy.clear()
            self._idle.clear()
            self._idle_count = 0
        await self._close(closing)


class AsyncPooledStream:
    """A response's body: when it is closed, its connection goes back to its pool."""

    def __init__(
        self,
        stream: AsyncIterable[bytes],
        pool: AsyncConnections,
        connection: httpcore.AsyncConnectionInterface,
        origin: Origin,
    ) -> None:
        self._stream = stream
        self._owner = pool
        self._connection = connection
        self._origin = origin
        self._closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._stream:
                yield chunk
        except BaseException:
            await self.aclose()
            raise

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            with async_shielded():
                aclose = getattr(self._stream, "aclose", None)
                if aclose is not None:
                    await aclose()
        finally:
            await self._owner.checkin(self._connection, self._origin)

"""The async client's connections on a route without a proxy: HTTP/1.1 on h11, without a lock.

httpcore's connection takes three anyio locks per request, each yielding the loop to every ready
task even uncontended (50 answers at once: each 50 ms round ~2 ms slower than aiohttp's). paysdk's
pool (``connections.py``) gives a connection to one request at a time, so this one speaks HTTP/1.1
as httpcore's does (exceptions, keep-alive, expiry), yielding only for the network. While respx
replaces httpcore's send (``MockPaymentAPI``), httpcore's connections are made instead; the sync
client keeps httpcore's (threading locks never yield)."""

from __future__ import annotations

import contextlib
import ssl
import time
from collections.abc import AsyncIterable, AsyncIterator
from typing import cast

import h11
import httpcore

from . import async_slots
from .httpcore_edge import HTTPCORE_FILES, extensions_of

__all__ = ["AsyncDirectConnection", "AsyncDirectConnections"]

READ_BYTES = 64 * 1024
"""Bytes asked of the stream at a time (httpcore's figure)."""
MAX_INCOMPLETE_EVENT = 100 * 1024
"""The most bytes of a response's head h11 holds before refusing it (httpcore's figure)."""

_NEW, _ACTIVE, _IDLE, _CLOSED = "NEW", "ACTIVE", "IDLE", "CLOSED"


def httpcore_replaced() -> bool:
    """Whether something replaced httpcore's own connection's send (respx, while started): its
    code is not httpcore's, however it is named (a wrapper may copy the name)."""
    code = getattr(httpcore.AsyncHTTPConnection.handle_async_request, "__code__", None)
    return code is None or code.co_filename not in HTTPCORE_FILES


class AsyncDirectConnections:
    """What makes a direct route's connections: paysdk's own, or httpcore's while its
    connection's send is replaced."""

    def __init__(
        self,
        replaced: httpcore.AsyncConnectionPool,
        backend: httpcore.AsyncNetworkBackend | None,
        ssl_context: ssl.SSLContext | None,
        keepalive_expiry: float | None,
    ) -> None:
        """
        Args:
            replaced: httpcore's pool for the route, which makes its connections while their
                send is replaced.
            backend: what opens the sockets; ``None`` for httpcore's own (on anyio, which runs
                under asyncio and trio alike).
            ssl_context: the TLS context of ``https`` origins; ``None`` if the route has none.
            keepalive_expiry: seconds an idle connection is kept, as httpcore's option.
        """
        self._replaced = replaced
        # httpcore's stand-in class for a missing anyio is no backend to a type checker
        self._backend = backend or cast(httpcore.AsyncNetworkBackend, httpcore.AnyIOBackend())
        self._ssl_context = ssl_context
        self._keepalive_expiry = keepalive_expiry

    def create_connection(self, origin: httpcore.Origin) -> httpcore.AsyncConnectionInterface:
        if httpcore_replaced():
            return self._replaced.create_connection(origin)
        expiry = self._keepalive_expiry
        return AsyncDirectConnection(origin, self._backend, self._ssl_context, expiry)


class AsyncDirectConnection(httpcore.AsyncConnectionInterface):
    """One HTTP/1.1 connection, opened by its first request, carrying one request at a time."""

    def __init__(
        self,
        origin: httpcore.Origin,
        backend: httpcore.AsyncNetworkBackend,
        ssl_context: ssl.SSLContext | None,
        keepalive_expiry: float | None,
    ) -> None:
        self._origin = origin
        self._backend = backend
        self._ssl_context = ssl_context
        self._keepalive_expiry = keepalive_expiry
        self._stream: httpcore.AsyncNetworkStream | None = None
        self._h11 = h11.Connection(h11.CLIENT, max_incomplete_event_size=MAX_INCOMPLETE_EVENT)
        self._state = _NEW
        self._expire_at: float | None = None
        self._requests = 0

    async def handle_async_request(self, request: httpcore.Request) -> httpcore.Response:
        if not self.can_handle_request(request.url.origin):
            raise RuntimeError(
                f"Attempted to send request to {request.url.origin} on connection to {self._origin}"
            )
        if self._state not in (_NEW, _IDLE):
            raise httpcore.ConnectionNotAvailable()
        self._state = _ACTIVE
        self._expire_at = None
        self._requests += 1
        timeouts: dict[str, float | None] = extensions_of(request).get("timeout", {})
        try:
            stream = self._stream
            if stream is None:
                stream = self._stream = await self._connect(request, timeouts.get("connect"))
            # a server may answer, then close, before it has taken the whole request
            with contextlib.suppress(httpcore.WriteError):
                await self._send_request(stream, request, timeouts.get("write"))
            read = timeouts.get("read")
            head = await self._receive_head(stream, read)
        except BaseException:
            with async_slots.async_shielded():
                await self.response_closed()
            raise
        return httpcore.Response(
            status=head.status_code,
            headers=head.headers.raw_items(),
            content=AsyncDirectBody(self, stream, read),
            extensions={
                "http_version": b"HTTP/" + head.http_version,
                "reason_phrase": head.reason,
                "network_stream": stream,
            },
        )

    async def _connect(
        self, request: httpcore.Request, seconds: float | None
    ) -> httpcore.AsyncNetworkStream:
        host = self._origin.host.decode("ascii")
        stream = await self._backend.connect_tcp(host, self._origin.port, timeout=seconds)
        if self._origin.scheme != b"https":
            return stream
        if self._ssl_context is None:
            await stream.aclose()
            raise RuntimeError("an https origin on a route made without a TLS context")
        server_name: str = extensions_of(request).get("sni_hostname") or host
        # on each connect, as httpcore does: the context may be shared with a client that
        # offers HTTP/2 on it, and a server that took that offer would not be understood
        self._ssl_context.set_alpn_protocols(["http/1.1"])
        try:
            return await stream.start_tls(self._ssl_context, server_name, seconds)
        except BaseException:
            # closed here too: httpcore's backends leave it open when the handshake is
            # cancelled, and the sync client's deadline refuses to start one past its time
            with async_slots.async_shielded():
                await stream.aclose()
            raise

    async def _send_request(
        self, stream: httpcore.AsyncNetworkStream, request: httpcore.Request, seconds: float | None
    ) -> None:
        try:
            head = h11.Request(
                method=request.method, target=request.url.target, headers=request.headers
            )
        except h11.LocalProtocolError as exc:
            raise httpcore.LocalProtocolError(exc) from exc
        await stream.write(self._bytes_of(head), seconds)
        body = request.stream
        assert isinstance(body, AsyncIterable)
        async for chunk in body:
            if chunk:
                await stream.write(self._bytes_of(h11.Data(data=chunk)), seconds)
        await stream.write(self._bytes_of(h11.EndOfMessage()), seconds)

    def _bytes_of(self, event: h11.Request | h11.Data | h11.EndOfMessage) -> bytes:
        """What goes on the wire for ``event``. What h11 refuses here (a body longer or shorter
        than its ``Content-Length``) is the caller's bug: raised as h11's, as httpcore does, not
        as an httpcore error, which would read as a network failure."""
        return self._h11.send(event) or b""

    async def _receive_head(
        self, stream: httpcore.AsyncNetworkStream, seconds: float | None
    ) -> h11.Response | h11.InformationalResponse:
        while True:
            event = await self.receive_event(stream, seconds)
            if isinstance(event, h11.Response):
                return event
            if isinstance(event, h11.InformationalResponse) and event.status_code == 101:
                return event  # the protocol switched: h11 reads nothing more of it

    async def receive_event(
        self, stream: httpcore.AsyncNetworkStream, seconds: float | None
    ) -> h11.Event | type[h11.PAUSED]:
        """h11's next event, reading from ``stream`` while it needs data.

        Raises:
            httpcore.RemoteProtocolError: what arrived is not HTTP/1.1, or the server closed
                the connection before its answer.
        """
        connection = self._h11
        while True:
            try:
                event = connection.next_event()
            except h11.RemoteProtocolError as exc:
                raise httpcore.RemoteProtocolError(exc) from exc
            if event is not h11.NEED_DATA:
                return event  # type: ignore[return-value]  # h11 types its sentinels apart
            data = await stream.read(READ_BYTES, seconds)
            if data == b"" and connection.their_state == h11.SEND_RESPONSE:
                raise httpcore.RemoteProtocolError(
                    "Server disconnected without sending a response."
                )
            connection.receive_data(data)

    async def response_closed(self) -> None:
        """After a response: ready for the next if both sides finished this one and the server
        sent nothing past it (the next request would read it as its answer); else closed, as
        one closed meanwhile (while connecting it had no socket: the one it opened is closed)."""
        connection = self._h11
        if (
            self._state == _ACTIVE
            and connection.our_state is h11.DONE
            and connection.their_state is h11.DONE
            and connection.trailing_data == (b"", False)
        ):
            connection.start_next_cycle()
            self._state = _IDLE
            if self._keepalive_expiry is not None:
                self._expire_at = time.monotonic() + self._keepalive_expiry
        else:
            await self.aclose()

    async def aclose(self) -> None:
        self._state = _CLOSED
        if self._stream is not None:
            await self._stream.aclose()

    def can_handle_request(self, origin: httpcore.Origin) -> bool:
        return origin == self._origin

    def is_available(self) -> bool:
        return self._state == _IDLE and not httpcore_replaced()

    def has_expired(self) -> bool:
        if self._expire_at is not None and time.monotonic() > self._expire_at:
            return True
        # an idle connection the server wrote to, or closed, can carry no other request
        stream = self._stream
        return self._state == _IDLE and stream is not None and stream.get_extra_info("is_readable")

    def is_idle(self) -> bool:
        return self._state == _IDLE

    def is_closed(self) -> bool:
        return self._state == _CLOSED

    def info(self) -> str:
        return f"{str(self._origin)!r}, HTTP/1.1, {self._state}, Request Count: {self._requests}"

    def __repr__(self) -> str:
        return f"<{type(self).__name__} [{self.info()}]>"


class AsyncDirectBody:
    """A response's body, read from its connection; closing it readies the connection for the
    next request, or closes it."""

    def __init__(
        self,
        connection: AsyncDirectConnection,
        stream: httpcore.AsyncNetworkStream,
        seconds: float | None,
    ) -> None:
        self._connection = connection
        self._stream = stream
        self._seconds = seconds
        self._closed = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            while True:
                event = await self._connection.receive_event(self._stream, self._seconds)
                if isinstance(event, h11.Data):
                    yield bytes(event.data)
                elif isinstance(event, h11.EndOfMessage) or event is h11.PAUSED:
                    return
        except BaseException:
            with async_slots.async_shielded():
                await self.aclose()
            raise

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            await self._connection.response_closed()

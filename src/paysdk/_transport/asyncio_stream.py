"""An httpcore network stream on an asyncio transport: what ``AsyncioBackend`` connects. A small
``asyncio.Protocol`` holds what arrived (pausing the transport past a bound), TLS is asyncio's
(``loop.start_tls``), and failures are raised as httpcore's anyio backend raises them (timeouts
as ``ReadTimeout`` or ``WriteTimeout``, an ``OSError`` or TLS error as the ``ConnectError``,
``ReadError`` or ``WriteError`` it causes)."""

from __future__ import annotations

import asyncio
import contextlib
import math
import select
import ssl
import sys
from collections import deque
from typing import Any, Literal

import anyio
import httpcore

__all__ = ["AsyncioStream", "Protocol"]

_PAUSE_READING = 256 * 1024
"""Received bytes held unread past which the transport stops reading until they are read."""


class Protocol(asyncio.Protocol):
    """What a connection received, and whether it may write, for ``AsyncioStream``."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.transport: asyncio.Transport | None = None
        self.chunks: deque[bytes] = deque()
        self.offset = 0
        """Where the first chunk's unread bytes start."""
        self.buffered = 0
        self.reading_paused = False
        self.eof = False
        self.lost = False
        self.error: Exception | None = None
        self.tls = False
        self.writing_paused = False
        self.waiter: asyncio.Future[bool] | None = None
        """What a read waiting for data awaits."""
        self.drained: asyncio.Future[bool] | None = None
        """What a write waiting for the transport to take more awaits."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        transport.set_write_buffer_limits(0)  # a write returns once the kernel has it all

    def data_received(self, data: bytes) -> None:
        self.chunks.append(data)
        self.buffered += len(data)
        if self.buffered > _PAUSE_READING and not self.reading_paused and self.transport:
            self.reading_paused = True
            self.transport.pause_reading()
        _wake(self.waiter)

    def eof_received(self) -> bool | None:
        self.eof = True
        _wake(self.waiter)
        return None if self.tls else True  # a plain socket stays open for writing, as anyio's

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        self.error = exc
        _wake(self.waiter)
        self.resume_writing()

    def pause_writing(self) -> None:
        self.writing_paused = True

    def resume_writing(self) -> None:
        self.writing_paused = False
        _wake(self.drained)


def _wake(future: asyncio.Future[bool] | None, woken: bool = True) -> None:
    if future is not None and not future.done():
        future.set_result(woken)


async def _wait(
    protocol: Protocol,
    waiter: Literal["waiter", "drained"],
    seconds: float | None,
    error: type[httpcore.TimeoutException],
) -> None:
    """Wait until ``protocol`` wakes its future ``waiter``; ``error`` if ``seconds`` pass first
    (``None``: no bound), as httpcore's anyio backend raises it: made from, and caused by, a bare
    ``TimeoutError``. A timer on the loop, not a cancel scope: it runs for every read that waits."""
    future = protocol.loop.create_future()
    setattr(protocol, waiter, future)
    handle = None if seconds is None else protocol.loop.call_later(seconds, _wake, future, False)
    try:
        if not await future:
            cause = TimeoutError()
            raise error(cause) from cause
    finally:
        setattr(protocol, waiter, None)
        if handle is not None:
            handle.cancel()


def _resume_reading(transport: asyncio.Transport, protocol: Protocol) -> None:
    """Let the transport read again. Python 3.10's TLS transport drops its socket's transport
    as its connection is lost, and tells the protocol a loop turn later: meanwhile there is
    nothing to resume, and resuming raises ``AttributeError``."""
    try:
        transport.resume_reading()
    except AttributeError:
        if not (protocol.tls and sys.version_info < (3, 11)):
            raise


class AsyncioStream(httpcore.AsyncNetworkStream):
    """A connection on an asyncio transport, plain or TLS."""

    def __init__(
        self, transport: asyncio.Transport, protocol: Protocol, *, handshaken: bool = False
    ) -> None:
        self._socket_transport = transport
        self._protocol = protocol
        self._closed = False
        self._handshaken = handshaken
        """A TLS connection nothing was written on yet: the server is heard first (``write``)."""

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:  # noqa: ASYNC109
        protocol = self._protocol
        if protocol.chunks:
            # yield as a read that waited would (to other tasks, and a timeout): a server that
            # keeps the buffer full would otherwise hold the loop for as long as it sends
            await asyncio.sleep(0)
        while not protocol.chunks:
            if self._closed:
                raise httpcore.ReadError("the connection was closed")
            if protocol.error is not None:
                raise httpcore.ReadError(protocol.error) from protocol.error
            if protocol.eof or protocol.lost:
                return b""
            await _wait(protocol, "waiter", timeout, httpcore.ReadTimeout)
        chunk = protocol.chunks[0]
        start = protocol.offset
        end = start + max_bytes
        if end < len(chunk):  # the rest of it stays for the next read, uncopied
            protocol.offset = end
            chunk = chunk[start:end]
        else:
            protocol.chunks.popleft()
            protocol.offset = 0
            chunk = chunk[start:] if start else chunk
        protocol.buffered -= len(chunk)
        if protocol.reading_paused and protocol.buffered <= _PAUSE_READING // 2:
            protocol.reading_paused = False
            _resume_reading(self._socket_transport, protocol)
        return chunk

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:  # noqa: ASYNC109
        if not buffer:
            return
        protocol = self._protocol
        if self._handshaken:
            # a TLS 1.3 server refusing the handshake (a client certificate it requires) does so
            # after the client finished its side: it sends its alert and hangs up, and a write
            # would meet a broken pipe (asyncio closing the socket unread), not the alert. So the
            # TLS layer reads first: a turn to read, one to fail, one to tell (one poll if none).
            self._handshaken = False
            for _ in range(3):
                if protocol.lost or not self._raw_readable():
                    break
                await asyncio.sleep(0)
        self._check_writable()
        try:
            self._socket_transport.write(buffer)
        except RuntimeError as exc:  # a transport that takes no more writes, as anyio maps it
            raise httpcore.WriteError(exc) from exc
        if protocol.writing_paused:  # the kernel holds part of it: wait until it takes it all
            while protocol.writing_paused and not protocol.lost:
                await _wait(protocol, "drained", timeout, httpcore.WriteTimeout)
            self._check_writable()

    def _check_writable(self) -> None:
        if self._closed:
            raise httpcore.WriteError("the connection was closed")
        error = self._protocol.error
        if error is not None:
            raise httpcore.WriteError(error) from error
        if self._protocol.lost or self._socket_transport.is_closing():
            raise httpcore.WriteError("the connection was closed by the server")

    async def aclose(self) -> None:
        """Close the socket at once (no TLS goodbye awaited), as anyio's stream does."""
        if not self._closed:
            self._closed = True
            self._socket_transport.abort()

    def __del__(self) -> None:
        """Dropped open (its client was never closed): the loop reads the transport, so holds
        it, and its socket would stay open until the server hangs up. Aborted in the loop's
        thread: a garbage collection may run this in any thread."""
        if self._closed:
            return
        self._closed = True
        transport, loop = self._socket_transport, self._protocol.loop
        try:
            running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            transport.abort()
        elif not loop.is_closed():  # a closed loop's selector holds the transport no longer
            with contextlib.suppress(RuntimeError):  # closed meanwhile by another thread
                loop.call_soon_threadsafe(transport.abort)

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's signature
    ) -> httpcore.AsyncNetworkStream:
        """This connection upgraded to TLS by asyncio's TLS protocol; closed if that fails.

        Raises:
            httpcore.ConnectTimeout: the handshake took longer than ``timeout``.
            httpcore.ConnectError: it failed (the ``ssl.SSLError`` or ``OSError`` its cause).
        """
        protocol = self._protocol
        protocol.tls = True  # before the handshake ends: the server's goodbye may come with it
        try:
            with anyio.fail_after(timeout):
                transport = await protocol.loop.start_tls(
                    self._socket_transport,
                    protocol,
                    ssl_context,
                    server_hostname=server_hostname,
                    ssl_handshake_timeout=math.inf,  # ``timeout`` alone bounds it, not 60 s
                )
        except BaseException as exc:
            await self.aclose()
            if isinstance(exc, TimeoutError):  # first: a TimeoutError is an OSError
                raise httpcore.ConnectTimeout(exc) from exc
            if isinstance(exc, (OSError, ssl.SSLError)):
                raise httpcore.ConnectError(exc) from exc
            raise
        assert isinstance(transport, asyncio.Transport)
        self._closed = True  # the TLS stream carries the connection from now on
        protocol.transport = transport
        # asyncio's TLS transport pauses a protocol at ``size >= high`` (its plain one past
        # ``high``): 1, so it pauses only while bytes wait, and a write never waits for the answer
        transport.set_write_buffer_limits(1, 0)
        return AsyncioStream(transport, protocol, handshaken=True)

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable":  # first: an idle connection is asked before each request
            return self._is_readable()
        transport = self._socket_transport
        if info in ("ssl_object", "socket"):
            return transport.get_extra_info(info)
        if info == "client_addr":
            return transport.get_extra_info("sockname")
        if info == "server_addr":
            return transport.get_extra_info("peername")
        return None

    def _is_readable(self) -> bool:
        """Whether the server sent something, or closed, while nobody read: for an idle
        connection, that it cannot carry another request."""
        protocol = self._protocol
        if protocol.chunks or protocol.eof or protocol.lost or self._closed:
            return True
        return self._raw_readable()

    def _raw_readable(self) -> bool:
        """Whether the socket holds bytes (or a hang-up) asyncio has not read yet."""
        sock = self._socket_transport.get_extra_info("socket")
        if sock is None or sock.fileno() < 0:
            return True
        # what httpcore's own backends check, past what asyncio saw; Windows has no poll
        if not hasattr(select, "poll"):
            return bool(select.select([sock], [], [], 0)[0])
        poller = select.poll()
        poller.register(sock.fileno(), select.POLLIN)
        return bool(poller.poll(0))

"""An httpcore network backend on asyncio's own transports, for the ``AsyncClient``'s pools:
httpcore's anyio backend runs OpenSSL's memory buffers from Python, with awaits per read and
write (a sixth of a TLS verify's CPU). It connects with ``loop.create_connection`` (racing a
name's addresses), upgrades with ``loop.start_tls``, and raises what httpcore's anyio backend
raises; under trio, or on another loop (uvloop), httpcore's own backend connects."""

from __future__ import annotations

import asyncio
import ipaddress
import itertools
import socket
from collections.abc import Iterable
from typing import Any, cast

import anyio
import httpcore

from .async_streams import running_loop
from .asyncio_stream import AsyncioStream, Protocol
from .network import one_error

__all__ = ["AsyncioBackend", "HttpcoreBackend"]

SocketOption = (
    tuple[int, int, int] | tuple[int, int, bytes | bytearray] | tuple[int, int, None, int]
)
"""httpcore's ``SOCKET_OPTION`` (``setsockopt``'s arguments), which it does not export."""

OWN_LOOPS: tuple[type[asyncio.AbstractEventLoop], ...] = (asyncio.BaseEventLoop,)
"""The event loops the backend opens connections on itself: asyncio's own (selector and
proactor), whose transports it was written against."""


class HttpcoreBackend(httpcore.AsyncNetworkBackend):
    """httpcore's own backend for the library running the caller, as its pools choose one, made
    on first use: trio's outside asyncio (httpcore's pools run under asyncio and trio only),
    anyio's on an asyncio loop. Each stream it opens is handed on through ``_wrap``."""

    def __init__(self) -> None:
        self._trio: httpcore.AsyncNetworkBackend | None = None
        self._anyio: httpcore.AsyncNetworkBackend | None = None

    def _backend(self) -> httpcore.AsyncNetworkBackend:
        # httpcore's stand-in classes (for a missing trio or anyio) are no backends to a type
        # checker, so each is named as the interface it implements
        if running_loop() is None:
            self._trio = self._trio or cast(httpcore.AsyncNetworkBackend, httpcore.TrioBackend())
            return self._trio
        self._anyio = self._anyio or cast(httpcore.AsyncNetworkBackend, httpcore.AnyIOBackend())
        return self._anyio

    def _wrap(self, stream: httpcore.AsyncNetworkStream) -> httpcore.AsyncNetworkStream:
        return stream

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's signature
        local_address: str | None = None,
        socket_options: Iterable[SocketOption] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        backend = self._backend()
        return self._wrap(
            await backend.connect_tcp(host, port, timeout, local_address, socket_options)
        )

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's signature
        socket_options: Iterable[SocketOption] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        return self._wrap(await self._backend().connect_unix_socket(path, timeout, socket_options))

    async def sleep(self, seconds: float) -> None:
        await self._backend().sleep(seconds)


class AsyncioBackend(HttpcoreBackend):
    """Opens httpcore's connections on asyncio's transports while one of asyncio's own event
    loops runs the caller; otherwise hands each call to the fallback."""

    def __init__(self, fallback: httpcore.AsyncNetworkBackend | None = None) -> None:
        """
        Args:
            fallback: the backend on any other loop; ``None`` for httpcore's own for it (on
                another asyncio loop, uvloop's, whose transports this backend was not written
                against, its anyio backend).
        """
        super().__init__()
        self._fallback = fallback

    def _backend(self) -> httpcore.AsyncNetworkBackend:
        return self._fallback or super()._backend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's signature
        local_address: str | None = None,
        socket_options: Iterable[SocketOption] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        loop = running_loop()
        if not isinstance(loop, OWN_LOOPS):
            return await super().connect_tcp(host, port, timeout, local_address, socket_options)
        local = (local_address, 0) if local_address is not None else None
        try:
            ipaddress.ip_address(host)
        except ValueError:  # a name, whose addresses are raced
            opening = _race(loop, host, port, local)
        else:
            opening = loop.create_connection(lambda: Protocol(loop), host, port, local_addr=local)
        return await _connect(opening, timeout, socket_options)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's signature
        socket_options: Iterable[SocketOption] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        loop = running_loop()
        if not isinstance(loop, OWN_LOOPS):
            return await super().connect_unix_socket(path, timeout, socket_options)
        opening = loop.create_unix_connection(lambda: Protocol(loop), path)
        return await _connect(opening, timeout, socket_options)

    async def sleep(self, seconds: float) -> None:
        if isinstance(running_loop(), OWN_LOOPS):
            await asyncio.sleep(seconds)
        else:
            await super().sleep(seconds)


_RACE_DELAY = 0.25
"""Seconds each of a name's addresses is given before the next is tried too (anyio's delay),
so one that never answers is passed over."""


async def _race(
    loop: asyncio.AbstractEventLoop, host: str, port: int, local: tuple[str, int] | None
) -> tuple[asyncio.Transport, Protocol]:
    """The first connection made to one of ``host``'s addresses, raced as anyio races them,
    closing every other one made (asyncio's ``happy_eyeballs_delay`` leaves one made as its
    caller is cancelled unclosed).

    Raises:
        OSError: the name did not resolve, or no address took the connection.
    """
    infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    by_family: dict[int, list[str]] = {}
    for family, _, _, _, sockaddr in infos:
        by_family.setdefault(family, []).append(str(sockaddr[0]))
    # the families alternate, the resolver's first one first
    addresses = [a for row in itertools.zip_longest(*by_family.values()) for a in row if a]
    made: list[tuple[asyncio.Transport, Protocol]] = []
    errors: list[OSError] = []

    async def attempt(address: str, done: anyio.Event) -> None:
        try:
            made.append(
                await loop.create_connection(
                    lambda: Protocol(loop), address, port, local_addr=local
                )
            )
            group.cancel_scope.cancel()
        except OSError as exc:
            errors.append(exc)
        finally:
            done.set()

    try:
        async with anyio.create_task_group() as group:
            for address in addresses:
                done = anyio.Event()
                group.start_soon(attempt, address, done)
                with anyio.move_on_after(_RACE_DELAY):
                    await done.wait()
        if made:
            return made.pop(0)
        raise one_error(errors)
    finally:
        for transport, _ in made:
            transport.abort()


async def _connect(
    opening: Any, seconds: float | None, socket_options: Iterable[SocketOption] | None
) -> AsyncioStream:
    """The stream on the connection ``opening`` (a ``create_connection`` call) makes.

    Raises:
        httpcore.ConnectTimeout: it took longer than ``seconds``.
        httpcore.ConnectError: it failed, or a socket option was refused (the ``OSError``
            its cause).
    """
    try:
        with anyio.fail_after(seconds):
            transport, protocol = await opening
    except TimeoutError as exc:  # first: a TimeoutError is an OSError
        raise httpcore.ConnectTimeout(exc) from exc
    except OSError as exc:
        raise httpcore.ConnectError(exc) from exc
    finally:
        opening.close()  # an opening never awaited (a timeout of 0) is not left unawaited
    stream = AsyncioStream(transport, protocol)
    sock: socket.socket | None = transport.get_extra_info("socket")
    if socket_options and sock is not None:
        try:
            for option in socket_options:
                if len(option) == 4:  # (level, name, None, length)
                    sock.setsockopt(option[0], option[1], None, option[3])
                else:
                    sock.setsockopt(option[0], option[1], option[2])
        except BaseException as exc:
            await stream.aclose()
            if isinstance(exc, OSError):
                raise httpcore.ConnectError(exc) from exc
            raise
    return stream

"""A whole-attempt deadline for the sync client's own sockets: httpx's timeouts are per socket
operation, which a server sending a byte every half second never trips, so the pools open
sockets through ``deadline_backend``, giving each connect, read and write what is left of the
attempt (a context variable: threads do not share it), and a name's connect that time as a whole
(``sync_network.py``). Async shells use a cancel scope."""

from __future__ import annotations

import functools
import time
from collections.abc import Iterable
from contextvars import ContextVar, Token
from typing import TYPE_CHECKING, Any, cast

from .sync_network import connect_tcp
from .watchdog import shut

if TYPE_CHECKING:
    import httpcore

_deadline: ContextVar[float | None] = ContextVar("paysdk_attempt_deadline", default=None)


class attempt_deadline:
    """Socket operations inside this block end by monotonic time ``at`` (``None``: no bound);
    a class, not ``@contextmanager``: it wraps every request, and this costs less."""

    __slots__ = ("_at", "_token")
    _token: Token[float | None]

    def __init__(self, at: float | None) -> None:
        self._at = at

    def __enter__(self) -> None:
        self._token = _deadline.set(self._at)

    def __exit__(self, *exc: object) -> None:
        _deadline.reset(self._token)


def _clip(timeout: float | None, error: type[Exception]) -> float | None:
    """``timeout`` cut to what is left of the attempt; ``error`` if nothing is."""
    at = _deadline.get()
    if at is None:
        return timeout
    left = at - time.monotonic()
    if left <= 0:
        raise error("the attempt's deadline passed")
    return left if timeout is None or timeout > left else timeout


@functools.cache
def _deadline_backend() -> type[Any]:
    """The wrapping backend class, built on first use: httpcore is loaded only with a client."""
    import httpcore

    class _Stream(httpcore.NetworkStream):
        def __init__(self, inner: httpcore.NetworkStream) -> None:
            self._inner = inner

        def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
            return self._inner.read(max_bytes, _clip(timeout, httpcore.ReadTimeout))

        def write(self, buffer: bytes, timeout: float | None = None) -> None:
            if buffer:  # h11 ends every request with an empty write, which sends nothing
                self._inner.write(buffer, _clip(timeout, httpcore.WriteTimeout))

        def close(self) -> None:
            """Shut the socket before closing it: a thread blocked reading or writing it (a
            call under way when another thread closes the client) returns at once, where a
            mere close leaves it waiting out its timeout."""
            sock = self._inner.get_extra_info("socket")
            if sock is not None:
                shut(sock)
            self._inner.close()

        def start_tls(
            self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None
        ) -> httpcore.NetworkStream:
            try:
                left = _clip(timeout, httpcore.ConnectTimeout)
            except httpcore.ConnectTimeout:
                self._inner.close()  # as a failed handshake closes it: no one else holds it
                raise
            return _Stream(self._inner.start_tls(ssl_context, server_hostname, left))

        def get_extra_info(self, info: str) -> Any:
            return self._inner.get_extra_info(info)

    class _Backend(httpcore.NetworkBackend):
        def __init__(self, inner: httpcore.NetworkBackend) -> None:
            self._inner = inner

        def connect_tcp(
            self,
            host: str,
            port: int,
            timeout: float | None = None,
            local_address: str | None = None,
            socket_options: Iterable[Any] | None = None,
        ) -> httpcore.NetworkStream:
            left = _clip(timeout, httpcore.ConnectTimeout)
            inner = self._inner
            return _Stream(connect_tcp(inner, host, port, left, local_address, socket_options))

        def sleep(self, seconds: float) -> None:
            self._inner.sleep(seconds)

    return _Backend


def deadline_backend() -> httpcore.NetworkBackend:
    """A network backend for httpcore's pools whose sockets end each operation by the
    attempt's deadline: httpcore's own sync backend, wrapped."""
    import httpcore

    return cast("httpcore.NetworkBackend", _deadline_backend()(httpcore.SyncBackend()))

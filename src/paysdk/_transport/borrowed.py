"""Finding the socket an attempt reads from on a merchant's own ``httpx.Client``, for the
``watchdog`` (paysdk's own client bounds its sockets: ``deadline``), by httpcore's ``trace``
extension: a new connection's stream (``connect_tcp``, ``start_tls``) names its socket; a
kept-alive one sends no connect event, so a socket is remembered as idle when its answer closes,
and an attempt sending without connecting took its origin's idle one, if only one is; the
response's ``network_stream`` then names it exactly. HTTP/2 connections are never shut down:
other requests share them."""

from __future__ import annotations

import os
import socket
import ssl
import threading
import weakref
from typing import Any

import httpcore

from .watchdog import Watch

__all__ = ["AttemptTrace", "IdleSockets", "socket_of"]


def socket_of(stream: object) -> socket.socket | None:
    """The socket under an httpcore network stream, if it names one."""
    if not isinstance(stream, httpcore.NetworkStream):
        return None
    sock = stream.get_extra_info("socket")
    return sock if isinstance(sock, socket.socket) else None


def _speaks_h2(stream: object) -> bool:
    """Whether TLS agreed on HTTP/2 for this stream (ALPN)."""
    if not isinstance(stream, httpcore.NetworkStream):
        return False
    tls = stream.get_extra_info("ssl_object")
    return isinstance(tls, ssl.SSLObject | ssl.SSLSocket) and tls.selected_alpn_protocol() == "h2"


class IdleSockets:
    """The sockets paysdk's attempts left open on a merchant's client (one set per client:
    ``of``), by the origin their connection serves (httpcore reuses it for that origin only),
    held weakly (its pool closes them as it likes). A forked child starts with none (a thread
    of the parent may have held its lock)."""

    __slots__ = ("_lock", "_pid", "_sockets")

    def __init__(self) -> None:
        self._reset()

    @staticmethod
    def of(http: object) -> IdleSockets:
        """The set of the merchant's client ``http``."""
        return _idle_of.setdefault(http, IdleSockets())

    def _reset(self) -> None:
        self._pid = os.getpid()
        self._lock = threading.Lock()
        self._sockets: dict[str, weakref.WeakSet[socket.socket]] = {}

    def _mine(self) -> None:
        if self._pid != os.getpid():
            self._reset()

    def release(self, origin: str, sock: socket.socket) -> None:
        """An attempt to ``origin`` is done with ``sock``; its connection may be reused."""
        self._mine()
        with self._lock:
            self._sockets.setdefault(origin, weakref.WeakSet()).add(sock)

    def claim(self, sock: socket.socket) -> None:
        """An attempt is using ``sock``."""
        self._mine()
        with self._lock:
            for idle in self._sockets.values():
                idle.discard(sock)

    def claim_only(self, origin: str) -> socket.socket | None:
        """The one idle socket to ``origin`` still open, claimed; ``None`` if there are none or
        several."""
        self._mine()
        with self._lock:
            idle = self._sockets.get(origin)
            if idle is None:
                return None
            open_ = [sock for sock in idle if sock.fileno() >= 0]
            if not open_:
                del self._sockets[origin]
            if len(open_) != 1:
                return None
            (sock,) = open_
            idle.discard(sock)
            return sock


_idle_of: weakref.WeakKeyDictionary[object, IdleSockets] = weakref.WeakKeyDictionary()


def _origin_of(request: object) -> str | None:
    """The origin the connection sending ``request`` serves (a forward proxy's, through one)."""
    if not isinstance(request, httpcore.Request):
        return None
    try:
        return str(request.url.origin)
    except KeyError:  # a scheme httpcore names no default port for
        return None


class AttemptTrace:
    """The ``trace`` extension of one attempt: gives its ``Watch`` the attempt's socket."""

    __slots__ = ("_answered", "_idle", "_origin", "_shared", "_sock", "_watch")

    def __init__(self, watch: Watch, idle: IdleSockets) -> None:
        self._watch = watch
        self._idle = idle
        self._sock: socket.socket | None = None
        self._origin: str | None = None
        self._shared = False
        self._answered = False

    def __call__(self, event: str, info: dict[str, Any]) -> None:
        if event.startswith("http2."):
            self._shared = True  # multiplexed: shutting it would cut others' requests
        elif event.endswith(".complete") and not self._shared:
            stream = info.get("return_value")
            if _speaks_h2(stream):
                self._shared = True
                self._watch.detach()
            elif (sock := socket_of(stream)) is not None:
                self._take(sock)  # connect_tcp, start_tls: a connection made for this attempt
        elif event == "http11.send_request_headers.started":
            self._sending(_origin_of(info.get("request")))
        elif event == "http11.response_closed.started":
            # the answer is closed: its connection goes back to the merchant's pool, where the
            # next request may take it before this attempt ends, so its deadline shuts it no more
            self._answered = True
            self._watch.detach()
            self._release()

    def follow(self, watch: Watch) -> bool:
        """A read of the answer left open (``iter_payments``) is watched by ``watch`` from now on:
        detached as the attempt's was when the answer closes. ``False`` if it is closed already:
        its socket is then no longer the answer's to shut."""
        self._watch = watch
        return not self._answered

    def _release(self) -> None:
        """The socket taken may serve the next attempt to its origin: it is idle."""
        if self._sock is not None and self._origin is not None:
            self._idle.release(self._origin, self._sock)

    def _sending(self, origin: str | None) -> None:
        """A request goes out (a tunnel's ``CONNECT``, then the request itself); with no
        connection made for it, on a kept-alive one: the only one idle to ``origin``, if so."""
        self._origin = origin
        if self._sock is None and origin is not None:
            sock = self._idle.claim_only(origin)
            if sock is not None:
                self._take(sock)

    def found(self, stream: object, http_version: str) -> None:
        """The response's ``network_stream``: the socket the body is read from."""
        if http_version != "HTTP/1.1" or self._shared:
            return
        sock = socket_of(stream)
        if sock is not None and sock is not self._sock:
            self._release()  # the one taken for it was not its own
            self._take(sock)

    def _take(self, sock: socket.socket) -> None:
        self._idle.claim(sock)
        self._sock = sock
        self._watch.attach(sock)

"""The hostile server's machinery: accepting, reading requests, stopping. Use support.hostile.

Each connection has its own thread, which reads a request head (at most 64 KiB) and body (at most
1 MiB, discarded), records the request, and runs the scripted behaviour. Every blocking wait polls
a stop flag, so ``stop()`` ends every thread promptly, even mid-trickle.
"""

from __future__ import annotations

import contextlib
import dataclasses
import select
import socket
import struct
import threading
import time
from collections.abc import Callable, Mapping
from types import TracebackType

__all__ = ["Behaviour", "Connection", "Gone", "HostileServer", "Request"]

MAX_HEAD = 64 * 1024
MAX_BODY = 1 << 20
_POLL = 0.02
"""How often waiting threads look at the stop flag and at the peer (seconds)."""


class Gone(Exception):
    """The client hung up, or the server is stopping: the connection's thread just ends."""


@dataclasses.dataclass(frozen=True)
class Request:
    """One request the server read, as it arrived."""

    method: str
    target: str
    """The request target: path and query, as sent."""
    headers: Mapping[str, str]
    """Header values by lower-case name (the last of repeated names)."""
    body: bytes
    connection: int
    """Which connection it came on: 1 for the server's first, and so on."""

    @property
    def path(self) -> str:
        return self.target.split("?", 1)[0]


class Connection:
    """One accepted socket, with sends and waits that give up when the server stops."""

    def __init__(self, sock: socket.socket, stopping: threading.Event) -> None:
        self.sock = sock
        self._stopping = stopping

    def send(self, data: bytes) -> None:
        """Send ``data`` whole; :class:`Gone` if the client hung up or the server stops."""
        if self._stopping.is_set():
            raise Gone
        try:
            self.sock.sendall(data)
        except OSError:  # reset, broken pipe, or shut down by stop()
            raise Gone from None

    def pause(self, seconds: float) -> None:
        """Wait ``seconds``; :class:`Gone` early if the client hangs up or the server stops."""
        deadline = time.monotonic() + seconds
        while (remaining := deadline - time.monotonic()) > 0:
            self._check_peer(min(remaining, _POLL))

    def receive(self) -> bytes:
        """Bytes the client sent (b"" once it closed); :class:`Gone` if the server stops."""
        while not self._stopping.is_set():
            try:
                readable, _, _ = select.select([self.sock], [], [], _POLL)
                if readable:
                    return self.sock.recv(65536)
            except (OSError, ValueError):  # reset, or closed by stop()
                return b""
        raise Gone

    def hold(self) -> None:
        """Wait until the client hangs up or the server stops (then :class:`Gone`)."""
        while True:
            self._check_peer(_POLL)

    def reset(self) -> None:
        """Close with a TCP reset (SO_LINGER 0): the client's next read fails with ECONNRESET."""
        with contextlib.suppress(OSError):
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, _LINGER_ZERO)
        self.sock.close()
        raise Gone

    def _check_peer(self, timeout: float) -> None:
        if self._stopping.is_set():
            raise Gone
        try:
            readable, _, _ = select.select([self.sock], [], [], timeout)
            if readable and self.sock.recv(1, socket.MSG_PEEK) == b"":
                raise Gone  # the client closed its end
        except (OSError, ValueError):  # reset, or the socket was closed by stop()
            raise Gone from None
        if readable:  # a pipelined request: leave it, and do not spin on it
            self._stopping.wait(timeout)


_LINGER_ZERO = struct.pack("ii", 1, 0)  # struct linger {l_onoff = 1, l_linger = 0}

Behaviour = Callable[[Connection, Request], bool]
"""Answers (or mistreats) one request; returns True to read another request on the connection."""


def _unscripted(conn: Connection, request: Request) -> bool:
    body = b"hostile server: nothing scripted; call hostile.script(...)"
    conn.send(b"HTTP/1.1 500 Nothing Scripted\r\nContent-Length: %d\r\n\r\n%b" % (len(body), body))
    return True


class HostileServer:
    """The server; start/stop it with ``with`` (the ``hostile`` fixture does)."""

    def __init__(self) -> None:
        self.requests: list[Request] = []
        self._script: list[Behaviour] = []
        self._served = 0
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._threads: set[threading.Thread] = set()
        self._sockets: set[socket.socket] = set()
        self._connections = 0
        self._listener = socket.create_server(("127.0.0.1", 0), backlog=128)
        self._listener.settimeout(_POLL)
        self.port: int = self._listener.getsockname()[1]
        self.base_url = f"http://127.0.0.1:{self.port}"
        self._acceptor = threading.Thread(target=self._accept, name="hostile-accept", daemon=True)

    def script(self, *behaviours: Behaviour) -> None:
        """The n-th request from now gets the n-th behaviour; the last one repeats."""
        if not behaviours:
            raise ValueError("script at least one behaviour")
        with self._lock:
            self._script = list(behaviours)
            self._served = 0

    @property
    def attempts(self) -> int:
        """How many requests the server read (each try of a client counts)."""
        with self._lock:
            return len(self.requests)

    def attempts_seen(self, expected: int, timeout: float = 10.0) -> int:
        """``attempts`` once it reaches ``expected``, or after ``timeout`` seconds: a client
        that gave up (its deadline) may leave a request in the socket that a loaded machine has
        not yet let the server read."""
        give_up = time.monotonic() + timeout
        while self.attempts < expected and time.monotonic() < give_up:
            time.sleep(0.01)
        return self.attempts

    @property
    def connections(self) -> int:
        """How many connections the server accepted."""
        with self._lock:
            return self._connections

    @property
    def open_connections(self) -> int:
        """How many connections are still being served (their threads still running)."""
        with self._lock:
            return len(self._threads)

    # --- lifecycle ----------------------------------------------------------------------------

    def __enter__(self) -> HostileServer:
        self._acceptor.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def stop(self, timeout: float = 10.0) -> None:
        """Cut every connection and join every thread; raise if one is still running."""
        self._stopping.set()
        self._acceptor.join(timeout)
        self._listener.close()
        with self._lock:
            sockets, threads = list(self._sockets), list(self._threads)
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        for thread in threads:
            thread.join(timeout)
        stuck = [t.name for t in threads if t.is_alive()]
        if self._acceptor.is_alive():
            stuck.append(self._acceptor.name)
        if stuck:
            raise RuntimeError(f"hostile server threads did not stop: {stuck}")

    # --- serving ------------------------------------------------------------------------------

    def _accept(self) -> None:
        while not self._stopping.is_set():
            try:
                sock, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            sock.settimeout(None)
            with self._lock:
                self._connections += 1
                number = self._connections
                thread = threading.Thread(
                    target=self._serve,
                    args=(sock, number),
                    name=f"hostile-conn-{number}",
                    daemon=True,
                )
                self._sockets.add(sock)
                self._threads.add(thread)
            thread.start()

    def _serve(self, sock: socket.socket, number: int) -> None:
        connection = Connection(sock, self._stopping)
        reader = _RequestReader(connection, number)
        try:
            while (request := reader.read()) is not None:
                with self._lock:
                    self.requests.append(request)
                    behaviour = self._next_behaviour()
                if not behaviour(connection, request):
                    break
        except Gone:
            pass
        finally:
            with self._lock:
                self._sockets.discard(sock)
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_WR)  # FIN after what was sent, unless reset
            sock.close()
            with self._lock:
                self._threads.discard(threading.current_thread())

    def _next_behaviour(self) -> Behaviour:
        if not self._script:
            return _unscripted
        behaviour = self._script[min(self._served, len(self._script) - 1)]
        self._served += 1
        return behaviour


class _RequestReader:
    """Reads requests off one connection, bounded in size; ``None`` once the client is done."""

    def __init__(self, connection: Connection, number: int) -> None:
        self._connection = connection
        self._number = number
        self._buffer = b""

    def read(self) -> Request | None:
        while b"\r\n\r\n" not in self._buffer:
            if len(self._buffer) > MAX_HEAD or not self._fill():
                return None
        head, _, self._buffer = self._buffer.partition(b"\r\n\r\n")
        request_line, *lines = head.decode("latin-1").split("\r\n")
        method, target, _version = [*request_line.split(" ", 2), "", ""][:3]
        headers: dict[str, str] = {}
        for line in lines:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        declared = headers.get("content-length", "0")
        if not (declared.isascii() and declared.isdigit()) or int(declared) > MAX_BODY:
            return None
        length = int(declared)
        while len(self._buffer) < length:
            if not self._fill():
                return None
        body, self._buffer = self._buffer[:length], self._buffer[length:]
        return Request(method, target, headers, body, self._number)

    def _fill(self) -> bool:
        chunk = self._connection.receive()
        self._buffer += chunk
        return bool(chunk)

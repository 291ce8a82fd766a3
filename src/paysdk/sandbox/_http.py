"""The sandbox's HTTP layer: the stdlib's ``ThreadingHTTPServer`` (no dependency, so ``pip install
python-paysdk`` alone runs it), bounded wherever a client could hold it (body, request time,
connections, backlog, TLS handshake) so that it stays up whatever a client sends."""

from __future__ import annotations

import contextlib
import http.server
import io
import socket
import ssl
import sys
import threading
import time
from typing import TYPE_CHECKING, Any, Protocol, cast

from .._service.api import Reply
from ._requests import MAX_RECORDED_TARGET

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

__all__ = ["DEFAULT_MAX_CONNECTIONS", "Handler", "Server", "Service"]

_ONCE = ("Host", "Content-Length")
"""The headers a request may send once only: sent twice, two readers may each take another."""
MAX_BODY = 1 << 20
"""The largest request body the sandbox reads (1 MiB); a larger Content-Length is answered 413."""
DEFAULT_MAX_CONNECTIONS = 256
"""How many connections the sandbox serves at once (a thread each) unless told otherwise."""


def _closing_answer(status: int, error: str, message: str) -> bytes:
    """A whole JSON error answer that closes the connection, written straight to a socket."""
    body = Reply.error(status, error, message).body
    head = f"HTTP/1.1 {status} {error}\r\nContent-Type: application/json\r\n"
    return f"{head}Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body


_REQUEST_TIMEOUT = _closing_answer(408, "Request Timeout", "the request did not arrive in time")


def _cut(argument: object) -> object:
    """A log line's text argument as the request log keeps a target: a request line may be 64 KiB,
    four times that once escaped, and each request is logged."""
    if isinstance(argument, str) and len(argument) > MAX_RECORDED_TARGET:
        return f"{argument[:MAX_RECORDED_TARGET]}... ({len(argument):,} characters)"
    return argument


class Service(Protocol):
    """What the HTTP layer asks of the sandbox it serves (typed here, so it need not import it)."""

    @property
    def idle_timeout(self) -> float:
        """Seconds a request may take to arrive whole; also the limit for each write."""
        ...

    def handle(self, handler: Handler, body: bytes) -> None:
        """Answer one request whose body was read, through ``handler.send``."""

    def log(self, message: str) -> None:
        """Note what happened to a connection or a request."""

    def connected(self, client_address: tuple[str, int]) -> None:
        """Note a connection taken on, by its client's host and port, before its first read."""


class Server(http.server.ThreadingHTTPServer):
    """Knows the ``Service`` it serves and its open connections, so ``stop`` can cut them; serves
    at most ``max_connections`` at once, a thread each (one more: ``_refuse``), HTTPS with a
    server-side ``ssl_context``."""

    daemon_threads = True
    request_queue_size = 128  # the listen backlog; the stdlib's 5 drops SYNs in a burst

    def __init__(
        self,
        address: tuple[str, int],
        sandbox: Service,
        *,
        max_connections: int = DEFAULT_MAX_CONNECTIONS,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        self.sandbox = sandbox
        self.ssl_context = ssl_context
        self.connections: set[socket.socket] = set()
        self.connections_lock = threading.Lock()
        self._slots = threading.BoundedSemaphore(max_connections)
        limit = f"the sandbox is serving its limit of {max_connections} connections"
        self._busy = _closing_answer(503, "Service Unavailable", limit)
        super().__init__(address, Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False):
            self._refuse(request)
            host, port = client_address[:2]
            self.sandbox.log(f"{host}:{port} refused: serving the most connections allowed")
            return
        connection: socket.socket = request
        try:
            if self.ssl_context is not None:  # no I/O: Handler.handle does the handshake
                connection = self.ssl_context.wrap_socket(
                    request, server_side=True, do_handshake_on_connect=False
                )
            super().process_request(connection, client_address)
        except BaseException:  # no thread was started to give the slot back
            self._slots.release()
            if connection is not request:  # the wrap took the socket: closing ``request`` won't
                connection.close()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        """``ThreadingMixIn``'s, with the slot given back before the connection is closed: a
        client that reads the close and connects again at once must find it free."""
        try:
            self.finish_request(request, client_address)
        except Exception:
            self.handle_error(request, client_address)
        finally:
            self._slots.release()
            self.shutdown_request(request)

    def _refuse(self, connection: socket.socket) -> None:
        """Answer 503 without waiting: the answer fits the new socket's send buffer, and what
        the client already sent is drained so the close does not reset the connection. Over TLS
        there is no answer, only the close: a 503 would need a handshake first."""
        with contextlib.suppress(OSError):
            connection.setblocking(False)
            if self.ssl_context is None:
                connection.send(self._busy)
            connection.shutdown(socket.SHUT_WR)
            for _ in range(4):  # what has arrived, up to 256 KiB; BlockingIOError once none
                if not connection.recv(65536):
                    break
        connection.close()

    @property
    def open_connections(self) -> int:
        """How many connections are being served now: taken on and not yet finished."""
        with self.connections_lock:
            return len(self.connections)

    def close_connections(self) -> None:
        with self.connections_lock:
            connections = list(self.connections)
        for connection in connections:
            with contextlib.suppress(OSError):  # already closed by the peer
                # The socket's own shutdown: an SSLSocket's would also drop its TLS state under
                # the handler thread still reading it; this only ends that read (EOF).
                socket.socket.shutdown(connection, socket.SHUT_RDWR)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up (or broke TLS) is one log line; anything else is a sandbox bug:
        a traceback."""
        error = sys.exc_info()[1]
        # BrokenPipe, ConnectionReset, ConnectionAborted; a TLS record or alert the client sent
        if isinstance(error, (ConnectionError, ssl.SSLError)):
            host, port = client_address[:2]
            self.sandbox.log(f"{host}:{port} disconnected ({type(error).__name__})")
            return
        super().handle_error(request, client_address)


class _RequestReader(io.RawIOBase):
    """Reads the socket, giving up when a request has not arrived whole by ``deadline``: a
    per-read timeout alone lets a client sending a byte every few seconds (slow loris) hold a
    thread for ever."""

    def __init__(self, connection: socket.socket) -> None:
        super().__init__()
        self._connection = connection
        self.deadline: float | None = None
        self.received = 0
        """Bytes read since the deadline was set: 0 means the connection was merely idle."""
        self.timed_out = False

    def expect_request(self, deadline: float | None) -> None:
        self.deadline, self.received, self.timed_out = deadline, 0, False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer, /) -> int:
        try:
            if self.deadline is not None:
                remaining = self.deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError("the request did not arrive in time")
                self._connection.settimeout(remaining)
            count = self._connection.recv_into(buffer)
        except TimeoutError:
            self.timed_out = True
            raise
        self.received += count
        return count


class Handler(http.server.BaseHTTPRequestHandler):
    """Reads each HTTP request (bounded), asks the ``Service``, and writes its answer."""

    protocol_version = "HTTP/1.1"  # keep-alive, as clients with connection pools expect
    server_version = "paysdk-sandbox"
    sys_version = ""
    disable_nagle_algorithm = True  # headers, body written apart: Nagle + delayed ACKs add ~40 ms

    @property
    def _owner(self) -> Server:
        """The server that made this handler (``self.server``, typed as what it is)."""
        return cast(Server, self.server)

    def setup(self) -> None:
        super().setup()
        self.rfile.close()  # the stdlib's reader: replaced by one with a deadline
        self._reader = _RequestReader(self.connection)
        self.rfile = io.BufferedReader(self._reader)
        self._answered = False
        self.connection.settimeout(self._owner.sandbox.idle_timeout)  # writes, TLS handshake
        with self._owner.connections_lock:
            self._owner.connections.add(self.connection)
        host, port = self.client_address[:2]
        self._owner.sandbox.connected((host, port))

    def handle(self) -> None:
        if self._handshake():
            super().handle()

    def _handshake(self) -> bool:
        """Finish a TLS handshake here, in the connection's own thread (one that never finishes
        holds up no one else), within the idle timeout set in ``setup`` (for the whole handshake,
        not each read); True when there is none to do. A client that fails it (an untrusted
        certificate, plain HTTP, a hang-up, ``stop()``) is one log line."""
        connection = self.connection
        if not isinstance(connection, ssl.SSLSocket):
            return True
        try:
            connection.do_handshake()
        except OSError as exc:  # SSLError, TimeoutError, ConnectionError, EOF
            self.close_connection = True
            host, port = self.client_address[:2]
            reason = getattr(exc, "reason", None) or type(exc).__name__
            self._owner.sandbox.log(f"{host}:{port} TLS handshake failed ({reason})")
            return False
        return True

    def finish(self) -> None:
        with self._owner.connections_lock:
            self._owner.connections.discard(self.connection)
        with contextlib.suppress(OSError):  # the connection was cut on purpose (fault, stop())
            super().finish()

    def handle_one_request(self) -> None:
        # The next request, idle time included, must arrive whole within the idle timeout.
        self._reader.expect_request(time.monotonic() + self._owner.sandbox.idle_timeout)
        super().handle_one_request()  # closes the connection on a timeout
        if self._reader.timed_out and self._reader.received:  # part of a request came: say so
            with contextlib.suppress(OSError):
                self.wfile.write(_REQUEST_TIMEOUT)

    def parse_request(self) -> bool:
        """The request line and headers, the target kept as sent: ``http.server`` reads
        ``//payments`` as ``/payments`` (a guard for its file server's redirects), where the fake
        finds no route, as a service may: a client that joins a base URL's trailing slash to
        ``/payments`` by hand must not pass against the sandbox alone."""
        parsed = super().parse_request()
        if parsed:
            self.path = self.requestline.split()[1]
        return parsed

    def do_GET(self) -> None:
        body = self._read_body()
        if body is None:
            return
        self._reader.expect_request(None)
        self.connection.settimeout(self._owner.sandbox.idle_timeout)
        self._answered = False
        try:
            self._owner.sandbox.handle(self, body)
        except Exception as exc:
            if isinstance(exc, (ConnectionError, TimeoutError)) or self._answered:
                raise
            # A sandbox bug: the client gets a 500 rather than silence, the log a traceback.
            self.close_connection = True
            message = f"the sandbox failed: {type(exc).__name__}"
            self.send(Reply.error(500, "Internal Server Error", message))
            raise

    do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = do_GET

    def log_message(self, format: str, *args: Any) -> None:
        self._owner.sandbox.log(format % tuple(_cut(arg) for arg in args))

    def _read_body(self) -> bytes | None:
        """The request body; ``None`` once a request it will not read was answered (and the
        connection closed: what the client sends next may be that body, not a request). Two
        ``Host`` or two ``Content-Length`` lines are answered 400 (RFC 9112, sections 3.2 and
        6.3): a proxy before the sandbox may have read the other one; so is HTTP/1.1 without a
        ``Host`` (section 3.2), which every client sends."""
        declared = self.headers.get("Content-Length")
        twice = [name for name in _ONCE if len(self.headers.get_all(name, ())) > 1]
        if twice:
            refusal = Reply.error(400, "Bad Request", f"more than one {twice[0]} header")
        elif self.request_version != "HTTP/1.0" and "Host" not in self.headers:
            refusal = Reply.error(400, "Bad Request", "an HTTP/1.1 request without a Host header")
        elif self.headers.get("Transfer-Encoding") is not None:  # chunked: not read, so refused
            message = "the sandbox reads a request body sent with a Content-Length only"
            refusal = Reply.error(411, "Length Required", message)
        elif declared is None:
            return b""
        elif not (declared.isascii() and declared.isdigit()):  # "²" is a digit to isdigit()
            refusal = Reply.error(400, "Bad Request", "bad Content-Length")
        elif len(declared) > len(str(MAX_BODY)) or int(declared) > MAX_BODY:
            message = f"the body is larger than the sandbox reads ({MAX_BODY} bytes)"
            refusal = Reply.error(413, "Content Too Large", message)
        else:
            return self.rfile.read(int(declared))
        self.close_connection = True
        self.send(refusal)
        return None

    def send(self, reply: Reply, disconnect: str | None = None) -> None:
        """Write ``reply``; ``disconnect`` cuts it as ``paysdk.sandbox.Disconnect`` says."""
        self._answered = True
        body, declared = reply.body, len(reply.body)
        if disconnect == "mid_body":
            body = body[: len(body) // 2]
        elif disconnect == "truncated":
            declared += 64
        self.send_response(reply.status)
        if not any(name.lower() == "content-type" for name in reply.headers):
            self.send_header("Content-Type", "text/plain; charset=utf-8")
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(declared))
        self.end_headers()
        if disconnect is not None:
            self.close_connection = True
        if self.command != "HEAD":
            self.wfile.write(body)
        self.wfile.flush()

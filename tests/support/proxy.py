"""A real HTTP forward proxy on 127.0.0.1, for tests of clients configured with a proxy.

::

    with ForwardProxy() as proxy:
        proxied = httpx.HTTPTransport(proxy=httpx.Proxy(proxy.url), verify=context)
        with httpx.Client(transport=proxied) as http:
            http.get(f"{tls_sandbox.base_url}/payments")   # CONNECT 127.0.0.1:PORT, then TLS
    assert proxy.tunnels == 1
    (connect,) = proxy.requests
    assert connect.method == "CONNECT" and "Authorization" not in connect.headers

It tunnels ``CONNECT host:port`` (relaying bytes both ways without reading them: through a
tunnel they are TLS), forwards plain-HTTP requests in absolute form (``GET http://host:port/path``),
can require Basic credentials (407 without them), and records every request it reads. It reaches
loopback hosts only, and :data:`BEYOND`, a name it resolves to 127.0.0.1 (any other is answered
403), so no test traffic leaves the machine.

Each connection has a thread; every socket has a timeout, and ``stop()`` shuts every socket down,
joins every thread and closes what is left, so nothing outlives the proxy.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import dataclasses
import hmac
import ipaddress
import itertools
import select
import socket
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from types import TracebackType
from typing import Literal
from urllib.parse import quote, urlsplit

__all__ = [
    "BEYOND",
    "PROXY_VARIABLES",
    "REALM",
    "ForwardProxy",
    "Headers",
    "Outcome",
    "ProxiedRequest",
]

PROXY_VARIABLES = (
    "HTTPS_PROXY",
    "HTTP_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
    "https_proxy",
    "http_proxy",
    "all_proxy",
    "no_proxy",
)
"""The environment variables HTTP clients read a proxy from (both cases: urllib reads both)."""
REALM = "paysdk-tests"
"""The realm of the proxy's ``Proxy-Authenticate: Basic`` challenge."""
MAX_HEAD = 64 * 1024
"""The largest request or response head the proxy reads."""
MAX_BODY = 1 << 20
"""The largest request body it forwards (answered 413 beyond)."""
DEFAULT_TIMEOUT = 30.0
BEYOND = "payments.localhost"
"""A name the proxy resolves itself, to 127.0.0.1, as a corporate proxy resolves names its
clients cannot: for paysdk a service beyond the machine (Python's resolver looks up a name under
``.localhost`` as any other), so the environment's proxy carries requests to it, which it carries
to no loopback address; the sandbox answers for it, and the servers' certificate names it
(``tests/support/tls.py``)."""
"""Seconds any one socket operation may take: a generous bound, so a bug fails, never hangs."""
_POLL = 0.05
"""How often the accept loop and tunnels look at the stop flag (seconds)."""
_HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authorization",
        "proxy-authenticate",
        "proxy-connection",
        "te",
        "trailer",
        "upgrade",
    }
)
"""Headers about one connection, which a proxy does not pass on."""

Outcome = Literal["tunnelled", "forwarded", "refused", "forbidden", "unreachable", "malformed"]
"""What the proxy did with a request: tunnelled a CONNECT (200), forwarded a request to its
origin, refused it for want of credentials (407), forbade a host that is not loopback (403),
found the origin unreachable (502), or could not serve it as sent (400, 413, 501)."""
_Record = Callable[[Outcome], None]


class Headers(Mapping[str, str]):
    """A request's headers as sent, looked up by name in any case (a repeated name: its last
    value); ``pairs`` keeps each (name, value) in order."""

    def __init__(self, pairs: Iterable[tuple[str, str]]) -> None:
        self.pairs: tuple[tuple[str, str], ...] = tuple(pairs)
        self._names: dict[str, str] = {}
        self._values: dict[str, str] = {}
        for name, value in self.pairs:
            self._names.setdefault(name.lower(), name)
            self._values[name.lower()] = value

    def __getitem__(self, name: str) -> str:
        return self._values[name.lower()]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._values

    def __iter__(self) -> Iterator[str]:
        return iter(self._names.values())

    def __len__(self) -> int:
        return len(self._names)

    def __repr__(self) -> str:
        return f"Headers({list(self.pairs)!r})"


@dataclasses.dataclass(frozen=True)
class ProxiedRequest:
    """One request the proxy read: a CONNECT's line and headers, or a forwarded request's.

    Recorded before the proxy answers, so a client holding its answer sees it in the record.
    """

    method: str
    target: str
    """``host:port`` for a CONNECT; the absolute URL (``http://host:port/path``) otherwise."""
    headers: Headers
    outcome: Outcome


class ForwardProxy:
    """The proxy; ``with ForwardProxy() as proxy:`` starts it on a free port of 127.0.0.1.

    Args:
        credentials: ``(user, password)`` a request must carry as ``Proxy-Authorization:
            Basic``; without them (or with others) it is answered 407. ``None``: none needed.
        timeout: seconds each socket operation may take before the connection is dropped.
    """

    def __init__(
        self, *, credentials: tuple[str, str] | None = None, timeout: float = DEFAULT_TIMEOUT
    ) -> None:
        self.credentials = credentials
        self.timeout = timeout
        self._accepted = _encodings(credentials)
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._requests: list[ProxiedRequest] = []
        self._tunnels = self._forwarded = self._refused = 0
        self._sockets: set[socket.socket] = set()
        self._threads: set[threading.Thread] = set()
        self._listener: socket.socket | None = None
        self._acceptor: threading.Thread | None = None
        self._numbers = itertools.count(1)

    # --- lifecycle ----------------------------------------------------------------------------

    def start(self) -> ForwardProxy:
        if self._listener is not None:
            raise RuntimeError("the proxy is already running")
        self._stopping.clear()
        self._listener = socket.create_server(("127.0.0.1", 0), backlog=128)
        self._listener.settimeout(_POLL)
        self._acceptor = threading.Thread(
            target=self._accept, args=(self._listener,), name="proxy-accept", daemon=True
        )
        self._acceptor.start()
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Cut every connection, join every thread and close every socket; raise if a thread
        is still running (a bug in the proxy, not the client)."""
        listener, acceptor = self._listener, self._acceptor
        if listener is None or acceptor is None:
            return
        self._stopping.set()
        acceptor.join(timeout)  # then no connection thread starts
        listener.close()
        with self._lock:
            threads = list(self._threads)
            for sock in self._sockets:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
        for thread in threads:
            thread.join(timeout)
        with self._lock:
            for sock in self._sockets:  # only a stuck thread's
                sock.close()
            self._sockets.clear()
        self._listener = self._acceptor = None
        stuck = [thread.name for thread in [acceptor, *threads] if thread.is_alive()]
        if stuck:
            raise RuntimeError(f"proxy threads did not stop: {stuck}")

    def __enter__(self) -> ForwardProxy:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # --- what clients need --------------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._listener is None:
            raise RuntimeError("the proxy is not running: use `with ForwardProxy() as proxy:`")
        port: int = self._listener.getsockname()[1]
        return port

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``: the proxy's URL, without credentials."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def url_with_credentials(self) -> str:
        """``http://user:password@127.0.0.1:PORT`` (each part percent-encoded)."""
        if self.credentials is None:
            raise RuntimeError("this proxy takes no credentials: use `url`")
        user, password = (quote(part, safe="") for part in self.credentials)
        return f"http://{user}:{password}@127.0.0.1:{self.port}"

    # --- what it saw --------------------------------------------------------------------------

    @property
    def requests(self) -> list[ProxiedRequest]:
        """Every request read so far (CONNECTs and forwarded ones), oldest first."""
        with self._lock:
            return list(self._requests)

    @property
    def tunnels(self) -> int:
        """CONNECT requests answered 200 and tunnelled."""
        with self._lock:
            return self._tunnels

    @property
    def forwarded(self) -> int:
        """Plain-HTTP requests forwarded to their origin."""
        with self._lock:
            return self._forwarded

    @property
    def refused(self) -> int:
        """Requests answered 407: no credentials, or the wrong ones."""
        with self._lock:
            return self._refused

    @property
    def open_connections(self) -> int:
        """Client connections the proxy is serving at this moment (each one's thread ends when
        the client closes it)."""
        with self._lock:
            return sum(thread.name.startswith("proxy-conn-") for thread in self._threads)

    def clear(self) -> None:
        """Forget what was recorded: the requests and the counters."""
        with self._lock:
            self._requests.clear()
            self._tunnels = self._forwarded = self._refused = 0

    # --- serving (connection threads) ---------------------------------------------------------

    def _accept(self, listener: socket.socket) -> None:
        while not self._stopping.is_set():
            try:
                sock, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            sock.settimeout(self.timeout)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            number = next(self._numbers)
            name = f"proxy-conn-{number}"
            thread = threading.Thread(target=self._serve, args=(sock,), name=name, daemon=True)
            with self._lock:
                self._sockets.add(sock)
                self._threads.add(thread)
            thread.start()

    def _serve(self, client: socket.socket) -> None:
        reader = _Reader(client)
        try:
            while (head := reader.head()) is not None:
                if not self._answer(client, reader, head):
                    break
        except OSError:  # reset, timed out, or shut down by stop()
            pass
        finally:
            self._close(client)
            with self._lock:
                self._threads.discard(threading.current_thread())

    def _answer(self, client: socket.socket, reader: _Reader, head: bytes) -> bool:
        """Answer one request; True to read another on the same connection."""
        parsed = _parse_head(head)
        if parsed is None:
            client.sendall(_error(400, "Bad Request", "not an HTTP/1.x request"))
            return False
        method, target, pairs = parsed
        headers = Headers(pairs)

        def record(outcome: Outcome) -> None:
            with self._lock:
                self._requests.append(ProxiedRequest(method, target, headers, outcome))
                self._tunnels += outcome == "tunnelled"
                self._forwarded += outcome == "forwarded"
                self._refused += outcome == "refused"

        if method == "CONNECT":
            return self._tunnel(client, reader, target, headers, record)
        return self._forward(client, reader, method, target, headers, record)

    def _tunnel(
        self,
        client: socket.socket,
        reader: _Reader,
        target: str,
        headers: Headers,
        record: _Record,
    ) -> bool:
        host, _, port_text = target.rpartition(":")
        host = host.removeprefix("[").removesuffix("]")
        port = _number(port_text)
        if not host or port is None or not 0 < port < 65536:
            record("malformed")
            client.sendall(_error(400, "Bad Request", "CONNECT wants host:port"))
            return False
        if not self._authorized(headers):
            record("refused")
            client.sendall(_PROXY_AUTHENTICATION_REQUIRED)
            return False
        if not _loopback(host) and host != BEYOND:
            record("forbidden")
            client.sendall(_error(403, "Forbidden", "the test proxy reaches loopback only"))
            return False
        upstream = self._connect("127.0.0.1" if host == BEYOND else host, port)
        if upstream is None:
            record("unreachable")
            client.sendall(_error(502, "Bad Gateway", f"cannot connect to {target}"))
            return False
        try:
            record("tunnelled")
            client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            self._relay(client, upstream, reader.take())
        finally:
            self._close(upstream)
        return False

    def _relay(self, client: socket.socket, upstream: socket.socket, early: bytes) -> None:
        """Pass bytes both ways, unread, until either side closes (or the proxy stops)."""
        if early:  # what the client sent right after its CONNECT
            upstream.sendall(early)
        other = {client: upstream, upstream: client}
        while not self._stopping.is_set():
            readable, _, _ = select.select(list(other), [], [], _POLL)
            for sock in readable:
                data = sock.recv(65536)
                if not data:
                    return
                other[sock].sendall(data)

    def _forward(
        self,
        client: socket.socket,
        reader: _Reader,
        method: str,
        target: str,
        headers: Headers,
        record: _Record,
    ) -> bool:
        declared = _number(headers.get("Content-Length", "0"))
        if declared is None or "Transfer-Encoding" in headers:
            record("malformed")
            client.sendall(_error(501, "Not Implemented", "bodies need a Content-Length"))
            return False
        if declared > MAX_BODY:
            record("malformed")
            client.sendall(_error(413, "Content Too Large", f"at most {MAX_BODY} bytes"))
            return False
        body = b"".join(reader.stream(declared))  # read before any answer: no reset
        if len(body) < declared:
            return False
        if not self._authorized(headers):
            record("refused")
            client.sendall(_PROXY_AUTHENTICATION_REQUIRED)
            return False
        url = urlsplit(target)
        try:
            host, port = url.hostname, url.port or 80
        except ValueError:  # a port that is not a number
            host = None
        if url.scheme != "http" or not host:
            record("malformed")
            client.sendall(_error(400, "Bad Request", "forwards http://host[:port]/path only"))
            return False
        if not _loopback(host) and host != BEYOND:
            record("forbidden")
            client.sendall(_error(403, "Forbidden", "the test proxy reaches loopback only"))
            return False
        upstream = self._connect("127.0.0.1" if host == BEYOND else host, port)
        if upstream is None:
            record("unreachable")
            client.sendall(_error(502, "Bad Gateway", f"cannot connect to {url.netloc}"))
            return False
        try:
            record("forwarded")
            origin_form = (url.path or "/") + (f"?{url.query}" if url.query else "")
            lines = [f"{method} {origin_form} HTTP/1.1"]
            lines += [f"{n}: {v}" for n, v in headers.pairs if n.lower() not in _HOP_BY_HOP]
            lines.append("Connection: close")  # one request per upstream connection
            upstream.sendall("\r\n".join(lines).encode("latin-1") + b"\r\n\r\n" + body)
            keep_alive = headers.get("Connection", "").lower() != "close"
            return self._relay_response(client, _Reader(upstream), method, keep_alive)
        finally:
            self._close(upstream)

    def _relay_response(
        self, client: socket.socket, upstream: _Reader, method: str, keep_alive: bool
    ) -> bool:
        """Pass the origin's answer on: by its Content-Length (the client's connection then
        stays open), or until the origin closes (and the client's connection with it)."""
        head = upstream.head()
        if head is None:
            client.sendall(_error(502, "Bad Gateway", "the origin sent no answer"))
            return False
        status_line, *lines = head.decode("latin-1").split("\r\n")
        version, _, rest = status_line.partition(" ")
        status = rest[:3]
        pairs = _header_pairs(lines)
        if not version.startswith("HTTP/1.") or pairs is None:
            client.sendall(_error(502, "Bad Gateway", "the origin's answer is not HTTP/1.x"))
            return False
        answer = Headers(pairs)
        length: int | None = None
        if method == "HEAD" or status in ("204", "304"):
            length = 0
        elif "Transfer-Encoding" not in answer:
            length = _number(answer.get("Content-Length", ""))
        keep_alive = keep_alive and length is not None
        kept = [f"{n}: {v}" for n, v in answer.pairs if n.lower() not in _HOP_BY_HOP]
        if not keep_alive:
            kept.append("Connection: close")
        client.sendall("\r\n".join([status_line, *kept]).encode("latin-1") + b"\r\n\r\n")
        relayed = 0
        for chunk in upstream.stream(length):
            client.sendall(chunk)
            relayed += len(chunk)
        return keep_alive and relayed == length

    # --- sockets and credentials --------------------------------------------------------------

    def _authorized(self, headers: Headers) -> bool:
        if self._accepted is None:
            return True
        scheme, _, token = headers.get("Proxy-Authorization", "").partition(" ")
        if scheme.lower() != "basic":
            return False
        try:
            given = base64.b64decode(token.strip(), validate=True)
        except (binascii.Error, ValueError):
            return False
        return any(hmac.compare_digest(given, accepted) for accepted in self._accepted)

    def _connect(self, host: str, port: int) -> socket.socket | None:
        """A connection to the origin, tracked so ``stop()`` can cut it; None if there is none."""
        try:
            upstream = socket.create_connection((host, port), timeout=self.timeout)
        except OSError:
            return None
        upstream.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with self._lock:
            if not self._stopping.is_set():
                self._sockets.add(upstream)
                return upstream
        upstream.close()  # stop() has cut the others already
        return None

    def _close(self, sock: socket.socket) -> None:
        """Close a tracked socket; under the lock, so ``stop()`` never shuts down a closed one's
        number reused by another."""
        with self._lock:
            self._sockets.discard(sock)
            sock.close()


_PROXY_AUTHENTICATION_REQUIRED = (
    b"HTTP/1.1 407 Proxy Authentication Required\r\n"
    b'Proxy-Authenticate: Basic realm="%b"\r\n'
    b"Content-Length: 0\r\nConnection: close\r\n\r\n" % REALM.encode()
)


def _error(status: int, reason: str, message: str) -> bytes:
    """An answer from the proxy itself, saying why in its body; the connection then closes."""
    body = f"test proxy: {message}\n".encode()
    head = (
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode() + body


def _encodings(credentials: tuple[str, str] | None) -> tuple[bytes, ...] | None:
    """``user:password`` as a client may encode it for Basic: UTF-8 (httpx) or Latin-1 (aiohttp's
    default); None when no credentials are needed."""
    if credentials is None:
        return None
    joined = ":".join(credentials)
    encoded = [joined.encode()]
    with contextlib.suppress(UnicodeEncodeError):
        encoded.append(joined.encode("latin-1"))
    return tuple(encoded)


def _number(text: str) -> int | None:
    """A decimal count of at most 18 digits (a port, a length), or None."""
    if text.isascii() and text.isdigit() and len(text) <= 18:
        return int(text)
    return None


def _loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a name: only localhost is known to stay on the machine
        return False


def _parse_head(head: bytes) -> tuple[str, str, list[tuple[str, str]]] | None:
    """A request head's method, target and headers; None if it is not HTTP/1.x."""
    request_line, *lines = head.decode("latin-1").split("\r\n")
    parts = request_line.split(" ")
    if len(parts) != 3 or not parts[0] or not parts[1] or not parts[2].startswith("HTTP/1."):
        return None
    pairs = _header_pairs(lines)
    return None if pairs is None else (parts[0], parts[1], pairs)


def _header_pairs(lines: list[str]) -> list[tuple[str, str]] | None:
    pairs: list[tuple[str, str]] = []
    for line in lines:
        name, colon, value = line.partition(":")
        if not colon or not name or name != name.strip():
            return None
        pairs.append((name, value.strip()))
    return pairs


class _Reader:
    """Reads one socket: heads up to :data:`MAX_HEAD`, then bodies as they come."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._buffer = b""

    def head(self) -> bytes | None:
        """The next head, without its blank line; None once the peer closes or overflows."""
        while True:
            self._buffer = self._buffer.lstrip(b"\r\n")  # blank lines between messages
            end = self._buffer.find(b"\r\n\r\n")
            if end >= 0:
                head, self._buffer = self._buffer[:end], self._buffer[end + 4 :]
                return head
            if len(self._buffer) > MAX_HEAD or not self._fill():
                return None

    def stream(self, length: int | None) -> Iterator[bytes]:
        """The next ``length`` bytes as they arrive (all of them until EOF when None); fewer
        if the peer closes first."""
        remaining = length
        while remaining is None or remaining > 0:
            if not self._buffer and not self._fill():
                return
            size = len(self._buffer) if remaining is None else min(remaining, len(self._buffer))
            chunk, self._buffer = self._buffer[:size], self._buffer[size:]
            if remaining is not None:
                remaining -= size
            yield chunk

    def take(self) -> bytes:
        """What was read past the last head and not consumed."""
        taken, self._buffer = self._buffer, b""
        return taken

    def _fill(self) -> bool:
        chunk = self._sock.recv(65536)
        self._buffer += chunk
        return bool(chunk)

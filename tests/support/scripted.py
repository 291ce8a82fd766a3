"""What the tests of paysdk's own connections send through and answer with: the async client's
transport as paysdk makes it, and a loopback server that answers with scripted bytes."""

from __future__ import annotations

import socket
import threading

import httpcore

from paysdk._transport._async.pool import AsyncPoolTransport
from paysdk._transport.async_direct import AsyncDirectConnections
from paysdk._transport.asyncio_network import AsyncioBackend
from paysdk._transport.network import Network

OK = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"


def default_network() -> Network:
    """The environment's TLS trust, no proxy."""
    return Network(True, None, trust_env=False)


def own_transport(
    network: Network | None = None, backend: httpcore.AsyncNetworkBackend | None = None
) -> AsyncPoolTransport:
    """The async client's transport: its routes without a proxy on paysdk's own connections,
    opened by ``backend`` (asyncio's own transports unless told another)."""
    return AsyncPoolTransport(
        network or default_network(),
        direct_backend=backend or AsyncioBackend(),
        direct_connections=AsyncDirectConnections,
    )


class Scripted:
    """A loopback server that answers each request it reads with the next of ``answers``
    (bytes sent as they are). A ``None`` hangs up: in place of an answer, or after the one
    before it."""

    def __init__(self, answers: list[bytes | None]) -> None:
        self.answers = list(answers)
        self.connections = 0
        self.requests: list[bytes] = []
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.05)
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}/"
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            self.connections += 1
            with conn:
                conn.settimeout(5)
                while self.answers:
                    request = conn.recv(65536)
                    if not request:
                        break
                    self.requests.append(request)
                    answer = self.answers.pop(0)
                    if answer is None:
                        break
                    conn.sendall(answer)
                    if self.answers and self.answers[0] is None:
                        self.answers.pop(0)
                        break

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self._listener.close()

"""A loopback TCP relay to a PostgreSQL server that loses the answer to one ``COMMIT``: the
server commits, and the connection is cut before its answer reaches the client, as a failover,
a pooler's restart or a network fault between the two can do."""

from __future__ import annotations

import contextlib
import socket
import threading
from types import TracebackType

__all__ = ["LostCommitAnswer"]

COMMIT = b"COMMIT\x00"
"""The statement psycopg sends to commit, as either protocol ends it: a simple query's ``Q``
message (psycopg 3.2 and later) or an extended one's ``Parse`` (3.1)."""


class LostCommitAnswer:
    """Relays connections to ``host:port``; the first ``COMMIT`` any of them sends reaches the
    server, and once the server has answered it, both sides of that connection are closed with
    the answer never relayed. Later connections are relayed whole."""

    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self.cut = threading.Event()
        """Set once the answer to the first COMMIT has been dropped."""
        self._armed = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._sockets: list[socket.socket] = [self._listener]

    def __enter__(self) -> LostCommitAnswer:
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        for each in self._sockets:
            _close(each)

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.target)
            self._sockets += [client, server]
            lose = threading.Event()
            threading.Thread(target=self._up, args=(client, server, lose), daemon=True).start()
            threading.Thread(target=self._down, args=(server, client, lose), daemon=True).start()

    def _up(self, client: socket.socket, server: socket.socket, lose: threading.Event) -> None:
        """Client to server; the first COMMIT marks its connection's next answer as lost."""
        with contextlib.suppress(OSError):
            while data := client.recv(65536):
                if COMMIT in data and self._armed.acquire(blocking=False):
                    lose.set()  # before it is sent: what comes back next is its answer
                server.sendall(data)

    def _down(self, server: socket.socket, client: socket.socket, lose: threading.Event) -> None:
        """Server to client, until an answer to be lost arrives: then both sides are closed."""
        with contextlib.suppress(OSError):
            while data := server.recv(65536):
                if lose.is_set():
                    self.cut.set()
                    break
                client.sendall(data)
        _close(client)
        _close(server)


def _close(each: socket.socket) -> None:
    with contextlib.suppress(OSError):
        each.shutdown(socket.SHUT_RDWR)
    each.close()

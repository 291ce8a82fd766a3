"""The thread a sandbox serves from, stopped whole (connections cut, port released, thread joined)
so a test leaves nothing behind; each start makes a new server and thread, so it can restart."""

from __future__ import annotations

import ssl
import threading

from ._http import Server, Service

__all__ = ["ServerThread"]


class ServerThread:
    """A sandbox's HTTP server, serving ``Service`` from a daemon thread from start to stop."""

    def __init__(self) -> None:
        self.stopping = threading.Event()
        """Set by ``stop()``: wakes handlers sleeping on an injected delay."""
        self.server: Server | None = None
        """The server while it runs; ``None`` when stopped."""
        self._thread: threading.Thread | None = None

    def start(
        self,
        address: tuple[str, int],
        service: Service,
        *,
        max_connections: int,
        ssl_context: ssl.SSLContext | None,
    ) -> None:
        """Listen on ``address`` (port 0: a free one) and serve from a new thread; RuntimeError
        if it is already running."""
        if self.server is not None:
            raise RuntimeError("the sandbox is already running")
        self.stopping.clear()
        self.server = Server(
            address, service, max_connections=max_connections, ssl_context=ssl_context
        )
        self._thread = threading.Thread(
            target=self.server.serve_forever,
            kwargs={"poll_interval": 0.02},  # how long stop() may wait
            name=f"paysdk-sandbox-{self.port}",
            daemon=True,
        )
        self._thread.start()

    def stop(self) -> None:
        """Stop serving, drop open connections, release the port and join the thread."""
        server, thread = self.server, self._thread
        if server is None or thread is None:
            return
        self.stopping.set()
        server.shutdown()
        server.close_connections()
        server.server_close()
        thread.join()
        self.server = self._thread = None

    @property
    def running(self) -> bool:
        return self.server is not None

    @property
    def port(self) -> int:
        """The port it listens on; RuntimeError when it is not running."""
        if self.server is None:
            raise RuntimeError("the sandbox is not running: use `with Sandbox() as sb:`")
        return int(self.server.server_address[1])

    @property
    def open_connections(self) -> int:
        """How many connections it is serving now; 0 when stopped."""
        server = self.server
        return 0 if server is None else server.open_connections

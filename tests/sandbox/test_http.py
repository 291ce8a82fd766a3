"""The sandbox's HTTP layer: it knows the sandbox only by the Service protocol, and serves any."""

from __future__ import annotations

import threading

import httpx

from paysdk._service.api import Reply
from paysdk.sandbox._http import Handler, Server, Service


class Echo:
    """The least a service must be for the HTTP layer to serve it."""

    idle_timeout = 5.0

    def __init__(self) -> None:
        self.logged: list[str] = []

    def handle(self, handler: Handler, body: bytes) -> None:
        handler.send(Reply.json(200, {"path": handler.path, "body": body.decode()}))

    def log(self, message: str) -> None:
        self.logged.append(message)


def test_the_server_serves_any_service() -> None:
    echo = Echo()
    service: Service = echo
    server = Server(("127.0.0.1", 0), service)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02})
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/anything?x=1"
        response = httpx.post(url, content=b"hello")
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
    assert response.json() == {"path": "/anything?x=1", "body": "hello"}
    assert any('"POST /anything?x=1 HTTP/1.1" 200' in line for line in echo.logged)

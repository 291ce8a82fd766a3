"""The sandbox's HTTP layer: it knows the sandbox only by the Service protocol, and serves any."""

from __future__ import annotations

import subprocess
import sys
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

    def connected(self, client_address: tuple[str, int]) -> None:
        self.logged.append(f"{client_address[0]} connected")


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
    assert echo.logged[0] == "127.0.0.1 connected"  # told before the request is read
    assert any('"POST /anything?x=1 HTTP/1.1" 200' in line for line in echo.logged)


def test_the_sandbox_imports_no_http_client_nor_models_until_it_sends_a_callback() -> None:
    """``import paysdk.sandbox`` (a merchant's test starting a ``Sandbox``) loads neither httpx
    nor pydantic for it: the sandbox serves records it renders itself."""
    code = (
        "import sys, paysdk.sandbox\n"
        "print(sorted(name for name in ('httpx', 'pydantic') if name in sys.modules))\n"
        "paysdk.sandbox.callback_url('http://127.0.0.1:9/cb', 'r-1')\n"
        "print('httpx' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.splitlines() == ["[]", "True"]

"""A web page open in the developer's browser while a sandbox runs: what it can make the sandbox
do, over raw sockets on 127.0.0.1 with the headers a browser sends."""

from __future__ import annotations

import http.server
import json
import socket
import threading
from collections.abc import Iterator

import pytest

from paysdk.sandbox import COMPLETED_REFERENCE, Sandbox

WAIT = 30.0
"""A generous bound on any single wait, so a regression fails instead of hanging the suite."""
KEY = "sk_sandbox_demo"
"""The key docs/sandbox.md starts its background sandbox with: a page can know it."""


class _Recording(http.server.BaseHTTPRequestHandler):
    """A service on the developer's machine that a page should never reach through the sandbox."""

    def do_GET(self) -> None:
        self.server.paths.append(self.path)  # type: ignore[attr-defined]
        body = b"internal admin page"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: the test reads ``paths``."""


@pytest.fixture
def internal() -> Iterator[http.server.HTTPServer]:
    """A loopback HTTP server standing for an internal service; ``.paths`` lists what it got."""
    server = http.server.HTTPServer(("127.0.0.1", 0), _Recording)
    server.paths = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02})
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    thread.join()


@pytest.fixture
def sandbox() -> Iterator[Sandbox]:
    with Sandbox(secret_key=KEY) as running:
        yield running


def exchange(port: int, request: bytes) -> tuple[int, bytes, bytes]:
    """Send ``request`` on a new connection; the status, head and body once the sandbox closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=WAIT) as conn:
        conn.sendall(request)
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), head, body


def request(method: str, path: str, host: str, body: bytes = b"", **headers: str) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", f"Host: {host}", f"Authorization: Bearer {KEY}"]
    lines += [f"{name.replace('_', '-')}: {value}" for name, value in headers.items()]
    lines += [f"Content-Length: {len(body)}", "Connection: close", "", ""]
    return "\r\n".join(lines).encode() + body


def test_a_rebound_page_cannot_make_the_sandbox_fetch_an_internal_url(
    sandbox: Sandbox, internal: http.server.HTTPServer
) -> None:
    """A page at evil.example whose name was re-pointed at 127.0.0.1 (DNS rebinding) is same-origin
    with the sandbox: with a known key, ``/_sandbox/pay`` would fetch any URL and hand the page the
    answer. A Host that is not the sandbox's is refused before anything is done."""
    target = f"http://127.0.0.1:{internal.server_port}/admin"
    pay = json.dumps({"payment": {"reference": "r-1"}, "callback": target}).encode()
    host = f"evil.example:{sandbox.port}"
    status, _, body = exchange(
        sandbox.port,
        request(
            "POST", "/_sandbox/pay", host, pay, Origin=f"http://{host}", Content_Type="text/plain"
        ),
    )
    assert status == 403
    assert b"internal admin page" not in body
    assert "evil.example" in json.loads(body)["message"]
    assert internal.paths == []  # type: ignore[attr-defined]
    assert sandbox.get_payment("r-1") is None


@pytest.mark.parametrize(
    ("method", "path"),
    [("GET", f"/payment/{COMPLETED_REFERENCE}"), ("GET", "/payments"), ("GET", "/_sandbox/status")],
)
def test_a_rebound_page_reads_nothing(sandbox: Sandbox, method: str, path: str) -> None:
    status, _, body = exchange(sandbox.port, request(method, path, "EVIL.example."))
    assert status == 403
    assert b"order-" not in body and b"pid" not in body
    assert sandbox.requests == []


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1:{port}",
        "localhost:{port}",
        "LOCALHOST",
        "app.localhost:{port}",
        "[::1]:{port}",
        "10.0.0.7:{port}",
        "localhost.:{port}",
    ],
)
def test_the_sandbox_s_own_names_are_answered(sandbox: Sandbox, host: str) -> None:
    """Loopback names, IP addresses (no name to re-point) and a request without a Host."""
    status, _, _ = exchange(
        sandbox.port, request("GET", "/payments", host.format(port=sandbox.port))
    )
    assert status == 200


def test_a_request_without_host_is_answered(sandbox: Sandbox) -> None:
    raw = f"GET /payments HTTP/1.0\r\nAuthorization: Bearer {KEY}\r\n\r\n".encode()
    assert exchange(sandbox.port, raw)[0] == 200


def test_the_name_the_sandbox_was_bound_to_is_answered() -> None:
    with Sandbox(secret_key=KEY, host="localhost") as sb:
        assert exchange(sb.port, request("GET", "/payments", f"localhost:{sb.port}"))[0] == 200


def test_a_cross_origin_page_gets_no_preflight_and_no_action(sandbox: Sandbox) -> None:
    """A page on another origin can send only "simple" requests (no Authorization header without
    a preflight): the preflight is refused without CORS headers, a simple POST is a 401."""
    host = f"127.0.0.1:{sandbox.port}"
    status, head, _ = exchange(
        sandbox.port,
        request(
            "OPTIONS",
            "/_sandbox/pay",
            host,
            Origin="http://evil.example",
            Access_Control_Request_Method="POST",
            Access_Control_Request_Headers="authorization",
        ).replace(f"Authorization: Bearer {KEY}\r\n".encode(), b""),
    )
    assert status == 401
    assert b"access-control" not in head.lower()
    form = b"payment=x"
    simple = request(
        "POST",
        "/_sandbox/payments",
        host,
        form,
        Origin="http://evil.example",
        Content_Type="application/x-www-form-urlencoded",
    ).replace(f"Authorization: Bearer {KEY}\r\n".encode(), b"")
    status, head, body = exchange(sandbox.port, simple)
    assert status == 401
    assert KEY.encode() not in head + body
    assert len(sandbox.payments) == 8


@pytest.mark.parametrize("bound", ["0.0.0.0", "::"])  # noqa: S104
def test_bound_to_every_address_a_container_name_is_answered(bound: str) -> None:
    """In a container (``--host 0.0.0.0``) another container reaches it as ``sandbox``, a
    container on the host as ``host.docker.internal``; a public name, which a page's DNS can
    re-point, is still refused."""
    with Sandbox(secret_key=KEY, host=bound) as sb:
        for name in ["sandbox", "host.docker.internal", "sandbox.default.svc.cluster.local"]:
            assert exchange(sb.port, request("GET", "/payments", f"{name}:{sb.port}"))[0] == 200
        assert exchange(sb.port, request("GET", "/payments", f"evil.example:{sb.port}"))[0] == 403


@pytest.mark.parametrize("name", ["intranet", "host.docker.internal"])
def test_bound_to_loopback_a_private_name_is_refused(sandbox: Sandbox, name: str) -> None:
    assert exchange(sandbox.port, request("GET", "/payments", f"{name}:{sandbox.port}"))[0] == 403

"""The forward proxy kit (tests/support/proxy.py) tunnels, forwards, asks for credentials and
records what it saw, as documented.

Driven with plain httpx, aiohttp and raw sockets, never paysdk, so a client bug cannot hide a
kit bug.
"""

from __future__ import annotations

import base64
import socket
import ssl
from collections.abc import Iterator

import aiohttp
import httpx
import pytest

from paysdk.sandbox import COMPLETED_REFERENCE, Sandbox
from tests.support.hostile import HostileServer, raw, respond
from tests.support.proxy import REALM, ForwardProxy, Headers

WAIT = 30.0
"""A generous bound on every wait, so a kit bug fails a test instead of hanging the suite."""

VERIFY = f"/payment/{COMPLETED_REFERENCE}"
USER, PASSWORD = "merchant", "p@ss:w/rd é"  # characters a URL's userinfo must percent-encode


def proxied(proxy: str, verify: ssl.SSLContext | bool = False) -> httpx.HTTPTransport:
    """httpx's transport through ``proxy`` (a ``Proxy``: httpx 0.25 takes no URL string there)."""
    return httpx.HTTPTransport(proxy=httpx.Proxy(proxy), verify=verify)


def through(proxy: str, sandbox: Sandbox, verify: ssl.SSLContext | bool = False) -> httpx.Client:
    """A client for ``sandbox`` through ``proxy``, sending its key; the environment ignored."""
    headers = {"Authorization": f"Bearer {sandbox.secret_key}"}
    return httpx.Client(
        base_url=sandbox.base_url,
        transport=proxied(proxy, verify),
        headers=headers,
        trust_env=False,
        timeout=WAIT,
    )


def exchange(proxy: ForwardProxy, request: bytes) -> bytes:
    """Send ``request`` to the proxy on a new connection; read until it closes."""
    with socket.create_connection(("127.0.0.1", proxy.port), timeout=WAIT) as conn:
        conn.sendall(request)
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    return answer


def closed_by_peer(sock: socket.socket) -> bool:
    """Read ``sock`` until the peer closes it (EOF, reset, or a TLS alert): False if WAIT ran
    out first."""
    sock.settimeout(WAIT)
    try:
        while sock.recv(65536):
            pass
    except (ConnectionResetError, ssl.SSLError):
        pass
    except TimeoutError:
        return False
    return True


@pytest.fixture
def guarded() -> Iterator[ForwardProxy]:
    """A proxy that wants :data:`USER` and :data:`PASSWORD`."""
    with ForwardProxy(credentials=(USER, PASSWORD)) as proxy:
        yield proxy


# --- CONNECT ----------------------------------------------------------------------------------


def test_https_through_the_proxy_is_one_connect_tunnel(
    forward_proxy: ForwardProxy, tls_sandbox: Sandbox, tls_client_context: ssl.SSLContext
) -> None:
    with through(forward_proxy.url, tls_sandbox, tls_client_context) as http:
        first, second = http.get(VERIFY), http.get("/payments")  # one kept-alive tunnel
    assert first.status_code == second.status_code == 200
    assert first.json()["data"]["reference"] == COMPLETED_REFERENCE
    assert (forward_proxy.tunnels, forward_proxy.forwarded, forward_proxy.refused) == (1, 0, 0)
    (connect,) = forward_proxy.requests
    assert (connect.method, connect.target) == ("CONNECT", f"127.0.0.1:{tls_sandbox.port}")
    assert connect.outcome == "tunnelled"
    assert [request.path for request in tls_sandbox.requests] == [VERIFY, "/payments"]


def test_a_connect_shows_the_proxy_no_authorization_and_no_key(
    forward_proxy: ForwardProxy, tls_sandbox: Sandbox, tls_client_context: ssl.SSLContext
) -> None:
    with through(forward_proxy.url, tls_sandbox, tls_client_context) as http:
        assert http.get(VERIFY).status_code == 200
    (connect,) = forward_proxy.requests
    assert "Authorization" not in connect.headers
    assert "authorization" not in connect.headers
    assert not any(tls_sandbox.secret_key in f"{n}: {v}" for n, v in connect.headers.pairs)
    assert "Authorization" in tls_sandbox.requests[0].headers  # it went through, encrypted


def test_what_goes_through_a_tunnel_is_relayed_unread(
    forward_proxy: ForwardProxy, sandbox: Sandbox
) -> None:
    """A tunnel to a plain-HTTP origin: the proxy records the CONNECT, not the GET inside."""
    connect = f"CONNECT 127.0.0.1:{sandbox.port} HTTP/1.1\r\nHost: 127.0.0.1:{sandbox.port}\r\n\r\n"
    inner = (
        "GET /payments HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Authorization: Bearer {sandbox.secret_key}\r\n"
        "Connection: close\r\n\r\n"
    )
    # Sent in one piece, before the 200: what follows the CONNECT's head is relayed too.
    answer = exchange(forward_proxy, connect.encode() + inner.encode())
    established, _, inside = answer.partition(b"\r\n\r\n")
    assert established == b"HTTP/1.1 200 Connection established"
    assert inside.startswith(b"HTTP/1.1 200 OK\r\n")
    assert [(r.method, r.outcome) for r in forward_proxy.requests] == [("CONNECT", "tunnelled")]
    assert [r.path for r in sandbox.requests] == ["/payments"]


@pytest.mark.usefixtures("clean_proxy_env")
def test_a_client_finds_the_proxy_in_the_environment(
    forward_proxy: ForwardProxy,
    tls_sandbox: Sandbox,
    tls_client_context: ssl.SSLContext,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """HTTPS_PROXY leads httpx (trust_env) to the proxy; NO_PROXY naming the host bypasses it."""
    monkeypatch.setenv("HTTPS_PROXY", forward_proxy.url)
    with httpx.Client(verify=tls_client_context, timeout=WAIT) as http:
        assert http.get(f"{tls_sandbox.base_url}/payments").status_code == 401
    assert forward_proxy.tunnels == 1
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    with httpx.Client(verify=tls_client_context, timeout=WAIT) as http:
        assert http.get(f"{tls_sandbox.base_url}/payments").status_code == 401
    assert forward_proxy.tunnels == 1
    assert len(tls_sandbox.requests) == 2


# --- forwarding plain HTTP --------------------------------------------------------------------


def test_plain_http_through_the_proxy_is_forwarded(
    forward_proxy: ForwardProxy, sandbox: Sandbox
) -> None:
    with through(forward_proxy.url, sandbox) as http:
        first, second = http.get(VERIFY), http.get("/payment/a%2Fb")
    assert first.status_code == 200
    assert first.json()["data"]["reference"] == COMPLETED_REFERENCE
    assert second.status_code == 404  # the path reached the sandbox still encoded
    assert (forward_proxy.tunnels, forward_proxy.forwarded, forward_proxy.refused) == (0, 2, 0)
    targets = [(r.method, r.target, r.outcome) for r in forward_proxy.requests]
    assert targets == [
        ("GET", f"{sandbox.base_url}{VERIFY}", "forwarded"),
        ("GET", f"{sandbox.base_url}/payment/a%2Fb", "forwarded"),
    ]
    # Without a tunnel the proxy reads everything, the key included: why https matters.
    assert forward_proxy.requests[0].headers["authorization"] == f"Bearer {sandbox.secret_key}"
    assert [r.path for r in sandbox.requests] == [VERIFY, "/payment/a%2Fb"]
    seen = sandbox.requests[0].headers
    assert not {"Proxy-Authorization", "Proxy-Connection"} & set(seen)
    assert seen["Connection"] == "close"  # one request per upstream connection


@pytest.mark.parametrize(
    ("answer", "body"),
    [
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", b"hello"),
        (b"HTTP/1.1 200 OK\r\n\r\nuntil the origin closes", b"until the origin closes"),
    ],
    ids=["chunked", "until-close"],
)
def test_an_answer_without_a_content_length_is_relayed_until_the_origin_closes(
    forward_proxy: ForwardProxy, hostile: HostileServer, answer: bytes, body: bytes
) -> None:
    hostile.script(raw(answer), respond(200, b"next"))
    with httpx.Client(transport=proxied(forward_proxy.url), trust_env=False, timeout=WAIT) as http:
        first = http.get(f"{hostile.base_url}/one")
        second = http.get(f"{hostile.base_url}/two")  # a fresh connection to the proxy
    assert (first.content, first.headers["Connection"]) == (body, "close")
    assert second.content == b"next"
    assert forward_proxy.forwarded == 2


# --- credentials ------------------------------------------------------------------------------


def test_without_credentials_a_connect_is_answered_407(
    guarded: ForwardProxy, tls_sandbox: Sandbox, tls_client_context: ssl.SSLContext
) -> None:
    with (
        through(guarded.url, tls_sandbox, tls_client_context) as http,
        pytest.raises(httpx.ProxyError, match="407"),
    ):
        http.get(VERIFY)
    (refused,) = guarded.requests
    assert (refused.method, refused.outcome) == ("CONNECT", "refused")
    assert (guarded.tunnels, guarded.refused) == (0, 1)
    assert tls_sandbox.requests == []


def test_without_credentials_a_forwarded_request_is_answered_407(
    guarded: ForwardProxy, sandbox: Sandbox
) -> None:
    with through(guarded.url, sandbox) as http:
        answer = http.get(VERIFY)
    assert answer.status_code == 407
    assert (
        answer.headers["Proxy-Authenticate"]
        == f'Basic realm="{REALM}"'
        == ('Basic realm="paysdk-tests"')
    )
    assert (guarded.forwarded, guarded.refused) == (0, 1)
    assert sandbox.requests == []


@pytest.mark.parametrize(
    "authorization",
    [
        "Basic " + base64.b64encode(f"{USER}:wrong".encode()).decode(),
        "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()[:-2],
        "Basic not-base64!",
        "Bearer " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode(),
    ],
    ids=["wrong-password", "cut", "not-base64", "not-basic"],
)
def test_wrong_credentials_are_answered_407(
    guarded: ForwardProxy, sandbox: Sandbox, authorization: str
) -> None:
    request = (
        f"CONNECT 127.0.0.1:{sandbox.port} HTTP/1.1\r\nProxy-Authorization: {authorization}\r\n\r\n"
    )
    answer = exchange(guarded, request.encode())
    assert answer.startswith(b"HTTP/1.1 407 Proxy Authentication Required\r\n")
    assert b'\r\nProxy-Authenticate: Basic realm="paysdk-tests"\r\n' in answer
    assert guarded.refused == 1


def test_with_credentials_both_ways_work(
    guarded: ForwardProxy,
    sandbox: Sandbox,
    tls_sandbox: Sandbox,
    tls_client_context: ssl.SSLContext,
) -> None:
    assert guarded.url_with_credentials == (
        f"http://merchant:p%40ss%3Aw%2Frd%20%C3%A9@127.0.0.1:{guarded.port}"
    )
    with through(guarded.url_with_credentials, tls_sandbox, tls_client_context) as http:
        assert http.get(VERIFY).status_code == 200
    with through(guarded.url_with_credentials, sandbox) as http:
        assert http.get(VERIFY).status_code == 200
    assert (guarded.tunnels, guarded.forwarded, guarded.refused) == (1, 1, 0)
    connect, forwarded = guarded.requests
    expected = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    assert connect.headers["Proxy-Authorization"] == expected
    assert "Authorization" not in connect.headers
    assert forwarded.headers["proxy-authorization"] == expected
    assert "Proxy-Authorization" not in sandbox.requests[0].headers  # not passed on


@pytest.mark.anyio
async def test_aiohttp_tunnels_and_forwards_through_the_proxy_with_credentials(
    guarded: ForwardProxy,
    sandbox: Sandbox,
    tls_sandbox: Sandbox,
    tls_client_context: ssl.SSLContext,
) -> None:
    """aiohttp encodes Basic credentials as Latin-1 (httpx: UTF-8): the proxy takes either."""
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=WAIT)) as session:
        for origin in (tls_sandbox, sandbox):
            async with session.get(
                f"{origin.base_url}{VERIFY}",
                proxy=guarded.url_with_credentials,
                ssl=tls_client_context,
                headers={"Authorization": f"Bearer {origin.secret_key}"},
            ) as answer:
                assert answer.status == 200
                assert (await answer.json())["data"]["reference"] == COMPLETED_REFERENCE
    assert (guarded.tunnels, guarded.forwarded, guarded.refused) == (1, 1, 0)
    assert "Authorization" not in guarded.requests[0].headers


def test_a_proxy_without_credentials_has_no_url_with_credentials(
    forward_proxy: ForwardProxy,
) -> None:
    with pytest.raises(RuntimeError, match="takes no credentials"):
        _ = forward_proxy.url_with_credentials


# --- what it will not do ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "request_line",
    [b"CONNECT example.com:443 HTTP/1.1", b"GET http://example.com/ HTTP/1.1"],
    ids=["connect", "forward"],
)
def test_hosts_off_the_machine_are_forbidden(
    forward_proxy: ForwardProxy, request_line: bytes
) -> None:
    """Before any connection or name lookup: test traffic stays on loopback."""
    answer = exchange(forward_proxy, request_line + b"\r\nHost: example.com\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 403 Forbidden\r\n")
    assert answer.endswith(b"test proxy: the test proxy reaches loopback only\n")
    (request,) = forward_proxy.requests
    assert request.outcome == "forbidden"


def test_an_unreachable_origin_is_a_502(forward_proxy: ForwardProxy) -> None:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
    # Nothing listens on the port now: the connect is refused.
    answer = exchange(forward_proxy, f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n".encode())
    assert answer.startswith(b"HTTP/1.1 502 Bad Gateway\r\n")
    assert [r.outcome for r in forward_proxy.requests] == ["unreachable"]


@pytest.mark.parametrize(
    ("request_head", "status"),
    [
        (b"NONSENSE\r\n\r\n", b"400"),
        (b"CONNECT 127.0.0.1 HTTP/1.1\r\n\r\n", b"400"),
        (b"GET /payments HTTP/1.1\r\nHost: x\r\n\r\n", b"400"),  # origin form: not a proxy's
        (b"CONNECT 127.0.0.1:" + b"9" * 5000 + b" HTTP/1.1\r\n\r\n", b"400"),
        (b"POST http://127.0.0.1:1/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", b"501"),
        (
            b"POST http://127.0.0.1:1/ HTTP/1.1\r\nContent-Length: " + b"9" * 5000 + b"\r\n\r\n",
            b"501",
        ),
        (b"POST http://127.0.0.1:1/ HTTP/1.1\r\nContent-Length: 1048577\r\n\r\n", b"413"),
    ],
    ids=[
        "garbage",
        "connect-without-port",
        "origin-form",
        "connect-huge-port",
        "chunked-body",
        "huge-content-length",
        "body-too-large",
    ],
)
def test_what_it_cannot_serve_is_answered_and_closed(
    forward_proxy: ForwardProxy, request_head: bytes, status: bytes
) -> None:
    answer = exchange(forward_proxy, request_head)
    assert answer.startswith(b"HTTP/1.1 " + status + b" ")
    assert b"\r\nConnection: close\r\n" in answer


# --- recording, stopping ----------------------------------------------------------------------


def test_headers_are_looked_up_in_any_case_and_kept_as_sent() -> None:
    headers = Headers([("Host", "a"), ("X-Twice", "1"), ("x-twice", "2")])
    assert headers["host"] == headers["HOST"] == "a"
    assert headers["X-TWICE"] == "2"
    assert "x-Twice" in headers and "Authorization" not in headers
    assert list(headers) == ["Host", "X-Twice"]
    assert headers.pairs == (("Host", "a"), ("X-Twice", "1"), ("x-twice", "2"))


def test_clear_forgets_the_record(forward_proxy: ForwardProxy, sandbox: Sandbox) -> None:
    with through(forward_proxy.url, sandbox) as http:
        http.get(VERIFY)
    forward_proxy.clear()
    assert (forward_proxy.requests, forward_proxy.forwarded) == ([], 0)


def test_stop_cuts_open_tunnels_and_idle_connections(
    tls_sandbox: Sandbox, tls_client_context: ssl.SSLContext
) -> None:
    proxy = ForwardProxy().start()
    try:
        idle = socket.create_connection(("127.0.0.1", proxy.port), timeout=WAIT)
        tunnel = socket.create_connection(("127.0.0.1", proxy.port), timeout=WAIT)
        tunnel.sendall(f"CONNECT 127.0.0.1:{tls_sandbox.port} HTTP/1.1\r\n\r\n".encode())
        assert tunnel.recv(64) == b"HTTP/1.1 200 Connection established\r\n\r\n"
        with idle, tls_client_context.wrap_socket(tunnel, server_hostname="127.0.0.1") as tls:
            proxy.stop()  # raises if a thread did not end
            assert idle.recv(1) == b""
            assert closed_by_peer(tls)  # the tunnel is gone
    finally:
        proxy.stop()
    with pytest.raises(RuntimeError, match="not running"):
        _ = proxy.url

"""paysdk's clients behind a real forward proxy (tests/support/proxy.py): ``proxy=`` or the
environment's ``HTTPS_PROXY``, with and without credentials, to the TLS sandbox and to a plain
http:// one on loopback. The environment's proxy carries no request to this machine, so its
tests name the sandbox ``BEYOND``, which the proxy resolves to 127.0.0.1; going direct, each
backend's resolver is told the same (``resolved_beyond``), and no query leaves the machine.

Each test runs on every backend (sync, async over httpx, async over aiohttp) through conftest's
``make_loopback_client``. Every test starts with no proxy variable set (``clean_proxy_env``).
"""

from __future__ import annotations

import base64
import socket
import ssl
import traceback
from collections.abc import Callable, Iterator
from urllib.parse import quote

import anyio
import httpx
import pytest
import trustme

import paysdk
from paysdk.sandbox import COMPLETED_REFERENCE, RecordedRequest, Sandbox
from tests.conftest import EitherClient, MakeClient
from tests.support.hostile import HostileServer, raw
from tests.support.ports import unused_port
from tests.support.proxy import BEYOND, ForwardProxy, ProxiedRequest
from tests.support.scripted import Scripted

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("clean_proxy_env")]

VERIFY = f"/payment/{COMPLETED_REFERENCE}"
BAD_REQUEST = b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
"""What a plain-HTTP proxy may answer a TLS hello with, as a request it cannot read."""
USER, PASSWORD = "merchant", "p@ss:w/rd-Zk41"  # characters a URL's userinfo must percent-encode


@pytest.fixture
def guarded() -> Iterator[ForwardProxy]:
    """A proxy that answers 407 unless given :data:`USER` and :data:`PASSWORD`."""
    with ForwardProxy(credentials=(USER, PASSWORD)) as proxy:
        yield proxy


def connect(make: MakeClient, sandbox: Sandbox, **options: object) -> EitherClient:
    """A client of ``make``'s kind for ``sandbox``: its URL and key, and ``options``."""
    return make(base_url=sandbox.base_url, secret_key=sandbox.secret_key, **options)


def connect_beyond(make: MakeClient, sandbox: Sandbox, **options: object) -> EitherClient:
    """``connect``, the sandbox named ``BEYOND``: a service beyond this machine, as the
    environment's proxy carries requests to."""
    base_url = sandbox.base_url.replace("127.0.0.1", BEYOND)
    return make(base_url=base_url, secret_key=sandbox.secret_key, **options)


@pytest.fixture
def resolved_beyond(monkeypatch: pytest.MonkeyPatch) -> None:
    """``BEYOND`` resolves to 127.0.0.1 for the client too (every backend asks
    ``socket.getaddrinfo``), so a request sent direct reaches the sandbox with no DNS query."""
    resolve = socket.getaddrinfo

    def resolver(host: object, *args: object, **kwargs: object) -> object:
        return resolve("127.0.0.1" if host == BEYOND else host, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(socket, "getaddrinfo", resolver)


def headers_of(request: RecordedRequest) -> dict[str, str]:
    """The headers the sandbox recorded for ``request``, by lower-case name."""
    return {name.lower(): value for name, value in request.headers.items()}


def assert_only_tunnels(
    requests: list[ProxiedRequest], sandbox: Sandbox, host: str = "127.0.0.1"
) -> None:
    """The proxy was asked for tunnels to ``sandbox`` (named ``host``) and nothing else, and was
    shown neither an Authorization header nor the secret key: those went inside, encrypted."""
    assert requests
    for request in requests:
        assert (request.method, request.target) == ("CONNECT", f"{host}:{sandbox.port}")
        assert request.outcome == "tunnelled"
        assert "Authorization" not in request.headers
        seen = [request.target, *(f"{name}: {value}" for name, value in request.headers.pairs)]
        assert not any(sandbox.secret_key in text for text in seen)


# --- tunnels to the TLS sandbox ---------------------------------------------------------------


async def test_https_through_proxy_is_a_tunnel_the_proxy_cannot_read(
    forward_proxy: ForwardProxy,
    tls_sandbox: Sandbox,
    tls_client_context: ssl.SSLContext,
    make_loopback_client: MakeClient,
) -> None:
    """``proxy=`` carries HTTPS as a CONNECT tunnel: the call succeeds, the proxy sees only
    ``CONNECT 127.0.0.1:PORT``, and the sandbox sees the request with its key."""
    client = connect(
        make_loopback_client, tls_sandbox, verify=tls_client_context, proxy=forward_proxy.url
    )
    assert (await client.verify(COMPLETED_REFERENCE)).succeeded
    assert forward_proxy.tunnels >= 1
    assert (forward_proxy.forwarded, forward_proxy.refused) == (0, 0)
    assert_only_tunnels(forward_proxy.requests, tls_sandbox)
    (request,) = tls_sandbox.requests
    assert request.path == VERIFY
    assert headers_of(request)["authorization"] == "<redacted>"  # sent, and right: a 200


async def test_one_tunnel_carries_a_clients_successive_calls(
    forward_proxy: ForwardProxy,
    tls_sandbox: Sandbox,
    tls_client_context: ssl.SSLContext,
    make_loopback_client: MakeClient,
) -> None:
    """The tunnelled TLS connection is kept alive and reused: three calls, one CONNECT."""
    client = connect(
        make_loopback_client, tls_sandbox, verify=tls_client_context, proxy=forward_proxy.url
    )
    await client.verify(COMPLETED_REFERENCE)
    await client.verify(COMPLETED_REFERENCE)
    assert len(await client.list_payments()) == len(tls_sandbox.payments)
    assert forward_proxy.tunnels == 1
    assert len(forward_proxy.requests) == 1
    assert [r.path for r in tls_sandbox.requests] == [VERIFY, VERIFY, "/payments"]


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
@pytest.mark.parametrize("variable", ["HTTPS_PROXY", "ALL_PROXY", "HTTP_PROXY"])
async def test_the_environments_proxy_carries_nothing_to_this_machine(
    host: str,
    variable: str,
    forward_proxy: ForwardProxy,
    tls_sandbox: Sandbox,
    sandbox: Sandbox,
    tls_client_context: ssl.SSLContext,
    make_loopback_client: MakeClient,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A proxy's clients (a CI runner, a corporate laptop) reach a sandbox on their own
    loopback address direct: through the proxy, ``127.0.0.1`` would be the proxy's machine, and
    the key, allowed over plain HTTP to this machine alone, would cross the network to it."""
    monkeypatch.setenv(variable, forward_proxy.url)
    service, options = (
        (sandbox, {}) if variable == "HTTP_PROXY" else (tls_sandbox, {"verify": tls_client_context})
    )
    client = make_loopback_client(
        base_url=service.base_url.replace("127.0.0.1", host),
        secret_key=service.secret_key,
        **options,
    )
    assert (await client.verify(COMPLETED_REFERENCE)).succeeded
    assert forward_proxy.requests == []
    assert [r.path for r in service.requests] == [VERIFY]


@pytest.mark.usefixtures("resolved_beyond")
async def test_the_environments_https_proxy_is_followed_and_no_proxy_bypasses_it(
    forward_proxy: ForwardProxy,
    tls_sandbox: Sandbox,
    tls_client_context: ssl.SSLContext,
    make_loopback_client: MakeClient,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without ``proxy=``, ``HTTPS_PROXY`` leads to the proxy (a tunnel, as with ``proxy=``);
    with ``NO_PROXY`` naming the host, the client goes direct and the proxy sees nothing."""
    monkeypatch.setenv("HTTPS_PROXY", forward_proxy.url)
    proxied = connect_beyond(make_loopback_client, tls_sandbox, verify=tls_client_context)
    assert (await proxied.verify(COMPLETED_REFERENCE)).succeeded
    assert forward_proxy.tunnels == 1
    assert_only_tunnels(forward_proxy.requests, tls_sandbox, BEYOND)

    forward_proxy.clear()
    monkeypatch.setenv("NO_PROXY", BEYOND)
    direct = connect_beyond(make_loopback_client, tls_sandbox, verify=tls_client_context)
    assert (await direct.verify(COMPLETED_REFERENCE)).succeeded
    assert forward_proxy.requests == []
    assert [r.path for r in tls_sandbox.requests] == [VERIFY, VERIFY]


async def test_a_host_beyond_ascii_is_asked_of_the_proxy_in_idna(
    forward_proxy: ForwardProxy, make_loopback_client: MakeClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ``base_url`` host beyond ASCII goes to the proxy as its IDNA name, on every backend:
    the CONNECT names ``xn--bcher-kva.example:443`` (here refused, 403, as not loopback), not
    the name's UTF-8 bytes, and ``NO_PROXY`` is read against that same name."""
    monkeypatch.setenv("HTTPS_PROXY", forward_proxy.url)
    monkeypatch.setenv("NO_PROXY", "bücher.example")
    client = make_loopback_client(
        base_url="https://bücher.example", secret_key="sk_test_proxied_0123", max_retries=0
    )
    with pytest.raises(paysdk.ProxyAuthenticationError):
        await client.verify(COMPLETED_REFERENCE)
    assert [(r.method, r.target) for r in forward_proxy.requests] == [
        ("CONNECT", "xn--bcher-kva.example:443")
    ]


async def test_a_host_beyond_ascii_that_no_proxy_names_fails_without_blaming_the_proxy(
    forward_proxy: ForwardProxy, make_loopback_client: MakeClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``NO_PROXY`` naming the IDNA name of a ``base_url`` host beyond ASCII sends it direct on
    every backend; a name that does not resolve is then the service's failure, not said to be
    the proxy's (which was never asked)."""
    monkeypatch.setenv("HTTPS_PROXY", forward_proxy.url)
    monkeypatch.setenv("NO_PROXY", "xn--bcher-kva.invalid")
    client = make_loopback_client(
        base_url="https://bücher.invalid", secret_key="sk_test_proxied_0123", max_retries=0
    )
    with pytest.raises(paysdk.APIConnectionError) as caught:
        await client.verify(COMPLETED_REFERENCE)
    assert str(caught.value).startswith("could not reach the service: "), str(caught.value)
    assert forward_proxy.requests == []


@pytest.mark.usefixtures("resolved_beyond")
async def test_a_no_proxy_entry_with_a_port_bypasses_that_port_only(
    forward_proxy: ForwardProxy,
    tls_sandbox: Sandbox,
    tls_client_context: ssl.SSLContext,
    make_loopback_client: MakeClient,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``NO_PROXY=host:port``, as httpx reads it: the service on that port is reached direct,
    the same host on another port still through ``HTTPS_PROXY``."""
    monkeypatch.setenv("HTTPS_PROXY", forward_proxy.url)
    monkeypatch.setenv("NO_PROXY", f"{BEYOND}:{tls_sandbox.port}")
    direct = connect_beyond(make_loopback_client, tls_sandbox, verify=tls_client_context)
    assert (await direct.verify(COMPLETED_REFERENCE)).succeeded
    assert forward_proxy.requests == []

    monkeypatch.setenv("NO_PROXY", f"{BEYOND}:{forward_proxy.port}")  # another port
    proxied = connect_beyond(make_loopback_client, tls_sandbox, verify=tls_client_context)
    assert (await proxied.verify(COMPLETED_REFERENCE)).succeeded
    assert_only_tunnels(forward_proxy.requests, tls_sandbox, BEYOND)
    assert [r.path for r in tls_sandbox.requests] == [VERIFY, VERIFY]


@pytest.mark.usefixtures("resolved_beyond")
async def test_the_environment_is_read_when_the_client_is_made(
    forward_proxy: ForwardProxy,
    tls_sandbox: Sandbox,
    tls_client_context: ssl.SSLContext,
    make_loopback_client: MakeClient,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``HTTPS_PROXY`` set after a client is made does not reroute that client."""
    client = connect_beyond(make_loopback_client, tls_sandbox, verify=tls_client_context)
    monkeypatch.setenv("HTTPS_PROXY", forward_proxy.url)
    assert (await client.verify(COMPLETED_REFERENCE)).succeeded
    assert forward_proxy.requests == []
    assert len(tls_sandbox.requests) == 1


async def test_no_proxy_set_after_a_client_is_made_does_not_reroute_it(
    forward_proxy: ForwardProxy,
    tls_sandbox: Sandbox,
    tls_client_context: ssl.SSLContext,
    make_loopback_client: MakeClient,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``NO_PROXY`` is read with ``HTTPS_PROXY``, when the client is made: one set before the
    client's first call does not send it direct."""
    monkeypatch.setenv("HTTPS_PROXY", forward_proxy.url)
    client = connect_beyond(make_loopback_client, tls_sandbox, verify=tls_client_context)
    monkeypatch.setenv("NO_PROXY", BEYOND)
    assert (await client.verify(COMPLETED_REFERENCE)).succeeded
    assert_only_tunnels(forward_proxy.requests, tls_sandbox, BEYOND)


# --- a proxy that wants credentials -----------------------------------------------------------


async def test_credentials_in_the_proxy_url_are_sent_to_the_proxy_only(
    guarded: ForwardProxy,
    tls_sandbox: Sandbox,
    tls_client_context: ssl.SSLContext,
    make_loopback_client: MakeClient,
) -> None:
    """``proxy="http://user:pass@host:port"``: the CONNECT carries them as Proxy-Authorization
    (Basic), the tunnel opens and the call succeeds; the service is never shown them."""
    client = connect(
        make_loopback_client,
        tls_sandbox,
        verify=tls_client_context,
        proxy=guarded.url_with_credentials,
    )
    assert (await client.verify(COMPLETED_REFERENCE)).succeeded
    assert (guarded.tunnels, guarded.refused) == (1, 0)
    assert_only_tunnels(guarded.requests, tls_sandbox)
    (connect_request,) = guarded.requests
    scheme, _, token = connect_request.headers["Proxy-Authorization"].partition(" ")
    assert scheme == "Basic"
    assert base64.b64decode(token).decode() == f"{USER}:{PASSWORD}"
    (request,) = tls_sandbox.requests
    assert "proxy-authorization" not in headers_of(request)
    assert PASSWORD not in repr(client.client)
    assert quote(PASSWORD, safe="") not in repr(client.client)


@pytest.mark.parametrize(
    ("user", "password"),
    [("usér", "pässwörd-Zk41"), ("merchant", "日本語-Zk41"), ("merchant", "p%zz-Zk41")],
    ids=["latin", "cjk", "percent"],
)
async def test_credentials_beyond_ascii_in_the_proxy_url_open_the_tunnel(
    user: str,
    password: str,
    tls_sandbox: Sandbox,
    tls_client_context: ssl.SSLContext,
    make_loopback_client: MakeClient,
) -> None:
    """A proxy user or password with letters beyond ASCII (percent-encoded in the URL as
    UTF-8), or a literal ``%``, is sent as RFC 7617's UTF-8 Basic credentials: the tunnel opens
    and the call succeeds on every backend, not a TypeError from the HTTP library."""
    with ForwardProxy(credentials=(user, password)) as proxy:
        client = connect(
            make_loopback_client,
            tls_sandbox,
            verify=tls_client_context,
            proxy=proxy.url_with_credentials,
        )
        assert (await client.verify(COMPLETED_REFERENCE)).succeeded
        (connect_request,) = proxy.requests
        token = connect_request.headers["Proxy-Authorization"].removeprefix("Basic ")
        assert base64.b64decode(token).decode() == f"{user}:{password}"
        assert (proxy.tunnels, proxy.refused) == (1, 0)
        assert password not in repr(client.client)
        await client.close()  # while its proxy runs: the tunnel ends from the client's side


@pytest.mark.parametrize("password", [None, "hunter2-Qx7"], ids=["without", "wrong"])
async def test_a_proxy_refusing_the_tunnel_is_a_connection_error_that_hides_the_password(
    password: str | None,
    guarded: ForwardProxy,
    tls_sandbox: Sandbox,
    tls_client_context: ssl.SSLContext,
    make_loopback_client: MakeClient,
) -> None:
    """A 407 to the CONNECT (no credentials, or the wrong ones) is ProxyAuthenticationError (an
    APIConnectionError), neither a certificate error nor the HTTP library's own exception, and
    is not retried, since the next attempt would send the same credentials; no password is in
    the error (its traceback and causes printed) or the client's repr, and the sandbox is never
    reached."""
    proxy = (
        guarded.url if password is None else f"http://{USER}:{password}@127.0.0.1:{guarded.port}"
    )
    client = connect(
        make_loopback_client, tls_sandbox, verify=tls_client_context, proxy=proxy, max_retries=2
    )
    with pytest.raises(paysdk.APIConnectionError) as caught:
        await client.verify(COMPLETED_REFERENCE)
    error = caught.value
    assert type(error) is paysdk.ProxyAuthenticationError
    assert "407" in str(error)
    assert (error.attempts, client.sleeps) == (1, [])
    assert (guarded.refused, guarded.tunnels, len(guarded.requests)) == (1, 0, 1)
    assert tls_sandbox.requests == []
    shown = "".join(traceback.format_exception(error)) + repr(error) + repr(client.client)
    secrets = [PASSWORD, quote(PASSWORD, safe=""), tls_sandbox.secret_key]
    assert not [secret for secret in [*secrets, password or PASSWORD] if secret in shown]


@pytest.mark.parametrize(
    ("refusal", "retried"), [("502 Bad Gateway", True), ("403 Forbidden", False)]
)
async def test_a_proxy_that_does_not_open_the_tunnel_is_named_with_its_answer(
    refusal: str,
    retried: bool,
    forward_proxy: ForwardProxy,
    tls_client_context: ssl.SSLContext,
    make_loopback_client: MakeClient,
) -> None:
    """A CONNECT answered 502 (the proxy cannot reach the service, which may come back) or 403
    (its policy refuses the host, which no retry changes): an error naming the proxy and where
    it was configured, saying it did not open the tunnel, with its status and reason, in the
    same words on every backend. The 502 is an APIConnectionError, retried; the 403 a
    ProxyAuthenticationError after one attempt, saying whom to ask."""
    dead = f"127.0.0.1:{unused_port()}"  # a loopback port nothing listens on: the proxy's 502
    address = dead if refusal.startswith("502") else "service.test:443"  # not loopback: 403
    client = make_loopback_client(
        base_url=f"https://{address}",
        secret_key="sk_test_proxied_0123",
        verify=tls_client_context,
        proxy=forward_proxy.url,
        max_retries=1,
    )
    with pytest.raises(paysdk.APIConnectionError) as caught:
        await client.verify(COMPLETED_REFERENCE)
    error = caught.value
    assert str(error).startswith(
        f"the proxy {forward_proxy.url} (from proxy=) did not open a tunnel to the service at "
        f"{address}: {refusal}"
    )
    if retried:
        assert type(error) is paysdk.APIConnectionError
        assert (error.attempts, len(client.sleeps)) == (2, 1)
        assert [request.method for request in forward_proxy.requests] == ["CONNECT", "CONNECT"]
    else:
        assert type(error) is paysdk.ProxyAuthenticationError
        assert "its policy does not let this client reach that host" in str(error)
        assert (error.attempts, client.sleeps) == (1, [])
        assert [request.method for request in forward_proxy.requests] == ["CONNECT"]


@pytest.mark.parametrize(
    ("status", "retried"),
    [
        ("400 Bad Request", False),
        ("405 Method Not Allowed", False),
        ("502 Bad Gateway", True),
        ("503 Service Unavailable", True),
        ("504 Gateway Timeout", True),
    ],
)
async def test_a_proxy_that_will_not_carry_tunnels_is_not_retried_as_an_outage(
    status: str,
    retried: bool,
    hostile: HostileServer,
    make_loopback_client: MakeClient,
) -> None:
    """A CONNECT answered 400 or 405 (the proxy does not take such a request, or tunnels at
    all: no retry changes that) is a ProxyAuthenticationError after one attempt, naming the
    proxy and its answer and saying what to check; a 502, 503 or 504 (the way on is down for
    now) is an APIConnectionError, retried. The same on every backend."""
    answer = b"HTTP/1.1 %s\r\nContent-Length: 0\r\n\r\n" % status.encode()
    hostile.script(raw(answer), raw(answer))
    client = make_loopback_client(
        base_url="https://service.test",
        secret_key="sk_test_proxied_0123",
        proxy=hostile.base_url,
        max_retries=1,
    )
    with pytest.raises(paysdk.APIConnectionError) as caught:
        await client.verify(COMPLETED_REFERENCE)
    error = caught.value
    assert str(error).startswith(
        f"the proxy {hostile.base_url} (from proxy=) did not open a tunnel to the service at "
        f"service.test:443: {status}"
    )
    if retried:
        assert type(error) is paysdk.APIConnectionError
        assert (error.attempts, len(client.sleeps), hostile.attempts) == (2, 1, 2)
    else:
        assert type(error) is paysdk.ProxyAuthenticationError
        assert "does not carry this client's tunnels" in str(error)
        assert (error.attempts, client.sleeps, hostile.attempts) == (1, [], 1)


@pytest.mark.parametrize("where", ["proxy=", "HTTPS_PROXY", "https_proxy", "ALL_PROXY"])
async def test_a_proxy_that_refuses_the_connection_is_named_with_where_it_was_configured(
    where: str,
    tls_sandbox: Sandbox,
    tls_client_context: ssl.SSLContext,
    make_loopback_client: MakeClient,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Nothing listens at the proxy's address: an APIConnectionError naming the proxy (not the
    service, which was never tried) and where it was configured, in the same words on every
    backend, without its password; retried, as a proxy may be restarting."""
    port = unused_port()
    url = f"http://{USER}:{quote(PASSWORD, safe='')}@127.0.0.1:{port}"
    options: dict[str, object] = {"verify": tls_client_context, "max_retries": 1}
    if where == "proxy=":
        options["proxy"] = url
    else:
        monkeypatch.setenv(where, url)
    client = connect_beyond(make_loopback_client, tls_sandbox, **options)
    with pytest.raises(paysdk.APIConnectionError) as caught:
        await client.verify(COMPLETED_REFERENCE)
    error = caught.value
    configured = where if where == "proxy=" else f"the environment's {where}"
    assert type(error) is paysdk.APIConnectionError
    assert str(error).startswith(
        f"could not connect to the proxy http://127.0.0.1:{port} (from {configured}): "
        "Connection refused ("
    )
    assert (error.attempts, len(client.sleeps)) == (2, 1)
    shown = "".join(traceback.format_exception(error)) + repr(error)
    assert not [
        s for s in [PASSWORD, quote(PASSWORD, safe=""), tls_sandbox.secret_key] if s in shown
    ]
    assert tls_sandbox.requests == []


async def test_a_proxys_reason_phrase_is_escaped_and_cut_in_the_error(
    tls_client_context: ssl.SSLContext,
    make_loopback_client: MakeClient,
    scripted: Callable[[list[bytes | None]], Scripted],
) -> None:
    """A proxy's reason phrase is its own text: one with a terminal escape sequence, bytes that
    are not UTF-8 and thousands of characters is shown escaped, in ASCII and cut, on every
    backend, so printing or logging the error neither drives a terminal nor fails to encode."""
    reason = b"\x1b[2J\x1b[31mEVIL \xff\xfe" + b"x" * 5000
    answer = b"HTTP/1.1 502 " + reason + b"\r\nContent-Length: 0\r\n\r\n"
    hostile = scripted([answer, None])
    client = make_loopback_client(
        base_url="https://127.0.0.1:9",
        secret_key="sk_test_proxied_0123",
        verify=tls_client_context,
        proxy=hostile.url.rstrip("/"),
        max_retries=0,
    )
    with pytest.raises(paysdk.APIConnectionError) as caught:
        await client.verify(COMPLETED_REFERENCE)
    message = str(caught.value)
    assert (
        "did not open a tunnel to the service at 127.0.0.1:9: 502 \\x1b[2J\\x1b[31mEVIL" in message
    )
    assert message.isascii()
    assert message.isprintable()
    assert len(message) < 500


async def test_a_proxy_that_hangs_up_is_named_as_the_way_the_service_was_not_reached(
    tls_client_context: ssl.SSLContext,
    make_loopback_client: MakeClient,
    scripted: Callable[[list[bytes | None]], Scripted],
) -> None:
    """A proxy that closes the connection without answering the CONNECT: an APIConnectionError
    that says the service was not reached through that proxy (named, with where it was
    configured), on every backend, retried as a broken connection is."""
    hanging_up = scripted([None, None])
    proxy = hanging_up.url.rstrip("/")
    client = make_loopback_client(
        base_url="https://127.0.0.1:9",
        secret_key="sk_test_proxied_0123",
        verify=tls_client_context,
        proxy=proxy,
        max_retries=1,
    )
    with pytest.raises(paysdk.APIConnectionError) as caught:
        await client.verify(COMPLETED_REFERENCE)
    assert type(caught.value) is paysdk.APIConnectionError
    assert str(caught.value).startswith(
        f"could not reach the service through the proxy {proxy} (from proxy=): "
    )
    assert (caught.value.attempts, len(client.sleeps)) == (2, 1)


async def test_a_tunnel_the_proxy_breaks_in_the_handshake_says_how_it_broke(
    tls_client_context: ssl.SSLContext,
    make_loopback_client: MakeClient,
    scripted: Callable[[list[bytes | None]], Scripted],
) -> None:
    """A proxy that answers the CONNECT 200, sends bytes that are not TLS and hangs up: an
    APIConnectionError through that proxy, retried, whose message says what the connection
    met (a reset, a disconnection), not only the name of a library's exception class."""
    established = b"HTTP/1.1 200 Connection established\r\n\r\n\x00garbage\xff" * 4
    breaking = scripted([established, None, established, None])
    client = make_loopback_client(
        base_url="https://127.0.0.1:9",
        secret_key="sk_test_proxied_0123",
        verify=tls_client_context,
        proxy=breaking.url.rstrip("/"),
        max_retries=1,
    )
    with pytest.raises(paysdk.APIConnectionError) as caught:
        await client.verify(COMPLETED_REFERENCE)
    message = str(caught.value)
    assert message.startswith("could not reach the service through the proxy "), message
    said = message.partition("(from proxy=): ")[2].partition(" (GET ")[0]
    assert said not in ("ConnectError", "ReadError", "WriteError", ""), message
    assert (caught.value.attempts, len(client.sleeps)) == (2, 1)


async def test_an_answer_through_the_proxy_that_is_not_http_names_the_proxy(
    make_loopback_client: MakeClient, scripted: Callable[[list[bytes | None]], Scripted]
) -> None:
    """Through a proxy, an answer no parser reads as HTTP may be the proxy's own: on every
    backend, the message names the proxy it came through, and the call is retried."""
    not_http = b"SSH-2.0-OpenSSH_9.6\r\n\r\n"
    garbling = scripted([not_http, not_http])
    proxy = garbling.url.rstrip("/")
    client = make_loopback_client(
        base_url="http://127.0.0.1:9", secret_key="sk_test_proxied_0123", proxy=proxy, max_retries=1
    )
    with pytest.raises(paysdk.APIConnectionError) as caught:
        await client.verify(COMPLETED_REFERENCE)
    assert str(caught.value).startswith(
        f"the answer through the proxy {proxy} (from proxy=) could not be read as HTTP: "
    ), str(caught.value)
    assert (caught.value.attempts, len(client.sleeps)) == (2, 1)


HOSTILE_REASON = b"Forbid\x1b[2J\t\x9b2J \xc2\x9b2J \xe2\x80\xaeden"
"""A reason phrase as h11 and aiohttp read it: ESC and a tab, a lone C1 CSI byte, and C1 CSI
and a bidi override in UTF-8."""


@pytest.mark.parametrize(
    ("status", "error_type"),
    [(403, paysdk.ProxyAuthenticationError), (407, paysdk.ProxyAuthenticationError)],
)
async def test_a_proxys_reason_phrase_reaches_the_message_without_control_characters(
    status: int,
    error_type: type[paysdk.APIConnectionError],
    hostile: HostileServer,
    make_loopback_client: MakeClient,
) -> None:
    """The proxy's reason for refusing the tunnel is quoted with its control characters shown
    as escapes, on every backend: nothing of it that would act on the terminal or log viewer
    showing the message (ESC, C1, bidi controls) is written raw."""
    challenge = b"Proxy-Authenticate: Basic realm=x\r\n" if status == 407 else b""
    answer = b"HTTP/1.1 %d %s\r\n%sContent-Length: 0\r\n\r\n" % (status, HOSTILE_REASON, challenge)
    hostile.script(raw(answer))
    client = make_loopback_client(
        base_url="https://service.test",
        secret_key="sk_test_proxied_0123",
        proxy=hostile.base_url,
        max_retries=0,
    )
    with pytest.raises(paysdk.APIConnectionError) as caught:
        await client.verify(COMPLETED_REFERENCE)
    assert type(caught.value) is error_type
    message = str(caught.value)
    assert f"{status} Forbid\\x1b[2J\\t" in message
    assert message.isascii() and message.isprintable(), repr(message)


# --- a proxy URL that cannot be right -------------------------------------------------------


@pytest.mark.parametrize("where", ["proxy=", "HTTPS_PROXY", "https_proxy"])
async def test_a_proxy_on_port_0_is_refused_when_the_client_is_made(
    where: str,
    tls_sandbox: Sandbox,
    tls_client_context: ssl.SSLContext,
    make_loopback_client: MakeClient,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A proxy URL naming port 0 (a template's placeholder, say) is a ConfigurationError before
    any request, on every backend, that hides the password: not a proxy on the scheme's default
    port, tried and retried in its place."""
    url = f"http://{USER}:{quote(PASSWORD, safe='')}@127.0.0.1:0"
    options: dict[str, object] = {"verify": tls_client_context}
    if where == "proxy=":
        options["proxy"] = url
    else:
        monkeypatch.setenv(where, url)
    with pytest.raises(paysdk.ConfigurationError, match="port 0") as caught:
        connect(make_loopback_client, tls_sandbox, **options)
    assert PASSWORD not in str(caught.value)
    assert quote(PASSWORD, safe="") not in str(caught.value)
    assert tls_sandbox.requests == []


@pytest.mark.parametrize(
    "where", ["proxy=", "HTTPS_PROXY", "ALL_PROXY", "https_proxy", "all_proxy"]
)
async def test_a_socks_proxy_is_refused_saying_only_http_proxies_are_spoken(
    where: str,
    tls_sandbox: Sandbox,
    tls_client_context: ssl.SSLContext,
    make_loopback_client: MakeClient,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``socks5://`` (which paysdk cannot use) is a ConfigurationError naming the scheme it
    refused and what it takes instead, without the password, before any request."""
    url = f"socks5://{USER}:{quote(PASSWORD, safe='')}@127.0.0.1:1080"
    options: dict[str, object] = {"verify": tls_client_context}
    if where == "proxy=":
        options["proxy"] = url
    else:
        monkeypatch.setenv(where, url)
    with pytest.raises(paysdk.ConfigurationError) as caught:
        connect(make_loopback_client, tls_sandbox, **options)
    message = str(caught.value)
    assert message.startswith("proxy: " if where == "proxy=" else f"the environment's {where}: ")
    assert "must be http:// or https://, not socks5://" in message
    assert "HTTP proxies only" in message
    assert PASSWORD not in message
    assert quote(PASSWORD, safe="") not in message


# --- an https:// proxy URL for a proxy that speaks plain HTTP -------------------------------


async def test_an_https_proxy_url_for_a_plain_http_proxy_that_answers_names_the_proxy(
    tls_sandbox: Sandbox,
    tls_client_context: ssl.SSLContext,
    make_loopback_client: MakeClient,
    scripted: Callable[[list[bytes | None]], Scripted],
) -> None:
    """``proxy="https://..."`` for a proxy that speaks plain HTTP and answers the TLS hello with
    a 400: TLSProtocolError after one attempt that names the proxy first and says to start its
    URL with http:// (not only that the service's port speaks plain HTTP), without the
    password; the service is never reached."""
    plain = scripted([BAD_REQUEST, None])
    port = int(plain.url.rsplit(":", 1)[1].strip("/"))
    proxy = f"https://{USER}:{quote(PASSWORD, safe='')}@127.0.0.1:{port}"
    client = connect(
        make_loopback_client, tls_sandbox, verify=tls_client_context, proxy=proxy, max_retries=2
    )
    with pytest.raises(paysdk.TLSProtocolError) as caught:
        await client.verify(COMPLETED_REFERENCE)
    error = caught.value
    assert str(error).startswith(
        f"the proxy https://127.0.0.1:{port} (from proxy=), or the server at "
        f"127.0.0.1:{tls_sandbox.port} behind it, did not answer in TLS ("
    )
    assert "if this one does, start its URL with http://" in str(error)
    assert (error.attempts, client.sleeps) == (1, [])
    assert tls_sandbox.requests == []
    shown = "".join(traceback.format_exception(error)) + repr(error)
    assert not [
        s for s in [PASSWORD, quote(PASSWORD, safe=""), tls_sandbox.secret_key] if s in shown
    ]


async def test_an_https_proxy_url_for_a_silent_plain_http_proxy_times_out_saying_why(
    forward_proxy: ForwardProxy,
    tls_sandbox: Sandbox,
    tls_client_context: ssl.SSLContext,
    make_loopback_client: MakeClient,
) -> None:
    """``proxy="https://..."`` for a plain-HTTP proxy that waits, silent, for the rest of the
    request it takes the TLS hello for: no client can tell it from a slow TLS server, so the
    attempt runs out its timeout; the APITimeoutError then says the proxy is spoken to in TLS
    and to start its URL with http:// if it speaks plain HTTP."""
    proxy = forward_proxy.url.replace("http://", "https://", 1)
    client = connect(
        make_loopback_client,
        tls_sandbox,
        verify=tls_client_context,
        proxy=proxy,
        timeout=httpx.Timeout(2.0, connect=0.3),  # the handshake's own timeout ends it
        max_retries=0,
    )
    with pytest.raises(paysdk.APITimeoutError) as caught:
        await client.verify(COMPLETED_REFERENCE)
    assert (
        f"; the proxy {proxy} (from proxy=) is spoken to in TLS, as its https:// URL asks: if it "
        "speaks plain HTTP, as most proxies do, start its URL with http://"
    ) in str(caught.value)
    assert forward_proxy.requests == []  # it never read a whole request
    assert tls_sandbox.requests == []


async def test_an_attempt_that_ends_in_an_https_proxys_handshake_leaves_no_socket_open(
    forward_proxy: ForwardProxy,
    tls_sandbox: Sandbox,
    tls_client_context: ssl.SSLContext,
    make_loopback_client: MakeClient,
) -> None:
    """The attempt's budget (one timeout for every phase) runs out while the TLS handshake with
    an ``https://`` proxy waits: the connection to the proxy is closed then, not left open
    until the event loop closes."""
    proxy = forward_proxy.url.replace("http://", "https://", 1)
    client = connect(
        make_loopback_client,
        tls_sandbox,
        verify=tls_client_context,
        proxy=proxy,
        timeout=0.3,
        max_retries=0,
    )
    with pytest.raises(paysdk.APITimeoutError):
        await client.verify(COMPLETED_REFERENCE)
    await client.close()
    for _ in range(500):  # up to 5 s for the proxy's thread to see the connection close
        if not forward_proxy.open_connections:
            break
        await anyio.sleep(0.01)
    assert forward_proxy.open_connections == 0


async def test_an_attempt_that_ends_in_the_services_handshake_in_a_tunnel_leaves_no_socket_open(
    forward_proxy: ForwardProxy,
    tls_client_context: ssl.SSLContext,
    make_loopback_client: MakeClient,
) -> None:
    """The proxy opens the tunnel to a service that never answers the TLS hello: the attempt's
    budget runs out in that handshake and the connection to the proxy is closed then."""
    with socket.create_server(("127.0.0.1", 0)) as silent:  # never accepts: the hello waits
        client = make_loopback_client(
            base_url=f"https://127.0.0.1:{silent.getsockname()[1]}",
            secret_key="sk_test_proxied_0123",
            verify=tls_client_context,
            proxy=forward_proxy.url,
            timeout=0.3,
            max_retries=0,
        )
        with pytest.raises(paysdk.APITimeoutError):
            await client.verify(COMPLETED_REFERENCE)
        for _ in range(500):  # up to 5 s for the proxy's thread to see the connection close
            if not forward_proxy.open_connections:
                break
            await anyio.sleep(0.01)
        assert (forward_proxy.tunnels, forward_proxy.open_connections) == (1, 0)
        await client.close()


async def test_an_https_proxys_certificate_that_does_not_verify_names_the_proxy(
    tls_sandbox: Sandbox,
    tls_client_context: ssl.SSLContext,
    make_loopback_client: MakeClient,
) -> None:
    """An ``https://`` proxy whose certificate the client's trust does not know (it is checked
    with the same trust as the service's): CertificateVerificationError after one attempt that
    names the proxy as well as the service, on every backend."""
    stranger = trustme.CA().issue_cert("127.0.0.1")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    stranger.configure_cert(context)
    with Sandbox(ssl_context=context) as untrusted:  # stands in for the proxy: TLS fails first
        proxy = f"https://127.0.0.1:{untrusted.port}"
        client = connect(
            make_loopback_client, tls_sandbox, verify=tls_client_context, proxy=proxy, max_retries=2
        )
        with pytest.raises(paysdk.CertificateVerificationError) as caught:
            await client.verify(COMPLETED_REFERENCE)
    assert str(caught.value).startswith(
        f"could not verify the TLS certificate of the proxy {proxy} (from proxy=) or of the "
        "service: "
    )
    assert (caught.value.attempts, client.sleeps) == (1, [])
    assert tls_sandbox.requests == []


# --- forwarding plain http:// ----------------------------------------------------------------


async def test_plain_http_to_a_loopback_sandbox_is_forwarded(
    forward_proxy: ForwardProxy, sandbox: Sandbox, make_loopback_client: MakeClient
) -> None:
    """An http:// base_url (loopback only) goes through the proxy as an absolute-form request,
    which the proxy reads whole: key included, which is why plain http is refused elsewhere."""
    client = connect(make_loopback_client, sandbox, proxy=forward_proxy.url)
    assert (await client.verify(COMPLETED_REFERENCE)).succeeded
    assert (forward_proxy.tunnels, forward_proxy.forwarded) == (0, 1)
    (forwarded,) = forward_proxy.requests
    assert (forwarded.method, forwarded.target) == ("GET", f"{sandbox.base_url}{VERIFY}")
    assert forwarded.outcome == "forwarded"
    assert [r.path for r in sandbox.requests] == [VERIFY]


async def test_credentials_in_the_proxy_url_go_with_a_forwarded_request(
    guarded: ForwardProxy, sandbox: Sandbox, make_loopback_client: MakeClient
) -> None:
    """A plain ``http://`` request forwarded by a proxy that wants credentials carries them as
    Proxy-Authorization, on every backend: the proxy forwards it and the call succeeds."""
    client = connect(make_loopback_client, sandbox, proxy=guarded.url_with_credentials)
    assert (await client.verify(COMPLETED_REFERENCE)).succeeded
    assert (guarded.forwarded, guarded.refused) == (1, 0)
    (forwarded,) = guarded.requests
    token = forwarded.headers["Proxy-Authorization"].removeprefix("Basic ")
    assert base64.b64decode(token).decode() == f"{USER}:{PASSWORD}"
    assert [r.path for r in sandbox.requests] == [VERIFY]


@pytest.mark.parametrize("where", ["proxy=", "HTTP_PROXY"])
@pytest.mark.parametrize("password", [None, "hunter2-Qx7"], ids=["without", "wrong"])
async def test_a_proxy_refusing_to_forward_is_the_error_a_refused_tunnel_is(
    where: str,
    password: str | None,
    guarded: ForwardProxy,
    sandbox: Sandbox,
    make_loopback_client: MakeClient,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A 407 to a forwarded plain-HTTP request is the ProxyAuthenticationError a CONNECT's 407
    is (not the service's unexpected answer), naming the proxy and where it was configured,
    after one attempt, without the password; the sandbox is never reached."""
    proxy = (
        guarded.url if password is None else f"http://{USER}:{password}@127.0.0.1:{guarded.port}"
    )
    options: dict[str, object] = {"max_retries": 2, "allow_insecure_http": True}
    if where == "proxy=":
        options["proxy"] = proxy
    else:
        monkeypatch.setenv(where, proxy)
    client = connect_beyond(make_loopback_client, sandbox, **options)
    with pytest.raises(paysdk.APIConnectionError) as caught:
        await client.verify(COMPLETED_REFERENCE)
    error = caught.value
    configured = where if where == "proxy=" else f"the environment's {where}"
    assert type(error) is paysdk.ProxyAuthenticationError
    assert str(error).startswith(
        f"the proxy {guarded.url} (from {configured}) did not forward the request to the "
        f"service at {BEYOND}:{sandbox.port}: 407 Proxy Authentication Required; check the "
        "credentials in its URL"
    )
    assert (error.attempts, client.sleeps) == (1, [])
    assert (guarded.refused, guarded.forwarded) == (1, 0)
    assert sandbox.requests == []
    shown = "".join(traceback.format_exception(error)) + repr(error)
    secrets = [PASSWORD, quote(PASSWORD, safe=""), password or PASSWORD, sandbox.secret_key]
    assert not [secret for secret in secrets if secret in shown]


# --- a certificate that fails verification inside a tunnel ------------------------------------


async def test_an_untrusted_certificate_inside_a_tunnel_is_a_certificate_error(
    forward_proxy: ForwardProxy,
    tls_sandbox: Sandbox,
    make_loopback_client: MakeClient,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The proxy opens the tunnel; the service's certificate, met inside it, is not trusted:
    CertificateVerificationError naming the problem, not a proxy failure, and not retried."""
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    client = connect(make_loopback_client, tls_sandbox, proxy=forward_proxy.url, max_retries=2)
    with pytest.raises(paysdk.CertificateVerificationError) as caught:
        await client.verify(COMPLETED_REFERENCE)
    assert "unable to get local issuer certificate" in str(caught.value)
    assert caught.value.attempts == 1
    assert client.sleeps == []
    assert forward_proxy.tunnels == 1  # the proxy did its part, once
    assert_only_tunnels(forward_proxy.requests, tls_sandbox)
    assert tls_sandbox.requests == []


@pytest.mark.parametrize("through", ["CONNECT", "forwarded"])
async def test_a_merchant_clients_proxy_refusing_its_credentials_is_the_error_paysdks_is(
    through: str,
    guarded: ForwardProxy,
    sandbox: Sandbox,
    tls_sandbox: Sandbox,
    tls_client_context: ssl.SSLContext,
) -> None:
    """A merchant's own ``http_client=`` whose proxy answers 407, to a tunnel or to a forwarded
    ``http://`` request, raises the ProxyAuthenticationError paysdk's own client raises, after
    one attempt, sync and async; the service is never reached and the password never shown."""
    service = tls_sandbox if through == "CONNECT" else sandbox
    proxy = f"http://{USER}:hunter2-Qx7@127.0.0.1:{guarded.port}"
    options = {"secret_key": service.secret_key, "base_url": service.base_url, "max_retries": 2}
    errors: list[paysdk.APIConnectionError] = []
    via, context = httpx.Proxy(proxy), tls_client_context  # as httpx 0.25 and later take them
    with (
        httpx.Client(mounts={"all://": httpx.HTTPTransport(proxy=via, verify=context)}) as http,
        paysdk.Client(http_client=http, **options) as client,  # type: ignore[arg-type]
        pytest.raises(paysdk.APIConnectionError) as caught,
    ):
        client.verify(COMPLETED_REFERENCE)
    errors.append(caught.value)
    async with (
        httpx.AsyncClient(
            mounts={"all://": httpx.AsyncHTTPTransport(proxy=via, verify=context)}
        ) as ahttp,
        paysdk.AsyncClient(http_client=ahttp, **options) as aclient,  # type: ignore[arg-type]
    ):
        with pytest.raises(paysdk.APIConnectionError) as acaught:
            await aclient.verify(COMPLETED_REFERENCE)
    errors.append(acaught.value)
    carry = "open a tunnel to" if through == "CONNECT" else "forward the request to"
    for error in errors:
        assert type(error) is paysdk.ProxyAuthenticationError
        assert str(error).startswith(
            f"the proxy did not {carry} the service at 127.0.0.1:{service.port}: 407 Proxy "
            "Authentication Required; check the credentials in "
        )
        assert error.attempts == 1
        shown = "".join(traceback.format_exception(error)) + repr(error)
        assert not [s for s in ["hunter2-Qx7", service.secret_key] if s in shown]
    assert (guarded.refused, guarded.tunnels, guarded.forwarded) == (2, 0, 0)
    assert service.requests == []

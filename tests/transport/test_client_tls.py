"""paysdk's clients over real TLS: ``verify=`` as a CA bundle path, an ``ssl.SSLContext``,
``SSL_CERT_FILE`` or ``False``, and a certificate that fails verification.

Each test runs on every backend (sync, async over httpx, async over aiohttp) through conftest's
``make_loopback_client``, against a sandbox serving HTTPS with the session's throwaway CA
(trustme). No proxy variable is set (``clean_proxy_env``), so every connection is direct.
"""

from __future__ import annotations

import datetime
import os
import ssl
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpcore
import httpx
import pytest
import trustme

import paysdk
from paysdk._transport import tls
from paysdk._transport.asyncio_stream import AsyncioStream
from paysdk.sandbox import COMPLETED_REFERENCE, Sandbox
from tests.conftest import EitherClient, MakeClient
from tests.support.tls import SERVER_NAMES

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("clean_proxy_env")]

VERIFY = f"/payment/{COMPLETED_REFERENCE}"
WAIT = 30.0
"""A generous bound on waiting for the sandbox's log, so a regression fails instead of hanging."""


@pytest.fixture
def default_trust(monkeypatch: pytest.MonkeyPatch) -> None:
    """Neither ``SSL_CERT_FILE`` nor ``SSL_CERT_DIR``: ``verify=True`` trusts certifi's bundle,
    which holds no test CA."""
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)


@pytest.fixture
def logging_tls_sandbox(tls_server_context: ssl.SSLContext) -> Iterator[Sandbox]:
    """A TLS sandbox that logs each request and each failed handshake to stderr, a line each."""
    with Sandbox(ssl_context=tls_server_context, log_requests=True) as running:
        yield running


def connect(make: MakeClient, sandbox: Sandbox, **options: object) -> EitherClient:
    """A client of ``make``'s kind for ``sandbox``: its URL and key, and ``options``."""
    return make(base_url=sandbox.base_url, secret_key=sandbox.secret_key, **options)


def serving(certificate: trustme.LeafCert) -> ssl.SSLContext:
    """A server-side context presenting ``certificate``."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    certificate.configure_cert(context)
    return context


def handshake_failures(capfd: pytest.CaptureFixture[str]) -> list[str]:
    """The sandbox's "TLS handshake failed" lines once there is one (or :data:`WAIT` passed),
    and a moment more for any other: the sandbox logs after the client has hung up."""
    printed = ""
    deadline = time.monotonic() + WAIT
    while "TLS handshake failed" not in printed and time.monotonic() < deadline:
        time.sleep(0.01)
        printed += capfd.readouterr().err
    time.sleep(0.05)
    printed += capfd.readouterr().err
    assert "Traceback" not in printed
    return [line for line in printed.splitlines() if "TLS handshake failed" in line]


async def assert_verifies_and_lists(client: EitherClient, sandbox: Sandbox) -> None:
    """``client`` verifies a payment, lists every payment and streams them, over TLS."""
    payment = await client.verify(COMPLETED_REFERENCE)
    assert payment.reference == COMPLETED_REFERENCE
    assert payment.succeeded
    references = [record.reference for record in sandbox.payments]
    assert [listed.reference for listed in await client.list_payments()] == references
    assert [listed.reference for listed in await client.drain()] == references
    assert [request.path for request in sandbox.requests] == [VERIFY, "/payments", "/payments"]


@pytest.fixture
def trust_loads(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str | None]]:
    """Each time the default trust is loaded from now on, as the ``SSL_CERT_FILE`` it read."""
    tls._default_context.cache_clear()
    loads: list[str | None] = []
    create = httpx.create_ssl_context

    def counted(*args: object, **kwargs: object) -> ssl.SSLContext:
        loads.append(os.environ.get("SSL_CERT_FILE"))
        return create(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(httpx, "create_ssl_context", counted)
    yield loads
    tls._default_context.cache_clear()


@pytest.fixture
def same_ca_again(tls_ca_bundle: str, tmp_path: Path) -> str:
    """A second file holding ``tls_ca_bundle``'s certificate."""
    again = tmp_path / "the-same-ca-again.pem"
    again.write_bytes(Path(tls_ca_bundle).read_bytes())
    return str(again)


@pytest.fixture
def not_a_bundle(tmp_path: Path) -> str:
    """A file that holds no certificate."""
    path = tmp_path / "not-a-bundle.pem"
    path.write_text("not a certificate\n")
    return str(path)


# --- trusting the service's CA ----------------------------------------------------------------


@pytest.mark.usefixtures("default_trust")
async def test_a_ca_bundle_path_verifies_lists_and_streams_payments(
    tls_sandbox: Sandbox, tls_ca_bundle: str, make_loopback_client: MakeClient
) -> None:
    """``verify="<path of a PEM bundle>"`` trusts that CA: every call succeeds over HTTPS."""
    client = connect(make_loopback_client, tls_sandbox, verify=tls_ca_bundle)
    await assert_verifies_and_lists(client, tls_sandbox)


@pytest.mark.usefixtures("default_trust")
async def test_a_ca_bundle_given_as_a_path_object_is_trusted_too(
    tls_sandbox: Sandbox, tls_ca_bundle: str, make_loopback_client: MakeClient
) -> None:
    """``verify=`` takes any ``os.PathLike`` as well as a str."""
    client = connect(make_loopback_client, tls_sandbox, verify=Path(tls_ca_bundle))
    assert (await client.verify(COMPLETED_REFERENCE)).succeeded


@pytest.mark.usefixtures("default_trust")
async def test_an_ssl_context_verifies_lists_and_streams_payments(
    tls_sandbox: Sandbox, tls_client_context: ssl.SSLContext, make_loopback_client: MakeClient
) -> None:
    """``verify=<ssl.SSLContext>`` is used as given: one trusting the test CA alone suffices."""
    client = connect(make_loopback_client, tls_sandbox, verify=tls_client_context)
    await assert_verifies_and_lists(client, tls_sandbox)


@pytest.mark.usefixtures("default_trust")
async def test_ssl_cert_file_is_the_default_trust_on_every_backend(
    tls_sandbox: Sandbox,
    tls_ca_bundle: str,
    make_loopback_client: MakeClient,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With the default ``verify``, ``SSL_CERT_FILE`` names what is trusted, as httpx has it:
    the aiohttp backend trusts exactly the same."""
    monkeypatch.setenv("SSL_CERT_FILE", tls_ca_bundle)
    client = connect(make_loopback_client, tls_sandbox)
    await assert_verifies_and_lists(client, tls_sandbox)


async def test_verify_false_reaches_a_loopback_tls_sandbox(
    tls_sandbox: Sandbox, make_loopback_client: MakeClient
) -> None:
    """``verify=False`` (allowed for a loopback base_url only) checks no certificate."""
    client = connect(make_loopback_client, tls_sandbox, verify=False)
    await assert_verifies_and_lists(client, tls_sandbox)


# --- a certificate that fails verification ----------------------------------------------------


@pytest.mark.usefixtures("default_trust")
async def test_an_untrusted_certificate_is_refused_once_and_says_why(
    logging_tls_sandbox: Sandbox,
    make_loopback_client: MakeClient,
    capfd: pytest.CaptureFixture[str],
) -> None:
    """The default trust does not know the test CA: CertificateVerificationError naming the
    problem, after one handshake (not retried, although two retries are allowed)."""
    client = connect(make_loopback_client, logging_tls_sandbox, max_retries=2)
    with pytest.raises(paysdk.CertificateVerificationError) as caught:
        await client.verify(COMPLETED_REFERENCE)
    error = caught.value
    assert "unable to get local issuer certificate" in str(error)
    assert "verify=" in str(error)  # how to trust a private CA
    assert error.attempts == 1
    assert client.sleeps == []
    # One handshake, failed; its reason varies (asyncio's TLS hangs up without an alert).
    (failed,) = handshake_failures(capfd)
    assert failed.startswith("sandbox: 127.0.0.1:")
    assert logging_tls_sandbox.requests == []  # the key was never sent
    assert logging_tls_sandbox.secret_key not in str(error) + repr(error)


@pytest.mark.parametrize(
    ("host", "problem"),
    [("127.0.0.1", "IP address mismatch"), ("localhost", "Hostname mismatch")],
)
async def test_a_certificate_for_another_name_is_refused(
    host: str,
    problem: str,
    tls_ca: trustme.CA,
    tls_client_context: ssl.SSLContext,
    make_loopback_client: MakeClient,
) -> None:
    """A certificate from a trusted CA, but for ``service.test``, not the host connected to:
    CertificateVerificationError naming the mismatch and pointing at base_url (trusting another
    CA would not help), not retried."""
    context = serving(tls_ca.issue_cert("service.test"))
    with Sandbox(ssl_context=context, host=host) as elsewhere:
        client = connect(make_loopback_client, elsewhere, verify=tls_client_context, max_retries=2)
        with pytest.raises(paysdk.CertificateVerificationError, match=problem) as caught:
            await client.verify(COMPLETED_REFERENCE)
        assert "the certificate is for other names than base_url's host" in str(caught.value)
        assert "private certificate authority" not in str(caught.value)  # trusting is no cure
        assert caught.value.attempts == 1
        assert client.sleeps == []
        assert elsewhere.requests == []


async def test_an_expired_certificate_is_refused(
    tls_ca: trustme.CA, tls_client_context: ssl.SSLContext, make_loopback_client: MakeClient
) -> None:
    """A certificate from a trusted CA for the right name, but past its end: refused as
    expired, with what to do about that (not trusting another CA), not retried."""
    now = datetime.datetime.now(datetime.timezone.utc)
    expired = tls_ca.issue_cert(
        *SERVER_NAMES,
        not_before=now - datetime.timedelta(days=30),
        not_after=now - datetime.timedelta(days=1),
    )
    with Sandbox(ssl_context=serving(expired)) as stale:
        client = connect(make_loopback_client, stale, verify=tls_client_context, max_retries=2)
        with pytest.raises(
            paysdk.CertificateVerificationError, match="certificate has expired"
        ) as caught:
            await client.verify(COMPLETED_REFERENCE)
        assert "check this machine's clock, or ask the service to renew it" in str(caught.value)
        assert "private certificate authority" not in str(caught.value)  # trusting is no cure
        assert client.sleeps == []
        assert stale.requests == []


# --- https:// to a server that speaks plain HTTP ----------------------------------------------


async def test_https_to_a_plain_http_server_is_one_attempt_that_says_so(
    sandbox: Sandbox, make_loopback_client: MakeClient
) -> None:
    """A plain-HTTP sandbox reached with an ``https://`` URL: TLSProtocolError, an
    APIConnectionError, after one attempt (retrying meets the same server), saying what to do."""
    https_url = sandbox.base_url.replace("http://", "https://", 1)
    client = make_loopback_client(base_url=https_url, secret_key=sandbox.secret_key, max_retries=2)
    with pytest.raises(paysdk.TLSProtocolError) as caught:
        await client.verify(COMPLETED_REFERENCE)
    error = caught.value
    assert isinstance(error, paysdk.APIConnectionError)
    assert f"the server at 127.0.0.1:{sandbox.port} did not answer in TLS" in str(error)
    assert "it seems to speak plain HTTP; use http:// if it is meant to, or check the port" in str(
        error
    )
    assert (error.attempts, client.sleeps) == (1, [])
    assert sandbox.secret_key not in str(error) + repr(error)


@pytest.mark.filterwarnings("ignore:ssl.TLSVersion.TLSv1:DeprecationWarning")
@pytest.mark.parametrize(
    "newest", [ssl.TLSVersion.TLSv1, ssl.TLSVersion.TLSv1_1], ids=["1.0", "1.1"]
)
async def test_a_server_offering_only_tls_1_0_or_1_1_is_one_attempt_that_says_so(
    newest: ssl.TLSVersion,
    tls_ca: trustme.CA,
    tls_client_context: ssl.SSLContext,
    make_loopback_client: MakeClient,
) -> None:
    """A server whose newest TLS is 1.0 or 1.1, which Python refuses: TLSProtocolError after one
    attempt (the next meets the same server), naming the versions and what to do."""
    context = serving(tls_ca.issue_cert(*SERVER_NAMES))
    context.minimum_version = ssl.TLSVersion.TLSv1
    context.maximum_version = newest
    context.set_ciphers("DEFAULT:@SECLEVEL=0")  # OpenSSL 3 has no TLS 1.0 cipher above level 0
    with Sandbox(ssl_context=context) as outdated:
        client = connect(make_loopback_client, outdated, verify=tls_client_context, max_retries=2)
        with pytest.raises(paysdk.TLSProtocolError) as caught:
            await client.verify(COMPLETED_REFERENCE)
        error = caught.value
        assert f"the server at 127.0.0.1:{outdated.port} offers no TLS version" in str(error)
        assert "TLS 1.0 or 1.1" in str(error)
        assert "TLS 1.2 or later" in str(error)
        assert (error.attempts, client.sleeps) == (1, [])
        assert outdated.requests == []


# --- loading the trust: once per process, and only for TLS ------------------------------------


@pytest.mark.usefixtures("default_trust")
async def test_the_clients_of_a_process_load_the_default_trust_once(
    tls_sandbox: Sandbox,
    tls_ca_bundle: str,
    make_loopback_client: MakeClient,
    monkeypatch: pytest.MonkeyPatch,
    trust_loads: list[str | None],
    same_ca_again: str,
) -> None:
    """Loading a CA bundle costs tens of milliseconds: clients made one after another (per
    request, in some apps) share one load, until ``SSL_CERT_FILE`` names another bundle."""
    monkeypatch.setenv("SSL_CERT_FILE", tls_ca_bundle)
    for _ in range(3):
        await assert_verifies_and_lists(connect(make_loopback_client, tls_sandbox), tls_sandbox)
        tls_sandbox.clear_requests()
    assert trust_loads == [tls_ca_bundle]
    monkeypatch.setenv("SSL_CERT_FILE", same_ca_again)
    tls_sandbox.clear_requests()
    await assert_verifies_and_lists(connect(make_loopback_client, tls_sandbox), tls_sandbox)
    assert trust_loads == [tls_ca_bundle, same_ca_again]


async def test_a_client_of_a_plain_http_service_loads_no_trust(
    sandbox: Sandbox, make_loopback_client: MakeClient, trust_loads: list[str | None]
) -> None:
    """An ``http://`` sandbox's client (every test and demo) never makes a TLS context."""
    client = connect(make_loopback_client, sandbox)
    assert (await client.verify(COMPLETED_REFERENCE)).succeeded
    assert len(await client.list_payments()) == len(sandbox.payments)
    assert trust_loads == []


@pytest.mark.usefixtures("default_trust")
async def test_a_trust_that_cannot_load_is_a_configuration_error_when_tls_first_needs_it(
    sandbox: Sandbox,
    tls_sandbox: Sandbox,
    make_loopback_client: MakeClient,
    monkeypatch: pytest.MonkeyPatch,
    not_a_bundle: str,
    trust_loads: list[str | None],
) -> None:
    """``SSL_CERT_FILE`` naming a file that holds no certificate: an https client is refused
    when it is made; an http one works, and its https copy (``with_options``) fails its first
    call with the same ``ConfigurationError``, not a connection error, and sends nothing."""
    monkeypatch.setenv("SSL_CERT_FILE", not_a_bundle)
    with pytest.raises(paysdk.ConfigurationError, match="cannot be loaded as a CA bundle"):
        connect(make_loopback_client, tls_sandbox)
    client = connect(make_loopback_client, sandbox)
    assert (await client.verify(COMPLETED_REFERENCE)).succeeded
    secure = EitherClient(await client.with_options(base_url=tls_sandbox.base_url))
    with pytest.raises(paysdk.ConfigurationError, match="cannot be loaded as a CA bundle"):
        await secure.verify(COMPLETED_REFERENCE)
    assert tls_sandbox.requests == []


@pytest.mark.usefixtures("default_trust")
@pytest.mark.parametrize("kind", ["missing", "not PEM", "a directory"])
async def test_an_ssl_cert_file_that_cannot_load_is_named_with_what_to_do(
    kind: str,
    tls_sandbox: Sandbox,
    make_loopback_client: MakeClient,
    monkeypatch: pytest.MonkeyPatch,
    not_a_bundle: str,
    tmp_path: Path,
) -> None:
    """A client given no ``verify=`` while ``SSL_CERT_FILE`` names a file that is missing, holds
    no certificate, or is a directory: the ConfigurationError names the variable and its value
    (not ``verify=True``, which the user never wrote) and says how to fix it."""
    path = {"missing": str(tmp_path / "gone.pem"), "not PEM": not_a_bundle}.get(kind, str(tmp_path))
    monkeypatch.setenv("SSL_CERT_FILE", path)
    with pytest.raises(paysdk.ConfigurationError) as caught:
        connect(make_loopback_client, tls_sandbox)
    message = str(caught.value)
    assert message.startswith(f"SSL_CERT_FILE={path!r} cannot be loaded as a CA bundle: ")
    assert "point it at a PEM file of CA certificates, or unset it" in message
    assert "verify=True" not in message
    assert tls_sandbox.requests == []


# --- a server that wants a client certificate -------------------------------------------------


def wanting_a_client_certificate(ca: trustme.CA, newest: ssl.TLSVersion) -> ssl.SSLContext:
    """A server-side context that refuses a client without a certificate ``ca`` issued."""
    context = serving(ca.issue_cert(*SERVER_NAMES))
    context.verify_mode = ssl.CERT_REQUIRED
    context.maximum_version = newest
    ca.configure_trust(context)
    return context


_TLS_1_2_REFUSED = (ssl.TLSVersion.TLSv1_2, "refused the TLS handshake")
_TLS_1_3_REFUSED = (ssl.TLSVersion.TLSv1_3, "requires a client certificate and was sent none")


# TLS 1.3 not on aiohttp: asyncio closes the socket when writing the request meets the server's
# reset, before it reads the alert that came first, so there that refusal is a broken pipe as
# often as not (a retried connection error); paysdk's own asyncio stream reads first.
@pytest.mark.parametrize(
    ("make_loopback_client", "newest", "said"),
    [
        pytest.param("sync", *_TLS_1_2_REFUSED, id="sync-1.2"),
        pytest.param("async", *_TLS_1_2_REFUSED, id="async-1.2"),
        pytest.param("aiohttp", *_TLS_1_2_REFUSED, id="aiohttp-1.2"),
        pytest.param("sync", *_TLS_1_3_REFUSED, id="sync-1.3"),
        pytest.param("async", *_TLS_1_3_REFUSED, id="async-1.3"),
    ],
    indirect=["make_loopback_client"],
)
@pytest.mark.usefixtures("hang_up_before_the_request")
async def test_a_server_wanting_a_client_certificate_is_one_attempt_that_says_to_pass_one(
    newest: ssl.TLSVersion,
    said: str,
    tls_ca: trustme.CA,
    tls_client_context: ssl.SSLContext,
    make_loopback_client: MakeClient,
) -> None:
    """A server that requires a client certificate, sent none: TLSProtocolError after one
    attempt (the next sends none either), saying how to pass one; never the key."""
    with Sandbox(ssl_context=wanting_a_client_certificate(tls_ca, newest)) as guarded:
        client = connect(make_loopback_client, guarded, verify=tls_client_context, max_retries=2)
        with pytest.raises(paysdk.TLSProtocolError) as caught:
            await client.verify(COMPLETED_REFERENCE)
        error = caught.value
        assert f"the server at 127.0.0.1:{guarded.port} {said}" in str(error)
        assert "client certificate" in str(error)
        assert "context.load_cert_chain(certfile, keyfile)" in str(error)
        assert (error.attempts, client.sleeps) == (1, [])
        assert guarded.requests == []
        assert guarded.secret_key not in str(error) + repr(error)


@pytest.fixture
def hang_up_before_the_request(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each TLS upgrade of the ``AsyncClient``'s own streams followed by a pause that does not
    run the event loop, as a network's round trip is: the server's alert and hang-up are in
    before the request is written. On loopback, with the server a thread of this process, they
    could otherwise arrive between the stream's look for them and its write, a window of
    microseconds that a loaded machine stretches."""
    upgrade = AsyncioStream.start_tls

    async def upgrade_then_pause(
        self: AsyncioStream, *args: Any, **kwargs: Any
    ) -> httpcore.AsyncNetworkStream:
        upgraded = await upgrade(self, *args, **kwargs)
        time.sleep(0.05)  # noqa: ASYNC251 - blocking on purpose: the loop must not read meanwhile
        return upgraded

    monkeypatch.setattr(AsyncioStream, "start_tls", upgrade_then_pause)


@pytest.mark.parametrize("make_loopback_client", ["sync", "async"], indirect=True)
@pytest.mark.usefixtures("hang_up_before_the_request")
async def test_a_tls_1_3_refusal_is_the_servers_alert_on_every_fresh_connection(
    tls_ca: trustme.CA, tls_client_context: ssl.SSLContext, make_loopback_client: MakeClient
) -> None:
    """A TLS 1.3 server refuses a client without a certificate after the client finished its
    side of the handshake, and hangs up: the request is written into that hang-up. Each of ten
    fresh connections still reads the server's alert first (TLSProtocolError saying to pass a
    certificate), never the broken pipe the write met, which would be retried."""
    context = wanting_a_client_certificate(tls_ca, ssl.TLSVersion.TLSv1_3)
    with Sandbox(ssl_context=context) as guarded:
        for _ in range(10):
            client = connect(
                make_loopback_client, guarded, verify=tls_client_context, max_retries=0
            )
            with pytest.raises(paysdk.APIConnectionError) as caught:
                await client.verify(COMPLETED_REFERENCE)
            assert type(caught.value) is paysdk.TLSProtocolError, str(caught.value)
            assert "requires a client certificate and was sent none" in str(caught.value)
            await client.close()


async def test_a_client_certificate_the_server_trusts_is_accepted(
    tls_ca: trustme.CA, tls_client_context: ssl.SSLContext, make_loopback_client: MakeClient
) -> None:
    """The cure the error names works: the certificate loaded into the context given as
    ``verify=`` is sent, and the call succeeds."""
    tls_ca.issue_cert("merchant@shop.test").configure_cert(tls_client_context)
    context = wanting_a_client_certificate(tls_ca, ssl.TLSVersion.TLSv1_3)
    with Sandbox(ssl_context=context) as guarded:
        client = connect(make_loopback_client, guarded, verify=tls_client_context)
        assert (await client.verify(COMPLETED_REFERENCE)).succeeded
        await client.close()  # while the server still answers its TLS close


async def test_a_client_certificate_the_server_does_not_trust_is_one_attempt(
    tls_ca: trustme.CA, tls_client_context: ssl.SSLContext, make_loopback_client: MakeClient
) -> None:
    """A client certificate from an authority the server does not trust (TLS 1.2, so the
    refusal comes within the handshake): TLSProtocolError after one attempt, naming it."""
    trustme.CA().issue_cert("merchant@shop.test").configure_cert(tls_client_context)
    context = wanting_a_client_certificate(tls_ca, ssl.TLSVersion.TLSv1_2)
    with Sandbox(ssl_context=context) as guarded:
        client = connect(make_loopback_client, guarded, verify=tls_client_context, max_retries=2)
        with pytest.raises(paysdk.TLSProtocolError) as caught:
            await client.verify(COMPLETED_REFERENCE)
        assert "refused this client's certificate" in str(caught.value)
        assert (caught.value.attempts, client.sleeps) == (1, [])

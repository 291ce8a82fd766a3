"""How each backend (the sync ``Client``, the ``AsyncClient`` and its aiohttp backend) reaches
the service by name over real loopback sockets: a name's addresses tried in turn, within the
attempt's budget, a resolver that never answers bounded by it too, and a name with the root's
final dot checked over TLS as the name without it. The resolver is
``socket.getaddrinfo``, which every backend asks, answering for ``localhost`` with loopback
addresses only (127.0.0.2 first, then 127.0.0.1): no DNS query is made."""

from __future__ import annotations

import os
import socket
import ssl
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

import paysdk
from paysdk.sandbox import COMPLETED_REFERENCE, Sandbox
from tests.conftest import SECRET, MakeClient
from tests.support.ports import unused_port

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("clean_proxy_env")]

FIRST, SECOND = "127.0.0.2", "127.0.0.1"
"""The addresses ``localhost`` resolves to here, in this order."""
WAIT = 5.0
"""Seconds a test's resolver or server waits at most, so a regression fails instead of hanging."""


def named(host: str | bytes | None) -> str | None:
    """The name ``getaddrinfo`` was asked for: anyio asks it in IDNA bytes."""
    return host.decode("ascii") if isinstance(host, bytes) else host


@pytest.fixture
def two_addresses(monkeypatch: pytest.MonkeyPatch) -> None:
    """``localhost`` resolves to ``FIRST``, then ``SECOND``, as a dual-stack machine's
    ``localhost`` resolves to ``::1``, then 127.0.0.1."""
    resolve = socket.getaddrinfo

    def resolver(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if named(host) != "localhost":
            return resolve(host, port, *args, **kwargs)
        return [info for address in (FIRST, SECOND) for info in resolve(address, port, *args)]

    monkeypatch.setattr(socket, "getaddrinfo", resolver)


@pytest.fixture
def never_answering() -> Iterator[int]:
    """A port on ``FIRST`` where connections are never taken: its listening socket's backlog
    is full and it never accepts, so a connect there waits, as to an address that drops it."""
    with socket.socket() as listening:
        listening.bind((FIRST, 0))
        listening.listen(0)
        port: int = listening.getsockname()[1]
        queued = []
        try:
            for _ in range(8):  # more than any kernel queues for a backlog of 0
                one = socket.socket()
                queued.append(one)
                one.setblocking(False)
                one.connect_ex((FIRST, port))
            yield port
        finally:
            for one in queued:
                one.close()


@pytest.mark.usefixtures("two_addresses")
async def test_a_name_whose_first_address_never_answers_is_reached_at_the_next(
    make_loopback_client: MakeClient, never_answering: int
) -> None:
    """The next address is tried while the first still waits, within one attempt whose
    connect timeout is the whole budget: it is not spent on the first address alone."""
    with Sandbox(host=SECOND, port=never_answering) as sandbox:
        client = make_loopback_client(
            base_url=f"http://localhost:{never_answering}",
            secret_key=sandbox.secret_key,
            timeout=WAIT,
            max_retries=0,
        )
        payment = await client.verify(COMPLETED_REFERENCE)
        assert payment.reference == COMPLETED_REFERENCE
        assert len(sandbox.requests) == 1


@pytest.mark.usefixtures("two_addresses")
async def test_a_name_refused_at_each_of_its_addresses_says_nothing_listens_there(
    make_loopback_client: MakeClient,
) -> None:
    """As a name with one address says it: a stopped sandbox, on a machine whose ``localhost``
    is ``::1`` and 127.0.0.1, is reported as one, by every backend alike."""
    port = unused_port()
    client = make_loopback_client(base_url=f"http://localhost:{port}", max_retries=0)
    with pytest.raises(paysdk.APIConnectionError) as raised:
        await client.verify(COMPLETED_REFERENCE)
    assert type(raised.value) is paysdk.APIConnectionError
    assert f"nothing listens at localhost:{port}" in str(raised.value)
    assert SECRET not in str(raised.value)


@pytest.mark.parametrize(
    "bound", [{"timeout": 0.5}, {"timeout": 30.0, "deadline": 0.5}], ids=["timeout", "deadline"]
)
async def test_a_resolver_that_never_answers_is_bounded_by_the_attempt(
    make_loopback_client: MakeClient,
    sandbox: Sandbox,
    monkeypatch: pytest.MonkeyPatch,
    bound: dict[str, float],
) -> None:
    """The system's resolver cannot be interrupted: each backend waits for it in a worker
    thread, so the call ends with its attempt's timeout or deadline while the resolver still
    waits, rather than when the resolver gives up."""
    resolve = socket.getaddrinfo
    release = threading.Event()
    answered: list[str] = []

    def hanging(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if named(host) == "localhost":
            release.wait(WAIT)
            answered.append(host)
        return resolve(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", hanging)
    port = sandbox.base_url.rsplit(":", 1)[1]
    client = make_loopback_client(
        base_url=f"http://localhost:{port}",
        secret_key=sandbox.secret_key,
        max_retries=0,
        **bound,
    )
    try:
        with pytest.raises(paysdk.APITimeoutError) as raised:
            await client.verify(COMPLETED_REFERENCE)
        assert answered == []  # the call ended while the resolver still waited
    finally:
        release.set()
    assert f"http://localhost:{port}/" in str(raised.value)
    assert sandbox.requests == []


@pytest.fixture
def final_dot_resolves(monkeypatch: pytest.MonkeyPatch) -> None:
    """``localhost.`` (``localhost`` with the root's final dot) resolves to 127.0.0.1, as a
    resolver that reads a name as fully qualified answers it."""
    resolve = socket.getaddrinfo

    def resolver(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        return resolve(SECOND if named(host) == "localhost." else host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", resolver)


@pytest.mark.usefixtures("final_dot_resolves")
async def test_an_https_name_with_the_root_s_final_dot_is_checked_without_it(
    make_loopback_client: MakeClient, tls_sandbox: Sandbox, tls_client_context: ssl.SSLContext
) -> None:
    """``https://localhost.:PORT`` is ``localhost``: its certificate, which names
    ``localhost`` (no certificate names the final dot), is accepted on every backend, as curl,
    browsers and aiohttp accept it, and not refused as another host's."""
    port = tls_sandbox.base_url.rsplit(":", 1)[1]
    client = make_loopback_client(
        base_url=f"https://localhost.:{port}",
        secret_key=tls_sandbox.secret_key,
        verify=tls_client_context,
        max_retries=0,
    )
    payment = await client.verify(COMPLETED_REFERENCE)
    assert payment.reference == COMPLETED_REFERENCE


@pytest.mark.usefixtures("final_dot_resolves")
async def test_a_merchant_s_own_client_checks_a_final_dot_name_without_it(
    tls_sandbox: Sandbox, tls_client_context: ssl.SSLContext
) -> None:
    """The same through the httpx client a merchant passes as ``http_client``, sync and async."""
    port = tls_sandbox.base_url.rsplit(":", 1)[1]
    base_url = f"https://localhost.:{port}"
    key = tls_sandbox.secret_key
    with httpx.Client(verify=tls_client_context) as http:
        client = paysdk.Client(secret_key=key, base_url=base_url, http_client=http)
        assert client.verify(COMPLETED_REFERENCE).reference == COMPLETED_REFERENCE
    async with httpx.AsyncClient(verify=tls_client_context) as async_http:
        async_client = paysdk.AsyncClient(secret_key=key, base_url=base_url, http_client=async_http)
        assert (await async_client.verify(COMPLETED_REFERENCE)).reference == COMPLETED_REFERENCE


async def test_a_resolver_that_raises_a_bug_raises_it_at_once(
    make_loopback_client: MakeClient, sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A resolver raising what no failed lookup raises (a bug in a patched ``getaddrinfo``)
    raises it from the call on every backend, rather than being waited for until the connect
    timeout and reported as the service not answering."""

    class ResolverBug(Exception):
        pass

    resolve = socket.getaddrinfo

    def buggy(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if named(host) == "localhost":
            raise ResolverBug("the resolver hook broke")
        return resolve(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", buggy)
    port = sandbox.base_url.rsplit(":", 1)[1]
    client = make_loopback_client(
        base_url=f"http://localhost:{port}",
        secret_key=sandbox.secret_key,
        timeout=WAIT,
        max_retries=0,
    )
    with pytest.raises(ResolverBug, match="the resolver hook broke"):
        await client.verify(COMPLETED_REFERENCE)
    assert sandbox.requests == []


THREADLESS = """
import socket, sys, threading
import paysdk
base_url, key, reference, addresses = sys.argv[1:]
resolve = socket.getaddrinfo
def resolver(host, port, *args, **kwargs):
    if host != "localhost":
        return resolve(host, port, *args, **kwargs)
    return [info for address in addresses.split() for info in resolve(address, port, *args)]
socket.getaddrinfo = resolver
client = paysdk.Client(base_url=base_url, secret_key=key, timeout=30.0, max_retries=0)
threading.stack_size(1 << 60)  # from here on, no thread can start: no memory maps its stack
print(client.verify(reference).reference)
"""
"""A process that can start no thread (its limit of threads reached) verifying by name."""


@pytest.mark.parametrize("addresses", [SECOND, f"{FIRST} {SECOND}"], ids=["one", "two"])
def test_a_process_that_can_start_no_thread_still_reaches_a_name(
    sandbox: Sandbox, addresses: str
) -> None:
    """Where no thread can start, the sync ``Client`` looks the name up and tries its addresses
    (the first refused here) in the caller's thread, one after another, as httpcore's backend
    does, rather than failing every call with ``RuntimeError: can't start new thread``."""
    port = sandbox.base_url.rsplit(":", 1)[1]
    argv = [f"http://localhost:{port}", sandbox.secret_key, COMPLETED_REFERENCE, addresses]
    src = str(Path(paysdk.__file__).resolve().parents[1])  # the paysdk under test
    done = subprocess.run(
        [sys.executable, "-c", THREADLESS, *argv],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": src},
        timeout=60,
        check=False,
    )
    assert done.stdout.strip() == COMPLETED_REFERENCE, done.stderr[-2000:]
    assert len(sandbox.requests) == 1


async def test_a_name_the_resolver_answers_with_no_address_is_a_connection_error(
    make_client: MakeClient, sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A resolver that answers a name with no address at all (which ``socket.create_connection``
    and asyncio each allow for) fails the call as a name that does not resolve, an
    ``APIConnectionError`` naming the URL, on the sync and the async client alike."""
    resolve = socket.getaddrinfo

    def empty(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        return [] if named(host) == "localhost" else resolve(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", empty)
    port = sandbox.base_url.rsplit(":", 1)[1]
    client = make_client(
        base_url=f"http://localhost:{port}",
        secret_key=sandbox.secret_key,
        timeout=WAIT,
        max_retries=0,
    )
    with pytest.raises(paysdk.APIConnectionError) as raised:
        await client.verify(COMPLETED_REFERENCE)
    assert type(raised.value) is paysdk.APIConnectionError
    assert f"http://localhost:{port}/" in str(raised.value)
    assert sandbox.requests == []

"""The attempt budget holds on a merchant's own ``http_client=``, sync and async, over real
loopback HTTP: a server that trickles its answer a byte at a time resets httpx's per-read
timeouts for ever, yet the call ends as paysdk's timeout soon after ``timeout``, and the
merchant's client still serves the next call."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import ssl
import threading
import time
import warnings
from collections.abc import Callable, Iterator

import httpx
import pytest

import paysdk
from paysdk import APITimeoutError
from paysdk._transport import watchdog
from tests.conftest import SECRET, listed_body, verify_body
from tests.support.hostile import (
    Behaviour,
    Connection,
    HostileServer,
    Request,
    head,
    respond_json,
    trickle_body,
    trickle_head,
)

pytestmark = pytest.mark.anyio

REFERENCE = "order-1042"
TIMEOUT = 1.0
BOUND = 3.0
"""Seconds a call with ``timeout=1`` must end within on a loaded 2-core machine; unbounded, a
trickled answer below takes 13 s or more."""

SLOW_HEAD = head(200, {"Content-Length": "2", "X-Padding": "x" * 200}) + b"{}"
"""About 13 s of answer at a byte every 0.05 s."""


OWN_CLIENTS_TIMEOUT = "no answer within the timeout (ReadTimeout)"
"""What paysdk's own sync client says when an attempt's deadline passes on its socket."""


def ok() -> Behaviour:
    return respond_json(200, verify_body(REFERENCE))


def trickled_head() -> Behaviour:
    return trickle_head(SLOW_HEAD, interval=0.05)


def trickled_body() -> Behaviour:
    return trickle_body(interval=0.05)


def trickled_chunk_extension() -> Behaviour:
    """The head at once, then a chunk's size line whose extension never ends: bytes that reach
    no chunk of body, so nothing but the socket sees them."""

    def behave(conn: Connection, request: Request) -> bool:
        conn.send(head(200, {"Content-Type": "application/json", "Transfer-Encoding": "chunked"}))
        conn.send(b"1;")
        for _ in range(400):  # 20 s of extension, a byte at a time
            conn.send(b"a")
            conn.pause(0.05)
        return False

    return behave


TRICKLES: dict[str, Callable[[], Behaviour]] = {
    "head": trickled_head,
    "body": trickled_body,
    "chunk extension": trickled_chunk_extension,
}


@pytest.fixture(params=list(TRICKLES))
def trickle(request: pytest.FixtureRequest) -> Callable[[], Behaviour]:
    return TRICKLES[request.param]


def _client(http: httpx.Client, hostile: HostileServer) -> paysdk.Client:
    return paysdk.Client(
        secret_key=SECRET,
        base_url=hostile.base_url,
        http_client=http,
        allow_insecure_http=True,
        timeout=TIMEOUT,
        max_retries=0,
    )


def _async_client(http: httpx.AsyncClient, hostile: HostileServer) -> paysdk.AsyncClient:
    return paysdk.AsyncClient(
        secret_key=SECRET,
        base_url=hostile.base_url,
        http_client=http,
        allow_insecure_http=True,
        timeout=TIMEOUT,
        max_retries=0,
    )


@pytest.mark.parametrize("reused", [False, True], ids=["new connection", "kept-alive connection"])
def test_a_trickled_answer_meets_the_budget_on_a_merchants_client(
    hostile: HostileServer, trickle: Callable[[], Behaviour], reused: bool
) -> None:
    hostile.script(*([ok()] if reused else []), trickle(), ok())
    with httpx.Client() as http:
        client = _client(http, hostile)
        if reused:
            assert client.verify(REFERENCE).reference == REFERENCE
        started = time.monotonic()
        with pytest.raises(APITimeoutError) as caught:
            client.verify(REFERENCE)
        elapsed = time.monotonic() - started
        assert client.verify(REFERENCE).reference == REFERENCE  # the merchant's pool still works
        assert not http.is_closed
    assert elapsed < BOUND, elapsed
    if trickle is not trickled_body:  # no chunk of body for a clock to see: the socket was cut
        assert str(caught.value).startswith(OWN_CLIENTS_TIMEOUT)
        assert isinstance(caught.value.__cause__, httpx.ReadTimeout)
    trickled = hostile.requests[1 if reused else 0]
    if reused:  # the trickle came on the connection the first call left open
        assert trickled.connection == hostile.requests[0].connection


@pytest.mark.parametrize("reused", [False, True], ids=["new connection", "kept-alive connection"])
async def test_a_trickled_answer_meets_the_budget_on_a_merchants_async_client(
    hostile: HostileServer, trickle: Callable[[], Behaviour], reused: bool
) -> None:
    hostile.script(*([ok()] if reused else []), trickle(), ok())
    async with httpx.AsyncClient() as http:
        client = _async_client(http, hostile)
        if reused:
            assert (await client.verify(REFERENCE)).reference == REFERENCE
        started = time.monotonic()
        with pytest.raises(APITimeoutError):
            await client.verify(REFERENCE)
        elapsed = time.monotonic() - started
        assert (await client.verify(REFERENCE)).reference == REFERENCE
        await client.close()
        assert not http.is_closed
    assert elapsed < BOUND, elapsed
    if reused:
        assert hostile.requests[1].connection == hostile.requests[0].connection


def test_a_trickled_stream_meets_its_budget_on_a_merchants_client(hostile: HostileServer) -> None:
    """``iter_payments`` reads the body one step at a time: each step is bounded too."""
    hostile.script(trickled_chunk_extension(), ok())
    with httpx.Client() as http:
        client = _client(http, hostile)
        started = time.monotonic()
        with pytest.raises(APITimeoutError):
            list(client.iter_payments())
        assert time.monotonic() - started < BOUND
        assert client.verify(REFERENCE).reference == REFERENCE


@pytest.fixture
def deadline_after_the_answer(monkeypatch: pytest.MonkeyPatch) -> list[httpx.Response]:
    """The responses of the merchant's client made with ``event_hooks={"response": [it.append]}``;
    a deadline watched while the last of them is closed passes as its watch ends: after the
    answer was read whole and its connection went back to the merchant's pool, before the
    attempt (or ``iter_payments``' read) was over, where another thread's request may already
    be on that connection."""
    responses: list[httpx.Response] = []
    end = watchdog.Watch.end

    def late_end(watch: watchdog.Watch) -> None:
        if responses and responses[-1].is_closed:
            watch._fire()
        end(watch)

    monkeypatch.setattr(watchdog.Watch, "end", late_end)
    return responses


def test_a_deadline_passing_once_the_answer_is_read_shuts_no_connection(
    hostile: HostileServer, deadline_after_the_answer: list[httpx.Response]
) -> None:
    """The answer is read: the call returns it, and its connection, kept alive in the
    merchant's client, serves the next call (shut, another thread's request on it would have
    failed as the server hanging up)."""
    hostile.script(ok())
    hooks = {"response": [deadline_after_the_answer.append]}
    with httpx.Client(event_hooks=hooks) as http:
        client = _client(http, hostile)
        assert client.verify(REFERENCE).reference == REFERENCE
        assert client.verify(REFERENCE).reference == REFERENCE
    assert len(deadline_after_the_answer) == 2
    assert hostile.connections == 1


def test_a_deadline_passing_once_a_stream_is_read_shuts_no_connection(
    hostile: HostileServer, deadline_after_the_answer: list[httpx.Response]
) -> None:
    """``iter_payments`` reads its last piece, which closes the answer: that read's deadline
    passing then shuts nothing either."""
    hostile.script(respond_json(200, {"data": [listed_body(REFERENCE)]}), ok())
    hooks = {"response": [deadline_after_the_answer.append]}
    with httpx.Client(event_hooks=hooks) as http:
        client = _client(http, hostile)
        assert [payment.reference for payment in client.iter_payments()] == [REFERENCE]
        assert client.verify(REFERENCE).reference == REFERENCE
    assert len(deadline_after_the_answer) == 2
    assert hostile.connections == 1


def test_answers_in_time_leave_no_thread_behind(hostile: HostileServer) -> None:
    """Answers in time cost no thread per call: at most one watches every deadline, and it
    ends once nothing is left to watch."""
    hostile.script(ok())
    before = set(threading.enumerate())
    with httpx.Client() as http:
        client = _client(http, hostile)
        for _ in range(20):
            assert client.verify(REFERENCE).reference == REFERENCE
        ours = {t for t in threading.enumerate() if not t.name.startswith("hostile-")} - before
        assert len(ours) <= 1  # the server's thread for the kept connection is not paysdk's
    give_up = time.monotonic() + 10
    while set(threading.enumerate()) - before and time.monotonic() < give_up:
        time.sleep(0.05)
    assert not set(threading.enumerate()) - before


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the platform cannot fork")
def test_a_forked_child_meets_the_budget_on_a_client_it_made(hostile: HostileServer) -> None:
    """The parent's deadlines and the thread watching them are not the child's: the child, which
    inherits neither running, watches its own attempts (made when the parent's thread was busy)."""
    hostile.script(trickled_head())
    with httpx.Client() as http, pytest.raises(APITimeoutError):
        _client(http, hostile).verify(REFERENCE)  # the parent's watching thread is running now
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # 3.12+: forking with threads
        pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        status = 3
        try:
            with httpx.Client() as http:
                started = time.monotonic()
                try:
                    _client(http, hostile).verify(REFERENCE)
                    status = 2
                except APITimeoutError:
                    status = 0 if time.monotonic() - started < BOUND else 1
        finally:
            os._exit(status)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, "the child's attempt was not bounded"


async def test_a_trickled_stream_meets_its_budget_on_a_merchants_async_client(
    hostile: HostileServer,
) -> None:
    hostile.script(trickled_chunk_extension(), ok())
    async with httpx.AsyncClient() as http:
        client = _async_client(http, hostile)
        started = time.monotonic()
        with pytest.raises(APITimeoutError):
            async for _ in client.iter_payments():
                pass
        assert time.monotonic() - started < BOUND
        assert (await client.verify(REFERENCE)).reference == REFERENCE
        await client.close()


@contextlib.contextmanager
def tls_trickler(context: ssl.SSLContext) -> Iterator[str]:
    """An HTTPS server on 127.0.0.1 that answers its one connection's requests: the first with
    :data:`SLOW_HEAD` a byte every 0.05 s, a later one on a new connection at once. Yields its
    base URL."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.05)
    stopping = threading.Event()

    def answer(sock: socket.socket, slow: bool) -> None:
        with context.wrap_socket(sock, server_side=True) as tls:
            tls.settimeout(5)
            received = b""
            while b"\r\n\r\n" not in received:
                received += tls.recv(4096)
            document = json.dumps(verify_body(REFERENCE)).encode()
            if not slow:
                tls.sendall(head(200, {"Content-Length": str(len(document))}) + document)
                return
            for index in range(len(SLOW_HEAD)):
                if stopping.wait(0.05):
                    return
                tls.sendall(SLOW_HEAD[index : index + 1])

    def serve() -> None:
        served = 0
        while not stopping.is_set():
            try:
                sock, _ = listener.accept()
            except TimeoutError:
                continue
            sock.settimeout(None)
            with contextlib.suppress(OSError):
                answer(sock, slow=served == 0)
            served += 1

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stopping.set()
        thread.join(10)
        listener.close()


def test_a_trickled_head_over_tls_meets_the_budget_on_a_merchants_client(
    tls_server_context: ssl.SSLContext, tls_client_context: ssl.SSLContext
) -> None:
    """The socket under TLS is shut as a plain one is: the read blocked in TLS returns too."""
    with (
        tls_trickler(tls_server_context) as base_url,
        httpx.Client(verify=tls_client_context) as http,
    ):
        client = paysdk.Client(
            secret_key=SECRET, base_url=base_url, http_client=http, timeout=TIMEOUT, max_retries=0
        )
        started = time.monotonic()
        with pytest.raises(APITimeoutError):
            client.verify(REFERENCE)
        assert time.monotonic() - started < BOUND
        assert client.verify(REFERENCE).reference == REFERENCE


def test_a_kept_alive_connection_is_told_apart_from_one_to_another_host(
    hostile: HostileServer,
) -> None:
    """Two paysdk clients share the merchant's client, each with a connection left open to its
    own host: the trickled answer comes on one, and the budget still holds."""
    with HostileServer() as other, httpx.Client() as http:
        hostile.script(ok(), trickled_head(), ok())
        other.script(ok())
        client, elsewhere = _client(http, hostile), _client(http, other)
        assert client.verify(REFERENCE).reference == REFERENCE
        assert elsewhere.verify(REFERENCE).reference == REFERENCE
        started = time.monotonic()
        with pytest.raises(APITimeoutError):
            client.verify(REFERENCE)
        assert time.monotonic() - started < BOUND
        assert hostile.requests[1].connection == hostile.requests[0].connection
        assert elsewhere.verify(REFERENCE).reference == REFERENCE  # its connection was not cut
        assert other.connections == 1


def test_paysdks_own_client_says_the_same_of_a_trickled_head(hostile: HostileServer) -> None:
    """The merchant's client and paysdk's own report a spent attempt alike."""
    hostile.script(trickled_head())
    client = paysdk.Client(
        secret_key=SECRET,
        base_url=hostile.base_url,
        allow_insecure_http=True,
        timeout=TIMEOUT,
        max_retries=0,
    )
    with client, pytest.raises(APITimeoutError) as caught:
        client.verify(REFERENCE)
    assert str(caught.value).startswith(OWN_CLIENTS_TIMEOUT)
    assert isinstance(caught.value.__cause__, httpx.ReadTimeout)

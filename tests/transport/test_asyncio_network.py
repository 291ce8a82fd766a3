"""The asyncio network backend of paysdk's own ``AsyncClient`` (``asyncio_network.py``, its
stream ``asyncio_stream.py``) over real loopback sockets, plain and TLS (trustme's CA): what it
reads and writes, each timeout and failure raised as httpcore's anyio backend raises it, a
cancelled attempt closing its socket, and which connections the default ``AsyncClient`` opens
with it (direct ones on asyncio's own loop; through a proxy, outside asyncio or on another
asyncio loop, httpcore's own backend)."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import select
import socket
import ssl
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterable
from pathlib import Path
from typing import Any, TypeVar

import httpcore
import pytest
import trustme

import paysdk
from paysdk import APITimeoutError
from paysdk._transport import asyncio_network
from paysdk._transport.asyncio_network import AsyncioBackend
from paysdk._transport.asyncio_stream import AsyncioStream
from paysdk.sandbox import COMPLETED_REFERENCE, Sandbox
from tests.conftest import SECRET
from tests.support.ports import unused_port
from tests.support.proxy import ForwardProxy
from tests.support.tls import server_context

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("clean_proxy_env")]

T = TypeVar("T")
Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]
WAIT = 10.0
"""A generous bound on waiting for the other end, so a regression fails instead of hanging."""


@contextlib.asynccontextmanager
async def serving(handler: Handler, tls: ssl.SSLContext | None = None) -> AsyncIterator[int]:
    """A loopback server in this event loop running ``handler`` on each connection; its port.
    Every connection is closed, and every handler ended, on the way out."""
    handlers: list[tuple[asyncio.Task[Any], asyncio.StreamWriter]] = []

    async def tracked(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        handlers.append((task, writer))
        await handler(reader, writer)

    server = await asyncio.start_server(tracked, "127.0.0.1", 0, ssl=tls)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()
        for task, writer in handlers:
            task.cancel()
            writer.transport.abort()
        await asyncio.gather(*(task for task, _ in handlers), return_exceptions=True)
        await server.wait_closed()


async def echo_then_close(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(asyncio.IncompleteReadError):  # a client that sends nothing
        writer.write(await reader.readexactly(5) * 2)
        await writer.drain()
    writer.close()


async def hold(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Never answer, never read: keep the connection until the client leaves."""
    await asyncio.sleep(WAIT)
    writer.close()


@pytest.fixture
async def plain_echo() -> AsyncIterator[int]:
    async with serving(echo_then_close) as port:
        yield port


@pytest.fixture
async def tls_echo(tls_server_context: ssl.SSLContext) -> AsyncIterator[int]:
    async with serving(echo_then_close, tls_server_context) as port:
        yield port


# --- reading and writing ----------------------------------------------------------------------


async def test_plain_reads_what_was_written_in_pieces_then_empty_at_eof(plain_echo: int) -> None:
    stream = await AsyncioBackend().connect_tcp("127.0.0.1", plain_echo, timeout=WAIT)
    assert isinstance(stream, AsyncioStream)
    await stream.write(b"", timeout=WAIT)  # nothing to send: returns at once
    await stream.write(b"hello", timeout=WAIT)
    received = b""
    while len(received) < 10:
        piece = await stream.read(3, timeout=WAIT)
        assert 0 < len(piece) <= 3
        received += piece
    assert received == b"hellohello"
    assert await stream.read(3, timeout=WAIT) == b""
    assert await stream.read(3, timeout=WAIT) == b""
    assert stream.get_extra_info("ssl_object") is None
    assert stream.get_extra_info("server_addr") == ("127.0.0.1", plain_echo)
    assert stream.get_extra_info("client_addr")[0] == "127.0.0.1"
    assert stream.get_extra_info("is_readable") is True  # the server closed
    assert stream.get_extra_info("anything else") is None
    await stream.aclose()
    await stream.aclose()  # twice is harmless
    with pytest.raises(httpcore.ReadError):
        await stream.read(3)
    with pytest.raises(httpcore.WriteError):
        await stream.write(b"more")


async def test_a_read_of_bytes_already_here_lets_the_loop_run_first(plain_echo: int) -> None:
    """As a read that waited would: a server that keeps the buffer full cannot hold the event
    loop (every other task, and the attempt's timeout) for as long as it sends."""
    stream = await AsyncioBackend().connect_tcp("127.0.0.1", plain_echo, timeout=WAIT)
    await stream.write(b"hello", timeout=WAIT)
    for _ in range(1000):  # until the echo is in the stream's buffer, unread
        if stream.get_extra_info("is_readable"):
            break
        await asyncio.sleep(0.01)
    ran: list[str] = []
    asyncio.get_running_loop().call_soon(ran.append, "another task's turn")
    assert await stream.read(3, timeout=WAIT) == b"hel"
    assert ran == ["another task's turn"]
    await stream.aclose()


async def test_tls_reads_and_writes_through_asyncio_s_tls(
    tls_echo: int, tls_client_context: ssl.SSLContext
) -> None:
    plain = await AsyncioBackend().connect_tcp("127.0.0.1", tls_echo, timeout=WAIT)
    assert plain.get_extra_info("is_readable") is False  # nothing sent yet, still open
    stream = await plain.start_tls(tls_client_context, "127.0.0.1", timeout=WAIT)
    assert isinstance(stream.get_extra_info("ssl_object"), ssl.SSLObject)
    assert stream.get_extra_info("socket").fileno() >= 0
    await stream.write(b"hello", timeout=WAIT)
    received = b""
    while len(received) < 10:
        received += await stream.read(65536, timeout=WAIT)
    assert received == b"hellohello"
    assert await stream.read(65536, timeout=WAIT) == b""
    await stream.aclose()


async def test_a_large_answer_read_late_arrives_whole_and_in_order(
    tls_server_context: ssl.SSLContext, tls_client_context: ssl.SSLContext
) -> None:
    """More than the stream holds unread before it stops reading: it resumes as it is read."""
    sent = bytes(range(256)) * 8192  # 2 MiB

    async def large(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(sent)
        await writer.drain()
        writer.close()

    async with serving(large, tls_server_context) as port:
        plain = await AsyncioBackend().connect_tcp("127.0.0.1", port, timeout=WAIT)
        stream = await plain.start_tls(tls_client_context, "127.0.0.1", timeout=WAIT)
        await asyncio.sleep(0.2)  # the server sends all it can meanwhile
        pieces = []
        while piece := await stream.read(65536, timeout=WAIT):
            assert len(piece) <= 65536
            pieces.append(piece)
        assert b"".join(pieces) == sent
        await stream.aclose()


async def test_tls_writes_return_once_sent_not_when_the_server_answers(
    tls_server_context: ssl.SSLContext, tls_client_context: ssl.SSLContext
) -> None:
    """A request in several writes (a kept-alive connection's next request, a body after its
    headers) to a server that answers only once it has it all, and slowly: no write waits for
    the answer, so none runs into its write timeout."""

    async def slow(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        received = await reader.readexactly(15)
        await asyncio.sleep(0.5)
        writer.write(received)
        await writer.drain()
        writer.close()

    async with serving(slow, tls_server_context) as port:
        plain = await AsyncioBackend().connect_tcp("127.0.0.1", port, timeout=WAIT)
        stream = await plain.start_tls(tls_client_context, "127.0.0.1", timeout=WAIT)
        await asyncio.sleep(0.1)  # whatever the server sends after its handshake has arrived
        for _ in range(3):
            await stream.write(b"hello", timeout=0.2)
        assert await stream.read(100, timeout=WAIT) == b"hello" * 3
        await stream.aclose()


async def test_an_idle_connection_is_checked_without_poll_where_there_is_none(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Windows has no ``select.poll``: whether an idle connection was closed is asked of
    ``select.select`` there, as httpcore's own backends ask it."""
    monkeypatch.delattr(select, "poll")
    async with serving(hold) as port:
        stream = await AsyncioBackend().connect_tcp("127.0.0.1", port, timeout=WAIT)
        assert stream.get_extra_info("is_readable") is False
        await stream.aclose()


async def test_a_server_closing_as_its_handshake_ends_is_an_eof_and_no_warning(
    tls_ca: trustme.CA, tls_client_context: ssl.SSLContext, caplog: pytest.LogCaptureFixture
) -> None:
    """Over TLS 1.2 the server's goodbye can arrive with the end of its handshake, before
    ``start_tls`` returns: asyncio logs a warning if the protocol asks it to stay open then."""
    tls_server_context = server_context(tls_ca)
    tls_server_context.maximum_version = ssl.TLSVersion.TLSv1_2

    async def goodbye(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.close()

    async with serving(goodbye, tls_server_context) as port:
        for _ in range(5):
            plain = await AsyncioBackend().connect_tcp("127.0.0.1", port, timeout=WAIT)
            await asyncio.sleep(0.01)  # the server has accepted, and answers the handshake
            stream = await plain.start_tls(tls_client_context, "127.0.0.1", timeout=WAIT)
            assert await stream.read(100, timeout=WAIT) == b""
            await stream.aclose()
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []


async def test_socket_options_are_set_on_the_socket(plain_echo: int) -> None:
    option = (socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    stream = await AsyncioBackend().connect_tcp(
        "127.0.0.1", plain_echo, timeout=WAIT, socket_options=[option]
    )
    assert stream.get_extra_info("socket").getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE)
    await stream.aclose()


async def test_a_socket_option_the_system_refuses_is_a_connect_error() -> None:
    """As httpcore's anyio backend raises it: the ``OSError`` of ``setsockopt`` its cause."""
    connected = asyncio.Event()

    async def note(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connected.set()
        await reader.read()  # until the client leaves
        writer.close()

    async with serving(note) as port:
        with pytest.raises(httpcore.ConnectError) as raised:
            await AsyncioBackend().connect_tcp(
                "127.0.0.1", port, timeout=WAIT, socket_options=[(socket.SOL_SOCKET, 12345, 1)]
            )
        assert isinstance(raised.value.__cause__, OSError)
        await asyncio.wait_for(connected.wait(), WAIT)


# --- timeouts ---------------------------------------------------------------------------------


async def test_a_read_past_its_timeout_is_a_read_timeout() -> None:
    async with serving(hold) as port:
        stream = await AsyncioBackend().connect_tcp("127.0.0.1", port, timeout=WAIT)
        with pytest.raises(httpcore.ReadTimeout) as raised:
            await stream.read(100, timeout=0.05)
        assert isinstance(raised.value.__cause__, TimeoutError)
        await stream.aclose()


async def fill(stream: httpcore.AsyncNetworkStream) -> None:
    """Write until the socket's buffers on both ends are full (each write given 50 ms)."""
    for _ in range(1000):
        await stream.write(b"x" * 1_000_000, timeout=0.05)


async def test_a_write_the_server_never_reads_is_a_write_timeout() -> None:
    async with serving(hold) as port:
        stream = await AsyncioBackend().connect_tcp("127.0.0.1", port, timeout=WAIT)
        with pytest.raises(httpcore.WriteTimeout):
            await fill(stream)
        await stream.aclose()


async def test_a_connect_out_of_time_is_a_connect_timeout() -> None:
    """No time at all: the name's resolution (in a worker thread) is already too late."""
    with pytest.raises(httpcore.ConnectTimeout) as raised:
        await AsyncioBackend().connect_tcp("localhost", unused_port(), timeout=0)
    assert isinstance(raised.value.__cause__, TimeoutError)


async def test_a_name_is_resolved_and_each_of_its_addresses_tried(plain_echo: int) -> None:
    """``localhost`` may resolve to ``::1`` first, where nothing listens: 127.0.0.1 answers."""
    stream = await AsyncioBackend().connect_tcp("localhost", plain_echo, timeout=WAIT)
    assert stream.get_extra_info("server_addr") == ("127.0.0.1", plain_echo)
    await stream.aclose()


async def test_a_connect_to_a_name_cancelled_at_any_step_leaves_no_socket_open() -> None:
    """Cancelled as the connection to one of a name's addresses is made, it is closed too:
    none is left for the garbage collector (asyncio's own race of addresses drops it)."""

    async def leave(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.transport.abort()

    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always", ResourceWarning)
        async with serving(leave) as port:
            for steps in range(40):
                connecting = asyncio.ensure_future(
                    AsyncioBackend().connect_tcp("localhost", port, timeout=WAIT)
                )
                for _ in range(steps):
                    await asyncio.sleep(0)
                connecting.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await (await connecting).aclose()
        gc.collect()  # once: in a worker that ran many tests, each collection takes a while
    assert [str(w.message) for w in warned if w.category is ResourceWarning] == []


async def test_a_unix_socket_reads_and_writes(tmp_path: Path) -> None:
    path = str(tmp_path / "echo.sock")
    server = await asyncio.start_unix_server(echo_then_close, path)
    async with server:
        stream = await AsyncioBackend().connect_unix_socket(path, timeout=WAIT)
        await stream.write(b"hello", timeout=WAIT)
        received = b""
        while piece := await stream.read(100, timeout=WAIT):
            received += piece
        assert received == b"hellohello"
        await stream.aclose()


async def test_a_handshake_the_server_never_answers_is_a_connect_timeout_and_closes(
    tls_client_context: ssl.SSLContext,
) -> None:
    left = asyncio.Event()

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while await reader.read(65536):  # the ClientHello, then the client's leaving
            pass
        left.set()
        writer.close()

    async with serving(silent) as port:
        stream = await AsyncioBackend().connect_tcp("127.0.0.1", port, timeout=WAIT)
        with pytest.raises(httpcore.ConnectTimeout):
            await stream.start_tls(tls_client_context, "127.0.0.1", timeout=0.1)
        await asyncio.wait_for(left.wait(), WAIT)


async def test_a_handshake_is_bounded_by_its_timeout_alone(
    tls_client_context: ssl.SSLContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    """asyncio's own bound on a handshake (60 s, here 50 ms) does not cut a longer timeout
    short as a ``ConnectError``: the handshake fails as the ``ConnectTimeout`` it is."""
    monkeypatch.setattr("asyncio.constants.SSL_HANDSHAKE_TIMEOUT", 0.05)
    async with serving(hold) as port:
        stream = await AsyncioBackend().connect_tcp("127.0.0.1", port, timeout=WAIT)
        with pytest.raises(httpcore.ConnectTimeout):
            await stream.start_tls(tls_client_context, "127.0.0.1", timeout=0.3)


# --- failures ---------------------------------------------------------------------------------


async def test_a_refused_connection_is_a_connect_error_caused_by_the_os_error() -> None:
    with pytest.raises(httpcore.ConnectError) as raised:
        await AsyncioBackend().connect_tcp("127.0.0.1", unused_port(), timeout=WAIT)
    assert isinstance(raised.value.__cause__, ConnectionRefusedError)


async def test_a_certificate_of_another_ca_is_a_connect_error_caused_by_tls(
    tls_echo: int,
) -> None:
    other = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    trustme.CA().configure_trust(other)
    stream = await AsyncioBackend().connect_tcp("127.0.0.1", tls_echo, timeout=WAIT)
    with pytest.raises(httpcore.ConnectError) as raised:
        await stream.start_tls(other, "127.0.0.1", timeout=WAIT)
    assert isinstance(raised.value.__cause__, ssl.SSLCertVerificationError)
    with pytest.raises(httpcore.WriteError):  # the failed handshake closed the connection
        await stream.write(b"hello")


async def test_a_reset_connection_is_a_read_error() -> None:
    async def reset(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readexactly(5)
        sock = writer.get_extra_info("socket")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        writer.transport.abort()  # a close with linger 0: an RST

    async with serving(reset) as port:
        stream = await AsyncioBackend().connect_tcp("127.0.0.1", port, timeout=WAIT)
        await stream.write(b"hello", timeout=WAIT)
        with pytest.raises(httpcore.ReadError) as raised:
            await stream.read(100, timeout=WAIT)
        assert isinstance(raised.value.__cause__, ConnectionResetError)
        with pytest.raises(httpcore.WriteError):
            await stream.write(b"again", timeout=WAIT)
        await stream.aclose()


async def test_a_cancelled_read_leaves_the_stream_to_be_closed(plain_echo: int) -> None:
    stream = await AsyncioBackend().connect_tcp("127.0.0.1", plain_echo, timeout=WAIT)
    reading = asyncio.ensure_future(stream.read(100))
    await asyncio.sleep(0.01)
    reading.cancel()
    with pytest.raises(asyncio.CancelledError):
        await reading
    await stream.write(b"hello", timeout=WAIT)  # still usable: the cancelled wait is gone
    assert (await stream.read(100, timeout=WAIT)).startswith(b"hello")
    await stream.aclose()


# --- paysdk's AsyncClient ---------------------------------------------------------------------


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """The (host, port) of each connection ``AsyncioBackend`` opened on asyncio's transports."""
    seen: list[tuple[str, int]] = []
    connect = AsyncioBackend.connect_tcp

    async def counting(
        self: AsyncioBackend, host: str, port: int, *args: Any, **kwargs: Any
    ) -> httpcore.AsyncNetworkStream:
        stream = await connect(self, host, port, *args, **kwargs)
        if isinstance(stream, AsyncioStream):
            seen.append((host, port))
        return stream

    monkeypatch.setattr(AsyncioBackend, "connect_tcp", counting)
    return seen


async def test_the_default_async_client_connects_directly_through_asyncio(
    tls_sandbox: Sandbox, tls_client_context: ssl.SSLContext, opened: list[tuple[str, int]]
) -> None:
    async with paysdk.AsyncClient(
        secret_key=tls_sandbox.secret_key,
        base_url=tls_sandbox.base_url,
        verify=tls_client_context,
    ) as client:
        assert (await client.verify(COMPLETED_REFERENCE)).succeeded
        assert (await client.verify(COMPLETED_REFERENCE)).succeeded
    assert opened == [("127.0.0.1", tls_sandbox.port)]  # one connection, kept alive


async def test_through_a_proxy_the_async_client_leaves_sockets_to_httpcore(
    tls_sandbox: Sandbox,
    tls_client_context: ssl.SSLContext,
    forward_proxy: ForwardProxy,
    opened: list[tuple[str, int]],
) -> None:
    async with paysdk.AsyncClient(
        secret_key=tls_sandbox.secret_key,
        base_url=tls_sandbox.base_url,
        verify=tls_client_context,
        proxy=forward_proxy.url,
    ) as client:
        assert (await client.verify(COMPLETED_REFERENCE)).succeeded
    assert forward_proxy.tunnels == 1
    assert opened == []


async def test_a_certificate_of_another_ca_fails_the_async_client_as_a_certificate_error(
    tls_sandbox: Sandbox, opened: list[tuple[str, int]]
) -> None:
    other = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    trustme.CA().configure_trust(other)
    async with paysdk.AsyncClient(
        secret_key=tls_sandbox.secret_key,
        base_url=tls_sandbox.base_url,
        verify=other,
        max_retries=0,
    ) as client:
        with pytest.raises(paysdk.CertificateVerificationError) as caught:
            await client.verify(COMPLETED_REFERENCE)
    assert "unable to get local issuer certificate" in str(caught.value)
    assert opened == [("127.0.0.1", tls_sandbox.port)]


async def test_an_attempt_out_of_time_mid_read_closes_its_socket(
    opened: list[tuple[str, int]],
) -> None:
    """The server trickles a body, so no read times out; the attempt's budget cancels the read
    and the connection is closed, not left to the pool or the garbage collector."""
    left = asyncio.Event()

    async def trickle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n")
        writer.write(b"Content-Length: 100000\r\n\r\n")
        try:
            while True:
                writer.write(b" ")
                await writer.drain()
                if await _eof_within(reader, 0.02):
                    break
        except ConnectionError:
            pass
        left.set()
        writer.close()

    async with (
        serving(trickle) as port,
        paysdk.AsyncClient(
            secret_key=SECRET, base_url=f"http://127.0.0.1:{port}", timeout=0.3, max_retries=0
        ) as client,
    ):
        with pytest.raises(APITimeoutError):
            await client.verify(COMPLETED_REFERENCE)
        await asyncio.wait_for(left.wait(), WAIT)  # before the client is closed
    assert len(opened) == 1


async def _eof_within(reader: asyncio.StreamReader, seconds: float) -> bool:
    try:
        return await asyncio.wait_for(reader.read(1), seconds) == b""
    except asyncio.TimeoutError:
        return False


# --- outside asyncio --------------------------------------------------------------------------


class _Fallback(httpcore.AsyncNetworkBackend):
    """A backend that records what it was asked, answering without awaiting anything."""

    def __init__(self) -> None:
        self.calls: list[tuple[object, ...]] = []

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        self.calls.append(("tcp", host, port, timeout))
        return httpcore.AsyncMockStream([])

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        self.calls.append(("unix", path, timeout))
        return httpcore.AsyncMockStream([])

    async def sleep(self, seconds: float) -> None:
        self.calls.append(("sleep", seconds))


def run_without_asyncio(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine that never suspends with no event loop, as trio's would see it."""
    with pytest.raises(StopIteration) as stopped:
        coroutine.send(None)
    result: T = stopped.value.value
    return result


def test_outside_asyncio_every_call_goes_to_the_fallback() -> None:
    fallback = _Fallback()
    backend = AsyncioBackend(fallback)
    stream = run_without_asyncio(backend.connect_tcp("example.test", 443, timeout=1.0))
    assert isinstance(stream, httpcore.AsyncMockStream)
    run_without_asyncio(backend.connect_unix_socket("/tmp/x.sock", timeout=2.0))
    run_without_asyncio(backend.sleep(0.5))
    assert fallback.calls == [
        ("tcp", "example.test", 443, 1.0),
        ("unix", "/tmp/x.sock", 2.0),
        ("sleep", 0.5),
    ]


def test_outside_asyncio_the_fallback_is_httpcore_s_trio_backend(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """httpcore's pools run under asyncio or trio only: outside asyncio, httpcore's own backend
    for trio opens the connection, as httpcore's pools choose it when given none."""
    made: list[_Fallback] = []

    def trio_backend() -> _Fallback:
        made.append(_Fallback())
        return made[-1]

    monkeypatch.setattr(httpcore, "TrioBackend", trio_backend)
    backend = AsyncioBackend()
    run_without_asyncio(backend.connect_tcp("example.test", 443))
    run_without_asyncio(backend.connect_tcp("example.test", 443))
    assert len(made) == 1
    assert made[0].calls == [("tcp", "example.test", 443, None)] * 2


async def test_on_another_asyncio_loop_every_call_goes_to_the_fallback(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A loop that is not asyncio's own (uvloop's) is left to httpcore's anyio backend."""
    made: list[_Fallback] = []

    def anyio_backend() -> _Fallback:
        made.append(_Fallback())
        return made[-1]

    monkeypatch.setattr(asyncio_network, "OWN_LOOPS", ())
    monkeypatch.setattr(httpcore, "AnyIOBackend", anyio_backend)
    backend = AsyncioBackend()
    await backend.connect_tcp("example.test", 443)
    await backend.sleep(0)
    assert len(made) == 1
    assert made[0].calls == [("tcp", "example.test", 443, None), ("sleep", 0)]
    fallback = _Fallback()
    await AsyncioBackend(fallback).connect_unix_socket("/tmp/x.sock")
    assert fallback.calls == [("unix", "/tmp/x.sock", None)]

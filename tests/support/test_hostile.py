"""The hostile server kit (tests/support/hostile.py) serves each behaviour as documented.

Driven with plain httpx and raw sockets, never paysdk, so a client bug cannot hide a kit bug.
"""

from __future__ import annotations

import gzip
import socket
import time
import zlib
from collections.abc import Callable, Iterator

import httpx
import pytest

from tests.support.hostile import (
    CORRUPT_GZIP,
    Behaviour,
    HostileServer,
    corrupt_gzip,
    cut_body,
    echo_authorization,
    endless_chunked,
    gzip_bomb,
    gzip_padded,
    head,
    large_body,
    padded,
    raw,
    reset,
    respond,
    respond_json,
    stall,
    trickle_body,
    trickle_head,
)

WAIT = 30.0
"""A generous bound on every wait, so a kit bug fails a test instead of hanging the suite."""

GET = b"GET /payments?page=2 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer sk_kit\r\n\r\n"


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with httpx.Client(trust_env=False, timeout=WAIT) as client:
        yield client


def connect(hostile: HostileServer) -> socket.socket:
    """A raw connection that has sent ``GET``."""
    conn = socket.create_connection(("127.0.0.1", hostile.port), timeout=WAIT)
    conn.sendall(GET)
    return conn


def read_all(conn: socket.socket) -> bytes:
    received = b""
    while chunk := conn.recv(65536):
        received += chunk
    return received


def read_head(conn: socket.socket) -> bytes:
    received = b""
    while b"\r\n\r\n" not in received:
        chunk = conn.recv(1)
        assert chunk, f"closed after {received!r}"
        received += chunk
    return received


def eventually(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.01)


# --- recording and scripting ------------------------------------------------------------------


def test_a_script_runs_in_order_and_its_last_behaviour_repeats(
    hostile: HostileServer, http: httpx.Client
) -> None:
    hostile.script(
        respond(503, b"busy", {"Retry-After": "1"}), respond(503), respond_json(200, {"ok": 1})
    )
    answers = [http.get(f"{hostile.base_url}/payment/x") for _ in range(4)]
    assert [a.status_code for a in answers] == [503, 503, 200, 200]
    assert (answers[0].text, answers[0].headers["retry-after"]) == ("busy", "1")
    assert answers[3].json() == {"ok": 1}
    assert hostile.attempts == 4
    assert hostile.connections == 1  # respond keeps the connection alive


def test_requests_are_recorded_with_path_query_and_headers(hostile: HostileServer) -> None:
    hostile.script(respond(204, keep_alive=False))
    with connect(hostile) as conn:
        assert read_all(conn).startswith(b"HTTP/1.1 204 No Content\r\n")
    (request,) = hostile.requests
    assert (request.method, request.target, request.path) == (
        "GET",
        "/payments?page=2",
        "/payments",
    )
    assert request.headers == {"host": "x", "authorization": "Bearer sk_kit"}
    assert (request.body, request.connection) == (b"", 1)


def test_an_unscripted_server_answers_500(hostile: HostileServer, http: httpx.Client) -> None:
    answer = http.get(hostile.base_url)
    assert (answer.status_code, answer.text) == (
        500,
        "hostile server: nothing scripted; call hostile.script(...)",
    )
    with pytest.raises(ValueError, match="at least one"):
        hostile.script()


def test_echo_authorization_quotes_the_header(hostile: HostileServer, http: httpx.Client) -> None:
    hostile.script(echo_authorization(500))
    answer = http.get(hostile.base_url, headers={"Authorization": "Bearer sk_live_secret"})
    assert answer.status_code == 500
    assert answer.json() == {
        "error": "bad header",
        "message": "Authorization: Bearer sk_live_secret",
    }


# --- broken connections and heads -------------------------------------------------------------


def test_reset_after_the_request(hostile: HostileServer, http: httpx.Client) -> None:
    hostile.script(reset())
    with connect(hostile) as conn, pytest.raises(ConnectionResetError):
        conn.recv(1)
    with pytest.raises(httpx.ReadError):
        http.get(hostile.base_url)
    assert hostile.attempts == 2


@pytest.mark.parametrize("chunked", [False, True])
def test_cut_body_announces_more_than_it_sends(
    hostile: HostileServer, http: httpx.Client, chunked: bool
) -> None:
    hostile.script(cut_body(b'{"data": []}', sent=5, chunked=chunked))
    with connect(hostile) as conn:
        received = read_all(conn)
    framing = b"Transfer-Encoding: chunked" if chunked else b"Content-Length: 12"
    assert framing in received
    assert received.endswith(b'c\r\n{"dat' if chunked else b'\r\n\r\n{"dat')
    with pytest.raises(httpx.RemoteProtocolError, match=r"incomplete|complete message body"):
        http.get(hostile.base_url)


def test_cut_body_can_reset(hostile: HostileServer) -> None:
    hostile.script(cut_body(b"x" * 100, reset=True))
    with connect(hostile) as conn, pytest.raises(ConnectionResetError):
        read_all(conn)


def test_raw_sends_a_bad_status_line(hostile: HostileServer, http: httpx.Client) -> None:
    hostile.script(raw(b"HTTP/1.1 abc Nope\r\n\r\n"))
    with connect(hostile) as conn:
        assert read_all(conn) == b"HTTP/1.1 abc Nope\r\n\r\n"
    with pytest.raises(httpx.RemoteProtocolError):
        http.get(hostile.base_url)


# --- slow servers -----------------------------------------------------------------------------


def test_stall_sends_nothing_until_the_client_gives_up(
    hostile: HostileServer, http: httpx.Client
) -> None:
    hostile.script(stall())
    with pytest.raises(httpx.ReadTimeout):
        http.get(hostile.base_url, timeout=0.2)
    eventually(lambda: hostile.open_connections == 0)  # the hang-up ended the server's thread
    hostile.script(stall(0.1))
    with connect(hostile) as conn:
        assert conn.recv(1) == b""  # closed after 0.1 s, not a byte sent


def test_trickle_head_sends_the_status_line_byte_by_byte(
    hostile: HostileServer, http: httpx.Client
) -> None:
    answer = head(204)
    hostile.script(trickle_head(answer, interval=0.05))
    with connect(hostile) as conn:
        pieces = list(iter(lambda: conn.recv(65536), b""))
    assert b"".join(pieces) == answer
    assert len(pieces) > 1  # all at once only if this test slept through the 1.3 s it takes
    hostile.script(trickle_head(interval=0.01))  # a whole 200 answer; each byte within 1 s
    reply = http.get(hostile.base_url, timeout=1)
    assert (reply.status_code, reply.content) == (200, b"{}")


@pytest.mark.parametrize("chunked", [False, True])
def test_trickle_body_sends_a_byte_at_a_time_until_the_client_hangs_up(
    hostile: HostileServer, http: httpx.Client, chunked: bool
) -> None:
    hostile.script(trickle_body(interval=0.02, byte=b"x", chunked=chunked))
    with http.stream("GET", hostile.base_url) as answer:
        assert answer.status_code == 200
        received = b""
        for piece in answer.iter_raw():
            received += piece
            if len(received) >= 3:
                break
        assert received == b"x" * len(received)
        if not chunked:
            assert answer.headers["content-length"] == str(1 << 30)
    eventually(lambda: hostile.open_connections == 0)


# --- big bodies -------------------------------------------------------------------------------


def test_padded_keeps_the_document() -> None:
    assert b"".join(padded(b'{"data": []}', 200_000)) == b"{" + b" " * 199_988 + b'"data": []}'
    with pytest.raises(ValueError, match="smaller than the document"):
        list(padded(b"{}", 1))


@pytest.mark.parametrize("chunked", [False, True])
def test_large_body_has_the_given_size(
    hostile: HostileServer, http: httpx.Client, chunked: bool
) -> None:
    hostile.script(large_body(10_000_000, document=b'{"data": []}', chunked=chunked, status=200))
    answer = http.get(hostile.base_url)
    assert len(answer.content) == 10_000_000
    assert answer.json() == {"data": []}
    assert ("transfer-encoding" in answer.headers) is chunked


def test_endless_chunked_never_ends(hostile: HostileServer, http: httpx.Client) -> None:
    hostile.script(endless_chunked())
    received = 0
    with http.stream("GET", hostile.base_url) as answer:
        assert answer.headers["transfer-encoding"] == "chunked"
        for piece in answer.iter_bytes():
            if received == 0:
                assert piece.startswith(b'{"data": [')
            received += len(piece)
            if received > 20_000_000:
                break
    assert received > 20_000_000


@pytest.mark.parametrize("chunked", [False, True])
def test_gzip_bomb_inflates_to_the_given_size(
    hostile: HostileServer, http: httpx.Client, chunked: bool
) -> None:
    hostile.script(gzip_bomb(20_000_000, chunked=chunked))
    answer = http.get(hostile.base_url)
    assert answer.headers["content-encoding"] == "gzip"
    assert (len(answer.content), answer.json()) == (20_000_000, {})
    if not chunked:
        assert int(answer.headers["content-length"]) < 50_000
    assert len(gzip.decompress(gzip_padded(b"{}", 20_000_000))) == 20_000_000


@pytest.mark.parametrize(
    ("document", "size"),
    [(b"{}", 2), (b"{}", 3), (b'{"data": []}', (1 << 20) + 12), (b"[1]", (3 << 20) + 70_001)],
)
def test_a_gzipped_body_inflates_to_the_padded_document(document: bytes, size: int) -> None:
    assert gzip.decompress(gzip_padded(document, size)) == b"".join(padded(document, size))


def test_a_gibibyte_bomb_is_about_a_megabyte() -> None:
    bomb = gzip_padded(b"{}", 1 << 30)
    assert len(bomb) < 1_100_000
    inflated = zlib.decompressobj(31)
    assert len(inflated.decompress(bomb, 1 << 16)) == 1 << 16  # a valid stream, from its start
    assert int.from_bytes(bomb[-4:], "little") == 1 << 30  # the trailer's inflated size


def test_corrupt_gzip_does_not_inflate(hostile: HostileServer, http: httpx.Client) -> None:
    hostile.script(corrupt_gzip(502))
    with connect(hostile) as conn:
        received = read_all(conn)
    assert received.startswith(b"HTTP/1.1 502 Bad Gateway\r\n")
    assert b"Content-Encoding: gzip\r\n" in received
    assert received.endswith(CORRUPT_GZIP)
    with pytest.raises(httpx.DecodingError):
        http.get(hostile.base_url)


# --- stopping ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "behaviour",
    [trickle_body(interval=60), trickle_head(interval=60), stall(), endless_chunked()],
    ids=["trickle_body", "trickle_head", "stall", "endless_chunked"],
)
def test_stop_ends_every_connection_promptly(behaviour: Behaviour) -> None:
    with HostileServer() as server:
        server.script(behaviour)
        conns = [connect(server) for _ in range(3)]  # none reads: endless_chunked blocks in send
        eventually(lambda: server.attempts == 3)
        server.stop(timeout=10)  # raises if a connection's thread is still running
        assert server.open_connections == 0
        for conn in conns:
            conn.close()
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", server.port), timeout=WAIT).close()


def test_the_request_body_is_read_and_bounded(hostile: HostileServer) -> None:
    hostile.script(respond(200, b"ok", keep_alive=False))
    with socket.create_connection(("127.0.0.1", hostile.port), timeout=WAIT) as conn:
        conn.sendall(b"POST / HTTP/1.1\r\nContent-Length: 4\r\n\r\nbody")
        assert read_all(conn).endswith(b"\r\n\r\nok")
    assert hostile.requests[0].body == b"body"
    with socket.create_connection(("127.0.0.1", hostile.port), timeout=WAIT) as conn:
        conn.sendall(b"POST / HTTP/1.1\r\nContent-Length: 99999999\r\n\r\n")
        assert read_all(conn) == b""  # refused: closed unanswered, not buffered
    assert hostile.attempts == 1

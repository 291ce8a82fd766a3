"""The sandbox stays up whatever a client sends, driven with raw sockets.

Each case checks the exact answer, that the sandbox still answers afterwards, and that nothing it
printed is a traceback (its stderr is captured with ``capfd``).
"""

from __future__ import annotations

import contextlib
import http
import io
import json
import re
import select
import socket
import struct
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

import paysdk
from paysdk import ConfigurationError
from paysdk.sandbox import Fault, Sandbox
from paysdk.sandbox import _requests as request_log

WAIT = 30.0
"""A generous bound on any single wait, so a regression fails instead of hanging the suite."""


@pytest.fixture
def sandbox() -> Iterator[Sandbox]:
    """A sandbox that logs (so a disconnect's one line can be seen) and times out idlers fast."""
    with Sandbox(log_requests=True, idle_timeout=0.5) as running:
        yield running


@pytest.fixture
def patient_sandbox() -> Iterator[Sandbox]:
    """The default idle timeout: a client thread starved for 0.5 s under load is not cut."""
    with Sandbox(log_requests=True) as running:
        yield running


def status_line(status: int) -> bytes:
    return f"HTTP/1.1 {status} {http.HTTPStatus(status).phrase}\r\n".encode()


def exchange(port: int, request: bytes) -> bytes:
    """Send ``request`` on a new connection and read until the sandbox closes it."""
    with socket.create_connection(("127.0.0.1", port), timeout=WAIT) as conn:
        conn.sendall(request)
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    return answer


def post(sandbox: Sandbox, path: str, body: bytes) -> bytes:
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Authorization: Bearer {sandbox.secret_key}\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return exchange(sandbox.port, head.encode() + body)


def list_request(sandbox: Sandbox) -> bytes:
    return (
        "GET /payments HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Authorization: Bearer {sandbox.secret_key}\r\n"
        "Connection: close\r\n\r\n"
    ).encode()


def assert_still_serving(sandbox: Sandbox) -> None:
    assert exchange(sandbox.port, list_request(sandbox)).startswith(status_line(200))


def assert_no_traceback(capfd: pytest.CaptureFixture[str]) -> str:
    err = capfd.readouterr().err
    assert "Traceback" not in err
    assert "Exception occurred" not in err
    return err


def body_of(answer: bytes) -> object:
    return json.loads(answer.partition(b"\r\n\r\n")[2])


# --- request bodies ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("length", "status", "message"),
    [
        ("abc", 400, "bad Content-Length"),
        ("-5", 400, "bad Content-Length"),
        ("\u00b2", 400, "bad Content-Length"),  # '²': str.isdigit() says yes, int() raises
        ("1\u00b9", 400, "bad Content-Length"),  # '1¹'
        ("1_0", 400, "bad Content-Length"),
        (str(2 << 20), 413, "the body is larger than the sandbox reads (1048576 bytes)"),
        ("9" * 5000, 413, "the body is larger than the sandbox reads (1048576 bytes)"),
    ],
)
def test_a_content_length_it_will_not_read_is_answered(
    sandbox: Sandbox, capfd: pytest.CaptureFixture[str], length: str, status: int, message: str
) -> None:
    request = f"POST /payments HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {length}\r\n\r\n"
    answer = exchange(sandbox.port, request.encode("latin-1"))  # how http.server reads headers
    assert answer.startswith(status_line(status))
    error = {400: "Bad Request", 413: "Content Too Large"}[status]
    assert body_of(answer) == {"error": error, "message": message}
    assert_still_serving(sandbox)
    assert_no_traceback(capfd)


@pytest.mark.parametrize(
    ("headers", "message"),
    [
        ("Host: 127.0.0.1\r\nHost: evil.example\r\n", "more than one Host header"),
        ("Host: evil.example\r\nHost: 127.0.0.1\r\n", "more than one Host header"),
        (
            "Host: 127.0.0.1\r\nContent-Length: 0\r\nContent-Length: 34\r\n",
            "more than one Content-Length header",
        ),
        (
            "Host: 127.0.0.1\r\nContent-Length: 34\r\nContent-Length: 34\r\n",
            "more than one Content-Length header",
        ),
    ],
    ids=["host-twice", "host-twice-loopback-last", "lengths-differ", "length-twice"],
)
def test_a_request_sending_host_or_content_length_twice_is_answered_400(
    sandbox: Sandbox, capfd: pytest.CaptureFixture[str], headers: str, message: str
) -> None:
    """RFC 9112 (sections 3.2 and 6.3): a proxy before the sandbox may have read the other line,
    so the request is answered 400 and its connection closed, its body never read as the next
    request nor a payment added."""
    body = b'[{"reference": "order-twice"}]'.ljust(34)
    request = (
        f"POST /_sandbox/payments HTTP/1.1\r\n{headers}"
        f"Authorization: Bearer {sandbox.secret_key}\r\n\r\n"
    ).encode() + body
    answer = exchange(sandbox.port, request)
    assert answer.startswith(status_line(400))
    assert answer.count(b"HTTP/1.1 ") == 1
    assert body_of(answer) == {"error": "Bad Request", "message": message}
    assert sandbox.get_payment("order-twice") is None
    assert_still_serving(sandbox)
    assert_no_traceback(capfd)


@pytest.mark.parametrize(("version", "status"), [("HTTP/1.1", 400), ("HTTP/1.0", 200)])
def test_an_http_1_1_request_without_host_is_answered_400(
    sandbox: Sandbox, capfd: pytest.CaptureFixture[str], version: str, status: int
) -> None:
    """RFC 9112 (section 3.2): a server answers 400 to an HTTP/1.1 request with no ``Host``, as
    the service behind a load balancer would; HTTP/1.0 (which has no such rule) is served."""
    request = f"GET /payments {version}\r\nAuthorization: Bearer {sandbox.secret_key}\r\n\r\n"
    answer = exchange(sandbox.port, request.encode())
    assert answer.startswith(status_line(status))
    if status == 400:
        message = "an HTTP/1.1 request without a Host header"
        assert body_of(answer) == {"error": "Bad Request", "message": message}
    assert_still_serving(sandbox)
    assert_no_traceback(capfd)


def test_a_chunked_body_is_refused_and_never_read_as_a_request(
    sandbox: Sandbox, capfd: pytest.CaptureFixture[str]
) -> None:
    """Its chunks would otherwise be taken for the next request on the connection."""
    body = b'[{"reference": "order-chunked"}]'
    request = (
        f"POST /_sandbox/payments HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Authorization: Bearer {sandbox.secret_key}\r\nTransfer-Encoding: chunked\r\n\r\n"
    ).encode() + b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)
    answer = exchange(sandbox.port, request)
    assert answer.startswith(status_line(411))
    assert answer.count(b"HTTP/1.1 ") == 1  # one answer: the chunks were not read as a request
    assert body_of(answer) == {
        "error": "Length Required",
        "message": "the sandbox reads a request body sent with a Content-Length only",
    }
    with httpx.Client(headers={"Authorization": f"Bearer {sandbox.secret_key}"}) as client:
        streamed = client.post(f"{sandbox.base_url}/_sandbox/payments", content=iter([body]))
    assert streamed.status_code == 411
    assert sandbox.get_payment("order-chunked") is None
    assert_still_serving(sandbox)
    assert_no_traceback(capfd)


def test_a_refused_body_still_gets_its_answer(
    sandbox: Sandbox, capfd: pytest.CaptureFixture[str]
) -> None:
    """The client is still sending 2 MiB when the 413 comes: a lingering close, not a reset."""
    body = b" " * (2 << 20)
    head = f"POST /payments HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {len(body)}\r\n\r\n"
    with socket.create_connection(("127.0.0.1", sandbox.port), timeout=WAIT) as conn:

        def send() -> None:
            with contextlib.suppress(OSError):  # the sandbox may close before the last byte
                conn.sendall(head.encode() + body)

        sender = threading.Thread(target=send)
        sender.start()
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
        sender.join(WAIT)
    assert answer.startswith(status_line(413))
    assert_still_serving(sandbox)
    assert_no_traceback(capfd)


@pytest.mark.parametrize(
    ("head", "answered"),
    [
        ("GET /" + "a" * 70_000 + " HTTP/1.1\r\n", status_line(414)),
        (
            "GET /payments HTTP/1.1\r\nX-Long: " + "a" * 70_000 + "\r\n",
            b"HTTP/1.1 431 Line too long\r\n",
        ),
        (
            "GET /payments HTTP/1.1\r\n" + "X-Many: 1\r\n" * 101,
            b"HTTP/1.1 431 Too many headers\r\n",
        ),
    ],
    ids=["request-line-70k", "header-line-70k", "101-headers"],
)
def test_oversized_heads_are_refused(
    sandbox: Sandbox, capfd: pytest.CaptureFixture[str], head: str, answered: bytes
) -> None:
    """The standard library's own limits, kept: a head is at most 100 lines of 64 KiB."""
    answer = exchange(sandbox.port, head.encode() + b"\r\n")
    assert answer.startswith(answered)
    assert_still_serving(sandbox)
    assert_no_traceback(capfd)


@pytest.mark.parametrize("path", ["/_sandbox/faults", "/_sandbox/payments"])
@pytest.mark.parametrize(
    "body",
    [b"[" * 100_000, b'{"a": ' * 100_000, b"[" * 33 + b"{}" + b"]" * 33],
    ids=["array-100000", "object-100000", "array-33"],
)
def test_deeply_nested_json_to_the_control_endpoints_is_a_400(
    sandbox: Sandbox, capfd: pytest.CaptureFixture[str], path: str, body: bytes
) -> None:
    answer = post(sandbox, path, body)
    assert answer.startswith(status_line(400))
    assert body_of(answer) == {
        "error": "Bad Request",
        "message": "the body is nested more than 32 levels deep",
    }
    assert_still_serving(sandbox)
    assert_no_traceback(capfd)


@pytest.mark.parametrize("path", ["/_sandbox/faults", "/_sandbox/payments", "/_sandbox/pay"])
@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"reference": "x", "amount": 9' + b"9" * 5000 + b"}", "more than 4,300 digits"),
        (b'{"delay": -' + b"9" * 100_000 + b"}", "more than 4,300 digits"),
        (b'{"reference": "x' + bytes([0xFF]) + b'"}', "the body must be JSON"),
    ],
    ids=["5001-digits", "100000-digits", "not-utf-8"],
)
def test_a_control_body_python_cannot_read_says_why(
    sandbox: Sandbox, capfd: pytest.CaptureFixture[str], path: str, body: bytes, message: str
) -> None:
    """A number of thousands of digits is JSON, but more than Python reads into an int."""
    answer = post(sandbox, path, body)
    assert answer.startswith(status_line(400))
    said = body_of(answer)
    assert isinstance(said, dict) and message in said["message"]
    assert sandbox.get_payment("x") is None
    assert_still_serving(sandbox)
    assert_no_traceback(capfd)


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        (b'{"delay": 1e308}', "delay must be at most 600 seconds"),
        (b'{"delay": 1e400}', "delay must be at most 600 seconds"),  # json reads inf
        (b'{"delay": Infinity}', "delay must be at most 600 seconds"),
        (b'{"delay": NaN}', "delay must be at most 600 seconds"),
        (b'{"delay": 1' + b"0" * 400 + b"}", "delay must be at most 600 seconds"),
        (b'{"delay": -Infinity}', "delay must not be negative"),
        (b'{"times": 10000000}', "times must be an integer from 1 to 1000000 or None"),
    ],
)
def test_fault_numbers_are_bounded(
    sandbox: Sandbox, capfd: pytest.CaptureFixture[str], fault: bytes, message: str
) -> None:
    answer = post(sandbox, "/_sandbox/faults", fault)
    assert answer.startswith(status_line(400))
    assert body_of(answer) == {"error": "Bad Request", "message": message}
    assert len(sandbox.faults) == 0
    assert_still_serving(sandbox)
    assert_no_traceback(capfd)


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        (rb'{"status": 200, "body": "\ud800"}', "body must be text UTF-8 can encode"),
        (rb'{"status": 200, "headers": {"X": "\u20ac"}}', "header X must be Latin-1 text"),
        (rb'{"status": 200, "headers": {"X": "a\r\nSet-Cookie: b"}}', "header X must be"),
        (rb'{"status": 200, "headers": {"X Y": "1"}}', "header name 'X Y' is not an HTTP token"),
        (
            rb'{"status": 200, "headers": {"Transfer-Encoding": "chunked"}}',
            "header Transfer-Encoding frames the answer",
        ),
    ],
    ids=["lone-surrogate-body", "euro-sign-header", "header-injection", "space-in-name", "framing"],
)
def test_a_fault_it_could_not_send_is_refused(
    sandbox: Sandbox, capfd: pytest.CaptureFixture[str], fault: bytes, message: str
) -> None:
    answer = post(sandbox, "/_sandbox/faults", fault)
    assert answer.startswith(status_line(400))
    body = body_of(answer)
    assert isinstance(body, dict)
    assert body["message"].startswith(message)
    assert len(sandbox.faults) == 0
    assert_still_serving(sandbox)
    assert_no_traceback(capfd)


def test_a_sandbox_bug_is_a_500_not_silence(
    sandbox: Sandbox, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object) -> None:
        raise KeyError("bug")

    monkeypatch.setattr(Sandbox, "_answer_api", broken)
    answer = exchange(sandbox.port, list_request(sandbox))
    assert answer.startswith(status_line(500))
    assert body_of(answer) == {
        "error": "Internal Server Error",
        "message": "the sandbox failed: KeyError",
    }
    assert "KeyError: 'bug'" in capfd.readouterr().err  # the traceback, for whoever fixes it


def test_the_longest_delay_allowed_is_accepted_in_process() -> None:
    assert Fault(delay=600).delay == 600
    with pytest.raises(ValueError, match="at most 600 seconds"):
        Fault(delay=float("inf"))


# --- connections ------------------------------------------------------------------------------


def wait_for_log(capfd: pytest.CaptureFixture[str], *needles: str) -> str:
    """Everything the sandbox printed, once one of ``needles`` is in it (or WAIT passed)."""
    printed = ""
    deadline = time.monotonic() + WAIT
    while not any(needle in printed for needle in needles) and time.monotonic() < deadline:
        time.sleep(0.02)
        printed += capfd.readouterr().err
    return printed


def test_a_client_that_hangs_up_is_one_log_line(
    sandbox: Sandbox, capfd: pytest.CaptureFixture[str]
) -> None:
    sandbox.inject(Fault(delay=1.0), path="/payments")
    conn = socket.create_connection(("127.0.0.1", sandbox.port), timeout=WAIT)
    conn.sendall(list_request(sandbox))
    deadline = time.monotonic() + WAIT
    while not sandbox.requests and time.monotonic() < deadline:  # read, and now delayed: a
        time.sleep(0.01)  # reset before the read would drop the request unseen, on a loaded box
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    conn.close()  # a reset, while the sandbox waits out the delay; its answer then fails
    printed = wait_for_log(capfd, "disconnected", "Traceback")
    assert "Traceback" not in printed
    (line,) = [line for line in printed.splitlines() if "disconnected" in line]
    assert line.startswith("sandbox: 127.0.0.1:")
    assert line.endswith(("disconnected (ConnectionResetError)", "disconnected (BrokenPipeError)"))
    assert_still_serving(sandbox)


def test_an_idle_connection_is_closed_after_the_idle_timeout(
    sandbox: Sandbox, capfd: pytest.CaptureFixture[str]
) -> None:
    with socket.create_connection(("127.0.0.1", sandbox.port), timeout=WAIT) as idle:
        assert idle.recv(1) == b""  # closed by the sandbox, not our WAIT timing out
    assert_still_serving(sandbox)
    assert "Request timed out" in assert_no_traceback(capfd)


def test_a_kept_alive_connection_is_closed_once_idle(sandbox: Sandbox) -> None:
    request = list_request(sandbox).replace(b"Connection: close\r\n", b"")
    with socket.create_connection(("127.0.0.1", sandbox.port), timeout=WAIT) as conn:
        conn.sendall(request)
        answer = b""
        while chunk := conn.recv(65536):  # the answer, then EOF once idle for 0.5 s
            answer += chunk
    assert answer.startswith(status_line(200))


def test_a_request_trickled_in_byte_by_byte_is_cut_at_the_idle_timeout(
    sandbox: Sandbox, capfd: pytest.CaptureFixture[str]
) -> None:
    """Slow loris: each byte well within the timeout, the whole request never."""
    with socket.create_connection(("127.0.0.1", sandbox.port), timeout=WAIT) as conn:
        conn.sendall(b"GET /payments HTTP/1.1\r\n")
        deadline = time.monotonic() + WAIT
        answer, closed = b"", False
        while not closed and time.monotonic() < deadline:
            readable, _, _ = select.select([conn], [], [], 0.1)
            if readable:
                chunk = conn.recv(65536)
                answer += chunk
                closed = not chunk
            else:
                conn.sendall(b"X")  # a header name that never ends
    assert closed
    assert answer.startswith(status_line(408))
    assert body_of(answer) == {
        "error": "Request Timeout",
        "message": "the request did not arrive in time",
    }
    assert_still_serving(sandbox)
    assert_no_traceback(capfd)


def test_connections_wait_in_the_listen_queue_while_the_sandbox_is_busy(
    patient_sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the stdlib's backlog of 5, the 7th connect is dropped and retried after 1 s, 3 s..."""
    sandbox = patient_sandbox
    server = sandbox._server_thread.server
    assert server is not None
    accepting = threading.Event()
    verify_request = server.verify_request

    def blocked(request: object, client_address: object) -> bool:
        accepting.wait(WAIT)  # the accept loop stops here: new connections queue in the kernel
        return verify_request(request, client_address)  # type: ignore[arg-type]

    monkeypatch.setattr(server, "verify_request", blocked)
    conns = []
    try:
        for _ in range(100):  # each connects at once: the kernel completes it from the queue
            conns.append(socket.create_connection(("127.0.0.1", sandbox.port), timeout=2))
        accepting.set()
        for conn in conns:
            conn.settimeout(WAIT)
            conn.sendall(list_request(sandbox))
        for conn in conns:
            assert conn.recv(len(status_line(200))) == status_line(200)
    finally:
        accepting.set()
        for conn in conns:
            conn.close()


def test_a_burst_of_200_connections_is_served(
    patient_sandbox: Sandbox, capfd: pytest.CaptureFixture[str]
) -> None:
    sandbox = patient_sandbox

    def one(_: int) -> bytes:
        return exchange(sandbox.port, list_request(sandbox))

    with ThreadPoolExecutor(max_workers=200) as pool:
        answers = list(pool.map(one, range(200)))
    assert all(answer.startswith(status_line(200)) for answer in answers)
    assert_no_traceback(capfd)


def test_a_client_connecting_again_as_soon_as_it_read_the_close_is_served() -> None:
    """One connection at a time, each closed by the sandbox after its answer, never counts as
    two: the slot is free before the close reaches the client."""
    with Sandbox(max_connections=1) as sandbox:
        answers = [exchange(sandbox.port, list_request(sandbox))[:12] for _ in range(300)]
    assert set(answers) == {status_line(200)[:12]}


def test_connections_past_the_cap_are_answered_503_at_once(
    capfd: pytest.CaptureFixture[str],
) -> None:
    """Idle connections holding every slot cannot make the next one wait: it gets a 503."""
    assert Sandbox().max_connections == 256
    with Sandbox(max_connections=2, log_requests=True) as sandbox:
        server = sandbox._server_thread.server
        assert server is not None
        idle = [socket.create_connection(("127.0.0.1", sandbox.port), timeout=WAIT) for _ in "ab"]
        try:
            eventually(lambda: len(server.connections) == 2)
            for _ in range(3):  # refused again and again, each at once
                started = time.monotonic()
                answer = exchange(sandbox.port, list_request(sandbox))
                assert time.monotonic() - started < 2.0
                assert answer.startswith(status_line(503))
                assert b"Connection: close\r\n" in answer
                assert body_of(answer) == {
                    "error": "Service Unavailable",
                    "message": "the sandbox is serving its limit of 2 connections",
                }
        finally:
            for conn in idle:
                conn.close()
        eventually(lambda: len(server.connections) == 0)
        for _ in range(4):  # the slots are back: more than the cap, one after another
            assert_still_serving(sandbox)
    err = assert_no_traceback(capfd)
    assert "refused: serving the most connections allowed" in err


@pytest.mark.parametrize("bad", [0, -1, True, 2.5, "5"])
def test_max_connections_must_be_a_positive_whole_number(bad: object) -> None:
    with pytest.raises(ValueError, match="max_connections must be"):
        Sandbox(max_connections=bad)  # type: ignore[arg-type]


def eventually(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():
        assert time.monotonic() < deadline, "the condition did not come true in time"
        time.sleep(0.01)


def test_idle_timeout_must_be_a_positive_number() -> None:
    for bad in (0, -1, float("inf"), float("nan"), True, "5", 1e11, 10**30, -(10**5000)):
        with pytest.raises(ValueError, match="idle_timeout must be"):
            Sandbox(idle_timeout=bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("key", ['"sk_quoted"', "'sk_quoted'", "sk key", " sk_padded", ""])
def test_a_key_no_client_accepts_is_refused_as_the_client_refuses_it(key: str) -> None:
    """A sandbox started with such a key would refuse every client; the client's own rule and
    error say so at once."""
    with pytest.raises(ConfigurationError) as refused:
        paysdk.Client(secret_key=key, base_url="http://127.0.0.1:9")
    with pytest.raises(ConfigurationError, match=f"^{re.escape(str(refused.value))}$"):
        Sandbox(secret_key=key)


def test_the_longest_idle_timeout_serves(capfd: pytest.CaptureFixture[str]) -> None:
    """A socket holds its timeout in nanoseconds in 64 bits: past about 292 years, setting it
    fails every connection (a traceback each, and the client cut off without an answer)."""
    with Sandbox(idle_timeout=10**9) as sandbox:
        assert_still_serving(sandbox)
    assert_no_traceback(capfd)


@pytest.mark.parametrize("bad", [-1, 65536, 10**30, True, "8000"])
def test_a_port_out_of_range_is_refused_when_the_sandbox_is_made(bad: object) -> None:
    with pytest.raises(ValueError, match="port must be a port number from 0 to 65535"):
        Sandbox(port=bad)  # type: ignore[arg-type]


# --- the request log --------------------------------------------------------------------------


def test_the_request_log_keeps_only_the_latest_requests(monkeypatch: pytest.MonkeyPatch) -> None:
    """A sandbox left running for days must not grow its log for ever."""
    assert request_log.MAX_RECORDED_REQUESTS == 10_000
    monkeypatch.setattr(request_log, "MAX_RECORDED_REQUESTS", 5)
    with Sandbox() as sandbox, httpx.Client(base_url=sandbox.base_url) as http:
        for number in range(12):
            http.get(f"/payment/ref-{number}")
        paths = [request.path for request in sandbox.requests]
        assert paths == [f"/payment/ref-{number}" for number in range(7, 12)]
        listed = http.get("/_sandbox/requests", headers=auth(sandbox)).json()["data"]
        assert [request["path"] for request in listed] == paths
        sandbox.clear_requests()
        assert sandbox.requests == []
        http.get("/payments")
        assert [request.path for request in sandbox.requests] == ["/payments"]


def test_a_huge_header_is_recorded_cut(sandbox: Sandbox) -> None:
    limit = request_log.MAX_RECORDED_HEADER
    assert limit == 1024
    huge = "v" * 60_000
    with httpx.Client(base_url=sandbox.base_url) as http:
        assert http.get("/payments", headers={"X-Huge": huge, "X-Small": "s"}).status_code == 401
    (request,) = sandbox.requests
    assert request.headers["X-Huge"] == huge[:limit]
    assert request.headers["X-Small"] == "s"


def auth(sandbox: Sandbox) -> dict[str, str]:
    return {"Authorization": f"Bearer {sandbox.secret_key}"}


def test_what_the_log_keeps_of_one_request_is_bounded_as_a_whole(sandbox: Sandbox) -> None:
    budget = request_log.MAX_RECORDED_HEADERS_SIZE
    many = {f"X-Pad-{n:02d}": "v" * 4000 for n in range(60)}  # 240,000 characters of headers
    long_path = "/payments/" + "p" * 10_000
    with httpx.Client(base_url=sandbox.base_url) as http:
        http.get("/payments", headers=many)
        http.get(long_path)
    first, second = sandbox.requests
    assert sum(len(name) + len(value) for name, value in first.headers.items()) <= budget
    assert "X-Pad-00" in first.headers and "X-Pad-59" not in first.headers
    assert len(second.path) == len(second.target) == request_log.MAX_RECORDED_TARGET
    assert second.path == long_path[: request_log.MAX_RECORDED_TARGET]


def test_a_request_line_of_64_kib_is_one_log_line_cut_as_the_request_log_cuts_it(
    sandbox: Sandbox, capfd: pytest.CaptureFixture[str]
) -> None:
    target = "/payment/" + "\x1b" * 65_000  # each escaped in four characters: 260,000 of them
    answer = exchange(sandbox.port, f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
    assert answer.startswith(status_line(401))
    printed = wait_for_log(capfd, '" 401 ', "Traceback")
    (line,) = [line for line in printed.splitlines() if '" 401 ' in line]
    assert line.startswith('sandbox: "GET /payment/\\x1b')
    assert line.endswith(f'... ({len(target) + 13:,} characters)" 401 -')
    assert len(line) < 4 * request_log.MAX_RECORDED_TARGET + 100
    assert_still_serving(sandbox)


def test_a_closed_stderr_loses_the_log_lines_not_the_answers(
    sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    closed = io.StringIO()
    closed.close()
    monkeypatch.setattr(sys, "stderr", closed)  # a daemon's, say: each write raises ValueError
    assert exchange(sandbox.port, list_request(sandbox)).startswith(status_line(200))
    refused = b"GET /payments HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n"
    assert exchange(sandbox.port, refused).startswith(status_line(403))

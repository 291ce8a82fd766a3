"""The sandbox over HTTPS: ``Sandbox(ssl_context=...)`` with a throwaway CA (trustme).

A client that trusts the CA verifies payments; one that does not, one that never handshakes or
one that trickles its handshake costs only its own connection (one log line, no traceback); the
bounds of plain HTTP (idle timeout, connection limit, ``stop()``) hold over TLS too.
"""

from __future__ import annotations

import socket
import ssl
import time
from collections.abc import Callable, Iterator

import httpx
import pytest
import trustme

from paysdk.sandbox import COMPLETED_REFERENCE, Sandbox

WAIT = 30.0
"""A generous bound on any single wait, so a regression fails instead of hanging the suite."""


@pytest.fixture
def logging_sandbox(tls_server_context: ssl.SSLContext) -> Iterator[Sandbox]:
    """A TLS sandbox that logs (so a failed handshake's one line can be seen), idle cut fast."""
    with Sandbox(ssl_context=tls_server_context, log_requests=True, idle_timeout=0.3) as sb:
        yield sb


def https(sandbox: Sandbox, context: ssl.SSLContext) -> httpx.Client:
    headers = {"Authorization": f"Bearer {sandbox.secret_key}"}
    return httpx.Client(
        base_url=sandbox.base_url, headers=headers, verify=context, trust_env=False, timeout=WAIT
    )


def assert_still_serving(sandbox: Sandbox, context: ssl.SSLContext) -> None:
    with https(sandbox, context) as http:
        answer = http.get(f"/payment/{COMPLETED_REFERENCE}")
    assert answer.status_code == 200
    assert answer.json()["data"]["reference"] == COMPLETED_REFERENCE


def wait_for_log(capfd: pytest.CaptureFixture[str], needle: str) -> str:
    """Everything the sandbox printed, once ``needle`` is in it (or WAIT passed)."""
    printed = ""
    deadline = time.monotonic() + WAIT
    while needle not in printed and time.monotonic() < deadline:
        time.sleep(0.01)
        printed += capfd.readouterr().err
    return printed


def the_line(printed: str, needle: str) -> str:
    """The one line of ``printed`` holding ``needle``; no traceback anywhere."""
    assert "Traceback" not in printed
    (line,) = [line for line in printed.splitlines() if needle in line]
    return line


def eventually(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():
        assert time.monotonic() < deadline, "the condition did not come true in time"
        time.sleep(0.01)


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


# --- trusted and untrusted clients ------------------------------------------------------------


def test_a_client_trusting_the_ca_verifies_a_payment_over_https(
    tls_sandbox: Sandbox, tls_client_context: ssl.SSLContext
) -> None:
    assert tls_sandbox.base_url == f"https://127.0.0.1:{tls_sandbox.port}"
    with https(tls_sandbox, tls_client_context) as http:
        answer = http.get(f"/payment/{COMPLETED_REFERENCE}")
        again = http.get("/payments")  # the same kept-alive TLS connection
    assert answer.status_code == 200
    assert answer.json()["data"]["reference"] == COMPLETED_REFERENCE
    assert again.status_code == 200
    assert [request.path for request in tls_sandbox.requests] == [
        f"/payment/{COMPLETED_REFERENCE}",
        "/payments",
    ]
    assert tls_sandbox.requests[0].headers["Authorization"] == "<redacted>"


def test_the_ca_bundle_file_is_enough_to_trust_the_sandbox(
    tls_sandbox: Sandbox, tls_ca_bundle: str
) -> None:
    assert_still_serving(tls_sandbox, ssl.create_default_context(cafile=tls_ca_bundle))


def test_the_certificate_names_localhost_too(
    tls_server_context: ssl.SSLContext, tls_client_context: ssl.SSLContext
) -> None:
    with Sandbox(ssl_context=tls_server_context, host="localhost") as sandbox:
        assert sandbox.base_url.startswith("https://localhost:")
        assert_still_serving(sandbox, tls_client_context)


def test_a_client_not_trusting_the_certificate_fails_and_others_are_still_served(
    logging_sandbox: Sandbox, tls_client_context: ssl.SSLContext, capfd: pytest.CaptureFixture[str]
) -> None:
    other_ca = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    trustme.CA().configure_trust(other_ca)
    for distrustful in (other_ca, ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)):
        with https(logging_sandbox, distrustful) as http, pytest.raises(httpx.ConnectError) as info:
            http.get("/payments")
        assert "CERTIFICATE_VERIFY_FAILED" in str(info.value)
        line = the_line(wait_for_log(capfd, "TLS handshake failed"), "TLS handshake failed")
        assert line.startswith("sandbox: 127.0.0.1:")
        assert line.endswith("TLS handshake failed (TLSV1_ALERT_UNKNOWN_CA)")
        assert_still_serving(logging_sandbox, tls_client_context)
    assert logging_sandbox.requests[0].path == f"/payment/{COMPLETED_REFERENCE}"


def test_plain_http_to_the_https_port_is_one_log_line(
    logging_sandbox: Sandbox, tls_client_context: ssl.SSLContext, capfd: pytest.CaptureFixture[str]
) -> None:
    plain = logging_sandbox.base_url.replace("https://", "http://")
    with httpx.Client(trust_env=False, timeout=WAIT) as http, pytest.raises(httpx.HTTPError):
        http.get(f"{plain}/payments")
    line = the_line(wait_for_log(capfd, "TLS handshake failed"), "TLS handshake failed")
    assert line.endswith("TLS handshake failed (HTTP_REQUEST)")
    assert_still_serving(logging_sandbox, tls_client_context)


def test_a_broken_tls_record_after_the_handshake_is_one_log_line(
    logging_sandbox: Sandbox, tls_client_context: ssl.SSLContext, capfd: pytest.CaptureFixture[str]
) -> None:
    raw = socket.create_connection(("127.0.0.1", logging_sandbox.port), timeout=WAIT)
    with tls_client_context.wrap_socket(raw, server_hostname="127.0.0.1") as conn:
        # Application data that no key encrypted: the sandbox's TLS layer rejects the record.
        socket.socket.sendall(conn, b"\x17\x03\x03\x00\x20" + b"\x00" * 32)
        assert closed_by_peer(conn)
    line = the_line(wait_for_log(capfd, "disconnected"), "disconnected")
    assert line.endswith(("disconnected (SSLError)", "disconnected (ConnectionResetError)"))
    assert_still_serving(logging_sandbox, tls_client_context)


# --- clients that hold a connection -----------------------------------------------------------


def test_a_client_that_connects_and_sends_nothing_does_not_block_others(
    tls_sandbox: Sandbox, tls_client_context: ssl.SSLContext
) -> None:
    """The default idle timeout (30 s): only the handshake in its own thread lets others in."""
    silent = [socket.create_connection(("127.0.0.1", tls_sandbox.port), timeout=WAIT) for _ in "ab"]
    try:
        for _ in range(3):
            assert_still_serving(tls_sandbox, tls_client_context)
    finally:
        for conn in silent:
            conn.close()


def test_a_silent_connection_is_cut_at_the_idle_timeout(
    logging_sandbox: Sandbox, tls_client_context: ssl.SSLContext, capfd: pytest.CaptureFixture[str]
) -> None:
    with socket.create_connection(("127.0.0.1", logging_sandbox.port), timeout=WAIT) as silent:
        assert closed_by_peer(silent)
    line = the_line(wait_for_log(capfd, "TLS handshake failed"), "TLS handshake failed")
    assert line.endswith("TLS handshake failed (TimeoutError)")
    assert_still_serving(logging_sandbox, tls_client_context)


def test_a_handshake_trickled_in_byte_by_byte_is_cut_at_the_idle_timeout(
    logging_sandbox: Sandbox, tls_client_context: ssl.SSLContext, capfd: pytest.CaptureFixture[str]
) -> None:
    """Each byte well within the idle timeout, the whole handshake never: the bound is on the
    handshake, not on each read."""
    hello = b"\x16\x03\x01\x02\x00" + b"\x01" + b"\x00" * 511  # a record 512 bytes long
    with socket.create_connection(("127.0.0.1", logging_sandbox.port), timeout=WAIT) as conn:
        conn.settimeout(0.05)
        closed = False
        for byte in hello:
            try:
                conn.sendall(bytes([byte]))
                closed = conn.recv(1) == b""
            except TimeoutError:
                continue  # still open: the next byte
            except (ConnectionResetError, BrokenPipeError):
                closed = True
            if closed:
                break
    assert closed
    line = the_line(wait_for_log(capfd, "TLS handshake failed"), "TLS handshake failed")
    assert line.endswith("TLS handshake failed (TimeoutError)")
    assert_still_serving(logging_sandbox, tls_client_context)


def test_a_connection_past_the_limit_is_closed_unanswered(
    tls_server_context: ssl.SSLContext,
    tls_client_context: ssl.SSLContext,
    capfd: pytest.CaptureFixture[str],
) -> None:
    """A 503 would need a handshake, which the accept loop must not wait for: a plain close."""
    with Sandbox(ssl_context=tls_server_context, max_connections=1, log_requests=True) as sb:
        server = sb._server_thread.server
        assert server is not None
        with socket.create_connection(("127.0.0.1", sb.port), timeout=WAIT):
            eventually(lambda: len(server.connections) == 1)
            with https(sb, tls_client_context) as http, pytest.raises(httpx.ConnectError):
                http.get("/payments")
        eventually(lambda: server._slots._value == 1)  # the slot is back
        assert_still_serving(sb, tls_client_context)
    printed = capfd.readouterr().err
    assert "Traceback" not in printed
    assert "refused: serving the most connections allowed" in printed


# --- stopping ---------------------------------------------------------------------------------


def test_stop_cuts_tls_connections_open_and_mid_handshake(
    tls_server_context: ssl.SSLContext, tls_client_context: ssl.SSLContext
) -> None:
    """Neither the idle timeout (60 s) nor the clients end them: ``stop()`` does, at once."""
    with Sandbox(ssl_context=tls_server_context, idle_timeout=60) as sandbox:
        server = sandbox._server_thread.server
        assert server is not None
        raw = socket.create_connection(("127.0.0.1", sandbox.port), timeout=WAIT)
        with (
            tls_client_context.wrap_socket(raw, server_hostname="127.0.0.1") as kept,
            socket.create_connection(("127.0.0.1", sandbox.port), timeout=WAIT) as silent,
        ):
            key = sandbox.secret_key
            request = (
                f"GET /payments HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {key}\r\n\r\n"
            )
            kept.sendall(request.encode())
            assert kept.recv(12) == b"HTTP/1.1 200"  # answered; the connection stays open
            eventually(lambda: len(server.connections) == 2)
            sandbox.stop()
            assert not sandbox.running
            assert closed_by_peer(silent)
            assert closed_by_peer(kept)  # after the rest of the answer
        eventually(lambda: len(server.connections) == 0)  # every handler thread finished


# --- what it takes ----------------------------------------------------------------------------


def test_ssl_context_must_be_a_server_side_context(tls_client_context: ssl.SSLContext) -> None:
    with pytest.raises(ValueError, match="ssl_context must be a server-side context"):
        Sandbox(ssl_context=tls_client_context)
    with pytest.raises(ValueError, match=r"ssl_context must be an ssl\.SSLContext"):
        Sandbox(ssl_context="cert.pem")  # type: ignore[arg-type]


def test_without_a_context_the_sandbox_serves_plain_http(sandbox: Sandbox) -> None:
    assert sandbox.ssl_context is None
    assert sandbox.base_url == f"http://127.0.0.1:{sandbox.port}"

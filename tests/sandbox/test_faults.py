"""Sandbox fault injection (in-process and over HTTP), the request log, and sending callbacks."""

from __future__ import annotations

import contextlib
import json
import re
import time
from collections.abc import Callable, Iterator
from http.client import HTTPConnection
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from paysdk.sandbox import (
    COMPLETED_REFERENCE,
    CallbackDeliveryError,
    Fault,
    Sandbox,
    callback_url,
    send_callback,
)
from paysdk.sandbox._callback import MAX_CALLBACK_BODY
from tests.support.hostile import (
    HostileServer,
    gzip_bomb,
    gzip_padded,
    large_body,
    respond,
    trickle_body,
    trickle_head,
)

VERIFY = f"/payment/{COMPLETED_REFERENCE}"
WAIT = 10.0
"""A generous bound on any wait, so a regression fails instead of hanging the suite."""


@pytest.fixture
def http(sandbox: Sandbox) -> Iterator[httpx.Client]:
    headers = {"Authorization": f"Bearer {sandbox.secret_key}"}
    with httpx.Client(base_url=sandbox.base_url, headers=headers, trust_env=False) as client:
        yield client


def statuses(http: httpx.Client, path: str, count: int) -> list[int]:
    return [http.get(path).status_code for _ in range(count)]


def test_a_fault_is_used_the_given_number_of_times(sandbox: Sandbox, http: httpx.Client) -> None:
    sandbox.inject(Fault.server_error(), path="/payments", times=2)
    assert statuses(http, "/payments", 3) == [500, 500, 200]
    assert len(sandbox.faults) == 0


def test_faults_match_exact_paths_prefixes_or_everything(
    sandbox: Sandbox, http: httpx.Client
) -> None:
    sandbox.inject(Fault.server_error(503), path="/payments", times=None)
    assert http.get(VERIFY).status_code == 200
    assert statuses(http, "/payments", 3) == [503, 503, 503]
    sandbox.clear_faults()
    sandbox.inject(Fault.server_error(), path="/payment/*", times=None)
    assert (http.get(VERIFY).status_code, http.get("/payments").status_code) == (500, 200)
    sandbox.clear_faults()
    sandbox.inject(Fault.server_error(), times=2)
    assert [http.get(VERIFY).status_code, http.get("/payments").status_code] == [500, 500]
    assert http.get("/payments").status_code == 200


def test_a_verify_path_names_its_reference_however_it_is_percent_encoded(
    sandbox: Sandbox, http: httpx.Client
) -> None:
    sandbox.inject(Fault.server_error(503), path="/payment/a%2fb", times=None)
    assert http.get("/payment/a%2Fb").status_code == 503
    sandbox.clear_faults()
    sandbox.inject(Fault.server_error(503), path="/payment/a%2Fb", times=None)
    assert http.get("/payment/a%2fb").status_code == 503
    assert http.get("/payment/a%2fc").status_code == 404  # another reference: no fault


def test_html_502_from_a_proxy(sandbox: Sandbox, http: httpx.Client) -> None:
    sandbox.inject(Fault.html_502())
    response = http.get(VERIFY)
    assert response.status_code == 502
    assert response.headers["content-type"] == "text/html"
    assert "<h1>502 Bad Gateway</h1>" in response.text


def test_429_carries_retry_after(sandbox: Sandbox, http: httpx.Client) -> None:
    sandbox.inject(Fault.rate_limited(retry_after=7))
    response = http.get("/payments")
    assert (response.status_code, response.headers["retry-after"]) == (429, "7")
    assert response.json()["error"] == "Too Many Requests"


def test_list_unavailable_is_the_documented_body(sandbox: Sandbox, http: httpx.Client) -> None:
    sandbox.inject(Fault.list_unavailable(), path="/payments")
    response = http.get("/payments")
    assert (response.status_code, response.json()) == (404, {"error": "Connection Error"})


def test_a_fault_answers_before_the_key_is_checked_like_a_proxy(sandbox: Sandbox) -> None:
    sandbox.inject(Fault.html_502())
    assert httpx.get(sandbox.base_url + "/payments", trust_env=False).status_code == 502


def test_delay_provokes_a_timeout_and_stop_does_not_wait_it_out(
    sandbox: Sandbox, http: httpx.Client
) -> None:
    sandbox.inject(Fault(delay=0.3))
    started = time.monotonic()
    assert http.get(VERIFY).status_code == 200
    assert time.monotonic() - started >= 0.3
    sandbox.inject(Fault(delay=30))
    with pytest.raises(httpx.ReadTimeout):
        http.get(VERIFY, timeout=0.1)
    started = time.monotonic()
    sandbox.stop()
    assert time.monotonic() - started < 1


@pytest.mark.parametrize(
    ("disconnect", "message"),
    [
        ("before_response", "without sending a response"),
        ("mid_body", "without sending complete message body"),
        ("truncated", "without sending complete message body"),
    ],
)
def test_cut_connections(
    sandbox: Sandbox, http: httpx.Client, disconnect: Any, message: str
) -> None:
    sandbox.inject(Fault(disconnect=disconnect), path="/payments")
    with pytest.raises(httpx.RemoteProtocolError, match=message):
        http.get("/payments")
    assert http.get("/payments").status_code == 200  # the next request is served again


def test_a_cut_can_apply_to_a_replaced_answer(sandbox: Sandbox, http: httpx.Client) -> None:
    sandbox.inject(Fault(status=200, body='{"data": [', disconnect="truncated"))
    with pytest.raises(httpx.RemoteProtocolError):
        http.get("/payments")


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"delay": -1}, "delay must not be negative"),
        ({"delay": "1"}, "delay must be a number"),
        ({"status": 99}, "status must be an HTTP status code"),
        ({"headers": {"Retry-After": 1}}, "headers must map strings to strings"),
        ({"disconnect": "later"}, "disconnect must be one of"),
        ({"colour": "red"}, "unknown fault field"),
    ],
)
def test_bad_faults_are_refused(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Fault.from_json(fields)


@pytest.mark.parametrize(("path", "times"), [("payments", 1), (None, 0), ("/x", -1)])
def test_bad_fault_places_are_refused(sandbox: Sandbox, path: str | None, times: int) -> None:
    with pytest.raises(ValueError, match=r"^(path|times) must"):
        sandbox.inject(Fault(), path=path, times=times)


# --- over HTTP --------------------------------------------------------------------------------


def test_faults_over_http(sandbox: Sandbox, http: httpx.Client) -> None:
    fault = {
        "path": "/payments",
        "times": 2,
        "status": 429,
        "headers": {"Retry-After": "2"},
        "body": {"error": "Too Many Requests"},
    }
    created = http.post("/_sandbox/faults", json=[fault, {"path": VERIFY, "status": 502}])
    assert (created.status_code, created.json()) == (201, {"faults": 2})
    first = http.get("/payments")
    assert (first.status_code, first.headers["retry-after"]) == (429, "2")
    assert first.headers["content-type"] == "application/json"
    assert first.json() == {"error": "Too Many Requests"}
    assert http.delete("/_sandbox/faults").json() == {"faults": 0}
    assert statuses(http, "/payments", 1) + statuses(http, VERIFY, 1) == [200, 200]


@pytest.mark.parametrize("body", [b"not json", b"[]", b"[1]", b'{"status": 1000}', b'{"times": 0}'])
def test_bad_faults_over_http_are_400(http: httpx.Client, body: bytes) -> None:
    response = http.post("/_sandbox/faults", content=body)
    assert response.status_code == 400
    assert response.json()["error"] == "Bad Request"


@pytest.mark.parametrize("number", [float("nan"), float("inf"), float("-inf")])
def test_a_json_fault_with_nan_or_infinity_is_refused_when_made(number: float) -> None:
    """``json.dumps`` writes them ``NaN`` and ``Infinity``, no JSON: a fault that sent them would
    test a client against a body no JSON service sends."""
    with pytest.raises(ValueError, match="NaN and Infinity have no JSON form"):
        Fault.json(500, {"error": "x", "rate": number})
    with pytest.raises(ValueError, match="NaN and Infinity have no JSON form"):
        Fault.from_json({"status": 500, "body": [number]})


def test_a_fault_with_nan_over_http_is_400_and_not_injected(
    sandbox: Sandbox, http: httpx.Client
) -> None:
    """Python's JSON reader takes ``NaN``, so the control API reads one; the fault is refused."""
    response = http.post("/_sandbox/faults", content=b'{"status": 500, "body": {"x": NaN}}')
    assert response.status_code == 400
    assert "NaN" in response.json()["message"]
    assert len(sandbox.faults) == 0


def test_a_json_fault_with_a_lone_surrogate_sends_valid_json(
    sandbox: Sandbox, http: httpx.Client
) -> None:
    """A lone surrogate goes as its ``\\ud800`` escape: UTF-8 and JSON both carry it."""
    sandbox.inject(Fault.json(500, {"error": "\ud800"}), path=VERIFY)
    answer = http.get(VERIFY)
    assert answer.status_code == 500
    assert json.loads(answer.content) == {"error": "\ud800"}


def test_control_endpoints_need_the_key(sandbox: Sandbox) -> None:
    for method, path in [("POST", "faults"), ("DELETE", "faults"), ("GET", "requests")]:
        response = httpx.request(
            method, f"{sandbox.base_url}/_sandbox/{path}", json={}, trust_env=False
        )
        assert response.status_code == 401
    assert len(sandbox.faults) == 0


def test_control_endpoints_refuse_unknown_routes(http: httpx.Client) -> None:
    assert http.get("/_sandbox/faults").status_code == 405
    assert http.get("/_sandbox/nothing").status_code == 404


def test_payments_can_be_added_over_http(http: httpx.Client) -> None:
    record = {"reference": "remote-1", "amount": 42, "currency": "GHS", "status": "FAILED"}
    created = http.post("/_sandbox/payments", json=record)
    assert created.status_code == 201
    assert http.get("/payment/remote-1").json()["data"] == created.json()["data"][0]
    bad = http.post("/_sandbox/payments", json={"reference": "x", "amount": "many"})
    assert bad.status_code == 400
    assert "amount" in bad.json()["message"]


# --- request log ------------------------------------------------------------------------------


def test_the_request_log_counts_attempts_and_hides_the_key(
    sandbox: Sandbox, http: httpx.Client
) -> None:
    http.get(f"{VERIFY}?x=1")
    http.get("/payments")
    http.post("/_sandbox/faults", json={"status": 500})  # control requests are not recorded
    assert [(r.method, r.path, r.target) for r in sandbox.requests] == [
        ("GET", VERIFY, f"{VERIFY}?x=1"),
        ("GET", "/payments", "/payments"),
    ]
    assert sandbox.requests[0].headers["Authorization"] == "<redacted>"
    logged = http.get("/_sandbox/requests").json()["data"]
    assert [entry["path"] for entry in logged] == [VERIFY, "/payments"]
    assert sandbox.secret_key not in repr(sandbox.requests) + repr(logged)
    assert http.delete("/_sandbox/requests").status_code == 200
    assert sandbox.requests == []


def test_the_connection_log_lists_each_connection_served_once(
    sandbox: Sandbox, http: httpx.Client
) -> None:
    """A kept-alive connection is listed once however many requests it carries, control
    requests included; a second client's is listed after it; ``reset()`` empties the log."""
    http.get(VERIFY)
    http.post("/_sandbox/faults", json={"status": 500})
    http.get("/payments")
    with httpx.Client(base_url=sandbox.base_url, trust_env=False) as other:
        other.get(VERIFY)
    first, second = sandbox.connections
    assert first[0] == second[0] == "127.0.0.1"
    assert first[1] != second[1]
    sandbox.reset()
    assert sandbox.connections == []
    http.get(VERIFY)  # on the connection already listed, before the reset
    assert sandbox.connections == []


def open_connection(sandbox: Sandbox) -> HTTPConnection:
    """A connection of the standard library's to the sandbox, connected: its socket is there
    to ask for the client's address."""
    connection = HTTPConnection(sandbox.host, sandbox.port, timeout=WAIT)
    connection.connect()
    return connection


def client_address(connection: HTTPConnection) -> tuple[str, int]:
    """The ``(host, port)`` of the client end of ``connection``, as its socket has it."""
    assert connection.sock is not None
    host, port = connection.sock.getsockname()[:2]
    return host, port


def auth(sandbox: Sandbox) -> dict[str, str]:
    return {"Authorization": f"Bearer {sandbox.secret_key}"}


def send(connection: HTTPConnection, path: str, sandbox: Sandbox) -> int:
    """One request over ``connection``, its answer read whole so the connection is kept."""
    connection.request("GET", path, headers=auth(sandbox))
    response = connection.getresponse()
    response.read()
    return response.status


def eventually(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():
        assert time.monotonic() < deadline, "the condition did not come true in time"
        time.sleep(0.01)


def test_each_request_records_the_client_address_of_its_connection(sandbox: Sandbox) -> None:
    """Two requests over one kept-alive connection carry its client's ``(host, port)``, as
    the client's socket has it; a request over a second connection carries that one's. The
    control endpoint lists it too."""
    with contextlib.ExitStack() as closing:
        first = closing.enter_context(contextlib.closing(open_connection(sandbox)))
        assert send(first, VERIFY, sandbox) == 200
        second = closing.enter_context(contextlib.closing(open_connection(sandbox)))
        assert send(second, "/payments", sandbox) == 200
        assert send(first, "/payments", sandbox) == 200
        assert client_address(first) != client_address(second)
        assert [(request.path, request.client) for request in sandbox.requests] == [
            (VERIFY, client_address(first)),
            ("/payments", client_address(second)),
            ("/payments", client_address(first)),
        ]
        assert sandbox.connections == [client_address(first), client_address(second)]
        first.request("GET", "/_sandbox/requests", headers=auth(sandbox))
        logged = json.loads(first.getresponse().read())["data"]
        assert [tuple(entry["client"]) for entry in logged] == [
            client_address(first),
            client_address(second),
            client_address(first),
        ]


def test_open_connections_counts_the_connections_being_served_now(sandbox: Sandbox) -> None:
    """A connection counts once however many requests it carries, and stops counting once its
    client closes it (``connections`` still lists it); a stopped sandbox serves none."""
    assert sandbox.open_connections == 0
    with contextlib.ExitStack() as closing:
        first = closing.enter_context(contextlib.closing(open_connection(sandbox)))
        assert send(first, VERIFY, sandbox) == 200
        assert send(first, VERIFY, sandbox) == 200
        assert sandbox.open_connections == 1
        second = closing.enter_context(contextlib.closing(open_connection(sandbox)))
        assert send(second, VERIFY, sandbox) == 200
        assert sandbox.open_connections == 2
        first.close()
        eventually(lambda: sandbox.open_connections == 1)
        second.close()
        eventually(lambda: sandbox.open_connections == 0)
        assert len(sandbox.connections) == 2
        third = closing.enter_context(contextlib.closing(open_connection(sandbox)))
        assert send(third, VERIFY, sandbox) == 200
        assert sandbox.open_connections == 1
        sandbox.stop()
        assert sandbox.open_connections == 0


def test_every_api_answer_carries_a_request_id_the_log_keeps(
    sandbox: Sandbox, http: httpx.Client
) -> None:
    sandbox.inject(Fault.server_error(), path="/payments")
    answers = [
        http.get(VERIFY),
        http.get("/payment/order-0000"),
        http.get("/payments"),  # the fault's 500
        http.post("/payments"),
        http.get("/nowhere"),
        http.get("/payments", headers={"Authorization": "Bearer sk_wrong"}),
    ]
    assert [answer.status_code for answer in answers] == [200, 404, 500, 405, 404, 401]
    sent = [answer.headers["X-Request-Id"] for answer in answers]
    assert all(re.fullmatch(r"req_[0-9a-f]{24}", request_id) for request_id in sent)
    assert len(set(sent)) == len(sent)
    assert [request.request_id for request in sandbox.requests] == sent
    control = http.get("/_sandbox/requests")  # not an API answer: no id, and not recorded
    assert "X-Request-Id" not in control.headers
    assert [entry["request_id"] for entry in control.json()["data"]] == sent


def test_a_fault_may_name_its_own_request_id_and_a_cut_before_answering_has_none(
    sandbox: Sandbox, http: httpx.Client
) -> None:
    sandbox.inject(Fault.json(503, {"error": "maintenance"}, {"x-request-id": "req_from_fault"}))
    assert http.get("/payments").headers.get_list("X-Request-Id") == ["req_from_fault"]
    sandbox.inject(Fault.connection_reset())
    with pytest.raises(httpx.RemoteProtocolError):
        http.get("/payments")
    sandbox.inject(Fault(disconnect="mid_body"))
    with http.stream("GET", "/payments") as cut:  # the headers came, the body is cut
        sent = cut.headers["X-Request-Id"]
        with pytest.raises(httpx.RemoteProtocolError):
            cut.read()
    assert [request.request_id for request in sandbox.requests] == ["req_from_fault", None, sent]


# --- callbacks --------------------------------------------------------------------------------
# The sandbox doubles as the merchant's handler here: it records every request, and a fault
# makes /callback answer what a handler would.


def test_send_callback_appends_an_encoded_reference(sandbox: Sandbox) -> None:
    sandbox.inject(Fault(status=200, body="thanks"), path="/callback")
    result = sandbox.send_callback(f"{sandbox.base_url}/callback?shop=1#frag", "a b&c/d?é")
    assert (result.status_code, result.body, result.ok) == (200, "thanks", True)
    (request,) = sandbox.requests
    assert request.path == "/callback"
    query = urlsplit(request.target).query
    assert query == "shop=1&reference=a%20b%26c%2Fd%3F%C3%A9"
    assert parse_qs(query) == {"shop": ["1"], "reference": ["a b&c/d?é"]}
    assert "Authorization" not in request.headers  # the service sends no key to the merchant


def test_send_callback_reports_the_handlers_failure(sandbox: Sandbox) -> None:
    sandbox.inject(Fault(status=400, body="unknown order"), path="/callback")
    result = send_callback(f"{sandbox.base_url}/callback", "x", timeout=2)
    assert (result.status_code, result.body, result.ok) == (400, "unknown order", False)


@pytest.mark.parametrize("timeout", [float("inf"), float("nan"), 1e10, 0, -1, True, "5"])
def test_a_callback_timeout_no_socket_can_wait_is_refused_before_anything_is_sent(
    sandbox: Sandbox, timeout: Any
) -> None:
    url = f"{sandbox.base_url}/callback"
    with pytest.raises(ValueError, match="timeout must be more than 0 and at most 86400 seconds"):
        send_callback(url, "x", timeout=timeout)
    with pytest.raises(ValueError, match="timeout must be more than 0 and at most 86400 seconds"):
        sandbox.pay("order-new", callback=url, timeout=timeout)
    assert sandbox.requests == []
    assert sandbox.get_payment("order-new") is None


def test_send_callback_to_nowhere_or_too_slow_raises(sandbox: Sandbox) -> None:
    sandbox.inject(Fault(delay=5), path="/callback")
    with pytest.raises(CallbackDeliveryError, match="timed out"):
        send_callback(f"{sandbox.base_url}/callback", "x", timeout=0.1)
    url = f"{sandbox.base_url}/callback"
    sandbox.stop()
    with pytest.raises(CallbackDeliveryError, match="failed"):
        send_callback(url, "x", timeout=1)


@pytest.mark.parametrize(
    "behaviour",
    [trickle_body(interval=0.05), trickle_head(interval=0.05)],
    ids=["trickled-body", "trickled-head"],
)
def test_a_trickling_handler_cannot_hold_send_callback_past_its_timeout(
    hostile: HostileServer, behaviour: Any
) -> None:
    """Each byte arrives well within a per-read timeout; the whole call is bounded all the same."""
    hostile.script(behaviour)
    started = time.monotonic()
    with pytest.raises(CallbackDeliveryError, match=r"timed out after 0\.5s"):
        send_callback(f"{hostile.base_url}/callback", "x", timeout=0.5)
    assert time.monotonic() - started < 2.0


@pytest.mark.parametrize(
    "behaviour",
    [large_body(50 << 20), large_body(50 << 20, chunked=True), gzip_bomb(200 << 20)],
    ids=["50MiB", "50MiB-chunked", "gzip-200MiB"],
)
def test_a_huge_callback_answer_is_kept_cut(hostile: HostileServer, behaviour: Any) -> None:
    gzip_padded(b"{}", 200 << 20)  # compressed before the clock starts (cached)
    hostile.script(behaviour)
    started = time.monotonic()
    result = send_callback(f"{hostile.base_url}/callback", "x", timeout=10)
    assert (result.status_code, result.ok) == (200, True)
    assert result.body == "{" + " " * (MAX_CALLBACK_BODY - 1)  # padding after the first byte
    assert time.monotonic() - started < 5.0


@pytest.mark.parametrize("url", ["ftp://host/cb", "/callback", "localhost:8000/cb"])
def test_callback_urls_must_be_absolute_http(url: str) -> None:
    with pytest.raises(ValueError, match="absolute http"):
        callback_url(url, "x")


@pytest.mark.parametrize("host", ["xn--a.test", "xn--zz.test", "ex\x7fample.test"])
def test_callback_urls_with_a_host_httpx_cannot_send_to_are_refused(host: str) -> None:
    """An A-label that decodes to nothing valid is refused by httpx's strict decoding and by
    httpx2's (which shows such a label as it is) alike."""
    with pytest.raises(ValueError, match="not a valid URL"):
        callback_url(f"https://{host}/cb", "x")


def test_callback_url_adds_a_path_when_there_is_none() -> None:
    assert callback_url("http://127.0.0.1:9", "r-1") == "http://127.0.0.1:9/?reference=r-1"


@pytest.mark.parametrize("charset", ["rot13", "hex", "zlib", "idna", "undefined"])
def test_a_callback_answer_in_a_charset_that_is_no_text_one_is_read_as_utf8(
    hostile: HostileServer, charset: str
) -> None:
    """A handler's Content-Type may name any codec Python knows, including ones that are no text
    encoding or refuse ``errors="replace"``: its answer is still reported, read as UTF-8."""
    content_type = {"Content-Type": f"application/json; charset={charset}"}
    hostile.script(respond(200, '{"status": "ok é"}'.encode(), content_type))
    result = send_callback(f"{hostile.base_url}/callback", "x", timeout=5)
    assert (result.status_code, result.body) == (200, '{"status": "ok é"}')


@pytest.mark.parametrize(
    ("name", "value"), [("Content-Length", "999"), ("transfer-encoding", "chunked")]
)
def test_a_fault_setting_the_answers_framing_is_refused(name: str, value: str) -> None:
    """The sandbox frames a fault's answer itself and the fake leaves framing to httpx: a fault's
    own ``Content-Length`` or ``Transfer-Encoding`` would make the two answer differently (the
    sandbox with two framings: a conflict, or a client waiting for its timeout)."""
    with pytest.raises(ValueError, match=f"header {name} frames the answer"):
        Fault(status=500, body="boom", headers={name: value})

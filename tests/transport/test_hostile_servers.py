"""Every client against a hostile loopback server (tests/support/hostile.py), verify and list.

Each :class:`Case` scripts what the server does per request and says what the caller must get:
the exact exception type (or a result), how many requests the server saw, and, where the server
decides them, the waits between tries (recorded, not slept: see ``conftest.EitherClient``).
Every case runs for sync, async and aiohttp-backed async, verify and list. To add one, add a
``Case`` to ``CASES``.
"""

from __future__ import annotations

import copy
import dataclasses
import gzip
import json
import logging
import pickle
import time
import traceback
from collections.abc import Mapping, Sequence
from typing import Any

import httpx
import pytest

import paysdk
from paysdk import (
    APIConnectionError,
    APIError,
    APITimeoutError,
    AuthenticationError,
    PaySDKError,
    RateLimitError,
    ResponseTooLargeError,
    ResponseValidationError,
    ServerError,
)
from tests.conftest import SECRET, EitherClient, MakeClient, listed_body, verify_body
from tests.support.hostile import (
    Behaviour,
    Connection,
    HostileServer,
    Request,
    corrupt_gzip,
    cut_body,
    echo_authorization,
    endless_chunked,
    gzip_bomb,
    head,
    large_body,
    raw,
    reset,
    respond,
    respond_json,
    stall,
    trickle_body,
    trickle_head,
)

pytestmark = pytest.mark.anyio

REFERENCE = "order-1042"


def ok() -> Behaviour:
    """The documented 200 of whichever endpoint was asked."""
    verify = respond_json(200, verify_body(REFERENCE))
    listing = respond_json(200, {"data": [listed_body(REFERENCE)]})

    def behave(conn: Connection, request: Request) -> bool:
        return (verify if request.path.startswith("/payment/") else listing)(conn, request)

    return behave


def gzip_then_junk() -> Behaviour:
    """The endpoint's documented 200, gzipped, then 8 MiB more: bytes zlib would keep aside,
    counted by no cap, for as long as the server sends them."""
    documents = {
        "verify": json.dumps(verify_body(REFERENCE)).encode(),
        "list": json.dumps({"data": [listed_body(REFERENCE)]}).encode(),
    }

    def behave(conn: Connection, request: Request) -> bool:
        which = "verify" if request.path.startswith("/payment/") else "list"
        body = gzip.compress(documents[which]) + b"\0" * (8 << 20)
        return corrupt_gzip(200, body=body)(conn, request)

    return behave


def status(code: int, retry_after: str | None = None) -> Behaviour:
    """A JSON error answer, with a Retry-After if given."""
    headers = {} if retry_after is None else {"Retry-After": retry_after}
    return respond_json(code, {"error": "hostile", "message": f"status {code}"}, headers)


@dataclasses.dataclass(frozen=True)
class Endpoint:
    name: str
    path: str

    async def call(self, client: EitherClient) -> str:
        """Call the endpoint; the reference of what it returned."""
        if self.name == "verify":
            return str((await client.verify(REFERENCE)).reference)
        (payment,) = await client.list_payments()
        return str(payment.reference)


ENDPOINTS = [Endpoint("verify", f"/payment/{REFERENCE}"), Endpoint("list", "/payments")]


@dataclasses.dataclass(frozen=True)
class Case:
    id: str
    script: Sequence[Behaviour]
    """The n-th request gets the n-th behaviour; the last one repeats."""
    raises: type[PaySDKError] | None
    """The exact exception type the call raises; ``None``: it returns the payment(s)."""
    attempts: int
    """How many requests the server must have seen."""
    sleeps: Sequence[float] | None = None
    """The waits between tries, where the server dictates them (Retry-After)."""
    options: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    """Client options; ``max_retries`` is 2 unless given."""
    within: float | None = None
    """The budget the call must end within, in seconds (checked with a few seconds' slack for a
    loaded machine: a bound on behaviour, a call that hung would blow it by far)."""


SLACK = 3.0
"""Seconds a bounded call may overrun its budget on a loaded machine (a hang is unbounded)."""
SHORT = {"timeout": 0.5}
"""Client options for cases that wait for a timeout: long enough that a loaded machine still
connects and writes each attempt within it, which the server must see."""
WAITS_FOR_THE_200 = {"timeout": 1.0}
"""For a case whose last answer must arrive in time: long enough for a loaded machine."""
CAP = {"max_response_bytes": 1_000_000}
WAIT_250_MS = {"retry-after-ms": "250"}
ELSEWHERE = {"Location": "http://127.0.0.1:9/payments"}
NOWHERE = {"Location": "http://[::1"}
"""A Location no URL parser reads: httpx raises as it reads it, even where it follows no
redirect."""
PROXY_PAGE = b"<html><body><h1>502 Bad Gateway</h1></body></html>"
HTML = {"Content-Type": "text/html"}
TRUNCATED = b'{"status": true, "message": "Verification successful", "data": {}}'

SWITCHED = head(101, {"Upgrade": "websocket", "Connection": "Upgrade"}) + b"\x81\x02hi"
"""A protocol switch no request asked for, then a frame of the new protocol: no HTTP answer."""
NO_STATUS = b"HTTP/1.1 000 None\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
"""A status no answer can have (said to close, so no backend keeps the connection for a retry)."""
SLOW_HEAD = head(200, {"Content-Length": "2", "X-Padding": "x" * 200}) + b"{}"
"""About 13 s of answer at a byte every 0.05 s: far past any slack a bounded call is given."""

CASES = [
    # --- no answer, or half of one: APIConnectionError, retried ----------------------------
    Case("reset after the request", [reset()], APIConnectionError, 3),
    Case("reset, reset, then 200", [reset(), reset(), ok()], None, 3),
    Case("closed without a byte", [raw(b"")], APIConnectionError, 3),
    Case("body shorter than Content-Length", [cut_body(TRUNCATED)], APIConnectionError, 3),
    Case("chunked body cut", [cut_body(TRUNCATED, chunked=True)], APIConnectionError, 3),
    Case("reset mid-body", [cut_body(TRUNCATED, reset=True)], APIConnectionError, 3),
    Case("truncated, then 200", [cut_body(TRUNCATED), ok()], None, 2),
    # --- bad status lines -----------------------------------------------------------------
    Case("status not a number", [raw(b"HTTP/1.1 abc OK\r\n\r\n")], APIConnectionError, 3),
    Case("not HTTP at all", [raw(b"SSH-2.0-OpenSSH_9.6\r\n")], APIConnectionError, 3),
    Case("header without a colon", [raw(b"HTTP/1.1 200 OK\r\nbad\r\n\r\n")], APIConnectionError, 3),
    Case("101 as the answer", [raw(SWITCHED)], APIConnectionError, 3),
    Case("status 000", [raw(NO_STATUS)], APIConnectionError, 3),
    # --- 429 and 503 loops honour Retry-After ---------------------------------------------
    Case("429 for ever", [status(429, "2")], RateLimitError, 3, sleeps=[2.0, 2.0]),
    Case("503 for ever", [status(503, "1")], ServerError, 3, sleeps=[1.0, 1.0]),
    Case("503, 503, 200", [status(503, "1"), status(503, "3"), ok()], None, 3, sleeps=[1.0, 3.0]),
    Case("429 then 200", [status(429, "0"), ok()], None, 2, sleeps=[0.0]),
    Case("Retry-After beyond a minute", [status(429, "3600")], RateLimitError, 1, sleeps=[]),
    Case("no retries asked", [status(503, "1")], ServerError, 1, options={"max_retries": 0}),
    Case("retry-after-ms", [respond(503, headers=WAIT_250_MS)], ServerError, 3, sleeps=[0.25] * 2),
    # --- answers that are not retried, or retried without a server's word ---------------------
    Case("401", [status(401)], AuthenticationError, 1, sleeps=[]),
    Case("302 is not followed", [respond(302, headers=ELSEWHERE)], APIError, 1),
    Case("302 to no URL", [respond(302, headers=NOWHERE)], APIError, 1),
    Case("a proxy's HTML 502", [respond(502, PROXY_PAGE, HTML)], ServerError, 3),
    # --- no answer in time ----------------------------------------------------------------
    Case("stall before headers", [stall()], APITimeoutError, 2, options=SHORT | {"max_retries": 1}),
    Case("stall, then 200", [stall(), ok()], None, 2, options=WAITS_FOR_THE_200),
    # --- an attempt is bounded as a whole, however the server keeps it alive ----------------
    Case("body trickled a byte at a time", [trickle_body(interval=0.05)], APITimeoutError, 1,
         options={"timeout": 0.5, "max_retries": 0}, within=0.5),
    Case("head trickled a byte at a time", [trickle_head(SLOW_HEAD, interval=0.05)],
         APITimeoutError, 2,
         options={"timeout": 0.5, "max_retries": 1}, within=1.0),
    # the first retry waits at most 0.5 s: it starts unless the first attempt overran its 0.5 s
    # by 0.7 s (a loaded machine); the second waits at least 0.75 s after two attempts of at
    # least 0.5 s, so it would end at 1.75 s, past the deadline: never
    Case("a call deadline across retries", [stall()], APITimeoutError, 2,
         options={"timeout": 0.5, "max_retries": 10, "deadline": 1.7}, within=1.7),
    # --- no answer is read past its cap ----------------------------------------------------
    Case("endless chunked body", [endless_chunked()], ResponseTooLargeError, 1, options=CAP),
    Case("a 200 MB body", [large_body(200_000_000)], ResponseTooLargeError, 1, options=CAP),
    Case("a gzip bomb", [gzip_bomb(64 << 20)], ResponseTooLargeError, 1, options=CAP),
    Case("an endless error body is cut", [endless_chunked(status=503)], ServerError, 3),
    # --- say what happened -------------------------------------------------------------------
    Case("corrupt gzip on a 200", [corrupt_gzip(200)], ResponseValidationError, 1),
    Case("corrupt gzip on a 502", [corrupt_gzip(502)], ServerError, 3),
    Case("bytes after a gzip body", [gzip_then_junk()], ResponseValidationError, 1),
]  # fmt: skip


@pytest.fixture(params=ENDPOINTS, ids=lambda endpoint: endpoint.name)
def endpoint(request: pytest.FixtureRequest) -> Endpoint:
    assert isinstance(request.param, Endpoint)
    return request.param


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
async def test_fault(
    case: Case, endpoint: Endpoint, hostile: HostileServer, make_loopback_client: MakeClient
) -> None:
    hostile.script(*case.script)
    options = {"max_retries": 2, **case.options}
    client = make_loopback_client(base_url=hostile.base_url, **options)
    started = time.monotonic()
    if case.raises is None:
        assert await endpoint.call(client) == REFERENCE
    else:
        with pytest.raises(case.raises) as caught:
            await endpoint.call(client)
        assert type(caught.value) is case.raises, repr(caught.value)
    if case.within is not None:  # backoff waits are recorded, not slept: only attempts count
        assert time.monotonic() - started < case.within + SLACK
    assert hostile.attempts_seen(case.attempts) == case.attempts
    assert {request.path for request in hostile.requests} == {endpoint.path}
    if case.sleeps is not None:
        assert client.sleeps == pytest.approx(case.sleeps)


def utf8_on_the_wire(text: str) -> str:
    """``text`` spelt so the hostile server (which writes headers in Latin-1) sends its UTF-8."""
    return text.encode().decode("latin-1")


MALFORMED_RETRY_AFTER = [
    "+5",
    "1_000",
    "12.5",
    "1e1",
    utf8_on_the_wire("\u0661\u0662"),  # Arabic-Indic digits: int() reads 12
    utf8_on_the_wire("5\u00b2"),  # str.isdigit() takes the superscript
    "Wed, 21 Oct 2026 07:28:30 +0900",
]


@pytest.mark.parametrize("retry_after", MALFORMED_RETRY_AFTER)
async def test_a_malformed_retry_after_leaves_the_wait_to_backoff(
    retry_after: str, hostile: HostileServer, make_loopback_client: MakeClient
) -> None:
    """Only RFC 9110's forms of Retry-After are obeyed: for any other, the waits between tries
    are paysdk's own backoff (0.5 s, then 1 s, each less up to 25% jitter)."""
    client = make_loopback_client(base_url=hostile.base_url, max_retries=2)
    hostile.script(status(503, retry_after), status(503, retry_after), ok())
    assert (await client.verify(REFERENCE)).reference == REFERENCE
    assert hostile.attempts == 3
    first, second = client.sleeps
    assert 0.375 <= first <= 0.5
    assert 0.75 <= second <= 1.0


QUOTED_KEY = "sk_test_it's\\a\"b/c"
"""A key holding characters JSON writes escaped (``"``, ``\\``, ``/``) and a repr escapes
(``'``, ``\\``): a merchant chooses the sandbox's keys."""


@pytest.mark.parametrize("key", [SECRET, QUOTED_KEY], ids=["plain", "json-quoted"])
async def test_a_server_echoing_the_key_gets_it_into_no_message(
    key: str, endpoint: Endpoint, hostile: HostileServer, make_loopback_client: MakeClient
) -> None:
    """Nor into the error's ``text``, the body as sent: a key JSON writes escaped (``\\\\``,
    ``\\"``) is blotted out in that spelling too."""
    hostile.script(echo_authorization(401))
    client = make_loopback_client(base_url=hostile.base_url, secret_key=key)
    with pytest.raises(AuthenticationError) as caught:
        await endpoint.call(client)
    error = caught.value
    assert json.dumps(key)[1:-1].encode() in error.content  # the server really did echo it
    quoted = key.replace("\\", "\\\\")
    spellings = {key, json.dumps(key)[1:-1], quoted, quoted.replace("'", "\\'")}
    for written in (str(error), repr(error), error.text, repr(error.body)):
        assert not any(spelling in written for spelling in spellings), written
    assert "<secret key>" in error.text


MALFORMED = "the answer from the service could not be read as HTTP: "
"""How every backend begins the message of an answer it cannot read as HTTP."""


async def test_a_parsers_words_on_a_long_line_are_cut_in_the_message(
    endpoint: Endpoint, hostile: HostileServer, make_loopback_client: MakeClient
) -> None:
    """h11 and aiohttp quote a chunk header they refuse whole: 60,000 bytes of it would be a
    message of as many characters, in every log line a callback helper writes of it. The
    message quotes its start and says how long it was."""
    chunked = head(200, {"Transfer-Encoding": "chunked"})
    hostile.script(raw(chunked + b"z" * 60_000 + b"\r\n"))
    client = make_loopback_client(base_url=hostile.base_url, max_retries=0)
    with pytest.raises(APIConnectionError) as caught:
        await endpoint.call(client)
    message = str(caught.value)
    assert message.startswith(MALFORMED)
    assert "zzzz" in message
    assert "characters) (GET http://127.0.0.1:" in message
    assert len(message) < 1_000


def echo_in_payment(*, chunk: int = 0) -> Behaviour:
    """The endpoint's 200 whose payment quotes the request's Authorization header in a field
    the service added, in an optional field sent in the wrong type (``unparsed``) and in the
    customer's name; ``chunk``: sent chunked, that many bytes a chunk, so the key is cut."""

    def behave(conn: Connection, request: Request) -> bool:
        said = request.headers.get("authorization", "")
        echoes = {"echo": f"Authorization: {said}", "fee": said, "customer": {"name": said}}
        if request.path.startswith("/payment/"):
            document = verify_body(REFERENCE, **echoes)
        else:
            document = {"data": [listed_body(REFERENCE, **echoes)]}
        body = json.dumps(document).encode()
        if not chunk:
            return respond(200, body, {"Content-Type": "application/json"})(conn, request)
        chunked = {"Content-Type": "application/json", "Transfer-Encoding": "chunked"}
        conn.send(head(200, chunked))
        for start in range(0, len(body), chunk):
            piece = body[start : start + chunk]
            conn.send(b"%x\r\n%b\r\n" % (len(piece), piece))
        conn.send(b"0\r\n\r\n")
        return True

    return behave


def assert_key_blotted(
    payment: paysdk.VerifiedPayment | paysdk.ListedPayment, key: str = SECRET
) -> None:
    """The payment holds the echoed key, and no ``repr`` or ``str`` of it or its parts shows it,
    as given or as a repr quotes it."""
    assert payment.model_extra is not None
    assert key in payment.model_extra["echo"]
    assert key in payment.unparsed["fee"]
    assert payment.customer is not None
    assert payment.customer.name is not None
    assert key in payment.customer.name  # what was received is kept
    quoted = key.replace("\\", "\\\\")
    for written in (repr(payment), str(payment), repr(payment.customer), f"{payment!s:}"):
        assert key not in written
        assert quoted not in written and quoted.replace("'", "\\'") not in written
        assert "<secret key>" in written


async def test_a_payment_echoing_the_key_has_it_blotted_out_of_its_repr(
    endpoint: Endpoint, hostile: HostileServer, make_loopback_client: MakeClient
) -> None:
    """A merchant logs ``repr(payment)``: a key the server or a proxy echoed into the 200 body
    shows as ``<secret key>``, as it does in an error's message."""
    hostile.script(echo_in_payment())
    client = make_loopback_client(base_url=hostile.base_url)
    if endpoint.name == "verify":
        payment: paysdk.VerifiedPayment | paysdk.ListedPayment = await client.verify(REFERENCE)
    else:
        (payment,) = await client.list_payments()
    assert_key_blotted(payment)


@pytest.mark.parametrize("chunk", [5, 4096], ids=["cut", "whole"])
async def test_a_streamed_payment_echoing_the_key_has_it_blotted_out_of_its_repr(
    chunk: int, hostile: HostileServer, make_loopback_client: MakeClient
) -> None:
    """``iter_payments`` reads the body chunk by chunk: a key cut across chunks is found too."""
    hostile.script(echo_in_payment(chunk=chunk))
    client = make_loopback_client(base_url=hostile.base_url)
    (payment,) = await client.drain()
    assert_key_blotted(payment)


@pytest.mark.parametrize("chunk", [0, 5], ids=["whole", "streamed-cut"])
async def test_a_payment_echoing_a_key_json_escapes_has_it_blotted_out_of_its_repr(
    chunk: int, hostile: HostileServer, make_loopback_client: MakeClient
) -> None:
    """The key echoed as JSON writes it (``\\"``, ``\\\\``) is found in the body, and blotted
    out of the repr however the repr quotes it (``\\'``, ``\\\\``)."""
    hostile.script(echo_in_payment(chunk=chunk))
    client = make_loopback_client(base_url=hostile.base_url, secret_key=QUOTED_KEY)
    if chunk:
        (payment,) = await client.drain()
    else:
        payment = await client.verify(REFERENCE)
    assert_key_blotted(payment, QUOTED_KEY)


async def test_an_api_error_survives_a_pickle_and_a_deep_copy_with_its_headers(
    endpoint: Endpoint, hostile: HostileServer, make_loopback_client: MakeClient
) -> None:
    """A task queue sends an exception back from its worker process pickled, and error
    reporters copy them: on every backend the headers go along, looked up in any case."""
    hostile.script(respond_json(500, {"error": "boom"}, {"X-Request-Id": "req_1"}))
    client = make_loopback_client(base_url=hostile.base_url, max_retries=0)
    with pytest.raises(ServerError) as caught:
        await endpoint.call(client)
    for twin in (pickle.loads(pickle.dumps(caught.value)), copy.deepcopy(caught.value)):  # noqa: S301
        assert type(twin) is ServerError
        assert str(twin) == str(caught.value)
        assert twin.headers["x-request-id"] == twin.headers["X-Request-Id"] == "req_1"
        assert twin.content == caught.value.content


def echo_in_header(status: int = 500) -> Behaviour:
    """An error whose headers quote the request's Authorization header, the request id too."""

    def behave(conn: Connection, request: Request) -> bool:
        said = request.headers.get("authorization", "")
        headers = {"X-Echo": f"Authorization: {said}", "X-Request-Id": said}
        return respond_json(status, {"error": "boom"}, headers)(conn, request)

    return behave


def key_in(data: bytes, key: str) -> bool:
    """Whether ``data`` (a pickle) holds ``key``, as UTF-8 or as pickle's protocol 0 writes
    text (raw-unicode-escape: a backslash as ``\\u005c``)."""
    escaped = key.encode("raw_unicode_escape").replace(b"\\", b"\\u005c")
    return key.encode() in data or escaped in data


@pytest.mark.parametrize("key", [SECRET, QUOTED_KEY], ids=["plain", "json-escaped"])
@pytest.mark.parametrize("echo", [echo_authorization(401), echo_in_header()], ids=["body", "head"])
async def test_an_api_error_quoting_the_key_pickles_and_copies_without_it(
    key: str,
    echo: Behaviour,
    endpoint: Endpoint,
    hostile: HostileServer,
    make_loopback_client: MakeClient,
) -> None:
    """A task queue's result store (Celery's Redis, a database) keeps a task's exception
    pickled, and error reporters copy it: a key the server echoed into the body or a header is
    blotted out of the pickle and the copy, as it is out of ``text`` and the message; the
    exception itself keeps ``content`` and ``headers`` as received."""
    hostile.script(echo)
    client = make_loopback_client(base_url=hostile.base_url, secret_key=key, max_retries=0)
    with pytest.raises(APIError) as caught:
        await endpoint.call(client)
    error = caught.value
    as_received = error.content + "".join(error.headers.values()).encode()
    assert b"Bearer" in as_received
    twins = [
        pickle.loads(pickle.dumps(error, protocol))  # noqa: S301 (bytes this test just made)
        for protocol in range(pickle.HIGHEST_PROTOCOL + 1)
    ]
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        assert not key_in(pickle.dumps(error, protocol), key), protocol
    for twin in [*twins, copy.copy(error), copy.deepcopy(error)]:
        assert type(twin) is type(error)
        assert (str(twin), twin.status_code, twin.request_id) == (
            str(error),
            error.status_code,
            error.request_id,
        )
        assert (twin.text, twin.body, twin.attempts) == (error.text, error.body, error.attempts)
        assert key not in repr(vars(twin))
        assert twin.headers["content-type"] == error.headers["Content-Type"]
        kept = twin.content + "".join(twin.headers.values()).encode()
        assert b"Bearer <secret key>" in kept


async def test_a_payment_echoing_the_key_pickles_without_it(
    endpoint: Endpoint, hostile: HostileServer, make_loopback_client: MakeClient
) -> None:
    """A payment handed to a task queue or a cache pickled, alone or in the error that
    carries it, holds no key its body echoed; what repr showed, it shows."""
    hostile.script(echo_in_payment())
    client = make_loopback_client(base_url=hostile.base_url)
    if endpoint.name == "verify":
        verified = await client.verify(REFERENCE)
        payment: paysdk.VerifiedPayment | paysdk.ListedPayment = verified
        carriers: list[object] = [payment, paysdk.PaymentFailedError("no", payment=verified)]
    else:
        (payment,) = await client.list_payments()
        carriers = [payment, [payment]]
    for carrier in carriers:
        for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
            assert not key_in(pickle.dumps(carrier, protocol), SECRET), (carrier, protocol)
    twin = pickle.loads(pickle.dumps(payment))  # noqa: S301 (bytes this test just made)
    assert repr(twin) == repr(payment)
    assert (twin.reference, twin.amount, twin.currency) == (
        payment.reference,
        payment.amount,
        payment.currency,
    )
    assert twin.model_extra is not None
    assert twin.model_extra["echo"] == "Authorization: Bearer <secret key>"
    assert twin.unparsed["fee"] == "Bearer <secret key>"
    assert twin.customer is not None
    assert twin.customer.name == "Bearer <secret key>"
    assert_key_blotted(payment)  # the payment itself keeps what it received


async def test_a_mismatch_on_a_currency_quoting_the_key_pickles_without_it(
    hostile: HostileServer, make_loopback_client: MakeClient
) -> None:
    """``mismatches`` holds the values the payment had: a currency the server filled with the
    key is blotted out of the error's pickle as out of the payment's."""

    def behave(conn: Connection, request: Request) -> bool:
        key = request.headers.get("authorization", "").removeprefix("Bearer ")
        body = json.dumps(verify_body(REFERENCE, currency=key)).encode()
        return respond(200, body, {"Content-Type": "application/json"})(conn, request)

    hostile.script(behave)
    client = make_loopback_client(base_url=hostile.base_url)
    with pytest.raises(paysdk.PaymentMismatchError) as caught:
        await client.confirm(REFERENCE, currency="NGN")
    assert caught.value.mismatches["currency"] == ("NGN", SECRET)  # as received
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        data = pickle.dumps(caught.value, protocol)
        assert not key_in(data, SECRET), protocol
        twin = pickle.loads(data)  # noqa: S301 (bytes this test just made)
        assert twin.mismatches["currency"] == ("NGN", "<secret key>")
        assert twin.payment.currency == "<secret key>"
        assert str(twin) == str(caught.value)


async def test_a_reason_phrase_reaches_no_log_line(
    endpoint: Endpoint,
    hostile: HostileServer,
    make_loopback_client: MakeClient,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """httpx logs each request it sends at INFO with the answer's reason phrase, the server's
    own text: one that echoes the key and carries terminal escapes shows in no log line."""
    reason = f"\x1b[2J{SECRET}"
    hostile.script(raw(head(500, {"Content-Length": "0"}, reason=reason)))
    client = make_loopback_client(base_url=hostile.base_url, max_retries=0)
    with caplog.at_level(logging.INFO), pytest.raises(ServerError):
        await endpoint.call(client)
    for record in caplog.records:
        if record.name.startswith("httpx"):
            assert SECRET not in record.getMessage() and "\x1b" not in record.getMessage()


@pytest.mark.parametrize(
    "answer",
    [
        b"HTTP/1.1 2x0 " + SECRET.encode() + b"\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nX-\x1b" + SECRET.encode() + b"\r\nContent-Length: 0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Encoding: "
        + SECRET.encode()
        + b"\r\n\r\n{}",
    ],
    ids=["status-line", "header-line", "content-encoding"],
)
async def test_a_line_echoing_the_key_reaches_no_traceback(
    answer: bytes,
    endpoint: Endpoint,
    hostile: HostileServer,
    make_loopback_client: MakeClient,
) -> None:
    """h11, httpcore, httpx and aiohttp quote the line they refuse in their errors, which a
    paysdk error is raised from: ``logger.exception()`` and error reporters print the chain."""
    hostile.script(raw(answer))
    client = make_loopback_client(base_url=hostile.base_url, max_retries=0)
    with pytest.raises(PaySDKError) as caught:
        await endpoint.call(client)
    assert SECRET not in "".join(traceback.format_exception(caught.value))


HOSTILE_HEADER = f"text/html; k={SECRET}\x1b[2J\x9b2J"
"""A header value that echoes the key and carries ESC and C1 CSI, which a terminal acts on."""


@pytest.mark.parametrize(
    "header", ["Content-Type", "Content-Encoding"], ids=["content-type", "content-encoding"]
)
async def test_a_header_the_message_quotes_has_the_key_blotted_out_and_controls_escaped(
    header: str, endpoint: Endpoint, hostile: HostileServer, make_loopback_client: MakeClient
) -> None:
    """A 2xx answer that cannot be read names its Content-Type or Content-Encoding in the
    message, which a merchant prints and logs: the value is the server's, like the body."""
    hostile.script(respond(200, b"<html>", {header: HOSTILE_HEADER}))
    client = make_loopback_client(base_url=hostile.base_url, max_retries=0)
    with pytest.raises(ResponseValidationError) as caught:
        await endpoint.call(client)
    message = str(caught.value)
    assert "<secret key>" in message
    assert SECRET not in message and SECRET.lower() not in message
    assert not any(ch in message for ch in "\x1b\x9b"), message


async def test_the_environments_proxy_is_used_by_every_backend(
    hostile: HostileServer, make_loopback_client: MakeClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """HTTP_PROXY names a loopback "proxy" (the hostile server): every backend must send the
    request there, in absolute form, as httpx does by default. The service's host is never
    resolved or reached."""
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "HTTPS_PROXY", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", hostile.base_url)
    monkeypatch.setenv("http_proxy", hostile.base_url)
    hostile.script(respond_json(200, verify_body(REFERENCE)))
    client = make_loopback_client(base_url="http://api.pay.test/v1", allow_insecure_http=True)
    assert (await client.verify(REFERENCE)).reference == REFERENCE
    (request,) = hostile.requests
    assert request.target == f"http://api.pay.test/v1/payment/{REFERENCE}"


async def test_an_attempt_through_the_environments_proxy_is_bounded_as_a_whole(
    hostile: HostileServer, make_loopback_client: MakeClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """httpx sends through a separate pool when a proxy is set: it must be deadline-bound too."""
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "HTTPS_PROXY", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", hostile.base_url)
    monkeypatch.setenv("http_proxy", hostile.base_url)
    hostile.script(trickle_head(SLOW_HEAD, interval=0.05))
    client = make_loopback_client(
        base_url="http://api.pay.test/v1", allow_insecure_http=True, timeout=0.5, max_retries=0
    )
    started = time.monotonic()
    with pytest.raises(APITimeoutError):
        await client.verify(REFERENCE)
    assert time.monotonic() - started < 0.5 + SLACK
    assert len(hostile.requests) == 1


def test_a_stream_whose_gzip_header_never_ends_meets_its_budget_on_an_injected_client(
    hostile: HostileServer,
) -> None:
    """Raw chunks that inflate to nothing (a gzip file name trickled for ever) reach no
    decoded byte: the read's deadline shuts the merchant's socket, and the stream reader looks
    at its clock between chunks too."""

    def endless_file_name(conn: Connection, request: Request) -> bool:
        headers = {"Content-Encoding": "gzip", "Content-Type": "application/json"}
        conn.send(head(200, {**headers, "Connection": "close"}))
        conn.send(b"\x1f\x8b\x08\x08\x00\x00\x00\x00\x00\xff")  # a gzip header with a file name
        for _ in range(400):  # 20 s of file name, one byte at a time
            conn.send(b"a")
            conn.pause(0.05)
        return False

    hostile.script(endless_file_name)
    with (
        httpx.Client() as http,
        paysdk.Client(
            secret_key=SECRET,
            base_url=hostile.base_url,
            http_client=http,
            allow_insecure_http=True,
            timeout=0.5,
            max_retries=0,
        ) as client,
    ):
        started = time.monotonic()
        with pytest.raises(APITimeoutError):
            list(client.iter_payments())
    assert time.monotonic() - started < 0.5 + SLACK


def kept_alive(answer: bytes) -> Behaviour:
    """Send ``answer`` as is and keep the connection for the next request."""

    def behave(conn: Connection, request: Request) -> bool:
        conn.send(answer)
        return True

    return behave


REPEATED_FIELDS = (
    b"HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\nContent-Length: 2\r\n"
    b"Retry-After: 1\r\nRetry-After: 30\r\nX-Request-Id: req_a\r\nX-Request-Id: req_b\r\n\r\n{}"
)
"""An answer repeating fields that must each be one value: RFC 9110 reads a repeated field as
its values joined by commas, which no Retry-After form allows."""


async def test_repeated_fields_are_read_joined_on_every_backend(
    hostile: HostileServer, make_loopback_client: MakeClient
) -> None:
    """A field sent twice is its values joined (``1, 30``), as httpx reads it, on every backend:
    aiohttp's first value alone would obey a ``Retry-After`` the others ignore, and name
    another request id."""
    client = make_loopback_client(base_url=hostile.base_url, max_retries=1)
    hostile.script(kept_alive(REPEATED_FIELDS))
    with pytest.raises(RateLimitError) as caught:
        await client.verify(REFERENCE)
    (wait,) = client.sleeps
    assert 0.375 <= wait <= 0.5  # the backoff's: the malformed hint is ignored
    assert caught.value.retry_after is None
    assert caught.value.request_id == "req_a, req_b"
    assert caught.value.headers["x-request-id"] == "req_a, req_b"
    assert pickle.loads(pickle.dumps(caught.value)).headers["retry-after"] == "1, 30"  # noqa: S301


def raised_in(error: BaseException) -> list[BaseException]:
    """``error`` and every exception it was raised from or during, each once."""
    found: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and all(current is not seen for seen in found):
        found.append(current)
        current = current.__cause__ or current.__context__
    return found


@pytest.mark.parametrize(
    "answer",
    [b"HTTP/1.1 200 OK\r\nbad\r\n\r\n", b"HTTP/1.1 abc OK\r\n\r\n", SWITCHED + b"\r\n"],
    ids=["header without a colon", "status not a number", "101"],
)
async def test_the_key_is_in_the_repr_of_nothing_an_unreadable_answer_raised(
    answer: bytes, hostile: HostileServer, make_loopback_client: MakeClient
) -> None:
    """Nor of what the error was raised from: aiohttp's error for an answer it cannot parse
    keeps the request's headers, which its repr shows (a log of ``repr(error.__cause__)``, an
    error tracker's record of the chain)."""
    client = make_loopback_client(base_url=hostile.base_url, max_retries=0)
    hostile.script(raw(answer))
    with pytest.raises(APIConnectionError) as caught:
        await client.verify(REFERENCE)
    for raised in raised_in(caught.value):
        assert SECRET not in repr(raised)
        assert SECRET not in repr(vars(raised))
        assert SECRET not in repr(raised.args)


@pytest.mark.parametrize(
    "answer",
    [
        b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!",
        b"HTTP/1.1 2000 OK\r\nContent-Length: 2\r\n\r\n{}",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + TRUNCATED,
        b"SSH-2.0-OpenSSH_9.6\r\n\r\n",
        b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: upgrade\r\n\r\n",
    ],
    ids=[
        "two content lengths",
        "status of four digits",
        "chunk size not hex",
        "body cut",
        "not HTTP",
        "protocol switched",
    ],
)
async def test_an_answer_no_parser_reads_is_said_on_one_line_with_no_status_it_lacks(
    answer: bytes, endpoint: Endpoint, hostile: HostileServer, make_loopback_client: MakeClient
) -> None:
    """The service was reached, and what it sent is not HTTP: said so on every backend, not as
    a service that could not be reached. aiohttp raises such an answer as an error of status
    400 (what a server would send back) and words it over lines, a caret under the bad byte:
    said as h11's words are, one line, no 400 that would read as the service's answer."""
    hostile.script(raw(answer))
    client = make_loopback_client(base_url=hostile.base_url, max_retries=0)
    with pytest.raises(APIConnectionError) as caught:
        await endpoint.call(client)
    message = str(caught.value).replace(hostile.base_url, "URL")  # a port may hold 400
    assert message.startswith(MALFORMED), message
    assert "\n" not in message
    assert "400" not in message
    assert "ClientResponseError" not in message


async def test_a_2xx_body_that_does_not_decode_is_said_in_a_sentence(
    endpoint: Endpoint, hostile: HostileServer, make_loopback_client: MakeClient
) -> None:
    hostile.script(corrupt_gzip(200))
    client = make_loopback_client(base_url=hostile.base_url, max_retries=0)
    with pytest.raises(ResponseValidationError) as caught:
        await endpoint.call(client)
    assert str(caught.value).startswith(
        "the service answered, but the body could not be decoded (Content-Encoding: 'gzip'): "
    )
    assert caught.value.status_code == 200


NOT_UTF8_ID = b"HTTP/1.1 500 Oops\r\nContent-Length: 2\r\nX-Request-Id: req-\xff\xfe\r\n\r\n{}"
"""An error answer whose request id holds bytes that are not UTF-8."""


async def test_header_bytes_that_are_not_utf8_read_alike_on_every_backend(
    hostile: HostileServer, make_loopback_client: MakeClient
) -> None:
    """As httpx reads them (Latin-1, each byte a character): aiohttp's own decoding keeps them
    as lone surrogates, a ``str`` no UTF-8 log or JSON encoder can write."""
    client = make_loopback_client(base_url=hostile.base_url, max_retries=0)
    hostile.script(kept_alive(NOT_UTF8_ID))
    with pytest.raises(ServerError) as caught:
        await client.verify(REFERENCE)
    assert caught.value.headers["x-request-id"] == "req-\xff\xfe"
    assert json.dumps(dict(caught.value.headers), ensure_ascii=False).encode()

"""iter_payments: the incremental parser, and the streaming plan's errors, retries and cut-offs."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import respx
from hypothesis import given, settings
from hypothesis import strategies as st

import paysdk
from paysdk._parsing.stream import ListStream
from paysdk.sandbox import PaymentRecord, Sandbox
from tests.conftest import (
    BASE_URL,
    LIST_UNAVAILABLE_BODY,
    CutAfter,
    MakeClient,
    listed_body,
    make_config,
)

pytestmark = pytest.mark.anyio

BODY = json.dumps(
    {"data": [listed_body(f"order-{n}") for n in range(50)], "page": {"next": None}}
).encode()


def parse_in_chunks(body: bytes, size: int, max_item_bytes: int = 1 << 20) -> list[str]:
    stream = ListStream(max_item_bytes=max_item_bytes)
    payments = []
    for start in range(0, len(body), size):
        payments += stream.feed(body[start : start + size])
    payments += stream.close()
    return [payment.reference for payment in payments]


@settings(max_examples=60, deadline=None)
@given(size=st.integers(min_value=1, max_value=len(BODY)))
def test_any_chunking_gives_every_payment_in_order(size: int) -> None:
    assert parse_in_chunks(BODY, size) == [f"order-{n}" for n in range(50)]


def test_white_space_other_fields_and_unicode_anywhere() -> None:
    body = (
        '\n{ "before" : {"a": [1, {"b": "]}"}]}, "data" :\t[ '
        + json.dumps(listed_body("café-€"), indent=2)
        + " , "
        + json.dumps(listed_body("order-2"))
        + ' ] , "after": 12 }\n'
    ).encode()
    for size in (1, 2, 3, 5, len(body)):
        assert parse_in_chunks(body, size) == ["café-€", "order-2"]


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        (b"", "an empty body"),
        (b"<html>502</html>", "body is not a JSON object"),
        (b'{"data": [', "cut short"),
        (b'{"items": []}', "data: Field required"),
        (b'{"data": {}}', "data: Input should be a valid list"),
        (b'{"data": []} trailing', "more after its closing brace"),
        (b'{"data": [' + json.dumps(listed_body()).encode() + b"]", "cut short"),
        (b'{"data": [] "x": 1}', "not JSON"),
        (b'{"data": [\xff]}', "not JSON"),
        (b'{"data": [' + b"[" * 100_000 + b"]", "nested too deeply"),
    ],
)
def test_bodies_that_are_not_a_list_are_refused(body: bytes, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        parse_in_chunks(body, 7)


@pytest.mark.parametrize("size", [1, 2, 5, 1 << 20])
@pytest.mark.parametrize(
    ("body", "problem"),
    [
        (b'{"data": []}\xff', "more after its closing brace"),
        (b'{"data": [\xff]}', "cut short or is not JSON"),
        (b'{\xe9"data": []}', "cut short or is not JSON"),
        (b'{"data": [], "x": 1\xc3}', "not JSON"),
        (b"\xff", "body is not a JSON object"),
        (b'{"data": \x80}', "data: Input should be a valid list"),
    ],
)
def test_a_body_not_json_for_bytes_not_utf8_says_which_and_where(
    body: bytes, problem: str, size: int
) -> None:
    """The body's text holds U+FFFD where the service sent such a byte: the error names the
    byte the service did send, and where, however the chunks cut the body."""
    where = next(i for i, byte in enumerate(body) if byte >= 0x80)
    said = f"holding bytes that are not UTF-8 (the first, 0x{body[where]:02x}, at byte {where})"
    with pytest.raises(ValueError, match=re.escape(problem)) as raised:
        parse_in_chunks(body, size)
    assert str(raised.value).endswith(said)


@pytest.mark.parametrize("size", [1, 2, 1 << 20])
def test_a_replacement_character_the_service_sent_is_no_byte_that_is_not_utf8(size: int) -> None:
    body = '{"x": "\ufffd" "data": []}'.encode()
    with pytest.raises(ValueError, match=r"^a body that is not JSON$"):
        parse_in_chunks(body, size)


def test_a_payment_over_the_item_cap_is_refused_while_streaming() -> None:
    huge = json.dumps({"data": [listed_body(metadata="x" * 10_000)]}).encode()
    with pytest.raises(ValueError, match="larger than the 2,000 bytes allowed"):
        parse_in_chunks(huge, 512, max_item_bytes=2_000)


# --- through the clients ------------------------------------------------------------------------


async def test_iter_payments_yields_what_list_payments_returns(
    make_client: MakeClient, respx_mock: respx.MockRouter
) -> None:
    respx_mock.get(f"{BASE_URL}/payments").respond(200, content=BODY)
    client = make_client()
    streamed = await client.drain()
    assert streamed == await client.list_payments()
    assert len(streamed) == 50


async def test_failures_before_the_first_payment_are_retried(
    make_client: MakeClient, respx_mock: respx.MockRouter
) -> None:
    route = respx_mock.get(f"{BASE_URL}/payments")
    route.side_effect = [
        httpx.Response(404, json=LIST_UNAVAILABLE_BODY),
        httpx.ConnectError("refused"),
        httpx.Response(200, content=BODY),
    ]
    client = make_client()
    assert len(await client.drain()) == 50
    assert route.call_count == 3
    assert len(client.sleeps) == 2


async def test_errors_are_the_same_typed_errors_as_list_payments(
    make_client: MakeClient, respx_mock: respx.MockRouter
) -> None:
    respx_mock.get(f"{BASE_URL}/payments").respond(401, json={"error": "Unauthorized"})
    with pytest.raises(paysdk.AuthenticationError):
        await make_client().drain()


async def test_a_bad_payment_is_a_validation_error_naming_its_place(
    make_client: MakeClient, respx_mock: respx.MockRouter
) -> None:
    items = [listed_body("order-0"), listed_body("order-1", amount="100")]
    respx_mock.get(f"{BASE_URL}/payments").respond(200, json={"data": items})
    with pytest.raises(paysdk.ResponseValidationError) as caught:
        await make_client().drain()
    assert "data.1.amount" in str(caught.value)
    assert caught.value.errors[0]["loc"] == ("data", 1, "amount")


async def test_a_cut_after_payments_went_out_is_raised_not_retried(
    make_client: MakeClient, respx_mock: respx.MockRouter
) -> None:
    head = BODY[: BODY.index(b'"order-3"')]  # three whole payments, then the cut
    route = respx_mock.get(f"{BASE_URL}/payments")
    route.side_effect = lambda request: httpx.Response(200, stream=CutAfter(head))
    client = make_client()
    seen: list[str] = []

    async def drain() -> None:
        payments: Any = client.client.iter_payments()
        if client.is_async:
            async for payment in payments:
                seen.append(payment.reference)
        else:
            for payment in payments:
                seen.append(payment.reference)

    with pytest.raises(paysdk.APIConnectionError, match="after 3 payment") as caught:
        await drain()
    assert seen == ["order-0", "order-1", "order-2"]
    assert route.call_count == 1
    assert isinstance(caught.value.__cause__, httpx.ReadError)


@pytest.mark.parametrize("failure", ["cut", "invalid"])
async def test_an_error_raised_mid_stream_counts_the_attempts_before_it(
    make_client: MakeClient, respx_mock: respx.MockRouter, failure: str
) -> None:
    """``attempts`` on an error the stream raises unretried includes the retries before it."""
    head = BODY[: BODY.index(b'"order-3"')]
    invalid = [listed_body("order-0"), listed_body("order-1", amount="100")]
    second = (
        httpx.Response(200, stream=CutAfter(head))
        if failure == "cut"
        else httpx.Response(200, json={"data": invalid})
    )
    route = respx_mock.get(f"{BASE_URL}/payments")
    route.side_effect = [httpx.Response(503), second]
    with pytest.raises(paysdk.PaySDKError) as caught:
        await make_client().drain()
    assert route.call_count == 2
    assert caught.value.attempts == 2


async def test_a_cut_before_any_payment_is_retried(
    make_client: MakeClient, respx_mock: respx.MockRouter
) -> None:
    route = respx_mock.get(f"{BASE_URL}/payments")
    route.side_effect = [
        httpx.Response(200, stream=CutAfter(b'{"data": [{"id": ')),
        httpx.Response(200, content=BODY),
    ]
    assert len(await make_client().drain()) == 50
    assert route.call_count == 2


async def test_stopping_early_closes_the_stream(
    make_client: MakeClient, respx_mock: respx.MockRouter
) -> None:
    closed: list[bool] = []

    class Tracked(httpx.SyncByteStream, httpx.AsyncByteStream):
        def __iter__(self) -> Any:
            yield BODY

        async def __aiter__(self) -> Any:
            yield BODY

        def close(self) -> None:
            closed.append(True)

        async def aclose(self) -> None:
            closed.append(True)

    respx_mock.get(f"{BASE_URL}/payments").side_effect = lambda request: httpx.Response(
        200, stream=Tracked()
    )
    client = make_client()
    payments: Any = client.client.iter_payments()
    if client.is_async:
        async with payments:
            first = await payments.__anext__()
    else:
        with payments:
            first = next(payments)
    assert first.reference == "order-0"
    assert closed == [True]


async def test_iter_payments_on_a_closed_client(make_client: MakeClient) -> None:
    client = make_client()
    await client.close()
    with pytest.raises(paysdk.ClientClosedError):
        await client.drain()


@pytest.fixture(scope="module")
def long_list() -> Iterator[Sandbox]:
    """A list far longer than one read of the socket (about 2.5 MB)."""
    with Sandbox(payments=(PaymentRecord(f"long-{n}", amount=n + 1) for n in range(5000))) as sb:
        yield sb


async def test_closing_the_client_mid_iteration_is_a_closed_client_error(
    long_list: Sandbox, make_loopback_client: MakeClient
) -> None:
    # Closing the client under a running iteration cuts its connection; the read that fails is
    # then reported as what happened (the client was closed), not as a lost connection.
    client = make_loopback_client(base_url=long_list.base_url, secret_key=long_list.secret_key)
    payments: Any = client.client.iter_payments()
    first = await payments.__anext__() if client.is_async else next(payments)
    assert first.reference.startswith("long-")
    await client.close()

    async def the_rest() -> None:
        if client.is_async:
            async for _ in payments:
                pass
        else:
            for _ in payments:
                pass

    with pytest.raises(paysdk.ClientClosedError):
        await the_rest()


def test_each_payment_must_arrive_within_the_budget_of_the_last() -> None:
    """A trickle that keeps every read short still runs out of time between payments."""
    from paysdk import _core

    now = [0.0]
    config = make_config(max_retries=0)
    policy = _core.RetryPolicy(max_retries=0, monotonic=lambda: now[0])
    plan = _core.iter_payments(config, policy=policy)
    send = next(plan)
    assert isinstance(send, _core.Send)
    assert send.stream
    step: Any = plan.send(_core.Opened(200, {}))
    budgets = []

    def trickle() -> None:
        nonlocal step
        for byte in BODY[:400]:  # not yet one whole payment
            assert isinstance(step, _core.Read)
            budgets.append(step.budget)
            now[0] += 0.5
            step = plan.send(bytes([byte]))

    with pytest.raises(paysdk.APITimeoutError, match="no payment arrived within 10s"):
        trickle()
    assert budgets[:3] == [10.0, 9.5, 9.0]
    assert len(budgets) == 20


def test_the_callers_own_time_between_payments_is_not_charged_to_the_server() -> None:
    from paysdk import _core

    now = [0.0]
    config = make_config(max_retries=0)
    plan = _core.iter_payments(
        config, policy=_core.RetryPolicy(max_retries=0, monotonic=lambda: now[0])
    )
    next(plan)
    step: Any = plan.send(_core.Opened(200, {}))
    first, second = BODY.index(b'"order-1"'), BODY.index(b'"order-2"')
    for piece in (BODY[:first], BODY[first:second]):  # each completes one payment
        assert isinstance(step, _core.Read)
        step = plan.send(piece)
        assert isinstance(step, _core.Emit)
        now[0] += 60.0  # the caller works on it for a minute, far past the 10 s budget
        step = plan.send(None)
    assert isinstance(step, _core.Read)
    assert step.budget == 10.0  # the server's clock restarts when the caller asks for more


def test_a_deadline_bounds_the_whole_iteration() -> None:
    from paysdk import _core

    now = [0.0]
    config = make_config(max_retries=0, deadline=15)
    plan = _core.iter_payments(
        config, policy=_core.RetryPolicy(max_retries=0, monotonic=lambda: now[0])
    )
    next(plan)
    step: Any = plan.send(_core.Opened(200, {}))
    assert step.budget == 10.0
    now[0] = 12.0
    step = plan.send(BODY[: BODY.index(b'"order-1"')])  # one payment, at 12 s
    step = plan.send(None)
    assert step.budget == pytest.approx(3.0)  # what is left of the 15 s, not a fresh 10 s
    now[0] = 16.0
    with pytest.raises(paysdk.APITimeoutError, match="deadline of 15s"):
        plan.send(b" ")


@pytest.mark.parametrize("size", [1, 2, 3, 64, 1 << 20])
def test_lone_surrogates_and_bytes_not_utf8_read_as_the_replacement_character(size: int) -> None:
    """As ``list_payments`` reads them, however the chunks cut the body."""
    body = json.dumps(
        {"data": [listed_body(reference="x\ud800y"), listed_body(reference="a\udc00")]}
    ).encode()
    assert b"\\ud800" in body
    assert parse_in_chunks(body, size) == ["x\ufffdy", "a\ufffd"]
    latin1 = json.dumps({"data": [listed_body(reference="REN-E")]}).encode()
    latin1 = latin1.replace(b"REN-E", b"REN\xc9E-\xe2\x82")  # Latin-1's E acute; a cut euro sign
    assert parse_in_chunks(latin1, size) == ["REN\ufffdE-\ufffd"]
    good = json.dumps({"data": [listed_body(reference="caf\u00e9 \U0001f600")]}).encode()
    assert parse_in_chunks(good, size) == ["caf\u00e9 \U0001f600"]  # escapes and pairs as sent


@pytest.mark.parametrize("filler", ["},", '\\"]'], ids=["braces-and-commas", "escapes"])
def test_a_large_payment_full_of_closers_costs_linear_time_in_tiny_chunks(
    monkeypatch: pytest.MonkeyPatch, filler: str
) -> None:
    """Every chunk could close the unfinished value here (its string is full of ``}`` and
    ``,``): it is retried only once the chunks held add up to what was tried, so the parses
    cost at most twice the value, however it is cut."""
    import paysdk._parsing.stream as stream_module

    big = json.dumps({"data": [listed_body(description=filler * 300_000)]}).encode()
    parsed_chars = 0
    real = stream_module._DECODER

    class Counting(json.JSONDecoder):
        def raw_decode(self, s: str, idx: int = 0) -> tuple[Any, int]:
            nonlocal parsed_chars
            parsed_chars += len(s) - idx
            return real.raw_decode(s, idx)

    monkeypatch.setattr(stream_module, "_DECODER", Counting())
    stream = ListStream(max_item_bytes=1 << 22)
    parsed = [
        p.reference
        for start in range(0, len(big), 1024)
        for p in stream.feed(big[start : start + 1024])
    ]
    parsed += [p.reference for p in stream.close()]
    assert parsed == ["order-1042"]
    assert parsed_chars < 3 * len(big)  # one parse per chunk: about len(big) ** 2 / 2048


def test_a_large_payment_in_tiny_chunks_is_parsed_once_it_closes() -> None:
    """Chunks that cannot close the unfinished value are only kept: the element is parsed when
    a chunk could end it, not once per chunk."""
    big = json.dumps({"data": [listed_body(description="z" * 200_000)]}).encode()
    stream = ListStream(max_item_bytes=1 << 20)
    parsed: list[str] = []
    attempts = 0
    real = stream._parse

    def counting(*, final: bool) -> list[paysdk.ListedPayment]:
        nonlocal attempts
        attempts += 1
        return real(final=final)

    stream._parse = counting  # type: ignore[method-assign]
    for start in range(0, len(big), 100):
        parsed += [p.reference for p in stream.feed(big[start : start + 100])]
    parsed += [p.reference for p in stream.close()]
    assert parsed == ["order-1042"]
    assert attempts < 200  # 2,000 chunks; without holding them back, one parse per chunk


def test_a_payment_under_the_item_cap_is_taken_however_the_next_one_arrives() -> None:
    # two payments of about 720 KB under a 1 MiB cap, the second cut where the parser is still
    # holding chunks back: what it holds past the first payment's end is the next one's, and
    # no single value over the cap
    pad = "x" * 720_000
    body = json.dumps(
        {
            "data": [
                listed_body("order-1", metadata={"pad": pad}),
                listed_body("order-2", metadata={"pad": pad}),
            ]
        }
    ).encode()
    stream = ListStream(max_item_bytes=1 << 20)
    payments = []
    for start, end in ((0, 700_000), (700_000, 1_220_070), (1_220_070, len(body))):
        payments += stream.feed(body[start:end])
    payments += stream.close()
    assert [payment.reference for payment in payments] == ["order-1", "order-2"]

"""Request ids: what ``request_id_of`` reads from an answer's headers, and that errors, raw
responses and ``verify_many`` results carry the id the sandbox sent (sync, async and aiohttp,
over loopback)."""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import quote

import httpx
import pytest

import paysdk
from paysdk._errors.api import MAX_REQUEST_ID, request_id_of
from paysdk.sandbox import (
    COMPLETED_REFERENCE,
    FAILED_REFERENCE,
    NON_CARD_REFERENCE,
    UNKNOWN_REFERENCE,
    Fault,
    Sandbox,
)
from tests.conftest import MakeClient

# --- request_id_of ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "headers",
    [
        httpx.Headers({"Request-Id": "req_other", "X-Request-Id": "req_x"}),
        {"Request-Id": "req_other", "X-Request-Id": "req_x"},
        {"request-id": "req_other", "x-request-id": "req_x"},
    ],
    ids=["httpx", "dict", "dict-lower-case"],
)
def test_x_request_id_wins_over_request_id(headers: Any) -> None:
    assert request_id_of(headers) == "req_x"


def test_request_id_is_read_when_x_request_id_is_absent_or_blank() -> None:
    assert request_id_of({"Request-Id": "req_1"}) == "req_1"
    assert request_id_of({"X-Request-Id": "", "Request-Id": "req_1"}) == "req_1"
    assert request_id_of({"X-Request-Id": " \t ", "Request-Id": "req_1"}) == "req_1"
    assert request_id_of(httpx.Headers({"request-id": "req_1"})) == "req_1"


def test_a_plain_dict_with_x_request_id() -> None:
    assert request_id_of({"X-Request-Id": "req_123", "Content-Type": "text/plain"}) == "req_123"


def test_control_and_non_ascii_characters_are_replaced() -> None:
    shown = request_id_of({"X-Request-Id": "req_1\x1b[2J\r\nFAKE\tline\x7f é"})
    assert shown == "req_1?[2J??FAKE?line? ?"
    assert shown is not None and shown.isprintable()


def test_surrounding_whitespace_is_dropped() -> None:
    assert request_id_of({"X-Request-Id": "  req_1 "}) == "req_1"


def test_a_long_id_is_cut() -> None:
    assert MAX_REQUEST_ID == 200
    assert request_id_of({"X-Request-Id": "r" * 10_000}) == "r" * MAX_REQUEST_ID


@pytest.mark.parametrize(
    "headers",
    [{}, {"Content-Type": "application/json"}, {"X-Request-Id": ""}, {"X-Request-Id": "   "}],
    ids=["no-headers", "other-headers", "empty", "blank"],
)
def test_no_id_is_none(headers: dict[str, str]) -> None:
    assert request_id_of(headers) is None
    assert request_id_of(httpx.Headers(headers)) is None


def test_an_api_error_shows_its_request_id_only_when_there_is_one() -> None:
    def error(headers: dict[str, str]) -> paysdk.ServerError:
        return paysdk.ServerError(
            "boom",
            status_code=500,
            headers=headers,
            content=b"",
            method="GET",
            url="https://api.pay.test/v1/payments",
        )

    identified = error({"X-Request-Id": "req_123"})
    assert identified.request_id == "req_123"
    assert str(identified) == (
        "boom (HTTP 500 from GET https://api.pay.test/v1/payments, request id req_123)"
    )
    anonymous = error({})
    assert anonymous.request_id is None
    assert str(anonymous) == "boom (HTTP 500 from GET https://api.pay.test/v1/payments)"


# --- over loopback: the id the sandbox sent ---------------------------------------------------


def sent_ids(sandbox: Sandbox) -> list[str | None]:
    """The ``X-Request-Id`` of each answer the sandbox sent, oldest first."""
    return [request.request_id for request in sandbox.requests]


@pytest.mark.anyio
async def test_a_404_carries_the_sandboxs_request_id(sandbox: Sandbox, connect: MakeClient) -> None:
    with pytest.raises(paysdk.PaymentNotFoundError) as caught:
        await connect().verify(UNKNOWN_REFERENCE)
    (sent,) = sent_ids(sandbox)
    assert sent is not None and sent.startswith("req_")
    assert caught.value.request_id == sent
    assert str(caught.value).endswith(f", request id {sent})")


@pytest.mark.anyio
async def test_a_retried_5xx_carries_the_last_answers_request_id(
    sandbox: Sandbox, connect: MakeClient
) -> None:
    sandbox.inject(Fault.server_error(), times=3)
    with pytest.raises(paysdk.ServerError) as caught:
        await connect(max_retries=2).verify(COMPLETED_REFERENCE)
    sent = sent_ids(sandbox)
    assert len(sent) == len(set(sent)) == 3
    assert caught.value.request_id == sent[-1]
    assert f"request id {sent[-1]}" in str(caught.value)
    assert caught.value.attempts == 3


@pytest.mark.anyio
async def test_a_raw_response_carries_the_sandboxs_request_id(
    sandbox: Sandbox, connect: MakeClient
) -> None:
    client = connect()
    raw: Any = client.client.with_raw_response.verify(COMPLETED_REFERENCE)
    raw = await raw if client.is_async else raw
    (sent,) = sent_ids(sandbox)
    assert raw.request_id == sent
    assert raw.headers["x-request-id"] == sent


@pytest.mark.anyio
async def test_verify_many_results_carry_the_request_id_of_their_last_answer(
    sandbox: Sandbox, connect: MakeClient
) -> None:
    cut = "order-cut"
    sandbox.add_payment(cut)
    sandbox.inject(Fault.server_error(), path=f"/payment/{FAILED_REFERENCE}")  # then a 200
    sandbox.inject(Fault.server_error(), path=f"/payment/{NON_CARD_REFERENCE}", times=2)
    sandbox.inject(Fault.connection_reset(), path=f"/payment/{cut}", times=None)
    references = [COMPLETED_REFERENCE, UNKNOWN_REFERENCE, FAILED_REFERENCE, NON_CARD_REFERENCE, cut]
    client = connect(max_retries=1)
    results: Any = client.client.verify_many(references, concurrency=3)
    got = [r async for r in results] if client.is_async else list(results)
    assert [r.reference for r in got] == references
    assert [r.ok for r in got] == [True, False, True, False, False]
    last_sent = {request.path: request.request_id for request in sandbox.requests}
    for result in got:
        assert result.request_id == last_sent[f"/payment/{quote(result.reference, safe='')}"]
        if isinstance(result.error, paysdk.APIError):
            assert result.request_id == result.error.request_id
    assert all(r.request_id is not None for r in got[:4])
    assert isinstance(got[4].error, paysdk.APIConnectionError)
    assert got[4].request_id is None  # no answer came


@pytest.mark.anyio
async def test_a_key_echoed_in_the_request_id_is_blotted_out_wherever_the_id_shows(
    sandbox: Sandbox, connect: MakeClient, caplog: pytest.LogCaptureFixture
) -> None:
    """A server that puts the key it was sent in X-Request-Id gets it into no error, log line or
    bulk result: the id is scrubbed, as a body is, before it is shown."""
    caplog.set_level(logging.DEBUG, logger="paysdk")
    echoed = {"X-Request-Id": f"req-{sandbox.secret_key}"}
    sandbox.inject(Fault.json(404, {"error": "nope"}, echoed), times=None)
    client = connect(max_retries=0)
    with pytest.raises(paysdk.APIError) as caught:
        await client.verify(COMPLETED_REFERENCE)
    assert caught.value.request_id == "req-<secret key>"
    results: Any = client.client.verify_many([COMPLETED_REFERENCE], concurrency=1)
    got = [r async for r in results] if client.is_async else list(results)
    assert [r.request_id for r in got] == ["req-<secret key>"]
    assert sandbox.secret_key not in str(caught.value) + caplog.text

"""with_raw_response (RawResponse, RawClient, AsyncRawClient): the wire answer, parsed on demand."""

from __future__ import annotations

import copy
import pickle
from typing import Any

import pytest
import respx

import paysdk
from tests.conftest import BASE_URL, SECRET, MakeClient, listed_body, verify_body

pytestmark = pytest.mark.anyio

VERIFY_URL = f"{BASE_URL}/payment/order-1042"


async def test_with_raw_response_keeps_what_came_over_the_wire(
    make_client: MakeClient, respx_mock: respx.MockRouter
) -> None:
    respx_mock.get(VERIFY_URL).respond(200, json=verify_body(), headers={"X-Request-Id": "req_123"})
    respx_mock.get(f"{BASE_URL}/payments").respond(200, json={"data": [listed_body()]})
    client = make_client()
    raw: Any = client.client.with_raw_response.verify("order-1042")
    raw = await raw if client.is_async else raw
    assert (raw.status_code, raw.headers["x-request-id"]) == (200, "req_123")
    assert (raw.status, raw.message) == (True, "Verification successful")
    assert raw.elapsed.total_seconds() >= 0
    assert raw.parse().reference == "order-1042"
    listed: Any = client.client.with_raw_response.list_payments()
    listed = await listed if client.is_async else listed
    assert [p.reference for p in listed.parse()] == ["order-1042"]


async def test_raw_parse_validates_as_the_call_would(
    make_client: MakeClient, respx_mock: respx.MockRouter
) -> None:
    respx_mock.get(VERIFY_URL).respond(200, json=verify_body("order-9"))
    client = make_client()
    raw: Any = client.client.with_raw_response.verify("order-1042")
    raw = await raw if client.is_async else raw
    with pytest.raises(paysdk.PaymentMismatchError):
        raw.parse()


async def test_a_raw_answer_echoing_the_key_parses_to_payments_whose_repr_blots_it(
    make_client: MakeClient, respx_mock: respx.MockRouter
) -> None:
    """``parse()`` gives what the plain call gives: a key the body echoed is not in a repr."""
    echo = {"echo": f"Bearer {SECRET}"}
    respx_mock.get(VERIFY_URL).respond(200, json=verify_body("order-1042", **echo))
    respx_mock.get(f"{BASE_URL}/payments").respond(
        200, json={"data": [listed_body("order-1042", **echo)]}
    )
    client = make_client()
    raw: Any = client.client.with_raw_response.verify("order-1042")
    raw = await raw if client.is_async else raw
    listed: Any = client.client.with_raw_response.list_payments()
    listed = await listed if client.is_async else listed
    for payment in [raw.parse(), *listed.parse()]:
        assert payment.model_extra["echo"] == f"Bearer {SECRET}"
        assert SECRET not in repr(payment)
        assert "<secret key>" in str(payment)


async def test_a_raw_answer_refuses_pickling_and_copies_still_parse(
    make_client: MakeClient, respx_mock: respx.MockRouter
) -> None:
    """``parse()`` needs the request, whose headers hold the key: a pickler that takes closures
    (cloudpickle, dill) carried it; Python's said only ``Can't pickle local object``."""
    respx_mock.get(VERIFY_URL).respond(200, json=verify_body(), headers={"X-Request-Id": "r-1"})
    client = make_client()
    raw: Any = client.client.with_raw_response.verify("order-1042")
    raw = await raw if client.is_async else raw
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        with pytest.raises(TypeError, match=r"paysdk\.RawResponse cannot be pickled"):
            pickle.dumps(raw, protocol)
    for twin in (copy.copy(raw), copy.deepcopy(raw)):
        assert (twin.status_code, twin.headers["x-request-id"]) == (200, "r-1")
        assert twin.content == raw.content
        assert twin.parse() == raw.parse()
    assert SECRET not in repr(vars(raw))

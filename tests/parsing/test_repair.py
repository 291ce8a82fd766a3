"""Bodies whose strings hold lone surrogate escapes or bytes that are not UTF-8, read leniently."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from paysdk._core import validation
from paysdk._parsing import repair
from paysdk._parsing.repair import repaired_json, without_lone_surrogates
from paysdk._parsing.stream import ListStream
from paysdk.sandbox import Fault, PaymentRecord, Sandbox
from tests.conftest import MakeClient, listed_body, verify_body

BOM = "\ufeff"
"""A byte order mark, as some servers' JSON encoders write it before the body."""


@pytest.mark.parametrize(
    ("body", "read"),
    [
        (b'{"name": "Ada \\ud83d"}', {"name": "Ada \ufffd"}),
        (b'{"name": "\\udc00\\ud800 Ada"}', {"name": "\ufffd\ufffd Ada"}),
        (b'{"Ren\xe9e": ["caf\xc3"]}', {"Ren\ufffde": ["caf\ufffd"]}),
        (b'{"name": "Ada \\ud83d\\ude00"}', {"name": "Ada \U0001f600"}),  # a pair: its emoji
    ],
    ids=["lone-high", "lone-low-then-high", "latin-1-and-cut-utf8", "pair"],
)
def test_a_body_is_repaired_to_utf8_json_with_the_replacement_character(
    body: bytes, read: object
) -> None:
    repaired = repaired_json(body)
    assert repaired is not None
    assert json.loads(repaired.decode("utf-8")) == read  # strict: every piece is UTF-8 now


def test_numbers_are_written_back_for_pydantic_to_judge_as_before() -> None:
    """NaN and infinities as JSON's extension writes them; numbers and types as they were."""
    body = b'[1, 2.5, 1.0, NaN, 1e400, -1e400, "\\u00e9 \\ud83d", null, true]'
    assert (
        repaired_json(body)
        == b'[1, 2.5, 1.0, NaN, Infinity, -Infinity, "\xc3\xa9 \xef\xbf\xbd", null, true]'
    )


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"<html>502</html>",
        b'{"name": "Ada \\ud83d"',
        b'{"data": []} "\\ud83d"',
        b"[\xe9]",
        b"[" + b"9" * 5000 + b"]",  # past the digits Python reads into an int
        b"[" * 100_000 + b"]" * 100_000,
    ],
    ids=["empty", "html", "cut-short", "more-after", "byte-outside-a-string", "huge", "deep"],
)
def test_a_body_that_is_not_json_even_so_is_not_repaired(body: bytes) -> None:
    assert repaired_json(body) is None


def test_a_value_without_lone_surrogates_is_returned_as_it_is() -> None:
    value = {"name": "caf\u00e9 \U0001f600"}
    assert without_lone_surrogates(value) is value
    assert without_lone_surrogates({"\ud83d": ["x\udc00"]}) == {"\ufffd": ["x\ufffd"]}


def test_a_well_formed_body_is_never_repaired(monkeypatch: pytest.MonkeyPatch) -> None:
    """The repair is the slow path: a body pydantic reads never reaches it."""

    def refuse(body: bytes) -> bytes | None:
        raise AssertionError("repaired a well-formed body")

    monkeypatch.setattr(repair, "repaired_json", refuse)
    assert validation.parse_verify(json.dumps(verify_body()).encode()).reference
    items = [listed_body(f"order-{n}") for n in range(3000)]
    for size in (1, 3000):
        body = json.dumps({"data": items[:size]}).encode()
        assert len(validation.parse_list(body)) == size


@pytest.mark.parametrize("payments", [3, 5000], ids=["whole", "in-batches"])
def test_a_byte_order_mark_before_a_body_is_read_past(payments: int) -> None:
    """JSON's RFC lets a reader ignore a leading byte order mark, and ``json.loads`` (so every
    error body) does: a payment or a list is read as without it, past 1 MiB batch by batch."""
    listed = json.dumps({"data": [listed_body(f"order-{n}") for n in range(payments)]})
    plain = validation.parse_list(listed.encode())
    assert validation.parse_list((BOM + listed).encode()) == plain
    verified = json.dumps(verify_body())
    plain_payment = validation.parse_verify(verified.encode())
    assert validation.parse_verify((BOM + verified).encode()) == plain_payment


@pytest.mark.parametrize("size", [1, 2, 4, 65536])
def test_a_byte_order_mark_before_a_streamed_list_is_read_past(size: int) -> None:
    body = (BOM + json.dumps({"data": [listed_body(f"order-{n}") for n in range(3)]})).encode()
    stream = ListStream(max_item_bytes=1 << 20)
    payments = []
    for start in range(0, len(body), size):
        payments += stream.feed(body[start : start + size])
    payments += stream.close()
    assert [payment.reference for payment in payments] == ["order-0", "order-1", "order-2"]


def test_a_byte_order_mark_within_a_body_is_still_not_json() -> None:
    with pytest.raises(ValidationError, match="json_invalid"):
        validation.parse_list(b" " + BOM.encode() + b'{"data": []}')


@pytest.mark.anyio
async def test_a_service_writing_a_byte_order_mark_is_read_on_every_backend(
    make_loopback_client: MakeClient,
) -> None:
    record = PaymentRecord("order-bom", amount=700)
    headers = {"Content-Type": "application/json"}
    envelope = {"status": True, "message": "ok", "data": record.verify_shape()}
    listed = BOM + json.dumps({"data": [record.list_shape()]})
    with Sandbox(payments=[record]) as sandbox:
        client = make_loopback_client(base_url=sandbox.base_url, secret_key=sandbox.secret_key)
        verified = Fault(status=200, body=BOM + json.dumps(envelope), headers=headers)
        sandbox.inject(verified, path="/payment/order-bom")
        sandbox.inject(Fault(status=200, body=listed, headers=headers), path="/payments", times=2)
        assert (await client.verify("order-bom")).amount == 700
        assert [p.reference for p in await client.list_payments()] == ["order-bom"]
        assert [p.reference for p in await client.drain()] == ["order-bom"]

"""A large list body validated batch by batch: the same payments as parsing it whole, or the
same error at the same place, whatever the body's layout and whatever its strings hold."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from paysdk import ListedPayment, _core
from paysdk._core import validation as _validation
from paysdk._parsing.batches import BATCH_BYTES, MAX_MISSES, validate_in_batches
from tests.conftest import listed_body

_ENVELOPE = _validation._list_envelope()
_BATCH = _validation._batch_shape()


def _validate_batch(batch: bytes) -> list[ListedPayment]:
    return _BATCH.validate_json(batch)[0]


def _whole(body: bytes) -> list[ListedPayment]:
    return _ENVELOPE.validate_json(body)["data"]


class _Batches:
    """The validator, recording the size of every batch it was given (``[[...]]``)."""

    def __init__(self) -> None:
        self.sizes: list[int] = []
        self.failed = 0

    def validate_json(self, batch: bytes) -> list[list[ListedPayment]]:
        return [self(batch)]

    def __call__(self, batch: bytes) -> list[ListedPayment]:
        self.sizes.append(len(batch))
        try:
            return _validate_batch(batch)
        except ValidationError:
            self.failed += 1
            raise


def _body(payments: list[dict[str, Any]], **dumps: Any) -> bytes:
    return json.dumps({"data": payments}, **dumps).encode()


def _payments(count: int, **changes: Any) -> list[dict[str, Any]]:
    return [listed_body(f"order-{n:05d}", **changes) for n in range(count)]


LAYOUTS = {
    "json.dumps": {},
    "compact": {"separators": (",", ":")},
    "indented": {"indent": 2},
    "tabs": {"indent": "\t"},
    "not ascii": {"ensure_ascii": False},
}


@pytest.mark.parametrize("layout", LAYOUTS.values(), ids=LAYOUTS.keys())
def test_a_large_body_is_validated_in_batches_of_about_the_batch_size(layout: Any) -> None:
    body = _body(_payments(600, customer={"name": "Ọlá Ádébáyọ̀"}), **layout)
    item = len(_body(_payments(1), **layout))
    batches = _Batches()
    assert validate_in_batches(body, batches, batch_bytes=8192) == _whole(body)
    assert len(batches.sizes) >= len(body) // (8192 + item)
    assert max(batches.sizes) <= 8192 + item
    assert batches.failed == 0


def test_parse_list_cuts_a_body_over_a_megabyte_and_gets_what_the_whole_parse_gets(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    batches = _Batches()
    monkeypatch.setattr(_validation, "_batch_shape", lambda: batches)
    body = _body(_payments(4000))
    assert len(body) > 1024 * 1024
    assert _core.parse_list(body) == _whole(body)
    assert len(batches.sizes) > len(body) // (2 * BATCH_BYTES)


def test_nested_objects_that_open_like_a_payment_cost_a_miss_not_a_wrong_list() -> None:
    # Products whose first key is the payment's first key: "},{"id"" also separates products.
    products = [{"id": f"p-{n}", "name": "Kettle", "amount": 100} for n in range(40)]
    body = _body(_payments(300, products=products))
    batches = _Batches()
    assert validate_in_batches(body, batches, batch_bytes=4096) == _whole(body)
    assert 1 <= batches.failed <= MAX_MISSES
    assert len(batches.sizes) - batches.failed > 10  # still in batches after the miss


@pytest.mark.parametrize(
    "text",
    [
        '},{"id": "x"',  # a separator inside a string, escaped quotes and all
        "{{{{{{",  # braces that never balance
        "}}}}",
        '\\"},{\\"id\\"',
        "]}",
    ],
)
def test_strings_that_look_like_structure_never_change_the_result(text: str) -> None:
    body = _body(_payments(200, products=[{"name": text, "description": text}]))
    result = validate_in_batches(body, _validate_batch, batch_bytes=2048)
    assert result is None or result == _whole(body)
    assert _core.parse_list(body) == _whole(body)


def test_a_second_data_key_is_left_to_the_whole_parse_which_reads_the_last() -> None:
    # Cut at the second key, a batch holding it would read as one object naming "data" twice.
    first, last = _body(_payments(300)), _body(_payments(200, currency="USD"))
    body = first[:-1] + b', "data": ' + last[len(b'{"data": ') :]
    batches = _Batches()
    assert validate_in_batches(body, batches, batch_bytes=4096) is None
    assert batches.failed >= 1
    assert _core.parse_list(body) == _whole(body) == _whole(last)
    assert json.loads(body)["data"] == json.loads(last)["data"]  # as the standard library reads it


def test_too_many_misses_hand_the_body_to_the_whole_parse() -> None:
    # Braces in strings fool the balance check as well: they balance between the two
    # products of each pair, and the cuts land there, inside a payment.
    products = [{"id": "p", "name": "}"}, {"id": "p", "name": "{"}] * 20
    body = _body(_payments(100, products=products))
    batches = _Batches()
    assert validate_in_batches(body, batches, batch_bytes=1024) is None
    assert batches.failed == MAX_MISSES + 1
    assert _core.parse_list(body) == _whole(body)


def test_a_bad_payment_is_reported_by_the_whole_parse_at_its_place_in_the_list() -> None:
    payments = _payments(5000)
    payments[3210]["amount"] = "2500"
    body = _body(payments)
    batches = _Batches()
    assert validate_in_batches(body, batches, batch_bytes=BATCH_BYTES) is None
    assert batches.failed == 1  # not taken for a miss: no retry
    with pytest.raises(ValidationError) as caught:
        _core.parse_list(body)
    assert [e["loc"] for e in caught.value.errors()] == [("data", 3210, "amount")]


@pytest.mark.parametrize(
    "body",
    [
        b'{"data": [{"reference": "a"}, {"reference": "b"}',  # cut short
        b'{"data": [{"reference": "a"},, {"reference": "b"}]}',
        b'{"data": [{"reference": "a"}]} trailing',
        b'{"data": [1, 2]}',
        b'{"status": true, "data": []}',
        b'{"data": {"reference": "a"}}',
        b'{"d\\u0061ta": []}',
        b'{"data": [{"reference": "a"}], "data": []}',
        b'{"data": [{"reference": "a"}], "more": [1]}',
    ],
)
def test_bodies_that_are_not_plainly_a_list_are_left_to_the_whole_parse(body: bytes) -> None:
    assert validate_in_batches(body, _validate_batch, batch_bytes=8) is None


def test_an_empty_list_and_surrounding_space_are_plain() -> None:
    assert validate_in_batches(b' \r\n{ "data" : [ ] }\n', _validate_batch) == []
    body = b"\n  " + _body(_payments(3), indent=4) + b"\n\n"
    assert validate_in_batches(body, _validate_batch, batch_bytes=16) == _whole(body)


def test_space_past_the_tail_window_is_left_to_the_whole_parse() -> None:
    body = _body(_payments(2)) + b" " * 5000
    assert validate_in_batches(body, _validate_batch, batch_bytes=16) is None
    assert _core.parse_list(body + b" " * (1024 * 1024)) == _whole(body)


_text = st.text(alphabet=st.sampled_from('{}[],:"\\ aé\n'), max_size=12)
_product = st.fixed_dictionaries(
    {"name": _text}, optional={"id": st.sampled_from(["p", "q"]), "x": _text}
)


@settings(max_examples=200, deadline=None)
@given(
    names=st.lists(_text, min_size=1, max_size=30),
    products=st.lists(_product, max_size=4),
    layout=st.sampled_from(list(LAYOUTS.values())),
    batch_bytes=st.integers(1, 3000),
)
def test_batches_agree_with_the_whole_parse_on_any_strings(
    names: list[str], products: list[dict[str, str]], layout: Any, batch_bytes: int
) -> None:
    payments = [
        listed_body(f"o-{n}", customer={"name": name}, products=products)
        for n, name in enumerate(names)
    ]
    body = _body(payments, **layout)
    result = validate_in_batches(body, _validate_batch, batch_bytes=batch_bytes)
    assert result is None or result == _whole(body)


_BODY = _body(
    [
        listed_body(f"o-{n}", products=[{"id": "p", "name": "}, {"}, {"id": "q", "name": "a"}])
        for n in range(12)
    ],
    separators=(",", ":"),
)


@settings(max_examples=400, deadline=None)
@given(
    edits=st.lists(
        st.tuples(st.integers(0, len(_BODY)), st.sampled_from(list(b'{}[],:" \\0'))),
        min_size=1,
        max_size=3,
    ),
    delete=st.booleans(),
    batch_bytes=st.integers(1, 2000),
)
def test_a_damaged_body_gives_what_the_whole_parse_gives_or_is_left_to_it(
    edits: list[tuple[int, int]], delete: bool, batch_bytes: int
) -> None:
    body = bytearray(_BODY)
    for at, byte in edits:
        if delete and at < len(body):
            del body[at]
        else:
            body[at:at] = bytes([byte])
    result = validate_in_batches(bytes(body), _validate_batch, batch_bytes=batch_bytes)
    try:
        whole = _whole(bytes(body))
    except ValidationError:
        assert result is None
    else:
        assert result is None or result == whole


@pytest.mark.parametrize("depth", [190, 198, 199, 200, 210])
def test_a_batch_nests_its_payments_as_deep_as_the_body_does(depth: int) -> None:
    # pydantic's JSON parser stops at a nesting limit: a payment just under it inside the body
    # must not pass because its batch held it one level higher.
    deep = listed_body("deep", note=json.loads("[" * depth + "]" * depth))
    body = _body([*_payments(300), deep])
    result = validate_in_batches(body, _validate_batch, batch_bytes=4096)
    try:
        whole = _whole(body)
    except ValidationError:
        assert result is None
    else:
        assert result == whole


def test_a_body_that_cannot_be_cut_is_left_to_the_whole_parse_without_a_copy() -> None:
    # The first payment opens with a key no other does: no separator is ever found.
    body = _body([{"aaa": 1, **listed_body("first")}, *_payments(300)])
    batches = _Batches()
    assert validate_in_batches(body, batches, batch_bytes=4096) is None
    assert batches.sizes == []
    assert _core.parse_list(body) == _whole(body)


@pytest.mark.parametrize("tail", [b" " * 4096, b"]" + b" " * 4095, b"] }x", b"}]"])
def test_an_end_that_is_not_the_closing_brackets_is_left_to_the_whole_parse(tail: bytes) -> None:
    body = _body(_payments(20))[:-2] + tail
    assert validate_in_batches(body, _validate_batch, batch_bytes=16) is None


def test_much_space_before_the_closing_brackets_is_still_plain() -> None:
    body = _body(_payments(20))[:-2] + b" \n\t\r" * 2000 + b"]}"
    assert validate_in_batches(body, _validate_batch, batch_bytes=16) == _whole(body)

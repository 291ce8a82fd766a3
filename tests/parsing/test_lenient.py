"""Optional fields sent in a type they cannot be read as: unset, with the value sent kept."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

import paysdk
from paysdk._core.validation import parse_list, parse_verify
from paysdk._parsing.lenient import Shape, unreadable
from paysdk._parsing.stream import ListStream
from tests.conftest import listed_body, verify_body

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
VERIFY_OPTIONAL = [
    name for name, field in paysdk.VerifiedPayment.model_fields.items() if not field.is_required()
]
LIST_OPTIONAL = [
    name for name, field in paysdk.ListedPayment.model_fields.items() if not field.is_required()
]


def encoded(body: object) -> bytes:
    return json.dumps(body).encode()


def streamed(body: object) -> list[paysdk.ListedPayment]:
    stream = ListStream(max_item_bytes=1 << 20)
    return stream.feed(encoded(body)) + stream.close()


@settings(max_examples=200, deadline=None)
@given(field=st.sampled_from(VERIFY_OPTIONAL), value=JSON)
def test_any_value_of_an_optional_verify_field_gives_the_payment(field: str, value: Any) -> None:
    payment = parse_verify(encoded(verify_body(**{field: value})))
    assert payment.unparsed in ({}, {field: value})
    if payment.unparsed:
        default = paysdk.VerifiedPayment.model_fields[field].get_default(call_default_factory=True)
        assert getattr(payment, field) == default


@settings(max_examples=200, deadline=None)
@given(field=st.sampled_from(LIST_OPTIONAL), value=JSON)
def test_any_value_of_an_optional_list_field_gives_the_payment(field: str, value: Any) -> None:
    body = {"data": [listed_body(**{field: value})]}
    [payment] = parse_list(encoded(body))
    assert payment.unparsed in ({}, {field: value})
    assert streamed(body) == [payment]


def test_the_deepest_optional_field_is_left_out() -> None:
    customer = {"name": ["Ada"], "email": "ada@example.com", "phone": 234}
    products = [{"name": "Mug", "amount": 1200}, {"name": 5, "amount": "five"}]
    payment = parse_verify(encoded(verify_body(customer=customer, products=products)))
    assert payment.customer is not None and payment.customer.email == "ada@example.com"
    assert dict(payment.customer.unparsed) == {"name": ["Ada"], "phone": 234}
    assert [p.amount for p in payment.products] == [1200, None]
    assert [dict(p.unparsed) for p in payment.products] == [{}, {"name": 5, "amount": "five"}]
    assert not payment.unparsed


def test_a_product_that_is_no_object_leaves_the_products_out() -> None:
    products = [{"name": "Mug", "amount": 1200}, "Spoon"]
    payment = parse_verify(encoded(verify_body(products=products)))
    assert (payment.products, dict(payment.unparsed)) == ([], {"products": products})


def test_a_message_of_another_type_is_left_out_of_the_envelope() -> None:
    body = {**verify_body(), "message": {"text": "ok"}}
    assert parse_verify(encoded(body)).reference == body["data"]["reference"]


def test_an_envelope_reporting_failure_still_fails_with_an_unreadable_field() -> None:
    body = {**verify_body(fee="n/a"), "status": False}
    with pytest.raises(ValidationError) as caught:
        parse_verify(encoded(body))
    assert caught.value.errors()[0]["type"] == "envelope_failed"


def test_unreadable_fields_and_a_lone_surrogate_in_one_body() -> None:
    body = verify_body(fee="n/a", customer={"name": "Ada \ud83d"})
    payment = parse_verify(json.dumps(body, ensure_ascii=True).encode())
    assert payment.customer is not None and payment.customer.name == "Ada \ufffd"
    assert dict(payment.unparsed) == {"fee": "n/a"}


def test_a_list_past_a_mebibyte_is_read_batch_by_batch_with_unreadable_fields() -> None:
    items = [listed_body(f"order-{n}") for n in range(6000)]
    items[10] = listed_body("order-10", fee="n/a")
    items[5999] = listed_body("order-5999", created_at="soon")
    content = encoded({"data": items})
    assert len(content) > 1024 * 1024
    payments = parse_list(content)
    assert [p.reference for p in payments] == [f"order-{n}" for n in range(6000)]
    assert {n: dict(p.unparsed) for n, p in enumerate(payments) if p.unparsed} == {
        10: {"fee": "n/a"},
        5999: {"created_at": "soon"},
    }


def test_unparsed_values_are_compared_shown_and_not_dumped() -> None:
    odd = parse_verify(encoded(verify_body(fee="n/a")))
    plain = parse_verify(encoded(verify_body(fee=None)))
    assert odd != plain
    assert odd == parse_verify(encoded(verify_body(fee="n/a")))
    assert odd.model_dump() == plain.model_dump()
    assert repr(odd).endswith(", unparsed={'fee': 'n/a'})")
    assert "unparsed" not in repr(plain)
    with pytest.raises(TypeError):
        odd.unparsed["fee"] = 1  # type: ignore[index]
    [listed] = parse_list(encoded({"data": [listed_body(fee="n/a")]}))
    [other] = parse_list(encoded({"data": [listed_body(fee=None)]}))
    assert listed != other
    assert listed.model_copy().unparsed == {"fee": "n/a"}


@pytest.mark.parametrize(
    ("loc", "found"),
    [
        (("fee",), ("fee",)),
        (("amount",), None),
        (("customer", "name"), ("customer", "name")),
        (("products", "list[Product]", 1, "amount"), ("products", 1, "amount")),
        (("products", "list[Product]", 0), ("products",)),
        (("products", "function-after[<lambda>(), none]"), None),
        (("created_at", "function-after[as_utc(), datetime]"), ("created_at",)),
        ((), None),
    ],
)
def test_where_an_error_is_left_out(loc: tuple[str | int, ...], found: object) -> None:
    value = {**listed_body(), "products": ["Mug", {"amount": "x"}]}
    assert unreadable(paysdk.ListedPayment, value, loc) == found


@pytest.mark.parametrize(
    ("body", "loc", "may"),
    [
        ("verify", ("message",), True),
        ("verify", ("status",), False),
        ("verify", ("data", "amount"), False),
        ("verify", ("data", "fee"), True),
        ("verify", ("data", "products", "list[Product]", 0, "amount"), True),
        ("list", ("data", 3, "amount"), False),
        ("list", ("data", 3, "status", "str"), False),
        ("list", ("data", 3, "customer", "name"), True),
        ("list", ("message",), False),
        ("batch", (0, 3, "fee"), True),
        ("batch", (0, 3, "reference"), False),
        ("payment", ("created_at",), True),
        ("payment", ("reference",), False),
    ],
)
def test_a_body_is_decoded_again_only_if_an_optional_field_may_hold_an_error(
    body: Any, loc: tuple[str | int, ...], may: bool
) -> None:
    payment = paysdk.VerifiedPayment if body == "verify" else paysdk.ListedPayment
    assert Shape(payment, body).may_hold(loc) is may

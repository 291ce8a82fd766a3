"""map_response, error_for and the parsers: every answer is a model or a paysdk error."""

from __future__ import annotations

import json

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

import paysdk
from paysdk import _core
from tests.conftest import answered, make_config, verify_body

CONFIG = make_config()


@settings(max_examples=300, deadline=None)
@given(
    status=st.integers(min_value=100, max_value=599),
    content=st.one_of(
        st.binary(max_size=300),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
            lambda inner: (
                st.lists(inner, max_size=4)
                | st.dictionaries(
                    st.sampled_from(["data", "status", "reference", "amount", "error", "success"]),
                    inner,
                    max_size=6,
                )
            ),
            max_leaves=20,
        ).map(lambda value: json.dumps(value).encode()),
    ),
    reference=st.one_of(st.none(), st.just("order-1042")),
)
def test_any_answer_maps_to_a_model_or_a_paysdk_error(
    status: int, content: bytes, reference: str | None
) -> None:
    request = _core.verify_request(CONFIG, "order-1042")
    parse = _core.parse_verify if reference else _core.parse_list
    error: paysdk.APIError | None = None
    try:
        response = answered(httpx.Response(status, content=content))
        _core.map_response(request, response, lambda answer: parse(answer.content), reference)
    except paysdk.APIError as raised:
        error = raised
    if error is not None:
        assert (error.status_code, error.content) == (status, content)
        assert str(error)
    else:
        assert 200 <= status < 300


@pytest.mark.parametrize("status", [False, "false", 0])
@pytest.mark.parametrize("success", [True, False])
def test_a_verify_envelope_reporting_failure_is_no_payment(status: object, success: bool) -> None:
    request = _core.verify_request(CONFIG, "order-1042")
    body = verify_body("order-1042", success=success)
    body.update(status=status, message="Verification failed")
    with pytest.raises(paysdk.ResponseValidationError) as caught:
        _core.map_response(
            request,
            answered(httpx.Response(200, json=body)),
            _core.verified("order-1042", CONFIG),
            None,
        )
    error = caught.value
    assert [(e["type"], e["loc"]) for e in error.errors] == [("envelope_failed", ("status",))]
    assert "reports that the request failed" in str(error)
    assert error.body == body  # what the service said stays reachable
    assert not _core.is_retryable(error)


@pytest.mark.parametrize("data", [None, {}, {"success": True}, "x", "absent"])
@pytest.mark.parametrize("status", [False, "false", 0])
def test_a_verify_envelope_reporting_failure_without_a_payment_says_so(
    status: object, data: object
) -> None:
    """A failed request's answer seldom carries a whole payment: its report is the error, not
    the shape errors of what ``data`` lacks."""
    body: dict[str, object] = {"status": status, "message": "Invalid key", "data": data}
    if data == "absent":
        del body["data"]
    with pytest.raises(paysdk.ResponseValidationError) as caught:
        _core.map_response(
            _core.verify_request(CONFIG, "order-1042"),
            answered(httpx.Response(200, json=body)),
            _core.verified("order-1042", CONFIG),
            None,
        )
    assert [(e["type"], e["loc"]) for e in caught.value.errors] == [
        ("envelope_failed", ("status",))
    ]
    assert caught.value.body == body


@pytest.mark.parametrize("data", [None, {}])
def test_a_verify_body_of_another_shape_keeps_its_shape_errors(data: object) -> None:
    body = {"status": True, "message": "ok", "data": data}
    with pytest.raises(ValidationError) as caught:
        _core.parse_verify(json.dumps(body).encode())
    assert "envelope_failed" not in {e["type"] for e in caught.value.errors()}


@pytest.mark.parametrize("status", [True, None, "absent"])
def test_a_verify_envelope_that_does_not_report_failure_gives_the_payment(status: object) -> None:
    body = verify_body("order-1042")
    if status == "absent":
        del body["status"]
    else:
        body["status"] = status
    assert _core.parse_verify(json.dumps(body).encode()).succeeded


def test_parsing_interns_no_strings() -> None:
    # Interning every short string (pydantic's default) costs ~8% of a 100,000-payment parse
    # and saves little: a list's values rarely repeat. Equal strings stay distinct objects.
    from paysdk._core.validation import parse_list

    payments = [
        {
            "reference": f"order-{n}",
            "amount": 100,
            "currency": "NGN",
            "status": "PENDING",
            "unknown_field": "kept",
        }
        for n in range(2)
    ]
    first, second = parse_list(json.dumps({"data": payments}).encode())
    assert first.currency == second.currency == "NGN"
    assert first.currency is not second.currency
    assert first.status == second.status == "PENDING"
    assert first.model_extra == second.model_extra == {"unknown_field": "kept"}
    assert first.model_extra is not None and second.model_extra is not None
    assert next(iter(first.model_extra)) is not next(iter(second.model_extra))

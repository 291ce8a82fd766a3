"""The I/O-free core, driven by hand: no client, no transport, no sleeping."""

from __future__ import annotations

import dataclasses
import decimal
import inspect
import json
import time

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import paysdk
from paysdk import _core
from tests.conftest import (
    BASE_URL,
    NOT_FOUND_BODY,
    SECRET,
    answered,
    failed,
    make_config,
    verify_body,
)

CONFIG = make_config()


def test_a_plan_is_a_conversation_of_sends_and_sleeps() -> None:
    plan = _core.verify(CONFIG, "order-1042")

    first = next(plan)
    assert isinstance(first, _core.Send)
    assert (first.method, first.url) == ("GET", f"{BASE_URL}/payment/order-1042")
    assert first.headers["Authorization"] == f"Bearer {SECRET}"
    assert SECRET not in repr(first)

    wait = plan.send(answered(httpx.Response(503)))
    assert isinstance(wait, _core.Sleep)
    assert plan.send(None) == first

    with pytest.raises(StopIteration) as done:
        plan.send(answered(httpx.Response(200, json=verify_body())))
    assert done.value.value.reference == "order-1042"


def test_a_plan_raises_the_error_when_retries_run_out() -> None:
    plan = _core.list_payments(make_config(max_retries=0))
    next(plan)
    with pytest.raises(paysdk.APIConnectionError):
        plan.send(failed(httpx.ConnectError("refused")))


def test_confirm_checks_what_verify_returns() -> None:
    plan = _core.confirm(CONFIG, "order-1042", _core.Expected(amount=999, currency="NGN"))
    next(plan)
    with pytest.raises(paysdk.PaymentMismatchError) as caught:
        plan.send(answered(httpx.Response(200, json=verify_body())))
    assert caught.value.mismatches == {"amount": (999, 250000)}


def test_backoff_doubles_and_is_capped() -> None:
    error = paysdk.APIConnectionError("down", method="GET", url=BASE_URL)
    no_jitter = _core.RetryPolicy(max_retries=10, random=lambda: 0.0)
    full_jitter = _core.RetryPolicy(max_retries=10, random=lambda: 1.0)

    assert [no_jitter.delay(n, error) for n in range(8)] == [0.5, 1, 2, 4, 8, 8, 8, 8]
    assert [full_jitter.delay(n, error) for n in range(5)] == [0.375, 0.75, 1.5, 3, 6]
    assert no_jitter.delay(10, error) is None


def _api_error(status: int, headers: dict[str, str] | None = None) -> paysdk.APIError:
    request = _core.list_request(CONFIG)
    return _core.error_for(request, answered(httpx.Response(status, headers=headers)), None)


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"Retry-After": "7"}, 7.0),
        ({"Retry-After": "0"}, 0.0),
        ({"Retry-After": "1.5"}, 1.5),
        ({"retry-after-ms": "1200", "Retry-After": "9"}, 1.2),
        ({"Retry-After": "Wed, 21 Oct 2026 07:28:30 GMT"}, 30.0),
        ({"Retry-After": "Wed, 21 Oct 2026 07:27:00 GMT"}, 0.0),  # already past
        ({"Retry-After": "soon"}, 0.5),  # unreadable: ordinary backoff
        ({"Retry-After": "-5"}, 0.5),
        ({"Retry-After": "120"}, None),  # longer than we wait: raise for the caller
        ({"Retry-After": "60"}, 60.0),  # exactly the longest wait: still waited
        ({"Retry-After": "1e309"}, 0.5),
        ({"Retry-After": "inf"}, 0.5),
        ({"Retry-After": "nan"}, 0.5),
        ({"retry-after-ms": "inf", "Retry-After": "2"}, 2.0),
        ({"Retry-After": "Fri, 31 Dec 9999 23:59:59 GMT"}, None),
    ],
)
def test_retry_after_forms(headers: dict[str, str], expected: float | None) -> None:
    clock = 1_792_567_680.0  # Wed, 21 Oct 2026 07:28:00 GMT
    policy = _core.RetryPolicy(max_retries=3, random=lambda: 0.0, clock=lambda: clock)
    assert policy.delay(0, _api_error(429, headers)) == expected


@pytest.mark.parametrize(
    ("status", "retried"),
    [
        *[(status, True) for status in (408, 409, 425, 429, 500, 502, 599)],
        *[(status, False) for status in (400, 401, 403, 404, 422)],
    ],
)
def test_which_statuses_are_retried(status: int, retried: bool) -> None:
    assert _core.is_retryable(_api_error(status)) is retried


def test_list_unavailable_is_retried_but_payment_not_found_is_not() -> None:
    listing = _core.list_request(CONFIG)
    body = json.dumps({"error": "Connection Error"}).encode()
    unavailable = _core.error_for(listing, answered(httpx.Response(404, content=body)), None)
    assert isinstance(unavailable, paysdk.ListUnavailableError)
    assert _core.is_retryable(unavailable)

    verifying = _core.verify_request(CONFIG, "x")
    missing = _core.error_for(verifying, answered(httpx.Response(404, json=NOT_FOUND_BODY)), "x")
    assert isinstance(missing, paysdk.PaymentNotFoundError)
    assert not _core.is_retryable(missing)


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


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_any_text_is_a_reference_or_an_invalid_reference_error(reference: str) -> None:
    try:
        request = _core.verify_request(CONFIG, reference)
    except paysdk.InvalidReferenceError:
        return
    path = httpx.URL(request.url).raw_path
    assert path.startswith(b"/v1/payment/")
    assert b"/" not in path[len(b"/v1/payment/") :]
    assert b"?" not in path and b"#" not in path


def test_expected_takes_whole_decimals_and_refuses_fractions_and_floats() -> None:
    whole = decimal.Decimal("250000.00")
    assert _core.Expected(amount=whole).amount == 250000  # type: ignore[arg-type]
    for amount in (decimal.Decimal("2500.50"), 2500.0, True, "2500", decimal.Decimal("NaN")):
        with pytest.raises(paysdk.ConfigurationError, match="whole number"):
            _core.Expected(amount=amount)  # type: ignore[arg-type]


@dataclasses.dataclass
class Order:
    amount: decimal.Decimal | int | None
    currency: str | None


@pytest.mark.parametrize(
    "found",
    [
        Order(amount=250000, currency=None),
        Order(amount=None, currency="NGN"),
        {"amount": 250000},
        {"currency": "NGN"},
        object(),
    ],
)
def test_a_lookup_must_give_both_amount_and_currency(found: object) -> None:
    with pytest.raises(paysdk.ConfigurationError, match="must return an order with both"):
        _core.expected_for("order-1042", None, None, True, found)


def test_a_lookup_may_give_an_order_a_mapping_or_expected() -> None:
    want = _core.Expected(amount=250000, currency="NGN")
    assert _core.expected_for("r", None, None, True, Order(decimal.Decimal(250000), "NGN")) == want
    assert _core.expected_for("r", None, None, True, {"amount": 250000, "currency": "NGN"}) == want
    loose = _core.Expected(amount=250000)
    assert _core.expected_for("r", None, None, True, loose) is loose


def test_an_async_lookup_on_a_sync_client_is_refused_and_closed() -> None:
    async def lookup() -> _core.Expected:
        return _core.Expected(amount=1, currency="NGN")

    coroutine = lookup()
    with pytest.raises(paysdk.ConfigurationError, match="AsyncClient"):
        _core.expected_for("r", None, None, True, coroutine)
    assert inspect.getcoroutinestate(coroutine) == "CORO_CLOSED"  # no "never awaited" warning


@pytest.mark.parametrize(
    ("value", "expected"),
    [("Wed, 21 Oct 2026 07:28:30 -0000", 30.0), ("Fri, 31 Dec 9999 23:59:59 -0000", None)],
)
def test_a_retry_after_date_in_unknown_zone_is_utc_wherever_we_run(
    monkeypatch: pytest.MonkeyPatch, value: str, expected: float | None
) -> None:
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    try:
        policy = _core.RetryPolicy(max_retries=3, clock=lambda: 1_792_567_680.0)
        assert policy.delay(0, _api_error(429, {"Retry-After": value})) == expected
    finally:
        monkeypatch.undo()
        time.tzset()


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40))
def test_any_retry_after_gives_a_wait_or_none(value: str) -> None:
    try:
        headers = httpx.Headers({"Retry-After": value})
    except (UnicodeEncodeError, ValueError):
        return  # not something a server could send
    delay = _core.retry_after(headers)
    assert delay is None or delay >= 0


def test_the_payment_currency_is_compared_without_case_or_padding() -> None:
    payment = paysdk.VerifiedPayment(
        reference="order-1042", amount=100, currency=" ngn ", success=True
    )
    checked = _core.check_payment(payment, _core.Expected(amount=100, currency="NGN"))
    assert checked is payment


def test_parsing_interns_no_strings() -> None:
    # Interning every short string (pydantic's default) costs ~8% of a 100,000-payment parse
    # and saves little: a list's values rarely repeat. Equal strings stay distinct objects.
    from paysdk._core.responses import parse_list

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


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("aZ09_.~- /%\t\u200b"), min_size=0, max_size=300))
def test_a_plain_reference_passes_every_rule_the_fast_path_skips(reference: str) -> None:
    # verify and reference_problem take plain references in one regex step: it must agree
    # with the rules in full, which the fast path would otherwise silently outrun.
    from paysdk._core import references

    fast = references.reference_problem(reference)
    plain = references.is_plain(reference)
    original = references.is_plain
    try:
        references.is_plain = lambda _: False  # type: ignore[assignment]
        full = references.reference_problem(reference)
    finally:
        references.is_plain = original
    assert fast == full
    if plain:
        assert full is None

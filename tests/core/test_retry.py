"""RetryPolicy, is_retryable and retry_after: which failures are tried again, and after how long."""

from __future__ import annotations

import json
import math
import time

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import paysdk
from paysdk import _core
from tests.conftest import BASE_URL, NOT_FOUND_BODY, answered, make_config

CONFIG = make_config()


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
        ({"Retry-After": "1.5"}, 0.5),  # not delay-seconds: ordinary backoff
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
        ({"Retry-After": "Wednesday, 21-Oct-26 07:28:45 GMT"}, 45.0),  # RFC 850's form
        ({"Retry-After": "Wed Oct 21 07:28:50 2026"}, 50.0),  # asctime's form
        ({"Retry-After": "Wed Oct  1 07:28:50 2026"}, 0.0),  # asctime pads the day with a space
        ({"Retry-After": "Sunday, 06-Nov-94 08:49:37 GMT"}, 0.0),  # 1994, not 2094: past
        ({"Retry-After": " 12\t"}, 12.0),  # whitespace around a field value is not part of it
        ({"Retry-After": "007"}, 7.0),
    ],
)
def test_retry_after_forms(headers: dict[str, str], expected: float | None) -> None:
    clock = 1_792_567_680.0  # Wed, 21 Oct 2026 07:28:00 GMT
    policy = _core.RetryPolicy(max_retries=3, random=lambda: 0.0, clock=lambda: clock)
    assert policy.delay(0, _api_error(429, headers)) == expected


MALFORMED_RETRY_AFTER = [
    "+5",
    "-0",
    "1_000",  # int() takes the separator
    "12.0",
    "1e3",
    "0x10",
    "\u0661\u0662",  # Arabic-Indic digits, which int() reads as 12
    "\u00b2",  # a superscript two: str.isdigit() says it is a digit
    "\uff11\uff12",  # fullwidth digits
    "12\u00a0",  # a no-break space, which str.strip() removes
    "12 s",
    "1 2",
    "",
    "Wed, 21 Oct 2026 07:28:45 +0000",  # email.utils reads these; RFC 9110 has none of them
    "21 Oct 2026 07:28:45 GMT",
    "wed, 21 oct 2026 07:28:45 gmt",
    "Wed, 21 Oct 26 07:28:45 GMT",
    "Wed, 31 Feb 2026 07:28:45 GMT",
    "Wed, 21 Oct 2026 24:00:00 GMT",
]


@pytest.mark.parametrize("value", MALFORMED_RETRY_AFTER)
def test_a_malformed_retry_after_is_ignored_for_backoff(value: str) -> None:
    clock = 1_792_567_680.0  # Wed, 21 Oct 2026 07:28:00 GMT
    policy = _core.RetryPolicy(max_retries=3, random=lambda: 0.0, clock=lambda: clock)
    for status in (429, 503):
        request = _core.list_request(CONFIG)
        wire = httpx.Response(status, headers=[(b"Retry-After", value.encode())])  # UTF-8
        error = _core.error_for(request, answered(wire), None)
        assert error.headers["retry-after"] == value
        assert _core.retry_after(error.headers, lambda: clock) is None
        assert [policy.delay(n, error) for n in range(3)] == [0.5, 1.0, 2.0]
    assert _core.retry_after({"retry-after-ms": value, "retry-after": "3"}) == 3.0


@pytest.mark.parametrize("digits", [10, 400, 5000, 100_000])
def test_an_absurdly_long_retry_after_is_too_long_to_wait_and_overflows_nothing(
    digits: int,
) -> None:
    value = "9" * digits
    past_cap = math.nextafter(1e9, math.inf)  # a wait past the longest read, just past it
    assert _core.retry_after({"retry-after": value}) == past_cap
    in_millis = int(value) / 1000 if digits <= 13 else past_cap  # 10**9 s is 13 digits of ms
    assert _core.retry_after({"retry-after-ms": value}) == in_millis
    error = _api_error(429, {"Retry-After": value})
    assert isinstance(error, paysdk.RateLimitError) and error.retry_after == past_cap
    assert _core.RetryPolicy(max_retries=3).delay(0, error) is None  # raised for the caller


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


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("Wed, 21 Oct 2026 07:28:30 GMT", 30.0),
        ("Wed Oct 21 07:28:30 2026", 30.0),  # asctime's form names no zone: GMT all the same
        ("Fri, 31 Dec 9999 23:59:59 GMT", None),
    ],
)
def test_a_retry_after_date_is_gmt_wherever_we_run(
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


@pytest.mark.parametrize(
    ("header", "said"),
    [
        ({"retry-after-ms": "1200"}, "wait 1.2s before"),
        ({"retry-after-ms": "1"}, "wait 0.001s before"),
        ({"retry-after-ms": "2000000000"}, "wait 2000000s (about 23.1 days) before"),
        ({"retry-after-ms": "1000000000000"}, "wait 1000000000s (about 11,574.1 days) before"),
        (
            {"retry-after-ms": "1000000000001"},
            "wait at least 1000000000s (about 11,574.1 days) before",
        ),
        ({"retry-after": "86399"}, "wait 86399s before"),
        ({"retry-after": "1000000"}, "wait 1000000s (about 11.6 days) before"),
        ({"retry-after": "999999999"}, "wait 999999999s (about 11,574.1 days) before"),
        ({"retry-after": "1000000000"}, "wait 1000000000s (about 11,574.1 days) before"),
        ({"retry-after": "1000000001"}, "wait at least 1000000000s (about 11,574.1 days) before"),
        ({"retry-after": "9" * 5000}, "wait at least 1000000000s (about 11,574.1 days) before"),
    ],
)
def test_a_rate_limit_says_its_wait_as_a_person_reads_it(header: dict[str, str], said: str) -> None:
    """The wait a 429 asks for is written in seconds to the millisecond, never in exponent form
    (``1e+06s``), with the days it comes to once it is a day or more; a wait past the longest
    one read is said as at least that one, not as the server's number."""
    wire = httpx.Response(429, headers=header, json={"error": "slow down"})
    error = _core.error_for(_core.list_request(CONFIG), answered(wire), None)
    assert isinstance(error, paysdk.RateLimitError)
    assert said in str(error)

"""When a failed call is tried again, and how long to wait first: decisions only, no sleeping."""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
import random
import re
import time
from collections.abc import Callable, Mapping
from typing import Final

from .._errors import (
    APIConnectionError,
    APIError,
    CertificateVerificationError,
    ListUnavailableError,
    PaySDKError,
    ProxyAuthenticationError,
    TLSProtocolError,
)

RETRYABLE_STATUS: Final = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
PROXY_REFUSALS: Final = frozenset({400, 403, 405, 407})
"""A proxy's answers, in place of carrying a request, that no retry changes: the request is
not one it takes (400, 405: it carries no tunnels, or not these), its policy (403) or the
credentials (407). Raised as ``ProxyAuthenticationError``; any other (502, 503, 504: the way
on is down for now) as an ``APIConnectionError``, retried."""


@dataclasses.dataclass(frozen=True)
class RetryPolicy:
    """When and how long to wait before trying a failed call again.

    Every request paysdk makes is a GET, so retrying can never pay or fulfil twice. Retried: no
    answer or a timeout (but not a certificate that failed verification, a server that does not
    speak TLS, nor a proxy's ``PROXY_REFUSALS``), 408, 409, 425, 429, any 5xx, and list's
    "Connection Error" 404. Backoff doubles from ``initial_delay`` up to ``max_delay``, each wait up
    to 25% shorter at random (jitter: never longer). A ``Retry-After`` (or ``retry-after-ms``) the
    server sends in a form RFC 9110 allows is obeyed exactly (see ``retry_after``); one longer than
    ``max_retry_after`` is not waited out: the error is raised for the caller to decide.
    """

    max_retries: int
    initial_delay: float = 0.5
    max_delay: float = 8.0
    max_retry_after: float = 60.0
    random: Callable[[], float] = dataclasses.field(default=random.random, repr=False)
    clock: Callable[[], float] = dataclasses.field(default=time.time, repr=False)
    monotonic: Callable[[], float] = dataclasses.field(default=time.monotonic, repr=False)

    def delay(self, retries_done: int, error: PaySDKError) -> float | None:
        """Seconds to wait before the next try, or ``None`` to raise ``error`` now."""
        if retries_done >= self.max_retries or not is_retryable(error):
            return None
        if isinstance(error, APIError):
            hint = retry_after(error.headers, self.clock)
            if hint is not None:
                return hint if hint <= self.max_retry_after else None
        backoff = min(self.initial_delay * 2.0**retries_done, self.max_delay)
        return backoff * (1.0 - 0.25 * self.random())


def is_retryable(error: PaySDKError) -> bool:
    if isinstance(
        error, (CertificateVerificationError, TLSProtocolError, ProxyAuthenticationError)
    ):
        return False  # the next try meets the same certificate or server, or credentials
    if isinstance(error, (APIConnectionError, ListUnavailableError)):
        return True
    if isinstance(error, APIError):
        return error.status_code in RETRYABLE_STATUS or error.status_code >= 500
    return False


MAX_RETRY_AFTER: Final = 10**9
"""The longest wait a server's hint is read as, in seconds (about 31 years): a longer one is
taken as just past this (``_PAST_MAX_RETRY_AFTER``), so no number of digits overflows a float or
Python's limit on int digits."""

_PAST_MAX_RETRY_AFTER: Final = math.nextafter(float(MAX_RETRY_AFTER), math.inf)
"""What a wait longer than ``MAX_RETRY_AFTER`` is read as: the float just past it, so
``wait_text`` says it as ``at least`` the cap and a wait of exactly the cap as itself."""

_DELAY_SECONDS = re.compile("[0-9]+")
"""RFC 9110's delay-seconds: ASCII digits only. ``int()`` and ``float()`` also take ``+5``,
``1_000`` and digits of other scripts; ``str.isdigit`` takes a superscript two."""

_DAY_NAME = "(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)"
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_MONTH = f"(?P<month>{'|'.join(_MONTHS)})"
_TIME = "(?P<hour>[0-9]{2}):(?P<minute>[0-9]{2}):(?P<second>[0-9]{2})"
_HTTP_DATES = (
    # IMF-fixdate, the one to send: Sun, 06 Nov 1994 08:49:37 GMT
    re.compile(f"{_DAY_NAME}, (?P<day>[0-9]{{2}}) {_MONTH} (?P<year>[0-9]{{4}}) {_TIME} GMT"),
    # obsolete RFC 850 form: Sunday, 06-Nov-94 08:49:37 GMT
    re.compile(
        "(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), "
        f"(?P<day>[0-9]{{2}})-{_MONTH}-(?P<year>[0-9]{{2}}) {_TIME} GMT"
    ),
    # obsolete asctime form: Sun Nov  6 08:49:37 1994
    re.compile(f"{_DAY_NAME} {_MONTH} (?P<day>[0-9 ][0-9]) {_TIME} (?P<year>[0-9]{{4}})"),
)
"""The three forms of an HTTP-date RFC 9110 (section 5.6.7) has recipients accept, exactly:
case-sensitive names, GMT, fixed widths. ``email.utils`` reads far more (numeric zones, no
weekday, two-digit years everywhere)."""


def retry_after(headers: Mapping[str, str], clock: Callable[[], float] = time.time) -> float | None:
    """The server's requested wait in seconds, one longer than ``MAX_RETRY_AFTER`` read as just
    past it (``_capped``): ``Retry-After`` as RFC 9110 defines it, delay-seconds (ASCII digits
    only) or an HTTP-date counted from the answer's ``Date`` (else from ``clock``), or
    ``retry-after-ms``, digits only too. Anything else is ignored (``None``: ordinary backoff
    applies)."""
    from_millis = _delay(headers.get("retry-after-ms"), per_second=1000)
    if from_millis is not None:
        return from_millis
    value = headers.get("retry-after")
    if value is None:
        return None
    seconds = _delay(value)
    if seconds is not None:
        return seconds
    when = _http_date(value, clock)
    if when is None:
        return None
    # A date is the server's clock: measured from the answer's Date, when the server sent it,
    # so a local clock minutes off neither retries at once nor gives up on a short wait.
    sent = headers.get("date")
    now = None if sent is None else _http_date(sent, clock)
    return _capped(max(0.0, when - (clock() if now is None else now)))


def wait_text(seconds: float) -> str:
    """``0.5s``, ``3600s``, ``1000000s (about 11.6 days)``: a wait as a person reads it, to the
    millisecond and never in exponent form (``1e+06s``); a wait past the cap (read as just past
    it) is ``at least`` the cap, and one of exactly the cap is the cap."""
    text = f"{min(seconds, MAX_RETRY_AFTER):.3f}".rstrip("0").rstrip(".") + "s"
    text = f"at least {text}" if seconds > MAX_RETRY_AFTER else text
    return text if seconds < 86400 else f"{text} (about {seconds / 86400:,.1f} days)"


def _delay(value: str | None, per_second: int = 1) -> float | None:
    """Delay-seconds: ASCII digits, with no sign, point or separator, read as seconds.

    Args:
        value: the header's value, if it was sent.
        per_second: how many of the value's units make a second (1000 for milliseconds).

    Returns:
        The wait in seconds, one longer than ``MAX_RETRY_AFTER`` read as just past it;
        ``None`` for a value that is no delay.
    """
    if value is None:
        return None
    digits = value.strip(" \t")  # optional whitespace around a field value is not part of it
    if _DELAY_SECONDS.fullmatch(digits) is None:
        return None
    significant = digits.lstrip("0")
    if len(significant) > len(str(MAX_RETRY_AFTER * per_second)):
        return _PAST_MAX_RETRY_AFTER
    return _capped(int(significant or "0") / per_second)


def _capped(seconds: float) -> float:
    """``seconds``, or ``_PAST_MAX_RETRY_AFTER`` for a wait longer than ``MAX_RETRY_AFTER``."""
    return seconds if seconds <= MAX_RETRY_AFTER else _PAST_MAX_RETRY_AFTER


def _http_date(value: str, clock: Callable[[], float]) -> float | None:
    """The POSIX time an HTTP-date names, or ``None`` if ``value`` is not one."""
    text = value.strip(" \t")
    found = next((match for form in _HTTP_DATES if (match := form.fullmatch(text))), None)
    if found is None:
        return None
    year = int(found["year"])
    if len(found["year"]) == 2:  # RFC 850: the latest year with these digits, at most 50 ahead
        this_year = dt.datetime.fromtimestamp(clock(), dt.timezone.utc).year
        year += this_year - this_year % 100
        if year > this_year + 50:
            year -= 100
    try:
        when = dt.datetime(
            year,
            _MONTHS.index(found["month"]) + 1,
            int(found["day"]),
            int(found["hour"]),
            int(found["minute"]),
            min(int(found["second"]), 59),  # 60: a leap second
            tzinfo=dt.timezone.utc,
        )
    except ValueError:  # 31 Feb, hour 24, year 0
        return None
    return when.timestamp()

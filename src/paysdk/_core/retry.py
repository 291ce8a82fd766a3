"""When a failed call is tried again, and how long to wait first: decisions only, no sleeping."""

from __future__ import annotations

import dataclasses
import datetime as dt
import email.utils
import math
import random
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


@dataclasses.dataclass(frozen=True)
class RetryPolicy:
    """When and how long to wait before trying a failed call again.

    Every request paysdk makes is a GET, so retrying can never pay or fulfil twice. Retried:
    no answer or a timeout (but not a certificate that failed verification, a server that does
    not speak TLS, nor a proxy's 407),
    408, 409, 425,
    429, any 5xx, and list's "Connection Error" 404.
    Backoff doubles from ``initial_delay`` up to ``max_delay`` with up to 25% jitter. A
    ``Retry-After`` (or ``retry-after-ms``) the server sends is obeyed exactly; one longer than
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
        return False  # the next try meets the same certificate or server, or sends the same
        # credentials
    if isinstance(error, (APIConnectionError, ListUnavailableError)):
        return True
    if isinstance(error, APIError):
        return error.status_code in RETRYABLE_STATUS or error.status_code >= 500
    return False


def retry_after(headers: Mapping[str, str], clock: Callable[[], float] = time.time) -> float | None:
    """The server's requested wait in seconds, from ``retry-after-ms`` or ``Retry-After``."""
    millis = _non_negative(headers.get("retry-after-ms"))
    if millis is not None:
        return millis / 1000.0
    value = headers.get("retry-after")
    if value is None:
        return None
    seconds = _non_negative(value)
    if seconds is not None:
        return seconds
    try:
        when = email.utils.parsedate_to_datetime(value)
        if when.tzinfo is None:  # "-0000": RFC 5322's "UTC, source zone unknown"
            when = when.replace(tzinfo=dt.timezone.utc)
        return max(0.0, when.timestamp() - clock())
    except (TypeError, ValueError, IndexError, OverflowError, OSError):
        return None


def _non_negative(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) and number >= 0 else None

"""The I/O-free core: what to send, what an answer means, and whether to try again.

Each API call is a *plan* (``plans``): a generator that yields steps (``steps``: send, sleep,
read, emit), is sent back what came of each, and returns the parsed model or raises a ``paysdk``
exception. The shells (sync, async, aiohttp) only carry the steps out, so all share every
decision made here, in the sans-I/O style of h11: nothing here opens a socket, sleeps or imports
an HTTP library, and tests drive it by hand. What the shells and products use is named below,
loaded on first use with its module (``paysdk.Expected`` needs only ``confirm``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_names

if TYPE_CHECKING:
    from .callbacks import parse_callback
    from .config import Config, Timeout
    from .expected import Expected, check_lookup, check_payment, expected_for, same_currency
    from .plans import (
        call,
        call_raw,
        confirm,
        iter_payments,
        list_payments,
        listed,
        verified,
        verify,
        verify_identified,
    )
    from .references import MAX_REFERENCE_LENGTH, check_reference, reference_problem
    from .requests import list_request, verify_request
    from .responses import error_for, map_response
    from .retry import RetryPolicy, is_retryable, retry_after
    from .steps import Answer, Emit, Failure, Opened, Read, Send, Sleep
    from .validation import parse_list, parse_verify

_HOMES = {
    "parse_callback": ".callbacks",
    **dict.fromkeys(["Config", "Timeout"], ".config"),
    **dict.fromkeys(
        ["Expected", "check_lookup", "check_payment", "expected_for", "same_currency"], ".expected"
    ),
    "call": ".plans",
    "call_raw": ".plans",
    "confirm": ".plans",
    "iter_payments": ".plans",
    "list_payments": ".plans",
    "listed": ".plans",
    "verified": ".plans",
    "verify": ".plans",
    "verify_identified": ".plans",
    **dict.fromkeys(
        ["MAX_REFERENCE_LENGTH", "check_reference", "reference_problem"], ".references"
    ),
    **dict.fromkeys(["list_request", "verify_request"], ".requests"),
    **dict.fromkeys(["error_for", "map_response"], ".responses"),
    **dict.fromkeys(["RetryPolicy", "is_retryable", "retry_after"], ".retry"),
    **dict.fromkeys(["Answer", "Emit", "Failure", "Opened", "Read", "Send", "Sleep"], ".steps"),
    **dict.fromkeys(["parse_list", "parse_verify"], ".validation"),
}

__getattr__, __dir__ = lazy_names(__name__, _HOMES)

__all__ = [
    "MAX_REFERENCE_LENGTH",
    "Answer",
    "Config",
    "Emit",
    "Expected",
    "Failure",
    "Opened",
    "Read",
    "RetryPolicy",
    "Send",
    "Sleep",
    "Timeout",
    "call",
    "call_raw",
    "check_lookup",
    "check_payment",
    "check_reference",
    "confirm",
    "error_for",
    "expected_for",
    "is_retryable",
    "iter_payments",
    "list_payments",
    "list_request",
    "listed",
    "map_response",
    "parse_callback",
    "parse_list",
    "parse_verify",
    "reference_problem",
    "retry_after",
    "same_currency",
    "verified",
    "verify",
    "verify_identified",
    "verify_request",
]

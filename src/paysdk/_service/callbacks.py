"""The callback request the service sends a merchant, ``GET <callback URL>?reference=...``, and
how long one may take."""

from __future__ import annotations

import re
from urllib.parse import quote, urlsplit, urlunsplit

from .._lazy import publish

__all__ = ["LONGEST_CALLBACK_TIMEOUT", "callback_timeout", "callback_url", "shown_url"]

LONGEST_CALLBACK_TIMEOUT = 86400.0
"""The longest timeout a callback takes, in seconds: a day (a socket cannot wait for ever)."""


_PASSWORD = re.compile(r"^((?:[^:/?#@]*:)?(?:[\t\r\n]*/)*[^:/?#]*:)[^/?#]+@")
"""The password in ``url``'s user info: after the scheme, the slashes and the user's ``:``, up to
the authority's last ``@``. Read from the text as given, so that a URL no parser reads (a bad
port, an unclosed ``[``), or one with a tab that parsers drop, still has its password found."""


def shown_url(url: str) -> str:
    """``url`` as a message or a log shows it: the password of its user info (``user:pw@``,
    sent as Basic auth to a handler behind it) as ``***``, whether or not the URL is valid."""
    return _PASSWORD.sub(r"\1***@", url, count=1)


def callback_url(url: str, reference: str) -> str:
    """``url`` with ``reference=<reference>`` appended to its query, percent-encoded.

    Any existing query is kept; a fragment is dropped (it is never sent over HTTP).

    Args:
        url: the merchant's callback URL, absolute http(s).
        reference: the payment's reference.

    Returns:
        The URL the callback is sent to.

    Raises:
        ValueError: ``url`` is not an absolute, valid http(s) URL, or ``reference`` holds a
            lone surrogate.
        TypeError: ``reference`` is not a string.
    """
    shown = shown_url(url) if isinstance(url, str) else url
    try:  # a port past 65535 would be sent to another port (its remainder), not refused
        parts = urlsplit(url)  # raises ValueError for an unclosed "[" of an IPv6 host
        parts.port  # noqa: B018 - raises ValueError for a port that is not one
    except ValueError as exc:
        raise ValueError(f"callback URL {shown!r} is not a valid URL: {exc}") from None
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"callback URL must be an absolute http(s) URL, not {shown!r}")
    if not isinstance(reference, str):
        raise TypeError(f"reference must be a string, not {type(reference).__name__}")
    try:
        param = f"reference={quote(reference, safe='')}"
    except UnicodeEncodeError:  # a lone surrogate: no URL can carry it
        raise ValueError(f"reference {reference!r} is not text UTF-8 can encode") from None
    query = f"{parts.query}&{param}" if parts.query else param
    target = urlunsplit((parts.scheme, parts.netloc, parts.path or "/", query, ""))
    import httpx  # here: a sandbox that sends no callback starts without the HTTP client

    from .._transport import check_host

    try:  # what httpx will refuse when sending: stray characters, bad IDNA hosts
        check_host(target)
    except (httpx.InvalidURL, ValueError) as exc:  # UnicodeError is a ValueError
        raise ValueError(f"callback URL {shown!r} is not a valid URL: {exc}") from None
    return target


publish("paysdk.sandbox", callback_url)


def callback_timeout(timeout: object) -> float:
    """``timeout`` as a callback's seconds, checked before anything is sent or recorded: a
    ``ValueError`` unless more than 0 and at most ``LONGEST_CALLBACK_TIMEOUT``."""
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, (int, float))
        or not 0 < timeout <= LONGEST_CALLBACK_TIMEOUT
    ):
        shown = (  # Python writes no int of over 4,300 digits as text
            f"an integer of {timeout.bit_length():,} bits"
            if isinstance(timeout, int) and timeout.bit_length() > 64
            else repr(timeout)
        )
        raise ValueError(
            "the callback's timeout must be more than 0 and at most "
            f"{LONGEST_CALLBACK_TIMEOUT:.0f} seconds, not {shown}"
        )
    return float(timeout)

"""The callback request the service sends a merchant: ``GET <callback URL>?reference=...``."""

from __future__ import annotations

from urllib.parse import quote, urlsplit, urlunsplit

from .._lazy import publish

__all__ = ["callback_url"]


def callback_url(url: str, reference: str) -> str:
    """``url`` with ``reference=<reference>`` appended to its query, percent-encoded.

    Any existing query is kept; a fragment is dropped (it is never sent over HTTP).

    Args:
        url: the merchant's callback URL, absolute http(s).
        reference: the payment's reference.

    Returns:
        The URL the callback is sent to.

    Raises:
        ValueError: ``url`` is not an absolute, valid http(s) URL.
    """
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"callback URL must be an absolute http(s) URL, not {url!r}")
    param = f"reference={quote(reference, safe='')}"
    query = f"{parts.query}&{param}" if parts.query else param
    target = urlunsplit((parts.scheme, parts.netloc, parts.path or "/", query, ""))
    import httpx  # here: a sandbox that sends no callback starts without the HTTP client

    from .._transport import check_host

    try:  # what httpx will refuse when sending: stray characters, bad IDNA hosts
        check_host(target)
    except (httpx.InvalidURL, ValueError) as exc:  # UnicodeError is a ValueError
        raise ValueError(f"callback URL {url!r} is not a valid URL: {exc}") from None
    return target


publish("paysdk.sandbox", callback_url)

"""Send the service's payment callback: ``GET <callback URL>?reference=<reference>``.

Used by the sandbox (``Sandbox.send_callback``) and by ``paysdk trigger-callback`` so a merchant
can exercise their handler locally the way the service would.
"""

from __future__ import annotations

import dataclasses
from urllib.parse import quote, urlsplit, urlunsplit

import httpx

__all__ = ["CallbackDeliveryError", "CallbackResult", "callback_url", "send_callback"]

DEFAULT_CALLBACK_TIMEOUT = 10.0


class CallbackDeliveryError(ConnectionError):
    """The callback handler could not be reached or did not answer in time."""


@dataclasses.dataclass(frozen=True)
class CallbackResult:
    """What the merchant's handler answered."""

    url: str
    status_code: int
    body: str

    @property
    def ok(self) -> bool:
        return 200 <= self.status_code < 300


def callback_url(url: str, reference: str) -> str:
    """``url`` with ``reference=<reference>`` appended to its query, percent-encoded.

    Any existing query is kept; a fragment is dropped (it is never sent over HTTP).
    """
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"callback URL must be an absolute http(s) URL, not {url!r}")
    param = f"reference={quote(reference, safe='')}"
    query = f"{parts.query}&{param}" if parts.query else param
    target = urlunsplit((parts.scheme, parts.netloc, parts.path or "/", query, ""))
    try:  # what httpx will refuse when sending: stray characters, bad IDNA hosts
        httpx.URL(target).host.encode("idna")
    except (httpx.InvalidURL, ValueError) as exc:  # UnicodeError is a ValueError
        raise ValueError(f"callback URL {url!r} is not a valid URL: {exc}") from None
    return target


def send_callback(
    url: str, reference: str, *, timeout: float = DEFAULT_CALLBACK_TIMEOUT
) -> CallbackResult:
    """GET the callback URL for ``reference`` and return the handler's answer.

    Raises ``ValueError`` for a URL that is not http(s) and :class:`CallbackDeliveryError` when
    the handler cannot be reached. Proxy settings from the environment are ignored, since the
    handler is usually on this machine.
    """
    target = callback_url(url, reference)
    try:
        with httpx.Client(timeout=timeout, trust_env=False) as http:
            response = http.get(target, headers={"User-Agent": "paysdk-sandbox-callback"})
    except httpx.TimeoutException:
        raise CallbackDeliveryError(f"callback to {target} timed out after {timeout}s") from None
    except httpx.HTTPError as exc:
        raise CallbackDeliveryError(f"callback to {target} failed: {exc}") from None
    return CallbackResult(url=target, status_code=response.status_code, body=response.text)

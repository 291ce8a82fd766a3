"""Send the service's payment callback (``Sandbox.send_callback``, ``paysdk trigger-callback``),
bounded in time and body size so that a handler that trickles or floods cannot hold the caller."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from .._errors.quoting import bounded_detail
from .._parsing.decoding import ACCEPT_ENCODING
from .._service.callbacks import callback_timeout, callback_url, shown_url

if TYPE_CHECKING:
    from .._transport import Fetched

__all__ = ["CallbackDeliveryError", "CallbackResult", "send_callback"]

DEFAULT_CALLBACK_TIMEOUT = 10.0
MAX_CALLBACK_BODY = 64 * 1024
"""How many bytes of the handler's answer are kept: the rest is not read."""


class CallbackDeliveryError(ConnectionError):
    """The callback handler could not be reached or did not answer in time."""


@dataclasses.dataclass(frozen=True)
class CallbackResult:
    """What the merchant's handler answered."""

    url: str
    """The URL requested: the callback URL with ``reference=`` added."""
    status_code: int
    """The handler's HTTP status."""
    body: str
    """The start of the handler's body, decoded (at most ``MAX_CALLBACK_BODY`` bytes)."""

    @property
    def ok(self) -> bool:
        """Whether the handler answered 2xx."""
        return 200 <= self.status_code < 300


def send_callback(
    url: str, reference: str, *, timeout: float = DEFAULT_CALLBACK_TIMEOUT
) -> CallbackResult:
    """GET the callback URL for ``reference`` and return the handler's answer.

    The whole call, body included, ends within ``timeout`` seconds; the body kept is at most
    ``MAX_CALLBACK_BODY`` bytes. Proxy settings from the environment are ignored, since the
    handler is usually on this machine.

    Args:
        url: the merchant's callback URL, absolute http(s).
        reference: the payment's reference, added as ``?reference=``.
        timeout: seconds for the whole call, body included.

    Returns:
        What the handler answered.

    Raises:
        ValueError: ``url`` is not an absolute, valid http(s) URL, ``reference`` holds a lone
            surrogate, or ``timeout`` is not more than 0 and at most a day.
        TypeError: ``reference`` is not a string.
        CallbackDeliveryError: the handler cannot be reached or does not answer whole in time.
    """
    timeout = callback_timeout(timeout)
    # here: a sandbox that sends no callback (most) starts without the HTTP client
    from .._transport import Fetched, fetch

    target = callback_url(url, reference)
    headers = {"User-Agent": "paysdk-sandbox-callback", "Accept-Encoding": ACCEPT_ENCODING}
    answer = fetch(target, headers=headers, timeout=timeout, max_body=MAX_CALLBACK_BODY)
    if isinstance(answer, Fetched):
        return CallbackResult(url=target, status_code=answer.status_code, body=_text(answer))
    shown = shown_url(target)
    if answer.kind == "timeout":
        raise CallbackDeliveryError(f"callback to {shown} timed out after {timeout}s")
    if answer.kind == "undecodable":
        reason = bounded_detail(str(answer.cause or answer.detail))
        raise CallbackDeliveryError(f"callback to {shown}: undecodable answer: {reason}")
    from .._core.responses import connection_refused  # here: it loads pydantic

    address = urlsplit(target).netloc.rpartition("@")[2]
    if answer.kind == "tls_protocol":
        hint = f"; your app at {address} did not answer in TLS: if it speaks plain HTTP, as a "
        hint += "development server does, give the callback URL with http://"
    elif answer.kind == "connect" and connection_refused(answer.cause):
        hint = f"; nothing listens at {address}: is your app running, on that port?"
    else:
        hint = ""
    detail = bounded_detail(answer.detail)
    raise CallbackDeliveryError(f"callback to {shown} failed: {detail}{hint}")


def _text(answer: Fetched) -> str:
    """The handler's body in the charset it names, else as UTF-8: a Content-Type may name any
    codec Python knows, ``rot13`` or ``idna`` too, which decode no bytes as text here."""
    try:
        return answer.body.decode(answer.encoding, errors="replace")
    except (LookupError, UnicodeError):
        return answer.body.decode("utf-8", errors="replace")

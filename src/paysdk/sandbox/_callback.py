"""Send the service's payment callback: ``GET <callback URL>?reference=<reference>``.

Used by the sandbox (``Sandbox.send_callback``) and by ``paysdk trigger-callback`` so a merchant
can exercise their handler locally the way the service would. The whole call is bounded by its
timeout (socket deadlines, as the client's own attempts are) and the answer's body by
``MAX_CALLBACK_BODY``, so a handler that trickles or floods cannot hold the caller.
"""

from __future__ import annotations

import dataclasses
import time
from typing import TYPE_CHECKING

from .._parsing.decoding import ACCEPT_ENCODING, DecodingError
from .._service.callbacks import callback_url

if TYPE_CHECKING:
    import httpx

__all__ = ["CallbackDeliveryError", "CallbackResult", "callback_url", "send_callback"]

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
        ValueError: ``url`` is not an absolute, valid http(s) URL.
        CallbackDeliveryError: the handler cannot be reached or does not answer whole in time.
    """
    # Imported here, when a callback is sent: a sandbox that never sends one (most) starts
    # without the HTTP client.
    import httpx

    from .._transport._sync.pool import PoolTransport
    from .._transport.deadline import attempt_deadline, deadline_backend
    from .._transport.network import Network

    target = callback_url(url, reference)
    headers = {"User-Agent": "paysdk-sandbox-callback", "Accept-Encoding": ACCEPT_ENCODING}
    deadline = time.monotonic() + timeout
    try:
        network = Network(True, None, trust_env=False)  # a TLS context only for https://
        transport = PoolTransport(network, network_backend=deadline_backend())
        with (
            httpx.Client(timeout=timeout, transport=transport, trust_env=False) as http,
            attempt_deadline(deadline),
            http.stream("GET", target, headers=headers) as response,
        ):
            body = _head_of_body(response)
    except httpx.TimeoutException:
        raise CallbackDeliveryError(f"callback to {target} timed out after {timeout}s") from None
    except (httpx.HTTPError, OSError) as exc:  # OSError: a socket's, as the client senders take it
        raise CallbackDeliveryError(f"callback to {target} failed: {exc}") from None
    except DecodingError as exc:
        raise CallbackDeliveryError(f"callback to {target}: undecodable answer: {exc}") from None
    text = body.decode(response.encoding or "utf-8", errors="replace")
    return CallbackResult(url=target, status_code=response.status_code, body=text)


def _head_of_body(response: httpx.Response) -> bytes:
    """The first ``MAX_CALLBACK_BODY`` decoded bytes of the body; the rest is left unread."""
    from .._transport.httpx_common import sync_body

    pieces: list[bytes] = []
    kept = 0
    for piece in sync_body(response):
        pieces.append(piece[: MAX_CALLBACK_BODY - kept])
        kept += len(pieces[-1])
        if kept >= MAX_CALLBACK_BODY:
            break
    return b"".join(pieces)

"""The requests ``MockPaymentAPI`` gets through its respx router: each recorded as a
``RecordedCall``, a fault that fails one raised as httpx raises it over a real connection, and a
request to a host the fake does not answer refused, saying what to do about it."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Literal, cast

import httpx
import respx

from .._service.faults import Fault

__all__ = ["Endpoint", "NotTheFakesRequest", "RecordedCall", "ask_first", "transport_error"]

Endpoint = Literal["verify", "list"]


@dataclasses.dataclass(frozen=True)
class RecordedCall:
    """A request the fake got. Its ``Authorization`` value is not kept: see ``authorized``."""

    method: str
    """The request's method."""
    path: str
    """The raw path below the base URL, still percent-encoded, without the query."""
    endpoint: Endpoint | None
    """``"verify"``, ``"list"``, or ``None`` for a path the service does not have."""
    reference: str | None
    """The reference a verify call asked for, percent-decoded; ``None`` for other calls."""
    headers: Mapping[str, str]
    """The request headers, with the ``Authorization`` value replaced by ``<redacted>``."""
    authorized: bool
    """Whether the call carried ``Authorization: Bearer <the fake's key>``."""
    request_id: str | None = None
    """The ``X-Request-Id`` of the answer, to compare with what a client reports; ``None`` when
    a fault failed the call before any answer (a timeout, a cut connection)."""


class NotTheFakesRequest(respx.models.AllMockedAssertionError):
    """A request to a host the fake does not answer, said with what to do about it.

    respx tries its next router on this error, and raises it when no router answers.
    """


def ask_first(router: respx.MockRouter) -> None:
    """Put ``router`` before the respx routers started earlier: respx asks them in order, and
    one with ``assert_all_mocked=False`` answers any request it has no route for (an empty 200),
    requests to the fake's host too."""
    routers = router.Mocker.routers if router.Mocker is not None else []
    if router in routers:
        routers.remove(router)
        routers.insert(0, router)


def transport_error(fault: Fault, request: httpx.Request) -> httpx.TransportError | None:
    """What httpx raises when the sandbox applies ``fault`` over a real connection, if anything."""
    timeouts = cast("Mapping[str, float | None]", request.extensions.get("timeout") or {})
    read_timeout = timeouts.get("read")
    if fault.delay and read_timeout is not None and fault.delay >= read_timeout:
        return httpx.ReadTimeout("The read operation timed out", request=request)
    if fault.disconnect == "before_response":
        return httpx.RemoteProtocolError(
            "Server disconnected without sending a response.", request=request
        )
    if fault.disconnect is not None:
        return httpx.RemoteProtocolError(
            "peer closed connection without sending complete message body", request=request
        )
    return None

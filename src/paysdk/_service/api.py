"""The service's API without I/O: routes, the key check, bodies and replies. The sandbox and the
fake both answer through ``answer_api``, so they cannot drift apart, and both stamp each answer,
faults included, with an ``X-Request-Id`` as the service does."""

from __future__ import annotations

import dataclasses
import hmac
import json
import secrets
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal
from urllib.parse import quote, unquote

from .records import PaymentRecord

__all__ = [
    "NOT_FOUND_BODY",
    "REQUEST_ID_HEADER",
    "UNAUTHORIZED_BODY",
    "Reply",
    "answer_api",
    "api_route",
    "authorized",
    "fault_path",
    "header_value",
    "new_request_id",
    "redacted",
    "verify_envelope",
]

NOT_FOUND_BODY: Mapping[str, Any] = {
    "success": False,
    "error": "Error in request",
    "message": "reference not found",
}
"""Verify's documented 404 body: no payment has the reference."""
UNAUTHORIZED_BODY: Mapping[str, Any] = {
    "success": False,
    "error": "Unauthorized",
    "message": "invalid or missing secret key",
}
"""The 401 body for a missing or wrong secret key."""
REQUEST_ID_HEADER = "X-Request-Id"
"""The header naming the answer to one request, which a merchant quotes to the service's support."""


def new_request_id() -> str:
    """A fresh id for one answer, shaped like the service's: ``req_`` and 24 hex digits."""
    return f"req_{secrets.token_hex(12)}"


def redacted(name: str, value: str) -> str:
    """A request header's value as a stand-in's log keeps it: never the key in ``Authorization``."""
    return "<redacted>" if name.lower() == "authorization" else value


def header_value(headers: Mapping[str, str], name: str) -> str | None:
    """The value of header ``name`` in ``headers``, whatever the case of either."""
    wanted = name.lower()
    return next((value for key, value in headers.items() if key.lower() == wanted), None)


@dataclasses.dataclass(frozen=True)
class Reply:
    """What a stand-in of the service sends back: status, body and headers (not
    ``paysdk._core.steps.Answer``, which is what the client receives)."""

    status: int
    body: bytes
    headers: Mapping[str, str]

    @classmethod
    def json(cls, status: int, body: object, **headers: str) -> Reply:
        content = json.dumps(body).encode()
        return cls(status, content, {"Content-Type": "application/json", **headers})

    @classmethod
    def error(cls, status: int, error: str, message: str, **headers: str) -> Reply:
        return cls.json(status, {"error": error, "message": message}, **headers)

    def with_request_id(self, request_id: str) -> Reply:
        """This reply with ``X-Request-Id: request_id``; one whose headers name an
        ``X-Request-Id`` already (a fault's may) keeps its own."""
        if header_value(self.headers, REQUEST_ID_HEADER) is not None:
            return self
        return dataclasses.replace(self, headers={**self.headers, REQUEST_ID_HEADER: request_id})


@dataclasses.dataclass(frozen=True)
class ApiRoute:
    """Which endpoint a raw path names, and for verify the reference, percent-decoded once."""

    endpoint: Literal["verify", "list"]
    reference: str | None = None


def api_route(path: str) -> ApiRoute | None:
    """The endpoint of a raw (percent-encoded) path, or ``None``: the path is split on ``/`` before
    the reference is decoded, so ``/payment/a%2Fb`` looks up ``a/b`` and ``/payment/..%2Fpayments``
    never lists."""
    if path == "/payments":
        return ApiRoute("list")
    segments = path.split("/")
    if len(segments) == 3 and segments[1] == "payment" and segments[2]:
        return ApiRoute("verify", unquote(segments[2]))
    return None


def fault_path(path: str) -> str:
    """``path`` with a verify reference re-encoded the way paysdk encodes it, for fault matching
    in ``FaultBook``, which the sandbox and the in-memory fake both ask."""
    route = api_route(path)
    if route is None or route.reference is None:
        return path
    return "/payment/" + quote(route.reference, safe="")


def authorized(header: str | None, secret_key: str) -> bool:
    """Whether an ``Authorization`` header is ``Bearer <secret_key>``, compared in constant time."""
    scheme, _, token = (header or "").partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(token.encode(), secret_key.encode())


def verify_envelope(data: Mapping[str, Any]) -> dict[str, Any]:
    """Verify's 200 body around a payment's verify shape, as the service wraps it."""
    return {"status": True, "message": "Verification successful", "data": data}


def answer_api(
    method: str,
    path: str,
    authorization: str | None,
    *,
    secret_key: str,
    find: Callable[[str], PaymentRecord | None],
    listing: Callable[[], Iterable[PaymentRecord]],
) -> Reply:
    """The service's answer to ``method path`` (a raw path, no query), faults aside: ``find``
    looks a payment up by reference, ``listing`` gives every payment, newest first."""
    route = api_route(path)
    if route is None:
        return Reply.error(404, "Not Found", f"no route for {path}")
    if method != "GET":
        return Reply.error(405, "Method Not Allowed", f"{method} is not allowed here", Allow="GET")
    if not authorized(authorization, secret_key):
        return Reply.json(401, UNAUTHORIZED_BODY)
    if route.reference is None:
        return Reply.json(200, {"data": [record.list_shape() for record in listing()]})
    record = find(route.reference)
    if record is None:
        return Reply.json(404, NOT_FOUND_BODY)
    return Reply.json(200, verify_envelope(record.verify_shape()))

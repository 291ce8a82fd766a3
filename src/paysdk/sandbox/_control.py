"""The sandbox's control endpoints under ``/_sandbox/``, each taking the key, for tests and tools
in another process: ``pay`` is what ``paysdk pay`` calls, ``status`` (the serving process's pid)
what ``paysdk sandbox stop`` checks before signalling it."""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from collections.abc import Mapping
from typing import Any, Protocol, cast

from .._service.api import Reply
from .._service.faults import Fault, FaultBook
from .._service.records import PaymentRecord, SeedError, deeper_than
from ._callback import DEFAULT_CALLBACK_TIMEOUT, CallbackDeliveryError, CallbackResult
from ._requests import RecordedRequest
from ._state import StateFileError

__all__ = ["CONTROL_PREFIX", "MAX_CALLBACK_TIMEOUT", "Controlled", "answer_control"]

CONTROL_PREFIX = "/_sandbox/"
MAX_JSON_DEPTH = 32
"""How deeply a control request's JSON body may nest (a seed record needs 4 levels)."""
TOO_DEEP = f"the body is nested more than {MAX_JSON_DEPTH} levels deep"
MAX_CALLBACK_TIMEOUT = 60.0
"""The longest callback ``POST /_sandbox/pay`` waits for, in seconds."""
_RESOURCES = ("faults", "requests", "payments", "pay", "status")


class Controlled(Protocol):
    """What the control endpoints use of a sandbox (``paysdk.sandbox.Sandbox``)."""

    faults: FaultBook

    @property
    def requests(self) -> list[RecordedRequest]: ...

    @property
    def payments(self) -> list[PaymentRecord]: ...

    def inject(self, fault: Fault, *, path: str | None = None, times: int | None = 1) -> None: ...

    def clear_faults(self) -> None: ...

    def clear_requests(self) -> None: ...

    def add_payment(self, payment: PaymentRecord, /) -> PaymentRecord: ...

    def get_payment(self, reference: str) -> PaymentRecord | None: ...

    def pay(
        self, payment: PaymentRecord, /, *, callback: str, timeout: float
    ) -> CallbackResult: ...


def answer_control(sandbox: Controlled, method: str, path: str, body: bytes) -> Reply:
    """The answer to an authorized control request."""
    resource = path[len(CONTROL_PREFIX) :]
    try:
        if (method, resource) == ("POST", "faults"):
            for item in _json_items(body):
                options = dict(item)
                path_ = options.pop("path", None)
                times = options.pop("times", 1)
                sandbox.inject(Fault.from_json(options), path=path_, times=times)
            return Reply.json(201, {"faults": len(sandbox.faults)})
        if (method, resource) == ("DELETE", "faults"):
            sandbox.clear_faults()
            return Reply.json(200, {"faults": 0})
        if (method, resource) == ("GET", "requests"):
            return Reply.json(200, {"data": [_request_json(r) for r in sandbox.requests]})
        if (method, resource) == ("DELETE", "requests"):
            sandbox.clear_requests()
            return Reply.json(200, {"data": []})
        if (method, resource) == ("POST", "payments"):
            records = [PaymentRecord.from_json(item) for item in _json_items(body)]
            data = [sandbox.add_payment(record).verify_shape() for record in records]
            return Reply.json(201, {"data": data})
        if (method, resource) == ("POST", "pay"):
            return _pay(sandbox, body)
        if (method, resource) == ("GET", "status"):
            return Reply.json(200, {"pid": os.getpid(), "payments": len(sandbox.payments)})
    except StateFileError as exc:  # the sandbox's own disk, not the request
        return Reply.error(500, "Internal Server Error", str(exc))
    except (SeedError, ValueError, TypeError) as exc:
        return Reply.error(400, "Bad Request", str(exc))
    if resource in _RESOURCES:
        return Reply.json(405, {"error": "Method Not Allowed"})
    return Reply.json(404, {"error": "Not Found", "message": f"no route for {path}"})


def _pay(sandbox: Controlled, body: bytes) -> Reply:
    """``Sandbox.pay`` for ``{"payment": {...}, "callback": URL, "timeout": s, "replace": bool}``:
    201 with the payment and, under ``callback``, the handler's answer or why it was not delivered
    (``error``). ``"replace": false`` refuses (409) a reference already held, sending nothing."""
    [request] = _json_items(body, many=False)
    unknown = sorted(set(request) - {"payment", "callback", "timeout", "replace"})
    if unknown:
        raise ValueError(
            f"unknown field(s) {', '.join(unknown)}: expected payment, callback, timeout, replace"
        )
    replace = request.get("replace", True)
    if not isinstance(replace, bool):
        raise ValueError("replace must be true or false")
    url = request.get("callback")
    if not isinstance(url, str):
        raise ValueError("callback must be the callback URL, a string")
    timeout = request.get("timeout", DEFAULT_CALLBACK_TIMEOUT)
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, (int, float))
        or not 0 < timeout <= MAX_CALLBACK_TIMEOUT  # also NaN, infinity and huge ints
    ):
        raise ValueError(f"timeout must be a number of seconds from 0 to {MAX_CALLBACK_TIMEOUT:g}")
    record = PaymentRecord.from_json(request.get("payment"))
    if not replace and sandbox.get_payment(record.reference) is not None:
        return Reply.error(
            409, "Conflict", f"the sandbox already holds a payment for {record.reference!r}"
        )
    try:
        result = sandbox.pay(record, callback=url, timeout=float(timeout))
    except CallbackDeliveryError as exc:
        callback: dict[str, Any] = {"error": str(exc)}
    else:
        callback = {"url": result.url, "status_code": result.status_code, "body": result.body}
    return Reply.json(201, {"payment": record.verify_shape(), "callback": callback})


def _json_items(body: bytes, *, many: bool = True) -> list[Mapping[str, Any]]:
    """A JSON object, or (``many``) an array of them, from a control request's body."""
    try:
        data = json.loads(body or b"null")
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise ValueError("the body must be JSON") from None
    except ValueError:  # a number past sys.get_int_max_str_digits()
        raise ValueError(
            f"the body holds a number of more than {sys.get_int_max_str_digits():,} digits, "
            "more than Python reads"
        ) from None
    except RecursionError:  # deeper than the interpreter's stack allows
        raise ValueError(TOO_DEEP) from None
    if deeper_than(data, MAX_JSON_DEPTH):
        raise ValueError(TOO_DEEP)
    items = cast("list[object]", data) if isinstance(data, list) else [data]
    if not items or not all(isinstance(item, dict) for item in items):
        raise ValueError("the body must be a JSON object or an array of objects")
    if not many and isinstance(data, list):
        raise ValueError("the body must be a JSON object")
    return cast("list[Mapping[str, Any]]", items)


def _request_json(request: RecordedRequest) -> dict[str, Any]:
    return dataclasses.asdict(request) | {"headers": dict(request.headers)}

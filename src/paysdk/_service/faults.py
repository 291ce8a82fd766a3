"""Fault injection: make the sandbox or the fake fail as real networks and proxies do. A ``Fault``
says what goes wrong (a delay, another answer, a cut connection); the ``FaultBook`` where (a path,
a prefix, or every API path) and how many times, so "fail twice, then succeed" is one line."""

from __future__ import annotations

import dataclasses
import json
import re
import threading
from collections.abc import Mapping
from typing import Any, Literal, get_args

from .._lazy import publish
from .api import REQUEST_ID_HEADER, fault_path, header_value

__all__ = ["MAX_DELAY", "MAX_TIMES", "Disconnect", "Fault", "FaultBook", "answer_request_id"]

MAX_DELAY = 600.0
"""The longest ``delay`` a fault takes, in seconds (a timeout test needs far less)."""
MAX_TIMES = 1_000_000
"""The largest ``times`` a fault takes; ``None`` means until cleared."""

Disconnect = Literal["before_response", "mid_body", "truncated"]
"""How to cut the connection: before any byte of the answer; after the headers and half the body;
or after the whole body, having declared a longer Content-Length."""

_JSON = "application/json"
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_FIELD_VALUE = re.compile(r"[\t\x20-\x7e\x80-\xff]*")
_FRAMING = frozenset({"content-length", "transfer-encoding"})
"""Headers that frame an answer's body: the sandbox writes its own, and the fake's httpx its."""


@dataclasses.dataclass(frozen=True)
class Fault:
    """What goes wrong on one request. Without ``status`` the real answer is (delayed or) cut.

    Raises:
        ValueError: a field out of range: a negative or too long delay, a status outside
            100-599, headers that are not HTTP text or that frame the body
            (``Content-Length``, ``Transfer-Encoding``), an unknown ``disconnect``.
    """

    delay: float = 0.0
    """Seconds to wait before sending anything (to provoke client timeouts)."""
    status: int | None = None
    """Answer with this status, ``body`` and ``headers`` instead of the real answer."""
    body: str = ""
    """The body of the answer given instead (with ``status``)."""
    headers: Mapping[str, str] = dataclasses.field(default_factory=dict[str, str])
    """The headers of the answer given instead (with ``status``)."""
    disconnect: Disconnect | None = None
    """Where to cut the connection ([`Disconnect`][paysdk.sandbox.Disconnect]); ``None``: no cut."""

    def __post_init__(self) -> None:
        if isinstance(self.delay, bool) or not isinstance(self.delay, (int, float)):
            raise ValueError("delay must be a number of seconds")
        if self.delay < 0:
            raise ValueError("delay must not be negative")
        if not self.delay <= MAX_DELAY:  # also refuses inf and nan, which compare False
            raise ValueError(f"delay must be at most {MAX_DELAY:g} seconds")
        if self.status is not None and (
            type(self.status) is not int or not 100 <= self.status <= 599
        ):
            raise ValueError("status must be an HTTP status code (100-599)")
        if not isinstance(self.body, str):
            raise ValueError("body must be a string")
        try:
            self.body.encode()
        except UnicodeEncodeError:
            raise ValueError("body must be text UTF-8 can encode (no lone surrogates)") from None
        if not isinstance(self.headers, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in self.headers.items()
        ):
            raise ValueError("headers must map strings to strings")
        for name, value in self.headers.items():
            if not _TOKEN.fullmatch(name):
                raise ValueError(f"header name {name!r} is not an HTTP token")
            if not _FIELD_VALUE.fullmatch(value):
                raise ValueError(f"header {name} must be Latin-1 text without control characters")
            if name.lower() in _FRAMING:
                raise ValueError(
                    f"header {name} frames the answer, which the sandbox and the fake do "
                    "themselves; to cut an answer short, use disconnect= (truncated, mid_body)"
                )
        if self.disconnect is not None and self.disconnect not in get_args(Disconnect):
            raise ValueError(f"disconnect must be one of {', '.join(get_args(Disconnect))}")

    # Presets for the failures a client meets in practice.

    @classmethod
    def json(cls, status: int, body: object, headers: Mapping[str, str] | None = None) -> Fault:
        """Answer ``status`` with ``body`` as JSON.

        Args:
            status: the HTTP status.
            body: anything ``json.dumps`` takes, but NaN and infinities (no JSON).
            headers: more headers (``Content-Type`` is JSON's unless given).

        Returns:
            The fault.

        Raises:
            ValueError: ``body`` holds NaN or an infinity, which JSON has no form for, or
                refers to itself.
            TypeError: ``body`` holds what JSON has no form for (a set, an object).
        """
        return cls(
            status=status, body=_json_text(body), headers={"Content-Type": _JSON, **(headers or {})}
        )

    @classmethod
    def html_502(cls) -> Fault:
        """A load balancer's HTML error page instead of the service's JSON."""
        page = (
            "<html><head><title>502 Bad Gateway</title></head>"
            "<body><h1>502 Bad Gateway</h1></body></html>"
        )
        return cls(status=502, body=page, headers={"Content-Type": "text/html"})

    @classmethod
    def rate_limited(cls, retry_after: int = 1) -> Fault:
        """429 with a ``Retry-After`` in seconds.

        Args:
            retry_after: the ``Retry-After`` header's seconds.

        Returns:
            The fault.
        """
        body = {"error": "Too Many Requests", "message": "slow down"}
        return cls.json(429, body, {"Retry-After": str(retry_after)})

    @classmethod
    def server_error(cls, status: int = 500) -> Fault:
        """A 5xx with the service's JSON error body.

        Args:
            status: the HTTP status.

        Returns:
            The fault.
        """
        return cls.json(status, {"error": "Internal Server Error"})

    @classmethod
    def timeout(cls, seconds: float = MAX_DELAY) -> Fault:
        """No answer for ``seconds`` (the longest delay a fault takes, by default): the client's
        timeout fires first.

        Args:
            seconds: how long to wait before answering.

        Returns:
            The fault.
        """
        return cls(delay=seconds)

    @classmethod
    def connection_reset(cls) -> Fault:
        """The connection is cut before any byte of the answer."""
        return cls(disconnect="before_response")

    @classmethod
    def list_unavailable(cls) -> Fault:
        """The list endpoint's documented failure: 404 ``{"error": "Connection Error"}``."""
        return cls.json(404, {"error": "Connection Error"})

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> Fault:
        """A fault from the JSON body of ``POST /_sandbox/faults`` (without path and times).

        A ``body`` that is not a string is sent as JSON, with a JSON Content-Type by default.

        Args:
            obj: the fault's fields by name, as JSON decodes them.

        Returns:
            The fault.

        Raises:
            ValueError: an unknown field, or a field out of range (a ``body`` holding NaN or
                an infinity, which JSON has no form for).
        """
        fields = dict(obj)
        unknown = sorted(set(fields) - {f.name for f in dataclasses.fields(cls)})
        if unknown:
            raise ValueError(f"unknown fault field(s): {', '.join(unknown)}")
        body = fields.get("body", "")
        if not isinstance(body, str):
            fields["body"] = _json_text(body)
            fields["headers"] = {"Content-Type": _JSON, **(fields.get("headers") or {})}
        return cls(**fields)


def _json_text(body: object) -> str:
    """``body`` as JSON text, refused if it holds NaN or an infinity: ``json.dumps`` would write
    them as ``NaN`` and ``Infinity``, which are no JSON, and a fault must send what it says."""
    try:
        return json.dumps(body, allow_nan=False)
    except ValueError as error:
        if "Out of range float" not in str(error):
            raise  # a circular reference: json.dumps's own words say it
        raise ValueError("the body must be JSON: NaN and Infinity have no JSON form") from None


def answer_request_id(fault: Fault | None, request_id: str) -> str | None:
    """The ``X-Request-Id`` the answer to a request carries when ``fault`` applies to it:
    ``request_id`` (stamped on by the sandbox or the fake), the fault's own if its headers name
    one, or ``None`` if it cuts the connection before any answer."""
    if fault is None:
        return request_id
    if fault.disconnect == "before_response":
        return None
    own = header_value(fault.headers, REQUEST_ID_HEADER) if fault.status is not None else None
    return request_id if own is None else own


@dataclasses.dataclass
class _Rule:
    fault: Fault
    path: str | None
    remaining: int | None

    def matches(self, path: str) -> bool:
        if self.path is None:
            return True
        return path.startswith(self.path[:-1]) if self.path.endswith("*") else path == self.path


class FaultBook:
    """The faults waiting to happen, in the order they were added. Thread-safe."""

    def __init__(self) -> None:
        self._rules: list[_Rule] = []
        self._lock = threading.Lock()

    def add(self, fault: Fault, *, path: str | None = None, times: int | None = 1) -> None:
        """Apply ``fault`` to the next ``times`` requests (``None``: until cleared) to ``path``.

        ``path`` is a raw request path such as ``/payments``; one ending in ``*`` is a prefix
        (``/payment/*``); ``None`` means every API path. A verify path names its reference
        however it is percent-encoded: ``/payment/a%2fb`` and ``/payment/a%2Fb`` are one path.

        Args:
            fault: what goes wrong.
            path: the requests' path, a prefix ending in ``*``, or ``None`` for every API path.
            times: how many requests it applies to; ``None``: until cleared.

        Raises:
            TypeError: ``fault`` is not a ``Fault``.
            ValueError: a path not starting with ``/``, or ``times`` out of range.
        """
        if not isinstance(fault, Fault):
            hint = ": call it" if callable(fault) else ""
            raise TypeError(
                f"fault must be a Fault such as Fault.server_error(503), not {fault!r:.80}{hint}"
            )
        if path is not None and not (isinstance(path, str) and path.startswith("/")):
            raise ValueError("path must be None or start with '/'")
        if times is not None and (type(times) is not int or not 1 <= times <= MAX_TIMES):
            raise ValueError(f"times must be an integer from 1 to {MAX_TIMES} or None")
        if path is not None and not path.endswith("*"):
            path = fault_path(path)
        with self._lock:
            self._rules.append(_Rule(fault, path, times))

    def clear(self) -> None:
        """Forget every fault waiting to happen."""
        with self._lock:
            self._rules.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._rules)

    def take(self, path: str) -> Fault | None:
        """The fault for a request to raw ``path``, if any, counting it as used once.

        The sandbox and the in-memory fake both ask here, so a fault matches the same requests
        in both: a verify reference is compared as paysdk encodes it (``fault_path``).

        Args:
            path: the request's path, as received.

        Returns:
            The first fault that applies to it; ``None`` if none does.
        """
        with self._lock:
            if not self._rules:
                return None
            path = fault_path(path)
            for rule in self._rules:
                if rule.matches(path):
                    if rule.remaining is not None:
                        rule.remaining -= 1
                        if rule.remaining == 0:
                            self._rules.remove(rule)
                    return rule.fault
        return None


publish("paysdk.sandbox", Fault, FaultBook)

"""The sandbox's request log of API requests and connections, bounded whatever clients send; it
locks and hands out copies, as handler threads append while a test reads."""

from __future__ import annotations

import dataclasses
import threading
import time
from collections import deque
from collections.abc import Iterable, Mapping

from .._service.api import redacted

__all__ = [
    "MAX_RECORDED_CONNECTIONS",
    "MAX_RECORDED_HEADER",
    "MAX_RECORDED_HEADERS_SIZE",
    "MAX_RECORDED_REQUESTS",
    "MAX_RECORDED_TARGET",
    "RecordedRequest",
    "RequestLog",
]

MAX_RECORDED_REQUESTS = 10_000
"""How many requests the log keeps: past it, the oldest are dropped."""
MAX_RECORDED_CONNECTIONS = 10_000
"""How many connections ``Sandbox.connections`` keeps: past it, the oldest are dropped."""
MAX_RECORDED_HEADER = 1024
"""How many characters of each header name and value the log keeps: the rest is cut."""
MAX_RECORDED_HEADERS_SIZE = 8 * 1024
"""How many characters of headers, all told, the log keeps of one request; then no more of
them, so a full log holds at most about 100 MB whatever clients send (100 headers of 64 KiB
each are allowed in a request)."""
MAX_RECORDED_TARGET = 2048
"""How many characters of a request's target (and path) the log keeps."""


def recorded_headers(headers: Iterable[tuple[str, str]]) -> dict[str, str]:
    """What the log keeps of a request's headers: each cut, all within one budget."""
    kept: dict[str, str] = {}
    room = MAX_RECORDED_HEADERS_SIZE
    for name, value in headers:
        name = name[:MAX_RECORDED_HEADER]
        value = redacted(name, value[:MAX_RECORDED_HEADER])
        room -= len(name) + len(value)
        if room < 0:
            break
        kept[name] = value
    return kept


@dataclasses.dataclass(frozen=True)
class RecordedRequest:
    """One request to an API path, as the sandbox saw it. The Authorization value is redacted."""

    method: str
    """The request's method."""
    path: str
    """The raw path, still percent-encoded, without the query."""
    target: str
    """The raw request target: path and query."""
    headers: Mapping[str, str]
    """Each name and value cut to ``MAX_RECORDED_HEADER`` characters, and no more of them
    than fit in ``MAX_RECORDED_HEADERS_SIZE``."""
    time: float
    """When it arrived, as ``time.time()``."""
    request_id: str | None = None
    """The ``X-Request-Id`` of the answer, to compare with what a client reports; ``None`` when
    a fault cut the connection before answering."""
    client: tuple[str, int] | None = None
    """The ``(host, port)`` of the client end of the connection it came over, as
    ``Sandbox.connections`` lists it: which requests shared a connection. The sandbox always
    fills it; ``None`` only in a record built by hand."""


class RequestLog:
    """The requests a sandbox answered on API paths and the connections they came over, oldest
    first; each list bounded (``MAX_RECORDED_REQUESTS``, ``MAX_RECORDED_CONNECTIONS``)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._requests: deque[RecordedRequest] = deque(maxlen=MAX_RECORDED_REQUESTS)
        self._connection_log: deque[tuple[str, int]] = deque(maxlen=MAX_RECORDED_CONNECTIONS)

    def record(
        self,
        method: str,
        path: str,
        target: str,
        headers: Iterable[tuple[str, str]],
        *,
        request_id: str | None,
        client: tuple[str, int],
    ) -> None:
        """Keep what the log keeps of one request, stamped with the time now."""
        request = RecordedRequest(
            method,
            path[:MAX_RECORDED_TARGET],
            target[:MAX_RECORDED_TARGET],
            recorded_headers(headers),
            time.time(),
            request_id,
            client=client,
        )
        with self._lock:
            self._requests.append(request)

    def connected(self, client: tuple[str, int]) -> None:
        """Keep a connection taken on, by its client's ``(host, port)``."""
        with self._lock:
            self._connection_log.append(client)

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    @property
    def connections(self) -> list[tuple[str, int]]:
        with self._lock:
            return list(self._connection_log)

    def clear_requests(self) -> None:
        with self._lock:
            self._requests.clear()

    def clear(self) -> None:
        """Forget every request and every connection."""
        with self._lock:
            self._requests.clear()
            self._connection_log.clear()

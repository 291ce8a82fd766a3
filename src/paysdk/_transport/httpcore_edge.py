"""Where httpx's values meet httpcore's in paysdk's own transport (``_async/pool.py``): httpx's
request as httpcore's, httpcore's exceptions as httpx's, from public names alone, as httpx's own
transport makes them (``httpx/_transports/default.py``). Where sync and async differ, names
come in twins for ``scripts/unasync.py``'s rules (``AsyncBodyStream``, ``BodyStream``).
"""

from __future__ import annotations

from collections.abc import AsyncIterable, Iterable, MutableMapping
from typing import Any

import httpcore
import httpx

__all__ = [
    "HTTPCORE_TO_HTTPX",
    "AsyncBodyStream",
    "BodyStream",
    "core_request",
    "extensions_of",
    "httpx_error",
]

AsyncBodyStream = httpx.AsyncByteStream
"""What an async httpx request's and response's bodies are."""
BodyStream = httpx.SyncByteStream
"""The sync twin of ``AsyncBodyStream`` (``httpx.ByteStream``, which the rules would make of
``httpx.AsyncByteStream``, is a body already in memory)."""

HTTPCORE_TO_HTTPX: dict[type[Exception], type[httpx.TransportError]] = {
    httpcore.TimeoutException: httpx.TimeoutException,
    httpcore.ConnectTimeout: httpx.ConnectTimeout,
    httpcore.ReadTimeout: httpx.ReadTimeout,
    httpcore.WriteTimeout: httpx.WriteTimeout,
    httpcore.PoolTimeout: httpx.PoolTimeout,
    httpcore.NetworkError: httpx.NetworkError,
    httpcore.ConnectError: httpx.ConnectError,
    httpcore.ReadError: httpx.ReadError,
    httpcore.WriteError: httpx.WriteError,
    httpcore.ProxyError: httpx.ProxyError,
    httpcore.UnsupportedProtocol: httpx.UnsupportedProtocol,
    httpcore.ProtocolError: httpx.ProtocolError,
    httpcore.LocalProtocolError: httpx.LocalProtocolError,
    httpcore.RemoteProtocolError: httpx.RemoteProtocolError,
}
"""Each of httpcore's exceptions and httpx's of the same name, as httpx's own transport maps
them (its table is private to it)."""


def httpx_error(exc: Exception, request: httpx.Request | None) -> httpx.TransportError | None:
    """The httpx exception an httpcore one stands for, with httpcore's message: the most
    specific one (a ``ConnectTimeout`` is not merely a ``TimeoutException``). ``None`` for any
    other exception, which goes on as it was raised. ``request``: the httpx request it was
    sending, ``None`` for one sent as httpcore's only."""
    mapped: type[httpx.TransportError] | None = None
    for core, theirs in HTTPCORE_TO_HTTPX.items():
        if isinstance(exc, core) and (mapped is None or issubclass(theirs, mapped)):
            mapped = theirs
    return None if mapped is None else mapped(str(exc), request=request)


def core_request(
    request: httpx.Request, content: Iterable[bytes] | AsyncIterable[bytes]
) -> httpcore.Request:
    """httpx's request as httpcore's: the URL's raw parts, the raw headers, the body's stream
    and the extensions (the timeouts among them) as they are."""
    url = request.url
    return httpcore.Request(
        method=request.method,
        url=httpcore.URL(
            scheme=url.raw_scheme, host=url.raw_host, port=url.port, target=url.raw_path
        ),
        headers=request.headers.raw,
        content=content,
        extensions=request.extensions,
    )


def extensions_of(message: httpcore.Request | httpcore.Response) -> MutableMapping[str, Any]:
    """A request's or response's extensions, typed: httpcore's attribute is inferred, not
    declared, so strict checkers see it partly unknown."""
    return message.extensions  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]

"""Where httpx's values meet httpcore's in paysdk's own transport (``_async/pool.py``): httpx's
request as httpcore's, httpcore's exceptions as httpx's, from public names alone, as httpx's own
transport makes them (``httpx/_transports/default.py``). Where sync and async differ, names
come in twins for ``scripts/unasync.py``'s rules (``AsyncBodyStream``, ``BodyStream``)."""

from __future__ import annotations

from collections.abc import AsyncIterable, Iterable, MutableMapping
from typing import Any

import httpcore
import httpx

from .._core.config import blot_key, secret_key_in
from .._errors import ConfigurationError
from .tls import chain

__all__ = [
    "HTTPCORE_FILES",
    "HTTPCORE_TO_HTTPX",
    "AsyncBodyStream",
    "BodyStream",
    "check_unmocked",
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
    sending, ``None`` for one sent as httpcore's only.

    Raise it ``from error.__cause__``, which is ``exc`` or ``None``, not ``from exc``:
    httpcore's words quote what the server sent (h11's ``illegal header line: bytearray(...)``),
    which may echo the request's key, and an instrumentation's span records this error's message
    and the traceback of its chain: the key is blotted out of the message, and a cause that
    quotes it is left out of the traceback (still its ``__context__``, for what reads the chain:
    a refused connection, a TLS failure)."""
    mapped: type[httpx.TransportError] | None = None
    for core, theirs in HTTPCORE_TO_HTTPX.items():
        if isinstance(exc, core) and (mapped is None or issubclass(theirs, mapped)):
            mapped = theirs
    if mapped is None:
        return None
    key = "" if request is None else secret_key_in(request.headers)
    error = mapped(blot_key(str(exc), key), request=request)
    quotes_key = any(blot_key(str(cause), key) != str(cause) for cause in chain(exc))
    error.__cause__ = None if quotes_key else exc
    error.__suppress_context__ = True
    return error


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


_HTTPCORE_SENDS = (
    (httpcore.HTTPConnection, "handle_request"),
    (httpcore.AsyncHTTPConnection, "handle_async_request"),
)
"""httpcore's connections' sends, which a mock of httpx replaces while it runs (respx)."""
HTTPCORE_FILES = frozenset(kind.__init__.__code__.co_filename for kind, _ in _HTTPCORE_SENDS)
"""Where httpcore writes them, read from the constructors (which respx leaves alone)."""


def check_unmocked(origin: str, proxy: str) -> None:
    """Refuse to send through a proxy while a mock replaced httpcore's connections' send
    (respx, which ``paysdk.testing.MockPaymentAPI`` runs on): the mock reads a proxied
    request, a tunnel's ``CONNECT`` or a forwarded absolute target, as a URL it cannot parse,
    and answers none of them.

    Args:
        origin: where the request goes (``https://api.paysdk.test``).
        proxy: the proxy as a message names it (``Proxy.named``).

    Raises:
        ConfigurationError: a mock replaced either send; the message says what to do.
    """
    for kind, name in _HTTPCORE_SENDS:
        code = getattr(getattr(kind, name), "__code__", None)
        if code is None or code.co_filename not in HTTPCORE_FILES:
            raise ConfigurationError(
                f"this client sends its requests for {origin} through the proxy {proxy}, "
                "chosen when the client was made, and a mock of httpx (respx, which "
                "paysdk.testing.MockPaymentAPI runs on) cannot answer a request sent through a "
                "proxy: make the client while the mock runs, which names its host in NO_PROXY "
                "meanwhile, or name the host in NO_PROXY before making it (a client's own "
                "proxy= is used whatever NO_PROXY says)"
            )

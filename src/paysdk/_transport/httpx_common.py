"""What both httpx senders share: the request they build, how they read a body, and what an
httpx exception stands for. The edge where paysdk's own values meet httpx's."""

from __future__ import annotations

import functools
import re
import socket
from collections.abc import AsyncIterator, Iterator, Mapping
from http.cookiejar import CookieJar, DefaultCookiePolicy
from typing import Any, NamedTuple

import h11
import httpcore
import httpx

from .._core.config import Timeout
from .._core.steps import Failure, Send
from .._parsing.decoding import DecodingError, decoded
from .network import proxy_refused, timeout_failure
from .tls import chain, tls_failure

__all__ = [
    "BACKEND",
    "LIMITS",
    "MAX_CONNECTIONS",
    "HttpxDefaults",
    "RequestBuilder",
    "async_raw_body",
    "check_host",
    "failure_from_httpcore",
    "failure_from_httpx",
    "httpx_timeout",
    "own_client_options",
    "raw_body",
    "sync_body",
]

BACKEND = f"{httpx.__name__}/{httpx.__version__}"
"""How the User-Agent names this backend: ``httpx2/...`` where httpx2 stands in for httpx (an
application that called ``httpx2.alias_httpx()``)."""

LIMITS = httpx.Limits()
"""httpx's limits as ``httpx.Limits()`` makes them: its keep-alive expiry (5 s) is the pools'."""
MAX_CONNECTIONS = 100
"""The most connections a pool paysdk opens has at once, as a default ``httpx.Client``'s;
every idle one is kept too, until its keep-alive expires."""

HTTPX_FAILURES: tuple[type[Exception], ...] = (
    httpx.TransportError,  # connect, read, write, pool, proxy and protocol errors, timeouts
    httpx.DecodingError,
    DecodingError,  # paysdk's own bounded inflation
    OSError,  # ssl.SSLError among them
)
"""What an httpx client raises when the network or the service fails. Anything else is a bug, here
or in a library, and reaches the caller as raised: not retried, not called an outage."""


def failure_from_httpx(exc: Exception) -> Failure | None:
    """The ``Failure`` an exception from httpx stands for; ``None`` for one that is not in
    ``HTTPX_FAILURES``, which the sender lets through unchanged."""
    if not isinstance(exc, HTTPX_FAILURES):
        return None
    if isinstance(exc, httpx.TimeoutException):
        return timeout_failure(exc)
    if isinstance(exc, (httpx.DecodingError, DecodingError)):
        return Failure("undecodable", f"the body could not be decoded: {exc}", cause=exc)
    if (tls := tls_failure(exc)) is not None:
        return tls
    # httpcore words a refused CONNECT as its status and reason
    if isinstance(exc, httpx.ProxyError) and (status := re.match("([1-5][0-9][0-9]) ", str(exc))):
        return proxy_refused(int(status[1]), str(exc), exc)
    detail = str(exc) or _said_by_cause(exc) or type(exc).__name__
    if not isinstance(exc, httpx.HTTPError):
        detail = f"{type(exc).__name__}: {detail}"
    if any(isinstance(raised, h11.RemoteProtocolError) for raised in chain(exc)):
        return Failure("malformed", detail, cause=exc)  # h11 read what came: it is not HTTP
    return Failure("connect", detail, cause=exc)


def _said_by_cause(exc: BaseException) -> str:
    """What the first cause of ``exc`` with a message says: httpcore raises some without one
    (a reset in a tunnel's TLS handshake, through anyio)."""
    for cause in chain(exc):
        if cause is not exc and (text := str(cause)):
            return text
    return ""


def failure_from_httpcore(exc: Exception, sent: Send) -> Failure | None:
    """The ``Failure`` an exception met sending ``sent`` through httpcore stands for: an
    httpcore one read as the httpx one httpx's transport would raise for it (so its ``cause`` is
    the same, its ``request`` the method and URL, without the headers and their key), anything
    else as ``failure_from_httpx`` reads it; ``None`` for a bug."""
    from .httpcore_edge import httpx_error

    mapped = httpx_error(exc, None)
    if mapped is None:
        return failure_from_httpx(exc)
    mapped.request = httpx.Request(sent.method, sent.url)
    mapped.__cause__ = exc  # as ``raise mapped from exc`` chains them
    return failure_from_httpx(mapped)


_HOST_NAME = re.compile(r"[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*\.?")
"""A host name once IDNA-encoded: dot-separated labels of letters, digits, '-' and '_' (which
DNS names of services, Docker's and Kubernetes', carry), perhaps with the root's final dot."""
_NUMBERS = re.compile(r"(?:(?:0[xX][0-9A-Fa-f]*|[0-9]+)\.){0,3}(?:0[xX][0-9A-Fa-f]*|[0-9]+)\.?")
"""A host of one to four numbers, decimal or hexadecimal: an IPv4 address to the resolver
(``inet_aton``: ``127.1``, ``0x7f.1``, ``2130706433``), which aiohttp refuses."""
_DOTTED_QUAD = re.compile(
    r"(?:(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\.){3}"
    r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
)
"""An IPv4 address as every backend reads it alike: four decimal numbers, no final dot."""


def check_host(url: str) -> None:
    """Refuse ``url`` if httpx or the resolver would refuse its host: stray characters, bad IDNA.

    httpx decodes an ``xn--`` label strictly (IDNA 2008); httpx2 shows one it cannot decode as it
    is, so the standard library's codec (IDNA 2003) decodes each too, whichever httpx is installed.

    Raises:
        httpx.InvalidURL: httpx cannot parse ``url``.
        ValueError: its host is not a valid IDNA name (``UnicodeError`` and ``IDNAError`` are),
            or holds characters no host name has (a space, ``%``, punctuation).
    """
    parsed = httpx.URL(url)
    parsed.host.encode("idna")
    parsed.raw_host.decode("idna")
    name = parsed.raw_host.decode("ascii")  # an IPv6 address holds ':', checked by httpx
    if ":" not in name and _HOST_NAME.fullmatch(name) is None:
        raise ValueError(
            f"the host {parsed.host!r} has characters no host name has (spaces, '%', "
            "punctuation): it cannot be resolved"
        )
    if _NUMBERS.fullmatch(name) is not None and _DOTTED_QUAD.fullmatch(name) is None:
        raise ValueError(
            f"the host {parsed.host!r} is an IPv4 address in a short, hexadecimal or "
            "dotted-at-the-end form, which httpx connects to and aiohttp refuses: write it as "
            f"four decimal numbers{_read_as(name)}"
        )


def _read_as(numbers: str) -> str:
    """`` (ADDRESS)``: the address the resolver reads ``numbers`` as, if it reads one."""
    try:
        return f" ({socket.inet_ntoa(socket.inet_aton(numbers.rstrip('.')))})"
    except OSError:  # past the range of an address (0x1ffffffff)
        return ""


def tls_name(scheme: bytes, host: bytes) -> str | None:
    """The name an ``https`` host's certificate is checked against (and sent as SNI) where it is
    not the host as written: a name with the root's final dot (``api.example.com.``), which no
    certificate names, without it, as curl, browsers and aiohttp check it; else ``None``."""
    if scheme == b"https" and host.endswith(b".") and len(host) > 1:
        return host[:-1].decode("ascii")
    return None


def httpx_timeout(timeout: Timeout) -> httpx.Timeout:
    """paysdk's timeout as httpx's: a new one each time, since an ``httpx.Timeout`` can be
    changed by whoever holds it."""
    return httpx.Timeout(**timeout._asdict())


def sync_body(response: httpx.Response) -> Iterator[bytes]:
    """The decoded body, inflated in bounded steps as it arrives (for streams)."""
    return decoded(*raw_body(response))


def body_source(response: httpx.Response) -> tuple[str | None, bytes | None]:
    """The body's Content-Encoding, or the body itself (decoded, whole) if a transport or event
    hook read it already, as httpx's ``MockTransport`` does."""
    if response.is_stream_consumed:
        return None, response.content
    return response.headers.get("content-encoding"), None


def raw_body(response: httpx.Response) -> tuple[str | None, Iterator[bytes]]:
    """The body's Content-Encoding and its raw chunks as they arrive."""
    encoding, read = body_source(response)
    return encoding, iter((read,)) if read is not None else response.iter_raw()


def async_raw_body(response: httpx.Response) -> tuple[str | None, AsyncIterator[bytes]]:
    """The async twin of ``raw_body``."""
    encoding, read = body_source(response)
    return encoding, _once(read) if read is not None else response.aiter_raw()


async def _once(content: bytes) -> AsyncIterator[bytes]:
    yield content


class URLParts(NamedTuple):
    """What httpx makes of a URL for its transport: scheme, host, port, ``Host`` header value
    and request target, raw."""

    scheme: bytes
    host: bytes
    port: int | None
    netloc: bytes
    target: bytes


_ENCODED_SEGMENT = re.compile(r"(?:[A-Za-z0-9._~-]|%[0-9A-Fa-f]{2})+")
"""A path segment httpx sends as it is: unreserved characters and percent escapes."""


def url_parts(url: str) -> URLParts:
    """``url`` as httpx parses it for its transport."""
    parsed = httpx.URL(url)
    return URLParts(parsed.raw_scheme, parsed.raw_host, parsed.port, parsed.netloc, parsed.raw_path)


_base_parts = functools.lru_cache(maxsize=64)(url_parts)


def core_url(url: str) -> URLParts:
    """``url_parts(url)``, the client's base URL parsed once: a request's URL is the base URL plus a
    path whose last segment (the reference) the core percent-encoded, which httpx leaves as is."""
    head, _, last = url.rpartition("/")
    if "://" in head and last not in (".", "..") and _ENCODED_SEGMENT.fullmatch(last):
        parent = _base_parts(head + "/")
        return parent._replace(target=parent.target + last.encode("ascii"))
    return url_parts(url)


class HttpxDefaults(NamedTuple):
    """What the ``httpx`` client paysdk makes is built with, and so sends on every request."""

    headers: Mapping[str, str]
    timeout: Timeout


def own_client_options(defaults: HttpxDefaults) -> dict[str, Any]:
    """The options of the httpx clients paysdk makes, but their transport. They keep no cookie:
    the API takes none, and a client ``with_options`` shares between merchant accounts must not
    send one account's cookies with another's requests. The transport follows the
    environment's proxies itself."""
    return {
        "headers": defaults.headers,
        "timeout": httpx_timeout(defaults.timeout),
        "trust_env": False,
        "cookies": CookieJar(DefaultCookiePolicy(allowed_domains=[])),
    }


class RequestBuilder:
    """The ``httpx.Request`` for a ``Send``, or the ``httpcore.Request`` its client would hand
    its transport (``core``). httpx spends microseconds per request on each header and timeout
    given, so paysdk's own client is given the config's fixed ones once (``defaults``) and a
    request carries little more than ``Authorization``; the last headers are kept, as every call
    without per-call options has the same ones."""

    __slots__ = ("_headers", "_last", "_merged", "_timeout")

    def __init__(self, defaults: HttpxDefaults | None) -> None:
        headers: Mapping[str, str] = defaults.headers if defaults else {}
        self._headers = {k.lower(): v for k, v in headers.items()}
        self._timeout = defaults.timeout if defaults else None
        self._last: tuple[Mapping[str, str] | None, Mapping[str, str]] = (None, {})
        self._merged: tuple[Mapping[str, str] | None, httpx.Headers] = (None, httpx.Headers())

    def build(
        self,
        http: httpx.Client | httpx.AsyncClient,
        request: Send,
        extensions: dict[str, Any] | None = None,
    ) -> httpx.Request:
        """The request for ``request``; ``extensions``: httpcore's request extensions, which
        also narrows each phase's timeout to the attempt's budget (for a merchant's client,
        whose sockets paysdk does not bound itself)."""
        timeout = request.timeout
        if extensions is not None and (budget := request.budget) is not None:
            timeout = Timeout(
                *(budget if limit is None or limit > budget else limit for limit in timeout)
            )
        scheme, host, *_ = core_url(request.url)
        if (name := tls_name(scheme, host)) is not None:
            extensions = {**(extensions or {}), "sni_hostname": name}
        return http.build_request(
            request.method,
            request.url,
            headers=self._trim(request.headers.open()),
            timeout=httpx.USE_CLIENT_DEFAULT
            if timeout == self._timeout
            else httpx_timeout(timeout),
            extensions=extensions,
        )

    def core(self, http: httpx.Client | httpx.AsyncClient, request: Send) -> httpcore.Request:
        """The request ``http`` would hand its transport for ``request``, built without httpx's
        request and client machinery: the same URL, headers in the same order (``http``'s
        defaults merged with the request's, ``Host`` first) and timeouts.

        Args:
            http: the client whose default headers are sent (one paysdk made, with no cookies,
                auth or event hooks of its own).
            request: the step to send.

        Returns:
            httpcore's request, bodiless like every request paysdk sends.
        """
        scheme, host, port, netloc, target = core_url(request.url)
        headers = self._merge(http, self._trim(request.headers.open()))
        auto: list[tuple[bytes, bytes]] = []
        if "host" not in headers and host:
            auto.append((b"Host", netloc))
        if request.method in ("POST", "PUT", "PATCH") and "content-length" not in headers:
            auto.append((b"Content-Length", b"0"))  # as httpx marks an empty body
        extensions: dict[str, Any] = {"timeout": request.timeout._asdict()}  # httpx's keys
        if (name := tls_name(scheme, host)) is not None:
            extensions["sni_hostname"] = name
        return httpcore.Request(
            request.method,
            httpcore.URL(scheme=scheme, host=host, port=port, target=target),
            headers=[*auto, *headers.raw] if auto else headers.raw,
            extensions=extensions,
        )

    def _merge(
        self, http: httpx.Client | httpx.AsyncClient, kept: Mapping[str, str]
    ) -> httpx.Headers:
        """``http``'s headers updated with ``kept``, as httpx merges a request's; the last kept."""
        last_in, last_out = self._merged
        if kept is last_in:
            return last_out
        merged = httpx.Headers(http.headers)
        merged.update(kept)
        self._merged = (kept, merged)
        return merged

    def _trim(self, headers: Mapping[str, str]) -> Mapping[str, str]:
        last_in, last_out = self._last  # one tuple, read and written whole: safe across threads
        if headers is last_in:
            return last_out
        kept = httpx.Headers(  # still an httpx.Headers: the key stays masked in any repr
            [(k, v) for k, v in headers.items() if self._headers.get(k.lower()) != v]
        )
        self._last = (headers, kept)
        return kept

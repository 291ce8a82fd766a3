"""The aiohttp sender: ``AsyncClient(http_backend="aiohttp")``, for throughput under concurrency.

The core's steps, bodies through its ``BodyReader`` (caps), each attempt within its budget, every
network or service failure a ``Failure`` (else a bug, raised as is). Imported only when asked
for; needs the ``aiohttp`` extra."""

from __future__ import annotations

import asyncio
import functools
import math
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

import httpx
from anyio import move_on_after

from .._core.body import BodyReader, attempt_timed_out
from .._core.config import SecretHeaders, masked
from .._core.steps import Answer, Failure, Opened, Send
from .._errors import ConfigurationError
from .._errors.connection import closed_error
from .._parsing.decoding import DecodingError, async_decoded
from .async_streams import AsyncStream, LoopBinding, running_loop
from .forks import PerProcess
from .network import Network, Proxy, proxy_refused, through_proxy, timeout_failure
from .tls import chain, tls_failure

if TYPE_CHECKING:  # for the checkers, always bound; at run time, only with the extra
    import aiohttp
    import yarl
    from aiohttp.http import HttpProcessingError

try:
    import aiohttp
    import yarl
    from aiohttp.http import HttpProcessingError
except ImportError:  # exercised by a test that hides aiohttp
    _installed = False
else:
    _installed = True
    FAILURES: tuple[type[BaseException], ...] = (
        aiohttp.ClientError,  # connection, proxy, TLS, payload and protocol errors
        asyncio.TimeoutError,
        TimeoutError,
        OSError,
        DecodingError,  # paysdk's own bounded inflation
    )
    """What aiohttp raises when the network or the service fails; anything else is a bug."""

__all__ = ["AiohttpSender", "backend"]

EXTRA_HINT = "http_backend='aiohttp' needs aiohttp: pip install 'python-paysdk[aiohttp]'"


def backend() -> str:
    """How the User-Agent names this backend; ``ConfigurationError`` without the extra, or with
    an aiohttp whose internals paysdk relies on have changed."""
    if not _installed:
        raise ConfigurationError(EXTRA_HINT)
    if "_retry_connection" not in getattr(aiohttp.ClientSession, "ATTRS", ()):
        raise ConfigurationError(
            f"aiohttp {aiohttp.__version__} has no ClientSession._retry_connection, which paysdk "
            "turns off so that aiohttp does not resend requests behind paysdk's retry policy; "
            "install an aiohttp paysdk supports: pip install 'python-paysdk[aiohttp]'"
        )
    return f"aiohttp/{aiohttp.__version__}"


def _failure(exc: BaseException) -> Failure | None:
    """The ``Failure`` an aiohttp exception stands for; ``None`` for a bug."""
    if not isinstance(exc, FAILURES):
        return None
    # forget where aiohttp raised: its frames hold its own copy of the request headers, key
    # included, which a traceback printed with local variables (Sentry, rich) would show; and
    # mask that copy where an error keeps it: its request_info, which its repr shows, and its
    # args, which aiohttp sets to (request_info, history) and a logger of a chain may write out
    for raised in chain(exc):
        raised.__traceback__ = None
        if isinstance(raised, aiohttp.ClientResponseError):
            raised.request_info = _masked(raised.request_info)
            raised.args = (raised.request_info, *raised.args[1:])
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError)):
        return timeout_failure(exc)
    if (tls := tls_failure(exc)) is not None:
        return tls
    if isinstance(exc, aiohttp.ClientHttpProxyError):
        return proxy_refused(exc.status, f"{exc.status} {exc.message}", exc)
    if (malformed := _malformed(exc)) is not None:
        return Failure("malformed", malformed, cause=exc)
    detail = str(exc) or type(exc).__name__
    return Failure("connect", f"{type(exc).__name__}: {detail}", cause=exc)


def _malformed(exc: BaseException) -> str | None:
    """aiohttp's words for the answer its parser refused, if that is what ``exc`` is: on one
    line as h11's are, without the caret under the bad byte, nor the status 400 its error
    carries (the code a server would send back, which reads like the service's answer)."""
    for raised in chain(exc):
        if isinstance(raised, HttpProcessingError):
            lines = (line.strip() for line in raised.message.splitlines())
            return " ".join(line for line in lines if line.strip("^ ")).rstrip(".")
    return None


def _masked(info: aiohttp.RequestInfo) -> aiohttp.RequestInfo:
    """``info`` with the values of its secret headers (the key, a proxy's credentials) masked."""
    headers = info.headers.copy()  # aiohttp's own mutable kind: multidict is not ours to import
    for name in set(headers):
        if (shown := masked(name, "")) != "":
            headers[name] = shown
    return info._replace(headers=type(info.headers)(headers))


def _no_final_answer(status: int) -> Failure:
    """A status no final answer has, as the httpx backend meets it (h11 refuses both): an
    answer that is not HTTP, a connection error, retried, not an ``APIError`` of status 101."""
    return Failure("malformed", f"status {status:03d}, which no final HTTP answer has")


def _headers(response: aiohttp.ClientResponse) -> Mapping[str, str]:
    """The answer's headers as the httpx backend holds them (``httpx.Headers``), read from the
    bytes sent: a repeated field's values joined by ", " as RFC 9110 combines them, where
    aiohttp's ``get`` gives the first alone (``Retry-After: 1`` then ``Retry-After: 30`` would
    be obeyed here and ignored as malformed there), and bytes that are not UTF-8 read as
    Latin-1, where aiohttp keeps them as lone surrogates no UTF-8 log can write. A mapping of
    their own, too: aiohttp's read-only view cannot be pickled or copied, and an ``APIError``
    that holds them must be (a task queue sends it back from a worker process)."""
    return httpx.Headers(list(response.raw_headers))


def _stream(
    response: aiohttp.ClientResponse,
    closed: Callable[[], bool],
    reading: set[aiohttp.ClientResponse],
) -> AsyncStream:
    """A successful answer left open for ``iter_payments``, read as the httpx backend reads one;
    in ``reading`` (the sender's answers being read) until it is closed."""
    reading.add(response)

    async def close() -> None:
        reading.discard(response)
        response.close()

    opened = Opened(response.status, _headers(response))
    pieces = async_decoded(opened.headers.get("Content-Encoding"), response.content.iter_any())
    return AsyncStream(opened, pieces, close, closed, _failure)


class AiohttpSender:
    """Sends with one ``aiohttp.ClientSession`` per process, opened on first use in the
    running loop, through the client's TLS context and proxy."""

    def __init__(self, network: Network) -> None:
        """
        Args:
            network: the TLS context and the proxy (or the environment's) to use.
        """
        backend()  # refuses an aiohttp it cannot work with, before any request
        self.binding = LoopBinding()
        self._network = network
        self._sessions = PerProcess(self._open)
        self._closed = False
        self._reading = PerProcess(set[aiohttp.ClientResponse])
        """The answers whose bodies are being read, which ``close`` ends (``_end_reads``)."""

    @property
    def is_closed(self) -> bool:
        return self._closed

    def _open(self) -> aiohttp.ClientSession:
        session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=100),  # TLS: each request's own (_send)
            cookie_jar=aiohttp.DummyCookieJar(),  # an API client keeps no cookies
            auto_decompress=False,  # paysdk inflates in bounded steps (_parsing/decoding)
            trust_env=False,  # the proxy is paysdk's choice (Network): looked up once, not per call
        )
        # aiohttp quietly resends a request whose kept-alive connection dropped; paysdk's policy
        # decides every retry, the same for both backends (backend() checked the attribute)
        session._retry_connection = False
        return session

    async def send(self, request: Send) -> Answer | Failure | AsyncStream:
        """Carry out ``request`` within its budget: one cancel scope, as the httpx backend's (a
        stream's bounds the wait for its head only). Not aiohttp's ``total``, whose timer's
        context, entered twice per request, takes back the caller's own cancellation too when
        it comes as the timer fires (``asyncio.timeout``, ``wait_for`` of about the budget):
        the call would go on to retry, past the caller's timeout."""
        if running_loop() is None:  # else aiohttp's "no running event loop", from deep inside
            raise ConfigurationError(
                'http_backend="aiohttp" runs only under asyncio, and no asyncio event loop runs '
                'this call (under trio?): use the default http_backend="httpx", which runs under '
                "trio as well"
            )
        with move_on_after(request.budget):  # only its own cancel scope is a timeout
            return await self._send(request)
        return through_proxy(attempt_timed_out(request.budget), request, self._network)

    async def _send(self, request: Send) -> Answer | Failure | AsyncStream:
        session = self._sessions.get()
        url = yarl.URL(request.url, encoded=True)  # sent as the core encoded it, byte for byte
        if url.raw_host is not None and not url.raw_host.isascii():
            url = url.with_host(url.raw_host)  # IDNA, as httpx sends it: Host, CONNECT, NO_PROXY
        proxy = self._network.proxy_for(url.scheme, url.raw_host or "", url.port)
        tls = url.scheme == "https" or (proxy is not None and proxy.url.startswith("https:"))
        headers, proxy_headers = _headers_for(request, url, proxy)
        started = time.monotonic()
        try:
            response = await session.request(
                request.method,
                url,
                headers=headers,
                allow_redirects=False,  # as httpx: a redirect is an answer, not followed
                ssl=self._network.ssl_context if tls else True,  # made when TLS first needs it
                proxy=None if proxy is None else proxy.url,
                proxy_headers=proxy_headers,
                timeout=_client_timeout(request),
            )
        except Exception as exc:
            if (failure := self._failure(exc)) is None:
                raise
            return through_proxy(failure, request, self._network)
        if response.status < 200:  # aiohttp hands on a 101, or a status line's 000, as final
            response.close()  # the connection speaks another protocol now, if any: not reused
            return through_proxy(_no_final_answer(response.status), request, self._network)
        if request.opens(response.status):
            return _stream(response, lambda: self._closed, self._reading.get())
        reading = self._reading.get()
        reading.add(response)
        try:
            return through_proxy(await _read(request, response, started), request, self._network)
        except Exception as exc:
            if (failure := self._failure(exc)) is None:
                raise
            return failure
        finally:
            reading.discard(response)
            response.release()

    def _failure(self, exc: Exception) -> Failure | None:
        """What ``exc`` stands for; ``None`` for a bug, which the caller re-raises."""
        if self._closed:  # closed by another task while this one waited or sent
            raise closed_error("AsyncClient") from None
        return _failure(exc)

    async def close(self) -> None:
        self._closed = True
        session = self._sessions.reset()
        if session is not None:

            async def end() -> None:
                self._end_reads()
                await session.close()

            await self.binding.close(end)

    def _end_reads(self) -> None:
        """Fail the reads of the bodies under way, in the loop they run in: aiohttp's session,
        closing their connections, forgets to wake them, so each would wait out its budget."""
        for response in self._reading.reset() or ():
            response.content.set_exception(aiohttp.ClientConnectionError("the client was closed"))


def _client_timeout(request: Send) -> aiohttp.ClientTimeout:
    """The attempt's bounds as aiohttp takes them: connect and read, no ``total`` (the sender's
    cancel scope bounds the attempt by its budget; a stream's Read steps bound its body)."""
    phases = request.timeout
    budget = None if request.stream else request.budget
    read = phases.read
    if read is not None and budget is not None and read >= budget:
        # the budget ends the attempt before a read can have waited this long: a read timer
        # (rescheduled with every chunk received) would only cost time
        read = None
    return _timeouts(None, phases.connect, read)


@functools.lru_cache(maxsize=32)  # the client's few timeouts; a deadline's budgets vary, though
def _timeouts(
    total: float | None, connect: float | None, read: float | None
) -> aiohttp.ClientTimeout:
    # exact bounds: aiohttp rounds a total of 5 s or more up to the next whole second unless told
    return aiohttp.ClientTimeout(
        total=total, sock_connect=connect, sock_read=read, ceil_threshold=math.inf
    )


def _headers_for(
    request: Send, url: yarl.URL, proxy: Proxy | None
) -> tuple[Mapping[str, str], dict[str, str] | None]:
    """The request's headers (the config's ``SecretHeaders``: the key masked in a repr) and the
    proxy's credentials as ``proxy_headers`` (aiohttp's ``proxy_auth`` is deprecated); those go
    in the request's own too for a plain ``http://`` request the proxy forwards: aiohttp sends
    ``proxy_headers`` with a tunnel's ``CONNECT`` only."""
    authorization = proxy.authorization if proxy is not None else None
    if authorization is None:
        return request.headers.open(), None
    credentials = {"Proxy-Authorization": authorization}
    if url.scheme != "http":
        return request.headers.open(), credentials
    return SecretHeaders({**request.headers.open(), **credentials}), credentials


async def _read(
    request: Send, response: aiohttp.ClientResponse, started: float
) -> Answer | Failure:
    headers = _headers(response)
    encoding = headers.get("Content-Encoding")
    reader = BodyReader(request, response.status, headers, started, encoding=encoding)
    length = response.content_length
    if encoding is None and length is not None and length <= reader.limit:
        return reader.take(await response.read()) or reader.finish()  # one read: the common case
    async for raw in response.content.iter_any():
        if (done := reader.take(raw)) is not None:
            return done
    return reader.finish()

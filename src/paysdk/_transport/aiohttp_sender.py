"""The aiohttp sender: ``AsyncClient(http_backend="aiohttp")``, for throughput under concurrency.

A second shell around the same core: it carries out the same :class:`Send` and :class:`Read`
steps, gathers bodies through the same :class:`BodyReader` (so the same size caps apply), bounds
each attempt by its budget, and reports every failure as a :class:`Failure`. Retries, errors and
parsing are the core's, unchanged. Imported only when asked for; needs the ``aiohttp`` extra.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from .._core.body import BodyReader, attempt_timed_out
from .._core.steps import Answer, Failure, Opened, Send
from .._errors import ConfigurationError
from .._parsing.decoding import adecoded
from .async_streams import AsyncStream

if TYPE_CHECKING:  # for the checkers, always bound; at run time, only with the extra
    import aiohttp
    import yarl

try:
    import aiohttp
    import yarl
except ImportError:  # exercised by a test that hides aiohttp
    _installed = False
else:
    _installed = True

__all__ = ["AiohttpSender"]

EXTRA_HINT = "http_backend='aiohttp' needs aiohttp: pip install 'python-paysdk[aiohttp]'"


def _failure(exc: BaseException) -> Failure:
    _drop_frames(exc)
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError)):
        return Failure("timeout", f"no answer within the timeout ({type(exc).__name__})", cause=exc)
    detail = str(exc) or type(exc).__name__
    return Failure("connect", f"{type(exc).__name__}: {detail}", cause=exc)


def _drop_frames(exc: BaseException | None) -> None:
    """Forget where aiohttp raised: its frames hold its own copy of the request headers, key
    included, which a traceback printed with local variables (Sentry, rich) would show."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        exc.__traceback__ = None
        exc = exc.__cause__ or exc.__context__


def _stream(response: aiohttp.ClientResponse, closed: Callable[[], bool]) -> AsyncStream:
    """A successful answer left open for ``iter_payments``, read as the httpx backend reads one."""
    encoding = response.headers.get("Content-Encoding")

    async def close() -> None:
        response.close()

    opened = Opened(response.status, response.headers)
    pieces = adecoded(encoding, response.content.iter_any())
    return AsyncStream(opened, pieces, close, closed, _failure)


class AiohttpSender:
    """Sends with one ``aiohttp.ClientSession``, opened on first use in the running loop."""

    def __init__(self, base_url: str) -> None:
        if not _installed:
            raise ConfigurationError(EXTRA_HINT)
        self.loop: asyncio.AbstractEventLoop | None = None
        self._session: aiohttp.ClientSession | None = None
        self._closed = False
        self._proxy, self._proxy_auth = _env_proxy(base_url)

    @property
    def is_closed(self) -> bool:
        return self._closed

    def _open(self) -> aiohttp.ClientSession:
        session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=100),
            cookie_jar=aiohttp.DummyCookieJar(),  # an API client keeps no cookies
            auto_decompress=False,  # paysdk inflates in bounded steps (_parsing/decoding)
        )
        # aiohttp quietly resends a request whose kept-alive connection was dropped; paysdk's
        # own policy decides every retry, so both backends make the same attempts
        if hasattr(session, "_retry_connection"):
            session._retry_connection = False
        self._session = session
        return session

    async def send(self, request: Send) -> Answer | Failure | AsyncStream:
        from anyio import move_on_after

        if not request.stream:  # aiohttp's total timeout bounds the whole attempt
            return await self._send(request)
        with move_on_after(request.budget):  # a stream: bound the wait for its head only
            return await self._send(request)
        return attempt_timed_out(request.budget)

    async def _send(self, request: Send) -> Answer | Failure | AsyncStream:
        session = self._session or self._open()
        timeout = request.timeout
        started = time.monotonic()
        try:
            response = await session.request(
                request.method,
                yarl.URL(request.url, encoded=True),  # sent as the core encoded it, byte for byte
                headers=request.headers,  # the config's SecretHeaders: the key masked
                allow_redirects=False,  # as httpx: a redirect is an answer, not followed
                proxy=self._proxy,
                proxy_auth=self._proxy_auth,
                timeout=aiohttp.ClientTimeout(
                    total=None if request.stream else request.budget,  # Read steps bound a stream
                    sock_connect=timeout.connect,
                    sock_read=timeout.read,
                ),
            )
        except Exception as exc:
            return _failure(exc)
        if request.opens(response.status):
            return _stream(response, lambda: self._closed)
        try:
            return await _read(request, response, started)
        except Exception as exc:
            return _failure(exc)
        finally:
            response.release()

    async def close(self) -> None:
        self._closed = True
        if self._session is not None:
            await self._session.close()


def _env_proxy(base_url: str) -> tuple[yarl.URL | None, aiohttp.BasicAuth | None]:
    """The proxy the environment names for the service (HTTPS_PROXY, NO_PROXY...), as httpx
    reads it. Looked up once: aiohttp's own ``trust_env`` does it (and reads ~/.netrc) in a
    worker thread on every request, which cost more than the request itself."""
    from aiohttp.helpers import get_env_proxy_for_url

    try:
        return get_env_proxy_for_url(yarl.URL(base_url))
    except LookupError:
        return None, None


async def _read(
    request: Send, response: aiohttp.ClientResponse, started: float
) -> Answer | Failure:
    encoding = response.headers.get("Content-Encoding")
    reader = BodyReader(request, response.status, response.headers, started, encoding=encoding)
    length = response.content_length
    if encoding is None and length is not None and length <= reader.limit:
        return reader.take(await response.read()) or reader.finish()  # one read: the common case
    async for raw in response.content.iter_any():
        if (done := reader.take(raw)) is not None:
            return done
    return reader.finish()

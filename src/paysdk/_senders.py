"""The sync httpx sender: carry out a :class:`Send` or :class:`Read` step, report what came of it.

Bodies are streamed through :class:`BodyReader`, so no answer is read past its cap, and each
attempt is bounded as a whole: the sync sender by socket deadlines (``_deadline``) and a check
per chunk, the async one by a cancel scope. Whatever goes wrong below becomes a
:class:`Failure`: no httpx, OS or runtime exception reaches the caller.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from typing import NamedTuple

import httpx

from ._deadline import attempt_deadline, bound_sockets
from ._decoding import decoded
from ._errors import ClientClosedError
from ._steps import (
    Answer,
    BodyReader,
    Failure,
    Opened,
    Read,
    Send,
    failure_from_httpx,
    read_timed_out,
    stream_failure,
)

__all__ = [
    "HttpxDefaults",
    "RequestBuilder",
    "SyncHttpxSender",
    "SyncStream",
    "body_source",
    "closed_error",
]


def closed_error(what: str) -> ClientClosedError:
    return ClientClosedError(
        f"this {what} is closed (or the client it was copied from is); make a new one"
    )


def _deadline_of(budget: float | None, started: float) -> float | None:
    return None if budget is None else started + budget


def sync_body(response: httpx.Response) -> Iterator[bytes]:
    """The decoded body, inflated in bounded steps as it arrives (for streams)."""
    encoding, chunks = raw_body(response)
    return decoded(encoding, chunks)


def body_source(response: httpx.Response) -> tuple[str | None, bytes | None]:
    """The body's Content-Encoding, or the body itself if it was read already.

    A transport or event hook may have read the body already (httpx's ``MockTransport`` does);
    then its bytes are decoded and whole: no encoding, one chunk. Both shells read through this.
    """
    if response.is_stream_consumed:
        return None, response.content
    return response.headers.get("content-encoding"), None


def raw_body(response: httpx.Response) -> tuple[str | None, Iterator[bytes]]:
    """The body's Content-Encoding and its raw chunks as they arrive."""
    encoding, read = body_source(response)
    return encoding, iter((read,)) if read is not None else response.iter_raw()


class HttpxDefaults(NamedTuple):
    """What the ``httpx`` client paysdk makes is built with, and so sends on every request."""

    headers: Mapping[str, str]
    timeout: httpx.Timeout


class RequestBuilder:
    """The ``httpx.Request`` for a :class:`Send`, less what its client sends by default anyway.

    httpx spends microseconds on every header it is given and on every timeout (it builds a new
    ``Timeout`` from it), per request. The client paysdk makes is given the config's fixed
    headers and timeout once (``defaults``); then a request carries little more than
    ``Authorization``. The last headers are kept, since every call without per-call options
    has the same ones.
    """

    __slots__ = ("_headers", "_last", "_timeout")

    def __init__(self, defaults: HttpxDefaults | None) -> None:
        headers: Mapping[str, str] = defaults.headers if defaults else {}
        self._headers = {k.lower(): v for k, v in headers.items()}
        self._timeout = defaults.timeout if defaults else None
        self._last: tuple[Mapping[str, str] | None, Mapping[str, str]] = (None, {})

    def build(self, http: httpx.Client | httpx.AsyncClient, request: Send) -> httpx.Request:
        timeout = request.timeout
        return http.build_request(
            request.method,
            request.url,
            headers=self._trim(request.headers),
            timeout=httpx.USE_CLIENT_DEFAULT if timeout is self._timeout else timeout,
        )

    def _trim(self, headers: Mapping[str, str]) -> Mapping[str, str]:
        last_in, last_out = self._last  # one tuple, read and written whole: safe across threads
        if headers is last_in:
            return last_out
        kept = httpx.Headers(  # still an httpx.Headers: the key stays masked in any repr
            [(k, v) for k, v in headers.items() if self._headers.get(k.lower()) != v]
        )
        self._last = (headers, kept)
        return kept


class SyncStream:
    """A successful answer left open for ``iter_payments``: one chunk per :class:`Read`."""

    def __init__(self, response: httpx.Response, closed: Callable[[], bool]) -> None:
        self.opened = Opened(response.status_code, response.headers)
        self._response = response
        self._chunks = sync_body(response)
        self._closed = closed

    def read(self, step: Read) -> bytes | Failure:
        deadline = _deadline_of(step.budget, time.monotonic())
        try:
            with attempt_deadline(deadline):  # sockets of paysdk's own client; else the clock:
                for piece in self._chunks:
                    if piece:
                        return piece
                    if deadline is not None and time.monotonic() > deadline:
                        return read_timed_out(step.budget)
                return b""
        except Exception as exc:
            if self._closed():  # the client was closed under the iteration
                raise closed_error("Client") from None
            return stream_failure(self.opened, exc)

    def close(self) -> None:
        self._response.close()


class SyncHttpxSender:
    """Sends with an ``httpx.Client``; the one paysdk makes has deadline-bound sockets."""

    def __init__(self, http: httpx.Client, *, defaults: HttpxDefaults | None = None) -> None:
        """``defaults``: what ``http`` (made by paysdk) was made with; ``None`` for a client the
        merchant gave, whose sockets, headers and timeout paysdk leaves as they are."""
        self.http = http
        self._requests = RequestBuilder(defaults)
        if defaults is not None:
            bound_sockets(http)

    @property
    def is_closed(self) -> bool:
        return self.http.is_closed

    def send(self, request: Send) -> Answer | Failure | SyncStream:
        started = time.monotonic()
        deadline = _deadline_of(request.budget, started)
        with attempt_deadline(deadline):
            try:
                response = self.http.send(self._requests.build(self.http, request), stream=True)
            except Exception as exc:
                return self._failure(exc)
            if request.opens(response.status_code):
                return SyncStream(response, lambda: self.http.is_closed)
            encoding, chunks = raw_body(response)
            reader = BodyReader(
                request, response.status_code, response.headers, started, encoding=encoding
            )
            try:
                for raw in chunks:
                    if (done := reader.take(raw)) is not None:
                        return done
                return reader.finish()
            except Exception as exc:
                return self._failure(exc)
            finally:
                response.close()

    def _failure(self, exc: Exception) -> Failure:
        if self.http.is_closed:  # closed by another thread while this one waited or sent
            raise closed_error("Client") from None
        return failure_from_httpx(exc)

    def close(self) -> None:
        self.http.close()

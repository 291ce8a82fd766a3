"""The sync httpx sender: bodies through ``BodyReader`` (never read past its cap), each attempt
bounded whole: on paysdk's own client by socket deadlines (``deadline``), on a merchant's by the
``watchdog`` shutting its socket (``borrowed`` finds it), on both by a check per chunk. A network
or service failure becomes a ``Failure``; any other exception is a bug, raised as is.

paysdk's own client has no auth, redirects, cookies or hooks, so its untraced attempts go to its
pools (``Routes``) as httpcore's request, past httpx's machinery, as the async sender's do;
not while something replaced ``httpx.Client.send`` (a tracer: ``httpx_tracing.sends_past``)."""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable

import httpx

from .._core.steps import Answer, Failure, Opened, Send
from .._errors.connection import closed_error
from . import httpx_tracing, watchdog
from ._sync.answers import read_answer, send_core
from ._sync.pool import PoolTransport, Routes
from .borrowed import AttemptTrace, IdleSockets, socket_of
from .deadline import attempt_deadline, deadline_backend
from .httpx_common import (
    HttpxDefaults,
    RequestBuilder,
    failure_from_httpcore,
    failure_from_httpx,
    own_client_options,
    sync_body,
)
from .network import Network, through_proxy
from .streams import Stream, deadline_passed

__all__ = ["SyncHttpxSender", "own_sender"]


def own_sender(network: Network, defaults: HttpxDefaults) -> SyncHttpxSender:
    """The sender on an ``httpx.Client`` of paysdk's own: its pools open deadline-bound sockets
    through ``network``, and it sends ``defaults`` itself rather than per request."""
    transport = PoolTransport(network, network_backend=deadline_backend())
    http = httpx.Client(transport=transport, **own_client_options(defaults))
    return SyncHttpxSender(http, defaults=defaults, routes=transport.routes)


def httpx_stream(
    response: httpx.Response, closed: Callable[[], bool], trace: AttemptTrace | None
) -> Stream:
    """The stream of httpx's ``response``, its body not read yet; ``trace``: the attempt's on a
    merchant's client, whose socket the watchdog watches on each read (``None``: paysdk's own)."""
    stream = response.extensions.get("network_stream")
    h1 = response.http_version == "HTTP/1.1"
    sock = socket_of(stream) if trace is not None and h1 else None
    opened = Opened(response.status_code, response.headers)
    body = sync_body(response)
    return Stream(opened, body, response.close, closed, failure_from_httpx, sock, trace)


class SyncHttpxSender:
    """Sends with an ``httpx.Client``; the one paysdk makes has deadline-bound sockets."""

    def __init__(
        self,
        http: httpx.Client,
        *,
        defaults: HttpxDefaults | None = None,
        routes: Routes | None = None,
    ) -> None:
        """
        Args:
            http: the client to send with.
            defaults: what ``own_sender`` made ``http`` with; ``None`` for a merchant's client,
                whose sockets, headers and timeout paysdk leaves as they are.
            routes: the pools under ``http``, where ``http`` is paysdk's own: each untraced
                attempt is sent to them directly, and a failure of their proxy names it.
                ``None``: every attempt goes through ``http``.
        """
        self.http = http
        self._routes = routes
        self._network = routes.network if routes is not None else None
        self._requests = RequestBuilder(defaults)
        self._idle = IdleSockets.of(http) if defaults is None else None
        self._closing = threading.Event()

    @property
    def is_closed(self) -> bool:
        return self.http.is_closed

    def send(self, request: Send) -> Answer | Failure | Stream:
        started = time.monotonic()
        deadline = None if request.budget is None else started + request.budget
        if deadline is None or self._idle is None:
            with attempt_deadline(deadline):
                return through_proxy(self._send(request, started, None), request, self._network)
        watch = watchdog.watch(deadline)
        try:
            outcome = self._send(request, started, AttemptTrace(watch, self._idle))
        finally:
            watch.end()
        if watch.cut:  # its socket was shut at the deadline: a timeout, whatever was read
            if isinstance(outcome, Stream):
                outcome.close()
            return deadline_passed()
        return through_proxy(outcome, request, self._network)

    def _send(
        self, request: Send, started: float, trace: AttemptTrace | None
    ) -> Answer | Failure | Stream:
        """One attempt; ``trace`` finds a merchant's socket for the watchdog."""
        routes = self._routes
        if routes is not None and httpx_tracing.sends_past(httpx.Client):
            return self._direct(routes, request, started)
        extensions = None if trace is None else {"trace": trace}
        try:
            built = self._requests.build(self.http, request, extensions)
            response = self.http.send(built, stream=True)
        except Exception as exc:
            if (failure := self._failure(exc)) is None:
                raise
            return failure
        if trace is not None:
            trace.found(response.extensions.get("network_stream"), response.http_version)
        if request.opens(response.status_code):
            return httpx_stream(response, lambda: self.is_closed, trace)
        return read_answer(request, response, started, self._failure)

    def _direct(self, routes: Routes, request: Send, started: float) -> Answer | Failure | Stream:
        """The attempt sent to ``routes`` as httpcore's request, past httpx's client: its
        answer read as ``_send`` reads httpx's (``_sync/answers.py``'s ``send_core``)."""
        failed = functools.partial(self._failure, sent=request)
        core = self._requests.core(self.http, request)
        return send_core(routes, core, (request, started), failed, lambda: self.is_closed)

    def _failure(self, exc: Exception, sent: Send | None = None) -> Failure | None:
        """What ``exc`` stands for (raised sending or reading ``sent`` through httpcore, if
        given); ``None`` for a bug, which the caller re-raises."""
        if self.http.is_closed:  # closed by another thread while this one waited or sent
            raise closed_error("Client") from None
        return failure_from_httpx(exc) if sent is None else failure_from_httpcore(exc, sent)

    def wait_to_retry(self, seconds: float) -> None:
        """Wait ``seconds`` before a retry, or until ``close``: a call waiting to retry ends
        with the client's closing, as one under way does."""
        self._closing.wait(seconds)

    def close(self) -> None:
        try:
            self.http.close()
        finally:  # then, and only then, a call waiting to retry finds the client closed
            self._closing.set()

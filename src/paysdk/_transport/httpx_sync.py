"""The sync httpx sender: bodies through ``BodyReader`` (never read past its cap), each attempt
bounded whole: on paysdk's own client by socket deadlines (``deadline``), on a merchant's by the
``watchdog`` shutting its socket (``borrowed`` finds it), on both by a check per chunk. A network
or service failure becomes a ``Failure``; any other exception is a bug, raised as is."""

from __future__ import annotations

import time
from collections.abc import Callable

import httpx

from .._core.body import read_timed_out, stream_failure
from .._core.steps import Answer, Failure, Opened, Read, Send
from .._errors import closed_error
from . import watchdog
from ._sync.answers import read_answer
from ._sync.pool import PoolTransport
from .borrowed import AttemptTrace, IdleSockets, socket_of
from .deadline import attempt_deadline, deadline_backend
from .httpx_common import (
    HttpxDefaults,
    RequestBuilder,
    failure_from_httpx,
    own_client_options,
    sync_body,
)
from .network import Network, through_proxy, timeout_failure

__all__ = ["SyncHttpxSender", "own_client"]


def own_client(network: Network, defaults: HttpxDefaults) -> httpx.Client:
    """The ``httpx.Client`` paysdk makes: its pools open deadline-bound sockets through
    ``network``, and it sends ``defaults`` itself rather than per request."""
    transport = PoolTransport(network, network_backend=deadline_backend())
    return httpx.Client(transport=transport, **own_client_options(defaults))


def deadline_passed() -> Failure:
    """An attempt whose socket the watchdog shut: the failure paysdk's own client reports when
    its socket's deadline passes (``deadline``), so either client says the same."""
    return timeout_failure(httpx.ReadTimeout("the attempt's deadline passed"))


class SyncStream:
    """A successful answer left open for ``iter_payments``: one chunk per ``Read``."""

    def __init__(
        self, response: httpx.Response, closed: Callable[[], bool], *, borrowed: bool = False
    ) -> None:
        """
        Args:
            response: the answer, its body not read yet.
            closed: whether the client was closed.
            borrowed: the client is the merchant's: each read is watched (``watchdog``).
        """
        self.opened = Opened(response.status_code, response.headers)
        self._response = response
        self._chunks = sync_body(response)
        self._closed = closed
        stream = response.extensions.get("network_stream")
        h1 = response.http_version == "HTTP/1.1"
        self._sock = socket_of(stream) if borrowed and h1 else None
        self._cut = False

    def read(self, step: Read) -> bytes | Failure:
        deadline = None if step.budget is None else time.monotonic() + step.budget
        if deadline is None or self._sock is None:
            return self._read(step, deadline)
        if self._cut:  # an earlier read's deadline shut the socket: nothing more is trusted
            return deadline_passed()
        watch = watchdog.watch(deadline)
        watch.attach(self._sock)
        try:
            got = self._read(step, deadline)
        finally:
            watch.end()
        if watch.cut:
            self._cut = True
            return deadline_passed()
        return got

    def _read(self, step: Read, deadline: float | None) -> bytes | Failure:
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
            if (failure := stream_failure(self.opened, exc, failure_from_httpx)) is None:
                raise
            return failure

    def close(self) -> None:
        self._response.close()


class SyncHttpxSender:
    """Sends with an ``httpx.Client``; the one paysdk makes has deadline-bound sockets."""

    def __init__(
        self,
        http: httpx.Client,
        *,
        defaults: HttpxDefaults | None = None,
        network: Network | None = None,
    ) -> None:
        """
        Args:
            http: the client to send with.
            defaults: what ``own_client`` made ``http`` with; ``None`` for a merchant's client,
                whose sockets, headers and timeout paysdk leaves as they are.
            network: what ``own_client`` made ``http`` on, so a failure of its proxy names it;
                ``None`` for a merchant's client.
        """
        self.http = http
        self._network = network
        self._requests = RequestBuilder(defaults)
        self._idle = IdleSockets.of(http) if defaults is None else None

    @property
    def is_closed(self) -> bool:
        return self.http.is_closed

    def send(self, request: Send) -> Answer | Failure | SyncStream:
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
            if isinstance(outcome, SyncStream):
                outcome.close()
            return deadline_passed()
        return through_proxy(outcome, request, self._network)

    def _send(
        self, request: Send, started: float, trace: AttemptTrace | None
    ) -> Answer | Failure | SyncStream:
        """One attempt; ``trace`` finds a merchant's socket for the watchdog."""
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
            return SyncStream(response, lambda: self.http.is_closed, borrowed=trace is not None)
        return read_answer(request, response, started, self._failure)

    def _failure(self, exc: Exception) -> Failure | None:
        """What ``exc`` stands for; ``None`` for a bug, which the caller re-raises."""
        if self.http.is_closed:  # closed by another thread while this one waited or sent
            raise closed_error("Client") from None
        return failure_from_httpx(exc)

    def close(self) -> None:
        self.http.close()

"""The stream the sync sender leaves open for ``iter_payments``: the sync twin of
``async_streams.AsyncStream``, each read bounded by the step's budget (paysdk's own sockets'
deadlines, or on a merchant's client the ``watchdog`` shutting its socket)."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import httpx

from .._core.body import read_timed_out, stream_failure
from .._core.steps import Failure, Opened, Read
from .._errors.connection import closed_error
from . import watchdog
from .deadline import attempt_deadline
from .network import timeout_failure

if TYPE_CHECKING:
    from .borrowed import AttemptTrace

__all__ = ["Stream", "deadline_passed"]


def deadline_passed() -> Failure:
    """An attempt whose socket the watchdog shut: the failure paysdk's own client reports when
    its socket's deadline passes (``deadline``), so either client says the same."""
    return timeout_failure(httpx.ReadTimeout("the attempt's deadline passed"))


class Stream:
    """A successful answer left open for ``iter_payments``: one chunk per ``Read``."""

    def __init__(
        self,
        opened: Opened,
        pieces: Iterator[bytes],
        close: Callable[[], None],
        closed: Callable[[], bool],
        failure: Callable[[Exception], Failure | None],
        sock: socket.socket | None = None,
        trace: AttemptTrace | None = None,
    ) -> None:
        """The arguments ``AsyncStream`` takes, and ``sock``: the socket of a merchant's client
        under the answer, each read watched (``watchdog``); ``None`` where paysdk's own sockets
        bound the reads themselves. ``trace``: the attempt's, which tells each read's watch
        when the answer closes (its socket is then the merchant's pool's again)."""
        self.opened = opened
        self._chunks = pieces
        self._close = close
        self._closed = closed
        self._failure = failure
        self._sock = sock
        self._trace = trace
        self._cut = False

    def read(self, step: Read) -> bytes | Failure:
        deadline = None if step.budget is None else time.monotonic() + step.budget
        if deadline is None or self._sock is None:
            return self._read(step, deadline)
        if self._cut:  # an earlier read's deadline shut the socket: nothing more is trusted
            return deadline_passed()
        watch = watchdog.watch(deadline)
        if self._trace is None or self._trace.follow(watch):
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
            if (failure := stream_failure(self.opened, exc, self._failure)) is None:
                raise
            return failure

    def close(self) -> None:
        self._close()

"""Ends a blocked socket read at the attempt's deadline, for sockets paysdk did not open:
httpx's timeouts are per read (a server trickling bytes keeps one going for ever) and a
merchant's ``httpx.Client``'s sockets cannot be wrapped (``deadline``), so the one an attempt
uses (``borrowed`` finds it) is shut at its deadline and the sender reports a timeout. One
thread per process keeps the deadlines in a heap, ending after a while with none; a forked
child starts with neither."""

from __future__ import annotations

import contextlib
import heapq
import itertools
import os
import socket
import threading
import time

__all__ = ["Watch", "shut", "watch"]

IDLE_EXIT = 2.0
"""Seconds the thread waits with nothing to watch before it ends."""


class Watch:
    """One attempt's deadline and, once known, its socket."""

    __slots__ = ("_sock", "cut", "done", "fired")

    def __init__(self) -> None:
        self._sock: socket.socket | None = None
        self.fired = False
        """The deadline passed while the attempt ran."""
        self.cut = False
        """Its socket was shut: what was read is not to be trusted (an answer delimited by the
        connection's end looks complete), the attempt timed out."""
        self.done = False

    def attach(self, sock: socket.socket) -> None:
        """The socket the attempt reads from; shut at once if the deadline passed already."""
        with _lock:
            if self.done:
                return
            self._sock = sock
            if self.fired:
                self._cut()

    def detach(self) -> None:
        """The socket turned out to be shared with other requests: leave it alone."""
        with _lock:
            self._sock = None

    def end(self) -> None:
        """The attempt is over: its socket is left alone from now on."""
        with _lock:
            self.done = True
            self._sock = None
        _watcher.ended()

    def _fire(self) -> None:
        with _lock:
            if not self.done:
                self.fired = True
                self._cut()

    def _cut(self) -> None:
        """Shut the socket, under the lock: once ``end()`` returns, nothing shuts it."""
        if self._sock is not None:
            self.cut = True
            shut(self._sock)


def shut(sock: socket.socket) -> None:
    """Shut ``sock`` for both directions: a read blocked on it returns at once. The socket stays
    open (its owner closes it); the plain socket's ``shutdown`` is used, so an ``SSLSocket``'s
    TLS state is left to the thread reading it."""
    with contextlib.suppress(OSError):  # closed meanwhile, or never connected
        socket.socket.shutdown(sock, socket.SHUT_RDWR)


_lock = threading.Lock()


class _Watcher:
    """The deadlines of every attempt in flight, and the one thread that keeps them."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, Watch]] = []
        self._ended = 0
        self._order = itertools.count()
        self._wake = threading.Condition(_lock)
        self._thread: threading.Thread | None = None

    def add(self, at: float) -> Watch:
        entry = Watch()
        with _lock:
            heap = self._heap
            earliest = heap[0][0] if heap else None
            heapq.heappush(heap, (at, next(self._order), entry))
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="paysdk-deadline-watch", daemon=True
                )
                self._thread.start()
            elif earliest is None or at < earliest:
                self._wake.notify()
        return entry

    def ended(self) -> None:
        """One attempt ended: its entry waits in the heap until its time, unless too many do."""
        with _lock:
            self._ended += 1
            if self._ended > 64 and self._ended * 2 > len(self._heap):
                self._heap = [item for item in self._heap if not item[2].done]
                heapq.heapify(self._heap)
                self._ended = 0
                self._wake.notify()

    def _run(self) -> None:
        while True:
            due: list[Watch] = []
            with _lock:
                now = time.monotonic()
                while self._heap and (self._heap[0][0] <= now or self._heap[0][2].done):
                    _, _, entry = heapq.heappop(self._heap)
                    if entry.done:
                        self._ended = max(0, self._ended - 1)
                    else:
                        due.append(entry)
                if not due:
                    if self._heap:
                        self._wake.wait(self._heap[0][0] - now)
                        continue
                    if not self._wake.wait(IDLE_EXIT) and not self._heap:
                        self._thread = None
                        return
                    continue
            for entry in due:
                entry._fire()


_watcher = _Watcher()


def watch(at: float) -> Watch:
    """Register an attempt that must end by monotonic time ``at``; call ``end()`` when it does."""
    return _watcher.add(at)


def _forked() -> None:
    """In a forked child: the parent's thread is not running here, and its lock may be held."""
    global _lock, _watcher
    _lock = threading.Lock()
    _watcher = _Watcher()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forked)

"""How the sync client's own pools connect to a name, within the connect timeout as a whole:
the name is resolved in a worker thread, waited for no longer than the timeout (the system's
``getaddrinfo`` cannot be interrupted: a resolver that hangs keeps that thread, not the call),
and its addresses are raced 250 ms apart as the ``AsyncClient`` races them
(``asyncio_network.py``), so one that never answers is passed over. httpcore's own sync backend
(``socket.create_connection``) tries them one after another, each for the whole timeout."""

from __future__ import annotations

import ipaddress
import itertools
import queue
import socket
import threading
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from .network import one_error

if TYPE_CHECKING:
    import httpcore

__all__ = ["connect_tcp"]

RACE_DELAY = 0.25
"""Seconds each of a name's addresses is given before the next is tried too (anyio's delay)."""


def connect_tcp(
    backend: httpcore.NetworkBackend,
    host: str,
    port: int,
    timeout: float | None,
    local_address: str | None,
    socket_options: Iterable[Any] | None,
) -> httpcore.NetworkStream:
    """A connection to ``host`` (a name or an address) opened by ``backend``, given at most
    ``timeout`` seconds for all of it: resolving the name and connecting to its addresses.

    Raises:
        httpcore.ConnectTimeout: it took longer than ``timeout``.
        httpcore.ConnectError: the name did not resolve, or no address took the connection.
    """
    try:
        ipaddress.ip_address(host)
    except ValueError:
        pass
    else:  # an address: nothing to resolve, nothing to race
        return backend.connect_tcp(host, port, timeout, local_address, socket_options)
    import httpcore

    at = None if timeout is None else time.monotonic() + timeout
    addresses = _addresses(host, port, timeout)
    options = list(socket_options or ())
    if len(addresses) == 1:
        return backend.connect_tcp(addresses[0], port, _left(at), local_address, options)
    race = _Race()
    try:
        for index, address in enumerate(addresses):
            args = (backend, address, port, _left(at), local_address, options)
            if not _started(race.attempt, args, "paysdk-connect"):
                race.attempt(*args)  # no thread to race in: tried in this thread, in turn
            last = index == len(addresses) - 1
            if (stream := race.wait(at, last=last)) is not None:
                return stream
        error = one_error(race.errors)
        raise httpcore.ConnectError(error) from error
    finally:
        race.end()


def _left(at: float | None) -> float | None:
    """Seconds until ``at``.

    Raises:
        httpcore.ConnectTimeout: none are.
    """
    if at is None:
        return None
    left = at - time.monotonic()
    if left <= 0:
        import httpcore

        raise httpcore.ConnectTimeout("the connect timeout passed")
    return left


def _started(target: Callable[..., None], args: tuple[Any, ...], name: str) -> bool:
    """Whether a daemon thread running ``target(*args)`` started: not where the process can
    start no more (``can't start new thread``: its limit of threads or memory reached, or, on
    Python 3.12.1, an ``atexit`` function's call), where the caller does the work itself, as
    httpcore's backend did, rather than failing the call with a ``RuntimeError``."""
    try:
        threading.Thread(target=target, args=args, name=name, daemon=True).start()
    except RuntimeError:
        return False
    return True


def _addresses(host: str, port: int, timeout: float | None) -> list[str]:
    """``host``'s addresses, the families alternating, the resolver's first one first.

    Raises:
        httpcore.ConnectTimeout: the resolver did not answer within ``timeout``.
        httpcore.ConnectError: the name did not resolve.
        Exception: what the resolver raised that is no failed lookup (a bug), as it raised it.
    """
    import httpcore

    answers: queue.SimpleQueue[list[Any] | Exception] = queue.SimpleQueue()

    def resolve() -> None:
        try:
            answers.put(socket.getaddrinfo(host, port, type=socket.SOCK_STREAM))
        except Exception as exc:  # socket.gaierror is an OSError; any other, a bug to raise
            answers.put(exc)

    if timeout is None or not _started(resolve, (), "paysdk-resolve"):
        resolve()  # no bound to keep, or no thread to keep it in: resolved in this thread
    try:
        answer = answers.get(timeout=timeout)
    except queue.Empty:
        raise httpcore.ConnectTimeout(
            f"the name {host!r} was not resolved within the connect timeout ({timeout:g}s)"
        ) from None
    if isinstance(answer, OSError):
        raise httpcore.ConnectError(answer) from answer
    if isinstance(answer, Exception):
        raise answer
    by_family: dict[int, list[str]] = {}
    for family, _, _, _, sockaddr in answer:
        by_family.setdefault(family, []).append(str(sockaddr[0]))
    addresses = [a for row in itertools.zip_longest(*by_family.values()) for a in row if a]
    if not addresses:  # as socket.create_connection says it
        raise httpcore.ConnectError("getaddrinfo returns an empty list")
    return addresses


class _Race:
    """The outcomes of the connections to a name's addresses, each made in a thread of its
    own; the first made is the caller's, and each made after it, or after the caller left, is
    closed."""

    def __init__(self) -> None:
        self._outcomes: queue.SimpleQueue[httpcore.NetworkStream | tuple[str, Exception]] = (
            queue.SimpleQueue()
        )
        self._lock = threading.Lock()
        self._over = False
        self._running = 0
        self.errors: list[OSError] = []

    def attempt(
        self,
        backend: httpcore.NetworkBackend,
        address: str,
        port: int,
        timeout: float | None,
        local_address: str | None,
        options: list[Any],
    ) -> None:
        try:
            stream = backend.connect_tcp(address, port, timeout, local_address, options)
        except Exception as exc:  # httpcore's ConnectError or ConnectTimeout, said to the caller
            self._outcomes.put((address, exc))
            return
        with self._lock:
            if not self._over:
                self._outcomes.put(stream)
                return
        stream.close()

    def wait(self, at: float | None, *, last: bool) -> httpcore.NetworkStream | None:
        """The first connection made: waiting ``RACE_DELAY`` for it, or until ``at`` once the
        ``last`` address is being tried; ``None`` if the next address should be tried.

        Raises:
            httpcore.ConnectTimeout: ``at`` passed.
            Exception: what an attempt raised that is no failure to connect (a bug).
        """
        import httpcore

        self._running += 1
        while self._running:
            left = _left(at)
            wait = left if last or (left is not None and left < RACE_DELAY) else RACE_DELAY
            try:
                outcome = self._outcomes.get(timeout=wait)
            except queue.Empty:
                if last:
                    raise httpcore.ConnectTimeout("the connect timeout passed") from None
                return None
            self._running -= 1
            if not isinstance(outcome, tuple):
                return outcome
            address, exc = outcome
            if not isinstance(exc, (httpcore.ConnectError, httpcore.ConnectTimeout)):
                raise exc
            self.errors.append(_at(address, exc.__cause__ or exc))
            if not last:
                return None  # failed at once: the next address is tried now
        return None

    def end(self) -> None:
        """The caller has its connection, or gave up: each connection made from now on, or
        made and not taken, is closed."""
        with self._lock:
            self._over = True
        while True:
            try:
                outcome = self._outcomes.get_nowait()
            except queue.Empty:
                return
            if not isinstance(outcome, tuple):
                outcome.close()


def _at(address: str, exc: BaseException) -> OSError:
    """``exc`` saying the address it happened at (``socket.create_connection`` does not), with
    its ``errno``: a refusal stays one."""
    errno = getattr(exc, "errno", None)
    if errno is None:
        return OSError(f"{exc or type(exc).__name__} ({address})")
    return OSError(errno, f"{getattr(exc, 'strerror', None) or exc} ({address})")

"""Connections belong to the process that opened them: a forked child opens its own.

Workers forked after the client was used (gunicorn ``--preload``, celery prefork, uwsgi,
``multiprocessing``) inherit the parent's sockets, and two processes reading one take each
other's answers. So each value here (pool, session, loop binding) is made again in a child; the
inherited one is neither used nor closed (which could cut or unregister the parent's sockets)."""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Callable
from typing import Any, Generic, TypeVar

__all__ = ["PerProcess", "abandon"]

T = TypeVar("T")

_abandoned: list[object] = []
_abandoned_lock = threading.Lock()
_making = threading.RLock()
"""Held while a value is made: threads whose first calls come at once get one value between
them, not one each (the others' pools, and the connections they opened, would be lost)."""
_holding: weakref.WeakSet[PerProcess[Any]] = weakref.WeakSet()
"""Every ``PerProcess`` that made a value: a forked child abandons them all at once."""


class PerProcess(Generic[T]):
    """A value made on first use in each process (``make()`` again after a fork), for one
    ``os.getpid()`` per use; the value and its process are read and written as one tuple, so
    threads never see one without the other, and made under a lock, so threads share it."""

    __slots__ = ("__weakref__", "_make", "_state")

    def __init__(self, make: Callable[[], T]) -> None:
        self._make = make
        self._state: tuple[int, T] | None = None

    def get(self) -> T:
        """This process's value, made now if there is none yet."""
        state, pid = self._state, os.getpid()
        if state is not None and state[0] == pid:
            return state[1]
        with _making:
            state = self._state
            if state is not None and state[0] == pid:  # made by another thread meanwhile
                return state[1]
            if state is not None:
                abandon(state[1])
            value = self._make()
            self._state = (pid, value)
            _holding.add(self)
        return value

    def current(self) -> T | None:
        """This process's value if it has one: what there is to close."""
        state = self._state
        return state[1] if state is not None and state[0] == os.getpid() else None

    def reset(self) -> T | None:
        """Forget and return this process's value (it was closed); a later ``get`` makes another.
        A value another thread is making now is waited for, so it is returned, not left open."""
        with _making:
            value = self.current()
            if value is not None:
                self._state = None
        return value


def _forked() -> None:
    """In a forked child, before anything else runs: abandon every value the parent made, so
    none is collected here even if the child never uses it (a worker that exits without a call
    would otherwise close the parent's sockets in its last collection)."""
    global _abandoned_lock, _making
    _abandoned_lock = threading.Lock()  # another thread of the parent may have held them
    _making = threading.RLock()
    for holder in list(_holding):
        state = holder._state
        if state is not None:
            holder._state = None
            abandon(state[1])


if hasattr(os, "register_at_fork"):  # not on Windows, which cannot fork
    os.register_at_fork(after_in_child=_forked)


def abandon(inherited: object) -> None:
    """Keep what a child inherited alive and untouched until the process ends: collecting an
    inherited aiohttp connector or event loop closes its transports, removing the parent's
    sockets from the epoll instance both share (the parent's next call then waits forever). A
    reference never given back spares it even the collection at the interpreter's exit."""
    with _abandoned_lock:
        _abandoned.append(inherited)
    try:
        import ctypes

        ctypes.pythonapi.Py_IncRef(ctypes.py_object(inherited))
    except (ImportError, AttributeError):  # no CPython C API (PyPy): the list keeps it
        pass

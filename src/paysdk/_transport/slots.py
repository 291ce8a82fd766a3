"""The sync twins of ``async_slots.py`` (a thread needs no shielding). First come, first served:
a slot given back goes to the thread that waited longest, so the one giving it back cannot take
it again first, as it can from a ``threading.Semaphore`` (whose woken waiter must still win the
race). Taking a free slot costs one lock."""

from __future__ import annotations

import threading
from collections import deque
from contextlib import AbstractContextManager, nullcontext

import httpcore

__all__ = ["Slots", "shielded"]


class Slots:
    """A counted bound on requests at work, with a timeout on the wait for a free one."""

    __slots__ = ("_free", "_lock", "_waiters")

    def __init__(self, bound: int) -> None:
        self._free = bound
        self._lock = threading.Lock()
        self._waiters: deque[threading.Lock] = deque()
        """Each waiting thread's lock, held until a slot is handed to it: the oldest first.
        While any thread waits, no slot is free."""

    def acquire(self, within: float | None) -> None:
        """Take a slot, waiting at most ``within`` seconds (``None``: as long as it takes).

        Raises:
            httpcore.PoolTimeout: no slot came free in time (httpx's ``PoolTimeout``).
        """
        with self._lock:
            if self._free:
                self._free -= 1
                return
            given = threading.Lock()
            given.acquire()
            self._waiters.append(given)
        wait = -1 if within is None else min(max(within, 0.0), threading.TIMEOUT_MAX)
        try:
            if given.acquire(timeout=wait):
                return
        except BaseException:  # interrupted (KeyboardInterrupt): a slot handed meanwhile goes on
            if not self._withdraw(given):
                self.release()
            raise
        if self._withdraw(given):
            raise httpcore.PoolTimeout(
                f"no connection came free within the pool timeout ({within} s)"
            )
        # handed a slot as the wait ran out: it is this thread's

    def _withdraw(self, given: threading.Lock) -> bool:
        """Take a waiter out of the queue; ``False`` if a slot was handed to it first."""
        with self._lock:
            try:
                self._waiters.remove(given)
            except ValueError:
                return False
            return True

    def release(self) -> None:
        """Give a slot back: to the oldest waiter, if one waits."""
        with self._lock:
            if self._waiters:
                self._waiters.popleft().release()
            else:
                self._free += 1


def shielded() -> AbstractContextManager[object]:
    """Nothing cancels a thread: a scope that does nothing, the twin of ``async_shielded``."""
    return nullcontext()

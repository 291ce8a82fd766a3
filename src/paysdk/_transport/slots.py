"""How many connections a pool of the sync httpx client may have at work at once: the sync
twins of ``async_slots.py`` (threads wait on a semaphore; nothing needs shielding)."""

from __future__ import annotations

import threading
from contextlib import AbstractContextManager, nullcontext

import httpcore

__all__ = ["Slots", "shielded"]


class Slots:
    """A counted bound on requests at work, with a timeout on the wait for a free one."""

    __slots__ = ("_semaphore",)

    def __init__(self, bound: int) -> None:
        self._semaphore = threading.Semaphore(bound)

    def acquire(self, within: float | None) -> None:
        """Take a slot, waiting at most ``within`` seconds (``None``: as long as it takes).

        Raises:
            httpcore.PoolTimeout: no slot came free in time (httpx's ``PoolTimeout``).
        """
        if not self._semaphore.acquire(timeout=within):
            raise httpcore.PoolTimeout(
                f"no connection came free within the pool timeout ({within} s)"
            )

    def release(self) -> None:
        """Give a slot back."""
        self._semaphore.release()


def shielded() -> AbstractContextManager[object]:
    """Nothing cancels a thread: a scope that does nothing, the twin of ``async_shielded``."""
    return nullcontext()

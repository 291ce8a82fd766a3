"""The async halves of ``slots.py``, kept out of ``_async/``: the bound on a pool's requests at
work, first come, first served (a slot given back goes straight to the oldest waiter: a call
costs the same however many wait), and the shield its clean-up runs under."""

from __future__ import annotations

from collections import deque
from contextlib import AbstractContextManager

import anyio
import httpcore

__all__ = ["AsyncSlots", "async_shielded"]


class AsyncSlots:
    """A counted bound on requests at work, with a timeout on the wait for a free one."""

    __slots__ = ("_free", "_waiters")

    def __init__(self, bound: int) -> None:
        self._free = bound
        self._waiters: deque[anyio.Event] = deque()

    async def acquire(self, within: float | None) -> None:
        """Take a slot, waiting at most ``within`` seconds (``None``: as long as it takes).

        Raises:
            httpcore.PoolTimeout: no slot came free in time (httpx's ``PoolTimeout``).
        """
        if self._free > 0 and not self._waiters:
            self._free -= 1
            return
        given = anyio.Event()
        self._waiters.append(given)
        try:
            with anyio.fail_after(within):
                await given.wait()
        except BaseException as exc:
            if given.is_set():  # handed a slot as the wait ended: pass it on
                self.release()
            else:
                self._waiters.remove(given)
            if isinstance(exc, TimeoutError):
                raise httpcore.PoolTimeout(
                    f"no connection came free within the pool timeout ({within} s)"
                ) from None
            raise

    def release(self) -> None:
        """Give a slot back: to the oldest waiter, if one waits."""
        if self._waiters:
            self._waiters.popleft().set()
        else:
            self._free += 1


def async_shielded() -> AbstractContextManager[object]:
    """A scope that cancellation does not cut short: closing a connection finishes."""
    return anyio.CancelScope(shield=True)

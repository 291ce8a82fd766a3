"""The clients ``MockPaymentAPI`` makes: a ``paysdk.Client`` and ``AsyncClient`` whose retry
waits are recorded rather than slept, so a test of retries is instant and can check the waits."""

from __future__ import annotations

from typing import TypeVar

from .._client._async.client import AsyncClient
from .._client._sync.client import Client

__all__ = ["MockAsyncClient", "MockClient", "MockClientT"]

MockClientT = TypeVar("MockClientT", "MockClient", "MockAsyncClient")


class MockClient(Client):
    """A Client whose retry waits are recorded in ``_waits`` instead of slept."""

    _waits: list[float]

    def _sleep(self, seconds: float) -> None:
        self._waits.append(seconds)


class MockAsyncClient(AsyncClient):
    """An AsyncClient whose retry waits are recorded in ``_waits`` instead of slept."""

    _waits: list[float]

    async def _sleep(self, seconds: float) -> None:
        self._waits.append(seconds)

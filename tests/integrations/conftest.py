"""The clients a framework helper's test verifies callbacks with: the module's callback sandbox,
no retries (a test of a failing service sees its one answer)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

import paysdk
from paysdk.sandbox import Sandbox


@pytest.fixture
def client(callback_sandbox: Sandbox) -> Iterator[paysdk.Client]:
    with paysdk.Client(
        secret_key=callback_sandbox.secret_key, base_url=callback_sandbox.base_url, max_retries=0
    ) as client:
        yield client


@pytest.fixture
async def async_client(callback_sandbox: Sandbox) -> AsyncIterator[paysdk.AsyncClient]:
    async with paysdk.AsyncClient(
        secret_key=callback_sandbox.secret_key, base_url=callback_sandbox.base_url, max_retries=0
    ) as client:
        yield client

"""The transport tests' shared fixtures."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from tests.support.scripted import Scripted


@pytest.fixture
def scripted() -> Iterator[Callable[[list[bytes | None]], Scripted]]:
    """Starts loopback servers that answer with the bytes given (see ``Scripted``); each is
    stopped after the test."""
    servers: list[Scripted] = []

    def start(answers: list[bytes | None]) -> Scripted:
        servers.append(Scripted(answers))
        return servers[-1]

    yield start
    for server in servers:
        server.close()

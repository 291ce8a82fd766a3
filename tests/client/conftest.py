"""Fixtures of the client tests."""

from __future__ import annotations

import pytest

from paysdk.sandbox import Sandbox
from tests.conftest import EitherClient, MakeClient


@pytest.fixture
def connect(sandbox: Sandbox, make_loopback_client: MakeClient) -> MakeClient:
    """``connect(**options)``: a sync, async or aiohttp-backed client pointed at ``sandbox`` (a
    module's own, where it defines one), with its key unless ``secret_key=`` says otherwise."""

    def make(**options: object) -> EitherClient:
        options.setdefault("secret_key", sandbox.secret_key)
        return make_loopback_client(base_url=sandbox.base_url, **options)

    return make

"""The private part of aiohttp the aiohttp backend relies on: ``ClientSession._retry_connection``,
which paysdk turns off so that aiohttp does not resend a request behind paysdk's retry policy.

paysdk refuses an aiohttp without it when the client is made; and a kept-alive connection the
server drops before answering is one attempt, as on the httpx backends, whatever aiohttp would do.
"""

from __future__ import annotations

import aiohttp
import pytest

import paysdk
from paysdk.sandbox import COMPLETED_REFERENCE, Sandbox
from tests.conftest import BASE_URL, SECRET, MakeClient, verify_body
from tests.support.hostile import HostileServer, raw, respond_json

pytestmark = pytest.mark.anyio

REFERENCE = "order-1042"


def test_an_aiohttp_without_retry_connection_is_refused_when_the_client_is_made(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    attrs = aiohttp.ClientSession.ATTRS - {"_retry_connection"}
    monkeypatch.setattr(aiohttp.ClientSession, "ATTRS", attrs)
    with pytest.raises(paysdk.ConfigurationError) as caught:
        paysdk.AsyncClient(secret_key=SECRET, base_url=BASE_URL, http_backend="aiohttp")
    message = str(caught.value)
    assert f"aiohttp {aiohttp.__version__} " in message
    assert "_retry_connection" in message


async def test_a_kept_alive_connection_dropped_before_the_answer_is_one_attempt(
    hostile: HostileServer, make_loopback_client: MakeClient
) -> None:
    """The first call is answered and its connection kept alive; the server reads the second
    call's request on it and closes it unanswered. With no retries asked, that is one request:
    aiohttp left to itself would resend it on a fresh connection (the server would see two)."""
    hostile.script(respond_json(200, verify_body(REFERENCE)), raw(b""))
    client = make_loopback_client(base_url=hostile.base_url, max_retries=0)
    assert (await client.verify(REFERENCE)).reference == REFERENCE
    with pytest.raises(paysdk.APIConnectionError) as caught:
        await client.verify(REFERENCE)
    assert type(caught.value) is paysdk.APIConnectionError
    assert caught.value.attempts == 1
    assert hostile.attempts == 2  # one request per call
    first, second = hostile.requests
    assert second.connection == first.connection  # the second call went on the kept-alive one


@pytest.mark.parametrize("anyio_backend", ["trio"])
async def test_under_trio_the_aiohttp_backend_is_a_configuration_error_naming_asyncio(
    sandbox: Sandbox, anyio_backend: str
) -> None:
    """aiohttp runs only on asyncio: under trio a call says so, not aiohttp's "no running event
    loop" from deep inside; the client still closes."""
    async with paysdk.AsyncClient(
        secret_key=sandbox.secret_key, base_url=sandbox.base_url, http_backend="aiohttp"
    ) as client:
        with pytest.raises(paysdk.ConfigurationError, match='aiohttp" runs only under asyncio'):
            await client.verify(COMPLETED_REFERENCE)

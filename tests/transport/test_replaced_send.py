"""paysdk's own clients send each attempt past httpx's client, unless something replaced that
client's ``send``: Sentry's and Datadog's httpx integrations trace there and add their trace
headers. Their requests then go through httpx, so those integrations still see them."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from typing import Any

import httpx
import pytest

import paysdk
from paysdk._transport.httpx_tracing import sends_past
from paysdk.sandbox import COMPLETED_REFERENCE, Sandbox

TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


class Wrapper:
    """A method wrapper as wrapt's ``FunctionWrapper`` (Datadog's) is: not a function, yet it
    hands on the wrapped function's ``__code__``."""

    def __init__(self, wrapped: Callable[..., Any], around: Callable[..., Any]) -> None:
        self.__wrapped__ = wrapped
        self.__code__ = wrapped.__code__
        self._around = around

    def __get__(self, instance: object, owner: type) -> Callable[..., Any]:
        return functools.partial(self._around, self.__wrapped__, instance)


def tracer(seen: list[str]) -> Callable[..., Any]:
    """What a tracer puts around ``send``: it records the request and adds its trace header."""

    def around(send: Callable[..., Any], client: Any, request: httpx.Request, **kwargs: Any) -> Any:
        seen.append(request.url.path)
        request.headers["traceparent"] = TRACEPARENT
        return send(client, request, **kwargs)

    return around


@pytest.mark.parametrize("kind", ["function", "wrapper"])
@pytest.mark.parametrize("asynchronous", [False, True], ids=["Client", "AsyncClient"])
def test_a_replaced_send_sees_each_request_and_sends_its_header(
    sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch, kind: str, asynchronous: bool
) -> None:
    seen: list[str] = []
    cls: type[httpx.Client | httpx.AsyncClient] = (
        httpx.AsyncClient if asynchronous else httpx.Client
    )
    send, around = cls.send, tracer(seen)
    if kind == "wrapper":
        monkeypatch.setattr(cls, "send", Wrapper(send, around))
    elif asynchronous:

        async def traced_async(client: Any, request: httpx.Request, **kwargs: Any) -> Any:
            return await around(send, client, request, **kwargs)

        monkeypatch.setattr(cls, "send", traced_async)
    else:
        monkeypatch.setattr(
            cls, "send", lambda client, request, **kw: around(send, client, request, **kw)
        )
    assert not sends_past(cls)
    key, url = sandbox.secret_key, sandbox.base_url
    if asynchronous:

        async def verify() -> str:
            async with paysdk.AsyncClient(secret_key=key, base_url=url) as client:
                return (await client.verify(COMPLETED_REFERENCE)).reference

        reference = asyncio.run(verify())
    else:
        with paysdk.Client(secret_key=key, base_url=url) as client:
            reference = client.verify(COMPLETED_REFERENCE).reference
    assert reference == COMPLETED_REFERENCE
    assert seen == [f"/payment/{COMPLETED_REFERENCE}"]
    assert sandbox.requests[-1].headers.get("traceparent") == TRACEPARENT


@pytest.mark.parametrize("cls", [httpx.Client, httpx.AsyncClient], ids=["Client", "AsyncClient"])
def test_an_untouched_httpx_is_sent_past(cls: type[httpx.Client | httpx.AsyncClient]) -> None:
    """Without a replaced send the check finds none, or every call would pay httpx's machinery."""
    assert sends_past(cls)


@pytest.mark.parametrize("asynchronous", [False, True], ids=["Client", "AsyncClient"])
def test_an_attempt_of_paysdks_own_client_builds_no_httpx_request(
    sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch, asynchronous: bool
) -> None:
    """Sent past httpx's client, whose request building is a good part of a call's CPU."""

    def refused(*args: object, **kwargs: object) -> httpx.Request:
        raise AssertionError("an httpx request was built")

    cls: type[httpx.Client | httpx.AsyncClient] = (
        httpx.AsyncClient if asynchronous else httpx.Client
    )
    monkeypatch.setattr(cls, "build_request", refused)
    key, url = sandbox.secret_key, sandbox.base_url
    if asynchronous:

        async def verify() -> str:
            async with paysdk.AsyncClient(secret_key=key, base_url=url) as client:
                return (await client.verify(COMPLETED_REFERENCE)).reference

        assert asyncio.run(verify()) == COMPLETED_REFERENCE
    else:
        with paysdk.Client(secret_key=key, base_url=url) as client:
            assert client.verify(COMPLETED_REFERENCE).reference == COMPLETED_REFERENCE

"""Where ``Client`` and ``AsyncClient`` truly differ, kept out of ``_async/``: ``unasync.py``
renames each ``async_`` (or ``Async``) name here to its plain twin beside it. The sync client
sends with httpx and blocks to wait; the async one may send with aiohttp, checks its event loop
before each request, and waits without blocking. Senders, asyncio and anyio load only once a
client is made."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:
    import httpx

    from .._core.steps import Send
    from .._transport.async_streams import AsyncSender as AsyncSender
    from .._transport.httpx_common import HttpxDefaults
    from .._transport.httpx_sync import SyncHttpxSender
    from .._transport.network import Network
    from .base import HttpBackend

    Sender: TypeAlias = SyncHttpxSender
    """The sync twin of ``AsyncSender``: the one sender ``Client`` has."""

__all__ = [  # and, for type checkers, the senders' types: AsyncSender and its twin Sender
    "async_backend_name",
    "async_backends",
    "async_http_of",
    "async_order_of",
    "async_sender",
    "async_sends",
    "async_sleep",
    "backend_name",
    "backends",
    "http_of",
    "order_of",
    "sender",
    "sends",
    "sleep",
]

backends = ("httpx",)
"""The ``http_backend`` names ``Client`` takes."""
async_backends = ("httpx", "aiohttp")
"""The ``http_backend`` names ``AsyncClient`` takes: aiohttp with the ``aiohttp`` extra."""


def backend_name(backend: HttpBackend) -> str:
    """The name and version of what sends, for the User-Agent: httpx's."""
    from .._transport import httpx_common

    return httpx_common.BACKEND


def async_backend_name(backend: HttpBackend) -> str:
    """The name and version of what sends: httpx's, or aiohttp's (the extra, loaded only when
    asked for)."""
    if backend == "aiohttp":
        from .._transport import aiohttp_sender

        return aiohttp_sender.backend()
    return backend_name(backend)


def sender(
    http_client: httpx.Client | None,
    backend: HttpBackend,
    network: Network,
    defaults: Callable[[], HttpxDefaults],
) -> Sender:
    """The sender on ``http_client``, or on an httpx client of paysdk's own on ``network``."""
    from .._transport import httpx_sync

    if http_client is not None:
        return httpx_sync.SyncHttpxSender(http_client)
    return httpx_sync.own_sender(network, defaults())  # sent by the client, not per request


def async_sender(
    http_client: httpx.AsyncClient | None,
    backend: HttpBackend,
    network: Network,
    defaults: Callable[[], HttpxDefaults],
) -> AsyncSender:
    """The sender ``backend`` names: aiohttp's, or httpx's as ``sender`` makes it."""
    if backend == "aiohttp":
        from .._transport.aiohttp_sender import AiohttpSender

        return AiohttpSender(network)
    from .._transport.httpx_async import AsyncHttpxSender, own_async_sender

    if http_client is not None:
        return AsyncHttpxSender(http_client)
    return own_async_sender(network, defaults())


def http_of(sender: Sender) -> httpx.Client:
    """The httpx client ``sender`` sends with."""
    return sender.http


def async_http_of(sender: AsyncSender) -> httpx.AsyncClient:
    """The httpx client ``sender`` sends with; ``AttributeError`` for an aiohttp sender."""
    import httpx

    http = getattr(sender, "http", None)
    if not isinstance(http, httpx.AsyncClient):
        raise AttributeError("an aiohttp-backed AsyncClient has no httpx client")
    return http


def sends(sender: Sender, owner: str) -> Callable[[Send], Any]:
    """What a call's steps send with: the sender's own ``send`` (it knows when it is closed)."""
    return sender.send


def async_sends(sender: AsyncSender, owner: str) -> Callable[[Send], Awaitable[Any]]:
    """What a call's steps send with: the sender's coroutine for the request, once the client
    (``owner`` names its class) is known open and in its event loop; not wrapped in one more
    coroutine, as each step passes through here."""
    from .._errors.connection import closed_error

    def send(request: Send) -> Awaitable[Any]:
        if sender.is_closed:
            raise closed_error(owner)
        sender.binding.check()
        return sender.send(request)

    return send


def order_of(found: object) -> object:
    """What ``lookup`` returned, as it is: the plan it goes to refuses an awaitable, saying
    why (an async lookup needs the async client or ledger)."""
    return found


async def async_order_of(found: object) -> object:
    """What ``lookup`` returned, awaited if it is awaitable: an async lookup is welcome here."""
    return await found if inspect.isawaitable(found) else found


def sleep(sender: Sender, seconds: float) -> None:
    """Wait, blocking the thread: the pause before a retry, cut short when the client is closed
    (its next request then raises ``ClientClosedError``, as a call under way does)."""
    sender.wait_to_retry(seconds)


async def async_sleep(sender: AsyncSender, seconds: float) -> None:
    """Wait without blocking the event loop: the pause before a retry, cut short when the
    client is closed (its next request then raises ``ClientClosedError``); not begun once it
    is closed."""
    if not sender.is_closed:
        await sender.binding.wait_to_retry(seconds)

"""What a test may see of a client's insides, read in this one place: the sender it sends with,
which backend that is, the transport under its own httpx client and the network (proxy, TLS)
that transport routes through. Each reads a private attribute: a change of the clients' shape
is met here, not in every test that looks."""

from __future__ import annotations

from typing import Literal

import paysdk
from paysdk._transport._async.pool import AsyncPoolTransport
from paysdk._transport._sync.pool import PoolTransport
from paysdk._transport.network import Network

__all__ = ["backend_of", "network_of", "sender_of", "transport_of"]

AnyClient = paysdk.Client | paysdk.AsyncClient


def sender_of(client: AnyClient) -> object:
    """What ``client`` sends with (shared by the clients ``with_options`` makes of it)."""
    return client._sender


def backend_of(client: AnyClient) -> Literal["httpx", "aiohttp"]:
    """Which library ``client`` sends with (aiohttp, an extra, is not imported to tell)."""
    return "aiohttp" if type(sender_of(client)).__name__ == "AiohttpSender" else "httpx"


def transport_of(client: AnyClient) -> PoolTransport | AsyncPoolTransport:
    """The transport of paysdk's own pools under the httpx client ``client`` made itself."""
    transport = client._http._transport
    assert isinstance(transport, (PoolTransport, AsyncPoolTransport))
    return transport


def network_of(client: AnyClient) -> Network:
    """The network settings (proxy, TLS verification) ``client``'s own connections are made on."""
    return transport_of(client).routes.network

"""httpcore's own network backend, for the ``AsyncClient``'s routes through a proxy, but a stream
whose TLS handshake is cancelled is closed: httpcore's anyio backend closes one whose handshake
failed, not one cancelled (the budget running out in an ``https://`` proxy's handshake, or the
service's in its tunnel), whose socket would stay open until garbage-collected."""

from __future__ import annotations

import ssl
from typing import Any

import anyio
import httpcore

from .asyncio_network import HttpcoreBackend

__all__ = ["ClosingTLSBackend"]


class ClosingTLSBackend(HttpcoreBackend):
    """httpcore's backend for the running library (anyio's under asyncio, trio's under trio),
    its streams closed when a handshake is cancelled."""

    def _wrap(self, stream: httpcore.AsyncNetworkStream) -> httpcore.AsyncNetworkStream:
        return ClosingTLSStream(stream)


class ClosingTLSStream(httpcore.AsyncNetworkStream):
    """A stream of httpcore's, closed if its upgrade to TLS is cancelled."""

    def __init__(self, stream: httpcore.AsyncNetworkStream) -> None:
        self._stream = stream

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:  # noqa: ASYNC109
        return await self._stream.read(max_bytes, timeout)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:  # noqa: ASYNC109
        await self._stream.write(buffer, timeout)

    async def aclose(self) -> None:
        await self._stream.aclose()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's signature
    ) -> httpcore.AsyncNetworkStream:
        try:
            upgraded = await self._stream.start_tls(ssl_context, server_hostname, timeout)
        except BaseException as exc:  # cancelled, or failed (closed then already: harmless)
            with anyio.CancelScope(shield=True):
                await self._stream.aclose()
            if isinstance(exc, anyio.EndOfStream):  # httpcore maps it from 1.0 on, not before
                raise httpcore.ConnectError("the peer hung up during the TLS handshake") from exc
            raise
        return ClosingTLSStream(upgraded)

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)

"""One request on the clients' transport, for a product's own (the sandbox's callback GET,
``paysdk pay``'s POST): within its timeout, only the first bytes of the body read and decoded
(in bounded steps), a network or server failure a ``Failure``, never an httpx exception."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import NamedTuple

import httpx

from .._core.steps import Failure
from ._sync.pool import PoolTransport
from .deadline import attempt_deadline, deadline_backend
from .httpx_common import failure_from_httpx, sync_body
from .network import Network

__all__ = ["Fetched", "fetch"]


class Fetched(NamedTuple):
    """What the server answered."""

    status_code: int
    body: bytes
    """The first bytes of the decoded body, at most what was asked for."""
    encoding: str
    """The body's charset, ``utf-8`` if it names none."""


def fetch(
    url: str,
    *,
    headers: Mapping[str, str],
    timeout: float,
    max_body: int,
    method: str = "GET",
    content: bytes | None = None,
) -> Fetched | Failure:
    """GET ``url`` (or ``method`` it, sending ``content``) directly (no proxy, the
    environment's included), verifying TLS.

    Args:
        url: an absolute http(s) URL.
        headers: the request's headers.
        timeout: seconds for the whole call, body included.
        max_body: the most decoded bytes of the answer's body read; the rest is left unread.
        method: the request's method.
        content: the request's body, if it has one.

    Returns:
        The answer, or the ``Failure`` (``timeout``, ``connect``, ``undecodable``...) that
        came instead.
    """
    deadline = time.monotonic() + timeout
    try:
        network = Network(True, None, trust_env=False)  # a TLS context only for https://
        transport = PoolTransport(network, network_backend=deadline_backend())
        with (
            httpx.Client(timeout=timeout, transport=transport, trust_env=False) as http,
            attempt_deadline(deadline),
            http.stream(method, url, headers=dict(headers), content=content) as response,
        ):
            body = bytearray()  # the first max_body decoded bytes; the rest left unread
            for piece in sync_body(response):
                body += piece[: max_body - len(body)]
                if len(body) >= max_body:
                    break
            return Fetched(response.status_code, bytes(body), response.encoding or "utf-8")
    except Exception as exc:
        if (failure := failure_from_httpx(exc)) is None:
            raise
        return failure

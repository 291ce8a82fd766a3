"""An answer read whole through ``BodyReader``, within its caps, once its headers are in:
``read_body`` from any response's parts, ``read_answer`` from httpx's; ``send_core`` sends an
attempt of paysdk's own client past httpx's client and reads httpcore's answer."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import httpcore
import httpx

from ..._core.body import BodyReader
from ..._core.steps import Answer, Failure, Opened, Send
from ..._errors.connection import closed_error
from ..._parsing.decoding import async_decoded
from .. import async_streams
from .._twins import AsyncRawBody
from ..httpx_common import async_raw_body
from .pool import AsyncRoutes

__all__ = ["read_answer", "read_body", "send_core"]


async def read_answer(
    request: Send,
    response: httpx.Response,
    started: float,
    failure: Callable[[Exception], Failure | None],
) -> Answer | Failure:
    """``read_body`` for an httpx ``response``, its headers in and its body not read yet; the
    other arguments and what it returns as ``read_body``'s."""
    head = (response.status_code, response.headers)
    body = (*async_raw_body(response), response.aclose)
    return await read_body(request, head, body, started, failure)


async def send_core(
    routes: AsyncRoutes,
    core: httpcore.Request,
    attempt: tuple[Send, float],
    failure: Callable[[Exception], Failure | None],
    closed: Callable[[], bool],
) -> Answer | Failure | async_streams.AsyncStream:
    """An attempt of paysdk's own client sent to its pools as httpcore's request, past httpx's
    client (which has no auth, redirects, cookies or hooks to apply), and its answer read as
    httpx's is: the same caps, streams and failures.

    Args:
        routes: the client's pools.
        core: the request, as ``RequestBuilder.core`` builds it.
        attempt: the step sent, and when the attempt began (``time.monotonic()``).
        failure: what an exception sending or reading stands for; ``None`` for a bug, re-raised.
        closed: whether the client was closed: it then sends nothing, as httpx's refuses to.

    Returns:
        The answer, the failure met, or a successful list left open for ``iter_payments``.
    """
    if closed():
        raise closed_error("AsyncClient")
    request, started = attempt
    try:
        response = await routes.handle_async_request(core)
    except Exception as exc:
        if (failed := failure(exc)) is None:
            raise
        return failed
    headers = httpx.Headers(response.headers)
    encoding = headers.get("content-encoding")
    if request.opens(response.status):  # decoded in bounded steps, as httpx's answers are
        pieces = async_decoded(encoding, response.aiter_stream())
        opened = Opened(response.status, headers)
        return async_streams.AsyncStream(opened, pieces, response.aclose, closed, failure)
    body = (encoding, response.aiter_stream(), response.aclose)
    return await read_body(request, (response.status, headers), body, started, failure)


async def read_body(
    request: Send,
    head: tuple[int, Mapping[str, str]],
    body: AsyncRawBody,
    started: float,
    failure: Callable[[Exception], Failure | None],
) -> Answer | Failure:
    """What a response answers ``request`` with, its body read whole within the caps.

    Args:
        request: the step sent, whose caps and budget the body is read within.
        head: the response's status code and headers.
        body: its Content-Encoding (``None`` for bytes already decoded), its raw chunks as they
            arrive, and what closes it (closed however the reading ends).
        started: when the attempt began (``time.monotonic()``), for its budget.
        failure: what an exception while reading stands for; ``None`` for a bug, re-raised.

    Returns:
        The answer, or the failure the reading met.
    """
    status_code, headers = head
    encoding, chunks, close = body
    reader = BodyReader(request, status_code, headers, started, encoding=encoding)
    try:
        async for raw in chunks:
            if (done := reader.take(raw)) is not None:
                return done
        return reader.finish()
    except Exception as exc:
        if (failed := failure(exc)) is None:
            raise
        return failed
    finally:
        await close()

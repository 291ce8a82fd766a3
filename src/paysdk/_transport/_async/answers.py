"""An answer read whole through ``BodyReader``, within its caps, once its headers are in:
``read_body`` from any response's parts (httpcore's too), ``read_answer`` from httpx's."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import httpx

from ..._core.body import BodyReader
from ..._core.steps import Answer, Failure, Send
from .._twins import AsyncRawBody
from ..httpx_common import async_raw_body

__all__ = ["read_answer", "read_body"]


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

"""Gathering one answer's body, I/O-free: bounded inflation, the size cap and the attempt
deadline, the same in every shell; the failures below are how a shell reports a body it lacks.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Final

from .._parsing.decoding import ContentDecoder, DecodingError
from .steps import Answer, Failure, Opened, Send

__all__ = ["BodyReader", "attempt_timed_out", "read_timed_out", "stream_failure", "undecodable"]

ERROR_BODY_LIMIT: Final = 64 * 1024
"""An error answer's body is kept up to this many bytes; the rest is not read."""


def stream_failure(
    opened: Opened,
    exc: Exception,
    otherwise: Callable[[Exception], Failure | None],
) -> Failure | None:
    """What stopped the read of an open stream's body; a body that will not decode keeps the
    answer's status, so it is reported as what it is, not as a connection failure.
    ``otherwise`` reads the transport's own exceptions (``None``: not a transport failure)."""
    if isinstance(exc, DecodingError):
        return undecodable(opened.status_code, opened.headers, exc)
    return otherwise(exc)


def undecodable(
    status_code: int, headers: Mapping[str, str], exc: Exception, content: bytes = b""
) -> Failure:
    """An answer whose body will not decode: reported with its status, not as a lost line."""
    encoding = headers.get("content-encoding", "none")
    return Failure(
        "undecodable",
        f"the body could not be decoded (Content-Encoding: {encoding!r}): {exc}",
        status_code=status_code,
        headers=headers,
        content=content,
        cause=exc,
    )


def read_timed_out(budget: float | None) -> Failure:
    return Failure("timeout", f"no more of the body within {budget or 0:.3g}s")


def attempt_timed_out(budget: float | None) -> Failure:
    return Failure("timeout", f"the attempt took longer than its {budget or 0:g}s budget")


class BodyReader:
    """Gathers one answer's body from its raw chunks: inflates them in bounded steps, refuses
    more than ``limit`` decoded bytes or anything past ``deadline``, and says when to stop. Every
    shell reads a body so, only its loop differs: ``take`` each raw chunk until one returns what
    the attempt came to, else ``finish()``. A successful answer over its cap is a ``Failure``;
    an error answer is only cut, since its status says what went wrong and a short excerpt is all
    a message needs.
    """

    __slots__ = (
        "_broken",
        "_chunks",
        "_decoder",
        "_size",
        "_success",
        "deadline",
        "headers",
        "limit",
        "started",
        "status_code",
    )

    def __init__(
        self,
        request: Send,
        status_code: int,
        headers: Mapping[str, str],
        started: float,
        *,
        encoding: str | None,
    ) -> None:
        """``encoding``: the body's Content-Encoding, ``None`` for bytes already decoded."""
        self.status_code = status_code
        self.headers = headers
        self.started = started
        self._success = 200 <= status_code < 300
        self.limit = request.max_body if self._success else ERROR_BODY_LIMIT
        self.deadline = None if request.budget is None else started + request.budget
        self._chunks: list[bytes] = []
        self._size = 0
        self._broken: Failure | None = None
        self._decoder: ContentDecoder | None = None  # None: the bytes are the body as they are
        if encoding is not None and encoding.strip().lower() != "identity":
            try:
                self._decoder = ContentDecoder(encoding)
            except DecodingError as exc:
                self._broken = self._undecodable(exc)

    def take(self, raw: bytes) -> Answer | Failure | None:
        """Take a raw chunk: ``None`` to read on, else what the attempt came to (a failure, or an
        error answer cut at its cap)."""
        if self._broken is not None:
            return self._broken
        if self.deadline is not None and time.monotonic() > self.deadline:
            return attempt_timed_out(self.deadline - self.started)  # even if nothing inflates
        if self._decoder is None:
            return self._gather(raw) if raw else None
        try:
            for piece in self._decoder.decode(raw):
                done = self._gather(piece)
                if done is not None:
                    return done
        except DecodingError as exc:
            return self._undecodable(exc)
        return None

    def finish(self) -> Answer | Failure:
        """The body ended: the answer, or why it cannot be one."""
        if self._broken is not None:
            return self._broken
        if self._decoder is None:
            return self._answer()
        try:
            done = self._gather(self._decoder.flush())
        except DecodingError as exc:
            return self._undecodable(exc)
        return done or self._answer()

    def _gather(self, chunk: bytes) -> Answer | Failure | None:
        if self.deadline is not None and time.monotonic() > self.deadline:
            return attempt_timed_out(self.deadline - self.started)
        room = self.limit - self._size
        if len(chunk) > room:
            if self._success:
                return Failure(
                    "too_large",
                    f"the answer's body is larger than the {self.limit:,} bytes allowed",
                    status_code=self.status_code,
                    headers=self.headers,
                    content=self._content() + chunk[: max(room, 0)],
                )
            self._chunks.append(chunk[:room])
            self._size = self.limit
            return self._answer()  # an error body, cut: its status says what went wrong
        self._chunks.append(chunk)
        self._size += len(chunk)
        return None

    def _content(self) -> bytes:
        if len(self._chunks) > 1:
            self._chunks[:] = [b"".join(self._chunks)]
        return self._chunks[0] if self._chunks else b""

    def _answer(self) -> Answer:
        return Answer(
            self.status_code, self.headers, self._content(), time.monotonic() - self.started
        )

    def _undecodable(self, exc: Exception) -> Failure:
        return undecodable(self.status_code, self.headers, exc, self._content())

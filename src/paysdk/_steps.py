"""What a plan asks a shell to do, and what the shell reports back: the sans-I/O vocabulary.

A plan (see :mod:`paysdk._core`) yields :class:`Send`, :class:`Sleep` and, while it streams a
body, :class:`Read` and :class:`Emit` steps. A shell carries each out with its own I/O and
sends back an :class:`Answer` (a status, headers and a body read within its cap), an
:class:`Opened` stream, a chunk of bytes, or a :class:`Failure`. :class:`BodyReader` is the one
place a body is gathered, so every shell enforces the same size cap and attempt deadline.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Final, Generic, Literal, NamedTuple, TypeAlias, TypeVar

import httpx

from ._decoding import ContentDecoder, DecodingError

T = TypeVar("T")

ERROR_BODY_LIMIT: Final = 64 * 1024
"""An error answer's body is kept up to this many bytes; the rest is not read."""


class Send(NamedTuple):
    """Send this request and report back what came of it.

    ``budget`` bounds the whole attempt in seconds, connect to last byte (``None``: no bound
    beyond the per-phase ``timeout``). ``max_body`` caps a successful answer's decoded body.
    With ``stream``, a successful answer's body is not read: the shell reports it
    :class:`Opened` and serves :class:`Read` steps from it.

    The steps and outcomes are named tuples: one is made per attempt, and a tuple is built and
    imported in a fraction of a frozen dataclass's time.
    """

    method: str
    url: str
    headers: Mapping[str, str]  # holds the secret key: left out of the repr
    timeout: httpx.Timeout
    budget: float | None = None
    max_body: int = 1024 * 1024
    stream: bool = False

    def __repr__(self) -> str:
        return (
            f"Send(method={self.method!r}, url={self.url!r}, timeout={self.timeout!r}, "
            f"budget={self.budget!r}, max_body={self.max_body!r}, stream={self.stream!r})"
        )

    def __str__(self) -> str:
        return f"{self.method} {self.url}"

    def opens(self, status: int) -> bool:
        """Whether an answer of ``status`` is left open as a stream rather than read whole."""
        return self.stream and 200 <= status < 300

    def scrub(self, text: str) -> str:
        """``text`` with this request's secret key blotted out, for anything written about it."""
        auth = self.headers.get("authorization", "")
        key = auth.removeprefix("Bearer ")
        if len(key) < 4 or key not in text:
            return text
        return text.replace(key, "<secret key>")


class Sleep(NamedTuple):
    """Wait this many seconds, then carry on with the plan."""

    seconds: float


class Read(NamedTuple):
    """Read the next chunk of the open stream's decoded body within ``budget`` seconds."""

    budget: float | None


class Emit(Generic[T]):
    """Hand these items to the caller, then carry on."""

    __slots__ = ("items",)

    def __init__(self, items: Sequence[T]) -> None:
        self.items = items

    def __repr__(self) -> str:
        return f"Emit(items={self.items!r})"


class Answer(NamedTuple):
    """A complete answer: status, headers and the decoded body (cut at its cap if an error)."""

    status_code: int
    headers: Mapping[str, str]
    content: bytes
    elapsed: float = 0.0


class Opened(NamedTuple):
    """A successful answer whose body is left open to be read by :class:`Read` steps."""

    status_code: int
    headers: Mapping[str, str]


FailureKind: TypeAlias = Literal["connect", "timeout", "too_large", "undecodable", "closed"]


class Failure(NamedTuple):
    """An attempt that brought no usable answer, in words the core turns into an exception.

    ``status_code`` and ``headers`` are set where the answer had begun (a body too large or
    not decodable); ``content`` holds what was read of it.
    """

    kind: FailureKind
    detail: str
    status_code: int | None = None
    headers: Mapping[str, str] | None = None
    content: bytes = b""
    cause: BaseException | None = None


if TYPE_CHECKING:  # for type checkers only: building these at import costs every user time
    Step: TypeAlias = Send | Sleep | Read | Emit[T]
    Outcome: TypeAlias = Answer | Opened | Failure | httpx.Response | httpx.HTTPError | bytes | None
"""What a shell sends back into a plan. ``httpx.Response`` and ``httpx.HTTPError`` are taken too,
so a plan can be driven by hand with httpx's own objects."""


def failure_from_httpx(exc: Exception) -> Failure:
    """The :class:`Failure` an httpx (or transport) exception stands for."""
    if isinstance(exc, httpx.TimeoutException):
        return Failure("timeout", f"no answer within the timeout ({type(exc).__name__})", cause=exc)
    if isinstance(exc, httpx.DecodingError):
        return Failure("undecodable", f"the body could not be decoded: {exc}", cause=exc)
    detail = str(exc) or type(exc).__name__
    if not isinstance(exc, httpx.HTTPError):
        detail = f"{type(exc).__name__}: {detail}"
    return Failure("connect", detail, cause=exc)


def stream_failure(
    opened: Opened,
    exc: Exception,
    otherwise: Callable[[Exception], Failure] = failure_from_httpx,
) -> Failure:
    """What stopped the read of an open stream's body; a body that will not decode keeps the
    answer's status, so it is reported as what it is, not as a connection failure.
    ``otherwise`` reads the transport's own exceptions (httpx's by default)."""
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
        f"the body could not be decoded (Content-Encoding: {encoding}): {exc}",
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
    more than ``limit`` decoded bytes or anything past ``deadline``, and says when to stop.

    Every shell reads a body the same way, only its loop differs::

        for raw in chunks:
            if (done := reader.take(raw)) is not None:
                return done
        return reader.finish()

    A successful answer over its cap is a :class:`Failure`; an error answer is only cut, since
    its status says what went wrong and a short excerpt is all a message needs.
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
        success = 200 <= status_code < 300
        self.limit = request.max_body if success else ERROR_BODY_LIMIT
        self._success = success
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

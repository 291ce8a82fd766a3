"""What a plan asks a shell to do, and what the shell reports back: the sans-I/O vocabulary
(the ledger's half, ``paysdk.ledger._steps``, waits with this ``Sleep``). ``Emit``, generic, is
a slotted class rather than a named tuple: a generic named tuple needs Python 3.11.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Generic, Literal, NamedTuple, TypeAlias, TypeVar

from .config import SealedHeaders, Timeout, blot_key, secret_key_in

T = TypeVar("T")


class Send(NamedTuple):
    """Send this request; answered with an ``Answer``, an ``Opened`` stream or a ``Failure``.

    ``budget`` bounds the whole attempt in seconds, connect to last byte (``None``: no bound
    beyond the per-phase ``timeout``). ``max_body`` caps a successful answer's decoded body.
    With ``stream``, a successful answer's body is not read: the shell reports it ``Opened`` and
    serves ``Read`` steps from it. Steps and outcomes are named tuples: one is made per attempt,
    and a tuple is built and imported in a fraction of a frozen dataclass's time.
    """

    method: str
    url: str
    headers: SealedHeaders  # holds the secret key: left out of the repr, not a mapping
    timeout: Timeout
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
        return blot_key(text, secret_key_in(self.headers.open()))


class Sleep(NamedTuple):
    """Wait this many seconds, then carry on with the plan; answered with ``None``."""

    seconds: float


class Read(NamedTuple):
    """Read the next chunk of the open stream's decoded body within ``budget`` seconds;
    answered with the chunk (``b""`` at the body's end) or a ``Failure``."""

    budget: float | None


class Chunk(bytes):
    """A chunk of a streamed body, as the driver answers a ``Read`` with it: its ``repr`` is
    its size, for a body may echo the secret key and debug pages show each frame's locals."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"<{len(self)} bytes>"


class Emit(Generic[T]):
    """Hand these items to the caller, then carry on; answered with ``None``."""

    __slots__ = ("items",)

    def __init__(self, items: Sequence[T]) -> None:
        self.items = items

    def __repr__(self) -> str:
        return f"Emit(items={self.items!r})"


CALL_STEPS = (Send, Sleep)
"""Every step a call's plan may yield; ``run`` carries out these and refuses any other."""
ITEM_STEPS = (Send, Sleep, Read, Emit)
"""Every step an item plan (``iter_payments``) may yield; the item loop carries out these."""


class Answer(NamedTuple):
    """A complete answer: status, headers and the decoded body (cut at its cap if an error)."""

    status_code: int
    headers: Mapping[str, str]
    content: bytes
    elapsed: float = 0.0

    def __repr__(self) -> str:
        """Status and sizes, never the headers or body: a server or proxy may echo the secret
        key there, and debug pages (Django's, with ``DEBUG = True``) show each frame's locals."""
        return (
            f"Answer(status_code={self.status_code!r}, headers=<{len(self.headers)} headers>, "
            f"content=<{len(self.content)} bytes>, elapsed={self.elapsed!r})"
        )


class Opened(NamedTuple):
    """A successful answer whose body is left open to be read by ``Read`` steps."""

    status_code: int
    headers: Mapping[str, str]

    def __repr__(self) -> str:
        """The status, never the headers (as ``Answer``'s)."""
        return f"Opened(status_code={self.status_code!r}, headers=<{len(self.headers)} headers>)"


FailureKind: TypeAlias = Literal[
    "connect",
    "malformed",
    "timeout",
    "certificate",
    "tls_protocol",
    "tls_version",
    "tls_refused",
    "proxy",
    "proxy_connect",
    "too_large",
    "undecodable",
    "closed",
]


class Failure(NamedTuple):
    """An attempt that brought no usable answer, in words the core turns into an exception.

    ``status_code`` and ``headers`` are set where the answer had begun (a body too large or
    not decodable); ``content`` holds what was read of it. ``proxy`` is a proxy's error answer
    in place of carrying the request, its status in ``status_code``: the core decides which no
    retry changes.
    """

    kind: FailureKind
    detail: str
    status_code: int | None = None
    headers: Mapping[str, str] | None = None
    content: bytes = b""
    cause: BaseException | None = None
    proxy: str | None = None
    """The proxy that failed, as a message names it (address and where it was configured);
    ``None`` where the request went through no proxy paysdk knows of."""


def proxy_authentication_required(proxy: str | None = None) -> Failure:
    """A 407 answer as the refusal it is: only a proxy answers 407 (RFC 9110), whether or not
    the client knows of one (a merchant's own httpx client routes by itself); ``proxy`` names
    it where it is known."""
    return Failure("proxy", "407 Proxy Authentication Required", status_code=407, proxy=proxy)


if TYPE_CHECKING:  # for type checkers only: building these at import costs every user time
    Step: TypeAlias = Send | Sleep | Read | Emit[T]
    StepResult: TypeAlias = Answer | Opened | Failure | bytes | None
"""What a shell sends back into a plan: what came of a Send (an answer, an opened stream or a
failure), of a Read (a chunk of the body, ``b""`` at its end, or a failure), or of a Sleep or
an Emit (``None``)."""

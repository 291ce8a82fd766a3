"""``PaySDKError``, the root of the tree, and how an error is pickled and copied: rebuilt from
its attributes without ``__init__`` (``_unpickle``, which every pickle names
``paysdk._errors._unpickle``, where the package puts it), with a secret key the server echoed
blotted out of the answer's bytes and headers it keeps (``blotted_answer``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, cast


class PaySDKError(Exception):
    """The base of every exception paysdk raises.

    ``attempts`` is how many requests the call made before giving up (1 where none was retried).
    """

    message: str
    attempts: int = 1

    def __init__(self, message: str) -> None:
        """Raised by paysdk; your code catches it (or raises it in a test's fake).

        Args:
            message: what went wrong and, where the caller can fix it, what to change.
        """
        super().__init__(message)
        self.message = message

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled with its attributes and rebuilt without __init__, whose keyword-only arguments
        # (status_code=, reference=...) the exception's args do not hold.
        return (_unpickle, (type(self), self.args), self.__dict__)


def _unpickle(cls: type[PaySDKError], args: tuple[Any, ...]) -> PaySDKError:
    return cls.__new__(cls, *args)


def blotted_answer(
    content: bytes, headers: Mapping[str, str], scrub: Callable[[str], str]
) -> tuple[bytes, Mapping[str, str]] | None:
    """``content`` and ``headers`` with the secret key blotted out (``scrub``), if either held
    it; ``None`` if neither did. Bytes are read and written as Latin-1, which keeps each one,
    UTF-8 or not; ``httpx.Headers`` stay ``httpx.Headers``, repeated fields and all."""
    found: object = getattr(headers, "raw", None)  # httpx.Headers: the bytes as received
    raw = cast("list[tuple[bytes, bytes]] | None", found if isinstance(found, list) else None)
    pairs: list[tuple[str, str]] = (
        list(headers.items())
        if raw is None
        else [(name.decode("latin-1"), value.decode("latin-1")) for name, value in raw]
    )
    blotted_pairs = [(scrub(name), scrub(value)) for name, value in pairs]
    received = content.decode("latin-1")
    written = scrub(received)
    if written == received and blotted_pairs == pairs:
        return None
    if raw is None:
        return written.encode("latin-1"), dict(blotted_pairs)
    remade = cast("Callable[[list[tuple[bytes, bytes]]], Mapping[str, str]]", type(headers))
    kept = remade(
        [(name.encode("latin-1"), value.encode("latin-1")) for name, value in blotted_pairs]
    )
    return written.encode("latin-1"), kept

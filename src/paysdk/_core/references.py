"""What a payment reference may be, the rules in one place: verify's InvalidReferenceError and
callback parsing's InvalidCallbackError say the same words, before any request is sent."""

from __future__ import annotations

import re
import unicodedata
from typing import Final

from .._errors import InvalidReferenceError

__all__ = ["MAX_REFERENCE_LENGTH", "check_reference", "is_plain", "reference_problem"]

MAX_REFERENCE_LENGTH: Final = 256
_PLAIN_REFERENCE: Final = re.compile(rf"[A-Za-z0-9_.~-]{{1,{MAX_REFERENCE_LENGTH}}}")
_INVISIBLE: Final = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
"""Unicode categories refused in references: controls, bidi/zero-width formats, separators."""


def reference_problem(reference: object) -> str | None:
    """Why ``reference`` cannot be a payment reference, or ``None`` if it can."""
    if isinstance(reference, str) and is_plain(reference):
        return None
    if not isinstance(reference, str):
        return f"a reference must be a str, not {type(reference).__name__}"
    if not reference.strip():
        return "the reference is empty"
    if len(reference) > MAX_REFERENCE_LENGTH:
        return f"the reference is {len(reference)} characters long; at most {MAX_REFERENCE_LENGTH}"
    if reference != reference.strip():
        return "the reference has leading or trailing whitespace"
    if reference in (".", ".."):
        return f"{reference!r} is not a reference"
    printable_ascii = reference.isascii() and reference.isprintable()  # the common case, at C speed
    if not printable_ascii and any(unicodedata.category(ch) in _INVISIBLE for ch in reference):
        return "the reference contains control or invisible formatting characters"
    return None


def is_plain(reference: str) -> bool:
    """Only unreserved URL characters, and not ``.`` or ``..``: a reference that passes every
    rule and is its own path segment. The common case, checked in one step."""
    return _PLAIN_REFERENCE.fullmatch(reference) is not None and reference not in (".", "..")


def check_reference(reference: object) -> str:
    problem = reference_problem(reference)
    if problem is not None:
        raise InvalidReferenceError(problem)
    assert isinstance(reference, str)
    return reference

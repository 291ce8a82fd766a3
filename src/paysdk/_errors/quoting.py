"""A value shown in a message: bounded, since a server or caller may send any length, and
escaped, so that it reads on one line as what it is."""

from __future__ import annotations

import sys
from collections.abc import Callable

QUOTED_MAX = 64
"""A string or an int is quoted in a message up to this many characters (an int: digits)."""
REPR_MAX = 200
"""Any other value's repr is quoted up to this many: cut sooner, a timedelta's or a Decimal's
would lose what it says; uncut, a list of a million items would fill the message."""


def quoted(value: object, scrub: Callable[[str], str] | None = None, *, code: bool = False) -> str:
    """``value`` as a message shows it: its repr, cut (a string the service sent blotted of the
    key by ``scrub`` first), or what an int too long to print is.
    A ``code`` (a currency, ASCII by the contract, or a reference set beside the one asked
    for) shows each other character as an escape, so ``'\\u212aES'``, with a Kelvin sign,
    never reads as ``'KES'``."""
    if isinstance(value, str):
        text = value if scrub is None else scrub(value)
        shown = ascii if code else repr
        if len(text) > QUOTED_MAX:
            return f"{shown(text[:QUOTED_MAX])}... ({len(text):,} characters)"
        return shown(text)
    try:
        text = repr(value)
    except ValueError:  # an int past sys.get_int_max_str_digits(): an order's amount may be any
        return f"an integer of over {sys.get_int_max_str_digits():,} digits"
    if isinstance(value, int) and len(text) > QUOTED_MAX:  # JSON carries 4,300 digits
        return f"{text[:QUOTED_MAX]}... ({len(text.lstrip('-')):,} digits)"
    if len(text) > REPR_MAX:  # an argument may be any object
        return f"{text[:REPR_MAX]}... ({len(text):,} characters)"
    return text


DETAIL_MAX = 500
"""How many characters of a failure's own words a message quotes: a parser's error quotes the
line it refused, which a server may make 100 KB long."""


def bounded_detail(detail: str) -> str:
    """``detail`` (a failure's own words), its first ``DETAIL_MAX`` characters if it is longer,
    saying how long it was."""
    if len(detail) <= DETAIL_MAX:
        return detail
    return f"{detail[:DETAIL_MAX]}... ({len(detail):,} characters)"


_BODY_EXCERPT = 200


def body_excerpt(content: bytes) -> str:
    """A short, single-line, escaped view of a body, safe to put in a message or a log."""
    text = content[: _BODY_EXCERPT * 4].decode("utf-8", errors="replace")
    excerpt = text[:_BODY_EXCERPT].encode("unicode_escape").decode("ascii")
    truncated = len(text) > _BODY_EXCERPT or len(content) > _BODY_EXCERPT * 4
    return excerpt + ("..." if truncated else "")

"""Reading a body whose strings hold half an emoji or bytes that are not UTF-8.

A string cut mid-emoji (a lone surrogate escape such as ``"\\ud83d"``) or a Latin-1 byte is no
text pydantic's JSON parser reads, so one such customer name would fail a whole list. Each
offending piece is read as U+FFFD, the replacement character, on every path the same way. The
repair runs only after the strict parse fails as not JSON: a well-formed body costs nothing more.
"""

from __future__ import annotations

import codecs
import json
import re
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from pydantic import ValidationError

REPLACEMENT: Final = "\ufffd"
BOM: Final = codecs.BOM_UTF8
"""A byte order mark, which some servers' encoders write before the JSON."""
_LONE_SURROGATE: Final = re.compile("[\ud800-\udfff]")
"""A surrogate left in decoded text: a pair's escapes decode to one character, so any is lone."""


def not_utf8(data: bytes, offset: int = 0, *, final: bool = True) -> str | None:
    """Where ``data`` (a body from byte ``offset`` on) first holds a byte that is not UTF-8, in
    words (``bytes that are not UTF-8 (the first, 0xff, at byte 12)``), or ``None`` if it is all
    UTF-8: the decoder reads such a byte as U+FFFD, which the service never sent, so an error says
    what it did send. Unless ``final``, a character cut at the end is not counted."""
    try:
        codecs.utf_8_decode(data, "strict", final)
    except UnicodeDecodeError as exc:
        at = offset + exc.start
        return f"bytes that are not UTF-8 (the first, 0x{data[exc.start]:02x}, at byte {at:,})"
    return None


def not_json(exc: ValidationError) -> bool:
    """Whether the parse failed before any validation: the body is not JSON as pydantic reads it."""
    return exc.error_count() == 1 and exc.errors(include_url=False)[0]["type"] == "json_invalid"


def repaired_json(body: bytes) -> bytes | None:
    """``body``, which the strict parse refused, as UTF-8 JSON with each undecodable byte and
    lone surrogate escape replaced by U+FFFD; ``None`` when it is not JSON even so (the strict
    parse's error then stands)."""
    try:
        value = json.loads(body.decode("utf-8", errors="replace"))
        text = json.dumps(value, ensure_ascii=False)
    except (ValueError, RecursionError):  # a number past Python's digits is a ValueError too
        return None
    return _LONE_SURROGATE.sub(REPLACEMENT, text).encode()


def without_lone_surrogates(value: object) -> object:
    """``value`` (decoded by ``json`` from text holding a ``\\u`` escape) with each lone
    surrogate in its strings replaced by U+FFFD; ``value`` itself when it holds none."""
    text = json.dumps(value, ensure_ascii=False)
    if _LONE_SURROGATE.search(text) is None:
        return value
    return json.loads(_LONE_SURROGATE.sub(REPLACEMENT, text))

"""Text the command prints, made safe: a string from the service, a customer, a ledger or a
handler may hold what a terminal acts on (``ESC [2J``, C1 ``CSI``, a newline, a bidi override) or
a spreadsheet runs (``=1+1``), or the secret key a hostile or broken server echoed. Each passes
through `printable` (``_core.terminal``'s, shared with the sandbox's request log), `table_cell`,
`part_text`, `json_text` (``--json``) or `spreadsheet_cell` (CSV), each of which blots out the
key the command was given (`hide_key`) before anything else, in every output form.
"""

from __future__ import annotations

import contextvars
import json
import math
import re
from collections.abc import Container, Generator, Iterable
from contextlib import contextmanager
from typing import cast

from .._core.config import blot_key
from .._core.terminal import BEYOND_JSON, LOOKALIKE_SPACES
from .._core.terminal import printable as terminal_printable

__all__ = [
    "Code",
    "cell_text",
    "cells_text",
    "hide_key",
    "hiding_keys",
    "json_text",
    "part_text",
    "printable",
    "spreadsheet_cell",
    "table_cell",
]

_JSON_RAW = re.compile(f"[{BEYOND_JSON}{LOOKALIKE_SPACES}]")
_END_SPACES = re.compile("^ +| +$")
_PART_MARKS = re.compile('[,<>()="]')

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""A cell starting with one of these is a formula to a spreadsheet (OWASP's list)."""
_SEMICOLON_CELL = re.compile(f';(?="*[{re.escape("".join(FORMULA_STARTS))}])')
"""A ``;`` before a formula (past any quotes): a spreadsheet whose locale separates cells with
``;`` (Excel in much of Europe) starts a cell there, so ``a;=1+1`` holds the formula ``=1+1``."""
MISSING = "-"
"""What a table or CSV cell shows for a value the service left out."""


_HIDDEN_KEY: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "paysdk_cli_hidden_key", default=None
)
"""The secret key the running command was given (`hide_key`), which its output blots out."""


@contextmanager
def hiding_keys() -> Generator[None, None, None]:
    """Scope a command's run: the key `hide_key` registers in it is forgotten at its end, so a
    second command run in the same process (a test) blots its own key alone."""
    token = _HIDDEN_KEY.set(None)
    try:
        yield
    finally:
        _HIDDEN_KEY.reset(token)


def hide_key(key: str | None) -> None:
    """Have everything the command prints from here on show ``key`` as ``<secret key>``: a
    server may echo the key it was sent into any field (a reference, a customer's name).

    Args:
        key: the secret key the command sends; ``None`` (none given) blots nothing.
    """
    _HIDDEN_KEY.set(key)


def blotted(text: str) -> str:
    """``text`` with the key `hide_key` registered blotted out, as sent and in the escaped
    spellings of JSON and a repr (``blot_key``); ``text`` itself when there is none."""
    key = _HIDDEN_KEY.get()
    return text if key is None else blot_key(text, key)


def printable(text: str, *, keep_newlines: bool = False) -> str:
    """``text``, the key blotted out (`blotted`), with every control character shown as an
    escape (``_core.terminal.printable``).

    Args:
        text: a string from the service, a customer, a ledger, a handler or a client.
        keep_newlines: keep ``\\n`` as line breaks, for a body of several lines.

    Returns:
        The text, safe to write to a terminal.
    """
    return terminal_printable(blotted(text), keep_newlines=keep_newlines)


def json_text(data: object, indent: int | None = 2, *, ascii_only: bool = False) -> str:
    """``data`` as exact JSON, safe on a terminal: what ``json`` writes raw (DEL, C1 and bidi
    controls, the separators, spaces other than the ASCII one, lone surrogates) is escaped as
    ``\\uXXXX``, which parses back to the very same strings.

    Args:
        data: what to write, as ``json.dumps`` takes it.
        indent: spaces per level; ``None`` for one line.
        ascii_only: every character beyond ASCII escaped too, for an output whose encoding
            cannot write them all (still the very same strings, parsed back).

    Returns:
        The JSON text.
    """
    text = _dumps(data, indent, ascii_only)
    if blotted(text) != text:  # the key echoed: blotted in each string, so the JSON stays JSON
        text = _dumps(_blotted_strings(data), indent, ascii_only)
    return _JSON_RAW.sub(_json_escape, text)


def _dumps(data: object, indent: int | None, ascii_only: bool) -> str:
    """``data`` as ``json`` writes it, each float JSON has no number for as ``null``."""
    try:
        return json.dumps(data, indent=indent, ensure_ascii=ascii_only, allow_nan=False)
    except ValueError:  # a float JSON has no number for: NaN, or infinity (the service's 1e400)
        return json.dumps(_finite(data), indent=indent, ensure_ascii=ascii_only, allow_nan=False)


def _blotted_strings(data: object) -> object:
    """``data`` with the key blotted out of each string in it, names of members included: the
    text ``json`` writes of a key ending in a backslash, blotted, would end a string early."""
    if isinstance(data, str):
        return blotted(data)
    if isinstance(data, dict):
        items = cast("dict[object, object]", data).items()
        return {_blotted_strings(key): _blotted_strings(value) for key, value in items}
    if isinstance(data, (list, tuple)):
        return [_blotted_strings(item) for item in cast("list[object]", data)]
    return data


def _finite(data: object) -> object:
    """``data`` with each float JSON has no number for (NaN, an infinity) as ``None``, as the
    models dump one: ``json`` would write ``NaN`` or ``Infinity``, which no strict reader
    (``jq``, JavaScript's ``JSON.parse``) takes."""
    if isinstance(data, float) and not math.isfinite(data):
        return None
    if isinstance(data, dict):
        return {key: _finite(value) for key, value in cast("dict[object, object]", data).items()}
    if isinstance(data, (list, tuple)):
        return [_finite(item) for item in cast("list[object]", data)]
    return data


def _json_escape(match: re.Match[str]) -> str:
    """A character as JSON escapes it: ``\\uXXXX``, or a surrogate pair beyond U+FFFF (a tag
    character), as ``\\uXXXX`` takes four hex digits only."""
    code = ord(match[0])
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


class Code(str):
    """Text the service contract makes ASCII (a status, a currency code): a table shows each
    other character of it as an escape, so ``COMPL\\u0415TED``, with a Cyrillic letter, is never
    read as ``COMPLETED``, nor ``\\uff35SD`` as ``USD``."""

    __slots__ = ()


def cell_text(value: object) -> str:
    """A table cell's text: ``-`` for a value left out (``None``), ``true``/``false`` for a bool;
    text as it is (a `Code` stays one)."""
    if isinstance(value, str):
        return value
    if value is None:
        return MISSING
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def cells_text(names: Iterable[str], values: Iterable[object], codes: Container[str]) -> list[str]:
    """A table row's cells (``cell_text``), each text value of a column in ``codes`` (one the
    service contract makes ASCII) a `Code`, so that one beyond ASCII is escaped whole."""
    pairs = zip(names, values, strict=True)
    return [cell_text(Code(v) if n in codes and isinstance(v, str) else v) for n, v in pairs]


def part_text(value: object) -> str:
    """One of the parts a cell is made of (a customer's name beside their ``<address>``, a
    product's name before its ``(amount)``, a metadata key or value between ``=`` and ``,``):
    in double quotes, a quote within doubled, when it holds a mark the parts are told apart
    by, so a value ``A1, refund_approved=true`` never reads as two."""
    text = blotted(cell_text(value))  # before a quote within is doubled
    if text and _PART_MARKS.search(text) is None:
        return text
    return '"' + text.replace('"', '""') + '"'


def table_cell(text: str) -> str:
    """A table cell as shown: ``printable``, each backslash doubled (so the text ``\\u200b``
    never reads as the escape of a zero-width space), and a space at either end shown as
    ``\\x20`` (a table pads its cells with spaces, where ``order-1042 `` would read as
    ``order-1042``). Spaces within, as in a customer's name, stay spaces; a `Code` beyond
    ASCII is escaped whole."""
    shown = printable(blotted(text).replace("\\", "\\\\"))  # blotted before the doubling
    if isinstance(text, Code) and not shown.isascii():
        shown = shown.encode("ascii", "backslashreplace").decode("ascii")
    return _END_SPACES.sub(lambda match: "\\x20" * len(match[0]), shown)


def spreadsheet_cell(value: object) -> str | int:
    """One CSV cell: an integer stays a number; text is made printable and, when a spreadsheet
    would run it as a formula, starts with a ``'`` (so ``=1+1`` shows as the text ``=1+1``), as
    does each part after a ``;`` that would (``a;'=1+1``): a spreadsheet reading ``;`` as the
    separator, as OWASP warns, makes a cell of it.

    Args:
        value: an integer, a boolean, text, or ``None`` (a missing value, shown as ``-``).

    Returns:
        The cell, for ``csv.writer``.
    """
    if value is None or isinstance(value, bool):
        return cell_text(value)
    if isinstance(value, int):
        return value
    text = _SEMICOLON_CELL.sub(";'", printable(str(value)))
    return f"'{text}" if text.startswith(FORMULA_STARTS) else text

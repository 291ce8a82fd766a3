"""Text the command prints, made safe for a terminal and a spreadsheet.

Strings from the service, a customer, a ledger or a callback handler can hold anything. A
terminal acts on control characters (``ESC [2J`` clears the screen, C1 ``CSI`` does what
``ESC [`` does, a newline adds a line, a bidi override reorders what is shown), and a spreadsheet
runs a cell that starts with ``=`` as a formula. Every such string the command prints passes
through `printable` (tables, lines and errors), `json_text` (``--json``) or `spreadsheet_cell`
(``--csv``).
"""

from __future__ import annotations

import json
import re

__all__ = ["FORMULA_STARTS", "MISSING", "json_text", "printable", "spreadsheet_cell"]

_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
"""Bidi controls: the Arabic letter mark, LRM and RLM, the embeddings, overrides and isolates."""
_BEYOND_JSON = rf"\x7f-\x9f{_BIDI}\u2028\u2029\ud800-\udfff"
"""What JSON leaves raw but a terminal acts on: DEL, C1, bidi controls, the line and paragraph
separators, and lone surrogates (which no UTF-8 stream can carry)."""
_CONTROL = re.compile(rf"[\x00-\x1f{_BEYOND_JSON}]")
_CONTROL_BUT_NEWLINE = re.compile(rf"[\x00-\x09\x0b-\x1f{_BEYOND_JSON}]")
_JSON_RAW = re.compile(f"[{_BEYOND_JSON}]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""A cell starting with one of these is a formula to a spreadsheet (OWASP's list)."""
MISSING = "-"
"""What a table or CSV cell shows for a value the service left out."""


def _visible(match: re.Match[str]) -> str:
    char = match[0]
    code = ord(char)
    return _NAMED.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def printable(text: str, *, keep_newlines: bool = False) -> str:
    """``text`` with every control character shown as an escape (``\\x1b``, ``\\n``, ``\\u202e``).

    C0, DEL, C1, bidi controls, U+2028/U+2029 and lone surrogates are replaced; everything else,
    accents and scripts included, is left as it is.

    Args:
        text: a string from the service, a customer, a ledger or a handler.
        keep_newlines: keep ``\\n`` (and ``\\r\\n``) as line breaks, for a body of several
            lines; a lone ``\\r``, which would overwrite the line, is still shown as ``\\r``.

    Returns:
        The text, safe to write to a terminal.
    """
    if keep_newlines:
        return _CONTROL_BUT_NEWLINE.sub(_visible, text.replace("\r\n", "\n"))
    return _CONTROL.sub(_visible, text)


def json_text(data: object, indent: int | None = 2) -> str:
    """``data`` as exact JSON that is also safe on a terminal.

    ``json`` escapes C0 controls itself; DEL, C1, bidi controls, the separators and lone
    surrogates it would write raw are written as ``\\uXXXX`` escapes, which parse back to the
    very same strings.

    Args:
        data: what to write, as ``json.dumps`` takes it.
        indent: spaces per level; ``None`` for one line.

    Returns:
        The JSON text.
    """
    text = json.dumps(data, indent=indent, ensure_ascii=False)
    return _JSON_RAW.sub(lambda match: f"\\u{ord(match[0]):04x}", text)


def spreadsheet_cell(value: object) -> str | int:
    """One CSV cell: an integer stays a number; text is made printable and, when a spreadsheet
    would run it as a formula, starts with a ``'`` (so ``=1+1`` shows as the text ``=1+1``).

    Args:
        value: an integer, a boolean, text, or ``None`` (a missing value, shown as ``-``).

    Returns:
        The cell, for ``csv.writer``.
    """
    if value is None:
        return MISSING
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return value
    text = printable(str(value))
    return f"'{text}" if text.startswith(FORMULA_STARTS) else text

"""Text made safe to write to a terminal: its control characters shown as escapes.

A terminal acts on control characters (``ESC [2J`` clears the screen, C1 ``CSI`` does what
``ESC [`` does, a newline adds a line, a bidi override reorders what is shown). Whatever paysdk
writes to one of a string it did not choose (the ``paysdk`` command's output, the sandbox's
request log) passes through `printable`.
"""

from __future__ import annotations

import re

__all__ = ["BEYOND_JSON", "printable"]

_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
"""Bidi controls: the Arabic letter mark, LRM and RLM, the embeddings, overrides and isolates."""
BEYOND_JSON = rf"\x7f-\x9f{_BIDI}\u2028\u2029\ud800-\udfff"
"""What JSON leaves raw but a terminal acts on: DEL, C1, bidi controls, the line and paragraph
separators, and lone surrogates (which no UTF-8 stream can carry); a regex character class."""
_CONTROL = re.compile(rf"[\x00-\x1f{BEYOND_JSON}]")
_CONTROL_BUT_NEWLINE = re.compile(rf"[\x00-\x09\x0b-\x1f{BEYOND_JSON}]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _visible(match: re.Match[str]) -> str:
    char = match[0]
    code = ord(char)
    return _NAMED.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def printable(text: str, *, keep_newlines: bool = False) -> str:
    """``text`` with every control character shown as an escape (``\\x1b``, ``\\n``, ``\\u202e``).

    C0, DEL, C1, bidi controls, U+2028/U+2029 and lone surrogates are replaced; everything else,
    accents and scripts included, is left as it is.

    Args:
        text: a string from the service, a customer, a ledger, a handler or a client.
        keep_newlines: keep ``\\n`` (and ``\\r\\n``) as line breaks, for a body of several
            lines; a lone ``\\r``, which would overwrite the line, is still shown as ``\\r``.

    Returns:
        The text, safe to write to a terminal.
    """
    if keep_newlines:
        return _CONTROL_BUT_NEWLINE.sub(_visible, text.replace("\r\n", "\n"))
    return _CONTROL.sub(_visible, text)

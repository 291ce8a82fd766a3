"""Text made safe to write to a terminal: its control characters shown as escapes.

A terminal acts on control characters (``ESC [2J`` clears the screen, C1 ``CSI`` does what
``ESC [`` does, a newline adds a line, a bidi override reorders what is shown). Whatever paysdk
writes to one of a string it did not choose (the ``paysdk`` command's output, the sandbox's
request log) passes through `printable`.
"""

from __future__ import annotations

import re

__all__ = ["BEYOND_JSON", "LOOKALIKE_SPACES", "printable"]

_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
"""Bidi controls: the Arabic letter mark, LRM and RLM, the embeddings, overrides and isolates."""
_INVISIBLE = (
    "\u00ad\u0600-\u0605\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200d\u2060-\u2064"
    "\u206a-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f"
)
"""The other format characters (Unicode's ``Cf``): zero-width spaces and joiners, the word
joiner, the byte order mark, the soft hyphen, tags. A terminal shows none of them, so
``order-1042`` and ``order-1042`` followed by one look the same; references refuse them too."""
_IGNORABLE = (
    "\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180d\u180f\u2065\u3164\ufe00-\ufe0f\uffa0"
    "\ufff0-\ufff8\U000e0000\U000e0002-\U000e001f\U000e0080-\U000e0fff"
)
"""Unicode's other default-ignorable code points, which are no format characters: the Hangul
fillers (a blank as wide as a letter), the combining grapheme joiner, the variation selectors.
A terminal shows each as nothing, or a blank, as it does a format character."""
_BLANK = "\u2800"
"""The blank Braille pattern: a symbol, neither space nor ignorable, that a terminal draws as a
blank, so ``order-1042`` followed by one reads as ``order-1042`` in a table padded with spaces."""
BEYOND_JSON = rf"\x7f-\x9f{_BIDI}{_INVISIBLE}{_IGNORABLE}{_BLANK}\u2028\u2029\ud800-\udfff"
"""What JSON leaves raw but a terminal acts on or does not show: DEL, C1, bidi controls, the
other format characters and default-ignorable code points, the blank Braille pattern, the line
and paragraph separators, and lone surrogates (which no UTF-8 stream can carry); a regex
character class."""
LOOKALIKE_SPACES = "\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000"
"""Every space but the ASCII one (Unicode's ``Zs``): the no-break, en, em, figure, thin and
ideographic spaces. A terminal shows each as one or two blanks, so ``order 1042`` with a no-break
space looks as the one with a space; a regex character class."""
_CONTROL = re.compile(rf"[\x00-\x1f{BEYOND_JSON}{LOOKALIKE_SPACES}]")
_CONTROL_BUT_NEWLINE = re.compile(rf"[\x00-\x09\x0b-\x1f{BEYOND_JSON}{LOOKALIKE_SPACES}]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _visible(match: re.Match[str]) -> str:
    char = match[0]
    code = ord(char)
    if char in _NAMED:
        return _NAMED[char]
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def printable(text: str, *, keep_newlines: bool = False) -> str:
    """``text`` with every control character shown as an escape (``\\x1b``, ``\\n``, ``\\u202e``).

    C0, DEL, C1, bidi controls, the other format characters (zero-width, the byte order mark,
    tags) and default-ignorable code points (Hangul fillers, variation selectors), the blank
    Braille pattern (U+2800), U+2028/U+2029, every space but the ASCII one (``\\xa0``,
    ``\\u3000``) and lone surrogates are replaced; everything else, accents and scripts
    included, is left as it is. ``keep_newlines`` keeps ``\\n`` (and ``\\r\\n``) as line
    breaks; a lone ``\\r``, which would overwrite the line, is still shown as ``\\r``.
    """
    if keep_newlines:
        return _CONTROL_BUT_NEWLINE.sub(_visible, text.replace("\r\n", "\n"))
    return _CONTROL.sub(_visible, text)

"""How paysdk reads a number a person gives it, as a flag or an environment variable
(``--limit``, ``--port``, ``PAYSDK_MAX_RETRIES``, ``--timeout``): in one place, and strictly."""

from __future__ import annotations

import math
import re

__all__ = ["SECONDS_RULE", "TOO_SMALL", "read_seconds", "read_whole_number", "underflows"]

_WHOLE = re.compile(r"-?[0-9]+")
"""ASCII digits, a ``-`` before them allowed: ``int()`` also reads ``1_0`` as 10, ``+5``, ``5``
between blanks and digits of other scripts (a fullwidth 5, U+FF15), none of which a count means."""


def read_whole_number(text: str) -> int | float | None:
    """The whole number ``text`` spells in ASCII digits, a ``-`` before them allowed;
    ``math.inf`` (or ``-math.inf``) for more digits than ``int()`` reads, which every range
    refuses; ``None`` for anything else (``1_0``, ``+5``, `` 5``, a fullwidth 5, ``1.0``)."""
    if _WHOLE.fullmatch(text) is None:
        return None
    try:
        return int(text, 10)
    except ValueError:  # more digits than int() reads
        return -math.inf if text.startswith("-") else math.inf


_SECONDS = re.compile(r"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")
"""ASCII digits with a decimal point allowed (``2.5``, ``.5``, ``5.``), a ``-`` before them
allowed: ``float()`` also reads ``1_0``, ``+5``, ``5`` between blanks, ``1e3``, ``nan``, ``inf``
and digits of other scripts, none of which a number of seconds is spelt as here."""

SECONDS_RULE = "ASCII digits, a decimal part allowed: 30, 2.5"
"""How a number of seconds is spelt (``read_seconds``), in a flag's and a variable's error."""


def read_seconds(text: str) -> float | None:
    """The number of seconds ``text`` spells by ``SECONDS_RULE`` (``--timeout``,
    ``PAYSDK_TIMEOUT``), as ``float`` reads it (``inf`` for thousands of digits, ``0.0`` for a
    number too small for a float: see ``underflows``); ``None`` for any other spelling."""
    return None if _SECONDS.fullmatch(text) is None else float(text)


TOO_SMALL = "too small, it reads as 0 seconds"
"""Why a number of seconds that ``underflows`` is refused, in a flag's and a variable's error."""


def underflows(text: str, value: float) -> bool:
    """Whether ``text``, which ``read_seconds`` read as ``value``, is a positive number too small
    for a float (``0.000...01`` in thousands of digits): it reads as 0, which no timeout is."""
    if value != 0 or text.startswith("-"):
        return False
    return any(digit in "123456789" for digit in text)

"""How paysdk reads a whole number a person gives it, as a flag or an environment variable
(``--limit``, ``--port``, ``PAYSDK_MAX_RETRIES``): in one place, and strictly."""

from __future__ import annotations

import math
import re

__all__ = ["read_whole_number"]

_WHOLE = re.compile(r"-?[0-9]+")
"""ASCII digits, a ``-`` before them allowed: ``int()`` also reads ``1_0`` as 10, ``+5``, ``5``
between blanks and digits of other scripts (a fullwidth 5, U+FF15), none of which a count means."""


def read_whole_number(text: str) -> int | float | None:
    """The whole number ``text`` spells in ASCII digits, a ``-`` before them allowed.

    Args:
        text: the value as given.

    Returns:
        The number; ``math.inf`` (or ``-math.inf``) for one of more digits than ``int()`` reads
        (``sys.get_int_max_str_digits()``), which every range refuses; ``None`` for anything
        else (``1_0``, ``+5``, `` 5``, a fullwidth 5, ``1.0``).
    """
    if _WHOLE.fullmatch(text) is None:
        return None
    try:
        return int(text, 10)
    except ValueError:  # more digits than int() reads
        return -math.inf if text.startswith("-") else math.inf

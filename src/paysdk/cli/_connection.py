"""The connection options every command that calls the service takes, and the client they make."""

from __future__ import annotations

import argparse
import math
import os
import re
import sys

import paysdk
from paysdk._core.environment import ENV_BASE_URL, ENV_MAX_RETRIES, ENV_SECRET_KEY, ENV_TIMEOUT
from paysdk._core.numbers import (
    SECONDS_RULE,
    TOO_SMALL,
    read_seconds,
    read_whole_number,
    underflows,
)
from paysdk._errors.quoting import quoted

from ._command import Command
from ._escape import hide_key


def connection_options() -> Command:
    """A parent parser with ``--secret-key``, ``--base-url``, ``--timeout`` and the rest."""
    client = Command(add_help=False)
    group = client.add_argument_group("connection")
    group.add_argument("--secret-key", help=f"secret key (default: ${ENV_SECRET_KEY})")
    group.add_argument("--base-url", help=f"service address (default: ${ENV_BASE_URL})")
    group.add_argument(
        "--timeout", type=positive_float, help=f"seconds (default: ${ENV_TIMEOUT}, else 30)"
    )
    group.add_argument(
        "--max-retries",
        type=whole_number,
        help=f"retries of transient errors (default: ${ENV_MAX_RETRIES}, else 2)",
    )
    group.add_argument(
        "--allow-insecure-http", action="store_true", help="allow http:// to a non-local host"
    )
    group.add_argument(
        "-v", "--verbose", action="store_true", help="show each attempt and retry on stderr"
    )
    return client


def client_from(args: argparse.Namespace) -> paysdk.Client:
    """The client the connection options describe; an option not given is the client's to
    read from the environment, as the key and the URL are. The key it sends is blotted out of
    all the command prints from then on (`hide_key`): a server may echo it into any field."""
    client = paysdk.Client(
        secret_key=args.secret_key,
        base_url=args.base_url,
        timeout=paysdk.NOT_GIVEN if args.timeout is None else args.timeout,
        max_retries=paysdk.NOT_GIVEN if args.max_retries is None else args.max_retries,
        allow_insecure_http=args.allow_insecure_http,
        account=getattr(args, "account", None),
    )
    hide_key(args.secret_key if args.secret_key is not None else os.environ.get(ENV_SECRET_KEY))
    return client


def source_of(args: argparse.Namespace, flag: str, variable: str) -> str:
    """Where a connection option's value came from: ``flag`` if it was given, else ``variable``."""
    return flag if getattr(args, flag[2:].replace("-", "_"), None) is not None else variable


def utf8_text(text: str) -> str:
    """An argparse type: text that UTF-8 can carry. Bytes that are not UTF-8 (typed on a Latin-1
    terminal, say) reach Python as lone surrogates, which no database or URL can hold.

    Raises:
        argparse.ArgumentTypeError: ``text`` holds such bytes.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise argparse.ArgumentTypeError(
            f"not UTF-8 text: {text!r} (is the terminal's encoding UTF-8?)"
        ) from None
    return text


def payment_reference(text: str) -> str:
    """An argparse type: a reference ``verify`` takes, by its rule (``_core/references.py``), so
    a payment the command makes is one the client can verify.

    Raises:
        argparse.ArgumentTypeError: a reference ``verify`` would refuse, saying why.
    """
    from .._core.references import reference_problem

    problem = reference_problem(utf8_text(text))
    if problem is not None:
        said = problem if repr(text) in problem else f"{problem}: {text!r}"
        raise argparse.ArgumentTypeError(f"{said} (verify refuses it)")
    return text


def whole_number(
    text: str, low: float = -math.inf, high: float = math.inf, expected: str = "a whole number"
) -> int:
    """An argparse type: a whole number of ASCII digits from ``low`` to ``high`` (by default,
    its range is checked where it is used); ``expected`` says what it must be, in the error."""
    value = read_whole_number(text)
    if not isinstance(value, int) or not low <= value <= high:  # None, or past int()'s digits
        raise argparse.ArgumentTypeError(f"expected {expected}, not {_shown_number(text)}")
    return value


def _shown_number(text: str) -> str:
    """``text``, a flag's value that is no number in range, as an error quotes it: cut once
    long, and a whole number too long for ``int`` to read said to be so."""
    digits = text.strip().removeprefix("-").removeprefix("+").replace("_", "")
    if len(digits) > sys.get_int_max_str_digits() > 0 and digits.isascii() and digits.isdigit():
        return f"a number of {len(digits):,} digits (at most {sys.get_int_max_str_digits():,})"
    if read_whole_number(text) is None and _int_reads(text):  # 1_0, +5, " 5", a fullwidth 5
        return f"{quoted(text)} (ASCII digits only)"
    return quoted(text)


def _int_reads(text: str) -> bool:
    """Whether ``int()`` reads ``text`` as a whole number (which a flag's may not be)."""
    try:
        int(text, 10)
    except ValueError:
        return False
    return True


def positive_count(text: str) -> int:
    """An argparse type: a whole number of at least 1 (``--limit``, ``--max-discrepancies``)."""
    return whole_number(text, 1, expected="a positive whole number")


def positive_float(text: str) -> float:
    """An argparse type: a positive number of seconds, spelt as ``PAYSDK_TIMEOUT`` is
    (``read_seconds``): ``float()`` also reads ``1_0``, ``+5``, ``1e3``, ``nan`` and ``inf``."""
    value = read_seconds(text)
    expected = f"expected a positive number of seconds ({SECONDS_RULE}), not {quoted(text)}"
    if value is None or not value > 0:
        said = "" if value is None else _zero(text, value)
        raise argparse.ArgumentTypeError(f"{expected}{said}")
    if math.isinf(value):  # thousands of digits
        raise argparse.ArgumentTypeError(f"{expected}: too large, it reads as infinity")
    return value


def _zero(text: str, value: float) -> str:
    """Why ``text``, a number of seconds ``read_seconds`` read as ``value``, is none, where its
    spelling hides it: written with a digit other than 0 (``0.000...01``), it is too small for a
    float and reads as 0; spelt otherwise (``0.000``), it is 0. ``""`` for any other."""
    if underflows(text, value):
        return f": {TOO_SMALL}"
    if value != 0 or text in ("0", "-0") or text.startswith("-"):
        return ""
    return ": it is 0 seconds"


_AMOUNT = re.compile(r"\s*-?[0-9]+(?:_[0-9]+)*\s*", re.ASCII)
"""An amount as ``--amount`` takes it: ASCII digits, ``_`` between groups of them as in a Python
literal (``2_500_000``), blanks around; ``int()`` also reads ``+5`` and other scripts' digits."""


def whole_amount(text: str) -> int:
    """An argparse type: an amount, a whole number of ASCII digits in the service's unit."""
    try:
        if _AMOUNT.fullmatch(text) is None:
            raise ValueError(text)
        return int(text, 10)
    except ValueError:  # also more digits than int() reads
        raise argparse.ArgumentTypeError(
            f"expected a whole number such as 2500000, not {_shown_number(text)}: amounts are "
            "integers in the unit the service reports them in (paysdk never converts or rounds "
            f"them){_in_minor_units(text)}"
        ) from None


_CENTS = re.compile(r"\s*([0-9]+)\.([0-9]{2})\s*")
"""An amount written in whole units with two decimal places: ``25000.00``."""


def _in_minor_units(text: str) -> str:
    """For ``25000.00``, what it is in minor units (``2500000``), should those be the service's
    unit; ``""`` for any other text."""
    match = _CENTS.fullmatch(text)
    if match is None or len(match[1]) > 30:
        return ""
    minor = int(match[1] + match[2])
    return (
        f": {match[1]}.{match[2]} in whole units (naira, dollars) is {minor} in minor units "
        "(kobo, cents), if those are the service's"
    )

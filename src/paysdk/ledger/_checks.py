"""What a ledger checks of what it is given (a table, lease, payment, reason, reference, state)
before any plan is built or I/O done, and the text every database stores as it is."""

from __future__ import annotations

import contextlib
import datetime as dt
import re
from collections.abc import Sequence

from .._core import Expected, check_payment, check_reference
from .._errors import ConfigurationError
from .._errors.quoting import quoted
from .._models.verified import VerifiedPayment
from . import _schema, _statements
from ._errors import AmountOutOfRangeError, UnverifiedPaymentError

_TABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}(\.[A-Za-z_][A-Za-z0-9_]{0,62})?")

_SQLITE_RESERVED = """
    add all alter and as autoincrement between case check collate commit constraint create
    default deferrable delete distinct drop else escape except exists foreign from group
    having if in index insert intersect into is isnull join limit not nothing notnull null
    on or order primary references returning select set table then to transaction union
    unique update using values when where
"""
_POSTGRES_RESERVED = """
    all analyse analyze and any array as asc asymmetric authorization binary both case cast
    check collate collation column concurrently constraint create cross current_catalog
    current_date current_role current_schema current_time current_timestamp current_user
    default deferrable desc distinct do else end except false fetch for foreign freeze from
    full grant group having ilike in initially inner intersect into is isnull join lateral
    leading left like limit localtime localtimestamp natural not notnull null offset on only
    or order outer overlaps placing primary references returning right select session_user
    similar some symmetric table tablesample then to trailing true union unique user using
    variadic verbose when where window with
"""
RESERVED_WORDS = {
    "sqlite": frozenset(_SQLITE_RESERVED.split()),
    "postgresql": frozenset(_POSTGRES_RESERVED.split()),
}
"""The words each database refuses as a bare table or schema name (SQLite 3.40's; PostgreSQL's
reserved keywords, and those only a function or type may be named): the ledger's SQL names its
table unquoted, so every statement on such a table would be a syntax error."""

_TEMPORARY_SCHEMA = re.compile(r"(temp|pg_temp(_[0-9]+)?)\.", re.IGNORECASE)
"""SQLite's ``temp`` and PostgreSQL's ``pg_temp``: a table there is one connection's own."""


def check_table(table: object, backend: str | None = None) -> str:
    """``table``, if it is a plain name that lasts beyond a connection and that ``backend``
    (``"sqlite"`` or ``"postgresql"``; ``None``: not known yet) takes unquoted."""
    if not isinstance(table, str) or _TABLE_NAME.fullmatch(table) is None:
        raise ConfigurationError(
            f"table must be a plain SQL name like {_schema.DEFAULT_TABLE!r} (or schema.name), "
            f"not {quoted(table)}"
        )
    parts = table.lower().split(".")
    words = RESERVED_WORDS.get(backend or "", frozenset())
    reserved = [repr(part) for part in parts if part in words]
    if backend == "sqlite" and parts[-1].startswith("sqlite_"):
        reserved.append("names starting 'sqlite_'")
    if reserved:
        database = "SQLite" if backend == "sqlite" else "PostgreSQL"
        raise ConfigurationError(
            f"table {table!r}: {database} reserves {reserved[0]} for its own use, so every "
            f"statement on it would fail; name it otherwise, like {_schema.DEFAULT_TABLE!r}"
        )
    if _TEMPORARY_SCHEMA.match(table):
        raise ConfigurationError(
            f"table {table!r} is in a temporary schema, which gives each database connection "
            "a table of its own, so each connection would fulfil the same payment again: "
            "name a lasting table"
        )
    return table


MAX_LEASE = dt.timedelta(days=365_000)
"""The longest lease, about 1,000 years: Python's datetime reads a claim's end back only to the
year 9999 (PostgreSQL would store a later one, and every read of the row would fail)."""


def check_lease(lease: object) -> dt.timedelta:
    """A lease as a timedelta; numbers are seconds (one no timedelta holds, such as ``inf`` or
    ``2**70``, is refused like any other bad lease)."""
    given = lease
    if isinstance(lease, (int, float)) and not isinstance(lease, bool):
        with contextlib.suppress(OverflowError, ValueError):  # beyond a timedelta, or NaN
            lease = dt.timedelta(seconds=lease)
    if not isinstance(lease, dt.timedelta) or not dt.timedelta(0) < lease <= MAX_LEASE:
        raise ConfigurationError(
            "lease must be a positive number of seconds, at most 1,000 years (365,000 days: a "
            f"claim's end must be a date Python reads back), not {quoted(given)}"
        )
    return lease


AMOUNTS = range(-(2**63), 2**63)
"""The amounts the ledger records: a signed 64-bit integer (SQLite's ``INTEGER``, PostgreSQL's
``bigint``). The service's are unbounded; a payment beyond is refused before any statement
(``check_payable``), never half-written."""


_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def stored_as_is(text: str) -> bool:
    """Whether every database holds ``text`` as it is: it has no NUL and no lone surrogate."""
    return _UNSTORABLE.search(text) is None


def storable(text: str) -> str:
    """``text`` as every database's text column holds it: a NUL (PostgreSQL refuses it) and lone
    surrogates (no UTF-8 has them) as escapes (``\\x00``, ``\\udc9b``), as ``paysdk`` shows them."""
    if stored_as_is(text):  # the common case: one scan, no copy
        return text
    return _UNSTORABLE.sub(
        lambda found: "\\x00" if found[0] == "\x00" else f"\\u{ord(found[0]):04x}", text
    )


def check_payable(payment: object) -> VerifiedPayment:
    """Only a verified, successful payment can be fulfilled: never a bare reference, and never
    one whose amount the ledger cannot record (AmountOutOfRangeError, a permanent refusal)."""
    if not isinstance(payment, VerifiedPayment):
        raise UnverifiedPaymentError(
            "fulfil_once needs the paysdk.VerifiedPayment that client.verify_callback, confirm "
            f"or verify returned, not {type(payment).__name__}: only a payment the service "
            "confirmed can be fulfilled"
        )
    checked = check_payment(payment, Expected())
    if checked.amount not in AMOUNTS:
        raise AmountOutOfRangeError(
            f"the amount of {quoted(checked.reference, code=True)}, "
            f"{describe_amount(checked.amount)}, is beyond "
            f"what the ledger can record (a signed 64-bit integer, {AMOUNTS.start} to "
            f"{AMOUNTS.stop - 1}): it is not fulfilled, and retrying cannot change that; "
            "check the payment with the service and settle it by hand",
            payment=checked,
        )
    return checked


def describe_amount(amount: int) -> str:
    """``amount`` for a message: its digits, or its size once too long to read (Python refuses to
    write an integer of more than 4300 digits)."""
    bits = amount.bit_length()
    return str(amount) if bits <= 256 else f"an integer of {bits} bits"


MAX_REASON_LENGTH = 1000


def check_reason(reason: object) -> str:
    if not isinstance(reason, str) or not reason.strip():
        raise ConfigurationError(f"a reason must be a non-empty string, not {quoted(reason)}")
    if len(reason) > MAX_REASON_LENGTH:
        raise ConfigurationError(
            f"a reason must be at most {MAX_REASON_LENGTH} characters, not {len(reason)}"
        )
    return reason


def set_aside_target(
    payment: object, reason: str, account: str = ""
) -> tuple[str, str, int, str, str]:
    """What to record for a payment (its own account: ConfigurationError if ``account`` names
    another) or a bare reference (of ``account``): account, reference, amount, and ``storable``
    currency and reason. An amount beyond ``AMOUNTS`` is recorded as 0, the reason saying it."""
    reason = storable(reason)
    if not isinstance(payment, VerifiedPayment):
        return account, check_reference(payment), 0, "", reason
    if account and account != payment.account:
        verified = f"account {payment.account!r}" if payment.account else "an unlabelled client"
        raise ConfigurationError(
            f"{quoted(payment.reference, code=True)} was verified by {verified}, not by account "
            f"{account!r}: "
            "a payment is recorded under the account that verified it, so leave account= out "
            "(or verify it with that account's client); nothing was recorded"
        )
    currency = storable(payment.currency)
    if payment.amount in AMOUNTS:
        return payment.account, payment.reference, payment.amount, currency, reason
    amount = describe_amount(payment.amount)
    noted = f"{reason} (its amount, {amount}, is beyond what the ledger records: stored as 0)"
    return payment.account, payment.reference, 0, currency, noted


def check_references(references: Sequence[str]) -> list[str]:
    """The references ``rows`` looks up; one string is refused (read as its characters, each a
    reference with no row), as is a reference that is not a string."""
    if isinstance(references, (str, bytes)):
        raise ConfigurationError(
            f"rows takes a list of references, not one string ({references[:40]!r}); for one "
            "reference, use row(reference)"
        )
    listed = list(references)
    for reference in listed:
        if not isinstance(reference, str):
            hint = ": pass payment.reference" if isinstance(reference, VerifiedPayment) else ""
            raise ConfigurationError(
                f"a reference is a string, not {type(reference).__name__}{hint}"
            )
    return listed


def check_state(state: object) -> str | None:
    """A state to list rows of: one of the states a row reads as, or ``None`` for all."""
    if state is not None and state not in _statements.STATES:
        raise ConfigurationError(
            f"unknown state {state!a}: expected one of {', '.join(_statements.STATES)}"
        )
    return state

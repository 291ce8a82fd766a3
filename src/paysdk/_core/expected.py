"""Whether a payment may be fulfilled: what the merchant expects, and the check against it."""

from __future__ import annotations

import dataclasses
import decimal
import inspect
import operator
import re
import sys
from collections.abc import Callable, Mapping
from typing import Any, Protocol, SupportsIndex, TypeGuard, cast

from .._errors import (
    ConfigurationError,
    PaymentFailedError,
    PaymentMismatchError,
    UnknownOrderError,
)
from .._errors.quoting import quoted
from .._lazy import publish
from .._models.verified import VerifiedPayment


@dataclasses.dataclass(frozen=True)
class Expected:
    """What the merchant expects a payment to be: its order's amount and currency.

    ``amount`` is in the unit the service reports, as an int (a ``Decimal`` without decimal
    places, as an ORM may hold it, is taken as that int; one written with them, ``2500.00``,
    is refused: it reads as whole units, where the service may count minor units);
    ``currency`` is three ASCII letters, compared with
    the payment's as ``same_currency`` does. ``None`` means "do not check this": give it only
    on purpose.

    Attributes:
        amount: the order's amount, in the unit the service reports; ``None``: not checked.
        currency: the order's currency code, three ASCII letters in any case; ``None``: not
            checked.

    Raises:
        ConfigurationError: an amount that is not a whole number (or a ``Decimal`` written
            with decimal places), or a currency that is not three ASCII letters.
    """

    amount: int | None = None
    currency: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "amount", _whole_amount(self.amount))
        if self.currency is not None and currency_code(self.currency) is None:
            raise ConfigurationError(
                "the expected currency must be a code of three ASCII letters, such as 'NGN', "
                f"with nothing around it; got {quoted(self.currency, code=True)}"
            )


_CODE = re.compile("[A-Za-z]{3}")
"""A currency code: three ASCII letters. Written out, not ``\\w`` or IGNORECASE, which would
let in letters of other scripts (the Kelvin sign matches ``k`` without regard to case)."""


def currency_code(value: object) -> str | None:
    """``value`` as an upper-case currency code, or ``None`` if it is not three ASCII letters.
    Upper-casing is ASCII only: Unicode's case mapping turns the sharp s (U+00DF) into ``SS``
    and the dotless i (U+0131) into ``I``, so a string that is not a code could become one."""
    if not isinstance(value, str) or _CODE.fullmatch(value) is None:
        return None
    return value.upper()  # three ASCII letters: their upper case is ASCII too


def same_currency(expected: object, actual: object) -> bool:
    """Whether two currencies are the same code: both three ASCII letters, equal but for case.
    Anything else (padding, other scripts, fullwidth letters, ligatures) matches nothing, not
    even itself: a currency that is not a code is never taken for one."""
    code = currency_code(expected)
    return code is not None and code == currency_code(actual)


_WHOLE_TEXT = re.compile(r"\s*[-+]?[0-9]+\s*")
"""Text ``int()`` reads as the amount it spells: the advice to convert with ``int()`` fits it
alone (not ``25.00``, which ``int()`` refuses)."""


def _whole_amount(amount: object) -> int | None:
    if amount is None or type(amount) is int:
        return amount
    if isinstance(amount, bool):
        raise ConfigurationError(
            f"the expected amount must be a whole number (int), not {amount!r}: a yes or no "
            "is no amount"
        )
    if isinstance(amount, SupportsIndex):  # an IntEnum's member, numpy's int64: a whole number
        return int(operator.index(amount))
    if isinstance(amount, decimal.Decimal) and amount.is_finite():
        if _has_places(amount):
            raise ConfigurationError(
                f"the expected amount must be a whole number in the unit the service reports, not "
                f"{quoted(amount)}: written with decimal places, it is an amount in whole units "
                "(naira, dollars), while the service may count minor units (kobo, cents): 2500.00 "
                "naira is 250000 kobo, and read as 2500 it would match a payment of 2500 kobo; "
                "pass your order's amount in the service's unit as an int"
            )
        if amount == amount.to_integral():
            digits, limit = amount.adjusted() + 1, sys.get_int_max_str_digits()
            # int() of Decimal("1E+99999999") takes many minutes; 0E+99999999 is one digit
            if limit and digits > limit and not amount.is_zero():
                raise ConfigurationError(
                    f"the expected amount must be a whole number of at most {limit:,} digits "
                    f"(as many as Python reads from an answer), not a Decimal of {digits:,} digits"
                )
            return int(amount)
    if isinstance(amount, (str, bytes)):  # a text column, a form's or a file's value
        if _WHOLE_TEXT.fullmatch(amount if isinstance(amount, str) else amount.decode("latin-1")):
            raise ConfigurationError(
                f"the expected amount must be a whole number (int), not the text "
                f"{quoted(amount)}; convert your order's amount with int() where you read it"
            )
        raise ConfigurationError(  # "25.00": int() refuses it, and it may be in another unit
            f"the expected amount must be a whole number (int) in the unit the service reports, "
            f"not the text {quoted(amount)}; pass your order's amount in that unit as an int "
            "(25.00 in cents or kobo is 2500)"
        )
    raise ConfigurationError(
        f"the expected amount must be a whole number (int), not {quoted(amount)}; "
        "money in floats or fractions cannot be compared exactly"
    )


def _has_places(amount: decimal.Decimal) -> bool:
    """Whether ``amount`` is written with decimal places (``2500.00``, ``2500.5``): a
    ``DecimalField(decimal_places=2)``'s, in whole units, whatever its fraction."""
    exponent = amount.as_tuple().exponent
    return isinstance(exponent, int) and exponent < 0


def refuse_awaitable(value: object, message: str) -> None:
    """Raise ConfigurationError(message) if sync code was handed an awaitable it cannot await."""
    if inspect.isawaitable(value):
        if inspect.iscoroutine(value):
            value.close()  # never awaited: close it so Python does not warn later
        raise ConfigurationError(message)


def check_lookup(lookup: object) -> None:
    """Refuse a ``lookup`` that cannot be called, such as the table of orders itself, before
    any callback comes: called, it would fail every callback with Python's own TypeError."""
    if lookup is None or callable(lookup):
        return
    kind = type(lookup).__name__
    hint = ": for a dict of orders, pass its .get" if isinstance(lookup, Mapping) else ""
    raise ConfigurationError(
        f"lookup must be a function of the reference that returns its order, not the {kind} given"
        f"{hint}"
    )


def expected_for(
    reference: str, amount: int | None, currency: str | None, looked_up: bool, found: object
) -> Expected:
    """What a callback's payment must match: the given values, or what ``lookup`` found: an
    ``Expected``, or a mapping or object (such as the merchant's order) with both ``amount`` and
    ``currency``; ``None`` means the merchant has no such order."""
    if not looked_up:
        return Expected(amount=amount, currency=currency)
    if amount is not None or currency is not None:
        raise ConfigurationError("give either lookup or amount/currency, not both")
    refuse_awaitable(found, "lookup returned an awaitable: an async lookup needs AsyncClient")
    if found is None:
        raise UnknownOrderError(
            f"no order has the reference {quoted(reference, code=True)}; the callback is not "
            "acted on",
            reference=reference,
        )
    if isinstance(found, Expected):
        return found
    # Whatever the order holds is checked below and by Expected itself: Any until then.
    values: dict[str, Any] = {field: _field(found, field) for field in ("amount", "currency")}
    missing = [field for field, value in values.items() if value is None]
    if missing:
        raise ConfigurationError(
            "lookup must return an order with both amount and currency, paysdk.Expected (to "
            f"leave one unchecked on purpose) or None; its {type(found).__name__} for "
            f"{quoted(reference)} has no " + " and no ".join(missing)
        )
    try:
        return Expected(amount=values["amount"], currency=values["currency"])
    except ConfigurationError as error:  # which of many orders to fix, one may be bad
        raise ConfigurationError(
            f"the order lookup found for {quoted(reference)}: {error}"
        ) from None


class _Row(Protocol):
    """A database row read by column name that is no ``Mapping``: ``sqlite3.Row``, asyncpg's
    ``Record``. It has ``keys()`` and ``row[name]``, the protocol ``dict()`` reads."""

    def keys(self) -> Any: ...
    def __getitem__(self, name: str, /) -> Any: ...


def _is_row(found: object) -> TypeGuard[_Row]:
    """An order given as a row read by column name (``keys()`` and ``row[name]``, as ``dict()``
    takes it), read so when it has no attribute of the name."""
    kind = type(found)
    return callable(getattr(kind, "keys", None)) and callable(getattr(kind, "__getitem__", None))


def _field(order: object, name: str) -> object:
    """A mapping's value for ``name``; else ``order``'s attribute ``name``; else, for a row, its
    column ``name`` as its database names it (SQLite: ``AMOUNT`` is ``amount``); else ``None``."""
    if isinstance(order, Mapping):
        return cast("Mapping[str, object]", order).get(name)
    value = getattr(order, name, None)
    if value is None and _is_row(order):
        try:
            value = order[name]
        except (LookupError, TypeError):  # no such column: KeyError, IndexError (sqlite3)
            value = None
    return value


def check_payment(
    payment: VerifiedPayment, expected: Expected, *, scrub: Callable[[str], str] | None = None
) -> VerifiedPayment:
    """Return ``payment`` if it can be fulfilled, else raise why it cannot; ``scrub`` blots the
    secret key out of what the service said, which the message quotes."""
    mismatches: dict[str, tuple[object, object]] = {}
    if not payment.succeeded:
        raise PaymentFailedError(
            f"payment {quoted(payment.reference, code=True)} did not succeed", payment=payment
        )
    if expected.amount is not None and payment.amount != expected.amount:
        mismatches["amount"] = (expected.amount, payment.amount)
    if expected.currency is not None and not same_currency(expected.currency, payment.currency):
        mismatches["currency"] = (expected.currency, payment.currency)
    if mismatches:
        detail = ", ".join(
            f"{field} expected {quoted(want)} but the service says "
            + quoted(got, scrub, code=field == "currency")
            for field, (want, got) in mismatches.items()
        )
        if "amount" in mismatches:
            detail += _units_hint(*mismatches["amount"])
        raise PaymentMismatchError(
            f"payment {quoted(payment.reference, code=True)} does not match: {detail}",
            payment=payment,
            mismatches=mismatches,
        )
    return payment


_UNIT_RATIOS = (10, 100, 1000)
"""How many minor units a whole unit has (dinars and rials count 1000 fils, most 100 cents)."""


def _units_hint(expected: object, paid: object) -> str:
    """What an amount expected and one paid that differ by a power of ten likely mean: one of
    them in whole units, the other in minor units; ``""`` for any other pair."""
    if type(expected) is not int or type(paid) is not int or min(expected, paid) <= 0:
        return ""
    small, large = sorted((expected, paid))
    ratio = next((r for r in _UNIT_RATIOS if small * r == large), None)
    if ratio is None:
        return ""
    return (
        f" (the {'order' if expected > paid else 'payment'} is {ratio:,} times the "
        f"{'payment' if expected > paid else 'order'}: is one in whole units and the other in "
        "minor units, such as kobo or cents? Amounts are compared as integers in the unit the "
        "service reports, never converted)"
    )


publish("paysdk", Expected)

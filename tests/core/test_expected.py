"""Expected, expected_for and check_payment: what a payment must match before it is fulfilled."""

from __future__ import annotations

import dataclasses
import decimal
import enum
import inspect

import pytest

import paysdk
from paysdk import _core


def test_expected_takes_whole_decimals_and_refuses_fractions_and_floats() -> None:
    for whole in (decimal.Decimal("250000"), decimal.Decimal("2.5E+5")):
        assert _core.Expected(amount=whole).amount == 250000  # type: ignore[arg-type]
    for amount in (decimal.Decimal("2500.50"), 2500.0, True, "2500", decimal.Decimal("NaN")):
        with pytest.raises(paysdk.ConfigurationError, match="whole number"):
            _core.Expected(amount=amount)  # type: ignore[arg-type]


@pytest.mark.parametrize("written", ["2500.00", "2500.0", "0.00", "2500.50", "1E-99999999"])
def test_a_decimal_written_with_decimal_places_is_refused_naming_minor_units(
    written: str,
) -> None:
    """``Decimal("2500.00")``, a ``DecimalField(decimal_places=2)``'s, is an amount in whole
    units: read as 2500, it would match a payment of 2500 kobo, a hundredth of it."""
    with pytest.raises(paysdk.ConfigurationError) as caught:
        _core.Expected(amount=decimal.Decimal(written))  # type: ignore[arg-type]
    message = str(caught.value)
    assert message.startswith(
        "the expected amount must be a whole number in the unit the service reports, not "
        f"Decimal('{written}'): written with decimal places, it is an amount in whole units"
    )
    assert "minor units (kobo, cents)" in message


@pytest.mark.parametrize(
    ("expected", "paid", "hint"),
    [
        (25_000, 2_500_000, " (the payment is 100 times the order: is one in whole units"),
        (2_500_000, 2_500, " (the order is 1,000 times the payment: is one in whole units"),
        (2_500_001, 2_500_000, None),
        (0, 2_500_000, None),
    ],
)
def test_a_mismatch_of_a_power_of_ten_says_one_may_be_in_minor_units(
    expected: int, paid: int, hint: str | None
) -> None:
    payment = paysdk.VerifiedPayment(reference="r", amount=paid, currency="NGN", success=True)
    with pytest.raises(paysdk.PaymentMismatchError) as caught:
        _core.check_payment(payment, _core.Expected(amount=expected))
    message = str(caught.value)
    said = f"payment 'r' does not match: amount expected {expected} but the service says {paid}"
    assert message == said if hint is None else message.startswith(said + hint)


class Cents(enum.IntEnum):
    TOTAL = 250000


class Int64:
    """A whole number that is no int but says so by ``__index__``, as numpy's int64 does."""

    def __init__(self, value: int) -> None:
        self.value = value

    def __index__(self) -> int:
        return self.value

    def __repr__(self) -> str:
        return f"np.int64({self.value})"


def test_a_whole_number_of_another_type_is_taken_as_the_int_it_is() -> None:
    """An ``IntEnum``'s member or a pandas column's ``numpy.int64`` is the plain int it stands
    for, in comparisons and in the refusal a mismatch shows; ``True`` is no amount."""
    for amount in (Cents.TOTAL, Int64(250000)):
        expected = _core.Expected(amount=amount)  # type: ignore[arg-type]
        assert type(expected.amount) is int and expected.amount == 250000
    short = paysdk.VerifiedPayment(reference="r", amount=2500, currency="NGN", success=True)
    with pytest.raises(paysdk.PaymentVerificationError) as caught:
        _core.check_payment(short, _core.Expected(amount=Cents.TOTAL))
    assert "250000" in str(caught.value) and "Cents" not in str(caught.value)
    with pytest.raises(paysdk.ConfigurationError, match="not True: a yes or no is no amount"):
        _core.Expected(amount=True)


@pytest.mark.parametrize("exponent", [4300, 10**5], ids=["4301-digits", "1e5"])
def test_a_decimal_past_what_an_answer_carries_is_refused_at_once(exponent: int) -> None:
    """An order's ``Decimal`` may hold any exponent (a PostgreSQL numeric holds 131,072 digits
    before the point): ``int()`` of ``1E+100000000`` would take many minutes, so it is refused."""
    amount = decimal.Decimal(f"1E+{exponent}")
    with pytest.raises(paysdk.ConfigurationError, match="at most 4,300 digits") as caught:
        _core.Expected(amount=amount)  # type: ignore[arg-type]
    assert f"not a Decimal of {exponent + 1:,} digits" in str(caught.value)
    longest = decimal.Decimal("9" * 4300)
    assert _core.Expected(amount=longest).amount == 10**4300 - 1  # type: ignore[arg-type]


def test_a_zero_decimal_of_any_exponent_is_zero() -> None:
    """Zero is one digit however large its exponent (``0E+5000``): no refusal, no wait."""
    for zero in (decimal.Decimal("0E+5000"), decimal.Decimal("-0E+99999999")):
        assert _core.Expected(amount=zero).amount == 0  # type: ignore[arg-type]


def test_a_refused_amount_is_quoted_cut() -> None:
    with pytest.raises(paysdk.ConfigurationError, match="whole number") as caught:
        _core.Expected(amount="9" * 100_000)  # type: ignore[arg-type]
    assert "... (100,000 characters)" in str(caught.value)
    assert len(str(caught.value)) < 300
    with pytest.raises(paysdk.ConfigurationError, match="whole number") as caught:
        _core.Expected(amount=[9] * 100_000)  # type: ignore[arg-type]
    assert "... (300,000 characters)" in str(caught.value)  # any object's repr is cut
    assert len(str(caught.value)) < 400


@pytest.mark.parametrize("amount", ["2500", b"2500", " -2500 "])
def test_an_amount_read_as_text_is_refused_saying_to_convert_it(amount: object) -> None:
    """An order table's text column: the message says what to do, not that floats are inexact."""
    with pytest.raises(paysdk.ConfigurationError) as caught:
        _core.Expected(amount=amount)  # type: ignore[arg-type]
    assert str(caught.value) == (
        f"the expected amount must be a whole number (int), not the text {amount!r}; "
        "convert your order's amount with int() where you read it"
    )


@pytest.mark.parametrize("amount", ["25.00", b"25.00", "1e3", "25,00"])
def test_an_amount_text_int_cannot_read_is_refused_saying_which_unit_to_pass(
    amount: str | bytes,
) -> None:
    """An order total kept as text in major units (``"25.00"``): ``int()`` refuses it, so the
    message does not say to use it; it says to pass an int in the service's unit."""
    with pytest.raises(ValueError, match="invalid literal for int"):
        int(amount)
    with pytest.raises(paysdk.ConfigurationError) as caught:
        _core.Expected(amount=amount)  # type: ignore[arg-type]
    assert str(caught.value) == (
        "the expected amount must be a whole number (int) in the unit the service reports, not "
        f"the text {amount!r}; pass your order's amount in that unit as an int (25.00 in cents "
        "or kobo is 2500)"
    )
    assert "int()" not in str(caught.value)


@dataclasses.dataclass
class Order:
    amount: decimal.Decimal | int | None
    currency: str | None


@pytest.mark.parametrize(
    "found",
    [
        Order(amount=250000, currency=None),
        Order(amount=None, currency="NGN"),
        {"amount": 250000},
        {"currency": "NGN"},
        object(),
    ],
)
def test_a_lookup_must_give_both_amount_and_currency(found: object) -> None:
    with pytest.raises(paysdk.ConfigurationError, match="must return an order with both"):
        _core.expected_for("order-1042", None, None, True, found)


def test_a_lookup_may_give_an_order_a_mapping_or_expected() -> None:
    want = _core.Expected(amount=250000, currency="NGN")
    assert _core.expected_for("r", None, None, True, Order(decimal.Decimal(250000), "NGN")) == want
    assert _core.expected_for("r", None, None, True, {"amount": 250000, "currency": "NGN"}) == want
    loose = _core.Expected(amount=250000)
    assert _core.expected_for("r", None, None, True, loose) is loose


class Record:
    """A row as asyncpg's ``Record`` is one: ``keys()`` and ``row[name]`` (``KeyError`` for a
    name it has no column of), neither a ``Mapping`` nor attributes of its columns."""

    def __init__(self, **columns: object) -> None:
        self._columns = columns

    def keys(self) -> list[str]:
        return list(self._columns)

    def __getitem__(self, name: str) -> object:
        return self._columns[name]


def test_a_lookup_may_give_a_row_read_by_column_name() -> None:
    want = _core.Expected(amount=250000, currency="NGN")
    row = Record(reference="r", amount=250000, currency="NGN")
    assert _core.expected_for("r", None, None, True, row) == want
    with pytest.raises(paysdk.ConfigurationError, match="its Record for 'r' has no currency"):
        _core.expected_for("r", None, None, True, Record(amount=250000))


def test_an_async_lookup_on_a_sync_client_is_refused_and_closed() -> None:
    async def lookup() -> _core.Expected:
        return _core.Expected(amount=1, currency="NGN")

    coroutine = lookup()
    with pytest.raises(paysdk.ConfigurationError, match="AsyncClient"):
        _core.expected_for("r", None, None, True, coroutine)
    assert inspect.getcoroutinestate(coroutine) == "CORO_CLOSED"  # no "never awaited" warning


def paid_in(currency: str) -> paysdk.VerifiedPayment:
    return paysdk.VerifiedPayment(
        reference="order-1042", amount=100, currency=currency, success=True
    )


@pytest.mark.parametrize(("expected", "actual"), [("NGN", "ngn"), ("ngn", "NGN"), ("Usd", "uSD")])
def test_the_payment_currency_is_compared_without_ascii_case(expected: str, actual: str) -> None:
    payment = paid_in(actual)
    assert _core.check_payment(payment, _core.Expected(currency=expected)) is payment


LOOK_ALIKES = [
    ("SSP", "\u00dfP"),  # "\u00df".upper() == "SS"
    ("INR", "\u0131nr"),  # the dotless i: "\u0131".upper() == "I"
    ("USD", "u\u017fd"),  # the long s: "\u017f".upper() == "S"
    ("FFA", "\ufb00a"),  # a ligature: "\ufb00".upper() == "FF"
    ("USD", "\uff35\uff33\uff24"),  # fullwidth letters
    ("NGN", " ngn "),  # padding
    ("NGN", "NGN\u00a0"),  # a no-break space, which str.strip() removes
    ("NGN", "NGN\n"),
    ("NGN", "NG"),
    ("NGN", "NGNN"),
]
"""(expected code, a currency from the service that is not that code but Unicode could make it)"""


@pytest.mark.parametrize(("expected", "actual"), LOOK_ALIKES)
def test_a_currency_that_is_not_three_ascii_letters_matches_no_code(
    expected: str, actual: str
) -> None:
    payment = paid_in(actual)
    with pytest.raises(paysdk.PaymentMismatchError) as caught:
        _core.check_payment(payment, _core.Expected(currency=expected))
    assert caught.value.mismatches == {"currency": (expected, actual)}
    assert not _core.same_currency(actual, actual)  # not a code: not even itself


def test_a_mismatch_message_shows_a_look_alike_currency_in_ascii() -> None:
    """A message a person reads tells ``KES`` from ``KES`` spelt with a Kelvin sign."""
    with pytest.raises(paysdk.PaymentMismatchError) as caught:
        _core.check_payment(paid_in("\u212aES"), _core.Expected(currency="KES"))
    assert str(caught.value) == (
        "payment 'order-1042' does not match: currency expected 'KES' but the service says "
        "'\\u212aES'"
    )


@pytest.mark.parametrize(
    "currency",
    [
        " NGN",
        "NGN ",
        "\uff2e\uff27\uff2e",
        "\u00dfP",
        "\u0131nr",
        "\u212aES",  # a Kelvin sign: shown as it is, the message would read "got 'KES'"
        "NG",
        "NGNN",
        "",
        "N1N",
        "N-N",
        b"NGN",
        566,
    ],
)
def test_an_expected_currency_must_be_three_ascii_letters(currency: object) -> None:
    with pytest.raises(paysdk.ConfigurationError, match="three ASCII letters") as caught:
        _core.Expected(amount=100, currency=currency)  # type: ignore[arg-type]
    assert isinstance(caught.value, ValueError)
    assert f"got {currency!a}" in str(caught.value)  # a look-alike letter as an escape


def test_an_orders_currency_is_held_to_the_same_rule() -> None:
    with pytest.raises(paysdk.ConfigurationError, match="three ASCII letters"):
        _core.expected_for("r", None, None, True, {"amount": 100, "currency": "u\u017fd"})

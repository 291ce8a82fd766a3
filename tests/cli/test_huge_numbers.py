"""Numbers past 64 bits where the ``paysdk`` command meets them, run in a pseudo-terminal against
the sandbox: amounts the service sends are shown and compared exactly, and a flag's number of
thousands of digits is refused in a line of its own length, not echoed whole."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from paysdk.sandbox import Sandbox
from tests.support.hostile import HostileServer, respond
from tests.support.terminal import run_in_terminal

BIG = 10**30 + 7
"""An amount past 64 bits, well within what JSON carries."""


@pytest.fixture
def sandbox(monkeypatch: pytest.MonkeyPatch) -> Iterator[Sandbox]:
    with Sandbox() as running:
        running.add_payment("order-big", amount=BIG, fee=2**64)
        monkeypatch.setenv("PAYSDK_SECRET_KEY", running.secret_key)
        monkeypatch.setenv("PAYSDK_BASE_URL", running.base_url)
        yield running


def test_an_amount_past_64_bits_is_confirmed_and_shown_exactly(sandbox: Sandbox) -> None:
    code, out, err = run_in_terminal(
        "confirm", "order-big", "--amount", str(BIG), "--currency", "NGN"
    )
    assert (code, err) == (0, "")
    assert out == f"confirmed: order-big paid {BIG} NGN\n"
    code, _, err = run_in_terminal(
        "confirm", "order-big", "--amount", str(BIG - 1), "--currency", "NGN"
    )
    assert code == 1
    assert f"amount expected {BIG - 1} but the service says {BIG}" in err


@pytest.mark.parametrize(
    "argv",
    [
        ("confirm", "order-big", "--amount", "9" * 100_000, "--currency", "NGN"),
        ("confirm", "order-big", "--amount", "-" + "9" * 5000, "--currency", "NGN"),
        ("ledger", "list", "--limit", "1" * 5000),
        ("sandbox", "--port", "1" * 5000),
    ],
    ids=["amount-100000-digits", "negative-amount-5000-digits", "limit", "port"],
)
def test_a_number_of_thousands_of_digits_is_refused_in_one_short_line(
    sandbox: Sandbox, argv: tuple[str, ...]
) -> None:
    code, out, err = run_in_terminal(*argv)
    assert (code, out) == (2, "")
    [message] = [line for line in err.splitlines() if "error:" in line]
    digits = len(argv[-1].lstrip("-")) if argv[0] != "confirm" else len(argv[3].lstrip("-"))
    assert f"a number of {digits:,} digits (at most 4,300)" in message
    assert len(message) < 300
    assert sandbox.requests == []


@pytest.mark.parametrize(
    ("seconds", "why"),
    [
        ("0." + "0" * 4998 + "1", "too small, it reads as 0 seconds"),
        ("0" * 5000, "it is 0 seconds"),
        ("9" * 5000, "too large, it reads as infinity"),
        ("9" * 5000 + ".5", "too large, it reads as infinity"),
    ],
    ids=["decimal-5000-digits", "zero-5000-digits", "9-5000-digits", "9-5000-digits-decimal"],
)
@pytest.mark.parametrize(
    "command", [("list",), ("pay", "order-7", "--amount", "5", "--currency", "NGN")]
)
def test_a_timeout_of_thousands_of_digits_that_reads_as_0_or_infinity_says_so_in_one_short_line(
    sandbox: Sandbox, command: tuple[str, ...], seconds: str, why: str
) -> None:
    """A ``--timeout`` that is 0 or infinity once read (past a float's smallest or largest, or
    zeros), in thousands of digits: the line says why it is refused and quotes what was typed,
    not that it has too many digits (a float reads any number of them) nor ``got inf``."""
    code, out, err = run_in_terminal(*command, "--timeout", seconds)
    assert (code, out) == (2, "")
    [message] = [line for line in err.splitlines() if "error:" in line]
    assert (
        message.startswith("paysdk ")
        and "--timeout: expected a positive number of seconds" in message
    )
    assert message.endswith(f": {why}")
    assert "digits" not in message.replace("(ASCII digits, a decimal part allowed: 30, 2.5)", "")
    assert len(message) < 300
    assert sandbox.requests == []


def test_a_long_flag_value_that_is_no_number_is_quoted_cut(sandbox: Sandbox) -> None:
    code, out, err = run_in_terminal(
        "confirm", "order-big", "--amount", "x" * 100_000, "--currency", "NGN"
    )
    assert (code, out) == (2, "")
    [message] = [line for line in err.splitlines() if "error:" in line]
    assert f"not {'x' * 64!r}... (100,000 characters)" in message
    assert len(message) < 400


BEYOND_FLOAT_VERIFY = (
    b'{"status": true, "data": {"reference": "order-1042", "transaction_id": "t-1", "amount": 5,'
    b' "fee": 1e400, "currency": "NGN", "success": true, "customer": null, "products": [],'
    b' "metadata": {"weight": -1e400, "ratio": NaN}, "authorization": null, "score": NaN}}'
)
BEYOND_FLOAT_LIST = (
    b'{"data": [{"id": "p-1", "reference": "order-1042", "amount": 5, "fee": NaN,'
    b' "status": "COMPLETED", "customer_paid": true, "currency": "NGN", "customer": null,'
    b' "products": [{"name": "Gift", "amount": 1e400}], "created_at":'
    b' "2026-11-05T09:00:00.000000Z", "updated_at": "2026-11-05T09:00:00.000000Z"}]}'
)


def _strict_json(text: str) -> object:
    """``text`` read as a strict parser reads JSON: ``NaN`` and ``Infinity`` are no JSON."""

    def refuse(constant: str) -> object:
        raise ValueError(f"not JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize(
    ("argv", "body", "numbers"),
    [
        (("verify", "order-1042", "--json"), BEYOND_FLOAT_VERIFY, ("fee", "score")),
        (("list", "--json"), BEYOND_FLOAT_LIST, ("fee",)),
    ],
)
def test_json_of_a_number_beyond_a_float_is_json_a_strict_parser_reads(
    hostile: HostileServer,
    monkeypatch: pytest.MonkeyPatch,
    argv: tuple[str, ...],
    body: bytes,
    numbers: tuple[str, ...],
) -> None:
    """The service's ``1e400`` (infinity, read as a float) and a ``NaN`` it wrote are written
    ``null``, as the models dump them, never ``Infinity`` or ``NaN``, which ``jq`` refuses."""
    hostile.script(respond(200, body, {"Content-Type": "application/json"}))
    monkeypatch.setenv("PAYSDK_BASE_URL", hostile.base_url)
    monkeypatch.setenv("PAYSDK_SECRET_KEY", "sk_test_Zq3Jv9WmX4pL7tR2")
    code, out, err = run_in_terminal(*argv)
    assert (code, err) == (0, "")
    read = _strict_json(out)
    payment = read[0] if isinstance(read, list) else read
    assert isinstance(payment, dict)
    assert [payment[name] for name in numbers] == [None] * len(numbers)
    assert payment["reference"] == "order-1042"

"""The command's help and usage errors as a person meets them: ``python -m paysdk`` run as a
process, its exit code and what it writes."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

from paysdk.ledger import Ledger


def paysdk_(*argv: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PAYSDK_")}
    return subprocess.run(
        [sys.executable, "-m", "paysdk", *argv],
        env={**env, "COLUMNS": "100"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_the_sandbox_usage_shows_its_action_as_optional() -> None:
    done = paysdk_("sandbox", "--help")
    assert done.returncode == 0
    usage = done.stdout.split("\n\n", 1)[0]
    assert usage.endswith(" [ACTION ...]")
    assert " ACTION ..." not in usage.replace("[ACTION ...]", "")


@pytest.mark.parametrize("command", ["list", "verify", "confirm", "pay", "reconcile"])
def test_max_retries_shows_its_default(command: str) -> None:
    done = paysdk_(command, "--help")
    assert done.returncode == 0
    said = " ".join(done.stdout.split())
    assert "retries of transient errors (default: $PAYSDK_MAX_RETRIES, else 2)" in said
    assert "seconds (default: $PAYSDK_TIMEOUT, else 30)" in said


@pytest.mark.parametrize(
    ("since", "says"),
    [
        ("2026-13-01", "'2026-13-01' is not a real date: month 13 does not exist (1 to 12)"),
        (
            "2026-02-30",
            "'2026-02-30' is not a real date: day 30 does not exist in February 2026 (1 to 28)",
        ),
        (
            "2026-04-31T10:00:00Z",
            "'2026-04-31T10:00:00Z' is not a real date: "
            "day 31 does not exist in April 2026 (1 to 30)",
        ),
        ("last week", "expected a date like 2026-01-01 or an ISO 8601 datetime, not 'last week'"),
    ],
)
def test_since_says_which_part_of_a_date_does_not_exist(since: str, says: str) -> None:
    done = paysdk_(
        "list", "--since", since, "--base-url", "http://127.0.0.1:9", "--secret-key", "k"
    )
    assert (done.returncode, done.stdout) == (2, "")
    assert f"argument --since: {says}" in done.stderr


@pytest.mark.parametrize(
    "command",
    [
        ("ledger", "list"),
        ("ledger", "ignore", "order-7", "--reason", "test"),
        ("reconcile", "--base-url", "http://127.0.0.1:9", "--secret-key", "k"),
    ],
)
def test_a_table_the_ledger_lacks_is_a_usage_error(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    path = tmp_path / "ledger.db"
    with Ledger(path) as ledger:
        ledger.rows(["made"])  # the default table, created on first use
    done = paysdk_(*command, "--ledger", str(path), "--table", "nope")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "paysdk: error: --table: the ledger has no table 'nope' (default: paysdk_fulfilments): "
        "name the table your app's Ledger writes to\n"
    )


@pytest.mark.parametrize(
    "argv",
    [
        ("list", "--max-retries", "\u0662"),  # Arabic-Indic 2
        ("list", "--timeout", "\uff15"),  # fullwidth 5
        ("ledger", "list", "--limit", "\u0665"),
        ("reconcile", "--max-discrepancies", "\u0665"),
        ("sandbox", "--port", "\u0668\u0660\u0668\u0660"),  # 8080, which would serve
    ],
)
def test_a_number_in_digits_of_another_script_is_a_usage_error(argv: tuple[str, ...]) -> None:
    # int() and float() read the digits of every script: no flag of paysdk means them
    done = paysdk_(*argv)
    flag = next(arg for arg in argv if arg.startswith("--"))
    assert done.returncode == 2
    assert f"argument {flag}: expected " in done.stderr
    assert repr(argv[-1]) in done.stderr


PAY = (
    "pay",
    "order-7",
    "--amount",
    "5",
    "--currency",
    "NGN",
    "--callback",
    "http://127.0.0.1:9/cb",
)
"""A ``pay`` command whose every other argument is good."""

SECONDS_EXPECTED = (
    "expected a positive number of seconds (ASCII digits, a decimal part allowed: 30, 2.5)"
)


@pytest.mark.parametrize(
    "seconds",
    ["1_0", "+5", " 5", "5 ", ".", "1e3", "1E-3", "nan", "inf", "Infinity", "\uff15"],
)
@pytest.mark.parametrize(
    ("command", "flag"),
    [
        (("list",), "--timeout"),
        (("trigger-callback", "http://127.0.0.1:9/cb", "--reference", "x"), "--timeout"),
        (PAY, "--callback-timeout"),
    ],
    ids=["list", "trigger-callback", "pay"],
)
def test_a_timeout_float_reads_but_not_in_ascii_digits_is_a_usage_error_saying_what_is(
    command: tuple[str, ...], flag: str, seconds: str
) -> None:
    """``float()`` reads all of these; a number of seconds is ASCII digits with an optional
    decimal point, as ``PAYSDK_TIMEOUT`` is, and the error says so before anything is sent."""
    done = paysdk_(*command, flag, seconds)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.endswith(f"error: argument {flag}: {SECONDS_EXPECTED}, not {seconds!r}\n")


@pytest.mark.parametrize("seconds", ["30", "2.5", ".5", "5.", "30.0"])
def test_a_timeout_with_a_decimal_point_anywhere_is_read(seconds: str) -> None:
    """``.5`` and ``5.`` are numbers a person writes: read, as ``PAYSDK_TIMEOUT`` reads them,
    so the command goes on to ask the service (here, nothing listens: exit 3)."""
    done = paysdk_("list", "--base-url", "http://127.0.0.1:9", "--secret-key", "sk_test_key_1",
                   "--max-retries", "0", "--timeout", seconds)  # fmt: skip
    assert (done.returncode, done.stdout) == (3, ""), done.stderr


def _commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = [path] if path else []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += _commands(sub, (*path, name))
    return found


def test_every_command_s_help_ends_with_what_each_exit_code_means() -> None:
    from paysdk.cli._exits import exit_codes_help
    from paysdk.cli._main import build_parser

    commands = _commands(build_parser())
    assert {("verify",), ("list",), ("trigger-callback",), ("sandbox", "stop")} <= set(commands)
    for path in commands:
        done = paysdk_(*path, "--help")
        assert done.returncode == 0, path
        assert " ".join(done.stdout.split()).endswith(exit_codes_help()), path


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (("ledger", "refuse", "order-1042", "--reason"), "--reason"),
        (("ledger", "ignore", "order-1042", "--reason"), "--reason"),
        (("trigger-callback", "http://127.0.0.1:9/cb", "--reference"), "--reference"),
        (("ledger", "resolve", "--ran"), "reference"),
        (("ledger", "refuse", "--reason", "sold out"), "reference"),
        (("ledger", "ignore", "--reason", "a test"), "reference"),
        (("sandbox", "--host"), "--host"),
        (
            ("pay", "--amount", "5", "--currency", "USD", "--callback", "http://127.0.0.1:9/cb"),
            "reference",
        ),
    ],
)
def test_text_typed_on_a_terminal_that_is_not_utf8_is_a_usage_error(
    tmp_path: Path, argv: tuple[str, ...], flag: str
) -> None:
    """``café`` typed on a Latin-1 terminal: its ``\\xe9`` is no UTF-8, and reaches Python as a
    lone surrogate that no database or URL can hold."""
    ledger = tmp_path / "l.db"
    with Ledger(ledger) as made:
        made.create_table()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PAYSDK_")}
    done = subprocess.run(
        [sys.executable, "-m", "paysdk", *argv, b"caf\xe9 sold out"],
        env={**env, "PAYSDK_LEDGER": str(ledger)}, capture_output=True, timeout=60, check=False,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (2, b"")
    assert done.stderr.splitlines()[-1].endswith(
        f"error: argument {flag}: not UTF-8 text: 'caf\\udce9 sold out' (is the terminal's "
        "encoding UTF-8?)".encode()
    )
    with Ledger(ledger) as kept:
        assert kept.rows_after("", 10) == []


def _parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    found = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found += _parsers(sub)
    return found


def test_help_and_usage_errors_are_plain_text_on_every_python() -> None:
    """argparse colours help and errors from Python 3.14 on; the command's are plain text, as
    its own output is (the pseudo-terminal tests of hostile arguments see every byte)."""
    from paysdk.cli._main import build_parser

    parsers = _parsers(build_parser())
    assert len(parsers) > 10
    assert {getattr(parser, "color", False) for parser in parsers} == {False}


NOT_SECONDS = "is not a valid number of seconds (ASCII digits, a decimal part allowed: 30, 2.5)"


@pytest.mark.parametrize(
    ("command", "variable", "value", "problem"),
    [
        ("list", "PAYSDK_TIMEOUT", "nan", NOT_SECONDS),
        ("list", "PAYSDK_TIMEOUT", "1_0", NOT_SECONDS),
        ("list", "PAYSDK_TIMEOUT", "+5", NOT_SECONDS),
        ("list", "PAYSDK_TIMEOUT", "1e3", NOT_SECONDS),
        ("list", "PAYSDK_TIMEOUT", "\u0661\u0660", NOT_SECONDS),
        ("list", "PAYSDK_MAX_RETRIES", "\uff13", "is not a valid count (ASCII digits only)"),
        ("list", "PAYSDK_MAX_RETRIES", "1_0", "is not a valid count (ASCII digits only)"),
        ("list", "PAYSDK_MAX_RETRIES", "+5", "is not a valid count (ASCII digits only)"),
        ("list", "PAYSDK_MAX_RETRIES", "99", "is out of range: a count from 0 to 10"),
        (
            "list",
            "PAYSDK_TIMEOUT",
            "0.000",
            "is out of range: seconds more than 0 and at most 86400",
        ),
        (
            "pay",
            "PAYSDK_TIMEOUT",
            "86400.5",
            "is out of range: seconds more than 0 and at most 86400",
        ),
        ("pay", "PAYSDK_TIMEOUT", "inf", NOT_SECONDS),
        ("pay", "PAYSDK_TIMEOUT", "\uff15", NOT_SECONDS),
    ],
)
def test_a_variable_out_of_range_or_not_ascii_digits_is_named_not_a_flag(
    command: str, variable: str, value: str, problem: str
) -> None:
    """The user set the variable, not ``--timeout``: the error names it, as for a value that
    is not a number, and digits of another script are no number here, as in the flags."""
    argv = ["pay", "order-7", "--amount", "5", "--currency", "USD", "--callback",
            "http://127.0.0.1:9/cb"] if command == "pay" else ["list"]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if not k.startswith("PAYSDK_")}
    done = subprocess.run(
        [sys.executable, "-m", "paysdk", *argv],
        env={**env, "PAYSDK_BASE_URL": "http://127.0.0.1:9", "PAYSDK_SECRET_KEY": "sk_test_x1",
             variable: value},
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"paysdk: error: {variable}={value!a} {problem}\n"


@pytest.mark.parametrize("value", ["1_0", "+5", " 5", "5 ", "\uff15"])
@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["ledger", "list", "--limit"], "a positive whole number"),
        (["reconcile", "--max-discrepancies"], "a positive whole number"),
        (["list", "--max-retries"], "a whole number"),
        (["sandbox", "--port"], "a port from 0 to 65535"),
    ],
    ids=["limit", "max-discrepancies", "max-retries", "port"],
)
def test_an_integer_flag_int_would_read_but_not_in_ascii_digits_is_a_usage_error(
    argv: list[str], expected: str, value: str
) -> None:
    """``int()`` reads ``1_0`` as 10, and ``+5``, `` 5`` and a fullwidth 5 as 5: an integer flag
    takes ASCII digits alone, and says so, naming the flag, before anything is done."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PAYSDK_")}
    done = subprocess.run(
        [sys.executable, "-m", "paysdk", *argv, value],
        env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (2, "")
    flag = argv[-1]
    said = f"argument {flag}: expected {expected}, not {value!r} (ASCII digits only)\n"
    assert done.stderr.endswith(said), done.stderr


@pytest.mark.parametrize("value", ["1_0", "+5"])
def test_a_sandbox_port_variable_int_would_read_but_not_in_ascii_digits_is_a_usage_error(
    value: str,
) -> None:
    """``PAYSDK_SANDBOX_PORT=1_0`` is no port 10: ``paysdk sandbox status`` says so, naming it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PAYSDK_")}
    done = subprocess.run(
        [sys.executable, "-m", "paysdk", "sandbox", "status"],
        env={**env, "PAYSDK_SANDBOX_PORT": value},
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"paysdk: error: PAYSDK_SANDBOX_PORT: expected a port from 0 to 65535, not {value!r} "
        "(ASCII digits only)\n"
    )


@pytest.mark.parametrize("port", ["0\u00a0", "\u20030", "\uff10"])
def test_a_sandbox_port_variable_beyond_ascii_is_a_usage_error(port: str) -> None:
    """``PAYSDK_SANDBOX_PORT`` is read as ``--port`` is: ASCII digits, ASCII blanks around."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PAYSDK_")}
    done = subprocess.run(
        [sys.executable, "-m", "paysdk", "sandbox"],
        env={**env, "PAYSDK_SANDBOX_PORT": port},
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"paysdk: error: PAYSDK_SANDBOX_PORT: expected a port from 0 to 65535, not {port!r} "
        "(ASCII digits only)\n"
    )

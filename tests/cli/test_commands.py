"""The ``paysdk`` command line end to end against the sandbox: output and exit codes."""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import httpcore
import httpx
import pytest

from paysdk._transport._sync.pool import Routes
from paysdk.cli import _exits as exits
from paysdk.cli import main
from paysdk.cli._main import build_parser
from paysdk.cli._payments import parse_since
from paysdk.ledger import Ledger
from paysdk.sandbox import (
    COMPLETED_REFERENCE,
    FAILED_REFERENCE,
    NON_CARD_REFERENCE,
    UNKNOWN_REFERENCE,
    Fault,
    Sandbox,
)
from tests.conftest import listed_body
from tests.support.command import paysdk_cli
from tests.support.ports import unused_port

Run = Callable[..., tuple[int, str, str]]


@pytest.fixture
def run(
    sandbox: Sandbox, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Run:
    """``run(*argv)`` -> (exit code, stdout, stderr), with the sandbox in the environment."""
    monkeypatch.setenv("PAYSDK_BASE_URL", sandbox.base_url)
    monkeypatch.setenv("PAYSDK_SECRET_KEY", sandbox.secret_key)

    def run(*argv: str) -> tuple[int, str, str]:
        code = main(argv)
        out, err = capsys.readouterr()
        assert sandbox.secret_key not in out + err
        return code, out, err

    return run


@pytest.mark.parametrize("variable", ["HTTP_PROXY", "http_proxy", "ALL_PROXY"])
def test_a_proxy_in_the_environment_does_not_keep_the_command_from_a_local_sandbox(
    variable: str, sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A corporate laptop or CI runner names a proxy that cannot reach this machine's loopback:
    the command still reaches the sandbox on it, direct, and sends the proxy nothing."""
    with socket.socket() as proxy:  # listens, so a request sent to it would be seen
        proxy.bind(("127.0.0.1", 0))
        proxy.listen()
        proxy.settimeout(0)
        monkeypatch.setenv(variable, f"http://127.0.0.1:{proxy.getsockname()[1]}")
        code, out, err = paysdk_cli("list", "--json", "--timeout", "5", service=sandbox)
        with pytest.raises(BlockingIOError):
            proxy.accept()
    assert (code, err) == (0, "")
    assert {p["reference"] for p in json.loads(out)} == {p.reference for p in sandbox.payments}


def test_verify_prints_the_payment(run: Run) -> None:
    code, out, err = run("verify", COMPLETED_REFERENCE)
    assert (code, err) == (0, "")
    assert "reference:       order-1042" in out
    assert "success:         yes" in out
    assert "amount:          2500000 NGN" in out
    assert "visa 408408...4081 expires 09/28" in out
    assert "success:         no" in run("verify", FAILED_REFERENCE)[1]
    assert "not a card payment" in run("verify", NON_CARD_REFERENCE)[1]


def test_verify_json_is_the_wire_payment(sandbox: Sandbox, run: Run) -> None:
    code, out, _ = run("verify", NON_CARD_REFERENCE, "--json")
    record = sandbox.get_payment(NON_CARD_REFERENCE)
    assert record is not None
    assert (code, json.loads(out)) == (0, record.verify_shape())


def test_confirm_exits_0_only_for_a_matching_successful_payment(run: Run) -> None:
    args = ("--amount", "2500000", "--currency", "ngn")
    assert run("confirm", COMPLETED_REFERENCE, *args) == (
        0,
        "confirmed: order-1042 paid 2500000 NGN\n",
        "",
    )

    code, out, err = run("confirm", COMPLETED_REFERENCE, "--amount", "2500", "--currency", "NGN")
    assert (code, out) == (1, "")
    assert "amount expected 2500 but the service says 2500000 (the payment is 1,000 times" in err
    assert "is one in whole units and the other in minor units, such as kobo or cents?" in err

    code, _, err = run("confirm", COMPLETED_REFERENCE, "--amount", "2500000", "--currency", "USD")
    assert code == 1
    assert "currency expected 'USD'" in err

    code, _, err = run("confirm", FAILED_REFERENCE, "--amount", "4999", "--currency", "USD")
    assert code == 1
    assert "did not succeed" in err

    assert run("confirm", COMPLETED_REFERENCE, "--amount", "2500000")[0] == 2  # currency needed


@pytest.mark.parametrize(
    ("header", "wait"),
    [
        ("3600", "3600s"),
        ("1000000", "1000000s (about 11.6 days)"),
        ("Fri, 31 Dec 9999 23:59:59 GMT", "at least 1000000000s (about 11,574.1 days)"),
        ("1000000000", "1000000000s (about 11,574.1 days)"),  # the cap itself, not past it
        ("5", "5s"),
    ],
)
def test_a_429_says_how_long_the_service_asks_to_wait(
    sandbox: Sandbox, run: Run, header: str, wait: str
) -> None:
    """Raised at once when the wait is longer than a client waits, or after the retries: the
    person at the command line learns when to try again."""
    sandbox.inject(Fault.json(429, {"error": "slow down"}, {"Retry-After": header}), times=None)
    code, out, err = run("list", "--max-retries", "0")
    assert (code, out) == (3, "")  # no answer about the payments now: try again later
    assert f"rate limited: slow down; the service asks to wait {wait} before another try" in err


@pytest.mark.parametrize("status", [503, 502, 500])
def test_a_5xx_asking_for_a_wait_longer_than_a_client_waits_says_it(
    sandbox: Sandbox, run: Run, status: int
) -> None:
    """Raised at once, as a 429 is, without the retries left: the message says why."""
    fault = Fault.json(status, {"error": "down for maintenance"}, {"Retry-After": "3600"})
    sandbox.inject(fault, times=None)
    code, out, err = run("list")
    assert (code, out) == (3, "")
    said = "the service failed: down for maintenance; the service asks to wait 3600s before"
    assert err.startswith(f"paysdk: error: {said} another try (HTTP {status} from GET ")
    assert err.endswith(") (1 attempt)\n")


def test_not_found_is_one_line_and_exit_1(run: Run) -> None:
    code, out, err = run("verify", UNKNOWN_REFERENCE)
    assert (code, out) == (1, "")
    assert err.startswith("paysdk: error: ")
    assert "reference not found" in err
    assert err.count("\n") == 1
    assert "Traceback" not in err


def test_list_table(sandbox: Sandbox, run: Run) -> None:
    code, out, _ = run("list")
    lines = out.splitlines()
    assert code == 0
    assert lines[0].split() == [
        "REFERENCE", "STATUS", "AMOUNT", "FEE", "CURRENCY", "CUSTOMER", "EMAIL", "CREATED", "AT"
    ]  # fmt: skip
    assert [line.split()[0] for line in lines[1:]] == [p.reference for p in sandbox.payments]
    amount_ends = {line.index(" NGN") for line in lines[1:] if " NGN " in line}
    assert len(amount_ends) == 1  # the columns line up


def test_list_filters(run: Run) -> None:
    _, out, _ = run("list", "--status", "failed", "--csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert {row["reference"] for row in rows} == {FAILED_REFERENCE, "order-1046"}
    assert {row["customer_paid"] for row in rows} == {"false"}
    _, out, _ = run("list", "--since", "2026-11-06", "--json")
    assert [p["reference"] for p in json.loads(out)] == [
        "order-1048", "sub-2026-11-acme", "order-1047"
    ]  # fmt: skip
    _, out, _ = run("list", "--since", "2026-11-06T07:05:33.250001+00:00", "--json")
    assert len(json.loads(out)) == 2
    _, out, _ = run("list", "--status", "Completed", "--csv")
    assert {row["status"] for row in csv.DictReader(io.StringIO(out))} == {"COMPLETED"}


@pytest.mark.parametrize("form", ["table", "--json", "--csv"])
def test_since_says_how_many_payments_it_left_out_for_want_of_a_creation_time(
    sandbox: Sandbox, run: Run, form: str
) -> None:
    """A payment whose ``created_at`` is missing or unreadable may be from any time: it is left
    out, and stderr says so, never silently."""
    payments = [
        listed_body("order-dated", created_at="2026-11-06T08:15:27.123456Z"),
        listed_body("order-leap", created_at="2026-06-30T23:59:60Z"),
        {k: v for k, v in listed_body("order-undated").items() if k != "created_at"},
    ]
    sandbox.inject(Fault.json(200, {"data": payments}), path="/payments", times=None)
    code, out, err = run("list", "--since", "2026-11-01", *([] if form == "table" else [form]))
    assert code == 0
    assert "order-dated" in out
    assert "order-leap" not in out and "order-undated" not in out
    assert err == (
        "paysdk: note: 2 payments left out by --since: their created_at is missing or "
        "not a time paysdk reads (--json without --since shows them as sent)\n"
    )
    _, _, err = run("list", "--json")
    assert err == ""


def test_the_status_filter_keeps_the_status_to_the_letter_as_succeeded_reads_it(
    sandbox: Sandbox, run: Run
) -> None:
    sandbox.add_payment("order-upper", status="COMPLETED")
    sandbox.add_payment("order-dotless", status="fa\u0131led")  # "\u0131".upper() == "I"
    sandbox.add_payment("order-lower", status="completed")  # not a success to paysdk
    _, out, _ = run("list", "--status", "completed", "--csv")
    shown = {row["reference"] for row in csv.DictReader(io.StringIO(out))}
    assert "order-upper" in shown
    assert {"order-lower", "order-dotless"}.isdisjoint(shown)
    _, out, _ = run("list", "--status", "failed", "--csv")
    assert "order-dotless" not in {row["reference"] for row in csv.DictReader(io.StringIO(out))}


@pytest.mark.parametrize(
    "status",
    [
        "PAID",
        "refunded",
        "",
        "fa\u0131led",
        "\uff26\uff21\uff29\uff2c\uff25\uff24",
        "FAILED\u00a0",  # spaces and separators str.strip() takes, though not ASCII
        "\u3000FAILED",
        "FAILED\u2003",
        "FAILED\x1c",
        "FAILED\u200b",
        "F\u0410ILED",  # a Cyrillic A: the error shows it as an escape
    ],
)
def test_an_unknown_status_is_a_usage_error_that_lists_the_known_ones(
    run: Run, status: str
) -> None:
    code, out, err = run("list", "--status", status)
    assert (code, out) == (2, "")
    assert "usage: paysdk list" in err
    assert f"unknown status {status!a}: expected one of COMPLETED, FAILED" in err


def test_list_json_keeps_the_wire_shape(sandbox: Sandbox, run: Run) -> None:
    code, out, _ = run("list", "--json")
    assert (code, json.loads(out)) == (0, [p.list_shape() for p in sandbox.payments])


SENT_TIMES = [
    "2026-11-06T09:15:27+01:00",  # another offset than UTC's
    "2026-11-06T08:15:27.123Z",  # milliseconds, as JavaScript writes them
    "2026-11-06T08:15:27.123456789Z",  # nanoseconds
    "2026-11-06T08:15:27",  # no offset: UTC
    1_793_952_927,  # a Unix time, which is no timestamp: kept in `unparsed`
]


def test_list_json_gives_each_timestamp_as_the_service_sent_it(sandbox: Sandbox, run: Run) -> None:
    """Each text is read as a time (the table shows it in UTC), and ``--json``, exact, gives back
    the text or number the service sent, whichever payments ``--since`` keeps."""
    payments = [
        listed_body(f"order-{n}", created_at=sent, updated_at=sent)
        for n, sent in enumerate(SENT_TIMES)
    ]
    sandbox.inject(Fault.json(200, {"data": payments}), path="/payments", times=None)

    code, out, _ = run("list", "--json")
    assert (code, json.loads(out)) == (0, payments)
    _, out, _ = run("list", "--since", "2026-11-06T08:15:27.1Z", "--json")
    assert [p["created_at"] for p in json.loads(out)] == SENT_TIMES[1:3]
    _, out, _ = run("list")
    assert out.count("2026-11-06T08:15:27.000000Z") == 2


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-01-01", "2026-01-01T00:00:00+00:00"),
        ("2026-01-01T10:00:00Z", "2026-01-01T10:00:00+00:00"),
        ("2026-01-01T10:00:00+01:00", "2026-01-01T10:00:00+01:00"),
        ("2026-01-01 10:00", "2026-01-01T10:00:00+00:00"),
        # fractions of any length and offsets without a colon, on Python 3.10 too
        ("2026-01-01T10:00:00.1Z", "2026-01-01T10:00:00.100000+00:00"),
        ("2026-01-01T10:00:00.1234567-0530", "2026-01-01T10:00:00.123456-05:30"),
    ],
)
def test_parse_since(text: str, expected: str) -> None:
    assert parse_since(text).isoformat() == expected


@pytest.mark.parametrize(
    "argv",
    [
        ("list", "--since", "yesterday"),
        ("list", "--since", "2026-11-05\u00a0"),  # a no-break space, which str.strip() takes
        ("list", "--since", "\u30002026-11-05"),
        # week dates, basic forms and bare digits, which fromisoformat reads on 3.11 and later
        ("list", "--since", "2026-W45"),
        ("list", "--since", "20261105"),
        ("list", "--since", "11111111111111111111"),
        ("list", "--since", "2026-11-05T10:00+05:99"),  # an offset's minutes past 59
        ("list", "--json", "--csv"),
        ("verify",),
        ("frobnicate",),
        ("list", "--timeout", "0"),
        (),
    ],
)
def test_usage_errors_exit_2(run: Run, argv: tuple[str, ...]) -> None:
    code, out, err = run(*argv)
    assert (code, out) == (2, "")
    assert "usage: paysdk" in err


@pytest.mark.parametrize(
    ("argv", "unknown"),
    [
        (("verify", "--jsn", COMPLETED_REFERENCE), "--jsn"),
        (("list", "--stats", "FAILED"), "--stats FAILED"),
        (("reconcile", "--ledger", "l.db", "extra"), "extra"),
    ],
)
def test_a_subcommands_unknown_argument_shows_the_subcommands_usage(
    run: Run, argv: tuple[str, ...], unknown: str
) -> None:
    code, out, err = run(*argv)
    assert (code, out) == (2, "")
    assert err.startswith(f"usage: paysdk {argv[0]} ")
    assert f"paysdk {argv[0]}: error: unrecognized arguments: {unknown}\n" in err


def test_every_command_and_option_has_help(capsys: pytest.CaptureFixture[str]) -> None:
    parser = build_parser()
    assert all(action.help for action in parser._actions)
    [commands] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    listed = {action.dest: action.help for action in commands._choices_actions}
    assert set(listed) == set(commands.choices)
    assert main(["--help"]) == 0
    words = " ".join(capsys.readouterr().out.split())
    for name, command in commands.choices.items():
        help_ = listed[name]
        assert help_, f"paysdk {name} has no help"
        assert f" {name} {help_} " in words  # paysdk --help shows it
        for action in command._actions:
            assert action.help, f"paysdk {name} {'/'.join(action.option_strings) or action.dest}"


@pytest.mark.parametrize("argv", [("--help",), ("reconcile", "--help")])
def test_the_help_lists_every_exit_code(
    capsys: pytest.CaptureFixture[str], argv: tuple[str, ...]
) -> None:
    codes = {value for name, value in vars(exits).items() if name.startswith("EXIT_")}
    assert codes == set(exits.MEANINGS) >= {0, 1, 2, 3, 4, 70, 141}
    assert main(argv) == 0
    words = " ".join(capsys.readouterr().out.split())
    for code, meaning in exits.MEANINGS.items():
        assert f" {code} {meaning}" in words


def test_configuration_errors_exit_2(run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PAYSDK_SECRET_KEY")
    code, _, err = run("list")
    assert code == 2
    assert err == "paysdk: error: no secret key: pass --secret-key or set PAYSDK_SECRET_KEY\n"
    code, _, err = run("verify", " padded ", "--secret-key", "sk_x")
    assert code == 2
    assert "whitespace" in err


@pytest.mark.parametrize("quote", ['"', "'"])
def test_a_key_an_env_file_left_in_quotes_is_refused_before_any_request(
    sandbox: Sandbox, run: Run, monkeypatch: pytest.MonkeyPatch, quote: str
) -> None:
    """``docker run --env-file`` (and systemd's ``EnvironmentFile``) keep the quotes of
    ``PAYSDK_SECRET_KEY="sk_..."``: the key, never shown, is said to be wrapped in them, rather
    than sent and refused as another service's key."""
    monkeypatch.setenv("PAYSDK_SECRET_KEY", f"{quote}{sandbox.secret_key}{quote}")
    sandbox.reset()
    code, out, err = run("verify", "order-1042")
    assert (code, out) == (2, "")
    assert err.startswith(
        "paysdk: error: the secret key from PAYSDK_SECRET_KEY is wrapped in quotes; check how "
        "it is loaded"
    )
    assert sandbox.requests == []


def test_flags_override_the_environment(sandbox: Sandbox, run: Run) -> None:
    code, _, err = run("list", "--secret-key", "sk_wrong_one", "--max-retries", "0")
    assert code == 2  # the key: a configuration error
    assert err.startswith(
        "paysdk: error: the secret key was not accepted; is --secret-key the key of the service"
        " at PAYSDK_BASE_URL?: Unauthorized"
    )
    assert "sk_wrong_one" not in err


def test_a_key_of_another_service_asks_whether_the_variables_go_together(
    sandbox: Sandbox, run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another sandbox's key, still exported in this terminal: the error says which two
    settings to check, in the names the user set them by."""
    monkeypatch.setenv("PAYSDK_SECRET_KEY", "sk_sandbox_of_another_terminal")
    code, _, err = run("verify", COMPLETED_REFERENCE, "--base-url", sandbox.base_url)
    assert code == 2
    assert err.startswith(
        "paysdk: error: the secret key was not accepted; is PAYSDK_SECRET_KEY the key of the"
        " service at --base-url?: Unauthorized"
    )


def test_a_404_that_is_not_the_services_asks_about_the_flag_or_variable_that_was_used(
    sandbox: Sandbox, run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, _, err = run("list", "--base-url", f"{sandbox.base_url}/v9")
    assert code == 2  # the base URL: a configuration error, not the service's word on a payment
    assert err.startswith("paysdk: error: not found; is --base-url right?: Not Found - no route")
    monkeypatch.setenv("PAYSDK_BASE_URL", f"{sandbox.base_url}/v9")
    code, _, err = run("verify", COMPLETED_REFERENCE)
    assert code == 2
    assert err.startswith("paysdk: error: not found; is PAYSDK_BASE_URL right?: Not Found")


@pytest.mark.parametrize("command", ["verify", "list"])
@pytest.mark.parametrize("path", ["/payment", "/payments", "/payment/order-1042", "/api/payment"])
def test_a_base_url_that_holds_an_endpoint_s_path_says_to_leave_it_out(
    sandbox: Sandbox, run: Run, monkeypatch: pytest.MonkeyPatch, command: str, path: str
) -> None:
    """``/payment`` copied from the service's docs into the base URL: paysdk adds it itself,
    so the request goes to ``/payment/payment/...``; the error says to leave it out."""
    monkeypatch.setenv("PAYSDK_BASE_URL", f"{sandbox.base_url}{path}")
    argv = [command, COMPLETED_REFERENCE] if command == "verify" else [command]
    code, _, err = run(*argv)
    assert code == 2
    assert err.startswith(
        "paysdk: error: not found; is PAYSDK_BASE_URL right? (its path holds /payment or "
        "/payments, which paysdk adds itself: leave them out): "
    )
    assert sandbox.secret_key not in err


def test_a_sandbox_no_longer_running_is_named_with_how_to_find_one(
    run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The variables of a sandbox that has stopped, still exported in this terminal."""
    with Sandbox() as stopped:
        base_url = stopped.base_url
    monkeypatch.setenv("PAYSDK_BASE_URL", base_url)
    code, _, err = run("verify", COMPLETED_REFERENCE, "--max-retries", "0")
    assert code == 3
    address = base_url.removeprefix("http://")
    assert f"; nothing listens at {address}: if that was a paysdk sandbox, it has stopped" in err
    assert "(`paysdk sandbox status` lists those running;" in err


def test_unreachable_service_exits_3(sandbox: Sandbox, run: Run) -> None:
    sandbox.inject(Fault(disconnect="before_response"), times=None)
    code, _, err = run("list", "--max-retries", "0")
    assert code == 3
    assert err.startswith("paysdk: error: could not reach the service")
    sandbox.clear_faults()
    sandbox.inject(Fault(delay=2))
    assert run("verify", COMPLETED_REFERENCE, "--timeout", "0.1", "--max-retries", "0")[0] == 3


INTERNAL = "paysdk: internal error (a bug in paysdk or a library it uses, not the service): "

BUGS = [
    TypeError("'NoneType' object is not callable"),
    ValueError("too many values to unpack (expected 2)"),  # no usage error: the input was fine
]
"""Exceptions no HTTP library documents as a network failure (an OSError is one)."""


def send_then_raise(monkeypatch: pytest.MonkeyPatch, bug: Exception) -> list[str]:
    """paysdk's pools (``Routes.handle_request``, under a client's attempts and a callback's
    ``httpx.Client`` alike) send the request (the server sees it), then raise ``bug``, as a bug
    in paysdk, httpcore or httpx would; the methods and URLs they were given are returned."""
    sent: list[str] = []
    send = Routes.handle_request

    def buggy(self: Routes, request: httpcore.Request) -> httpcore.Response:
        sent.append(f"{request.method.decode()} {request.url}")
        send(self, request).close()
        raise bug

    monkeypatch.setattr(Routes, "handle_request", buggy)
    return sent


def assert_internal_error(err: str, bug: Exception) -> None:
    """The traceback, then one line saying it is a bug; not a usage error, not unreachable."""
    lines = err.splitlines()
    assert lines[0] == "Traceback (most recent call last):"
    assert lines[-2] == f"{type(bug).__name__}: {bug}"
    assert lines[-1] == f"{INTERNAL}{type(bug).__name__}: {bug}; please report it"
    for other in ("paysdk: error:", "could not reach", "unreachable", "usage:", "retry"):
        assert other not in err


@pytest.mark.parametrize("bug", BUGS, ids=lambda bug: type(bug).__name__)
@pytest.mark.parametrize(
    "argv",
    [("verify", COMPLETED_REFERENCE), ("list", "--verbose")],
    ids=["verify", "list --verbose"],
)
def test_a_bug_inside_a_call_is_an_internal_error_after_one_request(
    sandbox: Sandbox,
    run: Run,
    monkeypatch: pytest.MonkeyPatch,
    bug: Exception,
    argv: tuple[str, ...],
) -> None:
    sent = send_then_raise(monkeypatch, bug)
    code, out, err = run(*argv)  # two retries allowed by default
    assert (code, out) == (70, "")
    assert_internal_error(err, bug)
    assert len(sent) == 1
    assert len(sandbox.requests) == 1


@pytest.mark.parametrize("bug", BUGS, ids=lambda bug: type(bug).__name__)
def test_a_bug_while_sending_a_callback_is_an_internal_error(
    sandbox: Sandbox, run: Run, monkeypatch: pytest.MonkeyPatch, bug: Exception
) -> None:
    sandbox.inject(Fault(status=200, body="OK"), path="/cb")
    sent = send_then_raise(monkeypatch, bug)
    code, out, err = run("trigger-callback", f"{sandbox.base_url}/cb", "--reference", "x")
    assert (code, out) == (70, "")
    assert_internal_error(err, bug)
    assert len(sent) == 1


def test_a_connection_error_outside_any_call_is_an_internal_error(
    sandbox: Sandbox, run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Raised by the command's own code after the service answered: not an unreachable service."""
    bug = ConnectionError("raised while printing")

    def card(card: object) -> str:
        raise bug

    monkeypatch.setattr("paysdk.cli._payments._card", card)
    code, out, err = run("verify", COMPLETED_REFERENCE)
    assert (code, out) == (70, "")
    assert_internal_error(err, bug)
    assert len(sandbox.requests) == 1


def test_a_socket_error_while_sending_a_callback_is_unreachable(
    sandbox: Sandbox, run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An OSError from the socket is a network failure, for a callback as for a client call."""
    sandbox.inject(Fault(status=200, body="OK"), path="/cb")
    send_then_raise(monkeypatch, ConnectionResetError(104, "Connection reset by peer"))
    code, out, err = run("trigger-callback", f"{sandbox.base_url}/cb", "--reference", "x")
    assert (code, out) == (3, "")
    assert err.startswith("paysdk: error: callback to ")
    assert err.endswith("Connection reset by peer\n")
    assert err.count("\n") == 1


def test_an_exception_without_a_message_is_named(run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    send_then_raise(monkeypatch, TypeError())
    code, _, err = run("verify", COMPLETED_REFERENCE)
    assert code == 70
    assert err.splitlines()[-1] == f"{INTERNAL}TypeError; please report it"


@pytest.mark.parametrize("command", ["trigger-callback", "pay"])
def test_a_callback_answered_with_a_redirect_says_it_is_not_followed(
    sandbox: Sandbox, run: Run, command: str
) -> None:
    """Django's APPEND_SLASH answers a URL without its route's final '/' with a 301."""
    sandbox.inject(Fault(status=301, body=""), path="/shop/callback", times=None)
    url = f"{sandbox.base_url}/shop/callback"
    if command == "pay":
        argv = ["pay", "order-7", "--amount", "500", "--currency", "USD", "--callback", url]
    else:
        argv = ["trigger-callback", url, "--reference", "order-7"]
    code, out, err = run(*argv)
    assert code == 1
    assert out.splitlines()[-1].endswith("/shop/callback?reference=order-7 -> 301")
    assert err == (
        "paysdk: error: your app answered the callback with a redirect, which the sandbox does "
        "not follow (nor may the service): unless your view answered it itself, give the URL "
        "the view is routed at (a Django route ending in '/' redirects the URL without it, by "
        "APPEND_SLASH)\n"
    )


@pytest.mark.parametrize("query", ["reference=order-7", "reference=", "a=1&reference"])
def test_pay_refuses_a_callback_url_holding_a_reference_before_paying(
    sandbox: Sandbox, run: Run, query: str
) -> None:
    """The callback adds the reference itself: one in the URL too is a repeated reference,
    which every helper refuses, so nothing is paid."""
    url = f"{sandbox.base_url}/payments/callback?{query}"
    code, out, err = run(
        "pay", "order-77", "--amount", "500", "--currency", "USD", "--callback", url
    )
    assert (code, out) == (2, "")
    assert err == (
        "paysdk: error: --callback: give your callback URL without a reference parameter: the "
        "callback adds ?reference=REF itself, as the service does, so the view would get two\n"
    )
    assert [payment.reference for payment in sandbox.payments].count("order-77") == 0


def test_trigger_callback(sandbox: Sandbox, run: Run) -> None:
    sandbox.inject(Fault(status=200, body="OK"), path="/cb")
    code, out, _ = run("trigger-callback", f"{sandbox.base_url}/cb", "--reference", "a&b")
    assert code == 0
    assert out == f"GET {sandbox.base_url}/cb?reference=a%26b -> 200\nOK\n"
    sandbox.inject(Fault(status=500, body="boom"), path="/cb")
    assert run("trigger-callback", f"{sandbox.base_url}/cb", "--reference", "x")[0] == 1
    assert run("trigger-callback", "not-a-url", "--reference", "x")[0] == 2
    code, _, err = run("trigger-callback", "http://a\x7fb/cb", "--reference", "x")
    assert (code, err.count("\n")) == (2, 1)  # one line, no traceback
    assert "not a valid URL" in err
    sandbox.stop()
    assert run("trigger-callback", "http://127.0.0.1:9/cb", "--reference", "x")[0] == 3


@pytest.mark.parametrize("command", ["pay", "trigger-callback"])
def test_the_password_of_a_callback_url_is_sent_but_never_printed(
    sandbox: Sandbox, run: Run, command: str
) -> None:
    """A staging handler behind HTTP basic auth (``https://shop:PASSWORD@staging.example/cb``):
    the password is sent, as Basic auth, and what the command prints (into a CI job's log,
    say) shows it as ``***``, for an answer as for a handler that cannot be reached."""
    sandbox.inject(Fault(status=200, body="OK"), path="/cb", times=None)
    for host, code in [(f"127.0.0.1:{sandbox.port}", 0), ("127.0.0.1:9", 3)]:
        url = f"http://shop:s3cr%40t-Pw@{host}/cb"
        if command == "pay":
            argv = ["pay", "order-77", "--replace", "--amount", "500", "--currency", "USD"]
            argv += ["--callback", url]
        else:
            argv = ["trigger-callback", url, "--reference", "order-77"]
        said, out, err = run(*argv)
        assert said == code, err
        assert "s3cr" not in out + err and "Pw" not in out + err
        assert f"http://shop:***@{host}/cb?reference=order-77" in out + err
    sent = [r for r in sandbox.requests if r.path == "/cb"]
    assert sent and all("authorization" in {name.lower() for name in r.headers} for r in sent)


def test_a_callback_url_whose_port_is_past_65535_is_refused_not_sent_to_another_port(
    sandbox: Sandbox, run: Run
) -> None:
    """Port 65536 + N is not port N: the handler on N never hears of it."""
    sandbox.inject(Fault(status=200, body="OK"), path="/cb")
    url = f"http://127.0.0.1:{sandbox.port + 65536}/cb"
    code, out, err = run("trigger-callback", url, "--reference", "x")
    assert (code, out) == (2, "")
    assert err == (
        f"paysdk: error: callback URL {url!r} is not a valid URL: Port out of range 0-65535\n"
    )
    assert sandbox.requests == []


@pytest.mark.parametrize("timeout", ["86400.5", "10000000000", "100000"])
def test_a_trigger_callback_timeout_no_socket_can_wait_is_a_usage_error(
    sandbox: Sandbox, run: Run, timeout: str
) -> None:
    code, out, err = run(
        "trigger-callback", f"{sandbox.base_url}/cb", "--reference", "x", "--timeout", timeout
    )
    assert (code, out) == (2, "")
    assert err == (
        "paysdk: error: --timeout: the callback's timeout must be more than 0 and at most 86400 "
        f"seconds, not {float(timeout)!r}\n"
    )
    assert sandbox.requests == []


def test_python_m_paysdk_runs_as_a_process(sandbox: Sandbox) -> None:
    env = {**os.environ, "PAYSDK_BASE_URL": sandbox.base_url, "PAYSDK_SECRET_KEY": "sk_wrong"}
    done = subprocess.run(
        [sys.executable, "-m", "paysdk", "verify", COMPLETED_REFERENCE, "--json",
         "--secret-key", sandbox.secret_key],
        env=env, capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    assert (done.returncode, done.stderr) == (0, "")
    assert json.loads(done.stdout)["reference"] == COMPLETED_REFERENCE


@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGINT])
def test_the_sandbox_command_serves_until_signalled(stop_signal: signal.Signals) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "paysdk.sandbox", "--secret-key", "sk_cli_test", "--quiet"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        assert first.startswith("paysdk sandbox listening on http://127.0.0.1:")
        base_url = first.split()[-1]
        lines = [process.stdout.readline() for _ in range(8)]
        assert "secret key: sk_cli_test\n" in lines
        assert f"  export PAYSDK_BASE_URL={base_url}\n" in lines
        assert "  export PAYSDK_SECRET_KEY=sk_cli_test\n" in lines
        env = {**os.environ, "PAYSDK_BASE_URL": base_url, "PAYSDK_SECRET_KEY": "sk_cli_test"}
        listed = subprocess.run(
            [sys.executable, "-m", "paysdk", "list", "--json"],
            env=env, capture_output=True, text=True, timeout=30, check=False,
        )  # fmt: skip
        assert listed.returncode == 0
        assert len(json.loads(listed.stdout)) == 8
        process.send_signal(stop_signal)
        assert process.wait(timeout=10) == 0
        assert "sandbox stopped" in (process.stderr.read() if process.stderr else "")
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()
    port = int(base_url.rsplit(":", 1)[1])
    with pytest.raises(ConnectionRefusedError), socket.create_connection(("127.0.0.1", port)):
        pass


def test_the_sandbox_command_answers_on_when_its_log_cannot_be_written() -> None:
    """``paysdk sandbox 2>&1 | head``: once the log's reader has gone, every request is still
    answered (the log line is lost), rather than none."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # the log's reader is gone before the first request: a sure EPIPE
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "paysdk.sandbox", "--secret-key", "sk_cli_test"],
            stdout=subprocess.PIPE, stderr=write_end, text=True,
        )  # fmt: skip
    finally:
        os.close(write_end)
    try:
        assert process.stdout is not None
        base_url = process.stdout.readline().split()[-1]
        headers = {"Authorization": "Bearer sk_cli_test"}
        for _ in range(3):
            answer = httpx.get(f"{base_url}/payments", headers=headers, timeout=10)
            assert answer.status_code == 200
    finally:
        process.kill()
        process.wait()
        if process.stdout is not None:
            process.stdout.close()


def test_the_sandbox_command_rejects_a_bad_seed(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sandbox", "--seed", "/nonexistent/seed.json"]) == 2
    assert "cannot read seed file" in capsys.readouterr().err


@pytest.mark.parametrize("created_at", ["9999-12-31T23:00:00-05:00", "0001-01-01T00:00:00+01:00"])
def test_the_sandbox_command_rejects_a_seed_time_outside_the_calendar_in_utc(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, created_at: str
) -> None:
    """Served as it was, every list would answer 500: the service writes its times in UTC."""
    seed = tmp_path / "seed.json"
    seed.write_text(json.dumps([{"reference": "order-far", "created_at": created_at}]))
    assert main(["sandbox", "--seed", str(seed)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"paysdk: error: {seed}: record 0: created_at must be a time whose ")
    assert err.count("\n") == 1


@pytest.mark.parametrize("port", ["65536", "-1", "http"])
def test_the_sandbox_command_refuses_a_port_out_of_range(
    capsys: pytest.CaptureFixture[str], port: str
) -> None:
    assert main(["sandbox", "--port", port]) == 2
    assert f"argument --port: expected a port from 0 to 65535, not {port!r}" in (
        capsys.readouterr().err
    )


def test_the_sandbox_command_reports_a_busy_port(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert main(["sandbox", "--port", str(port)]) == 2
    assert f"cannot listen on 127.0.0.1:{port}" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (
            ("--base-url", "http://pay.example.com"),
            "use https:// or pass --allow-insecure-http if this network is trusted",
        ),
        (("--base-url", "ftp://pay.example.com"), "--base-url 'ftp://pay.example.com' must be"),
        (("--base-url", "https://user:pw@pay.example.com"), "use --secret-key"),
        (("--max-retries", "11"), "--max-retries must be between 0 and 10, got 11"),
        (("--timeout", "100000"), "--timeout must be more than 0 and at most 86400 seconds"),
    ],
)
def test_configuration_errors_name_the_flags_not_python_arguments(
    run: Run, argv: tuple[str, ...], says: str
) -> None:
    code, _, err = run("list", *argv)
    assert code == 2
    assert says in err
    assert not re.search(r"\b(secret_key|base_url|max_retries|allow_insecure_http)\b", err)
    assert "None" not in err
    assert "=True" not in err


@pytest.mark.parametrize(
    ("variable", "value", "says"),
    [
        (
            "PAYSDK_BASE_URL",
            "ftp://pay.example.com",
            "PAYSDK_BASE_URL 'ftp://pay.example.com' must",
        ),
        ("PAYSDK_BASE_URL", "https://u:p@pay.example.com", "PAYSDK_BASE_URL must not contain"),
        ("PAYSDK_SECRET_KEY", " sk_padded ", "the secret key from PAYSDK_SECRET_KEY has leading"),
    ],
)
def test_a_bad_value_from_the_environment_names_the_variable_not_the_flag(
    run: Run, monkeypatch: pytest.MonkeyPatch, variable: str, value: str, says: str
) -> None:
    monkeypatch.setenv(variable, value)
    code, out, err = run("list")
    assert (code, out) == (2, "")
    assert says in err
    assert "--base-url '" not in err
    assert "from --secret-key" not in err


def test_a_bad_value_from_a_flag_names_the_flag(run: Run) -> None:
    code, _, err = run("list", "--secret-key", "sk_\u00e9")
    assert code == 2
    assert "the secret key from --secret-key contains characters" in err


@pytest.mark.parametrize(
    "amount",
    # 2500000 in Arabic-Indic and in fullwidth digits, and with a sign or stray _s: int() reads each
    [
        "25000.00",
        "2.5e6",
        "2,500,000",
        "NGN2500000",
        "\u0662\u0665" + "\u0660" * 5,
        "\uff12\uff15" + "\uff10" * 5,
        "+2500000",
        "_2500000",
        "2__500_000",
        "2500000_",
    ],
)
def test_a_non_integer_amount_is_a_usage_error_that_states_the_unit(run: Run, amount: str) -> None:
    code, out, err = run("confirm", COMPLETED_REFERENCE, "--amount", amount, "--currency", "NGN")
    assert (code, out) == (2, "")
    assert f"argument --amount: expected a whole number such as 2500000, not {amount!r}" in err
    assert "in the unit the service reports them in (paysdk never converts or rounds them)" in err
    in_minor = ": 25000.00 in whole units (naira, dollars) is 2500000 in minor units (kobo, cents)"
    assert (in_minor in err) is (amount == "25000.00")


def test_an_amount_with_underscores_or_spaces_is_read_as_the_integer(run: Run) -> None:
    args = ("--amount", " 2_500_000 ", "--currency", "NGN")
    assert run("confirm", COMPLETED_REFERENCE, *args)[0] == 0


def test_verbose_shows_each_attempt_and_retry(sandbox: Sandbox, run: Run) -> None:
    sandbox.inject(Fault.server_error(), path="/payments", times=1)
    code, out, err = run("list", "--json", "--verbose")
    assert (code, len(json.loads(out))) == (0, 8)
    lines = err.splitlines()
    url = re.escape(f"{sandbox.base_url}/payments")
    first, second = (request.request_id for request in sandbox.requests)
    assert re.fullmatch(
        rf"paysdk: attempt 1: GET {url} -> 500 in \d+ ms \(request id {first}\)", lines[0]
    )
    assert re.fullmatch(
        rf"paysdk: GET {re.escape(sandbox.base_url)}/payments failed \(ServerError\); "
        r"retry 1 of 2 in \d+\.\d\ds",
        lines[1],
    )
    assert len(lines) == 3
    assert re.fullmatch(
        rf"paysdk: attempt 2: GET {url} -> 200 in \d+ ms \(request id {second}\)", lines[2]
    )


def test_without_verbose_nothing_but_the_output_is_printed(sandbox: Sandbox, run: Run) -> None:
    sandbox.inject(Fault.server_error(), path="/payments", times=1)
    code, _, err = run("list", "--json")
    assert (code, err) == (0, "")


def test_retries_and_timeout_not_given_are_read_from_the_environment_as_the_client_does(
    sandbox: Sandbox, run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    sandbox.inject(Fault.server_error(), path="/payments", times=None)
    monkeypatch.setenv("PAYSDK_MAX_RETRIES", "0")
    code, _, err = run("list")
    assert (code, err.endswith(" (1 attempt)\n")) == (3, True)
    assert run("list", "--max-retries", "1")[2].endswith(" (2 attempts)\n")  # the flag first
    monkeypatch.setenv("PAYSDK_TIMEOUT", "soon")
    code, _, err = run("verify", COMPLETED_REFERENCE)
    assert code == 2
    assert "PAYSDK_TIMEOUT='soon' is not a valid number of seconds" in err
    code, _, err = run("pay", "order-9", "--amount", "1", "--currency", "NGN",
                       "--callback", "http://127.0.0.1:9/cb")  # fmt: skip
    assert code == 2
    assert "PAYSDK_TIMEOUT='soon' is not a valid number of seconds" in err


def test_the_final_error_says_how_many_attempts_were_made(
    sandbox: Sandbox, run: Run, tmp_path: Path
) -> None:
    sandbox.inject(Fault.server_error(), path="/payments", times=None)
    code, _, err = run("list", "--max-retries", "1")
    assert code == 3
    assert err.startswith("paysdk: error: ")
    assert err.endswith(" (2 attempts)\n")
    # reconcile streams the list (iter_payments): the count is the error's, not the log's
    ledger = tmp_path / "ledger.db"
    with Ledger(ledger) as made:
        made.create_table()
    code, _, err = run("reconcile", "--ledger", str(ledger), "--max-retries", "2")
    assert code == 3
    assert err.startswith("paysdk: error: ")
    assert err.endswith(" (3 attempts)\n")
    code, _, err = run("verify", UNKNOWN_REFERENCE)
    assert (code, err.endswith(" (1 attempt)\n")) == (1, True)
    sandbox.inject(Fault(disconnect="before_response"), times=None)
    code, _, err = run("verify", COMPLETED_REFERENCE, "--max-retries", "0")
    assert code == 3
    assert err.endswith(" (1 attempt)\n")


def test_verbose_shows_each_attempt_of_a_streamed_call(
    sandbox: Sandbox, run: Run, tmp_path: Path
) -> None:
    ledger = tmp_path / "ledger.db"
    with Ledger(ledger) as made:
        made.create_table()
    sandbox.inject(Fault.server_error(), path="/payments", times=None)
    code, _, err = run("reconcile", "--ledger", str(ledger), "--max-retries", "1", "--verbose")
    assert code == 3
    lines = err.splitlines()
    url = re.escape(f"{sandbox.base_url}/payments")
    first, second = (request.request_id for request in sandbox.requests)
    assert re.fullmatch(
        rf"paysdk: attempt 1: GET {url} -> 500 in \d+ ms \(request id {first}\)", lines[0]
    )
    assert lines[1].startswith(f"paysdk: GET {sandbox.base_url}/payments failed (ServerError); ")
    assert re.fullmatch(
        rf"paysdk: attempt 2: GET {url} -> 500 in \d+ ms \(request id {second}\)", lines[2]
    )
    assert lines[3].startswith("paysdk: error: ")
    assert lines[3].endswith(" (2 attempts)")
    assert len(lines) == 4


@pytest.mark.parametrize("argv", [("list", "--json"), ("--help",), ("--version",)])
def test_a_reader_that_stops_early_is_not_an_unreachable_service(
    sandbox: Sandbox, argv: tuple[str, ...]
) -> None:
    """``paysdk list --json | head -1``: our stdout's reader has gone before we write. The
    help and the version too, which argparse writes ignoring the error."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before paysdk writes a byte: a sure EPIPE
    env = {
        **os.environ,
        "PAYSDK_BASE_URL": sandbox.base_url,
        "PAYSDK_SECRET_KEY": sandbox.secret_key,
    }
    try:
        done = subprocess.run(
            [sys.executable, "-m", "paysdk", *argv],
            stdout=write_end, stderr=subprocess.PIPE, env=env, timeout=30, check=False,
        )  # fmt: skip
    finally:
        os.close(write_end)
    assert (done.returncode, done.stderr) == (141, b"")


@pytest.mark.parametrize(
    "argv", [("verify", COMPLETED_REFERENCE), ("list", "--json"), ("--help",), ("verify", "--help")]
)
def test_a_closed_stdout_is_a_closed_pipe_not_a_bug(
    sandbox: Sandbox, argv: tuple[str, ...]
) -> None:
    """``paysdk list >&-``: started without a stdout at all, which Python leaves ``None``."""
    env = {
        **os.environ,
        "PAYSDK_BASE_URL": sandbox.base_url,
        "PAYSDK_SECRET_KEY": sandbox.secret_key,
    }
    command = shlex.join([sys.executable, "-m", "paysdk", *argv])
    done = subprocess.run(
        ["/bin/sh", "-c", f"{command} >&-"], capture_output=True, env=env, timeout=30, check=False
    )
    assert (done.returncode, done.stderr) == (141, b"")


def test_an_error_with_stderr_closed_never_reaches_stdout(sandbox: Sandbox) -> None:
    """``paysdk verify ... 2>&-``: the error is not written into the command's output."""
    env = {
        **os.environ,
        "PAYSDK_BASE_URL": sandbox.base_url,
        "PAYSDK_SECRET_KEY": sandbox.secret_key,
    }
    command = shlex.join([sys.executable, "-m", "paysdk", "verify", UNKNOWN_REFERENCE])
    done = subprocess.run(
        ["/bin/sh", "-c", f"{command} 2>&-"], capture_output=True, env=env, timeout=30, check=False
    )
    assert (done.returncode, done.stdout) == (1, b"")


def test_head_closing_the_pipe_leaves_stderr_quiet(sandbox: Sandbox) -> None:
    env = {
        **os.environ,
        "PAYSDK_BASE_URL": sandbox.base_url,
        "PAYSDK_SECRET_KEY": sandbox.secret_key,
    }
    command = f"{shlex.quote(sys.executable)} -m paysdk list --json | head -1"
    done = subprocess.run(
        ["/bin/sh", "-c", command], capture_output=True, env=env, timeout=30, check=False
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, b"[\n", b"")


def test_the_docs_exit_code_table_lists_exactly_the_codes_the_command_uses() -> None:
    text = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text(encoding="utf-8")
    table = text.partition("## Exit codes")[2].partition("\n\n|")[2].partition("\n\n")[0]
    documented = [int(line.split("|")[1]) for line in table.splitlines()[2:]]
    assert documented == sorted(exits.MEANINGS)


def test_the_command_line_loads_no_http_client_nor_models_until_a_command_needs_them(
    tmp_path: Path,
) -> None:
    """Every command's help, and a detached sandbox's start, status and stop, run without httpx,
    pydantic or the ledger: they start in a fraction of the time, and ``paysdk sandbox`` serves
    without them. The help runs without the standard library's HTTP client too, which only the
    commands that ask a detached sandbox need."""
    code = textwrap.dedent("""
        import contextlib, io, sys
        from paysdk.cli import main
        commands = [[], ["verify"], ["list"], ["sandbox"], ["pay"], ["trigger-callback"],
                    ["reconcile"], ["ledger"], ["sandbox", "status"]]
        quiet = io.StringIO()
        with contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet):
            for command in commands:
                main([*command, "--help"])
            helped_without_http_client = "http.client" not in sys.modules
            none_running = main(["sandbox", "status"])
            started = main(["sandbox", "--detach", "--port", sys.argv[1]])
            running = main(["sandbox", "status"])
            stopped = main(["sandbox", "stop"])
        print(none_running, started, running, stopped, helped_without_http_client)
        loaded = (
            "httpx",
            "pydantic",
            "sqlite3",
            "paysdk._client._sync.client",
            "paysdk.ledger._sync.ledger",
        )
        print(sorted(name for name in loaded if name in sys.modules))
    """)
    environment = {**os.environ, "XDG_RUNTIME_DIR": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-c", code, str(unused_port())],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        env=environment,
    )
    ok, failure = exits.EXIT_OK, exits.EXIT_FAILURE
    assert result.stdout.splitlines() == [f"{failure} {ok} {ok} {ok} True", "[]"], result.stderr


def test_json_output_keeps_what_the_service_sent_in_a_field_it_could_not_read(
    sandbox: Sandbox, run: Run
) -> None:
    """An optional field sent in another type reads as unset; ``--json`` still prints it."""
    record = sandbox.get_payment(COMPLETED_REFERENCE)
    assert record is not None
    verified, listed = record.verify_shape(), record.list_shape()
    for shape in (verified, listed):
        shape["fee"], shape["customer"] = "n/a", {**shape["customer"], "name": 7}
    path = f"/payment/{COMPLETED_REFERENCE}"
    sandbox.inject(Fault.json(200, {"status": True, "data": verified}), path=path)
    sandbox.inject(Fault.json(200, {"data": [listed]}), path="/payments")

    code, out, _ = run("verify", COMPLETED_REFERENCE, "--json")
    assert (code, json.loads(out)) == (0, verified)
    code, out, _ = run("list", "--json")
    assert (code, json.loads(out)) == (0, [listed])


def test_json_output_gives_products_and_metadata_sent_as_null_as_null(sandbox: Sandbox) -> None:
    """The models read ``null`` products or metadata as empty (nothing there); ``--json``,
    exact, gives back the ``null`` the service sent, not ``[]`` or ``{}``."""
    record = sandbox.get_payment(COMPLETED_REFERENCE)
    assert record is not None
    verified = {**record.verify_shape(), "products": None, "metadata": None}
    listed = {**record.list_shape(), "products": None}
    path = f"/payment/{COMPLETED_REFERENCE}"
    sandbox.inject(Fault.json(200, {"status": True, "data": verified}), path=path)
    sandbox.inject(Fault.json(200, {"data": [listed]}), path="/payments")

    code, out, err = paysdk_cli("verify", COMPLETED_REFERENCE, "--json", service=sandbox)
    assert (code, err, json.loads(out)) == (0, "", verified)
    code, out, err = paysdk_cli("list", "--json", service=sandbox)
    assert (code, err, json.loads(out)) == (0, "", [listed])

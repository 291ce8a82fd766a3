"""What the ``paysdk`` command's exit code says, run as a fulfilment script runs it (in a
pseudo-terminal, against the sandbox): 1 only where the service answered about the payment and
it is not confirmed, 2 for a refused key, 3 for no answer now, the same in every command."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from paysdk.ledger import Ledger
from paysdk.sandbox import (
    COMPLETED_REFERENCE,
    FAILED_REFERENCE,
    UNKNOWN_REFERENCE,
    Fault,
    Sandbox,
)
from tests.support.ports import unused_port
from tests.support.terminal import SRC, run_in_terminal

ROOT = Path(__file__).resolve().parents[2]
PAID = ("--amount", "2500000", "--currency", "NGN")
"""What ``COMPLETED_REFERENCE`` was paid: ``confirm``'s flags for a payment that is confirmed."""
COMMANDS = {
    "confirm": ("confirm", COMPLETED_REFERENCE, *PAID),
    "verify": ("verify", COMPLETED_REFERENCE),
    "list": ("list",),
}
"""Each command that reads the service, as it succeeds (exit 0) against the bundled seed."""

Setup = Callable[[Sandbox, pytest.MonkeyPatch], None]


def _outage(status: int) -> Setup:
    def setup(sandbox: Sandbox, _: pytest.MonkeyPatch) -> None:
        sandbox.inject(Fault.json(status, {"error": "try later"}), times=None)

    return setup


def _rotated_key(_: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PAYSDK_SECRET_KEY", "sk_test_the_key_before_rotation")


def _forbidden(sandbox: Sandbox, _: pytest.MonkeyPatch) -> None:
    sandbox.inject(Fault.json(403, {"error": "Forbidden"}), times=None)


def _nothing_listening(_: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PAYSDK_BASE_URL", f"http://127.0.0.1:{unused_port()}")


def _too_slow(sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    sandbox.inject(Fault(delay=5), times=None)
    monkeypatch.setenv("PAYSDK_TIMEOUT", "0.2")


def _unreadable(sandbox: Sandbox, _: pytest.MonkeyPatch) -> None:
    sandbox.inject(Fault(status=200, body="<html>maintenance</html>"), times=None)


NO_ANSWER = {
    "503": (_outage(503), "the service failed: try later"),
    "500": (_outage(500), "the service failed: try later"),
    "429": (_outage(429), "rate limited: try later"),
    "nothing listening": (_nothing_listening, "could not reach the service"),
    "timeout": (_too_slow, "no answer within the timeout"),
    "unreadable answer": (_unreadable, "not JSON"),
}
"""No answer about the payment could be had now: each exits 3, whatever the command."""


@pytest.fixture
def sandbox(monkeypatch: pytest.MonkeyPatch) -> Iterator[Sandbox]:
    """The sandbox, named by the variables a script's environment sets; no retries."""
    with Sandbox() as running:
        monkeypatch.setenv("PAYSDK_BASE_URL", running.base_url)
        monkeypatch.setenv("PAYSDK_SECRET_KEY", running.secret_key)
        monkeypatch.setenv("PAYSDK_MAX_RETRIES", "0")
        yield running


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("case", list(NO_ANSWER))
def test_no_answer_about_the_payment_exits_3(
    sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch, command: str, case: str
) -> None:
    """A service outage (5xx), a rate limit, a port nothing listens on, a timeout, an answer
    paysdk cannot read: ``paysdk confirm ... || cancel_order`` must not cancel a paid order."""
    setup, said = NO_ANSWER[case]
    setup(sandbox, monkeypatch)
    code, out, err = run_in_terminal(*COMMANDS[command])
    assert (code, out) == (3, ""), err
    assert err.startswith("paysdk: error: ")
    assert said in err
    assert err.count("\n") == 1


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("refusal", [_rotated_key, _forbidden], ids=["401", "403"])
def test_a_refused_key_is_a_configuration_error(
    sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch, command: str, refusal: Setup
) -> None:
    """A key rotated away (401), or one that may not read payments (403): the key is to fix,
    not the payment to cancel; a 401 says which setting to check."""
    refusal(sandbox, monkeypatch)
    code, out, err = run_in_terminal(*COMMANDS[command])
    assert (code, out) == (2, ""), err
    assert err.count("\n") == 1
    if refusal is _rotated_key:
        assert err.startswith(
            "paysdk: error: the secret key was not accepted; is PAYSDK_SECRET_KEY the key of "
            "the service at PAYSDK_BASE_URL?"
        )
        assert "sk_test_the_key_before_rotation" not in err
    else:
        assert err.startswith("paysdk: error: the secret key may not do this")


@pytest.mark.usefixtures("sandbox")
@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (("confirm", FAILED_REFERENCE, "--amount", "4999", "--currency", "USD"), "did not succeed"),
        (("confirm", COMPLETED_REFERENCE, "--amount", "2500", "--currency", "NGN"), "amount"),
        (("confirm", COMPLETED_REFERENCE, "--amount", "2500000", "--currency", "USD"), "currency"),
        (("confirm", UNKNOWN_REFERENCE, *PAID), "no payment has the reference"),
        (("verify", UNKNOWN_REFERENCE), "no payment has the reference"),
    ],
    ids=["not succeeded", "amount differs", "currency differs", "confirm 404", "verify 404"],
)
def test_the_services_answer_that_the_payment_is_not_confirmed_exits_1(
    argv: tuple[str, ...], said: str
) -> None:
    """Exit 1 is the service's own word on the payment: it did not succeed, it differs from what
    was expected, or (its documented 404) no payment has the reference."""
    code, out, err = run_in_terminal(*argv)
    assert (code, out) == (1, ""), err
    assert said in err


def test_a_payment_that_did_not_succeed_is_a_successful_lookup_for_verify(
    sandbox: Sandbox,
) -> None:
    code, out, _ = run_in_terminal("verify", FAILED_REFERENCE)
    assert code == 0
    assert "success:         no" in out


def test_lists_own_404_is_no_answer_and_a_404_of_no_route_is_the_base_url(
    sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    """List's documented 404 (``Connection Error``, behind the service) is an outage, 3; a 404
    that is not the service's own is a base URL to fix, 2."""
    sandbox.inject(Fault.json(404, {"error": "Connection Error"}), path="/payments", times=None)
    code, _, err = run_in_terminal("list")
    assert code == 3, err
    assert "the payment list is unavailable" in err
    monkeypatch.setenv("PAYSDK_BASE_URL", f"{sandbox.base_url}/v9")
    for argv in (
        ("list",),
        ("verify", COMPLETED_REFERENCE),
        ("confirm", COMPLETED_REFERENCE, *PAID),
    ):
        code, _, err = run_in_terminal(*argv)
        assert code == 2, err
        assert err.startswith("paysdk: error: not found; is PAYSDK_BASE_URL right?")


def test_reconcile_exits_as_the_other_commands_do(
    sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A cron job's ``reconcile``: an outage is 3, a refused key 2, as for ``list``."""
    ledger = tmp_path / "ledger.db"
    with Ledger(ledger) as made:
        made.create_table()
    sandbox.inject(Fault.server_error(503), path="/payments", times=None)
    assert run_in_terminal("reconcile", "--ledger", str(ledger))[0] == 3
    sandbox.clear_faults()
    monkeypatch.setenv("PAYSDK_SECRET_KEY", "sk_test_the_key_before_rotation")
    assert run_in_terminal("reconcile", "--ledger", str(ledger))[0] == 2


def _docs_script() -> str:
    """The fulfilment script docs/cli.md shows for ``confirm``: from ``paysdk confirm`` to
    ``esac``, without the stand-ins for the shop's actions and order the page gives it."""
    page = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    block = page.split("a fulfilment script that tells them apart:\n\n```sh\n", 1)[1]
    script = block.split("```", 1)[0]
    return "paysdk confirm" + script.split("\npaysdk confirm", 1)[1]


@pytest.mark.parametrize(
    ("setup", "did"),
    [
        (None, "shipped"),
        (_outage(503), "later"),
        (_rotated_key, "later"),
        (_nothing_listening, "later"),
    ],
    ids=["paid", "503", "401", "nothing listening"],
)
def test_the_docs_fulfilment_script_cancels_only_what_the_service_says_is_not_paid(
    sandbox: Sandbox,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    setup: Setup | None,
    did: str,
) -> None:
    """docs/cli.md's script, run by ``sh -e`` as written, ships a paid order, cancels one the
    service says is not paid, and leaves both alone when no answer can be had."""
    if setup is not None:
        setup(sandbox, monkeypatch)
    shim = tmp_path / "paysdk"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m paysdk "$@"\n')
    shim.chmod(shim.stat().st_mode | stat.S_IXUSR)
    shop = (
        'ship_order() { echo "shipped $1"; }\n'
        'cancel_order() { echo "cancelled $1"; }\n'
        'try_later() { echo "later $1"; }\n'
    )
    env = {**os.environ, "PATH": f"{tmp_path}{os.pathsep}{os.environ['PATH']}", "PYTHONPATH": SRC}

    def run(reference: str, amount: str, currency: str) -> str:
        order = {"REF": reference, "AMOUNT": amount, "CURRENCY": currency}
        done = subprocess.run(
            ["sh", "-e", "-c", shop + _docs_script()],
            env={**env, **order},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.splitlines()[-1]  # after confirm's own line, what the shop did

    assert run(COMPLETED_REFERENCE, "2500000", "NGN") == f"{did} {COMPLETED_REFERENCE}"
    if setup is None:
        assert run(FAILED_REFERENCE, "4999", "USD") == f"cancelled {FAILED_REFERENCE}"
        assert run(COMPLETED_REFERENCE, "25", "NGN") == f"cancelled {COMPLETED_REFERENCE}"

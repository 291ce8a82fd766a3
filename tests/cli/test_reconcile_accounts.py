"""``paysdk reconcile --account`` and ``paysdk ledger ... --account``, through the real CLI (a
``python -m paysdk`` process): two merchant accounts sharing one ledger and the reference
``order-1`` are reconciled and amended each apart."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

import paysdk
from paysdk.ledger import Ledger
from paysdk.sandbox import Sandbox
from tests.support.command import paysdk_cli
from tests.support.either_ledger import paid
from tests.support.terminal import run_in_terminal

ROOT = Path(__file__).resolve().parents[2]


def only_order_1(sandbox: Sandbox, amount: int) -> Sandbox:
    for record in sandbox.payments:
        sandbox.remove_payment(record.reference)
    sandbox.add_payment("order-1", amount=amount, currency="NGN", status="COMPLETED")
    return sandbox


@pytest.fixture
def accounts() -> Iterator[dict[str, Sandbox]]:
    """Two accounts' services, each listing its own completed ``order-1``."""
    with Sandbox() as lagos, Sandbox() as abuja:
        yield {"lagos-1": only_order_1(lagos, 700), "abuja-2": only_order_1(abuja, 500)}


@pytest.fixture
def ledger_path(accounts: dict[str, Sandbox], tmp_path: Path) -> Path:
    """One ledger where lagos-1's order-1 is fulfilled, and abuja-2's is not."""
    path = tmp_path / "ledger.db"
    lagos = accounts["lagos-1"]
    with (
        paysdk.Client(
            secret_key=lagos.secret_key, base_url=lagos.base_url, account="lagos-1"
        ) as client,
        Ledger(path) as ledger,
    ):
        assert ledger.fulfil_once(client.verify("order-1"), lambda payment: None).fulfilled_now
    return path


def test_reconcile_reports_each_account_against_its_own_rows(
    accounts: dict[str, Sandbox], ledger_path: Path
) -> None:
    ledger = ["--ledger", str(ledger_path)]
    code, out, err = paysdk_cli(
        "reconcile", *ledger, "--account", "lagos-1", service=accounts["lagos-1"]
    )
    assert (code, err) == (0, "")
    assert out.splitlines()[-2].startswith("account lagos-1: 1 listed, 1 completed, 1 fulfilled")
    assert out.splitlines()[-1] == "all clear: nothing needs attention"

    abuja = accounts["abuja-2"]
    argv = ["reconcile", *ledger, "--account", "abuja-2", "--json"]
    code, out, err = paysdk_cli(*argv, service=abuja)
    report = json.loads(out)
    assert (code, err, report["account"]) == (4, "", "abuja-2")
    assert [(d["kind"], d["reference"], d["amount"]) for d in report["discrepancies"]] == [
        ("missed", "order-1", 500)
    ]


def test_ledger_list_and_refuse_amend_one_account(
    accounts: dict[str, Sandbox], ledger_path: Path
) -> None:
    ledger = ["--ledger", str(ledger_path)]
    code, out, _ = paysdk_cli("ledger", "list", *ledger, "--account", "lagos-1", "--json")
    assert code == 0
    assert [(r["reference"], r["state"]) for r in map(json.loads, out.splitlines())] == [
        ("order-1", "fulfilled")
    ]
    for account in ("abuja-2", None):  # neither abuja-2 nor the unlabelled account has a row
        chosen = ["--account", account] if account else []
        assert paysdk_cli("ledger", "list", *ledger, *chosen, "--json")[:2] == (0, "")

    refused = ["order-1", *ledger, "--account", "abuja-2", "--reason", "out of stock"]
    code, out, err = paysdk_cli("ledger", "refuse", *refused)
    assert (code, out, err) == (0, "order-1: refused (out of stock)\n", "")
    abuja = accounts["abuja-2"]
    code, out, _ = paysdk_cli("reconcile", *ledger, "--account", "abuja-2", service=abuja)
    assert (code, out.splitlines()[-1]) == (0, "all clear: nothing needs attention")
    with Ledger(ledger_path, create_table=False) as opened:
        kept = opened.row("order-1", account="lagos-1")
        assert kept is not None and kept.state == "fulfilled"  # the other account's row

    code, out, err = paysdk_cli("ledger", "resolve", "order-1", *ledger, "--ran")
    assert code != 0 and "no row" in err  # the unlabelled account has no order-1
    assert (  # and no other row: the label was left out
        "the unlabelled account holds no payment, and account 'abuja-2' holds some: name the "
        "account as its client does (account=, paysdk ledger --account)" in err
    )
    code, out, err = paysdk_cli(
        "ledger", "resolve", "order-1", *ledger, "--ran", "--account", "Lagos-1"
    )
    assert code != 0 and "account 'Lagos-1' holds no payment, and account 'lagos-1' holds" in err


def test_ledger_refuse_under_the_label_in_another_case_is_a_usage_error(
    ledger_path: Path,
) -> None:
    """``paysdk ledger refuse --account Lagos-1`` where the payments are under ``lagos-1``: the
    refusal would be recorded where no client looks, and reconcile go on reporting the payment
    missed; it exits 2 naming the label to use, and records nothing."""
    ledger = ["--ledger", str(ledger_path)]
    for action in ("refuse", "ignore"):
        argv = ["ledger", action, "order-2", *ledger, "--account", "Lagos-1", "--reason", "x"]
        code, out, err = paysdk_cli(*argv)
        assert (code, out) == (2, "")
        assert "'lagos-1'" in err and "nothing was recorded" in err
    with Ledger(ledger_path, create_table=False) as opened:
        assert opened.row("order-2", account="Lagos-1") is None


def test_ledger_list_under_the_label_in_another_case_names_the_label_held(
    ledger_url: str,
) -> None:
    """``paysdk ledger list --account Lagos-1`` at a terminal, where the payments are under
    ``lagos-1``: the empty table comes with a note naming the label to use, on SQLite and
    PostgreSQL, as does ``ledger list`` without ``--account`` where only labels hold payments (a
    platform's ledger); a listing that is empty for another reason has none."""
    with Ledger(ledger_url) as ledger:
        done = ledger.fulfil_once(paid("order-1").issued_by("lagos-1", "k"), lambda p: None)
        assert done.fulfilled_now
    listing = ["ledger", "list", "--ledger", ledger_url]
    for shown in ([], ["--json"]):
        code, out, err = run_in_terminal(*listing, "--account", "Lagos-1", *shown)
        assert code == 0 and "order-1" not in out
        assert err == (
            "paysdk: note: this ledger holds no payment under account 'Lagos-1', and holds "
            "payments under account 'lagos-1', its label in another case: a label is matched to "
            "the letter (--account lagos-1)\n"
        )
    for shown in ([], ["--json"]):
        code, out, err = run_in_terminal(*listing, *shown)
        assert code == 0 and "order-1" not in out
        assert err == (
            "paysdk: note: this ledger holds no payment without an account, and holds payments "
            "under account 'lagos-1' (and maybe others): name the account as its client does "
            "(--account lagos-1)\n"
        )
    for quiet in (["--account", "abuja-2"], ["--account", "lagos-1", "--state", "refused"]):
        code, out, err = run_in_terminal(*listing, *quiet, "--json")
        assert (code, out, err) == (0, "", "")


def test_ledger_refuse_without_an_account_where_only_labels_hold_payments_is_a_usage_error(
    accounts: dict[str, Sandbox], ledger_path: Path
) -> None:
    """``paysdk ledger refuse order-2`` with ``--account`` left out, on a platform's ledger whose
    payments are all under labels: the refusal would be recorded under no account, where no
    client looks, and reconcile of the payment's account go on reporting it missed. It exits 2
    naming a label held, and records nothing; a ledger whose unlabelled account holds payments
    takes it."""
    ledger = ["--ledger", str(ledger_path)]
    for action in ("refuse", "ignore"):
        code, out, err = paysdk_cli("ledger", action, "order-2", *ledger, "--reason", "x")
        assert (code, out) == (2, "")
        assert "'lagos-1'" in err and "nothing was recorded" in err
    with Ledger(ledger_path, create_table=False) as opened:
        assert opened.row("order-2") is None
        assert opened.fulfil_once(paid("order-3"), lambda payment: None).fulfilled_now
    code, out, err = paysdk_cli("ledger", "refuse", "order-2", *ledger, "--reason", "x")
    assert (code, out, err) == (0, "order-2: refused (x)\n", "")


@pytest.mark.parametrize("label", ["sk_live 7f3a", "lagos/1"])
def test_a_malformed_account_is_a_usage_error_that_does_not_echo_it(
    ledger_path: Path, label: str
) -> None:
    code, out, err = paysdk_cli("ledger", "list", "--ledger", str(ledger_path), "--account", label)
    assert (code, out) == (2, "")
    assert "--account" in err and "never pass a key" in err and label not in err


def test_retire_key_lets_a_rotated_key_reconcile_the_unlabelled_rows(
    accounts: dict[str, Sandbox], ledger_path: Path
) -> None:
    """The unlabelled account's order-1, fulfilled with abuja's key, then a key rotation (another
    service of the same payments: another fingerprint): reconcile is refused until ``ledger
    retire-key`` clears the one unlabelled row's fingerprint, the labelled lagos-1 row kept."""
    abuja, ledger = accounts["abuja-2"], ["--ledger", str(ledger_path)]
    with (
        Sandbox() as rotated,
        paysdk.Client(secret_key=abuja.secret_key, base_url=abuja.base_url) as client,
        Ledger(ledger_path) as opened,
    ):
        only_order_1(rotated, 500)
        assert opened.fulfil_once(client.verify("order-1"), lambda payment: None).fulfilled_now
        code, out, err = paysdk_cli("reconcile", *ledger, service=rotated)
        assert (code, out) == (2, "") and "account=" in err

        code, out, err = paysdk_cli("ledger", "retire-key", *ledger, "--account", "lagos-1")
        assert (code, out) == (2, "") and "leave out --account" in err
        code, out, err = paysdk_cli("ledger", "retire-key", *ledger)
        assert (code, err) == (0, "")
        assert out == (
            "cleared the key fingerprint of 1 unlabelled row: the next payment records its key\n"
        )
        code, out, err = paysdk_cli("reconcile", *ledger, service=rotated)
        assert (code, err, out.splitlines()[-1]) == (0, "", "all clear: nothing needs attention")
        assert paysdk_cli("ledger", "retire-key", *ledger)[:2] == (
            0,
            "cleared the key fingerprint of 0 unlabelled rows: the next payment records its key\n",
        )
        kept = opened.row("order-1", account="lagos-1")
        assert kept is not None and kept.state == "fulfilled"


def test_reconcile_without_the_label_of_the_keys_payments_is_refused(
    accounts: dict[str, Sandbox], ledger_path: Path
) -> None:
    """lagos-1's order-1, fulfilled by a client labelled lagos-1; a cron job reconciling the same
    key without ``--account`` (or with ``--account Lagos-1``) would report it missed and, with
    ``--fulfil``, ship it again: a usage error, naming the label its payments are under and the
    flag in the command's spelling (``--fulfil``, where the library's message says ``fulfil=``)."""
    ledger = ["--ledger", str(ledger_path)]
    for chosen in ([], ["--account", "Lagos-1"]):
        code, out, err = paysdk_cli("reconcile", *ledger, *chosen, service=accounts["lagos-1"])
        assert (code, out) == (2, "")
        assert "account 'lagos-1'" in err and "nothing was listed" in err
        assert "and with --fulfil fulfil it again" in err and "fulfil=" not in err
    lagos = accounts["lagos-1"]
    with (
        paysdk.Client(secret_key=lagos.secret_key, base_url=lagos.base_url) as client,
        Ledger(ledger_path) as ledger_of_python,
        pytest.raises(paysdk.ConfigurationError, match="and with fulfil= fulfil it again"),
    ):
        ledger_of_python.reconcile(client)

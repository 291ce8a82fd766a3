"""``paysdk reconcile --lookup`` and ``paysdk ledger``, end to end: refused and foreign payments
are shown but never fail the run; only a real miss exits 4, and once it is dealt with, exit 0."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import re
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import paysdk
from paysdk.ledger import Ledger
from paysdk.sandbox import Sandbox
from tests.cli import shop
from tests.cli.test_reconcile import new_ledger, run

LOOKUP = "tests.cli.shop:find_order"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def ledger_path(
    sandbox: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """The sandbox holds four completed payments: one paid and fulfilled, one underpaid and
    refused by the callback handler, one another shop's, and one whose callback never came."""
    for record in sandbox.payments:
        sandbox.remove_payment(record.reference)
    for reference, amount in [
        ("shop-paid", 700),
        ("shop-underpaid", 100),
        ("shop-foreign", 300),
        ("shop-missed", 500),
    ]:
        sandbox.add_payment(reference, amount=amount, currency="NGN", status="COMPLETED")
    with new_ledger(sandbox, tmp_path, monkeypatch) as (path, client, ledger):
        ledger.fulfil_once(client.verify("shop-paid"), lambda payment: None)
        ledger.refuse(client.verify("shop-underpaid"), "paid 100 of 900 NGN: answered 409")
    shop.shipped.clear()
    yield path
    shop.shipped.clear()


def test_only_the_missed_payment_fails_the_run_and_fulfilling_it_clears_it(
    ledger_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "reconcile", "--ledger", str(ledger_path), "--lookup", LOOKUP)
    assert (code, err) == (4, "")
    lines = out.splitlines()
    assert lines[1].split() == ["missed", "shop-missed", "COMPLETED", "500", "NGN", "-", "-", "-"]
    assert lines[2].split()[:2] == ["refused", "shop-underpaid"]
    assert lines[2].endswith("paid 100 of 900 NGN: answered 409")
    assert lines[3].split() == ["not_ours", "shop-foreign", "COMPLETED", "300", "NGN", *"---"]
    assert "1 missed" in lines[-2] and "1 refused" in lines[-2] and "1 not ours" in lines[-2]
    assert lines[-1] == "needs attention: 1 missed, 0 alarms"

    argv = ["reconcile", "--ledger", str(ledger_path), "--lookup", LOOKUP]
    code, out, _ = run(capsys, *argv, "--fulfil", "tests.cli.shop.ship")  # the dotted form
    assert shop.shipped == ["shop-missed"]
    assert (code, out.splitlines()[-1]) == (0, "all clear: nothing needs attention")
    code, out, _ = run(capsys, *argv, "--json")
    report = json.loads(out)
    assert (code, report["needs_attention"]) == (0, False)
    assert {d["kind"]: d["reference"] for d in report["discrepancies"]} == {
        "refused": "shop-underpaid",
        "not_ours": "shop-foreign",
    }
    assert shop.shipped == ["shop-missed"]  # never twice


@pytest.mark.parametrize(
    ("lookup", "why"),
    [
        ("tests.cli.shop:find_order_or_draft", "has no amount"),
        ("tests.cli.shop:find_order_in_floats", "the expected amount must be a whole number"),
    ],
    ids=["no-amount", "float-amount"],
)
def test_an_order_lookup_cannot_check_names_its_reference(
    ledger_path: Path, capsys: pytest.CaptureFixture[str], lookup: str, why: str
) -> None:
    """One order of many with no amount, or a float one: the run is a configuration error whose
    message names that order's reference, so the merchant knows which order to fix."""
    code, out, err = run(capsys, "reconcile", "--ledger", str(ledger_path), "--lookup", lookup)
    assert (code, out) == (2, "")
    assert why in err
    assert "'shop-missed'" in err


def test_without_lookup_the_foreign_payment_is_missed_until_ignored(
    ledger_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ledger = ["--ledger", str(ledger_path)]
    code, out, _ = run(capsys, "reconcile", *ledger, "--json")
    missed = [d["reference"] for d in json.loads(out)["discrepancies"] if d["kind"] == "missed"]
    assert (code, sorted(missed)) == (4, ["shop-foreign", "shop-missed"])

    assert run(capsys, "ledger", "ignore", "shop-foreign", "--reason", "the other shop's", *ledger)[
        :2
    ] == (0, "shop-foreign: ignored (the other shop's)\n")
    assert (
        run(capsys, "ledger", "refuse", "shop-missed", "--reason", "out of stock", *ledger)[0] == 0
    )
    code, out, _ = run(capsys, "reconcile", *ledger)
    assert (code, out.splitlines()[-1]) == (0, "all clear: nothing needs attention")


def test_a_fulfilled_payment_is_never_set_aside(
    ledger_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(
        capsys, "ledger", "refuse", "shop-paid", "--reason", "oops", "--ledger", str(ledger_path)
    )
    assert (code, out) == (1, "")
    assert err == (
        "paysdk: error: shop-paid is fulfilled, and keeps that state: the ledger never sets "
        "aside a payment that is fulfilled or being fulfilled\n"
    )
    with Ledger(ledger_path, create_table=False) as ledger:
        row = ledger.row("shop-paid")
    assert row is not None and (row.state, row.reason) == ("fulfilled", None)


def test_ledger_list_pages_through_rows_filtered_by_state(
    ledger_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("paysdk.cli._ledger.PAGE", 1)  # every row its own page
    monkeypatch.setenv("PAYSDK_LEDGER", str(ledger_path))
    code, out, _ = run(capsys, "ledger", "list")
    lines = out.splitlines()
    assert code == 0
    assert lines[0].split() == [
        "REFERENCE", "STATE", "AMOUNT", "CURRENCY", "ATTEMPTS", "FULFILLED", "AT", "REASON",
    ]  # fmt: skip
    assert [line.split()[:2] for line in lines[1:]] == [
        ["shop-paid", "fulfilled"],
        ["shop-underpaid", "refused"],
    ]
    code, out, _ = run(capsys, "ledger", "list", "--state", "refused", "--json")
    assert [json.loads(line) for line in out.splitlines()] == [
        {
            "reference": "shop-underpaid",
            "state": "refused",
            "amount": 100,
            "currency": "NGN",
            "attempts": 0,
            "fulfilled_at": None,
            "reason": "paid 100 of 900 NGN: answered 409",
        }
    ]
    code, out, _ = run(capsys, "ledger", "list", "--limit", "1", "--csv")
    assert out.splitlines() == [
        "reference,state,amount,currency,attempts,fulfilled_at,reason",
        out.splitlines()[1],
    ]
    assert out.splitlines()[1].startswith("shop-paid,fulfilled,700,NGN,1,20")


def test_resolve_settles_an_unknown_outcome(
    ledger_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import time

    from tests.support.ledger_worker import abandon_claim

    abandon_claim(str(ledger_path), "shop-missed", lease=0.1)  # its worker died mid-action
    time.sleep(0.3)
    ledger = ["--ledger", str(ledger_path)]
    code, out, _ = run(capsys, "ledger", "list", "--state", "unknown", "--json", *ledger)
    assert [json.loads(line)["reference"] for line in out.splitlines()] == ["shop-missed"]
    assert run(capsys, "ledger", "resolve", "shop-missed", "--did-not-run", *ledger)[:2] == (
        0,
        "shop-missed: released\n",
    )
    code, _, err = run(capsys, "ledger", "resolve", "shop-missed", "--ran", *ledger)
    assert code == 1
    assert "no claim of unknown outcome to resolve (its state: released)" in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("ledger", "list", "--state", "shipped"), "expected one of claimed, fulfilled, released"),
        (  # a Cyrillic e: shown as an escape, never as "refused"
            ("ledger", "list", "--state", "refus\u0435d"),
            "unknown state 'refus\\u0435d': expected one of",
        ),
        (("ledger", "resolve", "r-1"), "one of the arguments --ran --did-not-run is required"),
        (("ledger", "ignore", "r-1"), "the following arguments are required: --reason"),
        (("ledger", "list"), "no ledger: pass --ledger or set PAYSDK_LEDGER"),
        (("ledger", "list", "--ledger", "/no/such/l.db"), "'/no/such/l.db' does not exist"),
        (("reconcile", "--lookup", "tests.cli.nowhere:find"), "cannot import 'tests.cli.nowhere'"),
        (("reconcile", "--lookup", "tests.cli.shop:nothing"), "has no 'nothing'"),
        (
            ("reconcile", "--lookup", "tests.cli.shop:NOT_A_FUNCTION"),
            "is of type int, not a function",
        ),
        (("reconcile", "--lookup", "find_order"), "expected package.module:function"),
        (("reconcile", "--fulfil", "tests.cli.shop:ship"), "--fulfil needs --lookup"),
        (
            ("reconcile", "--max-discrepancies", "0"),
            "argument --max-discrepancies: expected a positive whole number, not '0'",
        ),
        (
            ("reconcile", "--max-discrepancies", "-5"),
            "argument --max-discrepancies: expected a positive whole number, not '-5'",
        ),
    ],
)
def test_usage_errors_exit_2_and_say_what_is_wrong(
    sandbox: Sandbox,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    argv: tuple[str, ...],
    message: str,
) -> None:
    monkeypatch.delenv("PAYSDK_LEDGER", raising=False)
    if argv[0] == "reconcile":
        with Ledger(tmp_path / "l.db") as made:
            made.create_table()
        argv = (*argv, "--ledger", str(tmp_path / "l.db"))
    code, out, err = run(capsys, *argv)
    assert (code, out) == (2, "")
    assert message in " ".join(err.split())


def test_lookup_is_imported_from_the_current_directory(
    ledger_path: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (tmp_path / "cron_orders.py").write_text("def find(reference):\n    return None\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.path", [p for p in sys.path if p not in ("", str(tmp_path))])
    code, out, _ = run(
        capsys, "reconcile", "--ledger", str(ledger_path), "--lookup", "cron_orders:find"
    )
    assert code == 0  # every rowless payment is another shop's here
    assert out.splitlines()[-1] == "all clear: nothing needs attention"


def test_every_ledger_action_and_option_has_help(capsys: pytest.CaptureFixture[str]) -> None:
    import argparse

    from paysdk.cli._main import build_parser

    [commands] = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    ledger = commands.choices["ledger"]
    [actions] = [a for a in ledger._actions if isinstance(a, argparse._SubParsersAction)]
    assert set(actions.choices) == {"list", "refuse", "ignore", "resolve", "retire-key"}
    for name, action in actions.choices.items():
        for option in action._actions:
            assert option.help, f"paysdk ledger {name} {option.option_strings or option.dest}"
        code, out, _ = run(capsys, "ledger", name, "--help")
        assert code == 0
        assert "Exit codes: 0 ok;" in " ".join(out.split())


def test_the_table_and_summary_say_what_fulfil_did_as_the_json_does(
    ledger_path: Path, sandbox: Sandbox
) -> None:
    sandbox.add_payment("shop-backorder", amount=200, currency="NGN", status="COMPLETED")
    argv = ["reconcile", "--ledger", str(ledger_path), "--lookup", LOOKUP]
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("PAYSDK_")},
        "PAYSDK_BASE_URL": sandbox.base_url,
        "PAYSDK_SECRET_KEY": sandbox.secret_key,
    }
    done = subprocess.run(
        [sys.executable, "-m", "paysdk", *argv, "--fulfil", "tests.cli.shop:ship_in_stock"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert (done.returncode, done.stderr) == (4, "")
    lines = done.stdout.splitlines()
    assert lines[0].split()[-2:] == ["REASON", "FULFILMENT"]
    rows = {line.split()[1]: line for line in lines[1:5]}
    assert rows["shop-missed"].split()[0] == "missed"
    assert rows["shop-missed"].endswith(" fulfilled now")
    assert rows["shop-backorder"].endswith(" not fulfilled: error: RuntimeError: out of stock")
    assert "2 missed (1 fulfilled now, 1 not)" in lines[-2]
    assert lines[-1] == "needs attention: 1 missed and not fulfilled, 0 alarms"

    again = subprocess.run(
        [sys.executable, "-m", "paysdk", *argv, "--json"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    report = json.loads(again.stdout)
    missed = [d for d in report["discrepancies"] if d["kind"] == "missed"]
    assert [(d["reference"], d["fulfilment"]) for d in missed] == [("shop-backorder", None)]
    assert report["summary"]["missed"] == 1
    assert report["summary"]["missed_fulfilled_now"] == 0


def test_json_counts_what_fulfil_did(
    ledger_path: Path, sandbox: Sandbox, capsys: pytest.CaptureFixture[str]
) -> None:
    sandbox.add_payment("shop-backorder", amount=200, currency="NGN", status="COMPLETED")
    argv = ["reconcile", "--ledger", str(ledger_path), "--lookup", LOOKUP, "--json"]
    code, out, _ = run(capsys, *argv, "--fulfil", "tests.cli.shop:ship_in_stock")
    report = json.loads(out)
    assert (code, report["summary"]["missed"], report["summary"]["missed_fulfilled_now"]) == (
        4,
        2,
        1,
    )
    assert {
        d["reference"]: d["fulfilment"] for d in report["discrepancies"] if d["kind"] == "missed"
    } == {
        "shop-missed": "fulfilled",
        "shop-backorder": "error: RuntimeError: out of stock",
    }


DJANGO_SETTINGS = """
SECRET_KEY = "not-secret"
INSTALLED_APPS = ["paysdk.integrations.django"]
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": "db.sqlite3"}}
USE_TZ = True
"""

DJANGO_ORDERS = """
from paysdk.integrations.django.models import Fulfilment  # a model: needs Django's apps loaded


def find_order(reference):
    known = Fulfilment.objects.filter(reference=reference).exists() or reference == "order-1042"
    return {"amount": 2500000, "currency": "NGN"} if known else None
"""


def test_a_django_projects_lookup_on_its_models_is_imported_with_djangos_apps_loaded(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    """From a Django project's directory, with ``DJANGO_SETTINGS_MODULE`` set as ``manage.py``
    sets it, a ``--lookup`` whose module imports the project's models works."""
    pytest.importorskip("django")
    (tmp_path / "shop_settings.py").write_text(DJANGO_SETTINGS)
    (tmp_path / "shop_orders.py").write_text(DJANGO_ORDERS)
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("PAYSDK_", "DJANGO_"))},
        "PAYSDK_BASE_URL": sandbox.base_url,
        "PAYSDK_SECRET_KEY": sandbox.secret_key,
        "DJANGO_SETTINGS_MODULE": "shop_settings",
        "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]),
    }
    migrate = "import django; django.setup(); django.core.management.call_command('migrate')"
    subprocess.run(
        [sys.executable, "-c", migrate],
        cwd=tmp_path, env=env, capture_output=True, timeout=60, check=True,
    )  # fmt: skip
    argv = ["reconcile", "--ledger", "sqlite:///db.sqlite3", "--lookup", "shop_orders:find_order"]
    done = subprocess.run(
        [sys.executable, "-m", "paysdk", *argv],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert (done.returncode, done.stderr) == (4, "")
    assert done.stdout.splitlines()[1].split()[:2] == ["missed", "order-1042"]

    env["DJANGO_SETTINGS_MODULE"] = "no_such_settings"
    done = subprocess.run(
        [sys.executable, "-m", "paysdk", *argv],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    said = "--lookup: cannot set up Django (DJANGO_SETTINGS_MODULE='no_such_settings'"
    assert said in done.stderr


CHATTY_SHOP = """
import sys

print("shop loaded")
ORDERS = {"shop-missed": {"amount": 500, "currency": "NGN"}}


def find_order(reference):
    print("looking up", reference)
    return ORDERS.get(reference)


def ship(payment):
    print("shipped", payment.reference)
    sys.stdout.write("written too\\n")
"""


@pytest.mark.parametrize("output", ["--json", "--csv"])
def test_what_the_lookup_and_fulfil_print_goes_to_stderr_not_into_the_report(
    ledger_path: Path, sandbox: Sandbox, tmp_path: Path, output: str
) -> None:
    """``paysdk reconcile --json > report.json``, the cron job of docs/fulfilment.md, with a
    lookup and a fulfilment that ``print`` (as its ``grant_access`` example does): what they
    print goes to stderr, and the report stays JSON (or CSV) a parser reads."""
    (tmp_path / "chatty_shop.py").write_text(CHATTY_SHOP)
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("PAYSDK_")},
        "PYTHONPATH": str(ROOT / "src"),
        "PAYSDK_BASE_URL": sandbox.base_url,
        "PAYSDK_SECRET_KEY": sandbox.secret_key,
    }
    argv = ["reconcile", "--ledger", str(ledger_path), output]
    hooks = ["--lookup", "chatty_shop:find_order", "--fulfil", "chatty_shop:ship"]
    done = subprocess.run(
        [sys.executable, "-m", "paysdk", *argv, *hooks],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    said = set(done.stderr.splitlines())
    assert {"shop loaded", "looking up shop-missed", "shipped shop-missed", "written too"} <= said
    if output == "--json":
        report = json.loads(done.stdout)
        missed = [d for d in report["discrepancies"] if d["kind"] == "missed"]
        assert [(d["reference"], d["fulfilment"]) for d in missed] == [("shop-missed", "fulfilled")]
    else:
        rows = list(csv.DictReader(io.StringIO(done.stdout)))
        assert [(row["kind"], row["fulfilment"]) for row in rows if row["kind"] == "missed"] == [
            ("missed", "fulfilled")
        ]
        assert "shop loaded" not in done.stdout and "shipped" not in done.stdout


@pytest.mark.parametrize("fmt", ["table", "--json", "--csv"])
def test_ledger_list_writes_every_time_in_one_shape(tmp_path: Path, fmt: str) -> None:
    """A row fulfilled on a whole second (1 in 1,000 on SQLite, which keeps milliseconds) is
    written as the others are, with its fraction (``.000000+00:00``): a script cutting or
    sorting the column as text finds one shape in every row and every output form."""
    path = tmp_path / "ledger.db"
    with Ledger(path) as ledger:
        ledger.create_table()
        for reference in ("order-whole", "order-part"):
            payment = paysdk.VerifiedPayment(
                reference=reference, amount=500, currency="NGN", success=True
            )
            ledger.fulfil_once(payment, lambda p: None)
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        db.execute(
            "UPDATE paysdk_fulfilments SET fulfilled_at = CASE reference "
            "WHEN 'order-whole' THEN '2026-11-05T09:00:14.000000Z' "
            "ELSE '2026-11-05T09:00:14.555000Z' END"
        )
    argv = ["ledger", "list", "--ledger", str(path), *([] if fmt == "table" else [fmt])]
    done = subprocess.run(
        [sys.executable, "-m", "paysdk", *argv],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert (done.returncode, done.stderr) == (0, "")
    times = re.findall(r"20[0-9-]{8}T[0-9:.+]*", done.stdout)
    assert times == ["2026-11-05T09:00:14.555000+00:00", "2026-11-05T09:00:14.000000+00:00"]


@pytest.mark.parametrize(
    "edited", ["0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00", "next tuesday"]
)
@pytest.mark.parametrize("fmt", ["table", "--json"])
def test_a_time_edited_by_hand_into_no_time_in_utc_names_its_row(
    tmp_path: Path, edited: str, fmt: str
) -> None:
    """A row whose ``fulfilled_at`` was edited by hand into no time, or a time with an offset
    that lies outside the dates UTC can write, is a ledger error naming the row and the text
    (exit 1), not an internal error asking for a bug report; in the library it is a
    ``LedgerError``, not a ``ValueError``."""
    path = tmp_path / "ledger.db"
    with Ledger(path) as ledger:
        ledger.create_table()
        payment = paysdk.VerifiedPayment(
            reference="order-edited", amount=500, currency="NGN", success=True
        )
        ledger.fulfil_once(payment, lambda p: None)
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        db.execute("UPDATE paysdk_fulfilments SET fulfilled_at = ?", (edited,))
    argv = ["ledger", "list", "--ledger", str(path), *([] if fmt == "table" else [fmt])]
    done = subprocess.run(
        [sys.executable, "-m", "paysdk", *argv],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        f"paysdk: error: the ledger's row for 'order-edited' holds {edited!r} where a time in "
        "UTC belongs; was the row edited by hand?\n"
    )
    with Ledger(path) as ledger, pytest.raises(paysdk.ledger.LedgerError, match="order-edited"):
        ledger.row("order-edited")

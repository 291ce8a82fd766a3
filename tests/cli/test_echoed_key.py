"""The secret key a hostile or broken service echoes into a payment's fields, as the ``paysdk``
command prints it: ``<secret key>`` in the table, ``--json`` and ``--csv`` of ``verify``, ``list``
and ``reconcile``, on a terminal and in a CI log (a pipe), the JSON otherwise exact."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from paysdk.ledger import Ledger
from paysdk.sandbox import Sandbox
from paysdk.testing import payment_record
from tests.cli.test_hostile_output import lines_of, on_terminal

CREATED = dt.datetime(2026, 11, 5, 9, 0, tzinfo=dt.timezone.utc)
KEYS = {
    "plain": "sk_test_Zq3Jv9WmX4pL7tR2",
    # every character JSON, a CSV or a table writes otherwise (a quote, a slash, a backslash),
    # the backslash last: blotted in JSON's text, it would end a string early
    "escaped": 'sk_test_Zq3/"Jv9\\',
}
BLOT = "<secret key>"


def spellings(key: str) -> list[str]:
    """``key`` as each output form may write it: as it is, as JSON and a table escape it (a
    backslash doubled, a quote after one), as CSV quotes it (a quote doubled)."""
    return [key, json.dumps(key)[1:-1], key.replace("\\", "\\\\"), key.replace('"', '""')]


@pytest.fixture(params=sorted(KEYS), scope="module")
def sandbox(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    """A sandbox whose key is echoed in a reference, a currency, a customer's name and e-mail,
    a product's name, a metadata key and value."""
    key = KEYS[request.param]
    echoing = [
        payment_record(reference=f"order-{key}", created_at=CREATED, currency=key),
        payment_record(
            reference="order-echo-name",
            created_at=CREATED,
            customer={"name": f"Ada {key}", "email": f"{key}@example.com", "phone": "+1"},
            products=[{"name": key, "amount": 500, "description": f"for {key}"}],
            metadata={"note": f"key={key}", key: 1},
        ),
    ]
    with Sandbox(secret_key=key, payments=echoing) as running:
        yield running


@pytest.fixture
def env(sandbox: Sandbox) -> dict[str, str]:
    others = {k: v for k, v in os.environ.items() if not k.startswith("PAYSDK_")}
    return {**others, "PAYSDK_BASE_URL": sandbox.base_url, "PAYSDK_SECRET_KEY": sandbox.secret_key}


def in_log(env: dict[str, str], *argv: str, exit_code: int = 0) -> str:
    """What ``paysdk argv`` writes to a pipe (a CI log); its stderr must be empty."""
    done = subprocess.run(
        [sys.executable, "-m", "paysdk", *argv],
        env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert (done.returncode, done.stderr) == (exit_code, "")
    return done.stdout


def assert_blotted(output: str, key: str) -> None:
    assert [form for form in spellings(key) if form in output] == []
    assert BLOT in output


def without_key(value: object, key: str) -> object:
    """``value`` (parsed JSON) with ``key`` blotted out of each string: what ``--json`` gives."""
    if isinstance(value, str):
        return value.replace(key, BLOT)
    if isinstance(value, dict):
        return {without_key(k, key): without_key(v, key) for k, v in value.items()}
    if isinstance(value, list):
        return [without_key(item, key) for item in value]
    return value


def test_verify_on_a_terminal_shows_the_echoed_key_blotted(
    sandbox: Sandbox, env: dict[str, str]
) -> None:
    code, screen = on_terminal(env, "verify", "order-echo-name")
    assert code == 0
    assert_blotted(screen, sandbox.secret_key)
    lines = lines_of(screen)
    # quoted, as any part holding the marks parts are told apart by (``<``, ``=``)
    assert f'customer:        "Ada {BLOT}" <"{BLOT}@example.com"> +1' in lines
    assert f'metadata:        note="key={BLOT}", "{BLOT}"=1' in lines


def test_verify_json_is_exact_but_the_echoed_key(sandbox: Sandbox, env: dict[str, str]) -> None:
    key = sandbox.secret_key
    [record] = [p for p in sandbox.payments if p.reference == "order-echo-name"]
    out = in_log(env, "verify", "order-echo-name", "--json")
    assert_blotted(out, key)
    assert json.loads(out) == without_key(record.verify_shape(), key)


def test_list_table_json_and_csv_show_the_echoed_key_blotted(
    sandbox: Sandbox, env: dict[str, str]
) -> None:
    key = sandbox.secret_key
    code, screen = on_terminal(env, "list")
    assert code == 0
    assert_blotted(screen, key)
    [row] = [line for line in lines_of(screen) if line.startswith(f"order-{BLOT} ")]
    assert row.split("  ")[:2] == [f"order-{BLOT}", "COMPLETED"]
    assert f"250000  3750  {BLOT}  " in row  # padded to the blotted width

    out = in_log(env, "list", "--json")
    assert_blotted(out, key)
    assert json.loads(out) == [without_key(p.list_shape(), key) for p in sandbox.payments]

    out = in_log(env, "list", "--csv")
    assert_blotted(out, key)
    rows = {row["id"]: row for row in csv.DictReader(io.StringIO(out))}
    [echo] = [rows[p.list_shape()["id"]] for p in sandbox.payments if key in p.reference]
    assert (echo["reference"], echo["currency"]) == (f"order-{BLOT}", BLOT)


@pytest.fixture
def ledger(tmp_path: Path) -> Path:
    """An empty ledger: every completed payment the sandbox lists is missed."""
    path = tmp_path / "ledger.db"
    with Ledger(path) as made:
        made.create_table()
    return path


def test_reconcile_table_json_and_csv_show_the_echoed_key_blotted(
    sandbox: Sandbox, env: dict[str, str], ledger: Path
) -> None:
    key = sandbox.secret_key
    code, screen = on_terminal(env, "reconcile", "--ledger", str(ledger))
    assert code == 4
    assert_blotted(screen, key)

    out = in_log(env, "reconcile", "--ledger", str(ledger), "--json", exit_code=4)
    assert_blotted(out, key)
    missed = {d["reference"]: d for d in json.loads(out)["discrepancies"]}
    assert set(missed) == {f"order-{BLOT}", "order-echo-name"}
    assert missed[f"order-{BLOT}"]["currency"] == BLOT

    out = in_log(env, "reconcile", "--ledger", str(ledger), "--csv", exit_code=4)
    assert_blotted(out, key)
    rows = list(csv.DictReader(io.StringIO(out)))
    assert sorted((row["reference"], row["currency"]) for row in rows) == [
        (f"order-{BLOT}", BLOT),
        ("order-echo-name", "NGN"),
    ]


def test_the_key_given_by_flag_is_the_one_blotted(sandbox: Sandbox, env: dict[str, str]) -> None:
    """``--secret-key`` overrides ``PAYSDK_SECRET_KEY``: the key the command sends, the flag's,
    is the one blotted out."""
    key = sandbox.secret_key
    env = {**env, "PAYSDK_SECRET_KEY": "sk_test_another_terminals"}
    out = in_log(env, "list", "--csv", "--secret-key", key)
    assert_blotted(out, key)


def test_verify_blots_the_key_in_a_nested_metadata_value_whole(
    sandbox: Sandbox, env: dict[str, str]
) -> None:
    """A metadata value that is a list or an object is shown as Python writes it, where a key
    ending in a backslash is written with it doubled: the key is blotted whole, no backslash
    of it left over."""
    key = sandbox.secret_key
    record = payment_record(
        reference="order-nested", created_at=CREATED, metadata={"nested": [key, {"k": key}]}
    )
    sandbox.add_payment(record)
    code, screen = on_terminal(env, "verify", "order-nested")
    assert code == 0
    assert_blotted(screen, key)
    assert f"""metadata:        nested="['{BLOT}', {{'k': '{BLOT}'}}]\"""" in lines_of(screen)

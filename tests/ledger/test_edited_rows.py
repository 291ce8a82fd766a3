"""Rows edited by hand into what the ledger never writes: SQLite keeps any value in any column
(``'abc'`` as an amount, a blob as a reference), and each is a ``LedgerError`` naming the row and
the column, never listed, compared or reported as if the ledger had recorded it."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

import pytest

import paysdk
from paysdk.ledger import Ledger, LedgerError
from paysdk.sandbox import Sandbox
from tests.support.command import paysdk_cli

EDITS = {
    "amount 'abc'": ("amount = 'abc'", "holds str 'abc' in its amount column"),
    "amount 1e30": ("amount = 1e30", "holds float 1e+30 in its amount column"),
    "attempts 'x'": ("attempts = 'x'", "holds str 'x' in its attempts column"),
    "reason blob": ("reason = x'00ff'", "holds bytes b'\\x00\\xff' in its reason column"),
    "state in capitals": ("state = 'FULFILLED'", "holds str 'FULFILLED' in its state column"),
    "reference blob": ("reference = CAST(reference AS BLOB)", "in its reference column"),
}
"""What a hand edit writes into the row of ``order-1042`` (SQL), and what the error says."""


def fulfilled_then_edited(path: Path, edit: str) -> None:
    """A ledger at ``path`` whose one row, ``order-1042`` fulfilled, was edited with ``edit``."""
    payment = paysdk.VerifiedPayment(
        reference="order-1042", amount=2500000, currency="NGN", success=True
    )
    with Ledger(path) as ledger:
        ledger.fulfil_once(payment, lambda p: None)
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        db.execute(f"UPDATE paysdk_fulfilments SET {edit}")  # noqa: S608 - the tests' own SQL


@pytest.mark.parametrize("edit", EDITS.values(), ids=EDITS.keys())
def test_a_row_edited_into_what_the_ledger_never_writes_is_a_ledger_error(
    tmp_path: Path, edit: tuple[str, str]
) -> None:
    sql, said = edit
    path = tmp_path / "ledger.db"
    fulfilled_then_edited(path, sql)
    with Ledger(path) as ledger:
        with pytest.raises(LedgerError, match="was the row edited by hand") as listed:
            ledger.rows_after()
        assert said in str(listed.value)
        if "reference" not in sql:
            with pytest.raises(LedgerError, match=r"for 'order-1042' holds .* was the row edited"):
                ledger.row("order-1042")


@pytest.mark.parametrize("fmt", ["table", "--json", "--csv"])
@pytest.mark.parametrize("edit", EDITS.values(), ids=EDITS.keys())
def test_paysdk_ledger_list_says_which_row_was_edited(
    tmp_path: Path, edit: tuple[str, str], fmt: str
) -> None:
    """Exit 1 and the ledger's error, not rows holding what no payment had, an internal error
    asking for a bug report (a blob in JSON), or a usage error about ``after``."""
    sql, said = edit
    path = tmp_path / "ledger.db"
    fulfilled_then_edited(path, sql)
    code, out, err = paysdk_cli(
        "ledger", "list", "--ledger", str(path), *([] if fmt == "table" else [fmt])
    )
    assert (code, out) == (1, "")
    assert err.startswith("paysdk: error: the ledger's row ")
    assert said in err
    assert err.endswith("; was the row edited by hand?\n")


@pytest.mark.parametrize(
    "edit", [EDITS["amount 'abc'"], EDITS["state in capitals"], EDITS["reference blob"]]
)
def test_reconcile_refuses_a_row_edited_into_what_the_ledger_never_writes(
    tmp_path: Path, edit: tuple[str, str]
) -> None:
    """order-1042 is listed by the bundled sandbox: its row read in the list's batch (an amount
    that would be reported as a mismatch of ``'abc'``, a state that would report it missed), or in
    the pass for fulfilled rows the list did not show (a blob reference, silently skipped)."""
    sql, said = edit
    path = tmp_path / "ledger.db"
    fulfilled_then_edited(path, sql)
    with Sandbox() as service:  # the command, so that an endless pass fails by its timeout
        code, out, err = paysdk_cli("reconcile", "--ledger", str(path), service=service)
    assert (code, out) == (1, "")
    assert err.startswith("paysdk: error: the ledger's row ")
    assert said in err

"""The PostgreSQL ledger as DBAs set databases up: under a least-privilege role (each ledger,
sync, async and on SQLAlchemy engines, on a fresh database as a role that may only connect until
a test grants it more, the database's owner making the table where a test says so), in a
read-only session, and with a search_path naming no schema."""

from __future__ import annotations

import uuid

import psycopg
import pytest

import paysdk
from paysdk.ledger import Ledger, LedgerError, Outcome, UnrecordedFulfilmentError
from tests.support.either_ledger import MakeLedger, paid
from tests.support.postgres import fresh_database

pytestmark = pytest.mark.anyio


@pytest.fixture
def owner_url(postgres_url: str) -> str:
    """A fresh database, as its owner (who may create the ledger's table) connects to it."""
    return fresh_database(postgres_url)


@pytest.fixture
def ledger_url(owner_url: str) -> str:
    """The same database as a new role with no privilege beyond connecting (PostgreSQL 15 grants
    no CREATE on ``public``); ``make_ledger`` connects as it."""
    role = f"shop_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(owner_url, autocommit=True) as owner:
        owner.execute(f"CREATE ROLE {role} LOGIN")  # a generated, safe name
    return owner_url.replace("://postgres@", f"://{role}@", 1)


def grant(owner_url: str, ledger_url: str, privileges: str) -> None:
    """The owner makes the ledger's table (and its indexes) and grants ``privileges`` on it to
    the role of ``ledger_url``."""
    role = ledger_url.split("://", 1)[1].split("@", 1)[0]
    with Ledger(owner_url) as owner:
        owner.create_table()
    with psycopg.connect(owner_url, autocommit=True) as owner:
        owner.execute(f"GRANT {privileges} ON paysdk_fulfilments TO {role}")


def rows(owner_url: str) -> list[tuple[object, ...]]:
    with psycopg.connect(owner_url) as owner:
        return owner.execute("SELECT reference, state FROM paysdk_fulfilments").fetchall()


async def test_a_role_granted_the_rows_alone_fulfils_on_the_table_its_owner_made(
    make_ledger: MakeLedger, owner_url: str, ledger_url: str
) -> None:
    """A DBA makes the table and grants the app's role SELECT, INSERT and UPDATE: the ledger, left
    to create its table (the default), finds it and its indexes made and creates nothing, which
    only the table's owner may (PostgreSQL refuses CREATE INDEX IF NOT EXISTS to anyone else)."""
    grant(owner_url, ledger_url, "SELECT, INSERT, UPDATE")
    ledger = make_ledger()
    shipped: list[paysdk.VerifiedPayment] = []

    first = await ledger.fulfil_once(paid(), shipped.append)
    again = await ledger.fulfil_once(paid(), shipped.append)

    assert (first.outcome, again.outcome) == (Outcome.FULFILLED, Outcome.ALREADY_FULFILLED)
    assert len(shipped) == 1
    assert rows(owner_url) == [("order-1", "fulfilled")]


async def test_a_role_that_may_not_update_the_table_is_refused_before_any_action_runs(
    make_ledger: MakeLedger, owner_url: str, ledger_url: str
) -> None:
    """Granted SELECT and INSERT but not UPDATE, a role could claim a payment but never record
    it: every action would run and be left unrecorded, for a person to resolve. The claim needs
    UPDATE too, so the action never runs, and the error says which privileges to grant."""
    grant(owner_url, ledger_url, "SELECT, INSERT")
    ledger = make_ledger(create_table=False, timeout=1)
    shipped: list[paysdk.VerifiedPayment] = []

    with pytest.raises(LedgerError) as raised:
        await ledger.fulfil_once(paid(), shipped.append)

    assert not isinstance(raised.value, UnrecordedFulfilmentError)
    assert "SELECT, INSERT and UPDATE" in str(raised.value)
    assert shipped == []
    assert rows(owner_url) == []


async def test_a_role_that_may_not_create_the_table_is_told_what_to_grant_or_run(
    make_ledger: MakeLedger, owner_url: str
) -> None:
    """With no table yet and no CREATE on the schema, the first fulfilment says what the role
    needs and how the table can be made by another role, before any action runs."""
    ledger = make_ledger()
    shipped: list[paysdk.VerifiedPayment] = []

    with pytest.raises(LedgerError) as raised:
        await ledger.fulfil_once(paid(), shipped.append)

    said = str(raised.value)
    assert "CREATE on the schema" in said
    assert "create_table()" in said
    assert "docs/fulfilment.md" in said
    assert shipped == []


async def test_a_read_only_session_reads_rows_and_says_why_it_cannot_write(owner_url: str) -> None:
    """A session whose transactions are read-only (a standby's, a DBA's
    default_transaction_read_only) reads the rows, the table being made, with the ledger left to
    create it (the default): reconcile and ``paysdk ledger list`` work on a replica. It claims
    nothing, and the error says what makes it read-only."""
    with Ledger(owner_url) as owner:
        owner.fulfil_once(paid("order-1"), lambda payment: None)
    read_only = f"{owner_url}?options=-c%20default_transaction_read_only%3Don"
    shipped: list[paysdk.VerifiedPayment] = []

    with Ledger(read_only) as ledger:
        row = ledger.row("order-1")
        with pytest.raises(LedgerError) as raised:
            ledger.fulfil_once(paid("order-2"), shipped.append)

    assert row is not None and row.fulfilled
    assert "standby" in str(raised.value)
    assert "default_transaction_read_only" in str(raised.value)
    assert shipped == []


def test_a_search_path_naming_no_schema_says_so(owner_url: str) -> None:
    """A URL's ``options=-csearch_path=shop`` (or the role's setting) naming a schema not made yet:
    PostgreSQL says only "no schema has been selected to create in"."""
    no_schema = f"{owner_url}?options=-csearch_path%3Dshop"
    shipped: list[paysdk.VerifiedPayment] = []

    with Ledger(no_schema) as ledger, pytest.raises(LedgerError) as raised:
        ledger.fulfil_once(paid(), shipped.append)

    assert "no schema to keep its table in" in str(raised.value)
    assert "search_path" in str(raised.value)
    assert shipped == []

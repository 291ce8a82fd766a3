"""The ledger on the app's own SQLAlchemy engine: a SQLite file and a real PostgreSQL server,
through an Engine and an AsyncEngine (the ``engine`` fixture), with the table made by the app's
``create_all`` or by the ledger itself; and the table as the app's metadata. (How it uses the
engine's connections: test_sqlalchemy_connections.py; processes racing: test_races.py.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
import sqlalchemy

import paysdk
from paysdk.cli import main
from paysdk.ledger import Kind, LedgerError, Outcome, ReconcileReport
from paysdk.ledger.sqlalchemy import AsyncSQLAlchemyLedger, SQLAlchemyLedger, ledger_table
from paysdk.sandbox import Sandbox
from tests.support.either_ledger import paid
from tests.support.engines import (
    call,
    create_all,
    dispose,
    engine_url,
    make_engine,
    open_ledger,
    run_sql,
)
from tests.support.ledger_worker import abandon_claim
from tests.support.merchant import Order, Shop
from tests.support.postgres import fresh_database

pytestmark = pytest.mark.anyio

Either = SQLAlchemyLedger | AsyncSQLAlchemyLedger


async def test_on_the_apps_create_all_table_each_payment_is_fulfilled_once(engine: Any) -> None:
    metadata = sqlalchemy.MetaData()
    ledger_table(metadata)
    await create_all(engine, metadata)
    ledger = open_ledger(engine, create_table=False)
    shipped: list[str] = []

    def ship(payment: paysdk.VerifiedPayment) -> int:
        shipped.append(payment.reference)
        return 7

    first = await call(ledger, "fulfil_once", paid("order-1"), ship)
    again = await call(ledger, "fulfil_once", paid("order-1"), ship)

    assert (first.outcome, first.value, again.outcome) == (
        Outcome.FULFILLED,
        7,
        Outcome.ALREADY_FULFILLED,
    )
    assert shipped == ["order-1"]
    row = await call(ledger, "row", "order-1")
    assert (row.state, row.amount, row.currency, row.attempts) == ("fulfilled", 2500, "NGN", 1)
    assert row.fulfilled_at is not None and row.fulfilled_at.utcoffset() is not None
    assert [r.reference for r in await call(ledger, "rows_after", state="fulfilled")] == ["order-1"]
    await call(ledger, "close")


async def test_an_action_that_raises_releases_its_claim_for_the_next_delivery(engine: Any) -> None:
    ledger = open_ledger(engine)  # the ledger creates its table on first use

    def out_of_stock(payment: paysdk.VerifiedPayment) -> None:
        raise RuntimeError("out of stock")

    with pytest.raises(RuntimeError, match="out of stock"):
        await call(ledger, "fulfil_once", paid("order-1"), out_of_stock)
    released = await call(ledger, "row", "order-1")
    assert (released.state, released._claim_token) == ("released", None)

    retried = await call(ledger, "fulfil_once", paid("order-1"), lambda p: "shipped")
    assert retried.outcome is Outcome.FULFILLED
    assert (await call(ledger, "row", "order-1")).attempts == 2


async def test_a_claim_outliving_its_lease_waits_for_resolve(engine: Any, ledger_url: str) -> None:
    abandon_claim(ledger_url, "order-1", lease=0.2)  # a worker died mid-action
    ledger = open_ledger(engine)
    await anyio.sleep(0.4)
    ran: list[str] = []

    held = await call(ledger, "fulfil_once", paid("order-1"), ran.append)
    resolved = await call(ledger, "resolve", "order-1", ran=False)
    shipped = await call(ledger, "fulfil_once", paid("order-1"), lambda p: ran.append("now"))

    assert held.outcome is Outcome.UNKNOWN
    assert resolved.state == "released"
    assert shipped.outcome is Outcome.FULFILLED and ran == ["now"]
    with pytest.raises(LedgerError, match="unknown"):
        await call(ledger, "resolve", "order-1", ran=True)


async def reconcile(ledger: Either, service: Sandbox, **options: Any) -> ReconcileReport:
    """``ledger.reconcile(client, ...)`` with a client of the ledger's kind on ``service``."""
    key, base = service.secret_key, service.base_url
    if isinstance(ledger, AsyncSQLAlchemyLedger):
        async with paysdk.AsyncClient(secret_key=key, base_url=base) as aclient:
            return await ledger.reconcile(aclient, **options)
    with paysdk.Client(secret_key=key, base_url=base) as client:
        return ledger.reconcile(client, **options)


async def test_reconcile_fulfils_what_callbacks_missed_once(
    engine: Any, shop_service: Sandbox
) -> None:
    orders = [Order(r.reference, r.amount, r.currency) for r in shop_service.payments]
    shop = Shop(*[o for o in orders if o.reference != "shop-2"], Order("shop-2", 900, "NGN"))
    completed = {r.reference for r in shop_service.payments if r.succeeded}
    ledger = open_ledger(engine)

    first = await reconcile(ledger, shop_service, fulfil=shop.fulfil, lookup=shop.lookup)
    second = await reconcile(ledger, shop_service, fulfil=shop.fulfil, lookup=shop.lookup)

    assert sorted(shop.fulfilled) == sorted(completed - {"shop-2"})
    assert shop.deliveries == len(shop.fulfilled)  # each exactly once, over both runs
    assert {d.reference for d in first.discrepancies} == completed
    assert [d.reference for d in second.discrepancies] == ["shop-2"]  # refused: wrong amount
    assert second.fulfilled_ok == len(shop.fulfilled)


async def test_refusals_and_ignores_keep_their_reasons_in_the_apps_create_all_table(
    engine: Any,
) -> None:
    metadata = sqlalchemy.MetaData()
    ledger_table(metadata)
    await create_all(engine, metadata)
    ledger = open_ledger(engine, create_table=False)
    await call(ledger, "fulfil_once", paid("order-3"), lambda p: None)

    refused = await call(ledger, "refuse", paid("order-1", amount=900), "paid 900 of 2500")
    ignored = await call(ledger, "ignore", "order-2", "the other shop's")
    kept = await call(ledger, "refuse", paid("order-3"), "too late: it shipped")

    assert (refused.state, refused.reason, refused.amount) == ("refused", "paid 900 of 2500", 900)
    assert (ignored.state, ignored.reason, ignored.amount) == ("ignored", "the other shop's", 0)
    assert (kept.state, kept.reason) == ("fulfilled", None)
    pages = [await call(ledger, "rows_after", after, 2) for after in ("", "order-2")]
    assert [[row.reference for row in page] for page in pages] == [
        ["order-1", "order-2"],
        ["order-3"],
    ]
    assert await call(ledger, "rows_after", state="refused") == [refused]
    assert await call(ledger, "rows_after", state="ignored") == [ignored]
    assert await call(ledger, "_fulfilled_references_after", "", 10, account="") == ["order-3"]


async def test_reconcile_shows_refused_ignored_and_not_ours_payments_apart_from_missed(
    engine: Any, shop_service: Sandbox
) -> None:
    ledger = open_ledger(engine)
    await call(ledger, "refuse", "shop-2", "underpaid: 100 of 900 NGN")
    await call(ledger, "ignore", "order-1042", "a test payment of support's")
    mine = {"shop-1": Order("shop-1", 700, "NGN")}  # lookup finds no other order

    report = await reconcile(ledger, shop_service, lookup=mine.get)

    found = {d.reference: (d.kind, d.reason) for d in report.discrepancies}
    assert found.pop("shop-2") == (Kind.REFUSED, "underpaid: 100 of 900 NGN")
    assert found.pop("order-1042") == (Kind.IGNORED, "a test payment of support's")
    assert found.pop("shop-1") == (Kind.MISSED, None)
    others = {r.reference for r in shop_service.payments if r.succeeded} - set(mine)
    assert found and found == {
        reference: (Kind.FOREIGN, None) for reference in others - {"shop-2", "order-1042"}
    }
    assert report.unresolved_missed == 1


async def test_paysdk_ledger_reads_the_same_table_given_the_databases_plain_url(
    engine: Any, ledger_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    ledger = open_ledger(engine)
    await call(ledger, "refuse", paid("order-1", amount=900), "paid 900 of 2500")

    code = main(["ledger", "list", "--ledger", ledger_url, "--state", "refused", "--json"])

    listed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert code == 0
    assert [(row["reference"], row["amount"], row["reason"]) for row in listed] == [
        ("order-1", 900, "paid 900 of 2500")
    ]


def test_a_sqlite_url_sqlalchemy_would_open_another_file_from_is_refused(tmp_path: Path) -> None:
    """SQLAlchemy ends a ``sqlite:///`` path at ``?`` (its driver's options) and, since 2.1,
    decodes ``%`` escapes; the ledger read both as part of the file's name: given the app's
    engine's URL, it opened a new, empty ledger beside the engine's and fulfilled its payments
    again."""
    path = tmp_path / "shop 2.db"
    shipped: list[str] = []
    opened: set[str] = set()
    for url in (f"sqlite:///{path}".replace(" ", "%20"), f"sqlite:///{path}?timeout=20"):
        engine = sqlalchemy.create_engine(url)
        database = engine.url.database  # the file this SQLAlchemy opens, as its version reads it
        assert database is not None
        Path(database).unlink(missing_ok=True)
        try:
            with SQLAlchemyLedger(engine) as apps:
                apps.fulfil_once(paid(), lambda payment: shipped.append(payment.reference))
        finally:
            engine.dispose()
        refused = pytest.raises(paysdk.ConfigurationError, match="would open two files")
        with refused, paysdk.Ledger(url) as ledger:
            ledger.fulfil_once(paid(), lambda payment: shipped.append(payment.reference))
        with pytest.raises(paysdk.ConfigurationError, match="would open two files"):
            paysdk.ledger.sqlite_file(url)
        with paysdk.Ledger(database) as ledger:  # the file's path itself: the engine's ledger
            assert ledger.fulfil_once(
                paid(), lambda payment: shipped.append("again")
            ).already_fulfilled
        opened.add(Path(database).name)
    assert shipped == ["order-1", "order-1"]  # once a URL
    assert {name.name for name in tmp_path.iterdir()} == opened


# --- the framework helpers' refusals, in the app's database ------------------------------------

ORDERS = {
    "order-1043": {"amount": 4999, "currency": "USD"},  # the sandbox's failed payment
    "shop-2": {"amount": 900, "currency": "NGN"},  # paid 100
}


def assert_refusals_recorded(answers: list[tuple[int, object]], rows: list[Any]) -> None:
    """The failed payment answered 200, the underpaid one 409: each recorded refused, with why."""
    assert answers == [(200, {"status": "failed"}), (409, {"status": "mismatch"})]
    assert [(row.reference, row.state) for row in rows] == [
        ("order-1043", "refused"),
        ("shop-2", "refused"),
    ]
    assert rows[0].reason == "the service reports the payment failed"
    assert rows[1].reason.startswith("paid, but not for this order: amount 100")


def test_flasks_helper_records_its_refusals_through_a_sqlalchemy_ledger(
    shop_service: Sandbox, ledger_url: str
) -> None:
    import flask

    from paysdk.integrations.flask import verified_callback

    engine = make_engine(ledger_url, "sync")
    assert isinstance(engine, sqlalchemy.Engine)
    ledger = SQLAlchemyLedger(engine)
    app = flask.Flask(__name__)
    key, base = shop_service.secret_key, shop_service.base_url
    with paysdk.Client(secret_key=key, base_url=base) as client:

        @app.get("/payments/callback")
        @verified_callback(client, lookup=ORDERS.get, ledger=ledger)
        def payment_callback(payment: paysdk.VerifiedPayment) -> dict[str, str]:
            return {"status": "ok"}

        with app.test_client() as browser:
            sent = [browser.get(f"/payments/callback?reference={ref}") for ref in ORDERS]
    answers = [(response.status_code, response.json) for response in sent]
    assert_refusals_recorded(answers, [ledger.row(reference) for reference in ORDERS])
    engine.dispose()


def test_fastapis_helper_records_its_refusals_through_an_async_sqlalchemy_ledger(
    shop_service: Sandbox, ledger_url: str
) -> None:
    from fastapi import FastAPI
    from fastapi.testclient import TestClient
    from sqlalchemy.ext.asyncio import AsyncEngine

    from paysdk.integrations.fastapi import verified_callback

    engine = make_engine(ledger_url, "async")
    assert isinstance(engine, AsyncEngine)
    client = paysdk.AsyncClient(secret_key=shop_service.secret_key, base_url=shop_service.base_url)
    ledger = AsyncSQLAlchemyLedger(engine)
    app = FastAPI()

    @app.get("/payments/callback")
    @verified_callback(client, lookup=ORDERS.get, ledger=ledger)
    async def payment_callback(payment: paysdk.VerifiedPayment) -> dict[str, str]:
        return {"status": "ok"}

    with TestClient(app) as browser:  # the engine is used on the test client's event loop only
        sent = [browser.get(f"/payments/callback?reference={ref}") for ref in ORDERS]
        rows = [browser.portal.call(ledger.row, reference) for reference in ORDERS]
        browser.portal.call(client.close)
        browser.portal.call(engine.dispose)
    assert_refusals_recorded([(r.status_code, r.json()) for r in sent], rows)


# --- the table as the app's metadata --------------------------------------------------------


def test_ledger_table_is_column_for_column_the_table_the_ledger_creates(ledger_url: str) -> None:
    engine = sqlalchemy.create_engine(engine_url(ledger_url, "sync"))
    metadata = sqlalchemy.MetaData()
    ledger_table(metadata)
    metadata.create_all(engine)
    SQLAlchemyLedger(engine, table="made_by_ledger").create_table()
    inspector = sqlalchemy.inspect(engine)

    def columns(table: str) -> list[tuple[str, str, bool]]:
        return [
            (c["name"], str(c["type"].compile(engine.dialect)), c["nullable"])
            for c in inspector.get_columns(table)
        ]

    assert columns("paysdk_fulfilments") == columns("made_by_ledger")
    for table in ("paysdk_fulfilments", "made_by_ledger"):
        assert inspector.get_pk_constraint(table)["constrained_columns"] == ["account", "reference"]
    timestamps = {kind for name, kind, _ in columns("paysdk_fulfilments") if name.endswith("_at")}
    assert timestamps == {"TEXT" if engine.dialect.name == "sqlite" else "TIMESTAMP WITH TIME ZONE"}
    engine.dispose()


def test_alembic_autogenerate_finds_nothing_to_change_in_the_ledgers_own_table(
    ledger_url: str,
) -> None:
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    engine = sqlalchemy.create_engine(engine_url(ledger_url, "sync"))
    SQLAlchemyLedger(engine).create_table()
    metadata = sqlalchemy.MetaData()
    ledger_table(metadata)
    with engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        assert compare_metadata(context, metadata) == []
        ledger_table(metadata, "paysdk_other")  # a table it lacks is one to add, with its indexes
        changes = [change[0] for change in compare_metadata(context, metadata)]
        assert changes == ["add_table", "add_index", "add_index"]
    engine.dispose()


@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_a_table_in_the_apps_own_schema_works(postgres_url: str, kind: str) -> None:
    engine = make_engine(fresh_database(postgres_url), kind)
    await run_sql(engine, "CREATE SCHEMA shop")
    metadata = sqlalchemy.MetaData()
    table = ledger_table(metadata, "shop.payments_done")
    await create_all(engine, metadata)
    ledger = open_ledger(engine, table="shop.payments_done", create_table=False)

    result = await call(ledger, "fulfil_once", paid("order-1"), lambda p: "shipped")

    assert (table.schema, table.name, result.outcome) == (
        "shop",
        "payments_done",
        Outcome.FULFILLED,
    )
    await dispose(engine)


def test_ledger_table_refuses_a_name_the_ledger_would() -> None:
    with pytest.raises(paysdk.ConfigurationError, match="table must be a plain SQL name"):
        ledger_table(sqlalchemy.MetaData(), "orders; DROP TABLE users")


# --- what the ledger refuses before any I/O -------------------------------------------------


def test_an_engine_on_another_database_or_driver_is_refused(tmp_path: Path) -> None:
    import sqlite3

    # Engines of other dialects, made with sqlite3 as their DBAPI module: none connects.
    mysql = sqlalchemy.create_engine("mysql+pymysql://shop@127.0.0.1/shop", module=sqlite3)
    with pytest.raises(paysdk.ConfigurationError, match=r"not 'mysql' \(mysql\+pymysql\)"):
        SQLAlchemyLedger(mysql)
    pg8000 = sqlalchemy.create_engine("postgresql+pg8000://shop@127.0.0.1/shop", module=sqlite3)
    with pytest.raises(
        paysdk.ConfigurationError, match=r"postgresql\+psycopg://, not postgresql\+pg8000://"
    ):
        SQLAlchemyLedger(pg8000)
    with pytest.raises(paysdk.ConfigurationError, match="in-memory"):
        SQLAlchemyLedger(sqlalchemy.create_engine("sqlite://"))


async def test_each_ledger_takes_its_own_kind_of_engine(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'shop.db'}"
    engine, async_engine = make_engine(url, "sync"), make_engine(url, "async")
    with pytest.raises(paysdk.ConfigurationError, match="use AsyncSQLAlchemyLedger"):
        SQLAlchemyLedger(async_engine)  # type: ignore[arg-type]
    with pytest.raises(paysdk.ConfigurationError, match="use SQLAlchemyLedger"):
        AsyncSQLAlchemyLedger(engine)  # type: ignore[arg-type]
    with pytest.raises(paysdk.ConfigurationError, match=r"needs a sqlalchemy Engine, not str$"):
        SQLAlchemyLedger(url)  # type: ignore[arg-type]
    with pytest.raises(
        paysdk.ConfigurationError, match=r"needs a sqlalchemy AsyncEngine, not str$"
    ):
        AsyncSQLAlchemyLedger(url)  # type: ignore[arg-type]
    await dispose(async_engine)


def test_the_repr_names_the_database_never_the_password() -> None:
    engine = sqlalchemy.create_engine("postgresql+psycopg://shop:s3cret@db.internal:5433/orders")
    shown = repr(SQLAlchemyLedger(engine, table="shop.done"))
    assert shown == (
        "<paysdk.SQLAlchemyLedger postgresql 'postgresql+psycopg://db.internal:5433/orders' "
        "table='shop.done'>"
    )

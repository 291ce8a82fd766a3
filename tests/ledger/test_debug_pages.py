"""A PostgreSQL ledger whose URL holds a password, failing in a merchant's Django view under
``DEBUG = True`` (a new project's default): Django's debug page lists every frame's locals, the
frames of the failed connect among them, and must show no password."""

from __future__ import annotations

import secrets
from typing import Any

import pytest
import sqlalchemy
from django.http import HttpRequest, HttpResponse
from django.test import AsyncClient as DjangoAsyncClient
from django.urls import path
from sqlalchemy.ext.asyncio import create_async_engine

import paysdk
from paysdk.ledger.sqlalchemy import AsyncSQLAlchemyLedger, SQLAlchemyLedger
from tests.support.django_site import configure, debug_page, serve
from tests.support.engines import engine_url
from tests.support.ports import unused_port

configure()

CONNECTS = ["refused", "no-database"]
"""How the server refuses a connect: nothing listens on the port, or no such database is."""
FAILURES = [*CONNECTS, "no-table"]
"""And a statement failing once connected: the table is missing (``create_table=False``)."""


@pytest.fixture
def password() -> str:
    """Made when the test runs: the page shows the test's source lines too, never this value."""
    return f"s3cret{secrets.token_hex(6)}"


@pytest.fixture(params=FAILURES)
def url(request: pytest.FixtureRequest, password: str) -> str:
    """A ledger URL holding ``password`` that the server refuses, as the failure says."""
    if request.param == "refused":
        return f"postgresql://shop:{password}@127.0.0.1:{unused_port()}/shop"
    postgres_url: str = request.getfixturevalue("postgres_url")
    server = postgres_url.rsplit("/", 1)[0].replace("://postgres@", f"://postgres:{password}@")
    return f"{server}/{'no_such_database' if request.param == 'no-database' else 'postgres'}"


def check_page(html: str, password: str) -> None:
    """The debug page of the ledger's failure: the error, its cause (psycopg's exception, or
    SQLAlchemy's, by its text), and no password."""
    assert "LedgerError" in html and "Local vars" in html  # the debug page, with the locals
    assert "was the direct cause of the following exception" in html  # the cause, and its text
    assert "failed" in html.partition("was the direct cause")[0]
    assert password not in html


@pytest.mark.parametrize("kind", ["own", "sqlalchemy"])
def test_a_sync_views_debug_page_of_a_refused_connect_shows_no_password(
    kind: str, url: str, password: str
) -> None:
    """psycopg's ``connect`` holds the password in its locals (``conninfo``, ``params``), as
    SQLAlchemy's pool does (``cparams``): the ledger's error keeps the driver's exception as its
    cause, with its type and text, without those frames."""
    engine = sqlalchemy.create_engine(engine_url(url, "sync")) if kind == "sqlalchemy" else None
    options: dict[str, Any] = {"timeout": 2, "create_table": False}
    ledger = SQLAlchemyLedger(engine, **options) if engine else paysdk.Ledger(url, **options)

    def orders(request: HttpRequest) -> HttpResponse:
        ledger.row("order-1042")
        return HttpResponse("found")

    with ledger:
        html = debug_page(orders)
    if engine is not None:
        engine.dispose()
    check_page(html, password)


@pytest.mark.anyio
@pytest.mark.parametrize("kind", ["own", "sqlalchemy"])
async def test_an_async_views_debug_page_of_a_refused_connect_shows_no_password(
    kind: str, url: str, password: str
) -> None:
    """As for a sync view, with an ``AsyncLedger`` (or the SQLAlchemy one on an ``AsyncEngine``)
    in an ``async def`` view."""
    engine = create_async_engine(engine_url(url, "async")) if kind == "sqlalchemy" else None
    options: dict[str, Any] = {"timeout": 2, "create_table": False}
    ledger = (
        AsyncSQLAlchemyLedger(engine, **options) if engine else paysdk.AsyncLedger(url, **options)
    )

    async def orders(request: HttpRequest) -> HttpResponse:
        await ledger.row("order-1042")
        return HttpResponse("found")

    serve(path("orders", orders))
    async with ledger:
        browser = DjangoAsyncClient(raise_request_exception=False)
        page = await browser.get("/orders", HTTP_ACCEPT="text/html")
    if engine is not None:
        await engine.dispose()
    assert page.status_code == 500
    check_page(page.content.decode(), password)


@pytest.mark.parametrize("url", CONNECTS, indirect=True)
def test_the_cause_of_a_refused_connect_is_kept_without_its_frames(url: str) -> None:
    """Nothing to debug with is lost: the cause is psycopg's exception, its type and text
    intact (the ledger's message quotes it); only its frames are gone."""
    import psycopg

    with paysdk.Ledger(url, timeout=2) as ledger, pytest.raises(paysdk.LedgerError) as raised:
        ledger.row("order-1042")
    cause = raised.value.__cause__
    assert isinstance(cause, psycopg.OperationalError)
    assert cause.__traceback__ is None
    assert " ".join(str(cause).split()) in str(raised.value)  # its text, on one line


@pytest.mark.parametrize(
    ("given", "options", "said"),
    [
        ("postgresql://shop:{password}/x@127.0.0.1:5432/shop", {}, "the PostgreSQL ledger URL is"),
        ("postgresql://shop:{password}@127.0.0.1:5432/shop", {"timeout": -1}, "timeout must be"),
        ("postgresql://shop:{password}@127.0.0.1:5432/shop", {"table": "a b"}, "table must be"),
        ("postgresq1://shop:{password}@127.0.0.1:5432/shop", {}, "unsupported ledger URL scheme"),
    ],
    ids=["malformed-url", "bad-timeout", "bad-table", "unknown-scheme"],
)
def test_the_debug_page_of_a_ledger_refused_when_made_shows_no_password(
    given: str, options: dict[str, Any], said: str, password: str
) -> None:
    """A ledger made in a view (or at import, which Django runs on the first request) and
    refused: the frames that read its URL (the URL, libpq's parts of it) are not on the page,
    and the constructor's own holds the URL under a repr that shows none of it."""

    def ledger_url() -> str:
        """Read where the view needs it: the view's own locals hold no URL."""
        return given.format(password=password)

    def orders(request: HttpRequest) -> HttpResponse:
        paysdk.Ledger(ledger_url(), **options)
        return HttpResponse("found")

    html = debug_page(orders)
    assert "ConfigurationError" in html
    assert said in html
    assert password not in html


def test_a_django_ledgers_debug_page_of_a_refused_connect_shows_no_password(
    password: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``DjangoLedger`` on a PostgreSQL alias whose ``PASSWORD`` is set, its server refusing:
    Django's connect (``conn_params``) and psycopg's hold the password; the ledger's error is
    chained to Django's without their frames."""
    from django.db import connections

    from paysdk.integrations.django import DjangoLedger

    alias = connections["postgres"]
    alias.close()
    monkeypatch.setitem(alias.settings_dict, "PASSWORD", password)
    monkeypatch.setitem(alias.settings_dict, "HOST", "127.0.0.1")
    monkeypatch.setitem(alias.settings_dict, "PORT", str(unused_port()))
    ledger = DjangoLedger(using="postgres", timeout=2)

    def orders(request: HttpRequest) -> HttpResponse:
        ledger.row("order-1042")
        return HttpResponse("found")

    try:
        html = debug_page(orders)
    finally:
        alias.close()
    check_page(html, password)


def test_a_bug_while_a_ledger_is_made_keeps_its_frames(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the ledger's own refusals lose the frames below its constructor: anything else is a
    bug (ours or a dependency's), whose traceback is what finds it."""
    from paysdk.ledger import _base

    def broken(url: object) -> tuple[str, str]:
        raise TypeError("a changed API")

    monkeypatch.setattr(_base, "_target", broken)
    with pytest.raises(TypeError, match="a changed API") as raised:
        paysdk.Ledger("sqlite:///ledger.db")
    assert [frame.name for frame in raised.traceback][-1] == "broken"

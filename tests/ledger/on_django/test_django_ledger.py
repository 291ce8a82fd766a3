"""``DjangoLedger``: the ledger on Django's own connection, on SQLite and a real PostgreSQL,
each migrated by ``manage.py migrate``'s machinery (conftest.py).

The ledger's behaviour tests (tests/ledger/test_ledger.py, test_set_aside.py, test_rows_after.py)
run here again on ``DjangoLedger`` through their ``make_ledger`` and ``ledger_url`` fixtures; the
rest is what only a Django ledger has: the migrated table, the merchant's transactions, Django's
errors, the table shared with ``paysdk.Ledger``, and ``verified_callback``'s fulfilment rule.
"""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
import subprocess
import sys
import time
import zoneinfo
from collections.abc import AsyncIterator
from typing import Any

import psycopg
import pytest
from django.conf import settings
from django.core.management import call_command
from django.db import connections, models, transaction
from django.db.models.functions import TruncDate
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.test import Client as DjangoClient
from django.test import override_settings
from django.urls import path
from django.utils import timezone

import paysdk
from paysdk.integrations.django import DjangoLedger, verified_callback
from paysdk.integrations.django.models import Fulfilment
from paysdk.ledger import Kind, Ledger, LedgerError, Outcome
from paysdk.ledger._django import key_by_account
from paysdk.sandbox import Sandbox
from tests.ledger import test_accounts, test_amounts, test_rows_after, test_set_aside
from tests.ledger import test_ledger as shared
from tests.support.django_site import postgres_settings, serve, url_of
from tests.support.either_ledger import EitherLedger, MakeLedger, paid
from tests.support.fulfilment_rule import (
    REFERENCE,
    VIEW_ANSWERS,
    ViewAnswer,
    Views,
    answer_ids,
    check_the_rule,
)
from tests.support.ledger_worker import abandon_claim
from tests.support.merchant import Shop
from tests.support.ports import unused_port

pytestmark = pytest.mark.anyio


@pytest.fixture
async def make_ledger(using: str, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[MakeLedger]:
    """DjangoLedgers on the test's migrated database, for the shared behaviour tests.

    Those tests are async (to cover AsyncLedger too) and call this sync ledger from the event
    loop's thread, which Django refuses unless told (a Django app calls it from sync views).
    There Django keeps a connection per task: it is closed here, in the test's own task.
    """
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

    def make(**options: Any) -> EitherLedger:
        return EitherLedger(DjangoLedger(using, **options))

    yield make
    connections[using].close()


@pytest.fixture
def ledger_url(using: str) -> str:
    """The URL of the test's migrated database, for what the shared tests do on ``paysdk.Ledger``
    beside the ledger under test (a worker that died mid-action)."""
    return url_of(using)


test_fulfils_once_and_records_what_was_paid = shared.test_fulfils_once_and_records_what_was_paid
test_returns_what_the_action_returned = shared.test_returns_what_the_action_returned
test_an_action_that_raises_records_nothing_and_can_be_retried = (
    shared.test_an_action_that_raises_records_nothing_and_can_be_retried
)
test_a_live_claim_is_in_progress_elsewhere = shared.test_a_live_claim_is_in_progress_elsewhere
test_a_claim_whose_lease_ran_out_is_held_as_unknown_and_the_late_worker_records_it = (
    shared.test_a_claim_whose_lease_ran_out_is_held_as_unknown_and_the_late_worker_records_it
)
test_only_a_verified_payment_can_be_fulfilled = shared.test_only_a_verified_payment_can_be_fulfilled
test_a_failed_payment_is_never_fulfilled = shared.test_a_failed_payment_is_never_fulfilled
test_a_refusal_is_recorded_with_its_reason_and_what_was_paid = (
    test_set_aside.test_a_refusal_is_recorded_with_its_reason_and_what_was_paid
)
test_a_bare_reference_can_be_ignored_and_the_reason_rewritten = (
    test_set_aside.test_a_bare_reference_can_be_ignored_and_the_reason_rewritten
)
test_a_fulfilled_payment_stays_fulfilled = test_set_aside.test_a_fulfilled_payment_stays_fulfilled
test_a_refused_payment_is_fulfilled_by_a_later_delivery_that_passes_its_checks = (
    test_set_aside.test_a_refused_payment_is_fulfilled_by_a_later_delivery_that_passes_its_checks
)
test_the_largest_and_smallest_amounts_are_stored_exactly = (
    test_amounts.test_the_largest_and_smallest_amounts_are_stored_exactly
)
test_an_amount_beyond_64_bits_is_refused_for_good_and_nothing_runs = (
    test_amounts.test_an_amount_beyond_64_bits_is_refused_for_good_and_nothing_runs
)
test_a_refusal_of_an_amount_beyond_64_bits_is_recorded_saying_what_it_was = (
    test_amounts.test_a_refusal_of_an_amount_beyond_64_bits_is_recorded_saying_what_it_was
)
test_two_accounts_payments_of_one_reference_are_fulfilled_apart = (
    test_accounts.test_two_accounts_payments_of_one_reference_are_fulfilled_apart
)
test_unlabelled_payments_of_two_keys_are_refused_before_any_action = (
    test_accounts.test_unlabelled_payments_of_two_keys_are_refused_before_any_action
)
test_retire_key_lets_a_rotated_key_fulfil_and_keeps_its_old_payments_fulfilled = (
    test_accounts.test_retire_key_lets_a_rotated_key_fulfil_and_keeps_its_old_payments_fulfilled
)
test_pages_walk_every_row_in_reference_order_and_filter_by_state = (
    test_rows_after.test_pages_walk_every_row_in_reference_order_and_filter_by_state
)
test_an_unknown_state_is_a_configuration_error_that_lists_them = (
    test_rows_after.test_an_unknown_state_is_a_configuration_error_that_lists_them
)
test_a_page_after_what_no_reference_holds_is_refused_on_every_database = (
    test_rows_after.test_a_page_after_what_no_reference_holds_is_refused_on_every_database
)
test_one_key_under_a_second_label_is_refused_before_any_action = (
    test_accounts.test_one_key_under_a_second_label_is_refused_before_any_action
)
test_a_bare_reference_set_aside_under_a_label_in_another_case_is_refused = (
    test_accounts.test_a_bare_reference_set_aside_under_a_label_in_another_case_is_refused
)


def columns(alias: str, table: str) -> list[tuple[str, str, bool, bool]]:
    """Each column of ``table``: name, declared type, nullable, part of the primary key."""
    with connections[alias].cursor() as cursor:
        if connections[alias].vendor == "sqlite":
            cursor.execute(
                'SELECT name, upper(type), "notnull", pk FROM pragma_table_info(%s)', [table]
            )
            # SQLite lets a TEXT primary key hold NULL unless told NOT NULL (as Django's is); the
            # ledger never writes one, and PostgreSQL's primary keys are never NULL: compared alike.
            return [
                (name, kind, not (notnull or pk), bool(pk)) for name, kind, notnull, pk in cursor
            ]
        cursor.execute(
            "SELECT c.column_name, upper(c.data_type), c.is_nullable = 'YES', "
            "EXISTS (SELECT 1 FROM information_schema.key_column_usage k JOIN "
            "information_schema.table_constraints t USING (constraint_name, table_name) "
            "WHERE t.constraint_type = 'PRIMARY KEY' AND k.table_name = c.table_name "
            "AND k.column_name = c.column_name) FROM information_schema.columns c "
            "WHERE c.table_name = %s ORDER BY c.ordinal_position",
            [table],
        )
        return list(cursor.fetchall())


def test_under_debug_djangos_cursor_logs_each_statement_formatted_with_its_parameters(
    using: str,
) -> None:
    """``DEBUG = True``, as ``startproject`` writes it: Django's debug cursor formats each query
    it logs with Python's ``%``, and the ledger's SQLite SQL holds ``strftime`` formats."""
    assert settings.DEBUG is True  # tests/support/django_settings.py
    connections[using].queries_log.clear()
    ledger = DjangoLedger(using)
    assert ledger.fulfil_once(paid("order-1"), lambda payment: "shipped").value == "shipped"
    assert ledger.refuse(paid("order-2"), "no such order").state == "refused"
    assert ledger.rows_after(state="unknown") == []
    logged = [query["sql"] for query in connections[using].queries]
    claims = [sql for sql in logged if "INSERT INTO paysdk_fulfilments" in sql]
    assert len(claims) == 2
    assert "'order-1'" in claims[0]  # the parameters, formatted in
    if connections[using].vendor == "sqlite":
        assert "strftime('%Y-%m-%dT%H:%M:%f', 'now')" in claims[0]


def test_a_ledger_transaction_is_read_committed_whatever_djangos_isolation_level(
    django_postgres: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Django's ``OPTIONS["isolation_level"]`` (REPEATABLE READ here) begins every transaction
    on its connection: a ledger check made after waiting for another first payment's commit
    would keep its older snapshot and miss that payment's row. The ledger's own are READ
    COMMITTED."""
    wrapper = connections[django_postgres]
    repeatable = {"isolation_level": psycopg.IsolationLevel.REPEATABLE_READ}
    monkeypatch.setitem(wrapper.settings_dict, "OPTIONS", repeatable)
    wrapper.close()  # the next connection is made with the option
    try:
        driver = DjangoLedger(django_postgres)._driver
        opened = driver.begin()
        try:
            shown = opened.execute("SHOW transaction_isolation", ()).rows
        finally:
            opened.rollback()
            driver.done(opened)
        assert shown == [("read committed",)]
    finally:
        wrapper.close()


def test_migrate_creates_the_table_the_ledger_would_create_itself(using: str) -> None:
    with Ledger(url_of(using), table="made_by_the_ledger") as ledger:
        ledger.create_table()
    assert columns(using, "paysdk_fulfilments") == columns(using, "made_by_the_ledger")
    if connections[using].vendor == "sqlite":
        kinds = {name: kind for name, kind, *_ in columns(using, "paysdk_fulfilments")}
        assert kinds["claimed_at"] == kinds["lease_expires_at"] == "TEXT"


def test_migrate_creates_the_indexes_the_ledger_would_create_itself(using: str) -> None:
    """Migrations 0002 and 0003 index the table as a ledger creating it does: a key's check reads
    the index by key, however many account labels the table holds."""
    with Ledger(url_of(using), table="made_by_the_ledger") as ledger:
        ledger.create_table()

    def indexes(table: str) -> set[tuple[str, ...]]:
        with connections[using].cursor() as cursor:
            found = connections[using].introspection.get_constraints(cursor, table)
        keyed = (each["columns"] for each in found.values() if each["index"])
        return {tuple(columns) for columns in keyed if "verified_by" in columns}

    assert indexes("made_by_the_ledger") == {("account", "verified_by"), ("verified_by", "account")}
    assert indexes("paysdk_fulfilments") == indexes("made_by_the_ledger")


def test_the_accounts_migration_keeps_every_row_of_a_table_made_before(using: str) -> None:
    """What migration 0002 runs on the ledger's table, here on a filled table of the old shape."""
    vendor = connections[using].vendor
    old = test_accounts.OLD_TABLE.replace("paysdk_fulfilments", "paysdk_before_accounts")
    insert = test_accounts.POSTGRES_INSERT.replace("paysdk_fulfilments", "paysdk_before_accounts")
    with connections[using].cursor() as cursor:
        cursor.execute("DROP TABLE IF EXISTS paysdk_before_accounts")
        cursor.execute(old.format(ts="TEXT" if vendor == "sqlite" else "TIMESTAMPTZ"))
        cursor.executemany(insert, test_accounts.OLD_ROWS)
    with transaction.atomic(using=using):  # as a migration runs
        key_by_account(connections[using], "paysdk_before_accounts")
    before = columns(using, "paysdk_before_accounts")
    assert ("account", "TEXT", False, True) in before
    with Ledger(url_of(using), table="paysdk_before_accounts", create_table=False) as ledger:
        rows = ledger.rows(["order-1", "order-2", "order-3"])
    assert {r.reference: (r.account, r.state) for r in rows.values()} == {
        "order-1": ("", "fulfilled"),
        "order-2": ("", "released"),
        "order-3": ("", "refused"),
    }


def test_the_model_and_its_migration_agree(django_sqlite: str) -> None:
    call_command("makemigrations", "paysdk", check=True, dry_run=True, verbosity=0)


def test_djangoledger_and_ledger_share_the_table_and_a_person_resolves_unknown(
    using: str,
) -> None:
    url = url_of(using)
    for reference in ("order-1", "order-2"):
        abandon_claim(url, reference, lease=0.2)  # a worker on paysdk.Ledger died mid-action
    time.sleep(0.4)
    ledger = DjangoLedger(using)
    shipped: list[paysdk.VerifiedPayment] = []

    assert ledger.fulfil_once(paid("order-1"), shipped.append).outcome is Outcome.UNKNOWN
    assert ledger.resolve("order-1", ran=True).state == "fulfilled"
    assert ledger.resolve("order-2", ran=False).state == "released"
    with pytest.raises(LedgerError, match="no claim of unknown outcome"):
        ledger.resolve("order-1", ran=False)
    assert ledger.fulfil_once(paid("order-2"), shipped.append).fulfilled_now
    assert [payment.reference for payment in shipped] == ["order-2"]

    with Ledger(url) as other:  # the URL ledger reads what the Django one wrote, and vice versa
        assert other.fulfil_once(paid("order-2"), shipped.append).already_fulfilled
        assert other.rows(["order-1", "order-2"]) == ledger.rows(["order-1", "order-2"])


def test_reconcile_on_djangos_connection_reports_what_the_service_does_not_list(
    using: str, shop_service: Sandbox
) -> None:
    ledger = DjangoLedger(using)
    ledger.fulfil_once(paid("shop-1", 700), lambda payment: None)
    ledger.fulfil_once(paid("never-made", 5), lambda payment: None)
    key, url = shop_service.secret_key, shop_service.base_url

    with paysdk.Client(secret_key=key, base_url=url) as client:
        report = ledger.reconcile(client)

    assert [d.reference for d in report.of_kind(Kind.NOT_LISTED)] == ["never-made"]
    assert "shop-1" not in {d.reference for d in report.discrepancies}
    assert report.fulfilled_ok == 1


def test_the_model_reads_the_ledgers_timestamps_and_writes_them_in_its_form(using: str) -> None:
    DjangoLedger(using).fulfil_once(paid("order-1"), lambda payment: None)
    row = DjangoLedger(using).row("order-1")
    model = Fulfilment.objects.using(using).get(reference="order-1")
    assert row is not None and row.fulfilled_at is not None
    assert model.fulfilled_at == row.fulfilled_at
    assert model.fulfilled_at.utcoffset() == dt.timedelta(0)
    assert model.claimed_at <= model.fulfilled_at

    later = model.fulfilled_at + dt.timedelta(hours=1)
    Fulfilment.objects.using(using).filter(reference="order-1").update(fulfilled_at=later)
    assert DjangoLedger(using).rows(["order-1"])["order-1"].fulfilled_at == later
    if connections[using].vendor == "sqlite":  # the ledger's text, which sorts as time does
        with connections[using].cursor() as cursor:
            cursor.execute("SELECT fulfilled_at FROM paysdk_fulfilments")
            assert cursor.fetchone() == (later.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),)
    found = Fulfilment.objects.using(using).filter(fulfilled_at__gt=later - dt.timedelta(seconds=1))
    assert [fulfilment.reference for fulfilment in found] == ["order-1"]


def test_an_update_from_another_timestamp_writes_it_in_the_ledgers_form(using: str) -> None:
    """``update(fulfilled_at=F("claimed_at"))`` copies the ledger's time as it holds it: on
    SQLite the query's column reads with its ``T`` a space, which is no form to write back."""
    DjangoLedger(using).fulfil_once(paid("order-1"), lambda payment: None)
    rows = Fulfilment.objects.using(using).filter(reference="order-1")
    rows.update(fulfilled_at=models.F("claimed_at"))
    model = rows.get()
    assert DjangoLedger(using).rows(["order-1"])["order-1"].fulfilled_at == model.claimed_at
    if connections[using].vendor == "sqlite":
        with connections[using].cursor() as cursor:
            cursor.execute("SELECT claimed_at, fulfilled_at FROM paysdk_fulfilments")
            claimed, fulfilled = cursor.fetchone()
            assert fulfilled == claimed
            assert "T" in fulfilled


def test_its_rows_timestamps_are_utc_with_use_tz_off_and_a_local_time_zone(using: str) -> None:
    """``USE_TZ = False``: Django's PostgreSQL connection reads ``timestamptz`` naive, in
    ``TIME_ZONE``; the ledger's rows still say when, in UTC."""
    connections[using].close()  # Django sets a connection's time zone up when it opens it
    try:
        with override_settings(USE_TZ=False, TIME_ZONE="Asia/Tokyo"):
            before = dt.datetime.now(dt.timezone.utc)
            DjangoLedger(using).fulfil_once(paid("order-1"), lambda payment: None)
            row = DjangoLedger(using).row("order-1")
            connections[using].close()
    finally:
        connections[using].close()
    assert row is not None and row.fulfilled_at is not None
    assert row.fulfilled_at.tzinfo is dt.timezone.utc
    assert before - dt.timedelta(minutes=1) < row.fulfilled_at < before + dt.timedelta(minutes=1)


def test_the_orms_date_functions_read_the_ledgers_timestamps_on_either_database(
    using: str,
) -> None:
    """``__date``, ``__hour``, ``TruncDate`` and ``dates()`` (the admin's ``date_hierarchy``):
    on SQLite, Django's functions read its own text form of a time, not the ledger's."""
    DjangoLedger(using).fulfil_once(paid("order-1"), lambda payment: None)
    row = DjangoLedger(using).row("order-1")
    assert row is not None and row.fulfilled_at is not None
    with timezone.override(dt.timezone.utc):
        when = row.fulfilled_at
        rows = Fulfilment.objects.using(using)
        assert [f.reference for f in rows.filter(fulfilled_at__date=when.date())] == ["order-1"]
        assert rows.filter(fulfilled_at__year=when.year, fulfilled_at__hour=when.hour).count() == 1
        days = rows.annotate(day=TruncDate("fulfilled_at")).values_list("day", flat=True)
        assert list(days) == [when.date()]
        assert list(rows.datetimes("fulfilled_at", "hour")) == [
            when.replace(minute=0, second=0, microsecond=0)
        ]
        assert rows.filter(fulfilled_at__range=(when, when)).count() == 1
        assert rows.order_by("-claimed_at").values_list("fulfilled_at", flat=True)[0] == when


def test_with_use_tz_off_the_model_reads_and_writes_naive_local_times_on_either_database(
    using: str,
) -> None:
    """``USE_TZ = False``: Django's fields hold naive datetimes in ``TIME_ZONE``; the model's
    do too on SQLite, where the ledger's text says UTC, as Django's PostgreSQL reads them."""
    DjangoLedger(using).fulfil_once(paid("order-1"), lambda payment: None)
    row = DjangoLedger(using).row("order-1")
    assert row is not None and row.fulfilled_at is not None
    tokyo = row.fulfilled_at.astimezone(zoneinfo.ZoneInfo("Asia/Tokyo")).replace(tzinfo=None)
    connections[using].close()  # Django sets a connection's time zone up when it opens it
    try:
        with override_settings(USE_TZ=False, TIME_ZONE="Asia/Tokyo"):
            model = Fulfilment.objects.using(using).get(reference="order-1")
            assert model.fulfilled_at == tokyo  # naive, as every field of the project
            later = tokyo + dt.timedelta(hours=1)
            Fulfilment.objects.using(using).filter(reference="order-1").update(fulfilled_at=later)
            found = Fulfilment.objects.using(using).filter(fulfilled_at__gt=tokyo)
            assert [fulfilment.reference for fulfilment in found] == ["order-1"]
            connections[using].close()
    finally:
        connections[using].close()
    moved = DjangoLedger(using).row("order-1")
    assert moved is not None and moved.fulfilled_at == row.fulfilled_at + dt.timedelta(hours=1)


def test_inside_the_merchants_transaction_it_refuses_before_any_statement(using: str) -> None:
    ledger = DjangoLedger(using)
    shipped: list[paysdk.VerifiedPayment] = []
    with transaction.atomic(using=using):
        with pytest.raises(paysdk.ConfigurationError, match=r"inside transaction\.atomic"):
            ledger.fulfil_once(paid(), shipped.append)
        with pytest.raises(paysdk.ConfigurationError, match="non_atomic_requests"):
            ledger.row("order-1")
        Fulfilment.objects.using(using).count()  # the merchant's transaction is still usable
    assert shipped == []
    assert ledger.row("order-1") is None
    connections[using].set_autocommit(False)
    try:
        with pytest.raises(paysdk.ConfigurationError, match="autocommit"):
            ledger.fulfil_once(paid(), shipped.append)
    finally:
        connections[using].rollback()
        connections[using].set_autocommit(True)
    assert ledger.fulfil_once(paid(), shipped.append).fulfilled_now


def test_a_missing_table_says_to_migrate(using: str) -> None:
    ledger = DjangoLedger(using, table="never_migrated")
    with pytest.raises(LedgerError, match=r"never_migrated.*manage\.py migrate") as raised:
        ledger.fulfil_once(paid(), lambda payment: None)
    assert raised.value.__cause__ is not None  # Django's error, for the details
    assert DjangoLedger(using).row("order-1") is None


def test_a_lock_held_past_the_timeout_is_a_ledger_error_that_says_so(using: str) -> None:
    ledger = DjangoLedger(using, timeout=0.3)
    if connections[using].vendor == "sqlite":
        holder = sqlite3.connect(connections[using].settings_dict["NAME"], isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        try:
            with pytest.raises(LedgerError, match=r"locked .* more than 0\.3s.*'default'"):
                ledger.fulfil_once(paid(), lambda payment: None)
        finally:
            holder.execute("ROLLBACK")
            holder.close()
    else:
        from tests.support.postgres import an_uncommitted_claim

        with (
            an_uncommitted_claim(url_of(using)),
            pytest.raises(LedgerError, match=r"waited more than 0\.3s for a lock.*'postgres'"),
        ):
            ledger.fulfil_once(paid(), lambda payment: None)
    assert ledger.fulfil_once(paid(), lambda payment: "after").value == "after"  # not broken


def test_bad_settings_are_refused_before_any_database_is_touched() -> None:
    with pytest.raises(paysdk.ConfigurationError, match="one of Django's DATABASES"):
        DjangoLedger("nowhere")
    with pytest.raises(paysdk.ConfigurationError, match="lease"):
        DjangoLedger(lease=0)
    with pytest.raises(paysdk.ConfigurationError, match="table"):
        DjangoLedger(table="x; DROP TABLE y")
    assert repr(DjangoLedger()) == (
        "<paysdk.DjangoLedger sqlite using='default' table='paysdk_fulfilments'>"
    )
    assert DjangoLedger.__module__ == "paysdk.integrations.django"


def test_under_atomic_requests_a_callback_view_fulfils_once_on_the_apps_database(
    using: str,
    callback_sandbox: Sandbox,
    shop: Shop,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> None:
    """With ``ATOMIC_REQUESTS`` on each of the app's databases (SQLite and PostgreSQL), the
    helper's view is outside the request's transactions, where DjangoLedger commits its claim and
    its record: the view runs once, outside any transaction, a view the merchant marks
    non-atomic too is served alike, and a mismatched payment is recorded refused."""
    for database in ("sqlite", "postgres"):
        alias: str = request.getfixturevalue(f"django_{database}")
        monkeypatch.setitem(settings.DATABASES[alias], "ATOMIC_REQUESTS", True)
    client = paysdk.Client(
        secret_key=callback_sandbox.secret_key, base_url=callback_sandbox.base_url
    )
    ledger = DjangoLedger(using)
    in_a_transaction: list[bool] = []

    @verified_callback(client, lookup=shop.lookup, ledger=ledger)
    def payment_callback(request: HttpRequest, payment: paysdk.VerifiedPayment) -> JsonResponse:
        in_a_transaction.append(any(connections[alias].in_atomic_block for alias in connections))
        shop.fulfil(payment)
        return JsonResponse({"status": "ok"})

    @transaction.non_atomic_requests(using=using)
    @verified_callback(client, lookup=shop.lookup, ledger=ledger)
    def marked_too(request: HttpRequest, payment: paysdk.VerifiedPayment) -> JsonResponse:
        shop.fulfil(payment)
        return JsonResponse({"status": "ok"})

    serve(path("callback", payment_callback), path("marked", marked_too))
    browser = DjangoClient()
    with client:
        answers = [browser.get(f"/{view}?reference=order-1042") for view in ("callback", "marked")]
        mismatch = browser.get("/callback?reference=order-2001")

    assert [(r.status_code, json.loads(r.content)) for r in answers] == [
        (200, {"status": "ok"}),
        (200, {"status": "already_fulfilled"}),
    ]
    assert (mismatch.status_code, json.loads(mismatch.content)) == (409, {"status": "mismatch"})
    assert (shop.fulfilled, shop.deliveries, in_a_transaction) == (["order-1042"], 1, [False])
    states = dict(Fulfilment.objects.using(using).values_list("reference", "state"))
    assert states == {"order-1042": "fulfilled", "order-2001": "refused"}


@pytest.mark.parametrize("answer", VIEW_ANSWERS, ids=answer_ids())
def test_the_views_answer_is_recorded_in_the_apps_database_by_the_fulfilment_rule(
    using: str, callback_sandbox: Sandbox, shop: Shop, answer: ViewAnswer
) -> None:
    """Through Django's test client: a 4xx is recorded refused with its reason, a 5xx leaves the
    payment released for the retry, a success fulfils it; a mismatched payment is refused."""
    ledger = DjangoLedger(using)
    views = Views(answer)
    client = paysdk.Client(
        secret_key=callback_sandbox.secret_key, base_url=callback_sandbox.base_url
    )

    @verified_callback(client, lookup=shop.lookup, ledger=ledger)
    def payment_callback(request: HttpRequest, payment: paysdk.VerifiedPayment) -> HttpResponse:
        given = views.next()
        return HttpResponse(given.content, status=given.status_code)

    serve(path("callback", payment_callback))
    browser = DjangoClient()

    def deliver() -> tuple[int, bytes]:
        response = browser.get(f"/callback?reference={REFERENCE}")
        return response.status_code, response.content

    with client:
        check_the_rule(answer, views, deliver, lambda: ledger.row(REFERENCE))
        mismatch = browser.get("/callback?reference=order-2001")
    assert (mismatch.status_code, json.loads(mismatch.content)) == (409, {"status": "mismatch"})
    refused = Fulfilment.objects.using(using).get(reference="order-2001")
    assert refused.state == "refused"
    assert refused.reason is not None and "amount" in refused.reason


def test_its_timeouts_last_only_for_its_own_transactions(using: str) -> None:
    """The ledger's lock wait bounds its transactions; Django's connection keeps its own."""
    setting = (
        "PRAGMA busy_timeout" if connections[using].vendor == "sqlite" else "SHOW lock_timeout"
    )

    def current() -> object:
        with connections[using].cursor() as cursor:
            cursor.execute(setting)
            return cursor.fetchone()[0]

    djangos = current()
    seen: list[object] = []
    DjangoLedger(using, timeout=7).fulfil_once(paid(), lambda payment: seen.append(current()))
    assert seen == [djangos]  # the action runs on Django's connection as Django set it
    assert current() == djangos
    assert djangos in (5000, "0")  # sqlite3's default busy timeout; PostgreSQL's: none


def test_a_connection_the_server_dropped_while_idle_is_replaced_not_a_failed_claim(
    django_postgres: str,
) -> None:
    """Django keeps its connection between calls (a worker, a command, ``CONN_MAX_AGE``): one the
    server dropped meanwhile (a restart, a failover, ``idle_session_timeout``) is closed and a new
    one opened for the claim, as the ledger's own connections are, rather than failing the payment
    until the next call."""
    Fulfilment.objects.using(django_postgres).all().delete()
    ledger = DjangoLedger(django_postgres)
    assert ledger.fulfil_once(paid("order-1"), lambda payment: None).fulfilled_now
    dropped = connections[django_postgres].connection
    assert dropped is not None
    with psycopg.connect(url_of(django_postgres), autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (dropped.info.backend_pid,))
    assert ledger.fulfil_once(paid("order-2"), lambda payment: "shipped").value == "shipped"
    assert connections[django_postgres].connection is not dropped


def test_a_lock_wait_the_databases_options_cut_is_not_said_to_be_the_ledgers(
    django_postgres: str,
) -> None:
    """``OPTIONS["options"]`` setting ``lock_timeout`` wins over the ledger's: a wait it cut is
    reported as that setting's, not as the ledger's 30 s."""
    from tests.support.postgres import an_uncommitted_claim

    Fulfilment.objects.using(django_postgres).all().delete()
    given = {"OPTIONS": {"options": "-c lock_timeout=200"}}
    connections.settings["impatient"] = {**connections.settings[django_postgres], **given}
    try:
        with (
            an_uncommitted_claim(url_of(django_postgres)),
            pytest.raises(LedgerError) as raised,
        ):
            DjangoLedger("impatient", timeout=30).fulfil_once(paid(), lambda payment: None)
    finally:
        connections["impatient"].close()
        del connections.settings["impatient"]
    message = str(raised.value)
    assert "than the lock_timeout its connection's options set: canceling statement" in message
    assert "30s" not in message


def test_a_postgresql_server_that_is_down_is_named_in_the_ledger_error() -> None:
    """psycopg's own connection error (``psycopg.OperationalError``, not one of
    ``psycopg.errors``) reads as the PostgreSQL ledger's, as on the other ledgers."""
    settings = postgres_settings(f"postgresql://paysdk@127.0.0.1:{unused_port()}/shop")
    connections.settings["down"] = {**connections.settings["postgres"], **settings}
    try:
        with pytest.raises(LedgerError, match=r"^the PostgreSQL ledger failed: .*'down'"):
            DjangoLedger("down").fulfil_once(paid(), lambda payment: None)
    finally:
        connections["down"].close()
        del connections.settings["down"]


def test_the_app_loads_with_no_warning_of_paysdk_on_the_installed_django() -> None:
    """A merchant's project on Django's newest release loads paysdk's app without a deprecation
    warning of paysdk's (Django 6.1 renamed the placeholder hook the ledger's field defines)."""
    setup = (
        "import django; from django.conf import settings; "
        "settings.configure(INSTALLED_APPS=['paysdk.integrations.django']); django.setup()"
    )
    warned = "error::Warning:paysdk.integrations.django.models"
    done = subprocess.run(
        [sys.executable, "-W", warned, "-c", setup],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert (done.returncode, done.stderr) == (0, "")

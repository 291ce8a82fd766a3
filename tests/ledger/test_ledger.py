"""The fulfilment ledger's behaviour, on SQLite and on a real PostgreSQL server, sync and async."""

from __future__ import annotations

import contextlib
import datetime as dt
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Coroutine, Iterator
from typing import Any

import pytest

import paysdk
from paysdk.ledger import (
    AsyncLedger,
    FulfilResult,
    Ledger,
    LedgerError,
    Outcome,
    UnverifiedPaymentError,
    _checks,
    _schema,
    _statements,
)
from tests.support.either_ledger import EitherLedger, MakeLedger, paid
from tests.support.ledger_worker import abandon_claim

pytestmark = pytest.mark.anyio


async def test_fulfils_once_and_records_what_was_paid(make_ledger: MakeLedger) -> None:
    ledger = make_ledger()
    shipped: list[paysdk.VerifiedPayment] = []
    first = await ledger.fulfil_once(paid(amount=2500, currency="NGN"), shipped.append)
    again = await ledger.fulfil_once(paid(amount=2500, currency="NGN"), shipped.append)

    assert (first.outcome, first.fulfilled_now) == (Outcome.FULFILLED, True)
    assert (again.outcome, again.already_fulfilled) == (Outcome.ALREADY_FULFILLED, True)
    assert [p.reference for p in shipped] == ["order-1"]
    assert again.row is not None
    assert (again.row.amount, again.row.currency, again.row.attempts) == (2500, "NGN", 1)
    assert again.row.fulfilled_at is not None


async def test_returns_what_the_action_returned(make_ledger: MakeLedger) -> None:
    result = await make_ledger().fulfil_once(paid(), lambda payment: f"shipped {payment.amount}")
    assert result.value == "shipped 2500"


async def test_an_action_that_raises_records_nothing_and_can_be_retried(
    make_ledger: MakeLedger,
) -> None:
    ledger = make_ledger()

    def broken(payment: paysdk.VerifiedPayment) -> None:
        raise RuntimeError("warehouse offline")

    with pytest.raises(RuntimeError, match="warehouse offline"):
        await ledger.fulfil_once(paid(), broken)
    row = await ledger.row("order-1")
    assert row is not None
    assert (row.state, row.fulfilled, row._claim_token, row.fulfilled_at) == (
        "released",
        False,
        None,
        None,
    )

    retried = await ledger.fulfil_once(paid(), lambda payment: "ok")
    assert retried.fulfilled_now
    row = await ledger.row("order-1")
    assert row is not None
    assert (row.state, row.attempts) == ("fulfilled", 2)


@pytest.mark.parametrize(
    "said",
    ["no address for Ada\x00", "cannot read /srv/orders/\udc9b.json"],
    ids=["nul", "surrogate"],
)
async def test_an_action_whose_error_no_database_can_store_is_released_and_raised_as_is(
    make_ledger: MakeLedger, said: str
) -> None:
    """An action's error may quote a customer's text (a NUL, which PostgreSQL's text refuses)
    or a file name Python read as lone surrogates (which no UTF-8 column holds): its claim is
    released all the same, for the next delivery to retry, and the action's error is raised."""
    ledger = make_ledger()

    def broken(payment: paysdk.VerifiedPayment) -> None:
        raise RuntimeError(said)

    with pytest.raises(RuntimeError) as caught:
        await ledger.fulfil_once(paid(), broken)
    assert str(caught.value) == said
    row = await ledger.row("order-1")
    assert row is not None
    assert (row.state, row._claim_token) == ("released", None)
    assert (await ledger.fulfil_once(paid(), lambda payment: "ok")).fulfilled_now


async def test_a_reference_no_database_holds_has_no_row_on_every_database(
    make_ledger: MakeLedger,
) -> None:
    """A reference holding a NUL (which PostgreSQL's text refuses) or a lone surrogate (which
    no UTF-8 encodes) can have no row: ``row`` says so, as for any reference without one,
    rather than raising a LedgerError (PostgreSQL) or a bare UnicodeEncodeError (SQLite)."""
    ledger = make_ledger()
    await ledger.fulfil_once(paid("order-1"), lambda payment: None)
    for reference in ("order-\x00-1", "order-\udc9b", "\x00"):
        assert await ledger.row(reference) is None
    row = await ledger.row("order-1")
    assert row is not None and row.state == "fulfilled"


async def test_a_live_claim_is_in_progress_elsewhere(make_ledger: MakeLedger) -> None:
    worker, other = make_ledger(), make_ledger()
    seen: list[FulfilResult[Any]] = []

    def slow_action(payment: paysdk.VerifiedPayment) -> None:
        # While this worker holds the claim, the other sees it in progress (not fulfilled).
        seen.append(_run_sync(other, payment))

    if isinstance(worker.ledger, AsyncLedger):
        # An async action cannot block on the other ledger: check from inside, awaited.
        async def action(payment: paysdk.VerifiedPayment) -> None:
            seen.append(await other.fulfil_once(payment, lambda p: "twice"))

        await worker.ledger.fulfil_once(paid(), action)
    else:
        await worker.fulfil_once(paid(), slow_action)

    assert [r.outcome for r in seen] == [Outcome.IN_PROGRESS]
    assert seen[0].row is not None
    assert seen[0].row.state == "claimed"
    assert seen[0].row.lease_expires_at is not None


def _run_sync(ledger: EitherLedger, payment: paysdk.VerifiedPayment) -> FulfilResult[Any]:
    assert isinstance(ledger.ledger, Ledger)
    return ledger.ledger.fulfil_once(payment, lambda p: "twice")


async def test_a_claim_whose_lease_ran_out_is_held_as_unknown_and_the_late_worker_records_it(
    make_ledger: MakeLedger,
) -> None:
    import time

    import anyio

    # Leases run on the database's clock: this one really expires, a short while in.
    late, other, third = (make_ledger(lease=0.3) for _ in range(3))
    seen: list[FulfilResult[Any]] = []

    def stuck(payment: paysdk.VerifiedPayment) -> str:
        time.sleep(0.5)  # the worker hangs past its lease: whether it shipped is unknown...
        seen.append(_sync_or_fail(other, payment))  # ...so nobody else runs the action
        return "shipped late"

    if isinstance(late.ledger, AsyncLedger):

        async def stuck_async(payment: paysdk.VerifiedPayment) -> str:
            await anyio.sleep(0.5)
            seen.append(await other.fulfil_once(payment, lambda p: "rescued"))
            return "shipped late"

        result = await late.ledger.fulfil_once(paid(), stuck_async)
    else:
        result = await late.fulfil_once(paid(), stuck)

    assert [r.outcome for r in seen] == [Outcome.UNKNOWN]
    assert seen[0].row is not None
    assert seen[0].row.state == "unknown"
    assert (result.outcome, result.value) == (Outcome.FULFILLED, "shipped late")  # recorded
    again = await third.fulfil_once(paid(), lambda p: "twice")
    assert again.outcome is Outcome.ALREADY_FULFILLED
    row = await third.row("order-1")
    assert row is not None
    assert (row.state, row.attempts) == ("fulfilled", 1)


async def test_a_person_resolves_an_unknown_outcome_either_way(ledger_url: str) -> None:
    import anyio

    shipped: list[paysdk.VerifiedPayment] = []
    for reference in ("order-1", "order-2"):
        abandon_claim(ledger_url, reference, lease=0.2)
    await anyio.sleep(0.4)  # both leases run out, unrecorded
    async with AsyncLedger(ledger_url) as ledger:
        assert (await ledger.fulfil_once(paid("order-1"), shipped.append)).unknown

        ran = await ledger.resolve("order-1", ran=True)  # the warehouse says it shipped
        assert (ran.state, ran.fulfilled) == ("fulfilled", True)
        with pytest.raises(LedgerError, match="no claim of unknown outcome"):
            await ledger.resolve("order-1", ran=False)
        assert (await ledger.fulfil_once(paid("order-1"), shipped.append)).already_fulfilled
    with Ledger(ledger_url) as sync_ledger:
        released = sync_ledger.resolve("order-2", ran=False)  # it did not ship: run it
        assert released.state == "released"
        assert sync_ledger.fulfil_once(paid("order-2"), shipped.append).fulfilled_now
        with pytest.raises(LedgerError, match="no row"):
            sync_ledger.resolve("order-3", ran=True)
    assert [p.reference for p in shipped] == ["order-2"]


def _sync_or_fail(ledger: EitherLedger, payment: paysdk.VerifiedPayment) -> FulfilResult[Any]:
    assert isinstance(ledger.ledger, Ledger)
    return ledger.ledger.fulfil_once(payment, lambda p: "rescued")


@pytest.mark.parametrize(
    "payment",
    [
        "order-1",
        {"reference": "order-1", "amount": 2500, "currency": "NGN", "success": True},
        paysdk.ListedPayment(
            id="x", reference="order-1", amount=2500, currency="NGN", status="COMPLETED"
        ),
    ],
    ids=["reference", "mapping", "listed-payment"],
)
async def test_only_a_verified_payment_can_be_fulfilled(
    make_ledger: MakeLedger, payment: object
) -> None:
    ledger = make_ledger()
    shipped: list[paysdk.VerifiedPayment] = []
    with pytest.raises(UnverifiedPaymentError, match="VerifiedPayment"):
        await ledger.fulfil_once(payment, shipped.append)
    assert shipped == []
    assert await ledger.row("order-1") is None


async def test_a_failed_payment_is_never_fulfilled(make_ledger: MakeLedger) -> None:
    ledger = make_ledger()
    shipped: list[paysdk.VerifiedPayment] = []
    failed = paid().model_copy(update={"success": False})
    with pytest.raises(paysdk.PaymentFailedError):
        await ledger.fulfil_once(failed, shipped.append)
    assert shipped == []
    assert await ledger.row("order-1") is None


async def test_without_create_table_the_merchants_migration_owns_the_table(
    make_ledger: MakeLedger,
) -> None:
    unmigrated = make_ledger(create_table=False, table="shop_fulfilments")
    with pytest.raises(LedgerError, match=r"shop_fulfilments|no SQLite ledger"):
        await unmigrated.fulfil_once(paid(), lambda p: None)

    migrations = make_ledger(table="shop_fulfilments")  # creates it, as a migration would
    assert await migrations.row("order-1") is None
    assert (await unmigrated.fulfil_once(paid(), lambda p: None)).fulfilled_now


def test_the_ledger_url_decides_the_backend(tmp_path: Any) -> None:
    path = tmp_path / "orders.db"
    for url in (f"sqlite:///{path}", str(path), path):
        with Ledger(url) as ledger:
            assert repr(ledger).startswith("<paysdk.Ledger sqlite ")
    ledger = Ledger("postgresql://shop:s3cret-pw@db.internal:5432/shop")
    assert repr(ledger).startswith("<paysdk.Ledger postgresql ")
    assert "s3cret-pw" not in repr(ledger)
    for url in (
        "postgresql://db/shop?password=s3cret-pw",
        "postgresql://shop@db:5432/shop?sslmode=require&password=s3cret-pw",
        "postgres://shop:s3cret-pw@db1:5432,db2:5433/shop",
    ):
        shown = repr(Ledger(url))
        assert "s3cret-pw" not in shown
        assert "/shop" in shown
    assert "'postgresql://db.internal:5432/shop'" in repr(ledger)


def test_sqlite_file_names_the_file_a_url_opens(tmp_path: Any) -> None:
    path = tmp_path / "orders.db"
    for url in (f"sqlite:///{path}", str(path), path):
        assert paysdk.ledger.sqlite_file(url) == str(path)
    for url in ("postgresql://shop@db/shop", "sqlite://", ":memory:"):
        assert paysdk.ledger.sqlite_file(url) is None
    with pytest.raises(paysdk.ConfigurationError, match="unsupported ledger URL scheme"):
        paysdk.ledger.sqlite_file("mysql://shop@db/shop")


@pytest.mark.parametrize(
    ("url", "options", "message"),
    [
        ("mysql://shop@db/shop", {}, "unsupported ledger URL scheme"),
        ("\uff50ostgresql://shop:pw@db/shop", {}, r"scheme '\\uff50ostgresql': a scheme is ASCII"),
        ("\u017fqlite:///orders.db", {}, r"scheme '\\u017fqlite'"),  # long s: [a-z] under re.I
        ("sqlite://", {}, "in-memory"),
        ("sqlite://orders.db", {}, "names a host, not a file: a relative path takes three"),
        ("SQLite://orders.db", {}, "names a host, not a file"),
        (":memory:", {}, "in-memory"),
        ("file::memory:", {}, "SQLite URI"),  # in memory where SQLite reads URIs
        ("sqlite:///file::memory:?cache=shared", {}, "SQLite URI"),
        ("file:orders.db?mode=memory", {}, "SQLite URI"),
        ("orders.db", {"lease": 0}, "lease"),
        ("orders.db", {"lease": "5 minutes"}, "lease"),
        ("orders.db", {"lease": 2**70}, "lease"),  # more seconds than a timedelta holds
        ("orders.db", {"lease": float("inf")}, "lease"),
        ("orders.db", {"lease": 10**5000}, "lease .* not an integer of over 4,300 digits"),
        ("orders.db", {"lease": -(10**5000)}, "lease .* not an integer of over 4,300 digits"),
        ("orders.db", {"timeout": 10**5000}, "timeout .* not an integer of over 4,300 digits"),
        ("orders.db", {"table": 10**5000}, "table .* not an integer of over 4,300 digits"),
        ("orders.db", {"table": "orders; DROP TABLE orders"}, "table"),
        ("orders.db", {"table": "order"}, "reserves"),  # a syntax error in either database
        ("orders.db", {"table": "Transaction"}, "reserves"),  # SQLite's
        ("postgresql://shop@db/shop", {"table": "shop.user"}, "reserves"),  # PostgreSQL's
        ("orders.db", {"table": "sqlite_fulfilments"}, "reserves"),  # SQLite's own prefix
        ("orders.db", {"table": "temp.fulfilments"}, "temporary"),  # SQLite's, per connection
        ("orders.db", {"table": "TEMP.fulfilments"}, "temporary"),
        ("postgresql://shop@db/shop", {"table": "pg_temp.fulfilments"}, "temporary"),
        ("postgresql://shop@db/shop", {"table": "pg_temp_3.fulfilments"}, "temporary"),
        ("orders.db", {"timeout": -1}, "timeout"),
        ("orders.db", {"timeout": float("inf")}, "timeout"),
        ("postgresql://shop@db/shop", {"timeout": float("inf")}, "timeout"),
        ("postgresql://shop@db/shop", {"timeout": 40_000}, "timeout"),  # past TCP's keepalive
    ],
)
def test_bad_configuration_is_refused_before_any_database_is_touched(
    url: str, options: dict[str, Any], message: str
) -> None:
    with pytest.raises(paysdk.PaySDKError, match=message):
        Ledger(url, **options)


@pytest.mark.parametrize(
    "lease",
    [dt.timedelta.max, dt.timedelta(days=3_000_000), 8e13, 365_000 * 86_400 + 1],
    ids=["timedelta-max", "past-year-9999", "seconds-past-year-9999", "one-second-too-long"],
)
def test_a_lease_ending_past_what_python_reads_back_is_refused_up_front(
    ledger_url: str, lease: float | dt.timedelta
) -> None:
    """PostgreSQL stores a claim's end past the year 9999 (or fails to add such an interval),
    and every read of the row then fails: a LedgerError the service is told to retry forever."""
    with pytest.raises(paysdk.ConfigurationError, match="at most 1,000 years") as caught:
        Ledger(ledger_url, lease=lease)
    assert str(caught.value).endswith(f"not {lease!r}")


def test_the_longest_lease_claims_and_fulfils_on_either_database(ledger_url: str) -> None:
    payment = paysdk.VerifiedPayment(reference="order-1", amount=5, currency="NGN", success=True)
    with Ledger(ledger_url, lease=dt.timedelta(days=365_000)) as ledger:
        during: list[object] = []

        def fulfil(paid: paysdk.VerifiedPayment) -> None:
            row = ledger.row(paid.reference)
            assert row is not None and row.lease_expires_at is not None
            during.append(row.state)
            during.append(ledger.fulfil_once(paid, print).outcome)  # a second delivery

        assert ledger.fulfil_once(payment, fulfil).fulfilled_now
        row = ledger.row("order-1")
    assert during == ["claimed", Outcome.IN_PROGRESS]
    assert row is not None and row.state == "fulfilled"


def test_an_argument_of_thousands_of_digits_is_refused_in_a_short_message(tmp_path: Any) -> None:
    """Python will not write an int of over 4,300 digits as text, so a message quoting one
    would raise its own ``ValueError``; it says what the argument was instead."""
    payment = paysdk.VerifiedPayment(reference="order-1", amount=5, currency="NGN", success=True)
    huge = -(10**5000)
    with Ledger(tmp_path / "l.db") as ledger:
        calls: list[Callable[[], object]] = [
            lambda: ledger.rows_after("", limit=huge),
            lambda: ledger.refuse(payment, huge),  # type: ignore[arg-type]
            lambda: ledger.resolve("order-1", ran=huge),  # type: ignore[arg-type]
        ]
        for call in calls:
            with pytest.raises(paysdk.ConfigurationError, match="integer of over 4,300") as e:
                call()
            assert len(str(e.value)) < 200


def test_each_reserved_table_name_is_one_its_database_refuses(ledger_url: str) -> None:
    """The names refused for a database are those it refuses itself in the ledger's statements
    (a syntax error), and no name that works: a plain one makes the table."""
    backend = "sqlite" if ledger_url.startswith("sqlite") else "postgresql"
    dialect = _schema.SQLITE if backend == "sqlite" else _schema.POSTGRES
    with _raw_connection(ledger_url) as (execute, refused):
        accepted = []
        for word in [*sorted(_checks.RESERVED_WORDS[backend]), "shop_fulfilments"]:
            with contextlib.suppress(refused):
                for statement in dialect.schema(word):
                    execute(statement)
                execute(_statements.select_one(dialect, word).replace("?", "''"))
                accepted.append(word)
    assert accepted == ["shop_fulfilments"]


@contextlib.contextmanager
def _raw_connection(url: str) -> Iterator[tuple[Callable[[str], object], type[Exception]]]:
    """A statement runner on ``url``'s database, outside the ledger, each statement its own
    transaction; and the error its driver raises for a statement the database refuses."""
    if url.startswith("sqlite:///"):
        with contextlib.closing(sqlite3.connect(url.removeprefix("sqlite:///"))) as connection:
            connection.isolation_level = None
            yield connection.execute, sqlite3.Error
        return
    import psycopg

    with psycopg.connect(url, autocommit=True) as server:
        yield server.execute, psycopg.Error


async def test_rows_of_one_reference_string_is_refused_not_read_as_its_characters(
    tmp_path: Any,
) -> None:
    """``rows("order-1")`` would look up "o", "r", "d"... and answer ``{}``: a fulfilled payment
    read as one with no row. A string is refused, naming ``row``."""
    with Ledger(tmp_path / "l.db") as ledger:
        ledger.fulfil_once(paid(), lambda p: None)
        with pytest.raises(paysdk.ConfigurationError, match=r"row\("):
            ledger.rows("order-1")
        assert ledger.rows(["order-1"]).keys() == {"order-1"}
        with pytest.raises(paysdk.ConfigurationError, match=r"payment\.reference"):
            ledger.row(paid())
        with pytest.raises(paysdk.ConfigurationError, match=r"payment\.reference"):
            ledger.resolve(paid(), ran=True)
    async with AsyncLedger(tmp_path / "l.db") as async_ledger:
        with pytest.raises(paysdk.ConfigurationError, match=r"row\("):
            await async_ledger.rows("order-1")


async def test_rows_of_more_references_than_a_sqlite_statement_takes_are_all_read(
    make_ledger: MakeLedger,
) -> None:
    """SQLite refuses a statement of more parameters than SQLITE_MAX_VARIABLE_NUMBER (32,766 by
    default, 250,000 in Debian's build): ``rows`` of a list longer than that was a LedgerError
    there, ``too many SQL variables``, where PostgreSQL (one array parameter) read it."""
    ledger = make_ledger()
    for reference in ("order-1", "order-250000"):
        await ledger.fulfil_once(paid(reference), lambda payment: None)
    references = [f"order-{number}" for number in range(250_001)]
    assert (await ledger.rows(references)).keys() == {"order-1", "order-250000"}


def test_postgres_without_psycopg_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)
    with pytest.raises(paysdk.ConfigurationError, match=r"paysdk\[postgres\]"):
        Ledger("postgresql://shop@localhost/shop")


def test_an_async_action_on_the_sync_ledger_is_refused(tmp_path: Any) -> None:
    async def action(payment: paysdk.VerifiedPayment) -> None: ...

    with Ledger(tmp_path / "l.db") as ledger, pytest.raises(paysdk.ConfigurationError, match="As"):
        ledger.fulfil_once(paid(), action)


def test_an_unreachable_database_is_a_ledger_error(tmp_path: Any) -> None:
    with Ledger(tmp_path / "no-dir" / "l.db") as ledger, pytest.raises(LedgerError, match="SQL"):
        ledger.fulfil_once(paid(), print)
    with (
        Ledger("postgresql://nobody@127.0.0.1:1/none", timeout=2) as ledger,
        pytest.raises(LedgerError, match="PostgreSQL"),
    ):
        ledger.fulfil_once(paid(), print)


def test_import_paysdk_loads_no_database_driver() -> None:
    code = (
        "import sys, paysdk; "
        "print(sorted(m for m in ('sqlite3', 'psycopg', 'paysdk.ledger') if m in sys.modules)); "
        "paysdk.Ledger; print('paysdk.ledger' in sys.modules, 'psycopg' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[:2] == ["[]", "True False"]


def test_when_the_release_fails_too_the_actions_own_error_is_raised(tmp_path: Any) -> None:
    import sqlite3

    with Ledger(tmp_path / "l.db", timeout=0.1, lease=60) as ledger:
        blocker = sqlite3.connect(tmp_path / "l.db", isolation_level=None)

        def fails_while_the_database_is_locked(payment: paysdk.VerifiedPayment) -> None:
            blocker.execute("BEGIN EXCLUSIVE")  # another process holds the write lock
            raise RuntimeError("warehouse offline") from ConnectionError("warehouse API down")

        with pytest.raises(RuntimeError, match="warehouse offline") as raised:
            ledger.fulfil_once(paid(), fails_while_the_database_is_locked)
        blocker.execute("ROLLBACK")
        blocker.close()
        assert isinstance(raised.value.__context__, LedgerError)
        assert isinstance(raised.value.__cause__, ConnectionError)  # the action's own, kept
        assert str(raised.value.__cause__) == "warehouse API down"
        row = ledger.row("order-1")
        assert row is not None
        assert row.state == "claimed"  # not fulfilled; free again once the lease ends


def test_an_action_returning_a_coroutine_on_the_sync_ledger_is_refused_and_released(
    ledger_url: str,
) -> None:
    shipped: list[paysdk.VerifiedPayment] = []

    def looks_sync(payment: paysdk.VerifiedPayment) -> Coroutine[Any, Any, None]:
        async def ship() -> None:
            shipped.append(payment)

        return ship()

    with Ledger(ledger_url) as ledger:
        with pytest.raises(paysdk.ConfigurationError, match="AsyncLedger"):
            ledger.fulfil_once(paid(), looks_sync)
        row = ledger.row("order-1")
        assert row is not None
        assert (row.state, row.fulfilled) == ("released", False)  # the next delivery retries
        assert shipped == []
        assert ledger.fulfil_once(paid(), lambda payment: "shipped").fulfilled_now


async def test_the_async_ledger_runs_a_plain_function_once(ledger_url: str) -> None:
    shipped: list[paysdk.VerifiedPayment] = []

    def ship(payment: paysdk.VerifiedPayment) -> str:
        shipped.append(payment)
        return "shipped"

    async with AsyncLedger(ledger_url) as ledger:
        first = await ledger.fulfil_once(paid(), ship)
        again = await ledger.fulfil_once(paid(), ship)
        row = await ledger.row("order-1")
    assert (first.outcome, first.value) == (Outcome.FULFILLED, "shipped")
    assert again.already_fulfilled
    assert len(shipped) == 1
    assert row is not None
    assert row.fulfilled


async def test_a_cancelled_call_leaves_no_transaction_open(tmp_path: Any) -> None:
    import sqlite3

    import anyio

    path = tmp_path / "l.db"
    async with AsyncLedger(path, timeout=5) as ledger:
        await ledger.rows(["order-0"])  # the table exists
        blocker = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        blocker.execute("BEGIN IMMEDIATE")  # another process writes: the claim waits for it

        async def unblock_soon() -> None:
            await anyio.sleep(0.5)
            blocker.execute("ROLLBACK")

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(unblock_soon)
            with anyio.move_on_after(0.2) as waiting:  # cancelled while it waits for the lock
                await ledger.fulfil_once(paid(), lambda payment: "shipped")
        blocker.close()
        assert waiting.cancelled_caught

        # a lock left behind by the cancelled call would fail this claim after the 1 s timeout
        async with AsyncLedger(path, timeout=1) as other:
            assert (await other.fulfil_once(paid("order-2"), lambda payment: "ok")).fulfilled_now
        assert await ledger.row("order-1") is None


@pytest.mark.parametrize("how", ["wait_for", "anyio"])
async def test_a_fulfilment_cancelled_at_any_moment_leaves_no_claim_held(
    ledger_url: str, how: str
) -> None:
    """Cancelled anywhere (asyncio's ``wait_for`` or an anyio scope, 0 to 10 ms in), a payment
    is unclaimed, released with its action not run, or fulfilled: never claimed by nobody, to
    read ``unknown`` once the lease ends."""
    import asyncio

    import anyio

    ran: set[str] = set()

    def ship(payment: paysdk.VerifiedPayment) -> str:
        ran.add(payment.reference)
        return "shipped"

    seen: dict[str, tuple[str | None, bool]] = {}
    async with AsyncLedger(ledger_url, timeout=5) as ledger:
        await ledger.create_table()
        for n in range(60):
            reference, within = f"order-{n}", (n % 30) / 3000
            with contextlib.suppress(asyncio.TimeoutError, TimeoutError):
                if how == "wait_for":
                    await asyncio.wait_for(ledger.fulfil_once(paid(reference), ship), within)
                else:
                    with anyio.fail_after(within):
                        await ledger.fulfil_once(paid(reference), ship)
            row = await ledger.row(reference)
            seen[reference] = (None if row is None else row.state, reference in ran)
    allowed = {(None, False), ("released", False), ("fulfilled", True)}
    assert {ref: state for ref, state in seen.items() if state not in allowed} == {}


@pytest.mark.parametrize("how", ["wait_for", "task.cancel"])
async def test_a_call_cancelled_by_asyncio_while_it_waits_for_the_lock_leaves_no_lock(
    tmp_path: Any, how: str
) -> None:
    """asyncio's own cancellation (``wait_for``, ``asyncio.timeout``, a task cancelled at
    shutdown) does not wait for the worker thread: the transaction it goes on to begin once the
    lock is free is still rolled back, not left holding the file's write lock."""
    import asyncio

    path = tmp_path / "l.db"
    async with AsyncLedger(path, timeout=5) as ledger:
        await ledger.rows(["order-0"])  # the table exists
        blocker = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        blocker.execute("BEGIN IMMEDIATE")  # another process writes: the claim waits for it
        asyncio.get_running_loop().call_later(0.5, blocker.execute, "ROLLBACK")
        claim = asyncio.ensure_future(ledger.fulfil_once(paid(), lambda payment: "shipped"))
        if how == "wait_for":
            with pytest.raises(asyncio.TimeoutError):  # cancelled while it waits for the lock
                await asyncio.wait_for(claim, 0.2)
        else:
            await asyncio.sleep(0.2)
            claim.cancel()
            with pytest.raises(asyncio.CancelledError):
                await claim
        await asyncio.sleep(0.5)  # the lock was freed: the worker thread's BEGIN went through
        blocker.close()

        # a lock left behind by the cancelled call would fail this claim after the 1 s timeout
        async with AsyncLedger(path, timeout=1) as other:
            assert (await other.fulfil_once(paid("order-2"), lambda payment: "ok")).fulfilled_now
        assert await ledger.row("order-1") is None
        assert (await ledger.fulfil_once(paid(), lambda payment: "shipped")).fulfilled_now


@pytest.mark.parametrize("ends", ["cancelled", "finished"])
async def test_an_action_under_a_cancelled_scope_is_released_or_recorded(
    ledger_url: str, ends: str
) -> None:
    """A cancel scope (anyio's, a framework's on a client's disconnect) cancelled during the
    action cancels each later await too: the release or record still happens."""
    import anyio

    async def ship(payment: paysdk.VerifiedPayment) -> str:
        scope.cancel()
        if ends == "cancelled":
            await anyio.sleep(5)  # cancelled here
        return "shipped"

    async with AsyncLedger(ledger_url, timeout=5) as ledger:
        await ledger.create_table()
        first = None
        with anyio.CancelScope() as scope:
            first = await ledger.fulfil_once(paid(), ship)
        # the action's cancellation propagates; a finished action's record is its result
        assert scope.cancelled_caught is (ends == "cancelled")
        assert (first is not None and first.fulfilled_now) is (ends == "finished")
        row = await ledger.row("order-1")
        again = await ledger.fulfil_once(paid(), lambda payment: "shipped again")
    assert row is not None
    if ends == "cancelled":
        assert row.state == "released"  # the next delivery runs it
        assert again.fulfilled_now
    else:
        assert row.state == "fulfilled"
        assert again.already_fulfilled


async def test_calls_cancelled_by_asyncio_as_they_give_back_a_connection_share_none(
    ledger_url: str,
) -> None:
    """``wait_for`` cancelling reads 0 to 4 ms in, some as their connection goes back to the
    pool: none goes back twice, so no two later calls share one (nor find it closed)."""
    import asyncio

    async with AsyncLedger(ledger_url, timeout=5) as ledger:
        await ledger.create_table()
        for n in range(400):
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(ledger.rows([f"order-{n}"]), (n % 40) / 10000)
        for n in range(50):
            together = (ledger.rows([f"order-{n}-{i}"]) for i in range(4))
            assert await asyncio.gather(*together) == [{}] * 4


async def test_postgres_calls_cancelled_by_asyncio_leave_no_connection_open(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``wait_for`` cancelling calls 0 to 3 ms in, as one begins its transaction too: each
    connection is closed or back in the ledger's pool, none dropped open (a ResourceWarning)."""
    import asyncio
    import gc

    from tests.support.postgres import fresh_database

    dropped: list[str] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda raised: dropped.append(repr(raised)))
    async with AsyncLedger(fresh_database(postgres_url), timeout=5) as ledger:
        await ledger.create_table()
        for n in range(600):
            call = ledger.fulfil_once(paid(f"order-{n}"), lambda payment: "shipped")
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(call, (n % 60) / 20000)
    gc.collect()
    assert dropped == []


@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_a_postgres_lock_wait_is_bounded_by_the_timeout(postgres_url: str, kind: str) -> None:
    import time

    import psycopg

    from tests.support.postgres import an_uncommitted_claim, fresh_database

    url = fresh_database(postgres_url)
    with Ledger(url) as setup:
        setup.create_table()
    with an_uncommitted_claim(url, "order-1"):
        started = time.monotonic()
        with pytest.raises(LedgerError, match=r"waited more than 1s for a lock") as raised:
            await _fulfil_with_timeout(kind, url, 1)
        assert time.monotonic() - started < 5
        assert isinstance(raised.value.__cause__, psycopg.errors.LockNotAvailable)


async def _fulfil_with_timeout(kind: str, url: str, timeout: float) -> None:
    if kind == "sync":
        with Ledger(url, timeout=timeout) as ledger:
            ledger.fulfil_once(paid(), lambda payment: "shipped")
    else:
        async with AsyncLedger(url, timeout=timeout) as async_ledger:
            await async_ledger.fulfil_once(paid(), lambda payment: "shipped")


async def test_when_the_release_fails_too_the_async_actions_own_error_is_raised(
    tmp_path: Any,
) -> None:
    import sqlite3

    async with AsyncLedger(tmp_path / "l.db", timeout=0.1, lease=60) as ledger:
        blocker = sqlite3.connect(tmp_path / "l.db", isolation_level=None)

        async def fails_while_the_database_is_locked(payment: paysdk.VerifiedPayment) -> None:
            blocker.execute("BEGIN EXCLUSIVE")
            raise RuntimeError("warehouse offline") from ConnectionError("warehouse API down")

        with pytest.raises(RuntimeError, match="warehouse offline") as raised:
            await ledger.fulfil_once(paid(), fails_while_the_database_is_locked)
        blocker.execute("ROLLBACK")
        blocker.close()
        assert isinstance(raised.value.__context__, LedgerError)
        assert isinstance(raised.value.__cause__, ConnectionError)
        row = await ledger.row("order-1")
        assert row is not None
        assert row.state == "claimed"


async def test_lookups_read_beside_a_writer_without_waiting_for_its_lock(tmp_path: Any) -> None:
    import sqlite3

    path = tmp_path / "l.db"
    with Ledger(path, timeout=0.2) as ledger:
        assert ledger.fulfil_once(paid(), lambda payment: "shipped").fulfilled_now
        writer = sqlite3.connect(path, isolation_level=None)
        writer.execute("BEGIN IMMEDIATE")  # another process is writing (WAL: readers go on)
        try:
            row = ledger.row("order-1")
            page = ledger.rows_after(state="fulfilled")
        finally:
            writer.execute("ROLLBACK")
            writer.close()
    assert row is not None
    assert row.fulfilled
    assert [r.reference for r in page] == ["order-1"]
    async with AsyncLedger(path, timeout=0.2, create_table=False) as async_ledger:
        writer = sqlite3.connect(path, isolation_level=None)
        writer.execute("BEGIN IMMEDIATE")
        try:
            assert (await async_ledger.rows(["order-1"])).keys() == {"order-1"}
        finally:
            writer.execute("ROLLBACK")
            writer.close()


def _indexed_columns(ledger_url: str, table: str) -> set[tuple[str, ...]]:
    """The columns of each index on ``table``, as the database itself reports them."""
    if ledger_url.startswith("sqlite:///"):
        with contextlib.closing(sqlite3.connect(ledger_url.removeprefix("sqlite:///"))) as db:
            names = [row[1] for row in db.execute(f"PRAGMA index_list({table})")]
            return {
                tuple(row[2] for row in db.execute(f"PRAGMA index_info({name})")) for name in names
            }
    import psycopg

    with psycopg.connect(ledger_url) as db:
        definitions = db.execute(
            "SELECT indexdef FROM pg_indexes WHERE tablename = %s", (table,)
        ).fetchall()
    return {tuple(d[0].rsplit("(", 1)[1].rstrip(")").split(", ")) for d in definitions}


@pytest.mark.parametrize("length", [30, 52, 63])
async def test_a_table_of_any_name_length_gets_its_key_fingerprint_indexes(
    make_ledger: MakeLedger, ledger_url: str, length: int
) -> None:
    """PostgreSQL cuts names at 63 characters: cut there, the index of a long table's name was
    named as the table itself, so never made, and every reconcile scanned the whole table."""
    table = "ledger_" + "x" * (length - len("ledger_"))
    ledger = make_ledger(table=table)
    await ledger.fulfil_once(paid("order-1"), lambda payment: None)
    keyed = {("account", "verified_by"), ("verified_by", "account")}
    assert keyed <= _indexed_columns(ledger_url, table)


@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_a_rows_timestamps_are_utc_whatever_the_sessions_time_zone(
    postgres_url: str, kind: str
) -> None:
    """A server or role whose ``TimeZone`` is local (initdb takes the host's): the rows still
    say when in UTC, as ``LedgerRow`` does on every database."""
    import datetime as dt

    from tests.support.postgres import fresh_database

    url = fresh_database(postgres_url) + "?options=-c%20TimeZone%3DAsia%2FTokyo"
    before = dt.datetime.now(dt.timezone.utc)
    if kind == "sync":
        with Ledger(url) as ledger:
            ledger.fulfil_once(paid(), lambda payment: None)
            row = ledger.row("order-1")
    else:
        async with AsyncLedger(url) as async_ledger:
            await async_ledger.fulfil_once(paid(), lambda payment: None)
            row = await async_ledger.row("order-1")
    assert row is not None and row.fulfilled_at is not None
    assert row.fulfilled_at.tzinfo is dt.timezone.utc
    assert before - dt.timedelta(minutes=1) < row.fulfilled_at < before + dt.timedelta(minutes=1)


@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_a_schema_put_before_the_tables_on_the_search_path_gets_no_empty_ledger(
    postgres_url: str, kind: str
) -> None:
    """The role's or database's ``search_path`` gains a schema ahead of the one holding the
    ledger's table (``ALTER ROLE shop SET search_path = shop, public``): the table is still
    found, and no empty one is created in the new schema, where it would hide every payment
    already fulfilled and a replayed callback would be fulfilled again."""
    import psycopg

    from tests.support.postgres import fresh_database

    url = fresh_database(postgres_url)
    ran: list[str] = []
    with Ledger(url) as earlier:
        assert earlier.fulfil_once(paid(), lambda payment: ran.append("first")).fulfilled_now
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute("CREATE SCHEMA shop")
        admin.execute(f"ALTER DATABASE {url.rsplit('/', 1)[1]} SET search_path = shop, public")
    later = EitherLedger((AsyncLedger if kind == "async" else Ledger)(url))
    try:
        again = await later.fulfil_once(paid(), lambda payment: ran.append("again"))
    finally:
        await later.close()
    assert again.already_fulfilled and ran == ["first"]
    with psycopg.connect(url) as database:
        tables = database.execute(
            "SELECT schemaname FROM pg_tables WHERE tablename = 'paysdk_fulfilments'"
        ).fetchall()
    assert tables == [("public",)]


@pytest.mark.parametrize("kind", ["sync", "async"])
@pytest.mark.parametrize("date_style", ["SQL,DMY", "German", "Postgres,MDY"])
async def test_a_rows_timestamps_are_read_whatever_the_sessions_date_style(
    postgres_url: str, kind: str, date_style: str
) -> None:
    """A server, database or role (or ``PGDATESTYLE``) whose ``DateStyle`` is not ISO writes
    timestamps in a form psycopg does not read: a payment delivered again is still found
    fulfilled, its row's times in UTC, and the action ran once."""
    import urllib.parse

    from tests.support.postgres import fresh_database

    options = urllib.parse.quote(f"-c DateStyle={date_style} -c TimeZone=Australia/Lord_Howe")
    url = f"{fresh_database(postgres_url)}?options={options}"
    before = dt.datetime.now(dt.timezone.utc)
    shipped: list[str] = []

    def ship(payment: paysdk.VerifiedPayment) -> None:
        shipped.append(payment.reference)

    if kind == "sync":
        with Ledger(url) as ledger:
            results = [ledger.fulfil_once(paid(), ship) for _ in range(2)]
            row = ledger.row("order-1")
    else:
        async with AsyncLedger(url) as async_ledger:
            results = [await async_ledger.fulfil_once(paid(), ship) for _ in range(2)]
            row = await async_ledger.row("order-1")
    assert [result.outcome for result in results] == [
        Outcome.FULFILLED,
        Outcome.ALREADY_FULFILLED,
    ]
    assert shipped == ["order-1"]
    assert row is not None and row.fulfilled_at is not None
    assert row.fulfilled_at.tzinfo is dt.timezone.utc
    assert before - dt.timedelta(minutes=1) < row.fulfilled_at < before + dt.timedelta(minutes=1)


@pytest.mark.parametrize("reference", ["order-\x00-1", "order-\udc9b", "\x00"])
async def test_resolving_a_reference_no_database_holds_finds_no_row_on_every_database(
    make_ledger: MakeLedger, reference: str
) -> None:
    """A reference holding a NUL or a lone surrogate (``paysdk ledger resolve`` of bytes that are
    not UTF-8) has no row, as ``row`` says: ``resolve`` raises the LedgerError of a reference
    without one, rather than a bare UnicodeEncodeError (SQLite) or the database's refusal."""
    ledger = make_ledger()
    await ledger.fulfil_once(paid("order-1"), lambda payment: None)
    with pytest.raises(LedgerError, match=r"no claim of unknown outcome.*\(its state: no row\)"):
        await ledger.resolve(reference, ran=True)
    row = await ledger.row("order-1")
    assert row is not None and row.state == "fulfilled"


def test_resolve_without_a_label_names_the_label_that_holds_its_reference(ledger_url: str) -> None:
    """``resolve`` of a reference whose label was left out, on a ledger whose payments are all
    under labels, names the label holding that reference, not merely the least label holding
    any: following the hint must find the row."""
    with Ledger(ledger_url) as ledger:
        ledger.fulfil_once(paid("order-9").issued_by("abuja-2", "a" * 16), lambda p: None)
        ledger.fulfil_once(paid("order-1").issued_by("lagos-1", "b" * 16), lambda p: None)
        with pytest.raises(LedgerError) as raised:
            ledger.resolve("order-1", ran=True)
    assert "account 'lagos-1' holds" in str(raised.value)
    assert "abuja-2" not in str(raised.value)

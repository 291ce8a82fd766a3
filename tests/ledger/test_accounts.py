"""One ledger, many merchant accounts: a fulfilment is one account's payment of one reference.

Each ledger (sync, async, on either engine) on SQLite and PostgreSQL: two accounts' payments of
the same reference are fulfilled apart, each once; unlabelled payments of two keys are refused
before any action; a table made before accounts is migrated on open, keeping every row.
"""

from __future__ import annotations

import concurrent.futures
import sqlite3
import threading
from pathlib import Path

import pytest

import paysdk
from paysdk.ledger import AsyncLedger, Ledger, LedgerError, Outcome
from paysdk.sandbox import Sandbox
from tests.support.either_ledger import MakeLedger, paid
from tests.support.postgres import fresh_database

pytestmark = pytest.mark.anyio


def of(account: str, issuer: str, reference: str = "order-1") -> paysdk.VerifiedPayment:
    """A payment as a client labelled ``account``, whose key's fingerprint is ``issuer``,
    verified it."""
    payment: paysdk.VerifiedPayment = paid(reference).issued_by(account, issuer)
    return payment


async def test_two_accounts_payments_of_one_reference_are_fulfilled_apart(
    make_ledger: MakeLedger,
) -> None:
    ledger = make_ledger()
    shipped: list[str] = []

    def ship(payment: paysdk.VerifiedPayment) -> None:
        shipped.append(f"{payment.account}/{payment.reference}")

    first = await ledger.fulfil_once(of("lagos-1", "key-a"), ship)
    second = await ledger.fulfil_once(of("abuja-2", "key-b"), ship)
    again = await ledger.fulfil_once(of("abuja-2", "key-b"), ship)
    assert (first.outcome, second.outcome, again.outcome) == (
        Outcome.FULFILLED,
        Outcome.FULFILLED,
        Outcome.ALREADY_FULFILLED,
    )
    assert shipped == ["lagos-1/order-1", "abuja-2/order-1"]
    for account in ("lagos-1", "abuja-2"):
        row = await ledger.row("order-1", account)
        assert row is not None and (row.account, row.state) == (account, "fulfilled")
    assert await ledger.row("order-1") is None  # the unlabelled account has none


@pytest.mark.parametrize("verified_by", ["lagos-1", ""])
async def test_a_payment_set_aside_under_another_account_than_its_own_is_refused(
    make_ledger: MakeLedger, verified_by: str
) -> None:
    """A payment names its account: ``account=`` naming another is the caller's mistake (a
    payment verified by the wrong client), refused before anything is written, rather than
    recorded under the payment's account while the account named keeps its row as it was."""
    ledger = make_ledger()
    payment = of(verified_by, "key-a")
    for set_aside in (ledger.refuse, ledger.ignore):
        with pytest.raises(paysdk.ConfigurationError, match="abuja-2") as refused:
            await set_aside(payment, "not this shop's order", account="abuja-2")
        assert "nothing was recorded" in str(refused.value)
    for account in (verified_by, "abuja-2"):
        assert await ledger.row("order-1", account) is None
    same = await ledger.refuse(payment, "no such order", account=verified_by)
    assert (same.account, same.state) == (verified_by, "refused")


async def test_unlabelled_payments_of_two_keys_are_refused_before_any_action(
    make_ledger: MakeLedger,
) -> None:
    ledger = make_ledger()
    shipped: list[paysdk.VerifiedPayment] = []
    assert (await ledger.fulfil_once(of("", "key-a"), shipped.append)).fulfilled_now
    assert (await ledger.fulfil_once(of("", "key-a", "order-2"), shipped.append)).fulfilled_now
    with pytest.raises(paysdk.ConfigurationError, match=r"account=.*nothing was run"):
        await ledger.fulfil_once(of("", "key-b", "order-3"), shipped.append)
    assert [payment.reference for payment in shipped] == ["order-1", "order-2"]
    assert await ledger.row("order-3") is None
    labelled = await ledger.fulfil_once(of("abuja-2", "key-b", "order-3"), shipped.append)
    assert labelled.fulfilled_now  # a label tells them apart


@pytest.mark.parametrize(
    ("first", "second"), [("lagos-1", "Lagos-1"), ("lagos-1", ""), ("", "lagos-1")]
)
async def test_one_key_under_a_second_label_is_refused_before_any_action(
    make_ledger: MakeLedger, first: str, second: str
) -> None:
    """One key's payments under a label typed in another case, left out or added: each payment
    would be fulfilled once a label, so its second label is refused (nothing run or recorded),
    for a payment the first shipped and for any other. Its own label still fulfils."""
    ledger = make_ledger()
    shipped: list[str] = []

    def ship(payment: paysdk.VerifiedPayment) -> None:
        shipped.append(f"{payment.account}/{payment.reference}")

    assert (await ledger.fulfil_once(of(first, "key-a"), ship)).fulfilled_now
    for reference in ("order-1", "order-2"):
        with pytest.raises(paysdk.ConfigurationError, match="nothing was run") as refused:
            await ledger.fulfil_once(of(second, "key-a", reference), ship)
        assert f"names {'account ' + repr(second) if second else 'no account'}" in str(
            refused.value
        )
        with pytest.raises(paysdk.ConfigurationError, match="to the letter"):
            await ledger.refuse(of(second, "key-a", reference), "no such order")
        assert await ledger.row(reference, second) is None
    assert (await ledger.fulfil_once(of(first, "key-a", "order-2"), ship)).fulfilled_now
    assert (await ledger.fulfil_once(of(second, "key-b", "order-1"), ship)).fulfilled_now
    assert shipped == [f"{first}/order-1", f"{first}/order-2", f"{second}/order-1"]


async def test_a_bare_reference_set_aside_under_a_label_in_another_case_is_refused(
    make_ledger: MakeLedger,
) -> None:
    """``refuse("order-2", account="Lagos-1")`` where only ``lagos-1`` holds payments: a label
    typed by hand in the wrong case would record the refusal where no client looks, so it is
    refused, naming the label to use. A label holding payments of its own is an account."""
    ledger = make_ledger()
    assert (await ledger.fulfil_once(of("lagos-1", "key-a"), lambda p: None)).fulfilled_now
    for set_aside in (ledger.refuse, ledger.ignore):
        for label in ("Lagos-1", "LAGOS-1"):
            with pytest.raises(paysdk.ConfigurationError, match="nothing was recorded") as refused:
                await set_aside("order-2", "out of stock", account=label)
            assert "'lagos-1'" in str(refused.value)
            assert await ledger.row("order-2", label) is None
    assert (await ledger.refuse("order-2", "out of stock", account="lagos-1")).state == "refused"
    assert (
        await ledger.fulfil_once(of("Lagos-1", "key-b", "order-3"), lambda p: None)
    ).fulfilled_now
    assert (await ledger.ignore("order-2", "a test", account="Lagos-1")).state == "ignored"


@pytest.mark.parametrize("table", ["labels", "own", "keyed"])
async def test_a_ledger_whose_table_is_named_as_a_word_of_its_checks_sets_aside_and_fulfils(
    make_ledger: MakeLedger, table: str
) -> None:
    """A table named ``labels`` (a platform's word for its accounts) or ``own``: the label
    checks' own names for what they read are never a table's, so its statements read the
    table, and a label in another case is still refused."""
    ledger = make_ledger(table=table)
    assert (await ledger.fulfil_once(of("lagos-1", "key-a"), lambda p: None)).fulfilled_now
    assert (await ledger.refuse("order-2", "out of stock", account="lagos-1")).state == "refused"
    with pytest.raises(paysdk.ConfigurationError, match="'lagos-1'"):
        await ledger.refuse("order-3", "out of stock", account="Lagos-1")
    with pytest.raises(paysdk.ConfigurationError, match="under account 'lagos-1'"):
        await ledger.fulfil_once(of("abuja-2", "key-a", "order-4"), lambda p: None)


TURKISH = "TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'tr-TR' LOCALE 'C.UTF-8'"
"""A database whose default collation is ICU's Turkish: its ``lower('I')`` is a dotless i."""


def test_a_label_in_another_case_is_refused_on_a_database_of_a_turkish_locale(
    postgres_url: str,
) -> None:
    """``paysdk ledger refuse --account LAGOS-I`` where ``lagos-i`` holds the payments, on a
    PostgreSQL database whose locale folds ``I`` to a dotless i: the label is ASCII, folded as
    ASCII, so it is refused as anywhere else rather than recorded where no client looks."""
    with Ledger(fresh_database(postgres_url, TURKISH)) as ledger:
        assert ledger.fulfil_once(of("lagos-i", "key-a"), lambda p: None).fulfilled_now
        for label in ("LAGOS-I", "Lagos-i"):
            with pytest.raises(paysdk.ConfigurationError, match="'lagos-i'"):
                ledger.refuse("order-2", "out of stock", account=label)
            assert ledger.row("order-2", account=label) is None


FIRST_PAYMENTS = {
    "two-unlabelled-keys": [("", "key-a", "order-1"), ("", "key-b", "order-2")],
    "one-key-two-labels": [("lagos-1", "key-a", "order-1"), ("Lagos-1", "key-a", "order-1")],
}


@pytest.mark.parametrize("case", FIRST_PAYMENTS)
def test_two_first_payments_at_once_that_would_split_a_key_are_never_both_fulfilled(
    ledger_url: str, case: str
) -> None:
    """Two workers, each on a ledger of its own, fulfil at the same moment the first payment of
    two accounts that cannot share a ledger (two unlabelled keys, or one key under two labels):
    one is fulfilled, the other refused, in every round. On PostgreSQL each claim's transaction
    sees only committed rows, so two such claims at once each found none of the other's."""
    race_first_payments(ledger_url, case)


@pytest.mark.parametrize("case", FIRST_PAYMENTS)
def test_two_first_payments_at_once_are_never_both_fulfilled_on_a_repeatable_read_server(
    postgres_url: str, case: str
) -> None:
    """The same race where the server's default isolation is REPEATABLE READ (a DBA's
    ``default_transaction_isolation``): a transaction's reads would keep the snapshot of its first
    statement, taken before the lock wait, and miss the row committed during it."""
    isolation = "?options=-c%20default_transaction_isolation%3Drepeatable%5C%20read"
    race_first_payments(fresh_database(postgres_url) + isolation, case)


def race_first_payments(url: str, case: str) -> None:
    """Ten rounds, each on a new table, of two threads fulfilling ``FIRST_PAYMENTS[case]`` at
    once, each on a ledger of its own: one fulfilled and one refused, every round."""
    payments = [of(*first) for first in FIRST_PAYMENTS[case]]

    def deliver(
        together: threading.Barrier, ledger: Ledger, payment: paysdk.VerifiedPayment
    ) -> str:
        together.wait()
        try:
            return ledger.fulfil_once(payment, lambda p: None).outcome.value
        except paysdk.ConfigurationError:
            return "refused"

    for round_ in range(10):
        table = f"round_{round_}"  # a table of its own: each round is the ledger's first use
        ledgers = [Ledger(url, table=table) for _ in payments]
        for ledger in ledgers:
            ledger.create_table()
        together = [threading.Barrier(len(payments))] * len(payments)
        with concurrent.futures.ThreadPoolExecutor(len(payments)) as pool:
            outcomes = sorted(pool.map(deliver, together, ledgers, payments))
        for ledger in ledgers:
            ledger.close()
        assert outcomes == ["fulfilled", "refused"], f"round {round_}"


async def test_retire_key_lets_a_rotated_key_fulfil_and_keeps_its_old_payments_fulfilled(
    make_ledger: MakeLedger,
) -> None:
    """Key A fulfils two unlabelled payments (and a labelled account one); its rotation to key B
    is refused until retire_key clears the two unlabelled fingerprints. Then B's payments are
    fulfilled, a replay of A's reference is already fulfilled (its action not run again), and B's
    fingerprint is the one held: A's is refused."""
    ledger = make_ledger()
    shipped: list[str] = []

    def ship(payment: paysdk.VerifiedPayment) -> None:
        shipped.append(f"{payment.account}/{payment.reference}")

    assert (await ledger.fulfil_once(of("", "key-a"), ship)).fulfilled_now
    assert (await ledger.fulfil_once(of("", "key-a", "order-2"), ship)).fulfilled_now
    assert (await ledger.fulfil_once(of("lagos-1", "key-c"), ship)).fulfilled_now
    with pytest.raises(paysdk.ConfigurationError, match=r"account=.*nothing was run"):
        await ledger.fulfil_once(of("", "key-b", "order-3"), ship)

    assert await ledger.retire_key() == 2  # the unlabelled rows alone
    assert (await ledger.fulfil_once(of("", "key-b", "order-3"), ship)).fulfilled_now
    replayed = await ledger.fulfil_once(of("", "key-b"), ship)
    assert replayed.outcome is Outcome.ALREADY_FULFILLED
    with pytest.raises(paysdk.ConfigurationError, match=r"account=.*nothing was run"):
        await ledger.fulfil_once(of("", "key-a", "order-4"), ship)
    assert shipped == ["/order-1", "/order-2", "lagos-1/order-1", "/order-3"]
    labelled = await ledger.row("order-1", "lagos-1")
    assert labelled is not None and labelled.state == "fulfilled"
    assert await ledger.retire_key() == 1  # order-3's, of key B
    assert await ledger.retire_key() == 0


def test_unlabelled_payments_of_two_keys_are_refused_across_ledgers_of_one_database(
    ledger_url: str,
) -> None:
    """Two ledgers on one database, as two processes hold them: the second refuses a key the
    first did not use, even for the reference the first fulfilled, before its action runs."""
    shipped: list[str] = []

    def ship(payment: paysdk.VerifiedPayment) -> None:
        shipped.append(payment.reference)

    with Ledger(ledger_url) as first, Ledger(ledger_url) as second:
        assert first.fulfil_once(of("", "key-a"), ship).fulfilled_now
        for reference in ("order-1", "order-2"):
            with pytest.raises(paysdk.ConfigurationError, match=r"account=.*nothing was run"):
                second.fulfil_once(of("", "key-b", reference), ship)
        assert second.row("order-2") is None  # the refused claim was rolled back
        with pytest.raises(paysdk.ConfigurationError, match=r"account="):
            second.refuse(of("", "key-b", "order-2"), "paid, but not for this order")
        assert second.row("order-2") is None  # nor is another key's refusal recorded
        assert second.fulfil_once(of("", "key-a", "order-2"), ship).fulfilled_now
        assert second.fulfil_once(of("abuja-2", "key-b"), ship).fulfilled_now
    with Ledger(ledger_url) as reopened, pytest.raises(paysdk.ConfigurationError):
        reopened.fulfil_once(of("", "key-b", "order-3"), ship)
    assert shipped == ["order-1", "order-2", "order-1"]


def test_a_new_key_refused_names_retire_key_before_a_label(ledger_url: str) -> None:
    """A sandbox started anew has a key of its own, as a rotated key is new: the refusal says to
    retire the old key (a label instead would start an account whose replays run again)."""
    with Ledger(ledger_url) as ledger:
        assert ledger.fulfil_once(of("", "key-a"), lambda p: None).fulfilled_now
        with pytest.raises(paysdk.ConfigurationError) as refused:
            ledger.fulfil_once(of("", "key-b", "order-2"), lambda p: None)
        said = str(refused.value)
        assert (
            "If the key is this account's new one (a rotated key, or a paysdk sandbox started "
            "anew, which has a key of its own), retire the old one: ledger.retire_key(), or "
            "`paysdk ledger retire-key`. If it is another account's, give each account's client "
            "a label"
        ) in said
        assert said.endswith("; nothing was run")
        assert ledger.retire_key() == 1
        assert ledger.fulfil_once(of("", "key-b", "order-2"), lambda p: None).fulfilled_now


OLD_TABLE = """CREATE TABLE paysdk_fulfilments (
    reference TEXT NOT NULL PRIMARY KEY, state TEXT NOT NULL, claim_token TEXT,
    attempts INTEGER NOT NULL, lease_expires_at {ts}, amount BIGINT NOT NULL,
    currency TEXT NOT NULL, claimed_at {ts} NOT NULL, fulfilled_at {ts}, last_error TEXT,
    reason TEXT)"""
"""The table as ledgers made it before accounts were part of its key."""

OLD_ROWS = [
    ("order-1", "fulfilled", "t1", 1, None, 2500, "NGN", "2026-11-01T10:00:00.000000Z",
     "2026-11-01T10:00:01.000000Z", None, None),
    ("order-2", "released", None, 2, None, 900, "USD", "2026-11-01T10:00:00.000000Z",
     None, "RuntimeError: down", None),
    ("order-3", "refused", None, 0, None, 100, "NGN", "2026-11-01T10:00:00.000000Z",
     None, None, "no such order"),
]  # fmt: skip


SQLITE_INSERT = "INSERT INTO paysdk_fulfilments VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
POSTGRES_INSERT = (
    "INSERT INTO paysdk_fulfilments VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
)


def make_old_table(url: str) -> None:
    """The old table, filled, on the database ``url`` names."""
    if url.startswith("sqlite:///"):
        with sqlite3.connect(url.removeprefix("sqlite:///")) as connection:
            connection.execute(OLD_TABLE.format(ts="TEXT"))
            connection.executemany(SQLITE_INSERT, OLD_ROWS)
        connection.close()
        return
    import psycopg

    with psycopg.connect(url, autocommit=True) as server:
        server.execute(OLD_TABLE.format(ts="TIMESTAMPTZ"))
        with server.cursor() as cursor:
            cursor.executemany(POSTGRES_INSERT, OLD_ROWS)


async def test_a_table_made_before_accounts_is_migrated_on_open_keeping_every_row(
    ledger_url: str,
) -> None:
    make_old_table(ledger_url)
    with Ledger(ledger_url) as ledger:
        rows = ledger.rows(["order-1", "order-2", "order-3"])
        assert {r.reference: (r.account, r.state, r.amount) for r in rows.values()} == {
            "order-1": ("", "fulfilled", 2500),
            "order-2": ("", "released", 900),
            "order-3": ("", "refused", 100),
        }
        shipped: list[paysdk.VerifiedPayment] = []
        assert ledger.fulfil_once(paid("order-1"), shipped.append).already_fulfilled
        assert ledger.fulfil_once(paid("order-2"), shipped.append).fulfilled_now
        assert ledger.fulfil_once(of("lagos-1", "k", "order-1"), shipped.append).fulfilled_now
        assert [payment.account for payment in shipped] == ["", "lagos-1"]
        before = ledger.rows_after(limit=10)
    with Ledger(ledger_url) as reopened:  # migrated once: the next opening changes nothing
        assert reopened.rows_after(limit=10) == before
        assert reopened.row("order-1", account="lagos-1") is not None


async def test_a_table_made_before_accounts_under_create_table_false_says_how_to_migrate(
    ledger_url: str,
) -> None:
    """A ledger made with ``create_table=False`` does not migrate the old table: its error says
    what will (``create_table()``, or the docs' steps), and ``create_table()`` does."""
    make_old_table(ledger_url)
    with Ledger(ledger_url, create_table=False) as ledger:
        for call in (
            lambda: ledger.fulfil_once(paid("order-4"), lambda payment: None),
            lambda: ledger.row("order-1"),
        ):
            with pytest.raises(LedgerError, match="account") as caught:
                call()
            assert "create_table()" in str(caught.value)
            assert "docs/fulfilment.md (The schema)" in str(caught.value)
        ledger.create_table()
        row = ledger.row("order-1")
        assert row is not None and row.state == "fulfilled"


def test_one_platform_client_and_one_ledger_fulfil_each_accounts_order_1042(
    tmp_path: Path,
) -> None:
    """docs/configuration.md's many-accounts pattern: with_options(secret_key=..., account=...)
    on one client; both accounts' order-1042 ship, each once."""
    shipped: list[tuple[str, str]] = []
    with (
        Sandbox() as lagos,
        Sandbox() as abuja,
        paysdk.Client(secret_key=lagos.secret_key, base_url=lagos.base_url) as platform,
        Ledger(tmp_path / "ledger.db") as ledger,
    ):
        accounts = {
            "lagos-1": platform.with_options(account="lagos-1"),
            "abuja-2": platform.with_options(
                secret_key=abuja.secret_key, base_url=abuja.base_url, account="abuja-2"
            ),
        }
        for _ in range(2):
            for client in accounts.values():
                payment = client.verify("order-1042")
                ledger.fulfil_once(payment, lambda p: shipped.append((p.account, p.reference)))
        unlabelled = platform.with_options(secret_key=abuja.secret_key, base_url=abuja.base_url)
        for client in (platform, unlabelled):  # each key's payments are under its label
            with pytest.raises(paysdk.ConfigurationError, match="account="):
                ledger.fulfil_once(client.verify("order-1042"), lambda p: None)
    assert shipped == [("lagos-1", "order-1042"), ("abuja-2", "order-1042")]


@pytest.mark.parametrize("label", ["sk_live 7f3a", "lagos/1", "é", "a" * 64, 7, "-lagos"])
def test_an_account_label_is_a_short_ascii_name_refused_without_quoting_it(label: object) -> None:
    with pytest.raises(paysdk.ConfigurationError, match="never pass a key") as refused:
        paysdk.Client(secret_key="sk_test_x", base_url="http://127.0.0.1:1", account=label)  # type: ignore[arg-type]
    assert str(label) not in str(refused.value)
    client = paysdk.Client(secret_key="sk_test_x", base_url="http://127.0.0.1:1")
    with client, pytest.raises(paysdk.ConfigurationError, match="never pass a key"):
        client.with_options(account=label)  # type: ignore[arg-type]
    assert client.with_options(account="lagos-1").account == "lagos-1"
    assert client.account == ""


def test_an_empty_account_label_is_no_label_and_takes_a_copys_label_off() -> None:
    """``account=""`` is the unlabelled account, as documented; ``with_options`` without
    ``account`` keeps the label, ``account=""`` takes it off."""
    unlabelled = paysdk.Client(secret_key="sk_test_x", base_url="http://127.0.0.1:1", account="")
    labelled = unlabelled.with_options(account="lagos-1")
    with unlabelled:
        assert (unlabelled.account, labelled.account) == ("", "lagos-1")
        assert labelled.with_options().account == "lagos-1"
        assert labelled.with_options(account="").account == ""


def test_one_key_is_one_account_however_its_base_url_is_spelled(tmp_path: Path) -> None:
    """The web app and the cron job name the service each their own way (an upper-case scheme,
    a trailing slash): their unlabelled payments are one account's, never another key's."""
    with (
        Sandbox() as service,
        paysdk.Client(secret_key=service.secret_key, base_url=service.base_url) as job,
        paysdk.Client(
            secret_key=service.secret_key, base_url=service.base_url.upper() + "/"
        ) as web,
        Ledger(tmp_path / "ledger.db") as ledger,
    ):
        assert web.verify("order-1042").verified_by == job.verify("order-1042").verified_by
        assert ledger.fulfil_once(web.verify("order-1042"), lambda p: None).fulfilled_now
        service.add_payment("order-2", amount=500)
        assert ledger.fulfil_once(job.verify("order-2"), lambda p: None).fulfilled_now
        assert ledger.reconcile(job).fulfilled_ok == 2


def test_labelling_a_client_after_moving_its_unlabelled_rows_keeps_replays_fulfilled(
    tmp_path: Path,
) -> None:
    """docs/fulfilment.md: labelling a client whose payments are unlabelled is refused until its
    rows move under the label in one statement; then a replayed callback is already fulfilled,
    and reconcile of the labelled client finds its rows."""
    path = tmp_path / "ledger.db"
    with (
        Sandbox() as service,
        paysdk.Client(secret_key=service.secret_key, base_url=service.base_url) as unlabelled,
        Ledger(path) as ledger,
    ):
        labelled = unlabelled.with_options(account="lagos-1")
        assert ledger.fulfil_once(unlabelled.verify("order-1042"), lambda p: None).fulfilled_now
        with pytest.raises(paysdk.ConfigurationError, match="under no account"):
            ledger.fulfil_once(labelled.verify("order-1042"), lambda p: None)
        with sqlite3.connect(path) as moving:
            moving.execute("UPDATE paysdk_fulfilments SET account = 'lagos-1' WHERE account = ''")
        moving.close()
        replayed = ledger.fulfil_once(labelled.verify("order-1042"), lambda p: None)
        assert replayed.already_fulfilled
        assert ledger.reconcile(labelled).fulfilled_ok == 1


def test_reconcile_of_an_unlabelled_client_is_refused_where_another_keys_rows_are(
    tmp_path: Path,
) -> None:
    """Two accounts' clients, neither labelled, on one ledger: the first fulfils its order-1042.
    Reconciling the second would read the first's row as its own and report its unfulfilled
    order-1042 as fulfilled; it is refused before anything is listed, as its fulfil_once is."""
    with (
        Sandbox() as lagos,
        Sandbox() as abuja,
        paysdk.Client(secret_key=lagos.secret_key, base_url=lagos.base_url) as first,
        paysdk.Client(secret_key=abuja.secret_key, base_url=abuja.base_url) as second,
        Ledger(tmp_path / "ledger.db") as ledger,
    ):
        assert ledger.fulfil_once(first.verify("order-1042"), lambda p: None).fulfilled_now
        abuja.clear_requests()
        with pytest.raises(paysdk.ConfigurationError, match="account="):
            ledger.reconcile(second)
        assert abuja.requests == []
        assert ledger.reconcile(first).fulfilled_ok == 1
        labelled = ledger.reconcile(second.with_options(account="abuja-2"))
        assert labelled.fulfilled_ok == 0  # its order-1042 is missed, as it is


@pytest.mark.parametrize(
    ("web", "cron", "named"),
    [
        ("lagos-1", "", "account 'lagos-1'"),
        ("", "lagos-1", "no account"),
        ("lagos-1", "Lagos-1", "account 'lagos-1'"),
    ],
)
def test_reconcile_under_another_label_than_its_keys_payments_is_refused_before_listing(
    ledger_url: str, web: str, cron: str, named: str
) -> None:
    """One merchant, one key: the callback view's client labelled ``web``, the reconcile job's
    ``cron`` (a label left out, added, or typed in another case). Reconcile would find none of
    the view's rows, report each payment missed and, with ``fulfil=``, ship it again: it is
    refused before anything is listed."""
    shipped: list[str] = []
    orders = {"order-1042": {"amount": 2500000, "currency": "NGN"}}
    with (
        Sandbox() as service,
        paysdk.Client(secret_key=service.secret_key, base_url=service.base_url) as platform,
        Ledger(ledger_url) as ledger,
    ):
        view, job = platform.with_options(account=web), platform.with_options(account=cron)
        paid_now = ledger.fulfil_once(view.verify("order-1042"), lambda p: shipped.append("view"))
        assert paid_now.fulfilled_now
        service.clear_requests()
        with pytest.raises(paysdk.ConfigurationError, match="nothing was listed") as refused:
            ledger.reconcile(job, fulfil=lambda p: shipped.append("job"), lookup=orders.get)
        assert named in str(refused.value)
        assert (service.requests, shipped) == ([], ["view"])
        assert ledger.reconcile(view, fulfil=lambda p: None, lookup=orders.get).fulfilled_ok == 1


def test_reconcile_of_a_rotated_key_is_refused_until_the_old_key_is_retired(
    tmp_path: Path,
) -> None:
    """One account whose key changed (another sandbox: another fingerprint): reconcile of the new
    key is refused until retire_key, then reads the old key's rows as its own."""
    with (
        Sandbox() as old,
        Sandbox() as new,
        paysdk.Client(secret_key=old.secret_key, base_url=old.base_url) as before,
        paysdk.Client(secret_key=new.secret_key, base_url=new.base_url) as after,
        Ledger(tmp_path / "ledger.db") as ledger,
    ):
        assert ledger.fulfil_once(before.verify("order-1042"), lambda p: None).fulfilled_now
        with pytest.raises(paysdk.ConfigurationError, match="account="):
            ledger.reconcile(after)
        assert ledger.retire_key() == 1
        assert ledger.reconcile(after).fulfilled_ok == 1


async def test_async_reconcile_of_an_unlabelled_client_is_refused_where_another_keys_rows_are(
    tmp_path: Path,
) -> None:
    with Sandbox() as lagos, Sandbox() as abuja:
        async with (
            paysdk.AsyncClient(secret_key=lagos.secret_key, base_url=lagos.base_url) as first,
            paysdk.AsyncClient(secret_key=abuja.secret_key, base_url=abuja.base_url) as second,
            AsyncLedger(tmp_path / "ledger.db") as ledger,
        ):
            payment = await first.verify("order-1042")
            assert (await ledger.fulfil_once(payment, lambda p: None)).fulfilled_now
            with pytest.raises(paysdk.ConfigurationError, match="account="):
                await ledger.reconcile(second)
            assert (await ledger.reconcile(first)).fulfilled_ok == 1

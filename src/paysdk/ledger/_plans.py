"""The ledger's decisions, I/O-free: each operation is a plan of steps (``_steps``) for its one
driver (``_async/run.py``); a failed step's LedgerError is thrown in for the plan to judge."""

from __future__ import annotations

import contextlib
import datetime as dt
import secrets
import time
from collections.abc import Callable, Sequence
from typing import Any, Literal

from .._errors import ConfigurationError
from .._errors.quoting import quoted
from .._models.verified import VerifiedPayment
from . import _sql
from ._checks import storable, stored_as_is
from ._errors import LeaseLostError, LedgerError, UnrecordedFulfilmentError
from ._rows import FOUND_COLUMNS, ROW_COLUMNS, FulfilResult, LedgerRow, Outcome, checked
from ._steps import Act, Acted, Begin, Commit, Found, LedgerPlan, Query, Rows, Sleep


def ensure_schema(dialect: _sql.Dialect, table: str) -> LedgerPlan[None]:
    """Create the table if it does not exist; migrate one made before accounts were part of a
    fulfilment's key, in the same transaction, keeping every row (as the account ``''``)."""
    yield Begin()
    *lock, create = dialect.schema(table)
    for statement in lock:
        yield Query(statement)
    visible = dialect.visible()
    seen: Rows | None = None if visible is None else (yield Query(visible, (table,)))
    if seen is None or not seen.rows[0][0]:  # never a table hiding the one the path finds
        yield Query(create)
    found: Rows = yield Query(*_sql.table_columns(dialect, table))
    held = {str(name) for (name,) in found.rows}
    lacking = [name for name in _sql.OLD_COLUMNS.split(", ") if name not in held]
    if lacking:  # another table of the name: neither migrated nor used (rolled back)
        raise LedgerError(
            f"the table {table!r} is not the ledger's (it lacks the columns "
            f"{', '.join(lacking)}), so the ledger leaves it as it is and fulfils nothing: give "
            "the ledger a table= name of its own (or drop a table made by mistake)"
        )
    if "account" not in held:
        yield from add_account(dialect, table)  # which makes the key indexes
    else:
        yield from key_indexes(dialect, table)
    yield Commit()


def add_account(dialect: _sql.Dialect, table: str) -> LedgerPlan[None]:
    """Key the table by (account, reference): SQLite rebuilds it (every row copied before the old
    table goes), PostgreSQL adds the column and swaps the primary key."""
    if dialect.name == "postgresql":
        add, find_key = _sql.postgres_add_account(table)
        yield Query(add)
        keys: Rows = yield Query(find_key, (table,))
        for statement in _sql.postgres_swap_key(table, str(keys.rows[0][0])):
            yield Query(statement)
    else:
        new, build, count = _sql.sqlite_rebuild(dialect, table)
        for statement in build:
            yield Query(statement)
        copied: Rows = yield Query(count)
        kept: Rows = yield Query(_sql.count_rows(table))
        if copied.rows[0][0] != kept.rows[0][0]:
            raise LedgerError(
                f"migrating the ledger's table {table!r} to accounts copied {copied.rows[0][0]} "
                f"of its {kept.rows[0][0]} rows; nothing was changed"
            )
        for statement in _sql.sqlite_swap(table, new):
            yield Query(statement)
    yield from key_indexes(dialect, table)


def key_indexes(dialect: _sql.Dialect, table: str) -> LedgerPlan[None]:
    """Make the indexes a key's check reads (``_sql.key_indexes``) that the table lacks: a table
    made by an earlier ledger gains them when a ledger opens it."""
    for index, make in _sql.key_indexes(dialect, table):
        if dialect.name == "postgresql":  # never CREATE INDEX on a table this role does not own
            missing: Rows = yield Query(_sql.INDEX_MISSING, (index, table))
            if missing.rows and not missing.rows[0][0]:
                continue
        yield Query(make)


_LABEL_EACH = (
    "If the key is this account's new one (a rotated key, or a paysdk sandbox started anew, "
    "which has a key of its own), retire the old one: ledger.retire_key(), or `paysdk ledger "
    "retire-key`. If it is another account's, give each account's client a label "
    "(paysdk.Client(account='lagos-1'), or with_options(secret_key=..., account=...))"
)

_SPLIT_BY_PAYMENT = (
    "{reference} was verified with another account's key than the payments this ledger holds "
    "without an account, and neither client names its account: their references could "
    "collide. {label_each}; nothing was run",
    "{reference} was verified with a key whose payments this ledger holds under {held}, and "
    "its client names {named}: under two labels each of the key's payments would be fulfilled "
    "twice. Label every client of one key alike (Client(account=...)), to the letter; nothing "
    "was run",
)
_SPLIT_BY_RECONCILE = (
    "this client's key is not the one the payments this ledger holds without an account were "
    "verified with, and the client names no account: reconcile would read another account's "
    "payments as its own. {label_each}; nothing was listed",
    "this client's key verified payments this ledger holds under {held}, and the client names "
    "{named}: reconcile would find none of them, report each as missed, and with fulfil= "
    "fulfil it again. Reconcile with the client labelled as the callback view's is "
    "(Client(account=...); paysdk reconcile --account), the same label to the letter; nothing "
    "was listed",
)
"""``_refuse_split``'s ``str.format`` templates for ``check_key`` and ``check_reconciled_key``."""


def check_key(
    dialect: _sql.Dialect, table: str, payment: VerifiedPayment | None, *, recorded: bool = False
) -> LedgerPlan[None]:
    """After a write, refuse (ConfigurationError; rolled back) a payment whose key's rows would be
    split between accounts (``_refuse_split``). A key's first row under its account (``recorded``)
    reads ``key_rows`` again under ``Dialect.key_lock``: a PostgreSQL transaction sees only
    committed rows besides its own (a later row's conflicts see it)."""
    if payment is None or not payment.verified_by:
        return  # only a payment whose key is known is checked
    account, key = payment.account, payment.verified_by
    read = Query(_sql.key_rows(table), (account, key, payment.reference, key, key))
    found: Rows = yield read
    if recorded and dialect.key_lock is not None and found.rows[0][0] is None:
        yield Query(dialect.key_lock)
        found = yield read  # read again once every earlier first row is committed
    _refuse_split(found, account, key, _SPLIT_BY_PAYMENT, payment.reference)


def check_reconciled_key(table: str, account: str, issuer: str) -> LedgerPlan[None]:
    """Refuse (ConfigurationError) to reconcile a client whose rows would not be its own, as
    ``check_key`` refuses a payment: reconcile would report the key's fulfilled payments as
    missed, and with ``fulfil`` fulfil them again. A client with no key passes."""
    if not issuer:
        return
    found = yield from _read(_sql.key_rows(table), (account, issuer, "", issuer, issuer))
    _refuse_split(found, account, issuer, _SPLIT_BY_RECONCILE)


def _refuse_split(
    found: Rows, account: str, key: str, refusals: tuple[str, str], reference: str = ""
) -> None:
    """ConfigurationError (``refusals``' first or second) if ``key_rows``' answer shows an
    unlabelled client's key is not the unlabelled rows' (references of two accounts could collide),
    or another label than ``account`` holds the key's rows (each fulfilled once under each)."""
    shown = quoted(reference, code=True)
    _, least, greatest, *ends = found.rows[0]
    if not account and any(end not in (None, key) for end in ends):
        raise ConfigurationError(refusals[0].format(reference=shown, label_each=_LABEL_EACH))
    for label in (least, greatest):
        if label is not None and str(label) != account:
            held, named = (
                f"account {name!r}" if name else "no account" for name in (str(label), account)
            )
            raise ConfigurationError(refusals[1].format(reference=shown, held=held, named=named))


def check_label_case(
    dialect: _sql.Dialect, table: str, account: str, reference: str
) -> LedgerPlan[None]:
    """After setting a bare reference aside, refuse (ConfigurationError; rolled back) a label of no
    other row while rows are held under it in another case: typed by hand (``paysdk ledger refuse
    --account Lagos-1``), it would record the refusal where no client looks, the payment still
    reported missed. Likewise no label where the unlabelled account holds no other row and labels
    hold rows (a platform's, whose every client is labelled)."""
    if not account:
        unlabelled: Rows = yield Query(_sql.unlabelled_rows(table), (reference,))
        own, held = unlabelled.rows[0]
        if own is None and held is not None:
            raise ConfigurationError(
                "this ledger holds no payment without an account, and holds payments under "
                f"account {held!r} (and maybe others): a payment set aside without an account "
                "would be recorded where no client looks, so name its account as its client "
                "does (account=, paysdk ledger --account); nothing was recorded"
            )
        return
    label = Query(_sql.label_rows(dialect, table), (account, reference, account, account))
    found: Rows = yield label
    own, held = found.rows[0]
    if own is None and held is not None:  # an account of its own is kept, however like another
        raise ConfigurationError(
            f"this ledger holds no payment under account {account!r}, and holds payments under "
            f"account {held!r}, its label in another case: a label is matched to the letter, so "
            f"name the account as its client does ({held!r}); nothing was recorded"
        )


def label_meant(dialect: _sql.Dialect, table: str, account: str) -> LedgerPlan[str | None]:
    """The label that holds rows where ``account`` holds none (else ``None``): what ``paysdk
    ledger list`` names on finding nothing. For a label, the one equal to it but for case
    (``--account Lagos-1``); for no label, the least label, where only labels hold rows (a
    platform's ledger). ``check_label_case``'s statements, which walk the labels only then."""
    if not account:
        found = yield from _read(_sql.unlabelled_rows(table), ("",))
    else:
        found = yield from _read(_sql.label_rows(dialect, table), (account, "", account, account))
    own, held = found.rows[0]
    return str(held) if own is None and held is not None else None


def retire_key(table: str) -> LedgerPlan[int]:
    """Clear the unlabelled rows' key fingerprints, so that a rotated key's payments are fulfilled
    and its old rows still answer a replayed callback; how many rows it cleared."""
    yield Begin()
    cleared: Rows = yield Query(_sql.retire_keys(table))
    yield Commit()
    return cleared.rowcount


def _read(sql: str, params: Sequence[object] = ()) -> LedgerPlan[Rows]:
    """One statement's rows, in a read transaction of its own (which waits for no writer)."""
    yield Begin(write=False)
    found: Rows = yield Query(sql, params)
    yield Commit()
    return found


def fulfil_once(
    dialect: _sql.Dialect,
    table: str,
    payment: VerifiedPayment,
    lease: dt.timedelta,
    *,
    record_for: float,
    monotonic: Callable[[], float] = time.monotonic,
) -> LedgerPlan[FulfilResult[Any]]:
    """Claim ``payment.reference`` for ``lease`` (by the database's clock), run the action once,
    record it done (or release it): what happened, and what the action returned. Recording is tried
    for ``record_for`` seconds (by ``monotonic``), then UnrecordedFulfilmentError; LeaseLostError if
    the claim was resolved by hand."""
    reference, key = payment.reference, (payment.account, payment.reference)
    token, currency = secrets.token_hex(16), storable(payment.currency)
    claim = (token, lease.total_seconds(), payment.amount, currency, payment.verified_by or None)

    yield Begin()
    inserted: Rows = yield Query(_sql.insert_claim(dialect, table), (*key, *claim))
    claimed = inserted.rowcount == 1
    if not claimed:
        updated: Rows = yield Query(_sql.take_over(dialect, table), (*claim, *key))
        claimed = updated.rowcount == 1
    yield from check_key(dialect, table, payment, recorded=claimed)
    if not claimed:
        found: Rows = yield Query(_sql.select_one(dialect, table), key)
        yield Commit()
        row = LedgerRow._from_db(found.rows[0])
        return FulfilResult(_OUTCOMES.get(row.state, Outcome.IN_PROGRESS), reference, row=row)
    try:
        yield Commit()
    except LedgerError as unanswered:  # a cut connection may have committed it as it went
        # No action ran: release a committed claim for the next delivery rather than let it lapse
        # into unknown (an uncommitted one has no row with the token). Best effort.
        why = storable(f"the claim's commit went unanswered; no action ran: {unanswered}"[:500])
        release = Query(_sql.release(table), (why, *key, token))
        with contextlib.suppress(LedgerError):
            yield from write_retrying(release, record_for, monotonic)
        raise

    acted: Acted = yield Act()
    if acted.error is not None:
        problem = storable(f"{type(acted.error).__name__}: {acted.error}"[:500])
        release = Query(_sql.release(table), (problem, *key, token))
        try:
            yield from write_retrying(release, record_for, monotonic)
        except LedgerError:  # the action's error wins, keeping its own cause
            raise acted.error  # noqa: B904 - "from" would replace the action's own __cause__
        raise acted.error

    done = Query(_sql.mark_fulfilled(dialect, table), (*key, token))
    try:
        marked = yield from write_retrying(done, record_for, monotonic)
    except LedgerError as failed:
        raise UnrecordedFulfilmentError(
            f"the action for {quoted(reference, code=True)} ran, but recording its completion "
            "failed for "
            f"{record_for:g}s ({failed}); it will not run again: once its lease ends the ledger "
            "holds it as 'unknown' until you resolve it (reconcile lists it)",
            reference=reference,
            value=acted.value,
        ) from failed
    if marked.rowcount != 1:
        raise LeaseLostError(
            f"the action for {quoted(reference, code=True)} finished, but its claim was resolved "
            "by hand "
            "meanwhile; its completion was not recorded",
            reference=reference,
        )
    return FulfilResult(Outcome.FULFILLED, reference, value=acted.value)


_OUTCOMES = {
    "fulfilled": Outcome.ALREADY_FULFILLED,
    "claimed": Outcome.IN_PROGRESS,
    "unknown": Outcome.UNKNOWN,
}

FIRST_PAUSE = 0.05
"""Seconds before the first retry of a failed write; each pause doubles, up to MAX_PAUSE."""
MAX_PAUSE = 1.0


def write_retrying(
    query: Query, budget: float, monotonic: Callable[[], float] = time.monotonic
) -> LedgerPlan[Rows]:
    """Run ``query`` in a write transaction of its own, again after a LedgerError (the driver
    replaces a broken connection) until it commits (its rows) or ``budget`` seconds pass by
    ``monotonic`` (the last error raised). Only for a write that may run twice (after a commit's
    lost answer) and match what it did: the claim's token stays."""
    deadline = monotonic() + budget
    pause = FIRST_PAUSE
    while True:
        try:
            yield Begin()
            rows: Rows = yield query
            yield Commit()
            return rows
        except LedgerError:
            left = deadline - monotonic()
            if left <= 0:
                raise
        yield Sleep(min(pause, left))
        pause = min(2 * pause, MAX_PAUSE)


def resolve(
    dialect: _sql.Dialect, table: str, reference: str, *, ran: bool, account: str = ""
) -> LedgerPlan[LedgerRow]:
    """Settle a claim whose outcome is unknown, as a person decided after checking: fulfilled if
    ``ran``, else released so that the next delivery (or reconcile) runs it; the row as it now is.
    LedgerError if ``reference`` (of ``account``) has no row in the ``unknown`` state; a
    reference no database holds as it is (``stored_as_is``) has none, and is not asked for."""
    state, held = "no row", None
    if stored_as_is(reference):  # PostgreSQL refuses a NUL; no UTF-8 encodes a surrogate
        yield Begin()
        settled: Rows = yield Query(_sql.resolve(dialect, table, ran=ran), (account, reference))
        found: Rows = yield Query(_sql.select_one(dialect, table), (account, reference))
        yield Commit()
        if settled.rowcount == 1:
            return LedgerRow._from_db(found.rows[0])
        if found.rows:
            state = LedgerRow._from_db(found.rows[0]).state
        else:
            held = yield from label_meant(dialect, table, account)
            if held is not None and not account:  # the label holding this reference, if any
                own: Rows = yield from _read(_sql.reference_label(table), (reference,))
                held = str(own.rows[0][0]) if own.rows[0][0] is not None else held
    if held is not None:  # a label typed in another case, or left out on a platform's ledger
        named = f"account {account!r}" if account else "the unlabelled account"
        state += (
            f"; {named} holds no payment, and account {held!r} holds some: name the account as "
            "its client does (account=, paysdk ledger --account)"
        )
    raise LedgerError(
        f"{quoted(reference, code=True)} has no claim of unknown outcome to resolve "
        f"(its state: {state})"
    )


SetAside = Literal["refused", "ignored"]
"""What ``set_aside`` records: a payment the merchant declined, or one not theirs."""


def set_aside(
    dialect: _sql.Dialect,
    table: str,
    target: tuple[str, str, int, str, str],
    state: SetAside,
    payment: VerifiedPayment | None = None,
) -> LedgerPlan[LedgerRow]:
    """Record why a payment is not fulfilled (``state``; ``target``: ``set_aside_target``'s)
    unless it is fulfilled or claimed; its row as it now is. ``payment`` is checked by
    ``check_key``, a bare reference's label (``payment`` ``None``) by ``check_label_case``."""
    account, reference, amount, currency, reason = target
    yield Begin()
    yield Query(
        _sql.set_aside(dialect, table), (account, reference, state, amount, currency, reason)
    )
    yield from check_key(dialect, table, payment)
    if payment is None:
        yield from check_label_case(dialect, table, account, reference)
    found: Rows = yield Query(_sql.select_one(dialect, table), (account, reference))
    yield Commit()
    return LedgerRow._from_db(found.rows[0])


def rows_for(
    dialect: _sql.Dialect, table: str, references: Sequence[str], account: str = ""
) -> LedgerPlan[dict[str, LedgerRow]]:
    """The rows of these references of one account (those that have one), in one query."""
    found = yield from _select_many(dialect, table, references, account, _sql.row(dialect))
    return {row.reference: row for row in map(LedgerRow._from_db, found)}


def found_for(
    dialect: _sql.Dialect, table: str, references: Sequence[str], account: str = ""
) -> LedgerPlan[dict[str, Found]]:
    """What reconcile compares of the rows of these references of one account, in one query; a
    row edited by hand into what the ledger never writes is a LedgerError (``checked``)."""
    found = yield from _select_many(dialect, table, references, account, _sql.found(dialect))
    return {row[0]: Found._make(checked(row, FOUND_COLUMNS)) for row in found}


def _select_many(
    dialect: _sql.Dialect, table: str, references: Sequence[str], account: str, columns: str
) -> LedgerPlan[list[tuple[Any, ...]]]:
    """The ``columns`` of these references' rows; no query for none. One no database holds as it
    is (``stored_as_is``: PostgreSQL refuses a NUL, no UTF-8 has a surrogate) is not asked for."""
    references = [reference for reference in references if stored_as_is(reference)]
    if not references:
        return []
    # one array parameter where the database takes one; else a statement each MOST_MARKS, in one
    # read transaction: SQLite refuses a statement of more parameters (SQLITE_MAX_VARIABLE_NUMBER)
    most = len(references) if dialect.arrays else _sql.MOST_MARKS
    rows: list[tuple[Any, ...]] = []
    yield Begin(write=False)
    for start in range(0, len(references), most):
        chunk = references[start : start + most]
        found: Rows = yield Query(*_sql.select_many(dialect, table, account, chunk, columns))
        rows += found.rows
    yield Commit()
    return rows


def rows_after(
    dialect: _sql.Dialect, table: str, after: str, limit: int, state: str | None, account: str = ""
) -> LedgerPlan[list[LedgerRow]]:
    """The next page of one account's rows (of ``state``, or all) after ``after``, in order."""
    found = yield from _read(*_sql.rows_page(dialect, table, account, state, after, limit))
    return [LedgerRow._from_db(row) for row in found.rows]


def fulfilled_references_after(
    table: str, after: str, limit: int, account: str = ""
) -> LedgerPlan[list[str]]:
    """The next page of one account's fulfilled references after ``after``, in order."""
    found = yield from _read(_sql.fulfilled_references_page(table), (account, after, limit))
    return [checked(row, ROW_COLUMNS[:1])[0] for row in found.rows]

"""A payment fulfilled once, I/O-free: claimed, its action run and recorded done (or released), a
claim of unknown outcome resolved by hand, a payment set aside. The ledger's decisions are each a
plan of steps (``_steps``) for its one driver (``_async/run.py``); a failed step's LedgerError is
thrown in for the plan to judge. Its SQL: ``_statements``."""

from __future__ import annotations

import contextlib
import datetime as dt
import secrets
import time
from collections.abc import Callable
from typing import Any, Literal

from .._errors.quoting import quoted
from .._models.verified import VerifiedPayment
from . import _statements
from ._accounts import check_key, check_label_case, label_meant
from ._checks import storable, stored_as_is
from ._errors import LeaseLostError, LedgerError, UnrecordedFulfilmentError
from ._reads import read
from ._rows import FulfilResult, LedgerRow, Outcome
from ._schema import Dialect
from ._steps import Act, Acted, Begin, Commit, LedgerPlan, Query, Rows, Sleep


def fulfil_once(
    dialect: Dialect,
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
    inserted: Rows = yield Query(_statements.insert_claim(dialect, table), (*key, *claim))
    claimed = inserted.rowcount == 1
    if not claimed:
        updated: Rows = yield Query(_statements.take_over(dialect, table), (*claim, *key))
        claimed = updated.rowcount == 1
    yield from check_key(dialect, table, payment, recorded=claimed)
    if not claimed:
        found: Rows = yield Query(_statements.select_one(dialect, table), key)
        yield Commit()
        row = LedgerRow._from_db(found.rows[0])
        return FulfilResult(_OUTCOMES.get(row.state, Outcome.IN_PROGRESS), reference, row=row)
    try:
        yield Commit()
    except LedgerError as unanswered:  # a cut connection may have committed it as it went
        # No action ran: release a committed claim for the next delivery rather than let it lapse
        # into unknown (an uncommitted one has no row with the token). Best effort.
        why = storable(f"the claim's commit went unanswered; no action ran: {unanswered}"[:500])
        release = Query(_statements.release(table), (why, *key, token))
        with contextlib.suppress(LedgerError):
            yield from write_retrying(release, record_for, monotonic)
        raise

    acted: Acted = yield Act()
    if acted.error is not None:
        problem = storable(f"{type(acted.error).__name__}: {acted.error}"[:500])
        release = Query(_statements.release(table), (problem, *key, token))
        try:
            yield from write_retrying(release, record_for, monotonic)
        except LedgerError:  # the action's error wins, keeping its own cause
            raise acted.error  # noqa: B904 - "from" would replace the action's own __cause__
        raise acted.error

    done = Query(_statements.mark_fulfilled(dialect, table), (*key, token))
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
    dialect: Dialect, table: str, reference: str, *, ran: bool, account: str = ""
) -> LedgerPlan[LedgerRow]:
    """Settle a claim whose outcome is unknown, as a person decided after checking: fulfilled if
    ``ran``, else released so that the next delivery (or reconcile) runs it; the row as it now is.
    LedgerError if ``reference`` (of ``account``) has no row in the ``unknown`` state; a
    reference no database holds as it is (``stored_as_is``) has none, and is not asked for."""
    state, held = "no row", None
    if stored_as_is(reference):  # PostgreSQL refuses a NUL; no UTF-8 encodes a surrogate
        yield Begin()
        settled: Rows = yield Query(
            _statements.resolve(dialect, table, ran=ran), (account, reference)
        )
        found: Rows = yield Query(_statements.select_one(dialect, table), (account, reference))
        yield Commit()
        if settled.rowcount == 1:
            return LedgerRow._from_db(found.rows[0])
        if found.rows:
            state = LedgerRow._from_db(found.rows[0]).state
        else:
            held = yield from label_meant(dialect, table, account)
            if held is not None and not account:  # the label holding this reference, if any
                own: Rows = yield from read(_statements.reference_label(table), (reference,))
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
    dialect: Dialect,
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
        _statements.set_aside(dialect, table), (account, reference, state, amount, currency, reason)
    )
    yield from check_key(dialect, table, payment)
    if payment is None:
        yield from check_label_case(dialect, table, account, reference)
    found: Rows = yield Query(_statements.select_one(dialect, table), (account, reference))
    yield Commit()
    return LedgerRow._from_db(found.rows[0])

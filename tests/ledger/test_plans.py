"""The ledger's I/O-free plans, driven by hand: each decision without any database."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

import paysdk
from paysdk.ledger import LeaseLostError, LedgerError, Outcome, UnrecordedFulfilmentError, _schema
from paysdk.ledger._fulfilment import fulfil_once
from paysdk.ledger._migration import ensure_schema
from paysdk.ledger._schema import POSTGRES, SQLITE
from paysdk.ledger._steps import (
    LEDGER_STEPS,
    Act,
    Acted,
    Begin,
    Commit,
    LedgerPlan,
    Query,
    Rows,
    Sleep,
)

NOW = dt.datetime(2026, 11, 23, 12, 0, tzinfo=dt.timezone.utc)
PAYMENT = paysdk.VerifiedPayment(reference="order-9", amount=700, currency="NGN", success=True)
CLAIMED_ROW = ("order-9", "claimed", "someone-else", 1, NOW, 700, "NGN", None, None, "")


class FakeClock:
    """A monotonic clock that moves only when a plan pauses (or a test says so)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def plan(clock: FakeClock | None = None, record_for: float = 60) -> LedgerPlan[Any]:
    return fulfil_once(
        POSTGRES,
        "ledger",
        PAYMENT,
        dt.timedelta(seconds=60),
        record_for=record_for,
        monotonic=clock or FakeClock(),
    )


def drive(
    steps: LedgerPlan[Any],
    answers: list[object],
    seen: list[object] | None = None,
    clock: FakeClock | None = None,
) -> tuple[list[object], Any]:
    """Send ``answers`` to the queries and the action in turn (a LedgerError among them is
    thrown in, as a driver throws a failed step's); the steps seen (each one of the ledger's
    vocabulary, or the plan fails) and the result. A Sleep moves ``clock`` on by its seconds."""
    seen = [] if seen is None else seen
    reply: object = None
    throw: LedgerError | None = None
    try:
        while True:
            step = steps.throw(throw) if throw is not None else steps.send(reply)
            seen.append(step)
            assert isinstance(step, LEDGER_STEPS), f"a step the ledger's driver refuses: {step!r}"
            reply, throw = None, None
            if isinstance(step, Sleep) and clock is not None:
                clock.now += step.seconds
            if isinstance(step, (Query, Act)):
                reply = answers.pop(0)
                if isinstance(reply, LedgerError):
                    reply, throw = None, reply
    except StopIteration as done:
        return seen, done.value


def kinds(steps: list[object]) -> list[str]:
    """Each step's kind; a statement's, its main verb (after the claim's CTE, which updates no
    row and is there for the privilege it needs)."""
    return [verb(step.sql) if isinstance(step, Query) else type(step).__name__ for step in steps]


def verb(sql: str) -> str:
    return (sql.split(") ", 1)[1] if sql.startswith("WITH ") else sql).split()[0]


def test_a_fresh_claim_commits_before_the_action_and_marks_done_after() -> None:
    steps, result = drive(plan(), [Rows([], 1), Acted(value="shipped"), Rows([], 1)])
    assert kinds(steps) == ["Begin", "INSERT", "Commit", "Act", "Begin", "UPDATE", "Commit"]
    assert (result.outcome, result.value) == (Outcome.FULFILLED, "shipped")
    token = steps[1].params[2]  # type: ignore[attr-defined]
    assert steps[5].params[-1] == token  # type: ignore[attr-defined]  # only the owner marks it


def test_a_claim_lost_to_another_worker_never_runs_the_action() -> None:
    steps, result = drive(plan(), [Rows([], 0), Rows([], 0), Rows([CLAIMED_ROW], 1)])
    assert kinds(steps) == ["Begin", "INSERT", "UPDATE", "SELECT", "Commit"]
    assert result.outcome is Outcome.IN_PROGRESS
    assert isinstance(steps[0], Begin)
    assert isinstance(steps[-1], Commit)


def test_an_action_that_raises_releases_the_claim_then_raises() -> None:
    error, seen = RuntimeError("warehouse offline"), list[object]()
    with pytest.raises(RuntimeError, match="warehouse offline"):
        drive(plan(), [Rows([], 1), Acted(error=error), Rows([], 1)], seen)
    assert kinds(seen) == ["Begin", "INSERT", "Commit", "Act", "Begin", "UPDATE", "Commit"]
    release = seen[5]
    assert isinstance(release, Query)
    assert "state = 'released'" in release.sql
    assert release.params[0] == "RuntimeError: warehouse offline"


def test_finishing_after_the_claim_was_resolved_by_hand_is_lease_lost() -> None:
    with pytest.raises(LeaseLostError, match="resolved by hand") as raised:
        drive(plan(), [Rows([], 0), Rows([], 1), Acted(value=None), Rows([], 0)])
    assert raised.value.reference == "order-9"


def test_a_claim_whose_lease_ran_out_unrecorded_is_unknown_and_not_run() -> None:
    unknown_row = ("order-9", "unknown", "someone-else", 1, NOW, 700, "NGN", None, None, "")
    steps, result = drive(plan(), [Rows([], 0), Rows([], 0), Rows([unknown_row], 1)])
    assert kinds(steps) == ["Begin", "INSERT", "UPDATE", "SELECT", "Commit"]  # no Act
    assert (result.outcome, result.unknown) == (Outcome.UNKNOWN, True)
    take_over = steps[2]
    assert isinstance(take_over, Query)
    assert "lease_expires_at" not in take_over.sql.split("WHERE")[1]  # only released rows


RESTART = LedgerError("the PostgreSQL ledger failed: terminating connection")


def test_recording_an_action_that_ran_is_retried_until_the_database_answers() -> None:
    clock = FakeClock()
    answers: list[object] = [Rows([], 1), Acted(value="shipped"), RESTART, RESTART, Rows([], 1)]
    steps, result = drive(plan(clock), answers, clock=clock)
    assert (result.outcome, result.value) == (Outcome.FULFILLED, "shipped")
    assert kinds(steps)[3:] == [
        "Act", "Begin", "UPDATE", "Sleep", "Begin", "UPDATE", "Sleep", "Begin", "UPDATE", "Commit",
    ]  # fmt: skip
    pauses = [step.seconds for step in steps if isinstance(step, Sleep)]
    assert pauses == [0.05, 0.1]  # doubling
    marks = [step for step in steps if isinstance(step, Query) and "fulfilled" in step.sql]
    assert len({(mark.sql, tuple(mark.params)) for mark in marks}) == 1  # the same statement


def test_recording_that_fails_for_the_whole_budget_says_the_action_ran() -> None:
    clock = FakeClock()
    steps = plan(clock, record_for=5)
    answers: list[object] = [Rows([], 1), Acted(value="shipped"), *[RESTART] * 100]
    seen: list[object] = []
    with pytest.raises(UnrecordedFulfilmentError, match="ran, but recording") as raised:
        drive(steps, answers, seen, clock=clock)
    assert isinstance(raised.value, LedgerError)
    assert (raised.value.reference, raised.value.value) == ("order-9", "shipped")
    assert raised.value.__cause__ is RESTART
    assert clock.now - 1000.0 == pytest.approx(5)  # gave up when the budget was spent...
    pauses = [step.seconds for step in seen if isinstance(step, Sleep)]
    assert max(pauses) == 1.0  # ...with pauses capped at a second
    assert kinds(seen).count("Act") == 1
    assert not any(isinstance(step, Query) and "released" in step.sql for step in seen)


def test_a_failed_release_is_retried_too() -> None:
    clock = FakeClock()
    answers: list[object] = [Rows([], 1), Acted(error=RuntimeError("down")), RESTART, Rows([], 1)]
    seen: list[object] = []
    with pytest.raises(RuntimeError, match="down"):
        drive(plan(clock), answers, seen, clock=clock)
    assert kinds(seen)[-3:] == ["Begin", "UPDATE", "Commit"]


def test_a_failed_release_leaves_the_actions_error_to_raise_with_its_own_cause() -> None:
    cause = ConnectionError("warehouse API down")
    error = RuntimeError("warehouse offline")
    error.__cause__ = cause
    steps = plan(record_for=0)  # no retry: the first failure is final
    drive_until_release = [Rows([], 1), Acted(error=error)]
    step = next(steps)
    while not isinstance(step, Query) or "released" not in step.sql:
        reply = drive_until_release.pop(0) if isinstance(step, (Query, Act)) else None
        step = steps.send(reply)
    with pytest.raises(RuntimeError, match="warehouse offline") as raised:
        steps.throw(LedgerError("the SQLite ledger failed: database is locked"))
    assert raised.value.__cause__ is cause
    assert isinstance(raised.value.__context__, LedgerError)


@pytest.mark.parametrize("dialect", [POSTGRES, SQLITE], ids=["postgres", "sqlite"])
def test_the_database_clock_starts_checks_and_ends_each_lease(dialect: Any) -> None:
    steps = fulfil_once(dialect, "ledger", PAYMENT, dt.timedelta(minutes=5), record_for=1)
    seen, _ = drive(steps, [Rows([], 0), Rows([], 1), Acted(value=None), Rows([], 1)])
    claim, take_over, done = (step for step in seen if isinstance(step, Query))
    for query in (claim, take_over, done):  # no time of the worker's is sent, only the lease
        assert dialect.now in query.sql
        assert not any(isinstance(value, dt.datetime) for value in query.params)
    assert 300.0 in claim.params
    assert 300.0 in take_over.params
    assert "state IN ('released', 'refused', 'ignored')" in take_over.sql  # never a claim


@pytest.mark.parametrize("dialect", [SQLITE, POSTGRES], ids=["sqlite", "postgres"])
@pytest.mark.parametrize("has_account", [0, 1], ids=["old-table", "current-table"])
def test_opening_a_table_makes_each_key_index_once(
    dialect: _schema.Dialect, has_account: int
) -> None:
    """A table made before accounts is migrated, which makes the key indexes; opening it does
    not make them again (harmless, ``IF NOT EXISTS``, but a statement each for nothing)."""
    steps = ensure_schema(dialect, "ledger")
    seen: list[object] = []
    reply: object = None
    try:
        while True:
            step = steps.send(reply)
            seen.append(step)
            reply = None
            if isinstance(step, Query):  # the table exists, with the account column or not
                if step.sql == _schema.table_columns(dialect, "ledger")[0]:
                    names = [*_schema.OLD_COLUMNS.split(", "), *(["account"] * has_account)]
                    reply = Rows([(name,) for name in names], len(names))
                else:
                    reply = Rows([(1,)], 1)
    except StopIteration:
        pass
    made = [s.sql for s in seen if isinstance(s, Query) and "CREATE INDEX" in s.sql]
    assert len(made) == len(_schema.KEY_INDEXES)

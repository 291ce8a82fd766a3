"""The ledger's I/O-free plans, driven by hand: each decision without any database."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

import paysdk
from paysdk.ledger import LeaseLostError, LedgerError, Outcome
from paysdk.ledger._plans import Act, Acted, Begin, Commit, LedgerPlan, Query, Rows, fulfil_once
from paysdk.ledger._sql import POSTGRES, SQLITE

NOW = dt.datetime(2026, 11, 23, 12, 0, tzinfo=dt.timezone.utc)
PAYMENT = paysdk.VerifiedPayment(reference="order-9", amount=700, currency="NGN", success=True)
CLAIMED_ROW = ("order-9", "claimed", "someone-else", 1, NOW, 700, "NGN", None)


def plan() -> LedgerPlan[Any]:
    return fulfil_once(POSTGRES, "ledger", PAYMENT, dt.timedelta(seconds=60))


def drive(
    steps: LedgerPlan[Any], answers: list[object], seen: list[object] | None = None
) -> tuple[list[object], Any]:
    """Send ``answers`` to the queries and the action in turn; the steps seen and the result."""
    seen = [] if seen is None else seen
    reply: object = None
    try:
        while True:
            step = steps.send(reply)
            seen.append(step)
            reply = answers.pop(0) if isinstance(step, (Query, Act)) else None
    except StopIteration as done:
        return seen, done.value


def kinds(steps: list[object]) -> list[str]:
    return [
        step.sql.split()[0] if isinstance(step, Query) else type(step).__name__ for step in steps
    ]


def test_a_fresh_claim_commits_before_the_action_and_marks_done_after() -> None:
    steps, result = drive(plan(), [Rows([], 1), Acted(value="shipped"), Rows([], 1)])
    assert kinds(steps) == ["Begin", "INSERT", "Commit", "Act", "Begin", "UPDATE", "Commit"]
    assert (result.outcome, result.value) == (Outcome.FULFILLED, "shipped")
    token = steps[1].params[1]  # type: ignore[attr-defined]
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


def test_finishing_after_the_lease_was_taken_over_is_lease_lost() -> None:
    with pytest.raises(LeaseLostError, match="lease") as raised:
        drive(plan(), [Rows([], 0), Rows([], 1), Acted(value=None), Rows([], 0)])
    assert raised.value.reference == "order-9"


def test_a_failed_release_leaves_the_actions_error_to_raise_with_its_own_cause() -> None:
    cause = ConnectionError("warehouse API down")
    error = RuntimeError("warehouse offline")
    error.__cause__ = cause
    steps = plan()
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
    steps = fulfil_once(dialect, "ledger", PAYMENT, dt.timedelta(minutes=5))
    seen, _ = drive(steps, [Rows([], 0), Rows([], 1), Acted(value=None), Rows([], 1)])
    claim, take_over, done = (step for step in seen if isinstance(step, Query))
    for query in (claim, take_over, done):  # no time of the worker's is sent, only the lease
        assert dialect.now in query.sql
        assert not any(isinstance(value, dt.datetime) for value in query.params)
    assert 300.0 in claim.params
    assert 300.0 in take_over.params
    assert f"lease_expires_at <= {dialect.now}" in take_over.sql

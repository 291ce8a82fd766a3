"""Reconcile's comparison plan, driven by hand: each decision without a service or a database."""

from __future__ import annotations

import dataclasses
import gc
import sys
from collections.abc import Callable, Mapping
from typing import Any

import pytest

import paysdk
from paysdk.ledger import Kind, ReconcileReport
from paysdk.ledger._reconcile.plan import reconcile_plan
from paysdk.ledger._steps import (
    Checked,
    CloseList,
    FindOrder,
    Found,
    FulfilledPage,
    Listed,
    LookUp,
    NextBatch,
    ReconcileStep,
    Verify,
)


def listed(
    reference: str, status: str = "COMPLETED", amount: int = 700, currency: str = "NGN"
) -> Listed:
    """What the driver hands the plan of a listed payment (``Listed.of`` the model)."""
    return Listed.of(
        paysdk.ListedPayment(
            id=reference, reference=reference, amount=amount, currency=currency, status=status
        )
    )


def row(reference: str, state: str, reason: str | None = None, currency: str = "NGN") -> Found:
    """What a ledger's batch lookup hands the plan of a row."""
    return Found(reference, state, 700, currency, reason)


Orders = Callable[[str], object]


@dataclasses.dataclass
class Order:
    amount: int
    currency: str


def run(
    payments: list[Listed],
    rows: Mapping[str, Found],
    lookup: Orders | None = None,
    fulfilled: tuple[str, ...] = (),
    verified: Mapping[str, paysdk.VerifiedPayment] | None = None,
) -> tuple[ReconcileReport, list[str]]:
    """Drive the plan over one batch, then one page of ``fulfilled`` references (verify answers
    from ``verified``); returns its report and the references it looked up or verified."""
    plan = reconcile_plan(fulfilling=False, looking_up=lookup is not None)
    asked: list[str] = []
    batches = [payments, []]
    pages = [list(fulfilled), []]
    step: ReconcileStep = next(plan)
    try:
        while True:
            reply: Any = None
            if isinstance(step, NextBatch):
                reply = batches.pop(0)
            elif isinstance(step, LookUp):
                reply = {ref: rows[ref] for ref in step.references if ref in rows}
            elif isinstance(step, FindOrder):
                assert lookup is not None
                asked.append(step.reference)
                try:
                    reply = lookup(step.reference)
                except Exception as error:
                    step = plan.throw(error)
                    continue
            elif isinstance(step, FulfilledPage):
                reply = pages.pop(0)
            elif isinstance(step, Verify):
                asked.append(step.reference)
                reply = (verified or {})[step.reference]
            else:
                assert isinstance(step, (Checked, CloseList)), step
            step = plan.send(reply)
    except StopIteration as done:
        return done.value, asked


def kinds(report: ReconcileReport) -> dict[str, tuple[Kind, str | None]]:
    return {d.reference: (d.kind, d.reason) for d in report.discrepancies}


def test_a_refused_or_ignored_payment_is_shown_with_its_reason_and_needs_no_attention() -> None:
    report, _ = run(
        [listed("r-1"), listed("i-1"), listed("failed", status="FAILED")],
        {
            "r-1": row("r-1", "refused", "underpaid: 700 of 900"),
            "i-1": row("i-1", "ignored", "a test payment"),
            "failed": row("failed", "refused", "it failed"),
        },
    )
    assert kinds(report) == {
        "r-1": (Kind.REFUSED, "underpaid: 700 of 900"),
        "i-1": (Kind.IGNORED, "a test payment"),
    }  # a refused payment that did not complete is as it should be: nothing to show
    assert (report.counts["refused"], report.counts["ignored"]) == (1, 1)
    assert not report.needs_attention


def test_a_released_row_or_none_is_still_missed() -> None:
    report, _ = run([listed("rel"), listed("none")], {"rel": row("rel", "released")})
    assert kinds(report) == {"rel": (Kind.MISSED, None), "none": (Kind.MISSED, None)}
    assert report.unresolved_missed == 2
    assert report.needs_attention


def test_lookup_sorts_rowless_payments_into_not_ours_missed_and_mismatched() -> None:
    orders: dict[str, dict[str, object]] = {
        "mine": {"amount": 700, "currency": "ngn"},
        "underpaid": {"amount": 900, "currency": "NGN"},
    }
    report, asked = run(
        [listed("mine"), listed("underpaid"), listed("theirs"), listed("rel"), listed("ok")],
        {"rel": row("rel", "released"), "ok": row("ok", "fulfilled")},
        orders.get,
    )
    assert asked == ["mine", "underpaid", "theirs"]  # only completed payments with no row
    assert kinds(report) == {
        "mine": (Kind.MISSED, None),
        "underpaid": (Kind.MISSED, "the order expects amount 900"),
        "theirs": (Kind.FOREIGN, None),
        "rel": (Kind.MISSED, None),
    }
    assert report.counts["not_ours"] == 1
    assert report.unresolved_missed == 3
    assert report.fulfilled_ok == 1


def test_currencies_are_the_same_code_only_on_ascii_letters() -> None:
    report, _ = run(
        [
            listed("case", currency="usd"),
            listed("long-s", currency="u\u017fd"),  # "\u017f".upper() == "S"
            listed("sharp-s", currency="\u00dfP"),  # "\u00df".upper() == "SS"
            listed("dotless-i", currency="\u0131nr"),  # "\u0131".upper() == "I"
        ],
        {
            "case": row("case", "fulfilled", currency="USD"),
            "long-s": row("long-s", "fulfilled", currency="USD"),
        },
        {"sharp-s": {"amount": 700, "currency": "SSP"}, "dotless-i": Order(700, "inr")}.get,
    )
    assert kinds(report) == {
        "long-s": (Kind.MISMATCH, None),
        "sharp-s": (Kind.MISSED, "the order expects currency SSP"),
        "dotless-i": (Kind.MISSED, "the order expects currency inr"),
    }
    assert report.fulfilled_ok == 1


def test_only_not_ours_payments_need_no_attention() -> None:
    report, _ = run([listed("theirs")], {}, lambda reference: None)
    assert kinds(report) == {"theirs": (Kind.FOREIGN, None)}
    assert not report.needs_attention


def test_a_lookup_that_raises_keeps_the_payment_missed_and_says_why() -> None:
    def broken(reference: str) -> object:
        raise RuntimeError("orders database\n down")

    report, _ = run([listed("mine")], {}, broken)
    assert kinds(report) == {
        "mine": (Kind.MISSED, "lookup failed: RuntimeError: orders database down")
    }
    assert report.needs_attention


def test_a_lookup_answering_neither_an_order_nor_none_is_a_configuration_error() -> None:
    with pytest.raises(paysdk.ConfigurationError, match="amount and currency"):
        run([listed("mine")], {}, lambda reference: {"total": 700})


def test_without_lookup_no_order_is_asked_for() -> None:
    report, asked = run([listed("mine")], {})
    assert asked == []
    assert kinds(report) == {"mine": (Kind.MISSED, None)}


def test_the_fulfilled_pass_reads_references_and_fetches_only_unseen_rows_still_fulfilled() -> None:
    paid = paysdk.VerifiedPayment(reference="late", amount=700, currency="NGN", success=True)
    report, asked = run(
        [listed("seen")],
        {
            "seen": row("seen", "fulfilled"),
            "late": row("late", "fulfilled"),  # fulfilled after the list was read
            "gone": row("gone", "released"),  # resolved by hand since its page was read
        },
        fulfilled=("gone", "late", "seen"),
        verified={"late": paid},
    )
    assert asked == ["late"]  # "seen" was listed; "gone" is no longer fulfilled
    assert report.discrepancies == []
    assert report.fulfilled_ok == 1


def test_a_currency_the_service_sent_is_not_kept_once_the_run_is_over() -> None:
    """A list may carry a currency of up to a payment's whole size (a megabyte): it is compared
    and reported, and nothing of the run holds it after the report is gone, however many
    such payments a hostile list sends."""
    sent = "\U0001f600" * 250_000 + "!"  # a megabyte as Python holds it; made here, once
    before = sys.getrefcount(sent)
    report, _ = run([Listed("big", 700, sent, "COMPLETED", True)], {"big": row("big", "fulfilled")})
    assert kinds(report) == {"big": (Kind.MISMATCH, None)}
    assert report.discrepancies[0].currency is sent
    del report
    gc.collect()
    held = sys.getrefcount(sent) - before
    assert held == 0


def test_a_reference_no_database_holds_is_never_looked_up_and_is_missed() -> None:
    """A listed reference holding a NUL has no row (PostgreSQL's text cannot hold it, and a
    query naming it fails): it is not looked up, and a batch of only such references asks for
    no rows at all (an empty ``IN ()`` is no SQL)."""
    plan = reconcile_plan(fulfilling=False)
    batches = [[listed("order-\x00-7")], [listed("order-8"), listed("order-\x00-9")], []]
    looked_up: list[list[str]] = []
    step: ReconcileStep = next(plan)
    try:
        while True:
            reply: Any = None
            if isinstance(step, NextBatch):
                reply = batches.pop(0)
            elif isinstance(step, LookUp):
                looked_up.append(list(step.references))
                reply = {}
            elif isinstance(step, FulfilledPage):
                reply = []
            step = plan.send(reply)
    except StopIteration as done:
        report: ReconcileReport = done.value
    assert looked_up == [["order-8"]]
    assert kinds(report) == {
        "order-\x00-7": (Kind.MISSED, None),
        "order-8": (Kind.MISSED, None),
        "order-\x00-9": (Kind.MISSED, None),
    }

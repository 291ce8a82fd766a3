"""Reconciliation's decisions: ``reconcile_plan`` yields steps (``_steps``) for its one driver;
``Reconciliation`` compares the list with the ledger, batch by batch, into a ``ReconcileReport``."""

from __future__ import annotations

import array
import bisect
import dataclasses
import functools
from collections.abc import Generator, Iterable, Mapping
from typing import Any

from ..._core import expected_for, same_currency
from ..._errors import PaymentNotFoundError, PaymentVerificationError
from ..._errors.quoting import quoted
from ..._models.verified import VerifiedPayment
from ..._models.wire import hidden_key
from .._checks import stored_as_is
from .._rows import FulfilResult
from .._steps import (
    Checked,
    CloseList,
    FindOrder,
    Found,
    Fulfil,
    FulfilledPage,
    Listed,
    LookUp,
    NextBatch,
    ReconcileStep,
    Verify,
)
from .report import MAX_DISCREPANCIES, Discrepancy, Kind, ReconcileReport, hidden_in, hiding

__all__ = ["BATCH", "PAGE", "Reconciliation", "reconcile_plan"]

BATCH = 500
"""Listed payments looked up in the ledger at a time: one query each."""
PAGE = 2000
"""Fulfilled rows read at a time, in the pass for those the list did not show."""


class Reconciliation:
    """The running comparison. Memory: one batch, at most ``max_discrepancies`` discrepancies
    and as many missed payments to fulfil, and 8 bytes per fulfilled payment listed."""

    def __init__(self, max_discrepancies: int = MAX_DISCREPANCIES, account: str = "") -> None:
        self.report = ReconcileReport(account=account)
        self._limit = max_discrepancies
        self._listed = _References()
        self._to_fulfil: list[tuple[int | None, Discrepancy]] = []

    def batch(self, listed: Iterable[Listed], rows: Mapping[str, Found]) -> list[Listed]:
        """Compare one batch; returns its missed payments (to fulfil, if asked to)."""
        missed: list[Listed] = []
        fulfilled_listed: list[str] = []
        report = self.report
        for payment in listed:
            report.listed += 1
            row = rows.get(payment.reference)
            fulfilled = row is not None and row.state == "fulfilled"
            succeeded = payment.succeeded
            if succeeded:
                report.completed += 1
            if fulfilled:
                assert row is not None
                fulfilled_listed.append(payment.reference)
                if succeeded and not _differ(payment.amount, payment.currency, row):
                    report.fulfilled_ok += 1  # the common case, all is well: decided at once
                    continue
            found = self._compare(payment, row if fulfilled else None)
            if found is not None and row is not None and row.state in _DECIDED:
                found = _listed(_DECIDED[row.state], payment, reason=row.reason)
            if row is not None and row.state == "unknown":  # held: never fulfilled by reconcile
                found = _listed(Kind.UNKNOWN, payment, row)
            if found is None:
                report.fulfilled_ok += 1 if payment.succeeded else 0
            elif found.kind is Kind.MISSED:
                missed.append(payment)
            else:
                report._add(found, self._limit)
        self._listed.update(fulfilled_listed)
        return missed

    def missed(self, payment: Listed, reason: str | None = None) -> None:
        """Record a missed payment, and keep it to hand to ``fulfil`` (see ``to_fulfil``);
        ``reason``: what ``lookup`` found wrong with its order, if it was asked."""
        self._listed.update((payment.reference,))  # listed: never "not listed" later
        found = _listed(Kind.MISSED, payment, reason=reason)
        index = self.report._add(found, self._limit)
        if len(self._to_fulfil) < self._limit:
            self._to_fulfil.append((index, found))

    def ordered(self, payment: Listed, order: object) -> None:
        """A completed payment with no ledger row, and what ``lookup`` found: ``None`` makes it not
        ours; an order, missed (saying how they differ); what ``lookup`` raised, missed, saying
        so (never silently not ours); anything else, ConfigurationError."""
        if order is None:
            self.report._add(_listed(Kind.FOREIGN, payment), self._limit)
        elif isinstance(order, Exception):
            self.missed(payment, f"lookup failed: {_said(order)}")
        else:
            self.missed(payment, _differs_from(payment, order))

    def to_fulfil(self) -> list[tuple[int | None, Discrepancy]]:
        """The first ``max_discrepancies`` missed payments for ``fulfil``, each with its place in
        the report (``None``: not kept), kept apart so that alarms filling the report never keep
        one from being fulfilled; those beyond wait for the next run."""
        return self._to_fulfil

    def fulfilled(self, index: int | None, missed: Discrepancy, fulfilment: str) -> None:
        """Record what handing a missed payment to ``fulfil`` did."""
        done = hiding(dataclasses.replace(missed, fulfilment=fulfilment), hidden_in(missed))
        if index is not None:
            self.report.discrepancies[index] = done
        if done.resolved:
            self.report.unresolved_missed -= 1

    def unseen(self, references: Iterable[str]) -> list[str]:
        """Of a page of fulfilled references, those the list did not show: to verify one by one."""
        return self._listed.missing(references)

    def unlisted(self, row: Found, payment: VerifiedPayment | None) -> None:
        """A fulfilled row the list did not show, settled by what verify says of it (None:
        unknown): a payment made (and fulfilled) after the list was read is fine."""
        kind = Kind.NOT_LISTED if payment is None else _wrong_with(payment, row)
        if kind is None:
            return
        amount, currency = (None, None) if payment is None else (payment.amount, payment.currency)
        found = Discrepancy(kind, row.reference, None, amount, currency, row.amount, row.currency)
        hides = None if payment is None else hidden_key(payment)
        self.report._add(hiding(found, hides), self._limit)

    @staticmethod
    def _compare(payment: Listed, row: Found | None) -> Discrepancy | None:
        if row is None:
            return _listed(Kind.MISSED, payment) if payment.succeeded else None
        kind = _wrong_with(payment, row)
        return None if kind is None else _listed(kind, payment, row)


def _wrong_with(payment: Listed | VerifiedPayment, row: Found) -> Kind | None:
    """What is wrong with a fulfilled row, given its payment as the service has it: not
    completed, or another amount or currency; ``None`` if nothing."""
    if not payment.succeeded:
        return Kind.NOT_COMPLETED
    return Kind.MISMATCH if _differ(payment.amount, payment.currency, row) else None


def _listed(
    kind: Kind, payment: Listed, row: Found | None = None, reason: str | None = None
) -> Discrepancy:
    """A listed payment's discrepancy; with its ledger ``row``, what the ledger recorded too."""
    listed = (payment.reference, str(payment.status), payment.amount, payment.currency)
    amount, currency = (None, None) if row is None else (row.amount, row.currency)
    return hiding(Discrepancy(kind, *listed, amount, currency, reason=reason), payment.hides)


_DECIDED = {"refused": Kind.REFUSED, "ignored": Kind.IGNORED}
"""Ledger states a person or a handler decided on, and how a completed payment in one is shown."""


def _differs_from(payment: Listed, order: object) -> str | None:
    """How the order ``lookup`` found differs from the payment, or ``None`` if it matches."""
    expected = expected_for(payment.reference, None, None, True, order)
    wrong: list[str] = []
    if expected.amount is not None and expected.amount != payment.amount:
        wrong.append(f"amount {quoted(expected.amount)}")
    if expected.currency is not None and not same_currency(expected.currency, payment.currency):
        wrong.append(f"currency {expected.currency}")
    return f"the order expects {' and '.join(wrong)}" if wrong else None


def _said(error: Exception) -> str:
    return f"{type(error).__name__}: {' '.join(str(error).split())}"


def _differ(amount: int, currency: str, row: Found) -> bool:
    """Whether the service's amount or currency is not what the ledger recorded as fulfilled."""
    return amount != row.amount or not _same_currency(row.currency, currency)


def _same_currency(expected: object, actual: object) -> bool:
    """``same_currency`` (the ledger's ``expected``, the service's ``actual``), cached for
    three-character strings alone: a list has few currencies, each otherwise matched by a regular
    expression, and the cache lives with the process (a hostile currency may be a megabyte)."""
    if type(expected) is str and type(actual) is str and len(expected) == len(actual) == 3:
        return _same_code(expected, actual)
    return same_currency(expected, actual)


_same_code = functools.lru_cache(maxsize=256)(same_currency)


class _References:
    """A compact set of references: 8-byte digests (8 MB a million, not ~100 MB) in 256 arrays by
    top byte, each sorted when first searched, so sorting holds a 256th at most as Python ints. A
    digest is the string's cached hash (a reconcile runs in one process): two references sharing
    one (odds ~1 in 10^7 for a million) hide one "not listed" alarm. Methods take many a call."""

    def __init__(self) -> None:
        self._buckets = [array.array("Q") for _ in range(256)]
        self._unsorted: set[int] = set()

    def update(self, references: Iterable[str]) -> None:
        """Keep these references."""
        buckets, unsorted = self._buckets, self._unsorted
        for reference in references:
            digest = hash(reference) & _MASK
            buckets[digest >> 56].append(digest)
            unsorted.add(digest >> 56)

    def missing(self, references: Iterable[str]) -> list[str]:
        """Those of ``references`` not kept, in their order."""
        buckets, unsorted = self._buckets, self._unsorted
        missing: list[str] = []
        for reference in references:
            digest = hash(reference) & _MASK
            top = digest >> 56
            if top in unsorted:
                buckets[top] = array.array("Q", sorted(buckets[top]))
                unsorted.discard(top)
            digests = buckets[top]
            index = bisect.bisect_left(digests, digest)
            if index == len(digests) or digests[index] != digest:
                missing.append(reference)
        return missing


_MASK = 0xFFFF_FFFF_FFFF_FFFF
"""A hash (a signed int of the platform's width) as ``_References``' unsigned 64-bit digest."""


def reconcile_plan(
    *,
    fulfilling: bool,
    looking_up: bool = False,
    max_discrepancies: int = MAX_DISCREPANCIES,
    account: str = "",
) -> Generator[ReconcileStep, Any, ReconcileReport]:
    """Compare the list with the ledger, then fulfil what was missed (the list closed first, so a
    slow action never holds its stream open), then settle fulfilled rows the list did not show.
    ``looking_up``: a completed payment with no row is looked up (``FindOrder``): no order makes
    it not ours rather than missed. ``account``: the merchant account reconciled, as reported."""
    state = Reconciliation(max_discrepancies, account)
    while batch := (yield NextBatch(BATCH)):
        # a reference no database holds as it is (a NUL in it) has no row: not looked up
        held = [payment.reference for payment in batch if stored_as_is(payment.reference)]
        rows: Mapping[str, Found] = (yield LookUp(held)) if held else {}
        for payment in state.batch(batch, rows):
            if looking_up and payment.reference not in rows:
                try:
                    order: object = yield FindOrder(payment.reference)
                except Exception as error:  # the merchant's code failed: still missed
                    order = error
                state.ordered(payment, order)
            else:
                state.missed(payment)
        yield Checked(state.report.listed)
    yield CloseList()
    if fulfilling:
        for index, discrepancy in state.to_fulfil():
            try:
                result: FulfilResult[Any] | Exception = yield Fulfil(discrepancy.reference)
            except Exception as error:  # reported in the discrepancy; the run goes on
                result = error
            state.fulfilled(index, discrepancy, _fulfilment(result))
    after = ""
    while page := (yield FulfilledPage(after, PAGE)):
        unseen = state.unseen(page)
        found: Mapping[str, Found] = (yield LookUp(unseen)) if unseen else {}
        for reference in unseen:  # each still fulfilled: its full row, one query a page
            row = found.get(reference)
            if row is None or row.state != "fulfilled":
                continue
            try:
                verified: VerifiedPayment | None = yield Verify(row.reference)
            except PaymentNotFoundError:  # the service has never heard of it
                verified = None
            state.unlisted(row, verified)
        after = page[-1]
    return state.report


def _fulfilment(result: FulfilResult[Any] | Exception) -> str:
    """How handing a missed payment to ``fulfil`` went, as the report says it."""
    if isinstance(result, FulfilResult):
        return str(result.outcome)
    kind = "refused" if isinstance(result, PaymentVerificationError) else "error"
    return f"{kind}: {_said(result)}"

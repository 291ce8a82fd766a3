"""The reconcile loops, sync and async: fetch a batch, look its rows up, feed :mod:`._report`.

Payments are streamed with ``iter_payments``, so memory does not grow with the service's list.
"""

from __future__ import annotations

from collections.abc import (
    AsyncIterator,
    Callable,
    Iterator,
)
from typing import TYPE_CHECKING, Any, TypeVar

from .._errors import PaymentNotFoundError, PaymentVerificationError
from .._listed_models import ListedPayment
from .._models import VerifiedPayment
from ._plans import FulfilResult
from ._report import ReconcileReport, Reconciliation

if TYPE_CHECKING:
    from .._client import AsyncClient, Client, Lookup
    from ._ledger import AsyncLedger, Ledger

__all__ = ["reconcile", "reconcile_async"]

T = TypeVar("T")
BATCH = 500
PAGE = 2000
Progress = Callable[[int], object]
"""Called after each batch with the number of payments checked so far."""


def _batches(payments: Iterator[ListedPayment], size: int) -> Iterator[list[ListedPayment]]:
    batch: list[ListedPayment] = []
    for payment in payments:
        batch.append(payment)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


async def _abatches(
    payments: AsyncIterator[ListedPayment], size: int
) -> AsyncIterator[list[ListedPayment]]:
    batch: list[ListedPayment] = []
    async for payment in payments:
        batch.append(payment)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def _fulfilment(result: FulfilResult[Any] | Exception) -> str:
    """How handing a missed payment to ``fulfil`` went, as the report says it."""
    if isinstance(result, FulfilResult):
        return str(result.outcome)
    kind = "refused" if isinstance(result, PaymentVerificationError) else "error"
    return f"{kind}: {type(result).__name__}: {' '.join(str(result).split())}"


def reconcile(
    ledger: Ledger,
    client: Client,
    *,
    fulfil: Callable[[VerifiedPayment], object] | None,
    lookup: Lookup | None,
    progress: Progress | None,
    batch_size: int = BATCH,
) -> ReconcileReport:
    state = Reconciliation()
    with client.iter_payments() as payments:  # streamed: memory stays flat in the list
        for batch in _batches(payments, batch_size):
            rows = ledger.rows([payment.reference for payment in batch])
            for missed in state.batch(batch, rows):
                outcome: str | None = None
                if fulfil is not None:
                    try:
                        verified = client.verify_callback(
                            {"reference": missed.reference}, lookup=lookup
                        )
                        outcome = _fulfilment(ledger.fulfil_once(verified, fulfil))
                    except Exception as error:  # reported in the discrepancy; the run goes on
                        outcome = _fulfilment(error)
                state.missed(missed, outcome)
            if progress is not None:
                progress(state.report.listed)
    after = ""
    while page := ledger.fulfilled_after(after, PAGE):
        for row in state.unseen(page):
            try:
                state.unlisted(row, client.verify(row.reference))
            except PaymentNotFoundError:
                state.unlisted(row, None)
        after = page[-1].reference
    return state.report


async def reconcile_async(
    ledger: AsyncLedger,
    client: AsyncClient,
    *,
    fulfil: Callable[[VerifiedPayment], object] | None,
    lookup: Lookup | None,
    progress: Progress | None,
    batch_size: int = BATCH,
) -> ReconcileReport:
    state = Reconciliation()
    async with client.iter_payments() as payments:
        async for batch in _abatches(payments, batch_size):
            rows = await ledger.rows([payment.reference for payment in batch])
            for missed in state.batch(batch, rows):
                outcome: str | None = None
                if fulfil is not None:
                    try:
                        verified = await client.verify_callback(
                            {"reference": missed.reference}, lookup=lookup
                        )
                        outcome = _fulfilment(await ledger.fulfil_once(verified, fulfil))
                    except Exception as error:  # reported in the discrepancy; the run goes on
                        outcome = _fulfilment(error)
                state.missed(missed, outcome)
            if progress is not None:
                progress(state.report.listed)
    after = ""
    while page := await ledger.fulfilled_after(after, PAGE):
        for row in state.unseen(page):
            try:
                state.unlisted(row, await client.verify(row.reference))
            except PaymentNotFoundError:
                state.unlisted(row, None)
        after = page[-1].reference
    return state.report

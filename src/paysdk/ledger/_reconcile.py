"""The reconcile shells, sync and async: carry out the reconcile plan's steps.

The plan is :func:`._reconciliation.reconcile_plan`. Payments are streamed with
``iter_payments``, so memory does not grow with the service's list.
A step's exception is thrown into the plan, which decides what it means.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import AsyncIterator, Callable, Iterator
from typing import TYPE_CHECKING, cast

from .._models.listed import ListedPayment
from .._models.verified import VerifiedPayment
from ._reconciliation import (
    BATCH,
    Checked,
    CloseList,
    Fulfil,
    FulfilledPage,
    LookUp,
    NextBatch,
    ReconcileStep,
    Verify,
    reconcile_plan,
)
from ._report import MAX_DISCREPANCIES, ReconcileReport

if TYPE_CHECKING:
    from .._client.clients import AsyncClient, Client, Lookup
    from ._ledger import AsyncLedger, Ledger

__all__ = ["reconcile", "reconcile_async"]

Progress = Callable[[int], object]
"""Called after each batch with the number of payments checked so far."""


def reconcile(
    ledger: Ledger,
    client: Client,
    *,
    fulfil: Callable[[VerifiedPayment], object] | None,
    lookup: Lookup | None,
    progress: Progress | None,
    max_discrepancies: int = MAX_DISCREPANCIES,
    batch_size: int = BATCH,
) -> ReconcileReport:
    plan = reconcile_plan(
        fulfilling=fulfil is not None,
        batch_size=batch_size,
        max_discrepancies=max_discrepancies,
    )
    try:
        with contextlib.ExitStack() as listing:
            payments: Iterator[ListedPayment] | None = None
            step: ReconcileStep = next(plan)
            while True:
                reply: object = None
                try:
                    if isinstance(step, NextBatch):
                        if payments is None:  # streamed: memory stays flat in the list
                            payments = iter(listing.enter_context(client.iter_payments()))
                        reply = list(itertools.islice(payments, step.size))
                    elif isinstance(step, CloseList):
                        listing.close()
                    elif isinstance(step, LookUp):
                        reply = ledger.rows(step.references)
                    elif isinstance(step, Checked):
                        if progress is not None:
                            progress(step.listed)
                    elif isinstance(step, Fulfil):
                        assert fulfil is not None
                        found = {"reference": step.reference}
                        reply = ledger.fulfil_once(
                            client.verify_callback(found, lookup=lookup), fulfil
                        )
                    elif isinstance(step, FulfilledPage):
                        reply = ledger.fulfilled_after(step.after, step.limit)
                    else:
                        assert isinstance(step, Verify)
                        reply = client.verify(step.reference)
                except Exception as error:  # the plan decides: reported, skipped, or raised
                    step = plan.throw(error)
                    continue
                step = plan.send(reply)
    except StopIteration as done:
        return cast(ReconcileReport, done.value)


async def reconcile_async(
    ledger: AsyncLedger,
    client: AsyncClient,
    *,
    fulfil: Callable[[VerifiedPayment], object] | None,
    lookup: Lookup | None,
    progress: Progress | None,
    max_discrepancies: int = MAX_DISCREPANCIES,
    batch_size: int = BATCH,
) -> ReconcileReport:
    plan = reconcile_plan(
        fulfilling=fulfil is not None,
        batch_size=batch_size,
        max_discrepancies=max_discrepancies,
    )
    try:
        async with contextlib.AsyncExitStack() as listing:
            payments: AsyncIterator[ListedPayment] | None = None
            step: ReconcileStep = next(plan)
            while True:
                reply: object = None
                try:
                    if isinstance(step, NextBatch):
                        if payments is None:
                            payments = aiter(
                                await listing.enter_async_context(client.iter_payments())
                            )
                        reply = [payment async for payment in _take(payments, step.size)]
                    elif isinstance(step, CloseList):
                        await listing.aclose()
                    elif isinstance(step, LookUp):
                        reply = await ledger.rows(step.references)
                    elif isinstance(step, Checked):
                        if progress is not None:
                            progress(step.listed)
                    elif isinstance(step, Fulfil):
                        assert fulfil is not None
                        found = {"reference": step.reference}
                        verified = await client.verify_callback(found, lookup=lookup)
                        reply = await ledger.fulfil_once(verified, fulfil)
                    elif isinstance(step, FulfilledPage):
                        reply = await ledger.fulfilled_after(step.after, step.limit)
                    else:
                        assert isinstance(step, Verify)
                        reply = await client.verify(step.reference)
                except Exception as error:  # the plan decides: reported, skipped, or raised
                    step = plan.throw(error)
                    continue
                step = plan.send(reply)
    except StopIteration as done:
        return cast(ReconcileReport, done.value)


async def _take(payments: AsyncIterator[ListedPayment], size: int) -> AsyncIterator[ListedPayment]:
    """Up to ``size`` more payments of the stream, leaving the rest in it."""
    for _ in range(size):
        try:
            yield await anext(payments)
        except StopAsyncIteration:
            return

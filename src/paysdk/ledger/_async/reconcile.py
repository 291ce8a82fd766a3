"""The reconciliation plan's one driver: its steps (``_steps.RECONCILE_STEPS``) carried out with
a client and a ledger, the payments streamed (``iter_payments``) in flat memory; a step outside
the vocabulary is refused by ``async_drive``, never thrown in."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from ..._models.verified import VerifiedPayment
from ..._transport import async_drive
from .._reconcile.plan import reconcile_plan
from .._reconcile.report import MAX_DISCREPANCIES, ReconcileReport
from .._rows import FulfilResult
from .._steps import (
    RECONCILE_STEPS,
    Checked,
    CloseList,
    FindOrder,
    Found,
    Fulfil,
    FulfilledPage,
    LookUp,
    NextBatch,
    ReconcileStep,
    Verify,
)
from .._twins import AsyncPayments, async_order_of, async_take

if TYPE_CHECKING:
    from ..._client._async.client import AsyncClient
    from ..._client.base import Lookup

__all__ = ["AsyncLedgerView", "reconcile"]


class AsyncLedgerView(Protocol):
    """What reconcile needs of a ledger: its rows and fulfilled references, ``fulfil_once``, and
    its refusal of a client whose rows are not its own."""

    async def _check_reconciled_key(self, client: AsyncClient) -> None: ...

    async def _found_rows(self, references: Sequence[str], *, account: str) -> dict[str, Found]: ...

    async def fulfil_once(
        self, payment: VerifiedPayment, action: Callable[[VerifiedPayment], object]
    ) -> FulfilResult[Any]: ...

    async def _fulfilled_references_after(
        self, after: str, limit: int, /, *, account: str
    ) -> list[str]: ...


async def reconcile(
    ledger: AsyncLedgerView,
    client: AsyncClient,
    *,
    fulfil: Callable[[VerifiedPayment], object] | None,
    lookup: Lookup | None,
    progress: Callable[[int], object] | None,
    max_discrepancies: int = MAX_DISCREPANCIES,
) -> ReconcileReport:
    await ledger._check_reconciled_key(client)
    plan = reconcile_plan(
        fulfilling=fulfil is not None,
        looking_up=lookup is not None,
        max_discrepancies=max_discrepancies,
        account=client.account,
    )
    async with contextlib.AsyncExitStack() as listing:
        payments: AsyncPayments | None = None

        async def carry_out(step: ReconcileStep) -> object:
            nonlocal payments
            if isinstance(step, NextBatch):
                if payments is None:  # streamed: memory stays flat in the list
                    payments = aiter(await listing.enter_async_context(client.iter_payments()))
                return await async_take(payments, step.size)
            if isinstance(step, CloseList):
                await listing.aclose()
            elif isinstance(step, LookUp):
                return await ledger._found_rows(step.references, account=client.account)
            elif isinstance(step, Checked):
                if progress is not None:
                    progress(step.listed)
            elif isinstance(step, FindOrder):
                assert lookup is not None
                return await async_order_of(lookup(step.reference))
            elif isinstance(step, Fulfil):
                assert fulfil is not None
                found = {"reference": step.reference}
                verified = await client.verify_callback(found, lookup=lookup)
                return await ledger.fulfil_once(verified, fulfil)
            elif isinstance(step, FulfilledPage):
                return await ledger._fulfilled_references_after(
                    step.after, step.limit, account=client.account
                )
            elif isinstance(step, Verify):
                return await client.verify(step.reference)
            return None

        # a step's failure is thrown in: the plan reports, skips or raises it
        return await async_drive(plan, carry_out, RECONCILE_STEPS, Exception)

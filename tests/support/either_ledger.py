"""One awaitable surface over a Ledger or an AsyncLedger, so each behaviour is tested on both."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import paysdk
from paysdk.ledger import AsyncLedger, FulfilResult, Ledger, LedgerRow


def paid(reference: str = "order-1", amount: int = 2500, currency: str = "NGN") -> Any:
    return paysdk.VerifiedPayment(
        reference=reference, amount=amount, currency=currency, success=True
    )


class EitherLedger:
    """A Ledger or an AsyncLedger behind one awaitable surface; actions are written sync."""

    def __init__(self, ledger: Ledger | AsyncLedger) -> None:
        self.ledger = ledger

    async def fulfil_once(
        self, payment: Any, action: Callable[[paysdk.VerifiedPayment], Any]
    ) -> FulfilResult[Any]:
        if isinstance(self.ledger, Ledger):
            return self.ledger.fulfil_once(payment, action)

        async def async_action(payment: paysdk.VerifiedPayment) -> Any:
            return action(payment)

        return await self.ledger.fulfil_once(payment, async_action)

    async def close(self) -> None:
        if isinstance(self.ledger, Ledger):
            self.ledger.close()
        else:
            await self.ledger.close()

    async def row(self, reference: str, account: str = "") -> LedgerRow | None:
        if isinstance(self.ledger, Ledger):
            return self.ledger.row(reference, account=account)
        return await self.ledger.row(reference, account=account)

    async def rows(self, references: list[str], account: str = "") -> dict[str, LedgerRow]:
        if isinstance(self.ledger, Ledger):
            return self.ledger.rows(references, account=account)
        return await self.ledger.rows(references, account=account)

    async def resolve(self, reference: str, *, ran: bool, account: str = "") -> LedgerRow:
        if isinstance(self.ledger, Ledger):
            return self.ledger.resolve(reference, ran=ran, account=account)
        return await self.ledger.resolve(reference, ran=ran, account=account)

    async def refuse(self, payment: Any, reason: str, account: str = "") -> LedgerRow:
        if isinstance(self.ledger, Ledger):
            return self.ledger.refuse(payment, reason, account=account)
        return await self.ledger.refuse(payment, reason, account=account)

    async def ignore(self, payment: Any, reason: str, account: str = "") -> LedgerRow:
        if isinstance(self.ledger, Ledger):
            return self.ledger.ignore(payment, reason, account=account)
        return await self.ledger.ignore(payment, reason, account=account)

    async def retire_key(self) -> int:
        if isinstance(self.ledger, Ledger):
            return self.ledger.retire_key()
        return await self.ledger.retire_key()

    async def rows_after(
        self, after: str = "", limit: int = 500, *, state: str | None = None
    ) -> list[LedgerRow]:
        if isinstance(self.ledger, Ledger):
            return self.ledger.rows_after(after, limit, state=state)
        return await self.ledger.rows_after(after, limit, state=state)


MakeLedger = Callable[..., EitherLedger]

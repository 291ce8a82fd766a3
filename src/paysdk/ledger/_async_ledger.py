"""``AsyncLedger``: the async twin of ``Ledger``, running the same plans with ``_async/run.py``
and reconciling with ``_async/reconcile.py``."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar, overload

from typing_extensions import Self

from .._client.tracing import call_span
from .._core.config import check_account
from .._models.verified import VerifiedPayment
from . import _plans
from ._async import reconcile as async_reconcile
from ._async import run as async_run
from ._driver import AsyncDriver
from ._report import MAX_DISCREPANCIES, ReconcileReport
from ._rows import FulfilResult, LedgerRow
from ._steps import LedgerPlan

if TYPE_CHECKING:
    from .._client._async.client import AsyncClient
    from .._client.base import Lookup
from ._base import BaseLedger, check_limit, needs_lookup

__all__ = ["AsyncLedger"]

T = TypeVar("T")


class AsyncLedger(BaseLedger):
    """The asynchronous twin of ``Ledger``: the same plans, awaited; actions may be async."""

    _driver: AsyncDriver

    def _open_driver(self) -> AsyncDriver:
        if self._backend == "sqlite":
            from ._sqlite import AsyncSQLiteDriver

            return AsyncSQLiteDriver(
                self._where, busy_timeout=self.timeout, create=self._create_table
            )
        from ._postgres import AsyncPostgresDriver

        return AsyncPostgresDriver(self._where, timeout=self.timeout)

    @overload
    async def fulfil_once(
        self, payment: VerifiedPayment, action: Callable[[VerifiedPayment], Awaitable[T]]
    ) -> FulfilResult[T]: ...

    @overload
    async def fulfil_once(
        self, payment: VerifiedPayment, action: Callable[[VerifiedPayment], T]
    ) -> FulfilResult[T]: ...

    async def fulfil_once(
        self, payment: VerifiedPayment, action: Callable[[VerifiedPayment], object]
    ) -> FulfilResult[Any]:
        """Run ``action(payment)``, awaiting what it returns if awaitable, unless this reference
        was fulfilled or is being fulfilled. A plain function runs on the event loop: keep it quick.

        Args:
            payment: the verified payment.
            action: what fulfilling it means; a coroutine function or a plain one.

        Returns:
            Whether it ran here (and what it returned), was already fulfilled, or is being
            fulfilled by another worker.

        Raises:
            UnverifiedPaymentError: ``payment`` is not a ``VerifiedPayment``.
            UnrecordedFulfilmentError: the action ran but could not be recorded.
            LeaseLostError: the action ran, but a person resolved its claim meanwhile.
            LedgerError: the database failed or refused (the cause is chained).
        """
        plan = self._fulfil_plan(payment)  # refuses what is not a verified payment
        span = call_span("fulfil_once", payment.reference)
        with span, span.current():  # what the action traces nests under the fulfilment
            result = await self._run(plan, action, payment)
            span.add("paysdk.fulfilment.outcome", result.outcome.value)
        return result

    async def rows(self, references: Sequence[str], *, account: str = "") -> dict[str, LedgerRow]:
        """The ledger's rows for these references (those that have one).

        Args:
            references: the payments' references.
            account: the merchant account's label (``Client(account=...)``); ``""``, the
                default, for an unlabelled one.

        Returns:
            Each reference that has a row, with its row.

        Raises:
            LedgerError: the database failed or refused (the cause is chained).
        """
        label = check_account(account)
        return await self._run(_plans.rows_for(self._driver.dialect, self.table, references, label))

    async def row(self, reference: str, *, account: str = "") -> LedgerRow | None:
        """The ledger's row for one reference.

        Args:
            reference: the payment's reference.
            account: the merchant account's label (``Client(account=...)``); ``""``, the
                default, for an unlabelled one.

        Returns:
            Its row; ``None`` if the ledger has none.

        Raises:
            LedgerError: the database failed or refused (the cause is chained).
        """
        return (await self.rows([reference], account=account)).get(reference)

    async def _fulfilled_references_after(
        self, after: str, limit: int, /, *, account: str
    ) -> list[str]:
        """The references alone of a page of one account's fulfilled rows, in order, after
        ``after``: reconcile's last pass, which needs no more of each row."""
        label = check_account(account)
        return await self._run(_plans.fulfilled_references_after(self.table, after, limit, label))

    async def rows_after(
        self, after: str = "", limit: int = 500, *, state: str | None = None, account: str = ""
    ) -> list[LedgerRow]:
        """A page of rows in reference order, of one state or all; see
        [`Ledger.rows_after`][paysdk.ledger.Ledger.rows_after].

        Args:
            after: the last reference of the previous page (``""`` for the first).
            limit: the most rows to return.
            state: one of the ledger's states, or ``None`` for every row.
            account: the merchant account's label (``Client(account=...)``); ``""``, the
                default, for an unlabelled one.

        Returns:
            Up to ``limit`` rows whose reference sorts after ``after``.

        Raises:
            ConfigurationError: an unknown state, or a limit that is not a positive int.
            LedgerError: the database failed or refused (the cause is chained).
        """
        return await self._run(self._rows_plan(after, limit, state, account))

    async def resolve(self, reference: str, *, ran: bool, account: str = "") -> LedgerRow:
        """Settle a payment whose outcome is ``unknown``; see ``Ledger.resolve``.

        Args:
            reference: the payment's reference.
            ran: whether the action did run.
            account: the merchant account's label (``Client(account=...)``); ``""``, the
                default, for an unlabelled one.

        Returns:
            The payment's row as it now is.

        Raises:
            LedgerError: it is not in the ``unknown`` state (or the database failed).
        """
        return await self._run(self._resolve_plan(reference, ran, account))

    async def refuse(
        self, payment: VerifiedPayment | str, reason: str, *, account: str = ""
    ) -> LedgerRow:
        """Record that you declined a payment; see [`Ledger.refuse`][paysdk.ledger.Ledger.refuse].

        Args:
            payment: the verified payment, or its reference.
            reason: why.
            account: the account of a bare reference (a payment names its own); ``""``, the
                default, for an unlabelled one.

        Returns:
            The payment's row as it now is.

        Raises:
            InvalidReferenceError: the reference is not one the service could have issued.
            ConfigurationError: the reason is empty or longer than 1000 characters.
            LedgerError: the database failed.
        """
        return await self._run(self._set_aside_plan(payment, "refused", reason, account))

    async def ignore(
        self, payment: VerifiedPayment | str, reason: str, *, account: str = ""
    ) -> LedgerRow:
        """Record that a payment is not yours; see [`Ledger.ignore`][paysdk.ledger.Ledger.ignore].

        Args:
            payment: the verified payment, or its reference.
            reason: why.
            account: the account of a bare reference (a payment names its own); ``""``, the
                default, for an unlabelled one.

        Returns:
            The payment's row as it now is.

        Raises:
            InvalidReferenceError: the reference is not one the service could have issued.
            ConfigurationError: the reason is empty or longer than 1000 characters.
            LedgerError: the database failed.
        """
        return await self._run(self._set_aside_plan(payment, "ignored", reason, account))

    async def reconcile(
        self,
        client: AsyncClient,
        *,
        fulfil: Callable[[VerifiedPayment], object] | None = None,
        lookup: Lookup | None = None,
        progress: Callable[[int], object] | None = None,
        max_discrepancies: int = MAX_DISCREPANCIES,
    ) -> ReconcileReport:
        """Compare the service's payments with the ledger; ``fulfil`` may be async here.

        Args:
            client: the async client that lists and verifies the payments.
            fulfil: the action for a missed payment (may be async); ``None``: only report it.
            lookup: finds each missed payment's order ([`Lookup`][paysdk.Lookup]); needed
                with ``fulfil``.
            progress: called with the number of payments compared so far.
            max_discrepancies: the most discrepancies the report keeps.

        Returns:
            The [`ReconcileReport`][paysdk.ledger.ReconcileReport].

        Raises:
            ConfigurationError: ``fulfil`` without ``lookup``, or ``max_discrepancies`` not a
                positive int.
            APIError: the service failed to list or verify (after the retries).
            APIConnectionError: no answer from the service (after the retries).
            LedgerError: the database failed or refused (the cause is chained).
        """
        needs_lookup(fulfil, lookup)
        return await async_reconcile.reconcile(
            self,
            client,
            fulfil=fulfil,
            lookup=lookup,
            progress=progress,
            max_discrepancies=check_limit(max_discrepancies),
        )

    async def create_table(self) -> None:
        """Create the ledger's table if it does not exist (done on first use by default).

        Raises:
            LedgerError: the database failed or refused (the cause is chained).
        """
        schema = _plans.ensure_schema(self._driver.dialect, self.table)
        await async_run.run_plan(self._driver, schema, timeout=self.timeout)
        self._ready = True

    async def close(self) -> None:
        """Close the ledger's database connections."""
        await self._driver.close()

    aclose = close

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def _run(
        self,
        plan: LedgerPlan[T],
        action: Callable[[Any], object] | None = None,
        payment: object = None,
    ) -> T:
        if not self._ready:
            await self.create_table()
        return await async_run.run_plan(self._driver, plan, action, payment, timeout=self.timeout)

"""The ledger's shell: ``AsyncLedger`` runs the ledger's plans with ``run.py`` and reconciles with
``reconcile.py`` beside it; what only one of the two ledgers does is in ``_twins.py``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from ..._client.tracing import call_span
from ..._core.closing import AsyncCloses
from ..._core.config import check_account
from ..._models.verified import VerifiedPayment
from .. import _accounts, _checks, _migration, _reads
from .._base import BaseLedger, check_limit, needs_lookup
from .._databases.driver import AsyncDriver
from .._reconcile.report import MAX_DISCREPANCIES, ReconcileReport
from .._rows import FulfilResult, LedgerRow
from .._steps import Found, LedgerPlan
from .._twins import AsyncFulfilOnce
from .reconcile import reconcile as reconcile_ledger
from .run import run_plan

if TYPE_CHECKING:
    from ..._client._async.client import AsyncClient
    from ..._client.base import Lookup

__all__ = ["AsyncLedger"]

T = TypeVar("T")


class AsyncLedger(AsyncFulfilOnce, AsyncCloses, BaseLedger):
    """Fulfil each payment exactly once, across threads, processes and machines.

    ``AsyncLedger("sqlite:///orders.db")`` (or a path) or
    ``AsyncLedger("postgresql://user@host/db")``. Keep one per process (``Ledger`` is
    thread-safe and fork-safe). The sync and async ledgers run the same plans; the async one
    awaits them, and its actions may be async.
    """

    _driver: AsyncDriver

    def _open_driver(self) -> AsyncDriver:
        if self._backend == "sqlite":
            from .._databases.sqlite import AsyncSQLiteDriver

            return AsyncSQLiteDriver(
                self._where,
                busy_timeout=self.timeout,
                create=self._create_table,
            )
        from .._databases._async.postgres import AsyncPostgresDriver

        return AsyncPostgresDriver(self._where, timeout=self.timeout)

    async def _fulfil(
        self, payment: VerifiedPayment, action: Callable[[VerifiedPayment], object]
    ) -> FulfilResult[Any]:
        """``fulfil_once`` once its action is accepted: the plan, run inside the call's span."""
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
            ConfigurationError: ``references`` is one string (``row`` takes one reference), or
                holds one that is not a string.
            LedgerError: the database failed or refused (the cause is chained).
        """
        label, checked = check_account(account), _checks.check_references(references)
        return await self._run(_reads.rows_for(self._driver.dialect, self.table, checked, label))

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

    async def _found_rows(self, references: Sequence[str], *, account: str) -> dict[str, Found]:
        """What reconcile compares of these references' rows (``_reads.found_for``)."""
        label, dialect = check_account(account), self._driver.dialect
        return await self._run(_reads.found_for(dialect, self.table, references, label))

    async def _fulfilled_references_after(
        self,
        after: str,
        limit: int,
        /,
        *,
        account: str,
    ) -> list[str]:
        """A page of one account's fulfilled references (``_reads.fulfilled_references_after``)."""
        label = check_account(account)
        return await self._run(_reads.fulfilled_references_after(self.table, after, limit, label))

    async def _label_meant(self, account: str) -> str | None:
        """The label that holds rows where ``account`` holds none (``_accounts.label_meant``)."""
        label, dialect = check_account(account), self._driver.dialect
        return await self._run(_accounts.label_meant(dialect, self.table, label))

    async def rows_after(
        self, after: str = "", limit: int = 500, *, state: str | None = None, account: str = ""
    ) -> list[LedgerRow]:
        """A page of rows in reference order, of one state or all: iterate with the last one's
        reference, in constant memory.

        Args:
            after: the last reference of the previous page (``""`` for the first).
            limit: the most rows to return.
            state: ``claimed``, ``fulfilled``, ``released``, ``refused``, ``ignored`` or
                ``unknown``; ``None`` for every row.
            account: the merchant account's label (``Client(account=...)``); ``""``, the
                default, for an unlabelled one.

        Returns:
            Up to ``limit`` rows whose reference sorts after ``after``.

        Raises:
            ConfigurationError: an unknown state, a limit that is not a positive int, or an
                ``after`` that is not a str or holds what no reference does (a NUL, a lone
                surrogate).
            LedgerError: the database failed or refused (the cause is chained).
        """
        return await self._run(self._rows_plan(after, limit, state, account))

    async def resolve(self, reference: str, *, ran: bool, account: str = "") -> LedgerRow:
        """Settle a payment whose outcome is ``unknown``, once a person checked what happened.

        Args:
            reference: the payment's reference (reconcile lists it as ``unknown``).
            ran: ``True`` if the action did run (the payment is recorded fulfilled), ``False``
                if it did not (the claim is released: the next delivery or reconcile runs it).
            account: the merchant account's label (``Client(account=...)``); ``""``, the
                default, for an unlabelled one.

        Returns:
            The payment's row as it now is.

        Raises:
            ConfigurationError: ``reference`` is not a string.
            LedgerError: it is not in the ``unknown`` state (or the database failed).
        """
        return await self._run(self._resolve_plan(reference, ran, account))

    async def refuse(
        self, payment: VerifiedPayment | str, reason: str, *, account: str = ""
    ) -> LedgerRow:
        """Record that you declined a payment (its amount does not match the order, it failed,
        there is no such order), so reconcile reports it as refused rather than missed.

        A fulfilled or claimed payment keeps its state; the returned row says which. A later
        delivery whose checks pass still fulfils a refused payment.

        Args:
            payment: the verified payment, or its reference.
            reason: why, as reconcile and ``paysdk ledger`` show it.
            account: the account of a bare reference (a payment names its own); ``""``, the
                default, for an unlabelled one.

        Returns:
            The payment's row as it now is.

        Raises:
            InvalidReferenceError: the reference is not one the service could have issued.
            ConfigurationError: the reason is empty or longer than 1000 characters,
                ``account`` names another account than the payment's own, or (a bare
                reference) a label holding no other payment that the ledger holds payments
                under in another case, or no label where the unlabelled account holds no
                other payment and labels hold some.
            LedgerError: the database failed.
        """
        return await self._run(self._set_aside_plan(payment, "refused", reason, account))

    async def ignore(
        self, payment: VerifiedPayment | str, reason: str, *, account: str = ""
    ) -> LedgerRow:
        """Record that a payment is not yours to fulfil (another shop's, a test), with why, so
        reconcile stops reporting it as missed; otherwise as
        [`refuse`][paysdk.ledger.AsyncLedger.refuse].

        Args:
            payment: the verified payment, or its reference.
            reason: why, as reconcile and ``paysdk ledger`` show it.
            account: the account of a bare reference (a payment names its own); ``""``, the
                default, for an unlabelled one.

        Returns:
            The payment's row as it now is.

        Raises:
            InvalidReferenceError: the reference is not one the service could have issued.
            ConfigurationError: the reason is empty or longer than 1000 characters,
                ``account`` names another account than the payment's own, or (a bare
                reference) a label holding no other payment that the ledger holds payments
                under in another case, or no label where the unlabelled account holds no
                other payment and labels hold some.
            LedgerError: the database failed.
        """
        return await self._run(self._set_aside_plan(payment, "ignored", reason, account))

    async def retire_key(self) -> int:
        """Clear the key fingerprints of the unlabelled rows (account ``""``), after rotating an
        unlabelled client's secret key (or changing its ``base_url``), which the ledger would
        otherwise refuse as another account's.

        Call it once the old key is retired, before the new key's first callback: the next
        unlabelled payment records the new key's fingerprint. The rows stay the unlabelled
        account's, so a replayed callback of the old key still finds its row and is not run
        again; labelling the client instead would start a new account, which the old rows do not
        cover. Labelled accounts' rows are untouched. It runs, in one transaction,
        ``UPDATE paysdk_fulfilments SET verified_by = NULL WHERE account = ''`` on its table.

        Returns:
            How many rows it cleared (0 if none held a fingerprint).

        Raises:
            LedgerError: the database failed or refused (the cause is chained).
        """
        return await self._run(_accounts.retire_key(self.table))

    async def reconcile(
        self,
        client: AsyncClient,
        *,
        fulfil: Callable[[VerifiedPayment], object] | None = None,
        lookup: Lookup | None = None,
        progress: Callable[[int], object] | None = None,
        max_discrepancies: int = MAX_DISCREPANCIES,
    ) -> ReconcileReport:
        """Compare the service's payments with the ledger; see ``ReconcileReport``.

        A completed payment refused or ignored in the ledger is reported as such, not missed.
        ``lookup`` (the merchant's order by reference) tells reconcile which payments are
        yours: one with no row and no order is reported as not ours, not missed. With
        ``fulfil`` (which needs ``lookup``), a missed payment is verified against its order and
        fulfilled through ``fulfil_once``, which says whether ``fulfil`` may be async. The report
        keeps at most ``max_discrepancies`` (counting all); missed ones beyond wait for the next
        run.

        Args:
            client: the [`AsyncClient`][paysdk.AsyncClient] that lists and verifies the
                payments.
            fulfil: the action for a missed payment, as ``fulfil_once`` takes it; ``None``:
                only report it.
            lookup: finds each payment's order ([`Lookup`][paysdk.Lookup]); needed with
                ``fulfil``.
            progress: called with the number of payments compared so far.
            max_discrepancies: the most discrepancies the report keeps.

        Returns:
            The [`ReconcileReport`][paysdk.ledger.ReconcileReport].

        Raises:
            ConfigurationError: ``fulfil`` without ``lookup``, ``max_discrepancies`` not a
                positive int, or rows that would not be the client's: its key verified rows
                held under another account label, or (unlabelled) another key verified the
                unlabelled rows.
            APIError: the service failed to list or verify (after the retries).
            APIConnectionError: no answer from the service (after the retries).
            LedgerError: the database failed or refused (the cause is chained).
        """
        needs_lookup(fulfil, lookup)
        return await reconcile_ledger(
            self,
            client,
            fulfil=fulfil,
            lookup=lookup,
            progress=progress,
            max_discrepancies=check_limit(max_discrepancies),
        )

    async def _check_reconciled_key(self, client: AsyncClient) -> None:
        """Refuse a client whose rows would not be its own (``_accounts.check_reconciled_key``)."""
        config = client._config
        issuer = "" if config.unset else config.issuer
        await self._run(_accounts.check_reconciled_key(self.table, config.account, issuer))

    async def create_table(self) -> None:
        """Create the ledger's table if it does not exist (done on first use by default).

        Raises:
            LedgerError: the database failed or refused (the cause is chained).
        """
        schema = _migration.ensure_schema(self._driver.dialect, self.table)
        await run_plan(self._driver, schema, timeout=self.timeout)
        self._ready = True

    async def close(self) -> None:
        """Close the ledger's database connections."""
        await self._driver.close()

    async def _run(
        self,
        plan: LedgerPlan[T],
        action: Callable[[Any], object] | None = None,
        payment: object = None,
    ) -> T:
        if not self._ready:
            await self.create_table()
        return await run_plan(self._driver, plan, action, payment, timeout=self.timeout)

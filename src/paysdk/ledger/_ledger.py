"""``Ledger`` and ``AsyncLedger``: thin shells that run :mod:`._plans` on a database driver.

Each runs the plans with its own runner (``_sync/run.py``, ``_async/run.py``), and reconciles
with its own loop (``_sync/reconcile.py``, ``_async/reconcile.py``): one source each, the async
one, from which ``scripts/unasync.py`` generates the sync.
"""

from __future__ import annotations

import datetime as dt
import inspect
import os
import re
import urllib.parse
from collections.abc import Awaitable, Callable, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar, cast, overload

from typing_extensions import Self

from .._client.tracing import call_span
from .._errors import ConfigurationError
from .._models.verified import VerifiedPayment
from . import _plans, _sql
from ._async import reconcile as async_reconcile
from ._async import run as async_run
from ._driver import AsyncDriver, Driver
from ._plans import FulfilResult, LedgerPlan, LedgerRow
from ._report import MAX_DISCREPANCIES, ReconcileReport
from ._sync import reconcile as sync_reconcile
from ._sync import run as sync_run

if TYPE_CHECKING:
    from .._client.clients import AsyncClient, Client, Lookup

__all__ = ["AsyncLedger", "Ledger"]

T = TypeVar("T")
DEFAULT_LEASE = dt.timedelta(minutes=5)
_SCHEME = re.compile(r"^([a-z][a-z0-9+.-]*)://", re.IGNORECASE)


def _server(url: str) -> str:
    """``scheme://host:port/database`` of a server URL: never its user, password or query."""
    parts = urllib.parse.urlsplit(url)
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}{parts.path}"


def _target(url: str | os.PathLike[str]) -> tuple[str, str]:
    """``("sqlite", path)`` or ``("postgresql", url)`` for what a merchant may give."""
    if not isinstance(url, str):
        if isinstance(url, os.PathLike):
            return "sqlite", os.fspath(url)
        raise ConfigurationError(f"a ledger needs a URL or a path, not {type(url).__name__}")
    scheme = _SCHEME.match(url)
    if scheme is None:
        return "sqlite", url
    name = scheme.group(1).lower()
    if name == "sqlite":  # SQLAlchemy's form: sqlite:///relative.db, sqlite:////absolute.db
        return "sqlite", url[len("sqlite:///") :] if url.lower().startswith("sqlite:///") else ""
    if name in ("postgresql", "postgres"):
        return "postgresql", url
    raise ConfigurationError(
        f"unsupported ledger URL scheme {name!r}: use sqlite:///path.db, a path, "
        "or postgresql://user@host/db"
    )


def sqlite_file(url: str | os.PathLike[str]) -> str | None:
    """The file a SQLite ledger's URL or path names; ``None`` for a server or an in-memory one.

    Args:
        url: what ``Ledger`` takes: ``sqlite:///path.db``, a path, or ``postgresql://...``.

    Raises:
        ConfigurationError: the URL names a database the ledger does not support.
    """
    kind, target = _target(url)
    return target if kind == "sqlite" and target not in ("", ":memory:") else None


class _BaseLedger:
    """What both ledgers share: the URL, the table, the lease, and their presentation."""

    backend: str
    """``"sqlite"`` or ``"postgresql"``: the database the URL names."""

    def __init__(
        self,
        url: str | os.PathLike[str],
        *,
        lease: float | dt.timedelta = DEFAULT_LEASE,
        table: str = _sql.DEFAULT_TABLE,
        create_table: bool = True,
        timeout: float = 30.0,
    ) -> None:
        """``lease``: how long a claim holds before another worker may take it over (seconds),
        by the database's clock.

        ``create_table=False`` when your migrations own the table (see docs/fulfilment.md).
        ``timeout``: the longest one database wait may take, in seconds: a lock (both), or on
        PostgreSQL connecting, a dead peer, a statement (twice it): beyond it, LedgerError, so a
        stuck worker or database fails a call instead of hanging it.
        """
        self.backend, self._where = _target(url)
        if self.backend == "sqlite":
            from ._sqlite import sqlite_path

            self._where = sqlite_path(self._where)
        self._settle(lease=lease, table=table, create_table=create_table, timeout=timeout)

    def _settle(
        self, *, lease: float | dt.timedelta, table: str, create_table: bool, timeout: float
    ) -> None:
        """Check and keep what every ledger takes, then open its driver (``_open_driver``): the
        one step a ledger on another connection (Django's, SQLAlchemy's) shares with this one."""
        self.lease: dt.timedelta = _plans.check_lease(lease)
        self.table: str = _plans.check_table(table)
        if not isinstance(timeout, (int, float)) or not timeout > 0:
            raise ConfigurationError(f"timeout must be a positive number, not {timeout!r}")
        self.timeout: float = float(timeout)
        self._create_table = create_table
        self._ready = not create_table
        self._driver = self._open_driver()

    def _open_driver(self) -> Any:
        raise NotImplementedError

    def __repr__(self) -> str:
        where = self._where if self.backend == "sqlite" else _server(self._where)
        return f"<paysdk.{type(self).__name__} {self.backend} {where!r} table={self.table!r}>"

    @property
    def record_for(self) -> float:
        """How long, in seconds, to keep trying to record what an action did once it ran:
        twice the ledger's timeout (60 s by default), so a database restart or failover of a
        few seconds never leaves an action that ran unrecorded."""
        return 2 * self.timeout

    def _fulfil_plan(self, payment: object) -> LedgerPlan[FulfilResult[Any]]:
        checked = _plans.check_payable(payment)
        return _plans.fulfil_once(
            self._driver.dialect, self.table, checked, self.lease, record_for=self.record_for
        )

    def _resolve_plan(self, reference: str, ran: object) -> LedgerPlan[LedgerRow]:
        if not isinstance(ran, bool):
            raise ConfigurationError(f"resolve needs ran=True or ran=False, not {ran!r}")
        return _plans.resolve(self._driver.dialect, self.table, reference, ran=ran)

    def _rows_plan(self, after: str, limit: object, state: object) -> LedgerPlan[list[LedgerRow]]:
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
            raise ConfigurationError(f"limit must be a positive int, not {limit!r}")
        checked = _plans.check_state(state)
        return _plans.rows_after(self._driver.dialect, self.table, after, limit, checked)

    def _set_aside_plan(
        self, payment: VerifiedPayment | str, state: _plans.SetAside, reason: object
    ) -> LedgerPlan[LedgerRow]:
        target, checked = _plans.set_aside_target(payment), _plans.check_reason(reason)
        return _plans.set_aside(self._driver.dialect, self.table, target, state, checked)


class Ledger(_BaseLedger):
    """Fulfil each payment exactly once, across threads, processes and machines.

    ``Ledger("sqlite:///orders.db")`` (or a path) or ``Ledger("postgresql://user@host/db")``.
    Thread-safe and fork-safe; keep one per process.
    """

    _driver: Driver

    def _open_driver(self) -> Driver:
        if self.backend == "sqlite":
            from ._sqlite import SQLiteDriver

            return SQLiteDriver(self._where, busy_timeout=self.timeout, create=self._create_table)
        from ._postgres import PostgresDriver

        return PostgresDriver(self._where, timeout=self.timeout)

    def fulfil_once(
        self, payment: VerifiedPayment, action: Callable[[VerifiedPayment], T]
    ) -> FulfilResult[T]:
        """Run ``action(payment)`` unless this reference was fulfilled or is being fulfilled.

        If ``action`` raises, nothing is recorded as fulfilled, the claim is released (the next
        delivery retries) and the exception propagates. An action that returns an awaitable is
        refused the same way (ConfigurationError): only :class:`AsyncLedger` can await it.
        """
        if inspect.iscoroutinefunction(action):
            raise ConfigurationError("an async action needs paysdk.AsyncLedger")
        plan = self._fulfil_plan(payment)  # refuses what is not a verified payment
        span = call_span("fulfil_once", payment.reference)
        with span, span.current():  # what the action traces nests under the fulfilment
            result = self._run(plan, action, payment)
            span.add("paysdk.fulfilment.outcome", result.outcome.value)
        return cast("FulfilResult[T]", result)

    def rows(self, references: Sequence[str]) -> dict[str, LedgerRow]:
        """The ledger's rows for these references (those that have one)."""
        return self._run(_plans.rows_for(self._driver.dialect, self.table, references))

    def row(self, reference: str) -> LedgerRow | None:
        return self.rows([reference]).get(reference)

    def fulfilled_after(self, after: str = "", limit: int = 500) -> list[LedgerRow]:
        """A page of fulfilled rows in reference order: iterate with the last one's reference."""
        return self._run(_plans.fulfilled_after(self._driver.dialect, self.table, after, limit))

    def fulfilled_references_after(self, after: str = "", limit: int = 2000) -> list[str]:
        """The references alone of a page of fulfilled rows, in order (reconcile's last pass)."""
        return self._run(_plans.fulfilled_references_after(self.table, after, limit))

    def rows_after(
        self, after: str = "", limit: int = 500, *, state: str | None = None
    ) -> list[LedgerRow]:
        """A page of rows in reference order, of one state or all: iterate with the last one's
        reference, in constant memory.

        Args:
            after: the last reference of the previous page (``""`` for the first).
            limit: the most rows to return.
            state: ``claimed``, ``fulfilled``, ``released``, ``refused``, ``ignored`` or
                ``unknown``; ``None`` for every row.

        Raises:
            ConfigurationError: an unknown state, or a limit that is not a positive int.
        """
        return self._run(self._rows_plan(after, limit, state))

    def resolve(self, reference: str, *, ran: bool) -> LedgerRow:
        """Settle a payment whose outcome is ``unknown``, once a person checked what happened.

        Args:
            reference: the payment's reference (reconcile lists it as ``unknown``).
            ran: ``True`` if the action did run (the payment is recorded fulfilled), ``False``
                if it did not (the claim is released: the next delivery or reconcile runs it).

        Returns:
            The payment's row as it now is.

        Raises:
            LedgerError: it is not in the ``unknown`` state (or the database failed).
        """
        return self._run(self._resolve_plan(reference, ran))

    def refuse(self, payment: VerifiedPayment | str, reason: str) -> LedgerRow:
        """Record that you declined a payment (its amount does not match the order, it failed,
        there is no such order), so reconcile reports it as refused rather than missed.

        A fulfilled or claimed payment keeps its state; the returned row says which. A later
        delivery whose checks pass still fulfils a refused payment.

        Args:
            payment: the verified payment, or its reference.
            reason: why, as reconcile and ``paysdk ledger`` show it.

        Returns:
            The payment's row as it now is.

        Raises:
            InvalidReferenceError: the reference is not one the service could have issued.
            ConfigurationError: the reason is empty or longer than 1000 characters.
            LedgerError: the database failed.
        """
        return self._run(self._set_aside_plan(payment, "refused", reason))

    def ignore(self, payment: VerifiedPayment | str, reason: str) -> LedgerRow:
        """Record that a payment is not yours to fulfil (another shop's, a test), with why, so
        reconcile stops reporting it as missed; otherwise as :meth:`refuse`.

        Args:
            payment: the verified payment, or its reference.
            reason: why, as reconcile and ``paysdk ledger`` show it.

        Returns:
            The payment's row as it now is.

        Raises:
            InvalidReferenceError: the reference is not one the service could have issued.
            ConfigurationError: the reason is empty or longer than 1000 characters.
            LedgerError: the database failed.
        """
        return self._run(self._set_aside_plan(payment, "ignored", reason))

    def reconcile(
        self,
        client: Client,
        *,
        fulfil: Callable[[VerifiedPayment], object] | None = None,
        lookup: Lookup | None = None,
        progress: Callable[[int], object] | None = None,
        max_discrepancies: int = MAX_DISCREPANCIES,
    ) -> ReconcileReport:
        """Compare the service's payments with the ledger; see :class:`ReconcileReport`.

        A completed payment refused or ignored in the ledger is reported as such, not missed.
        ``lookup`` (the merchant's order by reference) tells reconcile which payments are
        yours: one with no row and no order is reported as not ours, not missed. With
        ``fulfil`` (which needs ``lookup``), a missed payment is verified against its order and
        fulfilled through :meth:`fulfil_once`. The report keeps at most ``max_discrepancies``
        (counting all); missed ones beyond wait for the next run.
        """
        _needs_lookup(fulfil, lookup)
        return sync_reconcile.reconcile(
            self,
            client,
            fulfil=fulfil,
            lookup=lookup,
            progress=progress,
            max_discrepancies=_check_limit(max_discrepancies),
        )

    def create_table(self) -> None:
        """Create the ledger's table if it does not exist (done on first use by default)."""
        schema = _plans.ensure_schema(self._driver.dialect, self.table)
        sync_run.run_plan(self._driver, schema, timeout=self.timeout)
        self._ready = True

    def close(self) -> None:
        self._driver.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _run(
        self,
        plan: LedgerPlan[T],
        action: Callable[[Any], object] | None = None,
        payment: object = None,
    ) -> T:
        if not self._ready:
            self.create_table()
        return sync_run.run_plan(self._driver, plan, action, payment, timeout=self.timeout)


class AsyncLedger(_BaseLedger):
    """The asynchronous twin of :class:`Ledger`: the same plans, awaited; actions may be async."""

    _driver: AsyncDriver

    def _open_driver(self) -> AsyncDriver:
        if self.backend == "sqlite":
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
        """
        plan = self._fulfil_plan(payment)  # refuses what is not a verified payment
        span = call_span("fulfil_once", payment.reference)
        with span, span.current():  # what the action traces nests under the fulfilment
            result = await self._run(plan, action, payment)
            span.add("paysdk.fulfilment.outcome", result.outcome.value)
        return result

    async def rows(self, references: Sequence[str]) -> dict[str, LedgerRow]:
        return await self._run(_plans.rows_for(self._driver.dialect, self.table, references))

    async def row(self, reference: str) -> LedgerRow | None:
        return (await self.rows([reference])).get(reference)

    async def fulfilled_after(self, after: str = "", limit: int = 500) -> list[LedgerRow]:
        plan = _plans.fulfilled_after(self._driver.dialect, self.table, after, limit)
        return await self._run(plan)

    async def fulfilled_references_after(self, after: str = "", limit: int = 2000) -> list[str]:
        """The references alone of a page of fulfilled rows, in order (reconcile's last pass)."""
        return await self._run(_plans.fulfilled_references_after(self.table, after, limit))

    async def rows_after(
        self, after: str = "", limit: int = 500, *, state: str | None = None
    ) -> list[LedgerRow]:
        """A page of rows in reference order, of one state or all; see :meth:`Ledger.rows_after`."""
        return await self._run(self._rows_plan(after, limit, state))

    async def resolve(self, reference: str, *, ran: bool) -> LedgerRow:
        """Settle a payment whose outcome is ``unknown``; see :meth:`Ledger.resolve`.

        Args:
            reference: the payment's reference.
            ran: whether the action did run.

        Returns:
            The payment's row as it now is.
        """
        return await self._run(self._resolve_plan(reference, ran))

    async def refuse(self, payment: VerifiedPayment | str, reason: str) -> LedgerRow:
        """Record that you declined a payment; see [`Ledger.refuse`][paysdk.ledger.Ledger.refuse].

        Args:
            payment: the verified payment, or its reference.
            reason: why.

        Returns:
            The payment's row as it now is.
        """
        return await self._run(self._set_aside_plan(payment, "refused", reason))

    async def ignore(self, payment: VerifiedPayment | str, reason: str) -> LedgerRow:
        """Record that a payment is not yours; see [`Ledger.ignore`][paysdk.ledger.Ledger.ignore].

        Args:
            payment: the verified payment, or its reference.
            reason: why.

        Returns:
            The payment's row as it now is.
        """
        return await self._run(self._set_aside_plan(payment, "ignored", reason))

    async def reconcile(
        self,
        client: AsyncClient,
        *,
        fulfil: Callable[[VerifiedPayment], object] | None = None,
        lookup: Lookup | None = None,
        progress: Callable[[int], object] | None = None,
        max_discrepancies: int = MAX_DISCREPANCIES,
    ) -> ReconcileReport:
        """Compare the service's payments with the ledger; ``fulfil`` may be async here."""
        _needs_lookup(fulfil, lookup)
        return await async_reconcile.reconcile(
            self,
            client,
            fulfil=fulfil,
            lookup=lookup,
            progress=progress,
            max_discrepancies=_check_limit(max_discrepancies),
        )

    async def create_table(self) -> None:
        schema = _plans.ensure_schema(self._driver.dialect, self.table)
        await async_run.run_plan(self._driver, schema, timeout=self.timeout)
        self._ready = True

    async def close(self) -> None:
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


def _needs_lookup(fulfil: object, lookup: object) -> None:
    if fulfil is not None and lookup is None:
        raise ConfigurationError(
            "reconcile(fulfil=...) needs lookup= to find each order, so a missed payment is "
            "fulfilled only if it matches its order's amount and currency"
        )


def _check_limit(limit: object) -> int:
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise ConfigurationError(f"max_discrepancies must be a positive int, not {limit!r}")
    return limit

"""The ledger plans' one driver: their steps (``_steps.LEDGER_STEPS``) on a database driver;
however a run ends, a transaction left open is rolled back and its connection given back."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from ..._transport import async_drive
from .._databases.driver import AsyncConnection, AsyncDriver
from .._errors import LedgerError
from .._schema import Dialect
from .._steps import LEDGER_STEPS, Act, Acted, Begin, Commit, LedgerPlan, LedgerStep, Query, Sleep
from .._twins import (
    async_result_of,
    async_shield,
    async_sleep,
    async_uncancellable,
    async_uncancelled,
)

__all__ = ["abandon", "run_in_transaction", "run_plan"]

T = TypeVar("T")


async def run_plan(
    driver: AsyncDriver,
    plan: LedgerPlan[T],
    action: Callable[[Any], object] | None = None,
    payment: object = None,
    *,
    timeout: float,
) -> T:
    """Run ``plan`` to its result; an Act step runs ``action(payment)``, no transaction open."""
    steps = AsyncLedgerSteps(driver.dialect, driver, timeout, action, payment)
    try:
        result = await async_drive(plan, steps.carry_out, LEDGER_STEPS, LedgerError)
    finally:
        await steps.abandon()
    if steps.cancelled is not None:  # held off while a shielded step ran: raised now
        raise steps.cancelled
    return result


async def run_in_transaction(
    connection: AsyncConnection,
    dialect: Dialect,
    plan: LedgerPlan[T],
) -> T:
    """Run ``plan``'s statements in ``connection``'s transaction, which its caller began and
    ends: a ``Query`` fails as the connection fails, and any other step is refused."""
    steps = AsyncLedgerSteps(dialect, None, 0.0, connection=connection)
    return await async_drive(plan, steps.carry_out, (Query,))


class AsyncLedgerSteps:
    """What carries out each step of one run, and the transaction it holds open between them."""

    def __init__(
        self,
        dialect: Dialect,
        driver: AsyncDriver | None,
        timeout: float,
        action: Callable[[Any], object] | None = None,
        payment: object = None,
        connection: AsyncConnection | None = None,
    ) -> None:
        self.dialect = dialect
        self.driver = driver
        """``None``: the transaction is the caller's, and only statements are run in it."""
        self.timeout = timeout
        self.action = action
        self.payment = payment
        self.connection = connection
        self.acted = False
        """Whether the action ran (or was cancelled): what follows is its record or release."""
        self.cancelled: BaseException | None = None
        """asyncio's cancellation, held off while a shielded step ran: the action is not run
        (its claim is released) and it is raised once the plan has ended."""

    async def carry_out(self, step: LedgerStep) -> object:
        """Carry ``step`` out; its answer. A fulfilment's commits, and every step after the action,
        are shielded from cancellation: a committed claim goes to the action, a finished one is
        recorded (an action cancelled at its first await is released as any failed one)."""
        if self.acted:
            with async_uncancellable():
                return await async_uncancelled(self._carry_out(step), self._defer)
        return await self._carry_out(step)

    def _defer(self, cancelled: BaseException) -> None:
        if self.cancelled is None:
            self.cancelled = cancelled

    async def _carry_out(self, step: LedgerStep) -> object:
        try:
            if isinstance(step, Query):
                assert self.connection is not None
                return await self.connection.execute(self.dialect.sql(step.sql), step.params)
            assert self.driver is not None  # a caller's transaction is given only Query steps
            if isinstance(step, Begin):
                self.connection = await self.driver.begin(step.write)
            elif isinstance(step, Commit):
                if self.action is None or self.acted:  # no claim, or shielded already
                    return await self._commit()
                with async_uncancellable():  # a fulfilment's claim: handed to its action
                    return await async_uncancelled(self._commit(), self._defer)
            elif isinstance(step, Sleep):
                await async_sleep(step.seconds)
            elif isinstance(step, Act):
                assert self.action is not None
                self.acted = True
                if self.cancelled is not None:  # held off while its claim was committed
                    return Acted(error=self.cancelled)
                try:  # a result this runner refuses is released, not marked done
                    return Acted(value=await async_result_of(self.action(self.payment)))
                except BaseException as error:  # released, then re-raised by the plan
                    return Acted(error=error)
        except LedgerError:  # rolled back, then thrown in: what it means is the plan's to say
            await self.abandon()
            raise
        return None

    async def _commit(self) -> object:
        """Commit and give back the transaction; the step's answer, ``None``."""
        assert self.connection is not None
        assert self.driver is not None
        try:
            await self.connection.commit()
            # no longer this run's before it is given back: a cancellation while it is given
            # back must not give it back twice (to two later calls at once)
            connection, self.connection = self.connection, None
            await self.driver.done(connection)
        except LedgerError:  # rolled back within the shield, which abandon's awaits need
            await self.abandon()
            raise
        return None

    async def abandon(self) -> None:
        """Roll back and give back the transaction this run holds open, if it holds one."""
        if self.driver is not None and self.connection is not None:
            await abandon(self.driver, self.connection, self.timeout)
            self.connection = None


async def abandon(driver: AsyncDriver, connection: AsyncConnection, timeout: float) -> None:
    """Roll back and give back a connection whose transaction did not commit, within the ledger's
    timeout; an async ledger shields it from cancellation, which would leave its lock held."""
    with async_shield(timeout):
        await connection.rollback()
        await driver.done(connection)

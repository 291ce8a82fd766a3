"""Carry out a ledger plan's steps on a driver: transactions, statements, the merchant's action.

A step that fails with LedgerError is rolled back and thrown into the plan, which decides what it
means; however the run ends, a transaction left open is rolled back and its connection given back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from ..._transport import async_drive
from .._driver import AsyncConnection, AsyncDriver
from .._errors import LedgerError
from .._steps import Act, Acted, Begin, Commit, LedgerPlan, LedgerStep, Pause, Query
from .._twins import async_result_of, async_shield, async_sleep

__all__ = ["abandon", "run_plan"]

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
    dialect = driver.dialect
    connection: AsyncConnection | None = None

    async def carry_out(step: LedgerStep) -> object:
        nonlocal connection
        try:
            if isinstance(step, Begin):
                connection = await driver.begin(step.write)
            elif isinstance(step, Query):
                assert connection is not None
                return await connection.execute(dialect.sql(step.sql), step.params)
            elif isinstance(step, Commit):
                assert connection is not None
                await connection.commit()
                await driver.done(connection)
                connection = None
            elif isinstance(step, Pause):
                await async_sleep(step.seconds)
            else:
                assert isinstance(step, Act)
                assert action is not None
                try:  # a result this runner refuses is released, not marked done
                    return Acted(value=await async_result_of(action(payment)))
                except BaseException as error:  # released, then re-raised by the plan
                    return Acted(error=error)
        except LedgerError:  # rolled back, then thrown in: what it means is the plan's to say
            if connection is not None:
                await abandon(driver, connection, timeout)
                connection = None
            raise
        return None

    try:
        return await async_drive(plan, carry_out, LedgerError)
    finally:
        if connection is not None:
            await abandon(driver, connection, timeout)


async def abandon(driver: AsyncDriver, connection: AsyncConnection, timeout: float) -> None:
    """Roll back and give back a connection whose transaction did not commit, within the ledger's
    timeout; an async ledger does it shielded from cancellation, since a rollback cut short
    would leave the transaction (and its lock) open."""
    with async_shield(timeout):
        await connection.rollback()
        await driver.done(connection)

"""Carry out a ledger plan's steps on a driver: transactions, statements, the merchant's action.

A step that fails with LedgerError is rolled back and thrown into the plan, which decides what it
means; however the run ends, a transaction left open is rolled back and its connection given back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

from .._driver import AsyncConnection, AsyncDriver
from .._errors import LedgerError
from .._steps import Act, Acted, Begin, Commit, LedgerPlan, Pause, Query
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
    try:
        step = next(plan)
        while True:
            reply: object = None
            try:
                if isinstance(step, Begin):
                    connection = await driver.begin(step.write)
                elif isinstance(step, Query):
                    assert connection is not None
                    reply = await connection.execute(dialect.sql(step.sql), step.params)
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
                        reply = Acted(value=await async_result_of(action(payment)))
                    except BaseException as error:  # released, then re-raised by the plan
                        reply = Acted(error=error)
            except LedgerError as failed:  # rolled back; what it means is the plan's to say
                if connection is not None:
                    await abandon(driver, connection, timeout)
                    connection = None
                step = plan.throw(failed)
                continue
            step = plan.send(reply)
    except StopIteration as done:
        return cast(T, done.value)
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

"""The ledger's schema and statements, for SQLite and PostgreSQL: the one place SQL is written.

Statements use ``?`` placeholders; :class:`Dialect` turns them into the driver's own style.
Timestamps are timezone-aware UTC datetimes in Python: ``timestamptz`` on PostgreSQL, and on
SQLite ISO 8601 text of fixed width (``2026-11-23T13:00:00.000000Z``), which sorts as time does.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

__all__ = ["DEFAULT_TABLE", "POSTGRES", "SQLITE", "Dialect"]

DEFAULT_TABLE = "paysdk_fulfilments"

_COLUMNS = """(
    reference TEXT PRIMARY KEY,
    state TEXT NOT NULL,
    claim_token TEXT,
    attempts INTEGER NOT NULL,
    lease_expires_at {ts},
    amount BIGINT NOT NULL,
    currency TEXT NOT NULL,
    claimed_at {ts} NOT NULL,
    fulfilled_at {ts},
    last_error TEXT
)"""
"""``reference`` is the unique key: one row per payment, whatever the number of workers."""

ROW = "reference, state, claim_token, attempts, lease_expires_at, amount, currency, fulfilled_at"
"""The columns :class:`~paysdk.ledger.LedgerRow` is read from, in order."""


@dataclasses.dataclass(frozen=True)
class Dialect:
    """What differs between the databases: placeholders, the timestamp type, schema locking."""

    name: str
    placeholder: str
    timestamp_type: str
    schema_lock: str | None = None
    """Run before ``CREATE TABLE IF NOT EXISTS``: PostgreSQL can fail two concurrent ones."""
    arrays: bool = False
    """``reference = ANY(?)`` with one array parameter, rather than ``IN (?, ?, ...)``."""

    def sql(self, text: str) -> str:
        return text.replace("?", self.placeholder)

    def schema(self, table: str) -> list[str]:
        """The statements that create the table (and nothing else) if it does not exist."""
        create = f"CREATE TABLE IF NOT EXISTS {table} " + _COLUMNS.format(ts=self.timestamp_type)
        return [*([self.schema_lock] if self.schema_lock else []), create]


SQLITE = Dialect("sqlite", "?", "TEXT")
POSTGRES = Dialect(
    "postgresql",
    "%s",
    "TIMESTAMPTZ",
    # A constant key ("paysdk" as 8 bytes) held until commit: one schema creator at a time.
    schema_lock="SELECT pg_advisory_xact_lock(8097880697034779491)",
    arrays=True,
)


def insert_claim(table: str) -> str:
    """Claim a reference no one has claimed yet; does nothing (0 rows) if there is a row."""
    return (
        f"INSERT INTO {table} (reference, state, claim_token, attempts, lease_expires_at, "
        "amount, currency, claimed_at) VALUES (?, 'claimed', ?, 1, ?, ?, ?, ?) "
        "ON CONFLICT (reference) DO NOTHING"
    )


def take_over(table: str) -> str:
    """Claim a released row or one whose lease expired: a compare-and-set, so one worker wins.

    On PostgreSQL a concurrent UPDATE of the same row waits, then re-checks the WHERE clause
    against the committed row; on SQLite ``BEGIN IMMEDIATE`` lets one writer in at a time.
    """
    return (
        f"UPDATE {table} SET state = 'claimed', claim_token = ?, attempts = attempts + 1, "
        "lease_expires_at = ?, amount = ?, currency = ?, claimed_at = ? "
        "WHERE reference = ? AND (state = 'released' "
        "OR (state = 'claimed' AND lease_expires_at <= ?))"
    )


def mark_fulfilled(table: str) -> str:
    """Done, but only by the claim's owner: a worker whose lease was taken over matches 0 rows."""
    return (
        f"UPDATE {table} SET state = 'fulfilled', claim_token = NULL, lease_expires_at = NULL, "
        "fulfilled_at = ?, last_error = NULL WHERE reference = ? AND claim_token = ?"
    )


def release(table: str) -> str:
    """The action failed: give the claim up so the next delivery (or reconcile) retries."""
    return (
        f"UPDATE {table} SET state = 'released', claim_token = NULL, lease_expires_at = NULL, "
        "last_error = ? WHERE reference = ? AND claim_token = ?"
    )


def select_one(table: str) -> str:
    return f"SELECT {ROW} FROM {table} WHERE reference = ?"


def select_many(
    dialect: Dialect, table: str, references: Sequence[str]
) -> tuple[str, Sequence[object]]:
    """The rows of these references: one array parameter where the database takes one."""
    if dialect.arrays:
        return f"SELECT {ROW} FROM {table} WHERE reference = ANY(?)", [list(references)]
    marks = ", ".join("?" * len(references))
    return f"SELECT {ROW} FROM {table} WHERE reference IN ({marks})", references


def fulfilled_page(table: str) -> str:
    """Fulfilled rows in reference order after a given one: keyset pages of constant memory."""
    return (
        f"SELECT {ROW} FROM {table} WHERE state = 'fulfilled' AND reference > ? "
        "ORDER BY reference LIMIT ?"
    )

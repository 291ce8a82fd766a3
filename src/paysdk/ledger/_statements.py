"""The statements the ledger's plans run on its rows, for SQLite and PostgreSQL (``Dialect``): a
claim and what settles it, a payment set aside, the reads of rows, and what a key's or a label's
rows are checked against. "Now" is the database's clock, never a worker's, so workers whose clocks
disagree still agree on whether a claim is live (``current_state``)."""

from __future__ import annotations

from collections.abc import Sequence

from ._schema import Dialect

__all__ = ["MOST_MARKS", "STATES"]


def _lapsed(dialect: Dialect) -> str:
    """A claim whose lease ran out by the database's clock: its outcome is unknown."""
    return f"state = 'claimed' AND lease_expires_at <= {dialect.now}"


def current_state(dialect: Dialect) -> str:
    """A row's state as the ledger reads it: ``unknown`` for a lapsed claim (``_lapsed``); any
    other state is as stored."""
    return f"CASE WHEN {_lapsed(dialect)} THEN 'unknown' ELSE state END"


def row(dialect: Dialect) -> str:
    """The columns [`LedgerRow`][paysdk.ledger.LedgerRow] is read from, in order; the state is
    `current_state`'s, by ``dialect``'s clock."""
    lease, fulfilled = (dialect.read_time.format(c) for c in ("lease_expires_at", "fulfilled_at"))
    return (
        f"reference, {current_state(dialect)}, claim_token, attempts, {lease}, amount, "
        f"currency, {fulfilled}, reason, account"
    )


def found(dialect: Dialect) -> str:
    """The columns reconcile's ``Found`` is read from, in order: what it compares of a row (the
    state as in ``row``)."""
    return f"reference, {current_state(dialect)}, amount, currency, reason"


def insert_claim(dialect: Dialect, table: str) -> str:
    """Claim a reference no one has claimed yet; does nothing (0 rows) if there is a row.
    Parameters: account, reference, claim token, lease (seconds), amount, currency, key
    fingerprint (``verified_by``, or ``None``). On PostgreSQL it first updates no row, which
    needs the ``UPDATE`` privilege that recording the action will: a role granted only ``SELECT``
    and ``INSERT`` is refused before any action runs, rather than after each (left unrecorded)."""
    may_record = (
        f'WITH "may record" AS (UPDATE {table} SET state = state WHERE false) '
        if dialect.name == "postgresql"
        else ""
    )
    return may_record + (
        f"INSERT INTO {table} (account, reference, state, claim_token, attempts, "
        f"lease_expires_at, amount, currency, claimed_at, verified_by) VALUES (?, ?, 'claimed', "
        f"?, 1, {dialect.later}, ?, ?, {dialect.now}, ?) ON CONFLICT (account, reference) "
        "DO NOTHING"
    )


SET_ASIDE = ("released", "refused", "ignored")
"""The states of a payment nobody is fulfilling and nobody fulfilled: a later delivery whose
checks pass takes it over, and a refusal or an ignore may be written over them."""
_SET_ASIDE_SQL = "(" + ", ".join(f"'{state}'" for state in SET_ASIDE) + ")"


def take_over(dialect: Dialect, table: str) -> str:
    """Claim a ``SET_ASIDE`` row for a later delivery whose checks pass: a compare-and-set one
    worker wins (PostgreSQL re-checks the WHERE against a row committed meanwhile; SQLite's ``BEGIN
    IMMEDIATE`` lets one writer in). Never a lapsed claim: its action may have run unrecorded
    (``resolve`` settles it). Parameters: claim token, lease (seconds), amount, currency,
    fingerprint, account, reference."""
    return (
        f"UPDATE {table} SET state = 'claimed', claim_token = ?, attempts = attempts + 1, "
        f"lease_expires_at = {dialect.later}, amount = ?, currency = ?, "
        f"claimed_at = {dialect.now}, verified_by = COALESCE(?, verified_by) "
        f"WHERE account = ? AND reference = ? AND state IN {_SET_ASIDE_SQL}"
    )


def set_aside(dialect: Dialect, table: str) -> str:
    """Record a payment as refused or ignored, with why, unless it is fulfilled or claimed:
    a refusal never undoes a fulfilment nor races a worker fulfilling it. Parameters: account,
    reference, state (``refused`` or ``ignored``), amount, currency, reason."""
    return (
        f"INSERT INTO {table} AS ledger (account, reference, state, attempts, amount, currency, "
        f"claimed_at, reason) VALUES (?, ?, ?, 0, ?, ?, {dialect.now}, ?) "
        "ON CONFLICT (account, reference) DO UPDATE SET state = excluded.state, "
        "reason = excluded.reason "
        f"WHERE ledger.state IN {_SET_ASIDE_SQL}"
    )


def mark_fulfilled(dialect: Dialect, table: str) -> str:
    """Done, by the claim's owner alone, even after its lease ran out (0 rows if resolved by hand
    meanwhile). The token stays: sent again after a commit whose answer was lost, it matches the row
    it marked (keeping its first ``fulfilled_at``). Parameters: account, reference, claim token."""
    return (
        f"UPDATE {table} SET state = 'fulfilled', lease_expires_at = NULL, "
        f"fulfilled_at = COALESCE(fulfilled_at, {dialect.now}), last_error = NULL "
        "WHERE account = ? AND reference = ? AND claim_token = ?"
    )


def resolve(dialect: Dialect, table: str, *, ran: bool) -> str:
    """Settle a claim whose lease ran out unrecorded, as a person decided: fulfilled if ``ran``
    (the action ran), else released (the next delivery runs it). Parameters: account, reference."""
    settle = (
        f"state = 'fulfilled', fulfilled_at = {dialect.now}, lease_expires_at = NULL, "
        "last_error = 'resolved by hand: the action ran'"
        if ran
        else "state = 'released', claim_token = NULL, lease_expires_at = NULL, "
        "last_error = 'resolved by hand: the action did not run'"
    )
    where = f"account = ? AND reference = ? AND {_lapsed(dialect)}"
    return f"UPDATE {table} SET {settle} WHERE {where}"


def release(table: str) -> str:
    """The action failed: give the claim up so the next delivery (or reconcile) retries.
    Parameters: why, account, reference, claim token."""
    return (
        f"UPDATE {table} SET state = 'released', claim_token = NULL, lease_expires_at = NULL, "
        "last_error = ? WHERE account = ? AND reference = ? AND claim_token = ?"
    )


def retire_keys(table: str) -> str:
    """Clear the key fingerprints of the unlabelled account's rows, so that the next unlabelled
    payment's key (a rotated one) is the one they are checked against. No parameters."""
    return f"UPDATE {table} SET verified_by = NULL WHERE account = '' AND verified_by IS NOT NULL"


def select_one(dialect: Dialect, table: str) -> str:
    """One payment's row. Parameters: account, reference."""
    return f"SELECT {row(dialect)} FROM {table} WHERE account = ? AND reference = ?"


MOST_MARKS = 998
"""The most references one ``IN (?, ...)`` of ``select_many`` names: with the account, 999
parameters, the most a statement takes on SQLite before 3.32 (32,766 since; some builds differ)."""


def select_many(
    dialect: Dialect, table: str, account: str, references: Sequence[str], columns: str
) -> tuple[str, Sequence[object]]:
    """The ``columns`` (``row``'s or ``found``'s) of these references' rows of one account (``""``:
    unlabelled), as one array parameter where the database takes one."""
    where = f"SELECT {columns} FROM {table} WHERE account = ? AND reference"
    if dialect.arrays:
        return f"{where} = ANY(?)", [account, list(references)]
    marks = ", ".join("?" * len(references))
    return f"{where} IN ({marks})", [account, *references]


def fulfilled_references_page(table: str) -> str:
    """The references alone of fulfilled rows after a given one, in order: reconcile's pass for
    fulfilled payments the list did not show reads a million of them, and needs only these.
    Parameters: account, after, limit."""
    return (
        f"SELECT reference FROM {table} WHERE account = ? AND state = 'fulfilled' "
        "AND reference > ? ORDER BY reference LIMIT ?"
    )


STATES = ("claimed", "fulfilled", "released", "refused", "ignored", "unknown")
"""Every state a row reads as (``row``): ``unknown`` is a claim whose lease ran out."""


def rows_page(
    dialect: Dialect, table: str, account: str, state: str | None, after: str, limit: int
) -> tuple[str, Sequence[object]]:
    """Up to ``limit`` rows of one account in reference order after ``after``, of one of
    ``STATES`` (``None``: all): keyset pages of constant memory. ``claimed`` and ``unknown`` are
    told apart by the lease, by the database's clock."""
    where, params = "account = ? AND reference > ?", [account, after]
    if state == "claimed":
        where += f" AND state = 'claimed' AND lease_expires_at > {dialect.now}"
    elif state == "unknown":
        where += f" AND {_lapsed(dialect)}"
    elif state is not None:
        where, params = where + " AND state = ?", [account, after, state]
    sql = f"SELECT {row(dialect)} FROM {table} WHERE {where} ORDER BY reference LIMIT ?"
    return sql, [*params, limit]


def label_rows(dialect: Dialect, table: str) -> str:
    """What a bare reference's label is checked against, in one round trip: a row of the account but
    the given reference (1, or NULL), and only if none, another label equal to it but for case (or
    NULL; labels are ASCII, folded by ``Dialect.ascii_lower``), found by walking the labels (each
    the least after the last) on the index leading with ``account`` (a few reads a label, whatever
    the rows; 13 ms for 3,000 on PostgreSQL), which a label holding rows never does. Parameters:
    account, reference, account, account."""
    fold = dialect.ascii_lower
    return (  # names with a space, which no table's (check_table) can be: never the table's own
        f'WITH RECURSIVE "own row"(found) AS (SELECT (SELECT 1 FROM {table} WHERE account = ? '
        "AND reference <> ? LIMIT 1)), "
        f'"labels held"(account) AS (SELECT min(account) FROM {table} UNION ALL '
        f'SELECT (SELECT min(account) FROM {table} WHERE account > "labels held".account) '
        'FROM "labels held" WHERE "labels held".account IS NOT NULL) '
        'SELECT found, CASE WHEN found IS NULL THEN (SELECT account FROM "labels held" '
        "WHERE account IS NOT NULL AND account <> ? "
        f'AND {fold.format("account")} = {fold.format("?")} LIMIT 1) END FROM "own row"'
    )


def unlabelled_rows(table: str) -> str:
    """What a bare reference set aside without a label is checked against: a row of the
    unlabelled account other than the given reference (1, or NULL), and the least label holding
    a row (or NULL), each the first entry of the primary key. Parameters: reference."""
    return (
        f"SELECT (SELECT 1 FROM {table} WHERE account = '' AND reference <> ? LIMIT 1), "
        f"(SELECT min(account) FROM {table} WHERE account > '')"
    )


def reference_label(table: str) -> str:
    """The least label holding a row of the given reference (or NULL), found by walking the
    labels (each the least after the last) and reading each one's row on the primary key: a few
    index reads a label, whatever the rows. Parameters: reference."""
    return (  # names with a space, which no table's (check_table) can be: never the table's own
        f'WITH RECURSIVE "labels held"(label) AS (SELECT min(account) FROM {table} '
        "WHERE account > '' UNION ALL "
        f'SELECT (SELECT min(account) FROM {table} WHERE account > "labels held".label) '
        'FROM "labels held" WHERE "labels held".label IS NOT NULL) '
        'SELECT (SELECT label FROM "labels held" WHERE label IS NOT NULL AND EXISTS '
        f'(SELECT 1 FROM {table} WHERE account = "labels held".label AND reference = ?) '
        "ORDER BY label LIMIT 1)"
    )


def key_rows(table: str) -> str:
    """What a key's payments are checked against, in one round trip of index reads that do not
    grow with the rows or labels: a row of the account and key but the given reference (1, or
    NULL), the least and greatest label holding a row of the key (either differs from the account
    if another does), and the least and greatest key of the unlabelled rows (differing if two
    keys wrote them). Parameters: account, fingerprint, reference, fingerprint, fingerprint."""
    labelled = f"SELECT account FROM {table} WHERE verified_by = ? ORDER BY account"
    unlabelled = (
        f"SELECT verified_by FROM {table} WHERE account = '' AND verified_by IS NOT NULL "
        "ORDER BY account, verified_by"
    )
    return (
        f"SELECT (SELECT 1 FROM {table} WHERE account = ? AND verified_by = ? "
        f"AND reference <> ? LIMIT 1), ({labelled} LIMIT 1), "
        f"({labelled} DESC LIMIT 1), "
        f"({unlabelled} LIMIT 1), ({unlabelled} DESC LIMIT 1)"
    )

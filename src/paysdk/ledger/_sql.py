"""The ledger's schema and statements for SQLite and PostgreSQL, the one place SQL is written, with
``?`` placeholders (``Dialect`` makes them the driver's). Timestamps are UTC: ``timestamptz``, or on
SQLite fixed-width ISO 8601 text (``2026-11-23T13:00:00.000000Z``), which sorts as time does. "Now"
is the database's clock, never a worker's, so workers whose clocks disagree still agree on whether a
claim is live (``current_state``)."""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections.abc import Sequence

__all__ = [
    "DEFAULT_TABLE",
    "MOST_MARKS",
    "POSTGRES",
    "SQLITE",
    "SQLITE_FORMAT",
    "STATES",
    "Dialect",
]

DEFAULT_TABLE = "paysdk_fulfilments"
"""The ledger's table unless ``table=`` names another."""

_COLUMNS = """(
    reference TEXT NOT NULL,
    state TEXT NOT NULL,
    claim_token TEXT,
    attempts INTEGER NOT NULL,
    lease_expires_at {ts},
    amount BIGINT NOT NULL,
    currency TEXT NOT NULL,
    claimed_at {ts} NOT NULL,
    fulfilled_at {ts},
    last_error TEXT,
    reason TEXT,
    account TEXT NOT NULL DEFAULT '',
    verified_by TEXT,
    PRIMARY KEY (account, reference)
)"""
"""One row per ``(account, reference)``, whatever the number of workers; ``account`` is ``''`` for
an unlabelled one, and last, where adding it to an older table puts it. ``reason``: why a payment
was refused or ignored. ``verified_by``: the fingerprint (never the key) of the key that verified
the payment; the unlabelled account's rows must all have the same one."""


@dataclasses.dataclass(frozen=True)
class Dialect:
    """What differs between the databases: placeholders, timestamps and the clock, schema locks."""

    name: str
    placeholder: str
    timestamp_type: str
    now: str
    """The database's current time, as the timestamp columns hold it."""
    later: str
    """The database's current time plus ``?`` seconds (a float parameter), likewise."""
    schema_lock: str | None = None
    """Run before ``CREATE TABLE IF NOT EXISTS``: PostgreSQL can fail two concurrent ones."""
    key_lock: str | None = None
    """Run before checking a key's first row under its account (``_plans.check_key``), until
    commit: two transactions each writing a first row cannot both miss the other's. SQLite's
    writers take turns already."""
    arrays: bool = False
    """``reference = ANY(?)`` with one array parameter, rather than ``IN (?, ?, ...)``."""
    ascii_lower: str = "lower({})"
    """An expression in lower case, ASCII letters alone folded (SQLite's ``lower`` folds ASCII
    alone; PostgreSQL's by the collation, where a Turkish one makes ``I`` a dotless ``\u0131``)."""
    read_time: str = "{}"
    """A timestamp column as a row reads it: the ledger's ISO 8601 text in UTC. PostgreSQL's
    own text follows the session's ``DateStyle``, which psycopg reads only when it is ISO."""

    def sql(self, text: str) -> str:
        """``text`` in the driver's parameter style. In the "format" style (``%s``: psycopg's,
        Django's) a literal ``%`` (SQLite's ``strftime``) is doubled: the driver reads ``%`` as a
        placeholder, and Django's debug cursor formats each query it logs with Python's ``%``."""
        if self.placeholder == "%s":
            text = text.replace("%", "%%")
        return text.replace("?", self.placeholder)

    def schema(self, table: str) -> list[str]:
        """The statements that create the table (and nothing else) if it does not exist."""
        create = f"CREATE TABLE IF NOT EXISTS {table} " + _COLUMNS.format(ts=self.timestamp_type)
        return [*([self.schema_lock] if self.schema_lock else []), create]

    def visible(self) -> str | None:
        """Whether the search path finds a table named ``?`` (``None``: SQLite, no search path).
        PostgreSQL's ``IF NOT EXISTS`` looks in the path's first schema alone, and would create
        there an empty table hiding one further on (``search_path = shop, public``)."""
        return "SELECT to_regclass(?) IS NOT NULL" if self.name == "postgresql" else None


SQLITE = Dialect(
    "sqlite",
    "?",
    "TEXT",
    # SQLite's 'now' (UTC, fixed within a statement) has milliseconds: padded to the fixed width.
    now="(strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z')",
    later="(strftime('%Y-%m-%dT%H:%M:%f', 'now', printf('%+.3f seconds', ?)) || '000Z')",
)
SQLITE_FORMAT = dataclasses.replace(SQLITE, placeholder="%s")
"""SQLite through a cursor of the "format" parameter style: Django's, whose SQLite backend turns
``%s`` into ``?`` and ``%%`` into ``%`` before sqlite3 reads the statement."""
POSTGRES = Dialect(
    "postgresql",
    "%s",
    "TIMESTAMPTZ",
    # A constant key ("paysdk" as 8 bytes) held until commit: one schema creator at a time.
    schema_lock="SELECT pg_advisory_xact_lock(8097880697034779491)",
    key_lock="SELECT pg_advisory_xact_lock(8097887141501822329)",  # "paysdkey" as 8 bytes
    arrays=True,
    ascii_lower='lower({} COLLATE "C")',
    # The server's clock when the statement reads it (now() would be when its transaction began,
    # before any lock wait): a takeover re-checked after a wait sees the time after it.
    now="clock_timestamp()",
    later="(clock_timestamp() + ? * interval '1 second')",
    read_time="""to_char({} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')""",
)


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


def table_columns(dialect: Dialect, table: str) -> tuple[str, Sequence[object]]:
    """The names of ``table``'s columns, one a row: a table of the ledger's holds ``OLD_COLUMNS``,
    and ``account`` unless it was made before accounts were part of a fulfilment's key
    (``add_account`` migrates it)."""
    if dialect.name == "postgresql":
        return (
            "SELECT attname FROM pg_attribute WHERE attrelid = to_regclass(?) AND attnum > 0 "
            "AND NOT attisdropped",
            [table],
        )
    schema, _, name = table.rpartition(".")
    if schema:
        return "SELECT lower(name) FROM pragma_table_info(?, ?)", [name, schema]
    return "SELECT lower(name) FROM pragma_table_info(?)", [name]


OLD_COLUMNS = (
    "reference, state, claim_token, attempts, lease_expires_at, amount, currency, claimed_at, "
    "fulfilled_at, last_error, reason"
)
"""Every column of a table made before ``account``: each row is kept, as the account ``''``."""


def sqlite_rebuild(dialect: Dialect, table: str) -> tuple[str, list[str], str]:
    """SQLite cannot change a primary key in place: the new table's name, the statements that
    make it and copy every row in (as the account ``''``), and the one that counts its rows."""
    schema, dot, name = table.rpartition(".")
    new = f"{schema}{dot}{name}_paysdk_accounts"
    create = f"CREATE TABLE {new} " + _COLUMNS.format(ts=dialect.timestamp_type)
    copy = f"INSERT INTO {new} ({OLD_COLUMNS}) SELECT {OLD_COLUMNS} FROM {table}"
    return new, [f"DROP TABLE IF EXISTS {new}", create, copy], count_rows(new)


def sqlite_swap(table: str, new: str) -> list[str]:
    """Drop the old table and give the new one its name, in the same transaction."""
    name = table.rpartition(".")[2]
    return [f"DROP TABLE {table}", f"ALTER TABLE {new} RENAME TO {name}"]


def postgres_add_account(table: str) -> list[str]:
    """Add the account and key fingerprint columns (every row the account ``''``, of no known
    key), and find the primary key to swap."""
    return [
        f"ALTER TABLE {table} ADD COLUMN account TEXT NOT NULL DEFAULT '', "
        "ADD COLUMN verified_by TEXT",
        "SELECT conname FROM pg_constraint WHERE conrelid = to_regclass(?) AND contype = 'p'",
    ]


def postgres_swap_key(table: str, constraint: str) -> list[str]:
    """Replace the primary key ``constraint`` (a name from the catalog, quoted here) with
    ``(account, reference)``."""
    quoted = '"' + constraint.replace('"', '""') + '"'
    return [
        f"ALTER TABLE {table} DROP CONSTRAINT {quoted}",
        f"ALTER TABLE {table} ADD PRIMARY KEY (account, reference)",
    ]


_BEFORE_ACCOUNTS = re.compile(r'\bcolumn(?: named)?:? "?(?:\w+\.)?(?:account|verified_by)\b')
"""What SQLite (``no such column: account``, ``has no column named account``) and PostgreSQL
(``column "account" does not exist``) say of a table made before ``account``."""


def before_accounts(said: str) -> str:
    """What to do about a table made before ``account`` (``create_table=False``: not migrated), if
    the database's error says ``said`` of one; else ``""``."""
    if _BEFORE_ACCOUNTS.search(said) is None:
        return ""
    return (
        "; the ledger's table was made before its account column: the ledger's "
        "create_table() migrates it in one transaction, keeping every row (a Django app: "
        "manage.py migrate), or migrate it as docs/fulfilment.md (The schema) says"
    )


def count_rows(table: str) -> str:
    return f"SELECT count(*) FROM {table}"


KEY_INDEXES = {"_verified_by": ("account", "verified_by"), "_by_key": ("verified_by", "account")}
"""The indexes ``key_rows`` reads (by name suffix, ``index_name``), a few entries a read however
many rows and labels: key fingerprints by account (the unlabelled rows' keys, a key's rows under
its account), and accounts by fingerprint (the labels a key's rows are held under)."""


def key_indexes(dialect: Dialect, table: str) -> list[tuple[str, str]]:
    """Each of ``KEY_INDEXES`` on ``table``: its name, and the statement that makes it unless it
    exists."""
    schema, dot, name = table.rpartition(".")
    made: list[tuple[str, str]] = []
    for suffix, columns in KEY_INDEXES.items():
        index, on = index_name(name, suffix), ", ".join(columns)
        if dialect.name == "postgresql":  # the index goes in its table's schema
            made.append((index, f"CREATE INDEX IF NOT EXISTS {index} ON {table} ({on})"))
        else:
            made.append(
                (index, f"CREATE INDEX IF NOT EXISTS {schema}{dot}{index} ON {name} ({on})")
            )
    return made


INDEX_MISSING = (
    "SELECT to_regclass(quote_ident(n.nspname) || '.' || ?) IS NULL FROM pg_class c "
    "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = to_regclass(?)"
)
"""PostgreSQL: whether the index named ``?`` is missing from the schema of the table ``?`` (the
one the search path finds). ``CREATE INDEX IF NOT EXISTS`` needs to own the table even where the
index exists, which a role granted only its rows' privileges does not: it is asked first."""


def index_name(name: str, suffix: str) -> str:
    """``{name}{suffix}``, within PostgreSQL's 63 characters: cut there, a long table's index
    would be named as the table itself (so never made) or as another table's."""
    index = f"{name}{suffix}"
    if len(index) <= _LONGEST_NAME:
        return index
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{name[: _LONGEST_NAME - len(suffix) - 9]}_{digest}{suffix}"


_LONGEST_NAME = 63


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

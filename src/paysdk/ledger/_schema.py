"""The ledger's schema for SQLite and PostgreSQL: what differs between them (``Dialect``, which
makes the ``?`` placeholders SQL is written with the driver's), the table's columns, and the
statements that create it, migrate one made before accounts and make its key indexes. Timestamps are
UTC: ``timestamptz``, or on SQLite fixed-width ISO 8601 text (``2026-11-23T13:00:00.000000Z``),
which sorts as time does. "Now" is the database's clock (``Dialect.now``), never a worker's."""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections.abc import Sequence

__all__ = ["DEFAULT_TABLE", "POSTGRES", "SQLITE", "SQLITE_FORMAT", "Dialect"]


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
    """Run before checking a key's first row under its account (``_accounts.check_key``), until
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

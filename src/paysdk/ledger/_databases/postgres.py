"""What the PostgreSQL drivers (psycopg 3; ``_async/postgres.py`` and its twin) share. Every wait
is bounded by the ledger's timeout, a statement by twice it, an idle transaction by ten times. For
a pooler (PgBouncer): no startup parameter (it refuses what it cannot track), timeouts by ``SET
LOCAL`` in the ``BEGIN``'s round trip, nothing prepared (the next transaction may run on another
server connection)."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Generator
from typing import Any

from ..._errors import ConfigurationError
from .._errors import LedgerError, frameless
from .._schema import before_accounts
from .postgres_url import PostgresURL, parse_url, scrub

__all__ = [
    "ISOLATION",
    "checked_url",
    "client_settings",
    "connect_error",
    "failing_as_ledger_error",
    "libpq_options",
    "load_psycopg",
    "local_timeouts",
    "opening",
    "postgres_error",
    "trusted",
]


def checked_url(url: str) -> PostgresURL:
    """``url`` as libpq reads it, or a ConfigurationError that names what is wrong, never the
    password (``postgres_url``); needs psycopg (the ``postgres`` extra)."""
    psycopg = load_psycopg()
    from psycopg.conninfo import conninfo_to_dict

    return parse_url(url, conninfo_to_dict, psycopg.Error)


def connect_error(exc: Exception, timeout: float, url: PostgresURL) -> LedgerError:
    """The ledger's error for a failed connect, with the URL's secrets hidden; chained to
    psycopg's only when that holds none of them (a traceback prints the cause's text), and then
    without psycopg's frames (``frameless``)."""
    failed = postgres_error(exc, timeout, url.secrets)
    failed.__cause__ = frameless(exc) if scrub(str(exc), url.secrets) == str(exc) else None
    return failed


def load_psycopg() -> Any:
    try:
        import psycopg
    except ImportError:
        raise ConfigurationError(
            "a PostgreSQL ledger needs psycopg: pip install 'python-paysdk[postgres]'"
        ) from None
    return psycopg


def trusted(sql: str) -> Any:
    """psycopg types queries as LiteralString; ours are constants and a table name checked as
    an identifier (see ``_schema``), so they are passed as such."""
    return sql


def client_settings(timeout: float) -> dict[str, Any]:
    """psycopg's and libpq's own settings, none of them sent to the server: connecting and a
    dead peer bounded by ``timeout``, transactions begun by the ledger, nothing prepared."""
    seconds = max(1, round(timeout))
    return {
        "connect_timeout": max(2, seconds),  # libpq's smallest
        "keepalives": 1,
        "keepalives_idle": seconds,
        "keepalives_interval": seconds,
        "keepalives_count": 3,
        "tcp_user_timeout": max(1, round(timeout * 1000)),
        "autocommit": True,  # so BEGIN and the timeouts go in one round trip (see opening)
        "prepare_threshold": None,  # a pooler may run the next statement on another connection
    }


def opening(timeout: float, options: str) -> str:
    """``BEGIN`` (READ COMMITTED) and this transaction's timeouts (``local_timeouts``, same
    arguments), as one simple query: one round trip."""
    return "; ".join([f"BEGIN {ISOLATION}", *local_timeouts(timeout, options)])


ISOLATION = "ISOLATION LEVEL READ COMMITTED"
"""Every ledger transaction's, whatever the server's, role's or app's default
(``default_transaction_isolation``, Django's ``isolation_level``): each statement sees what
committed before it, so a check after a lock wait (``_schema.Dialect.key_lock``) sees the rows
committed during it, and a claim's compare-and-set re-checks a row another worker committed (one
wins) rather than failing to serialize."""


def local_timeouts(timeout: float, options: str) -> list[str]:
    """The ``SET LOCAL`` statements (a pooled server connection is left as found) bounding a
    transaction's waits by ``timeout``; a statement gets twice, so a lock wait is the one named.
    One the connection's libpq ``options`` (the URL's, or ``PGOPTIONS``) set wins."""
    ms = max(1, round(timeout * 1000))
    wanted = {
        "lock_timeout": ms,
        "statement_timeout": 2 * ms,
        "idle_in_transaction_session_timeout": 10 * ms,
    }
    given = _options_set(options)
    return [f"SET LOCAL {name} = {value}" for name, value in wanted.items() if name not in given]


def libpq_options(connection: object) -> str:
    """The libpq ``options`` a psycopg connection was opened with (``""`` if none, or for no
    psycopg connection): a timeout they set is the connection's, not the ledger's."""
    info = getattr(connection, "info", None)
    return str(getattr(info, "options", None) or "")


def _options_set(options: str) -> set[str]:
    """The settings libpq ``options`` set, as PostgreSQL reads them: ``-c name=value``,
    ``-cname=value``, ``--name=value``, split at spaces (a backslash escapes the next character)."""
    words = [re.sub(r"\\(.)", r"\1", word) for word in re.findall(r"(?:\\.|\S)+", options)]
    settings: list[str] = []
    for index, word in enumerate(words):
        if word == "-c" and index + 1 < len(words):
            settings.append(words[index + 1])
        elif word.startswith(("-c", "--")) and len(word) > 2:
            settings.append(word[2:])
    return {setting.partition("=")[0].lower().replace("-", "_") for setting in settings}


@contextlib.contextmanager
def failing_as_ledger_error(timeout: float, options: str = "") -> Generator[None]:
    """Turn psycopg's errors in the block into the ledger's (``postgres_error``, same
    arguments), chained."""
    import psycopg

    try:
        yield
    except psycopg.Error as exc:
        raise postgres_error(exc, timeout, options=options) from exc


def postgres_error(
    exc: Exception, timeout: float, secrets: tuple[str, ...] = (), *, options: str = ""
) -> LedgerError:
    """The ledger's error for psycopg's ``exc``, ``secrets`` (URL, password) hidden; a timed-out
    wait says which, and how long: ``timeout``, unless the connection's libpq ``options`` set it."""
    import psycopg.errors

    detail = " ".join(scrub(str(exc), secrets).split())
    given = _options_set(options)
    if isinstance(exc, psycopg.errors.LockNotAvailable):
        if "lock_timeout" in given:
            return LedgerError(
                "the PostgreSQL ledger waited for a lock another transaction holds longer than "
                f"the lock_timeout its connection's options set: {detail}"
            )
        return LedgerError(
            f"the PostgreSQL ledger waited more than {timeout:g}s for a lock another "
            f"transaction holds (the ledger's timeout): {detail}"
        )
    if isinstance(exc, psycopg.errors.QueryCanceled):
        if "statement_timeout" in given:
            return LedgerError(
                "a PostgreSQL ledger statement took longer than the statement_timeout its "
                f"connection's options set: {detail}"
            )
        return LedgerError(
            f"a PostgreSQL ledger statement took more than {2 * timeout:g}s (twice the "
            f"ledger's timeout): {detail}"
        )
    if isinstance(exc, psycopg.errors.InsufficientPrivilege):
        return LedgerError(f"the PostgreSQL ledger's database role {_PRIVILEGES}: {detail}")
    if isinstance(exc, psycopg.errors.ReadOnlySqlTransaction):
        return LedgerError(f"the PostgreSQL ledger {_READ_ONLY}: {detail}")
    if isinstance(exc, psycopg.errors.InvalidSchemaName):
        return LedgerError(
            f"the PostgreSQL ledger found no schema to keep its table in: {detail}; the table= "
            "name's schema, or else the first of the search_path (the URL's options, the role's "
            "or the database's setting), must exist: create it, or name one that does"
        )
    hint = before_accounts(detail) if isinstance(exc, psycopg.errors.UndefinedColumn) else ""
    return LedgerError(f"the PostgreSQL ledger failed: {detail}{hint}")


_PRIVILEGES = (
    "lacks a privilege the ledger needs: SELECT, INSERT and UPDATE on its table, USAGE on its "
    "schema and, to create the table or its indexes, CREATE on the schema (or to own the "
    "table); grant them (GRANT SELECT, INSERT, UPDATE ON paysdk_fulfilments TO ...), or create "
    "the table and its indexes as a role that may (its ledger's create_table(), or the SQL in "
    "docs/fulfilment.md, The schema)"
)
"""What a role refused a privilege is told: a setting to change, not an outage to wait out."""

_READ_ONLY = (
    "could not write, its transaction being read-only: a standby's are (give the ledger the "
    "primary's URL; with several hosts, add target_session_attrs=read-write), and so are those "
    "of a role or database whose default_transaction_read_only is on (turn it off for the "
    "ledger's role)"
)
"""What a ledger on a read-only server or session is told."""

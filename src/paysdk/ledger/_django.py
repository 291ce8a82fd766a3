"""``DjangoLedger``, the ledger on the merchant's Django database (its driver:
``_databases.django``), and its migrations' steps."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from django.db import connections
from django.db.backends.base.base import BaseDatabaseWrapper

from .._errors import ConfigurationError
from . import _migration, _schema, _statements
from ._base import DEFAULT_LEASE
from ._databases.django import DIALECTS, DjangoDriver, run_statement
from ._databases.driver import Driver
from ._steps import Rows
from ._sync.ledger import Ledger
from ._sync.run import run_in_transaction

__all__ = ["DjangoLedger", "index_by_key", "key_by_account"]


class DjangoLedger(Ledger):
    """A [`Ledger`][paysdk.ledger.Ledger] on the merchant's own Django database.

    ``DjangoLedger()`` uses ``DATABASES["default"]``; ``DjangoLedger(using="payments")`` another.
    The app ``paysdk.integrations.django`` in ``INSTALLED_APPS`` and ``manage.py migrate`` make
    its table. Every transaction is its own ``transaction.atomic`` block: call it outside the
    merchant's (see [Fulfilment](fulfilment.md)). Sync only: from async code, use
    [`AsyncLedger`][paysdk.ledger.AsyncLedger] with the database's URL.
    """

    def __init__(
        self,
        using: str = "default",
        *,
        lease: float | dt.timedelta = DEFAULT_LEASE,
        table: str = _schema.DEFAULT_TABLE,
        create_table: bool = False,
        timeout: float = 30.0,
    ) -> None:
        """Check the settings; no connection is opened until the first call.

        Args:
            using: the alias of the database in Django's ``DATABASES``.
            lease: how long a claim holds, as for [`Ledger`][paysdk.ledger.Ledger].
            table: the ledger's table; the migration makes ``paysdk_fulfilments``.
            create_table: create the table on first use; off, since the migration owns it.
            timeout: the longest one database wait may take, in seconds.

        Raises:
            ConfigurationError: ``using`` is no database of Django's, or one that is neither
                SQLite nor PostgreSQL.
        """
        if not isinstance(using, str) or using not in connections.settings:
            raise ConfigurationError(
                f"using must name one of Django's DATABASES ({', '.join(connections.settings)}), "
                f"not {using!r}"
            )
        vendor = connections[using].vendor
        if vendor not in DIALECTS:
            raise ConfigurationError(
                f"DjangoLedger supports SQLite and PostgreSQL; Django's database {using!r} is "
                f"{vendor}: use paysdk.Ledger with another database's URL"
            )
        self.using = using
        self._backend = vendor
        self._where = using
        self._settle(lease=lease, table=table, create_table=create_table, timeout=timeout)

    def _open_driver(self) -> Driver:
        return DjangoDriver(self.using, timeout=self.timeout)

    def __repr__(self) -> str:
        return (
            f"<paysdk.{type(self).__name__} {self._backend} using={self.using!r} "
            f"table={self.table!r}>"
        )

    @staticmethod
    def state_sql(vendor: str) -> str:
        """The SQL expression of a row's state as the ledger reads it, for the ORM (``RawSQL``):
        a claim whose lease ran out by the database's clock is ``unknown``.

        Args:
            vendor: the database's, as Django names it (``connection.vendor``).

        Returns:
            A ``CASE`` expression over the table's columns, with no parameters, in Django's
            parameter style (a literal ``%`` doubled), as ``RawSQL`` takes it.

        Raises:
            ConfigurationError: neither ``"sqlite"`` nor ``"postgresql"``.
        """
        if vendor not in DIALECTS:
            raise ConfigurationError(f"DjangoLedger supports sqlite and postgresql, not {vendor!r}")
        dialect = DIALECTS[vendor]
        return dialect.sql(_statements.current_state(dialect))


def key_by_account(connection: BaseDatabaseWrapper, table: str = _schema.DEFAULT_TABLE) -> None:
    """Key ``table`` by (account, reference) in a Django migration's transaction on its
    ``connection`` (``schema_editor.connection``), every row kept as the account ``''``."""
    dialect = DIALECTS[connection.vendor]
    migrate = _migration.add_account(dialect, table)
    run_in_transaction(_MigrationConnection(connection), dialect, migrate)


def index_by_key(connection: BaseDatabaseWrapper, table: str = _schema.DEFAULT_TABLE) -> None:
    """Make the indexes ``table`` lacks (``_migration.key_indexes``; ``key_by_account`` made the
    first alone) in a Django migration's transaction on its ``connection``."""
    dialect = DIALECTS[connection.vendor]
    indexes = _migration.key_indexes(dialect, table)
    run_in_transaction(_MigrationConnection(connection), dialect, indexes)


class _MigrationConnection:
    """A Django migration's connection as the ledger's driver runs statements on it: its
    transaction is the migration's, which Django commits or rolls back."""

    def __init__(self, wrapper: BaseDatabaseWrapper) -> None:
        self.wrapper = wrapper

    def execute(self, sql: str, params: Sequence[object]) -> Rows:
        return run_statement(self.wrapper, sql, list(params))

    def commit(self) -> None:
        raise TypeError("the migration's transaction is Django's to commit")

    def rollback(self) -> None:
        raise TypeError("the migration's transaction is Django's to roll back")

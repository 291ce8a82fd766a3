"""The ledger's table, for migrations and the admin: exactly the columns the ledger creates, read
and written only by [`DjangoLedger`][paysdk.integrations.django.DjangoLedger]'s SQL, never through
this model (timestamps as ``LedgerTimestampField`` says)."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import models
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models.expressions import Col
from django.utils import timezone

from ..._core.terminal import printable
from ..._models.timestamps import wire_timestamp
from ...ledger import DEFAULT_TABLE

__all__ = ["Fulfilment", "LedgerTimestampField"]


if TYPE_CHECKING:  # each field says what it holds (below)
    _DateTimeField = models.DateTimeField[Any, Any]
else:  # not generic at run time
    _DateTimeField = models.DateTimeField


class LedgerTimestampField(_DateTimeField):
    """A ``DateTimeField`` stored as the ledger stores time, the model seeing datetimes as Django's
    own fields do (aware with ``USE_TZ``, else naive in ``TIME_ZONE``).

    On SQLite, Django writes ``2026-11-23 13:00:00.000000``, which compares wrongly as text
    beside the ledger's ``2026-11-23T13:00:00.000000Z``: there it is a ``text`` column in the
    ledger's form (Django's converter reads either), which queries read with its ``T`` as a space,
    the form Django's SQL functions (``__date``, ``TruncDate``, ``dates()``) parse. Elsewhere it
    is Django's own field.
    """

    def db_type(self, connection: BaseDatabaseWrapper) -> str | None:
        if connection.vendor == "sqlite":
            return "text"
        return super().db_type(connection)

    def get_col(self, alias: str, output_field: Any = None) -> Any:
        """The column as queries read it: ``_SpacedColumn``."""
        column = super().get_col(alias, output_field)
        return _SpacedColumn(column.alias, self, column.output_field)

    def get_db_prep_value(
        self, value: Any, connection: BaseDatabaseWrapper, prepared: bool = False
    ) -> Any:
        """A value compared with the column: on SQLite, the ledger's text, ``T`` spaced."""
        if connection.vendor != "sqlite":
            return super().get_db_prep_value(value, connection, prepared)
        stored = self._stored(value if prepared else self.get_prep_value(value))
        return stored.replace("T", " ") if isinstance(stored, str) else stored

    def get_db_prep_save(self, value: Any, connection: BaseDatabaseWrapper) -> Any:
        """A value written: on SQLite, the ledger's own text."""
        if connection.vendor != "sqlite" or hasattr(value, "as_sql"):
            return super().get_db_prep_save(value, connection)
        return self._stored(self.get_prep_value(value))

    def get_placeholder(self, value: Any, compiler: Any, connection: BaseDatabaseWrapper) -> str:
        """How an ``UPDATE`` writes ``value``: on SQLite, an expression's time (``F`` of another
        timestamp, read ``T`` spaced as ``_SpacedColumn`` reads it) with its ``T`` back."""
        if connection.vendor == "sqlite" and hasattr(value, "as_sql"):
            return "replace(%s, ' ', 'T')"
        return "%s"

    def get_placeholder_sql(
        self, value: Any, compiler: Any, connection: BaseDatabaseWrapper
    ) -> tuple[str, Any]:
        """``get_placeholder`` as Django 6.1 and later ask it: the SQL with its parameters."""
        placeholder = self.get_placeholder(value, compiler, connection)
        if hasattr(value, "as_sql"):
            sql, params = compiler.compile(value)
            return placeholder % sql, params
        return placeholder, (value,)

    @staticmethod
    def _stored(value: Any) -> Any:
        """A datetime as the ledger's SQLite text; another value as it is."""
        if isinstance(value, dt.datetime):
            if timezone.is_naive(value):  # with USE_TZ off: in TIME_ZONE, as Django's own
                value = timezone.make_aware(value, timezone.get_default_timezone())
            return wire_timestamp(value)
        return value

    def from_db_value(self, value: Any, expression: object, connection: BaseDatabaseWrapper) -> Any:
        """With ``USE_TZ`` off, the naive time in ``TIME_ZONE`` Django's fields hold; SQLite's
        text says UTC, which Django's converter keeps (PostgreSQL's it reads naive already)."""
        if isinstance(value, dt.datetime) and not settings.USE_TZ and timezone.is_aware(value):
            return timezone.make_naive(value, timezone.get_default_timezone())
        return value


class _SpacedColumn(Col):
    """A ledger timestamp column, read on SQLite with its ``T`` as a space: Django's SQL functions
    parse only that form of a time (the ledger's would read as NULL); the text still sorts as
    time does, and its ``Z`` still says UTC to Django's converter."""

    def as_sqlite(self, compiler: Any, connection: BaseDatabaseWrapper) -> tuple[str, Any]:
        sql, params = self.as_sql(compiler, connection)
        return f"replace({sql}, 'T', ' ')", params


class Fulfilment(models.Model):
    """One payment's row in the ledger (see docs/fulfilment.md, "The schema")."""

    reference: models.TextField[str, str] = models.TextField(primary_key=True)
    state: models.TextField[str, str] = models.TextField()
    claim_token: models.TextField[str | None, str | None] = models.TextField(null=True)
    attempts: models.IntegerField[int, int] = models.IntegerField()
    lease_expires_at: models.DateTimeField[dt.datetime | None, dt.datetime | None] = (
        LedgerTimestampField(null=True)
    )
    amount: models.BigIntegerField[int, int] = models.BigIntegerField()
    currency: models.TextField[str, str] = models.TextField()
    claimed_at: models.DateTimeField[dt.datetime, dt.datetime] = LedgerTimestampField()
    fulfilled_at: models.DateTimeField[dt.datetime | None, dt.datetime | None] = (
        LedgerTimestampField(null=True)
    )
    last_error: models.TextField[str | None, str | None] = models.TextField(null=True)
    reason: models.TextField[str | None, str | None] = models.TextField(null=True)
    account: models.TextField[str, str] = models.TextField(default="")
    """The merchant account's label; with ``reference``, the database's primary key."""
    verified_by: models.TextField[str | None, str | None] = models.TextField(null=True)
    """The fingerprint of the key whose client verified the payment (never the key)."""

    class Meta:
        db_table = DEFAULT_TABLE

    def __str__(self) -> str:
        """The reference, each character a browser shows as nothing or a blank an escape (a
        backslash of it doubled), so the row's page titled with it is told from another's."""
        return printable(str(self.reference).replace("\\", "\\\\"))

"""The ledger's table, for migrations and the admin: exactly the columns the ledger creates, read
and written only by [`DjangoLedger`][paysdk.integrations.django.DjangoLedger]'s SQL, never through
this model (timestamps as ``LedgerTimestampField`` says)."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import models
from django.db.backends.base.base import BaseDatabaseWrapper
from django.utils import timezone

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
    ledger's form (Django's converter reads either). Elsewhere it is Django's own field.
    """

    def db_type(self, connection: BaseDatabaseWrapper) -> str | None:
        if connection.vendor == "sqlite":
            return "text"
        return super().db_type(connection)

    def get_db_prep_value(
        self, value: Any, connection: BaseDatabaseWrapper, prepared: bool = False
    ) -> Any:
        if connection.vendor != "sqlite":
            return super().get_db_prep_value(value, connection, prepared)
        if not prepared:
            value = self.get_prep_value(value)
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
        return str(self.reference)

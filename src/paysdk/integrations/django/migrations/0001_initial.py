"""The ledger's table, ``paysdk_fulfilments``, with exactly the columns the ledger creates itself
(``paysdk.ledger``'s schema): timestamps ``text`` on SQLite, ``timestamptz`` elsewhere."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

from django.db import migrations, models

import paysdk.integrations.django.models

if TYPE_CHECKING:
    from django.db.migrations.operations.base import Operation


class Migration(migrations.Migration):
    initial: ClassVar[bool | None] = True

    dependencies: ClassVar[Sequence[tuple[str, str]]] = ()

    operations: ClassVar[Sequence[Operation]] = (
        migrations.CreateModel(
            name="Fulfilment",
            fields=[
                ("reference", models.TextField(primary_key=True, serialize=False)),
                ("state", models.TextField()),
                ("claim_token", models.TextField(null=True)),
                ("attempts", models.IntegerField()),
                (
                    "lease_expires_at",
                    paysdk.integrations.django.models.LedgerTimestampField(null=True),
                ),
                ("amount", models.BigIntegerField()),
                ("currency", models.TextField()),
                ("claimed_at", paysdk.integrations.django.models.LedgerTimestampField()),
                ("fulfilled_at", paysdk.integrations.django.models.LedgerTimestampField(null=True)),
                ("last_error", models.TextField(null=True)),
                ("reason", models.TextField(null=True)),
            ],
            options={"db_table": "paysdk_fulfilments"},
        ),
    )

"""The ledger's key becomes (account, reference): a fulfilment is one merchant account's payment
of one reference; ``verified_by`` holds the fingerprint of the key that verified it. Every
existing row is kept, as the unlabelled account ``''``; the table is
changed with the ledger's own statements (``paysdk.ledger``'s migration of a table made before).

Django's state keeps ``reference`` as the model's primary key (Django before 5.2 has no
composite one); the database's is (account, reference), as the ledger makes it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from django.db import migrations, models

if TYPE_CHECKING:
    from django.db.migrations.operations.base import Operation


def key_by_account(apps: Any, schema_editor: Any) -> None:
    from paysdk.ledger._django import key_by_account as migrate

    migrate(schema_editor.connection)


class Migration(migrations.Migration):
    dependencies: ClassVar[Sequence[tuple[str, str]]] = (("paysdk", "0001_initial"),)

    operations: ClassVar[Sequence[Operation]] = (
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunPython(key_by_account, migrations.RunPython.noop)],
            state_operations=[
                migrations.AddField(
                    model_name="fulfilment",
                    name="account",
                    field=models.TextField(default=""),
                ),
                migrations.AddField(
                    model_name="fulfilment",
                    name="verified_by",
                    field=models.TextField(null=True),
                ),
            ],
        ),
    )

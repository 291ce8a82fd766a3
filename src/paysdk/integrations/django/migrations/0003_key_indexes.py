"""The index of the ledger's accounts by key fingerprint, (verified_by, account): a payment's
check that its key's rows are held under no other label reads a few of its entries, where
without it the check walks every account label the table holds. Made with the ledger's own
statement (``paysdk.ledger``'s schema), as a ledger creating its table makes it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from django.db import migrations

if TYPE_CHECKING:
    from django.db.migrations.operations.base import Operation


def index_by_key(apps: Any, schema_editor: Any) -> None:
    from paysdk.ledger._django import index_by_key as index

    index(schema_editor.connection)


class Migration(migrations.Migration):
    dependencies: ClassVar[Sequence[tuple[str, str]]] = (("paysdk", "0002_account"),)

    operations: ClassVar[Sequence[Operation]] = (
        migrations.RunPython(index_by_key, migrations.RunPython.noop),
    )

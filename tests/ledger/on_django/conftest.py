"""The Django ledger's databases: migrated by Django's own test machinery, once per session.

``create_test_db`` makes each test database (a SQLite file; a database on the throwaway
PostgreSQL server) and runs every installed app's migrations on it, paysdk's included, as
``manage.py test`` would; each test then starts with an empty ledger table.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.db import connections

from tests.support.django_site import configure, postgres_settings

configure()


def _test_database(alias: str) -> Iterator[str]:
    connection = connections[alias]
    original = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        yield alias
    finally:
        connection.creation.destroy_test_db(original, verbosity=0)


@pytest.fixture(scope="session")
def django_sqlite() -> Iterator[str]:
    """The ``default`` alias, a SQLite file, migrated."""
    yield from _test_database("default")


@pytest.fixture(scope="session")
def django_postgres(postgres_url: str) -> Iterator[str]:
    """The ``postgres`` alias, on the throwaway server, migrated."""
    connections.settings["postgres"].update(postgres_settings(postgres_url))
    yield from _test_database("postgres")


@pytest.fixture(params=["sqlite", "postgres"])
def using(request: pytest.FixtureRequest) -> str:
    """A migrated database's alias, SQLite or PostgreSQL, its ledger table emptied."""
    from paysdk.integrations.django.models import Fulfilment

    alias: str = request.getfixturevalue(f"django_{request.param}")
    Fulfilment.objects.using(alias).all().delete()
    return alias

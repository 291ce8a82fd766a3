"""The PostgreSQL and SQLAlchemy drivers: ``_async/`` is the source, ``_sync/`` generated."""

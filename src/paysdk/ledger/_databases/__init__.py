"""The ledger on each database: SQLite (``sqlite``), PostgreSQL (``postgres``, its URL in
``postgres_url``), Django's connection (``django``) and a shop's SQLAlchemy engine (``alchemy``);
the PostgreSQL and SQLAlchemy drivers are in ``_async/``, with their generated ``_sync/``.

Each driver carries out the plans' steps (``..._plans``) on its database, as ``driver`` says a
driver must, and turns its database's errors into ``LedgerError``.
"""

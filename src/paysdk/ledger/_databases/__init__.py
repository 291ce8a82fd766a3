"""The ledger on each database, one module a database: SQLite (``sqlite``), PostgreSQL
(``postgres``, its URL in ``postgres_url``), Django's own connection (``django``) and a shop's
SQLAlchemy engine (``alchemy``, the drivers in ``_async/`` with their generated ``_sync/``).

Each driver carries out the steps of the ledger's plans (``..._plans``) on its database, as
``driver`` says a driver must, and turns its database's errors into ``LedgerError``.
"""

"""The ledger on each database: SQLite (``sqlite``), PostgreSQL (``postgres``, ``postgres_url``),
Django's connection (``django``), a SQLAlchemy engine (``alchemy``), the PostgreSQL and SQLAlchemy
drivers in ``_async/``; ``driver`` says what each must do."""

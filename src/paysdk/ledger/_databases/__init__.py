"""The ledger on each database: SQLite (``sqlite``), PostgreSQL (``postgres``, its URL in
``postgres_url``), Django's connection (``django``) and a shop's SQLAlchemy engine (``alchemy``);
the PostgreSQL and SQLAlchemy drivers are in ``_async/`` (``_sync/`` generated); ``driver``
says what each must do."""

"""The clients: ``_async/`` is their one source, ``_sync/`` generated from it."""

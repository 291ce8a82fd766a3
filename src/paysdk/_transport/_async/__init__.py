"""The loops that carry plans out: ``_async/`` is their source, ``_sync/`` generated from it."""

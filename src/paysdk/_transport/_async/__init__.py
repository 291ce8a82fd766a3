"""The loops that carry plans out, and the httpx transport on httpcore's pools: ``_async/`` is
their source, ``_sync/`` generated from it."""

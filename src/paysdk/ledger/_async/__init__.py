"""The ledger shell, its plan runner and the reconcile loop.

``_async/`` is the source; ``_sync/`` is generated from it."""

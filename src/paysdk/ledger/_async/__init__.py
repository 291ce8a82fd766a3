"""The ledger's plan runner and reconcile loop: ``_async/`` is the source, ``_sync/`` generated."""

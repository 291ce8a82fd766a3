"""The ledger shell, its plan runner and the reconcile loop (``_sync/`` is generated from these)."""

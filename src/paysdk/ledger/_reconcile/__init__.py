"""Reconciliation, I/O-free: the plan that compares the service's list with the ledger (``plan``)
and what it reports (``report``). Its loop is ``.._async/reconcile.py`` (sync twin generated)."""

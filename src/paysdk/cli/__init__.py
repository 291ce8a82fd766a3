"""The ``paysdk`` command line: verify and list payments, run the sandbox, send a callback,
reconcile a ledger. ``main`` is the console script's entry point (``paysdk = paysdk.cli:main``)."""

from ._main import main

__all__ = ["main"]

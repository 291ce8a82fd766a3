"""paysdk.ledger: fulfil once, reconcile."""

"""paysdk.sandbox: the local stand-in for the service."""

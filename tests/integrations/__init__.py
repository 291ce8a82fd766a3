"""paysdk.integrations: the framework helpers through the real frameworks."""

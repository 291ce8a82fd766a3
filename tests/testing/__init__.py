"""paysdk.testing: the merchant's testing kit."""

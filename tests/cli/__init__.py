"""paysdk.cli: the command line end to end."""

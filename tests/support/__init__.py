"""Helpers the tests share: hostile servers, TLS certificates, a forward proxy, a stand-in
merchant, PostgreSQL, child processes."""

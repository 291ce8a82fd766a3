"""Helpers the tests share: hostile servers, TLS certificates, a stand-in merchant, PostgreSQL,
child processes."""

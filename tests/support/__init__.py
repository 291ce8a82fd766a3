"""Helpers the tests share: hostile servers, a stand-in merchant, PostgreSQL, child processes."""

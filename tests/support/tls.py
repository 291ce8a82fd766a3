"""Certificates for tests over TLS: one throwaway CA (trustme) and the contexts built on it.

The fixtures in tests/conftest.py (``tls_ca``, ``tls_server_context``, ``tls_client_context``,
``tls_ca_bundle``, ``tls_sandbox``) use these; the CA and the server's certificate are made once
per session. Nothing outside the test run trusts the CA: its key lives only in memory.
"""

from __future__ import annotations

import ssl
from pathlib import Path

import trustme

__all__ = ["SERVER_NAMES", "client_context", "server_context", "write_bundle"]

SERVER_NAMES = ("127.0.0.1", "localhost", "::1", "payments.localhost")
"""The names the servers' certificate is good for: the loopback addresses (as IP address SANs,
so a client connecting to ``https://127.0.0.1:PORT`` verifies it), ``localhost``, and the name
the test proxy resolves to 127.0.0.1 (``tests/support/proxy.py``'s ``BEYOND``)."""


def server_context(ca: trustme.CA) -> ssl.SSLContext:
    """A server-side context presenting a certificate ``ca`` issued for :data:`SERVER_NAMES`."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ca.issue_cert(*SERVER_NAMES).configure_cert(context)
    return context


def client_context(ca: trustme.CA) -> ssl.SSLContext:
    """A client context that verifies certificates and host names, trusting ``ca`` alone (no
    system CAs: a test that passes cannot have leaned on them)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # CERT_REQUIRED, check_hostname
    ca.configure_trust(context)
    return context


def write_bundle(ca: trustme.CA, path: Path) -> Path:
    """Write ``ca``'s certificate to ``path`` as PEM (a CA bundle of one) and return ``path``."""
    ca.cert_pem.write_to_path(str(path))
    return path

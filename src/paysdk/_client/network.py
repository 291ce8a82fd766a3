"""How a client's requests reach the service, checked when it is made: the TLS trust from
``verify=``, the proxy from ``proxy=`` or the environment, and TLS unverified only to this
machine."""

from __future__ import annotations

import os
import ssl
from typing import cast
from urllib.parse import urlsplit

from .._core.config import is_loopback
from .._errors import ConfigurationError
from .._transport.network import Network, Proxy, parse_proxy
from .._transport.tls import ssl_context, unloadable

__all__ = ["check_tls_verified", "create_network"]


def create_network(*, verify: object, proxy: object, base_url: str) -> Network:
    """How requests reach the service: the TLS context from ``verify``, and ``proxy`` or the
    environment's; checked before any request."""
    if isinstance(verify, (ssl.SSLContext, bool)):
        given: ssl.SSLContext | str | bool = verify
    elif isinstance(verify, (str, os.PathLike)):
        path: str | bytes = os.fspath(cast("str | os.PathLike[str]", verify))
        if not isinstance(path, str) or not os.path.exists(path):
            raise ConfigurationError(
                f"verify={path!r} names no CA bundle: give the path of a PEM file (or of a "
                "directory of hashed certificates), an ssl.SSLContext, or True"
            )
        given = path
    else:
        raise ConfigurationError(
            "verify must be True, an ssl.SSLContext or the path of a CA bundle, "
            f"not {type(verify).__name__}"
        )
    if base_url:  # unset (checked when a call gives one): no host to check yet
        check_tls_verified(base_url, verifies=verify is not False)
    chosen: Proxy | None = None
    if proxy is not None:
        if not isinstance(proxy, str):
            raise ConfigurationError(f"proxy must be a URL (str), not {type(proxy).__name__}")
        try:
            chosen = parse_proxy(proxy)
        except ValueError as exc:
            raise ConfigurationError(f"proxy: {exc}") from None
    tls_ahead = base_url.startswith("https:") or bool(chosen and chosen.url.startswith("https:"))
    if tls_ahead or isinstance(given, str):  # an http:// sandbox's client loads no CA bundle
        try:
            given = ssl_context(given)
        except (OSError, ValueError) as exc:  # ssl.SSLError is an OSError: a file that is no bundle
            raise ConfigurationError(unloadable(given, exc)) from None
    try:
        return Network(given, chosen)
    except ValueError as exc:  # the environment names a proxy that cannot be used
        raise ConfigurationError(str(exc)) from None


def check_tls_verified(base_url: str, *, verifies: bool) -> None:
    """Refuse an unverified TLS connection to anything but this machine."""
    host = urlsplit(base_url).hostname or ""
    if not verifies and not is_loopback(host):
        raise ConfigurationError(
            f"verify=False would send the secret key to {host!r} without checking who answers; "
            "it is allowed for a loopback base_url only. Trust the service's certificate "
            "authority with verify='/path/to/ca-bundle.pem' (or SSL_CERT_FILE) instead"
        )

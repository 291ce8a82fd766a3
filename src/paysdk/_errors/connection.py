"""No answer, or no way to ask: ``APIConnectionError`` and its kinds (DNS, refused, reset, a
timeout, an untrusted certificate, no TLS, a proxy's refusal), and a client that cannot send
(closed, or used from an event loop other than its own)."""

from __future__ import annotations

from .base import PaySDKError


class APIConnectionError(PaySDKError):
    """No answer from the service: DNS failure, refused or reset connection, TLS error."""

    method: str
    url: str

    def __init__(self, message: str, *, method: str, url: str) -> None:
        """Raised by paysdk once the retries are used up (at once for TLS and proxy failures).

        Args:
            message: what went wrong and, where the caller can fix it, what to change.
            method: the request's method.
            url: the request's URL.
        """
        super().__init__(message)
        self.method = method
        self.url = url

    def __str__(self) -> str:
        return f"{self.message} ({self.method} {self.url})"


class APITimeoutError(APIConnectionError):
    """The service did not answer within the timeout."""


class CertificateVerificationError(APIConnectionError):
    """The service's TLS certificate could not be verified: an unknown CA, a wrong host name or
    an expired certificate. Not retried, since trying again cannot change the certificate; trust
    a private CA with ``verify=`` or ``SSL_CERT_FILE``."""


class TLSProtocolError(APIConnectionError):
    """The server at the service's address did not answer in TLS: it most likely speaks plain
    HTTP (an ``https://`` URL on an ``http://`` port), or offers only TLS versions the client
    refuses (TLS 1.0 or 1.1); or it refused the handshake: it requires a client certificate
    (pass one in the ``ssl.SSLContext`` given as ``verify=``) or refused the one sent. Not
    retried, since trying again meets the same server; use ``http://`` if it is meant to be
    plain HTTP, or the port that speaks TLS 1.2 or later."""


class ProxyAuthenticationError(APIConnectionError):
    """The proxy refused to carry the request to the service: 407, without the right
    credentials; 403, its policy forbids it; 400 or 405, it does not take the tunnel's
    ``CONNECT``. Not retried: the next attempt would bring the same request and credentials to
    the same proxy; fix them in the proxy URL (``proxy=`` or the environment variable the
    message names), or ask the proxy's administrators."""


class ClientClosedError(PaySDKError, RuntimeError):
    """The client was closed; ``with_options`` copies share, and so lose, its connections."""


class EventLoopError(PaySDKError, RuntimeError):
    """An ``AsyncClient`` was used from an event loop other than the one it first ran in.

    Its connections belong to that loop. Make one ``AsyncClient`` per event loop: inside
    ``asyncio.run(...)``, or in your web framework's lifespan.
    """


def closed_error(what: str) -> ClientClosedError:
    """The error for using a closed ``what`` (``Client``, ``AsyncClient``...) or a copy of it."""
    return ClientClosedError(
        f"this {what} is closed (or the client it was copied from is); make a new one"
    )

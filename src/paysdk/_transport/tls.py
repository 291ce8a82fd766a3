"""TLS for every backend: one ``ssl.SSLContext`` made from ``verify=``, and what a certificate
failure looks like whichever library met it."""

from __future__ import annotations

import errno
import functools
import os
import ssl
from collections.abc import Iterator
from pathlib import Path

from .._core.steps import Failure

__all__ = ["chain", "ssl_context", "tls_failure", "unloadable"]

NOT_TLS = frozenset({"WRONG_VERSION_NUMBER", "RECORD_LAYER_FAILURE", "PACKET_LENGTH_TOO_LONG"})
"""OpenSSL's reasons when what came back to its hello is not TLS at all (plain HTTP, most
likely), by version: 1.1 and 3.0/3.1 say the first, later ones may say another."""
NO_COMMON_VERSION = frozenset(
    {"TLSV1_ALERT_PROTOCOL_VERSION", "UNSUPPORTED_PROTOCOL", "NO_PROTOCOLS_AVAILABLE"}
)
"""OpenSSL's reasons when the server and the client share no TLS version: the server offers
only TLS 1.0 or 1.1, which Python's ssl refuses, or the client's context was narrowed."""
CERTIFICATE_REQUIRED = frozenset({"TLSV13_ALERT_CERTIFICATE_REQUIRED"})
"""OpenSSL's reason when a TLS 1.3 server wanted a client certificate and was sent none."""
HANDSHAKE_REFUSED = frozenset({"SSLV3_ALERT_HANDSHAKE_FAILURE"})
"""OpenSSL's reason when a server refused the handshake without saying why: under TLS 1.2, what
a server that wants a client certificate says to a client that sent none, or one sharing no
cipher with it."""
CERTIFICATE_REFUSED = frozenset(
    {
        "TLSV1_ALERT_UNKNOWN_CA",
        "SSLV3_ALERT_BAD_CERTIFICATE",
        "SSLV3_ALERT_UNSUPPORTED_CERTIFICATE",
        "SSLV3_ALERT_CERTIFICATE_REVOKED",
        "SSLV3_ALERT_CERTIFICATE_EXPIRED",
        "SSLV3_ALERT_CERTIFICATE_UNKNOWN",
    }
)
"""OpenSSL's reasons when the server refused the client certificate it was sent (the client's
own refusal of the server's is an ``SSLCertVerificationError``, met first)."""
CLIENT_CERTIFICATE_HOW = (
    "load it into an ssl.SSLContext (context.load_cert_chain(certfile, keyfile)) and pass that "
    "as verify="
)


def ssl_context(verify: ssl.SSLContext | str | bool) -> ssl.SSLContext:
    """The context every backend verifies the service with: ``verify`` itself, one trusting the
    CA bundle at that path (a file, or a directory of hashed certificates), none (``False``), or
    the default trust (``True``): what httpx trusts (what ``SSL_CERT_FILE`` or ``SSL_CERT_DIR``
    names, else certifi's bundle), so the aiohttp backend trusts the same. Loading a bundle costs
    tens of milliseconds, so the process's clients share one default context, as aiohttp shares
    its own (a change of either variable makes another)."""
    if isinstance(verify, ssl.SSLContext):
        return verify
    if verify is True:
        return _default_context(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))
    if verify is False:
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        return context
    path = Path(verify)
    if path.is_dir():
        return ssl.create_default_context(capath=str(path))
    return ssl.create_default_context(cafile=str(path))


def unloadable(verify: ssl.SSLContext | str | bool, exc: Exception) -> str:
    """What to tell a user whose trust ``ssl_context(verify)`` could not load (``exc``): with
    the default ``verify``, the ``SSL_CERT_FILE`` that named the bundle, since that user passed
    no ``verify=`` at all (a bad ``SSL_CERT_DIR`` fails no load: it only trusts nothing)."""
    cert_file = os.environ.get("SSL_CERT_FILE")
    if verify is True and cert_file:
        return (
            f"SSL_CERT_FILE={cert_file!r} cannot be loaded as a CA bundle: {exc}; point it at a "
            "PEM file of CA certificates, or unset it to trust certifi's bundle"
        )
    return f"verify={verify!r} cannot be loaded as a CA bundle: {exc}"


@functools.lru_cache(maxsize=4)
def _default_context(cert_file: str | None, cert_dir: str | None) -> ssl.SSLContext:
    """The default trust while the environment names ``cert_file`` and ``cert_dir``. A
    ``cert_file`` that is no file is refused here: httpx before 0.28 passed over it unsaid."""
    import httpx

    if cert_file and not Path(cert_file).is_file():
        code = errno.EISDIR if Path(cert_file).is_dir() else errno.ENOENT
        raise OSError(code, os.strerror(code), cert_file)
    return httpx.create_ssl_context(verify=True, trust_env=True)


def tls_failure(exc: BaseException) -> Failure | None:
    """The ``Failure`` a refused certificate, a server that does not speak TLS or one that
    refused the handshake (a client certificate it wants) stands for, whichever library raised
    ``exc``; ``None`` for any other error."""
    if (refused := certificate_error(exc)) is not None:
        problem = f"{certificate_problem(refused)}; {certificate_advice(refused)}"
        return Failure("certificate", problem, cause=exc)
    if (not_tls := _ssl_error(exc, NOT_TLS)) is not None:
        return Failure("tls_protocol", str(not_tls), cause=exc)
    if (outdated := _ssl_error(exc, NO_COMMON_VERSION)) is not None:
        return Failure("tls_version", str(outdated), cause=exc)
    if (unsent := _ssl_error(exc, CERTIFICATE_REQUIRED)) is not None:
        return Failure(
            "tls_refused",
            f"requires a client certificate and was sent none ({unsent}): "
            + CLIENT_CERTIFICATE_HOW,
            cause=exc,
        )
    if (handshake := _ssl_error(exc, HANDSHAKE_REFUSED)) is not None:
        return Failure(
            "tls_refused",
            f"refused the TLS handshake ({handshake}): it may require a client certificate "
            f"({CLIENT_CERTIFICATE_HOW}), or share no cipher with this client",
            cause=exc,
        )
    if (theirs := _ssl_error(exc, CERTIFICATE_REFUSED)) is not None:
        return Failure(
            "tls_refused",
            f"refused this client's certificate ({theirs}): check the certificate and key "
            "loaded into the ssl.SSLContext given as verify= (its issuer, its dates)",
            cause=exc,
        )
    return None


def certificate_error(exc: BaseException) -> ssl.SSLCertVerificationError | None:
    """The certificate failure behind ``exc``, if one is: searched along its causes, and in
    aiohttp's ``certificate_error`` attribute first: aiohttp's wrapper is an
    ``SSLCertVerificationError`` too, but without OpenSSL's ``verify_message`` and ``reason``."""
    for current in chain(exc):
        held = getattr(current, "certificate_error", None)
        if isinstance(held, ssl.SSLCertVerificationError):
            return held
        if isinstance(current, ssl.SSLCertVerificationError):
            return current
    return None


def certificate_problem(error: ssl.SSLCertVerificationError) -> str:
    """What is wrong with the certificate, in OpenSSL's words."""
    # getattr: OpenSSL sets both on the errors it raises; a subclass made in Python has neither
    return getattr(error, "verify_message", None) or getattr(error, "reason", None) or str(error)


WRONG_NAME = frozenset({62, 64})
"""OpenSSL's codes for a certificate that names other hosts (``X509_V_ERR_HOSTNAME_MISMATCH``)
or other addresses (``X509_V_ERR_IP_ADDRESS_MISMATCH``) than the one connected to."""
OUT_OF_DATE = frozenset({9, 10})
"""OpenSSL's codes for a certificate not valid yet (``X509_V_ERR_CERT_NOT_YET_VALID``) or no
longer (``X509_V_ERR_CERT_HAS_EXPIRED``)."""


def certificate_advice(error: ssl.SSLCertVerificationError) -> str:
    """What to do about ``error``: trusting another authority cures an unknown issuer, not a
    certificate for another host or out of its dates."""
    code = getattr(error, "verify_code", None)  # set by OpenSSL, as certificate_problem says
    if code in WRONG_NAME:
        return (
            "the certificate is for other names than base_url's host: check base_url (the "
            "service's own name, not an address or alias it does not list)"
        )
    if code in OUT_OF_DATE:
        return (
            "the certificate is outside its dates: check this machine's clock, or ask the "
            "service to renew it"
        )
    return (
        "if the service uses a private certificate authority, trust it with "
        "verify='/path/to/ca-bundle.pem' or SSL_CERT_FILE"
    )


def _ssl_error(exc: BaseException, reasons: frozenset[str]) -> ssl.SSLError | None:
    """The TLS error behind ``exc`` whose OpenSSL reason is one of ``reasons``, if one is:
    searched along its causes, as aiohttp and httpx both wrap it."""
    for current in chain(exc):
        if isinstance(current, ssl.SSLError) and getattr(current, "reason", None) in reasons:
            return current
    return None


def chain(exc: BaseException | None) -> Iterator[BaseException]:
    """``exc`` and what it was raised from (``__cause__``, else ``__context__``), each once."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__

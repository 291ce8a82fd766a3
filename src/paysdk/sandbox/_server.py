"""``Sandbox``: its options, checked at once, and its methods, each handed to the module holding
it (``_thread``, ``_http``, ``_answering``, ``_control``, ``_payments``, ``_state``, ``_requests``,
``_callback``); faults are the service's own."""

from __future__ import annotations

import os
import secrets
import ssl
from collections.abc import Iterable
from typing import Any

from .._core.config import check_secret_key
from .._service.callbacks import callback_timeout, callback_url
from .._service.faults import Fault, FaultBook
from .._service.records import PaymentRecord
from .._service.store import StandIn
from ._answering import Answering
from ._callback import DEFAULT_CALLBACK_TIMEOUT, CallbackResult, send_callback
from ._http import DEFAULT_MAX_CONNECTIONS
from ._payments import SandboxPayments
from ._requests import RecordedRequest, RequestLog
from ._thread import ServerThread

__all__ = ["Sandbox"]

DEFAULT_IDLE_TIMEOUT = 30.0
MAX_IDLE_TIMEOUT = 10**9
"""The longest ``idle_timeout``, in seconds (about 31 years): a socket's timeout is held in
nanoseconds in 64 bits, so a much longer one fails every connection as it is set."""

_UNSPECIFIED = {"0.0.0.0": "127.0.0.1", "": "127.0.0.1", "::": "::1"}  # noqa: S104
"""The wildcard addresses a sandbox may bind, and the loopback address a client reaches it at."""


class Sandbox(StandIn[SandboxPayments]):
    """A local stand-in for the payment service, on a real port, for demos and tests.

    ``with Sandbox() as sb:`` starts it on a free loopback port in a background thread;
    ``sb.base_url`` and ``sb.secret_key`` are what a client needs.

    Args:
        secret_key: the key clients must send as ``Authorization: Bearer <key>``; one is
            generated with ``secrets`` when not given. One no client accepts (spaces, quotes
            around it...) raises [`ConfigurationError`][paysdk.ConfigurationError].
        host: the address to listen on (``127.0.0.1``); also the host in ``base_url``.
        port: the port to listen on; 0 picks a free one.
        payments: what it holds at the start; ``default_payments`` when not given.
        log_requests: write each request and each connection trouble to stderr, a line each.
        idle_timeout: seconds a connection may take to send a whole request (idle time
            included), and to finish a TLS handshake, before the sandbox closes it; also the
            limit for each write of an answer.
        max_connections: how many connections are served at once; one more is answered 503
            (over TLS: closed unanswered).
        ssl_context: a server-side context (``ssl.PROTOCOL_TLS_SERVER``, its certificate
            loaded) to serve HTTPS with: ``base_url`` then starts with ``https://``. Give the
            certificate the sandbox's host as a name (an IP address SAN for ``127.0.0.1``),
            as clients check it against ``base_url``.
        state_file: a JSON file (the seed format) that remembers the payments between runs:
            read here when it exists (in place of ``payments``), and rewritten atomically after
            each change. A file that cannot be read or parsed raises
            [`StateFileError`][paysdk.sandbox.StateFileError].
    """

    def __init__(
        self,
        *,
        secret_key: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        payments: Iterable[PaymentRecord] | None = None,
        log_requests: bool = False,
        idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
        max_connections: int = DEFAULT_MAX_CONNECTIONS,
        ssl_context: ssl.SSLContext | None = None,
        state_file: str | os.PathLike[str] | None = None,
    ) -> None:
        if isinstance(idle_timeout, bool) or not isinstance(idle_timeout, (int, float)):
            raise ValueError("idle_timeout must be a number of seconds")
        if not 0 < idle_timeout <= MAX_IDLE_TIMEOUT:  # also NaN, infinity and huge ints
            raise ValueError(
                "idle_timeout must be a positive number of seconds, at most "
                f"{MAX_IDLE_TIMEOUT:,} (what a socket's timeout holds)"
            )
        if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
            raise ValueError("port must be a port number from 0 to 65535 (0: a free one)")
        if isinstance(max_connections, bool) or not isinstance(max_connections, int):
            raise ValueError("max_connections must be a whole number")
        if max_connections < 1:
            raise ValueError("max_connections must be at least 1")
        if ssl_context is not None and not isinstance(ssl_context, ssl.SSLContext):
            raise ValueError("ssl_context must be an ssl.SSLContext")
        if ssl_context is not None and ssl_context.protocol == ssl.PROTOCOL_TLS_CLIENT:
            raise ValueError("ssl_context must be a server-side context (PROTOCOL_TLS_SERVER)")
        self.ssl_context: ssl.SSLContext | None = ssl_context
        self.idle_timeout: float = float(idle_timeout)
        self.max_connections: int = max_connections
        self.secret_key: str = (
            f"sk_sandbox_{secrets.token_urlsafe(24)}"
            if secret_key is None
            else check_secret_key(secret_key)
        )
        self.host = host
        self.faults: FaultBook = FaultBook()
        self.log_requests = log_requests
        self._requested_port = port
        self._request_log = RequestLog()
        self._server_thread = ServerThread()
        self.state_file: str | None = None if state_file is None else os.fspath(state_file)
        self._payments = SandboxPayments(payments, self.state_file)

    # --- lifecycle ----------------------------------------------------------------------------

    def start(self) -> Sandbox:
        self._server_thread.start(
            (self.host, self._requested_port),
            Answering(self, self._request_log, self._server_thread.stopping),
            max_connections=self.max_connections,
            ssl_context=self.ssl_context,
        )
        return self

    def stop(self) -> None:
        """Stop serving, drop open connections, release the port and join the thread."""
        self._server_thread.stop()

    @property
    def running(self) -> bool:
        return self._server_thread.running

    @property
    def port(self) -> int:
        return self._server_thread.port

    @property
    def base_url(self) -> str:
        """Where a client on this machine reaches it: loopback for a wildcard ``host`` (such as
        ``0.0.0.0``), which no client accepts over plain HTTP."""
        host = _UNSPECIFIED.get(self.host.strip("[]"), self.host)
        host = f"[{host}]" if ":" in host else host
        scheme = "http" if self.ssl_context is None else "https"
        return f"{scheme}://{host}:{self.port}"

    # --- payments -----------------------------------------------------------------------------

    def add_payment(self, payment: PaymentRecord | str, /, **fields: Any) -> PaymentRecord:
        """Add (or replace) a payment: a record, or a reference plus ``PaymentRecord`` fields.

        ``sb.add_payment("order-7", amount=500, currency="USD", status="FAILED")``

        Args:
            payment: a record, or the reference of a new one.
            **fields: [`PaymentRecord`][paysdk.sandbox.PaymentRecord] fields, set on the record.

        Returns:
            The record as stored.

        Raises:
            SeedError: a field of the wrong type or out of range.
        """
        return self._payments.add(payment, **fields)

    def pay(
        self,
        payment: PaymentRecord | str,
        /,
        *,
        callback: str,
        timeout: float = DEFAULT_CALLBACK_TIMEOUT,
        **fields: Any,
    ) -> CallbackResult:
        """Do what the service does when a customer pays: record the payment, then send its
        callback (``GET <callback>?reference=...``) and return the handler's answer.

        ``sb.pay("order-7", amount=500, currency="USD", callback="http://127.0.0.1:8000/cb")``;
        ``status="FAILED"`` for a payment that failed.

        Args:
            payment: a record, or a reference plus ``PaymentRecord`` fields (``fields``).
            callback: the merchant's callback URL, checked before the payment is recorded.
            timeout: seconds the whole callback may take.
            **fields: [`PaymentRecord`][paysdk.sandbox.PaymentRecord] fields, as
                [`add_payment`][paysdk.sandbox.Sandbox.add_payment] takes them.

        Returns:
            The handler's answer: the URL requested, its status and the start of its body.

        Raises:
            ValueError: the callback URL is not http(s), or ``timeout`` is not more than 0 and
                at most a day.
            CallbackDeliveryError: the payment was recorded, but its handler could not be
                reached or did not answer in time.
        """
        reference = payment if isinstance(payment, str) else payment.reference
        callback_url(callback, reference)
        callback_timeout(timeout)
        record = self.add_payment(payment, **fields)
        return self.send_callback(callback, record.reference, timeout=timeout)

    def reset(self) -> None:
        """Back to how it started: the payments it was made with, no faults, empty request and
        connection logs.

        Tests that share one running sandbox call this between tests; the port and key stay.
        """
        self.clear_faults()
        self._payments.reset()
        self._request_log.clear()

    # --- faults, request log, callbacks -------------------------------------------------------

    def inject(self, fault: Fault, *, path: str | None = None, times: int | None = 1) -> None:
        """Apply ``fault`` to the next ``times`` requests to ``path``.

        Args:
            fault: what goes wrong.
            path: the requests' path (``/payments``), a prefix ending in ``*``
                (``/payment/*``), or ``None`` for every API path.
            times: how many requests it applies to; ``None``: until cleared.

        Raises:
            TypeError: ``fault`` is not a [`Fault`][paysdk.sandbox.Fault].
            ValueError: a path not starting with ``/``, or ``times`` out of range.
        """
        self.faults.add(fault, path=path, times=times)

    def clear_faults(self) -> None:
        """Forget every fault waiting to happen."""
        self.faults.clear()

    @property
    def requests(self) -> list[RecordedRequest]:
        """Requests to API paths so far (control endpoints are not recorded), oldest first.

        The last ``MAX_RECORDED_REQUESTS`` only, so a long-running sandbox's log stays bounded.
        """
        return self._request_log.requests

    def clear_requests(self) -> None:
        """Empty the request log."""
        self._request_log.clear_requests()

    @property
    def connections(self) -> list[tuple[str, int]]:
        """Each connection served so far, as its client's ``(host, port)``, oldest first: how
        many connections a client opened, and which of its requests shared one.

        A connection refused past ``max_connections`` is not served, so not listed. The last
        ``MAX_RECORDED_CONNECTIONS`` only; ``reset()`` empties it.
        """
        return self._request_log.connections

    @property
    def open_connections(self) -> int:
        """How many connections the sandbox is serving at this moment (0 when stopped): a test
        sees a client's connections open, and sees them go once the client closes them.

        A connection counts from when its thread takes it on until that thread is done with it
        (the client closed it, it idled past ``idle_timeout``, or ``stop()`` cut it); one
        refused past ``max_connections`` never counts.
        """
        return self._server_thread.open_connections

    def send_callback(
        self, url: str, reference: str, *, timeout: float = DEFAULT_CALLBACK_TIMEOUT
    ) -> CallbackResult:
        """Do what the service does after a payment: GET ``url?reference=<reference>``.

        Args:
            url: the merchant's callback URL, absolute http(s).
            reference: the payment's reference.
            timeout: seconds for the whole call, body included.

        Returns:
            What the handler answered.

        Raises:
            ValueError: ``url`` is not an absolute, valid http(s) URL, ``reference`` holds a
                lone surrogate, or ``timeout`` is not more than 0 and at most a day.
            TypeError: ``reference`` is not a string.
            CallbackDeliveryError: the handler cannot be reached or does not answer in time.
        """
        return send_callback(url, reference, timeout=timeout)

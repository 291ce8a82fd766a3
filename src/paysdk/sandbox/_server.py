"""The sandbox HTTP server: the service's two endpoints, fault injection and a request log.

Built on the standard library's ``http.server.ThreadingHTTPServer`` on purpose: zero extra
dependencies, so ``pip install python-paysdk`` alone can run it, and tests need no ASGI server.
"""

from __future__ import annotations

import dataclasses
import json
import math
import secrets
import ssl
import sys
import threading
import time
from collections import deque
from collections.abc import Iterable, Mapping
from types import TracebackType
from typing import Any, cast

from .._service.api import (
    UNAUTHORIZED_BODY,
    Reply,
    answer_api,
    authorized,
    new_request_id,
)
from .._service.faults import Fault, FaultBook, answer_request_id
from .._service.records import PaymentRecord, SeedError
from .._service.seed import default_payments
from .._service.store import PaymentStore
from ._callback import DEFAULT_CALLBACK_TIMEOUT, CallbackResult, send_callback
from ._http import DEFAULT_MAX_CONNECTIONS, Handler, Server

__all__ = [
    "RecordedRequest",
    "Sandbox",
    "generate_secret_key",
]

CONTROL_PREFIX = "/_sandbox/"
DEFAULT_IDLE_TIMEOUT = 30.0
MAX_JSON_DEPTH = 32
"""How deeply a control request's JSON body may nest (a seed record needs 4 levels)."""
TOO_DEEP = f"the body is nested more than {MAX_JSON_DEPTH} levels deep"
MAX_RECORDED_REQUESTS = 10_000
"""How many requests the log keeps: past it, the oldest are dropped."""
MAX_RECORDED_HEADER = 1024
"""How many characters of each header name and value the log keeps: the rest is cut."""
MAX_RECORDED_HEADERS_SIZE = 8 * 1024
"""How many characters of headers, all told, the log keeps of one request; then no more of
them, so a full log holds at most about 100 MB whatever clients send (100 headers of 64 KiB
each are allowed in a request)."""
MAX_RECORDED_TARGET = 2048
"""How many characters of a request's target (and path) the log keeps."""
_REDACTED = "<redacted>"


def _recorded_headers(headers: Iterable[tuple[str, str]]) -> dict[str, str]:
    """What the log keeps of a request's headers: each cut, all within one budget."""
    kept: dict[str, str] = {}
    room = MAX_RECORDED_HEADERS_SIZE
    for name, value in headers:
        name = name[:MAX_RECORDED_HEADER]
        value = _REDACTED if name.lower() == "authorization" else value[:MAX_RECORDED_HEADER]
        room -= len(name) + len(value)
        if room < 0:
            break
        kept[name] = value
    return kept


def generate_secret_key() -> str:
    return f"sk_sandbox_{secrets.token_urlsafe(24)}"


@dataclasses.dataclass(frozen=True)
class RecordedRequest:
    """One request to an API path, as the sandbox saw it. The Authorization value is redacted."""

    method: str
    """The request's method."""
    path: str
    """The raw path, still percent-encoded, without the query."""
    target: str
    """The raw request target: path and query."""
    headers: Mapping[str, str]
    """Each name and value cut to ``MAX_RECORDED_HEADER`` characters, and no more of them
    than fit in ``MAX_RECORDED_HEADERS_SIZE``."""
    time: float
    """When it arrived, as ``time.time()``."""
    request_id: str | None = None
    """The ``X-Request-Id`` of the answer, to compare with what a client reports; ``None`` when
    a fault cut the connection before answering."""


class Sandbox:
    """A local stand-in for the payment service, on a real port, for demos and tests.

    ``with Sandbox() as sb:`` starts it on a free loopback port in a background thread;
    ``sb.base_url`` and ``sb.secret_key`` are what a client needs.

    Args:
        secret_key: the key clients must send as ``Authorization: Bearer <key>``; one is
            generated with ``secrets`` when not given.
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
    ) -> None:
        if isinstance(idle_timeout, bool) or not isinstance(idle_timeout, (int, float)):
            raise ValueError("idle_timeout must be a number of seconds")
        if not (math.isfinite(idle_timeout) and idle_timeout > 0):
            raise ValueError("idle_timeout must be a positive, finite number of seconds")
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
        self.secret_key: str = secret_key if secret_key is not None else generate_secret_key()
        self.host = host
        self.faults: FaultBook = FaultBook()
        self.log_requests = log_requests
        self._requested_port = port
        self._payments = PaymentStore()
        self._requests: deque[RecordedRequest] = deque(maxlen=MAX_RECORDED_REQUESTS)
        self._requests_lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: Server | None = None
        self._thread: threading.Thread | None = None
        self._initial = list(default_payments() if payments is None else payments)
        for record in self._initial:
            self.add_payment(record)

    # --- lifecycle ----------------------------------------------------------------------------

    def start(self) -> Sandbox:
        if self._server is not None:
            raise RuntimeError("the sandbox is already running")
        self._stopping.clear()
        address = (self.host, self._requested_port)
        self._server = Server(
            address,
            _Served(self),
            max_connections=self.max_connections,
            ssl_context=self.ssl_context,
        )
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.02},  # how long stop() may wait
            name=f"paysdk-sandbox-{self.port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, drop open connections, release the port and join the thread."""
        server, thread = self._server, self._thread
        if server is None or thread is None:
            return
        self._stopping.set()  # wakes handlers sleeping on an injected delay
        server.shutdown()
        server.close_connections()
        server.server_close()
        thread.join()
        self._server = self._thread = None

    def __enter__(self) -> Sandbox:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        return self._server is not None

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("the sandbox is not running: use `with Sandbox() as sb:`")
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
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
        if isinstance(payment, str):
            record = PaymentRecord(reference=payment, **fields)
        else:
            record = dataclasses.replace(payment, **fields) if fields else payment
        return self._payments.put(record)

    def reset(self) -> None:
        """Back to how it started: the payments it was made with, no faults, an empty log.

        Tests that share one running sandbox call this between tests; the port and key stay.
        """
        self.clear_faults()
        self._payments.reset(self._initial)
        self.clear_requests()

    def remove_payment(self, reference: str) -> None:
        """Remove the payment for ``reference``; one that is not there is already removed.

        Args:
            reference: the payment's reference.
        """
        self._payments.remove(reference)

    def get_payment(self, reference: str) -> PaymentRecord | None:
        """The payment's record; ``None`` if the sandbox holds none for it.

        Args:
            reference: the payment's reference.
        """
        return self._payments.get(reference)

    @property
    def payments(self) -> list[PaymentRecord]:
        """Every payment, newest first (the order ``GET /payments`` uses)."""
        return self._payments.newest_first()

    # --- faults, request log, callbacks -------------------------------------------------------

    def inject(self, fault: Fault, *, path: str | None = None, times: int | None = 1) -> None:
        """Apply ``fault`` to the next ``times`` requests to ``path``.

        Args:
            fault: what goes wrong.
            path: the requests' path (``/payments``), a prefix ending in ``*``
                (``/payment/*``), or ``None`` for every API path.
            times: how many requests it applies to; ``None``: until cleared.

        Raises:
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
        with self._requests_lock:
            return list(self._requests)

    def clear_requests(self) -> None:
        """Empty the request log."""
        with self._requests_lock:
            self._requests.clear()

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
            ValueError: ``url`` is not an absolute, valid http(s) URL.
            CallbackDeliveryError: the handler cannot be reached or does not answer in time.
        """
        return send_callback(url, reference, timeout=timeout)

    # --- answering (called from handler threads) ----------------------------------------------

    def _log(self, message: str) -> None:
        if self.log_requests:
            sys.stderr.write(f"sandbox: {message}\n")

    def _handle(self, handler: Handler, body: bytes) -> None:
        """Answer one request whose body was read: a control request, or an API one."""
        method, target = handler.command, handler.path
        path = target.split("?", 1)[0]
        authorization = handler.headers.get("Authorization")
        if path.startswith(CONTROL_PREFIX):
            if self._authorized(authorization):
                handler.send(self._answer_control(method, path, body))
            else:
                handler.send(Reply.json(401, UNAUTHORIZED_BODY))
            return
        fault = self.faults.take(path)
        request_id = new_request_id()
        recorded = RecordedRequest(
            method,
            path[:MAX_RECORDED_TARGET],
            target[:MAX_RECORDED_TARGET],
            _recorded_headers(handler.headers.items()),
            time.time(),
            answer_request_id(fault, request_id),
        )
        self._record(recorded)
        if fault is None:
            handler.send(self._answer_api(method, path, authorization).with_request_id(request_id))
            return
        if fault.delay and self._stopping.wait(fault.delay):
            handler.close_connection = True
            return
        if fault.disconnect == "before_response":
            handler.close_connection = True
            return
        reply = self._answer_api(method, path, authorization)
        if fault.status is not None:
            reply = Reply(fault.status, fault.body.encode(), fault.headers)
        handler.send(reply.with_request_id(request_id), fault.disconnect)

    def _record(self, request: RecordedRequest) -> None:
        with self._requests_lock:
            self._requests.append(request)

    def _authorized(self, header: str | None) -> bool:
        return authorized(header, self.secret_key)

    def _answer_api(self, method: str, path: str, authorization: str | None) -> Reply:
        return answer_api(
            method,
            path,
            authorization,
            secret_key=self.secret_key,
            find=self.get_payment,
            listing=lambda: self.payments,
        )

    def _answer_control(self, method: str, path: str, body: bytes) -> Reply:
        """``/_sandbox/faults``, ``/_sandbox/requests`` and ``/_sandbox/payments``."""
        resource = path[len(CONTROL_PREFIX) :]
        try:
            if (method, resource) == ("POST", "faults"):
                for item in _json_items(body):
                    options = dict(item)
                    path_ = options.pop("path", None)
                    times = options.pop("times", 1)
                    self.inject(Fault.from_json(options), path=path_, times=times)
                return Reply.json(201, {"faults": len(self.faults)})
            if (method, resource) == ("DELETE", "faults"):
                self.clear_faults()
                return Reply.json(200, {"faults": 0})
            if (method, resource) == ("GET", "requests"):
                return Reply.json(200, {"data": [_request_json(r) for r in self.requests]})
            if (method, resource) == ("DELETE", "requests"):
                self.clear_requests()
                return Reply.json(200, {"data": []})
            if (method, resource) == ("POST", "payments"):
                records = [PaymentRecord.from_json(item) for item in _json_items(body)]
                data = [self.add_payment(record).verify_shape() for record in records]
                return Reply.json(201, {"data": data})
        except (SeedError, ValueError, TypeError) as exc:
            return Reply.error(400, "Bad Request", str(exc))
        if resource in ("faults", "requests", "payments"):
            return Reply.json(405, {"error": "Method Not Allowed"})
        return Reply.json(404, {"error": "Not Found", "message": f"no route for {path}"})


class _Served:
    """A sandbox as its HTTP server sees it: the ``Service`` the server asks for each request."""

    __slots__ = ("_sandbox",)

    def __init__(self, sandbox: Sandbox) -> None:
        self._sandbox = sandbox

    @property
    def idle_timeout(self) -> float:
        return self._sandbox.idle_timeout

    def handle(self, handler: Handler, body: bytes) -> None:
        self._sandbox._handle(handler, body)

    def log(self, message: str) -> None:
        self._sandbox._log(message)


def _json_items(body: bytes) -> list[Mapping[str, Any]]:
    """A JSON object, or an array of them, from a control request's body."""
    try:
        data = json.loads(body or b"null")
    except ValueError:
        raise ValueError("the body must be JSON") from None
    except RecursionError:  # deeper than the interpreter's stack allows
        raise ValueError(TOO_DEEP) from None
    if _depth(data) > MAX_JSON_DEPTH:
        raise ValueError(TOO_DEEP)
    items = cast("list[object]", data) if isinstance(data, list) else [data]
    if not items or not all(isinstance(item, dict) for item in items):
        raise ValueError("the body must be a JSON object or an array of objects")
    return cast("list[Mapping[str, Any]]", items)


def _depth(data: object) -> int:
    """How deeply lists and objects nest in ``data`` (0 for a scalar), without recursion."""
    deepest, todo = 0, [(data, 0)]
    while todo:
        value, level = todo.pop()
        if isinstance(value, (list, dict)):
            deepest = max(deepest, level + 1)
            nested = cast("list[Any] | dict[str, Any]", value)  # parsed JSON: str keys
            todo.extend((item, level + 1) for item in _children(nested))
    return deepest


def _children(value: list[Any] | dict[str, Any]) -> Iterable[Any]:
    return value.values() if isinstance(value, dict) else value


def _request_json(request: RecordedRequest) -> dict[str, Any]:
    return dataclasses.asdict(request) | {"headers": dict(request.headers)}

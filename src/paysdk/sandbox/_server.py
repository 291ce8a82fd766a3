"""The sandbox HTTP server: the service's two endpoints, fault injection and a request log.

Built on the standard library's ``http.server.ThreadingHTTPServer`` on purpose: zero extra
dependencies, so ``pip install paysdk`` alone can run it, and tests need no ASGI server.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hmac
import http.server
import json
import secrets
import socket
import sys
import threading
import time
from collections.abc import Iterable, Mapping
from types import TracebackType
from typing import Any, cast
from urllib.parse import unquote

from ._callback import DEFAULT_CALLBACK_TIMEOUT, CallbackResult, send_callback
from ._faults import Fault, FaultBook
from ._records import PaymentRecord, SeedError
from ._seed import default_payments

__all__ = ["RecordedRequest", "Sandbox", "generate_secret_key"]

CONTROL_PREFIX = "/_sandbox/"
_MAX_BODY = 1 << 20
_REDACTED = "<redacted>"

NOT_FOUND_BODY: Mapping[str, Any] = {
    "success": False,
    "error": "Error in request",
    "message": "reference not found",
}
UNAUTHORIZED_BODY: Mapping[str, Any] = {
    "success": False,
    "error": "Unauthorized",
    "message": "invalid or missing secret key",
}


def generate_secret_key() -> str:
    return f"sk_sandbox_{secrets.token_urlsafe(24)}"


@dataclasses.dataclass(frozen=True)
class RecordedRequest:
    """One request to an API path, as the sandbox saw it. The Authorization value is redacted."""

    method: str
    path: str
    """The raw path, still percent-encoded, without the query."""
    target: str
    """The raw request target: path and query."""
    headers: Mapping[str, str]
    time: float


@dataclasses.dataclass(frozen=True)
class _Answer:
    status: int
    body: bytes
    headers: Mapping[str, str]

    @classmethod
    def json(cls, status: int, body: object, **headers: str) -> _Answer:
        content = json.dumps(body).encode()
        return cls(status, content, {"Content-Type": "application/json", **headers})


class Sandbox:
    """A local stand-in for the payment service, on a real port, for demos and tests.

    ``with Sandbox() as sb:`` starts it on a free loopback port in a background thread;
    ``sb.base_url`` and ``sb.secret_key`` are what a client needs. Seeded with
    :func:`default_payments` unless ``payments`` is given.
    """

    def __init__(
        self,
        *,
        secret_key: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        payments: Iterable[PaymentRecord] | None = None,
        log_requests: bool = False,
    ) -> None:
        self.secret_key: str = secret_key if secret_key is not None else generate_secret_key()
        self.host = host
        self.faults: FaultBook = FaultBook()
        self.log_requests = log_requests
        self._requested_port = port
        self._payments: dict[str, PaymentRecord] = {}
        self._requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        for record in default_payments() if payments is None else payments:
            self.add_payment(record)

    # --- lifecycle ----------------------------------------------------------------------------

    def start(self) -> Sandbox:
        if self._server is not None:
            raise RuntimeError("the sandbox is already running")
        self._stopping.clear()
        self._server = _Server((self.host, self._requested_port), _Handler, self)
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
        return f"http://{host}:{self.port}"

    # --- payments -----------------------------------------------------------------------------

    def add_payment(self, payment: PaymentRecord | str, /, **fields: Any) -> PaymentRecord:
        """Add (or replace) a payment: a record, or a reference plus :class:`PaymentRecord` fields.

        ``sb.add_payment("order-7", amount=500, currency="USD", status="FAILED")``
        """
        if isinstance(payment, str):
            record = PaymentRecord(reference=payment, **fields)
        else:
            record = dataclasses.replace(payment, **fields) if fields else payment
        with self._lock:
            self._payments[record.reference] = record
        return record

    def remove_payment(self, reference: str) -> None:
        with self._lock:
            del self._payments[reference]

    def get_payment(self, reference: str) -> PaymentRecord | None:
        with self._lock:
            return self._payments.get(reference)

    @property
    def payments(self) -> list[PaymentRecord]:
        """Every payment, newest first (the order ``GET /payments`` uses)."""
        with self._lock:
            records = list(self._payments.values())
        return sorted(records, key=lambda r: r.created_at, reverse=True)

    # --- faults, request log, callbacks -------------------------------------------------------

    def inject(self, fault: Fault, *, path: str | None = None, times: int | None = 1) -> None:
        """Apply ``fault`` to the next ``times`` requests to ``path`` (see :class:`FaultBook`)."""
        self.faults.add(fault, path=path, times=times)

    def clear_faults(self) -> None:
        self.faults.clear()

    @property
    def requests(self) -> list[RecordedRequest]:
        """Requests to API paths so far (control endpoints are not recorded), oldest first."""
        with self._lock:
            return list(self._requests)

    def clear_requests(self) -> None:
        with self._lock:
            self._requests.clear()

    def send_callback(
        self, url: str, reference: str, *, timeout: float = DEFAULT_CALLBACK_TIMEOUT
    ) -> CallbackResult:
        """Do what the service does after a payment: GET ``url?reference=<reference>``."""
        return send_callback(url, reference, timeout=timeout)

    # --- answering (called from handler threads) ----------------------------------------------

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)

    def _authorized(self, header: str | None) -> bool:
        scheme, _, token = (header or "").partition(" ")
        expected = self.secret_key.encode()
        return scheme.lower() == "bearer" and hmac.compare_digest(token.encode(), expected)

    def _answer_api(self, method: str, path: str, authorization: str | None) -> _Answer:
        segments = path.split("/")  # split the raw path first, then decode the one segment
        if path == "/payments":
            route = "list"
        elif len(segments) == 3 and segments[1] == "payment" and segments[2]:
            route = "verify"
        else:
            return _Answer.json(404, {"error": "Not Found", "message": f"no route for {path}"})
        if method != "GET":
            body = {"error": "Method Not Allowed", "message": f"{method} is not allowed here"}
            return _Answer.json(405, body, Allow="GET")
        if not self._authorized(authorization):
            return _Answer.json(401, UNAUTHORIZED_BODY)
        if route == "list":
            return _Answer.json(200, {"data": [p.list_shape() for p in self.payments]})
        record = self.get_payment(unquote(segments[2]))
        if record is None:
            return _Answer.json(404, NOT_FOUND_BODY)
        envelope = {
            "status": True,
            "message": "Verification successful",
            "data": record.verify_shape(),
        }
        return _Answer.json(200, envelope)

    def _answer_control(self, method: str, path: str, body: bytes) -> _Answer:
        """``/_sandbox/faults``, ``/_sandbox/requests`` and ``/_sandbox/payments``."""
        resource = path[len(CONTROL_PREFIX) :]
        try:
            if (method, resource) == ("POST", "faults"):
                for item in _json_items(body):
                    options = dict(item)
                    path_ = options.pop("path", None)
                    times = options.pop("times", 1)
                    self.inject(Fault.from_json(options), path=path_, times=times)
                return _Answer.json(201, {"faults": len(self.faults)})
            if (method, resource) == ("DELETE", "faults"):
                self.clear_faults()
                return _Answer.json(200, {"faults": 0})
            if (method, resource) == ("GET", "requests"):
                return _Answer.json(200, {"data": [_request_json(r) for r in self.requests]})
            if (method, resource) == ("DELETE", "requests"):
                self.clear_requests()
                return _Answer.json(200, {"data": []})
            if (method, resource) == ("POST", "payments"):
                records = [PaymentRecord.from_json(item) for item in _json_items(body)]
                data = [self.add_payment(record).verify_shape() for record in records]
                return _Answer.json(201, {"data": data})
        except (SeedError, ValueError, TypeError) as exc:
            return _Answer.json(400, {"error": "Bad Request", "message": str(exc)})
        if resource in ("faults", "requests", "payments"):
            return _Answer.json(405, {"error": "Method Not Allowed"})
        return _Answer.json(404, {"error": "Not Found", "message": f"no route for {path}"})


def _json_items(body: bytes) -> list[Mapping[str, Any]]:
    """A JSON object, or an array of them, from a control request's body."""
    try:
        data = json.loads(body or b"null")
    except ValueError:
        raise ValueError("the body must be JSON") from None
    items: list[object] = cast("list[object]", data) if isinstance(data, list) else [data]
    if not items or not all(isinstance(item, dict) for item in items):
        raise ValueError("the body must be a JSON object or an array of objects")
    return cast("list[Mapping[str, Any]]", items)


def _request_json(request: RecordedRequest) -> dict[str, Any]:
    return dataclasses.asdict(request) | {"headers": dict(request.headers)}


class _Server(http.server.ThreadingHTTPServer):
    """Knows its :class:`Sandbox` and its open connections, so ``stop`` can cut them."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], handler: type[_Handler], sandbox: Sandbox) -> None:
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        self.sandbox = sandbox
        self.connections: set[socket.socket] = set()
        self.connections_lock = threading.Lock()
        super().__init__(address, handler)

    def close_connections(self) -> None:
        with self.connections_lock:
            connections = list(self.connections)
        for connection in connections:
            with contextlib.suppress(OSError):  # already closed by the peer
                connection.shutdown(socket.SHUT_RDWR)


class _Handler(http.server.BaseHTTPRequestHandler):
    """Turns each HTTP request into a call on the :class:`Sandbox`, applying any fault."""

    protocol_version = "HTTP/1.1"  # keep-alive, as clients with connection pools expect
    server_version = "paysdk-sandbox"
    sys_version = ""

    @property
    def _owner(self) -> _Server:
        """The server that made this handler (``self.server``, typed as what it is)."""
        return cast(_Server, self.server)

    def setup(self) -> None:
        super().setup()
        # Headers and body are written separately; without this, Nagle's algorithm and delayed
        # ACKs add ~40 ms to every answer.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with self._owner.connections_lock:
            self._owner.connections.add(self.connection)

    def finish(self) -> None:
        with self._owner.connections_lock:
            self._owner.connections.discard(self.connection)
        with contextlib.suppress(OSError):  # the connection was cut on purpose (fault, stop())
            super().finish()

    def do_GET(self) -> None:
        self._handle()

    do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = do_GET

    def log_message(self, format: str, *args: Any) -> None:
        if self._owner.sandbox.log_requests:
            sys.stderr.write(f"sandbox: {format % args}\n")

    def _handle(self) -> None:
        sandbox = self._owner.sandbox
        path = self.path.split("?", 1)[0]
        body = self._read_body()
        if body is None:
            self.close_connection = True
            self._send(_Answer.json(400, {"error": "Bad Request", "message": "bad Content-Length"}))
            return
        if path.startswith(CONTROL_PREFIX):
            if sandbox._authorized(self.headers.get("Authorization")):
                self._send(sandbox._answer_control(self.command, path, body))
            else:
                self._send(_Answer.json(401, UNAUTHORIZED_BODY))
            return
        headers = {
            k: (_REDACTED if k.lower() == "authorization" else v) for k, v in self.headers.items()
        }
        sandbox._record(RecordedRequest(self.command, path, self.path, headers, time.time()))
        fault = sandbox.faults.take(path)
        if fault is None:
            self._send(sandbox._answer_api(self.command, path, self.headers.get("Authorization")))
            return
        if fault.delay and sandbox._stopping.wait(fault.delay):
            self.close_connection = True
            return
        if fault.disconnect == "before_response":
            self.close_connection = True
            return
        answer = sandbox._answer_api(self.command, path, self.headers.get("Authorization"))
        if fault.status is not None:
            answer = _Answer(fault.status, fault.body.encode(), fault.headers)
        self._send(answer, fault.disconnect)

    def _read_body(self) -> bytes | None:
        """The request body, or None when its Content-Length is not a number the sandbox takes."""
        declared = self.headers.get("Content-Length") or "0"
        if not declared.isdigit() or int(declared) > _MAX_BODY:
            return None
        return self.rfile.read(int(declared))

    def _send(self, answer: _Answer, disconnect: str | None = None) -> None:
        body, declared = answer.body, len(answer.body)
        if disconnect == "mid_body":
            body = body[: len(body) // 2]
        elif disconnect == "truncated":
            declared += 64
        self.send_response(answer.status)
        if not any(name.lower() == "content-type" for name in answer.headers):
            self.send_header("Content-Type", "text/plain; charset=utf-8")
        for name, value in answer.headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(declared))
        self.end_headers()
        if disconnect is not None:
            self.close_connection = True
        if self.command != "HEAD":
            self.wfile.write(body)
        self.wfile.flush()

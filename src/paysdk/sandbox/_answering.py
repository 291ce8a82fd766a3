"""How a running sandbox answers a request: a control one by ``_control``, an API one by the
service's rules after taking and logging its fault. Key, faults and payments are read at each
request, so a change a test makes while the sandbox runs applies to the next one."""

from __future__ import annotations

import contextlib
import sys
import threading
from typing import Protocol

from .._core.terminal import printable
from .._service.api import UNAUTHORIZED_BODY, Reply, authorized, new_request_id
from .._service.faults import Fault, answer_request_id
from ._control import CONTROL_PREFIX, Controlled, answer_control
from ._http import Handler
from ._requests import RequestLog

__all__ = ["Answering"]


class Answered(Controlled, Protocol):
    """What answering uses of a ``Sandbox``, beyond what the control endpoints use."""

    secret_key: str
    idle_timeout: float
    log_requests: bool

    def _answer_api(
        self, method: str, path: str, authorization: str | None, fault: Fault | None
    ) -> Reply: ...


class Answering:
    """A sandbox as its HTTP server sees it: the ``Service`` the server asks for each request.

    Args:
        sandbox: whose key, faults and payments the answers follow.
        requests: where each API request and each connection is logged.
        stopping: set when the sandbox stops; an injected delay ends early then, unanswered.
    """

    __slots__ = ("_requests", "_sandbox", "_stopping")

    def __init__(self, sandbox: Answered, requests: RequestLog, stopping: threading.Event) -> None:
        self._sandbox = sandbox
        self._requests = requests
        self._stopping = stopping

    @property
    def idle_timeout(self) -> float:
        return self._sandbox.idle_timeout

    def log(self, message: str) -> None:
        """Write one line to stderr: its control characters (a client's request line may hold
        any) shown as escapes, never sent to the terminal. A line stderr cannot take (its
        reader has gone, its disk is full) is lost: the request is answered all the same."""
        if self._sandbox.log_requests:
            with contextlib.suppress(OSError):
                sys.stderr.write(f"sandbox: {printable(message)}\n")

    def connected(self, client_address: tuple[str, int]) -> None:
        self._requests.connected(client_address)

    def handle(self, handler: Handler, body: bytes) -> None:
        """Answer one request whose body was read: a control request, or an API one."""
        sandbox = self._sandbox
        method, target = handler.command, handler.path
        path = target.split("?", 1)[0]
        authorization = handler.headers.get("Authorization")
        if path.startswith(CONTROL_PREFIX):
            if authorized(authorization, sandbox.secret_key):
                handler.send(answer_control(sandbox, method, path, body))
            else:
                handler.send(Reply.json(401, UNAUTHORIZED_BODY))
            return
        fault = sandbox.faults.take(path)
        request_id = new_request_id()
        host, port = handler.client_address[:2]
        self._requests.record(
            method,
            path,
            target,
            handler.headers.items(),
            request_id=answer_request_id(fault, request_id),
            client=(host, port),
        )
        if fault is not None and (
            (fault.delay and self._stopping.wait(fault.delay))
            or fault.disconnect == "before_response"
        ):
            handler.close_connection = True
            return
        reply = sandbox._answer_api(method, path, authorization, fault)
        handler.send(reply.with_request_id(request_id), None if fault is None else fault.disconnect)

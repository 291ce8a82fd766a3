"""How a running sandbox answers a request: a control one by ``_control``, an API one by the
service's rules after taking and logging its fault. Key, faults and payments are read at each
request, so a change a test makes while the sandbox runs applies to the next one."""

from __future__ import annotations

import contextlib
import ipaddress
import sys
import threading
from typing import Protocol

from .._core.terminal import printable
from .._service.api import UNAUTHORIZED_BODY, Reply, authorized, new_request_id
from .._service.faults import Fault, answer_request_id
from ._control import CONTROL_PREFIX, Controlled, answer_control
from ._http import Handler
from ._requests import RequestLog

__all__ = ["Answering", "served_host"]

_EVERY_ADDRESS = ("0.0.0.0", "::", "")  # noqa: S104
"""The wildcard hosts a sandbox may be bound to, reachable under whatever name a network gives."""
_PRIVATE_SUFFIXES = (".internal", ".local", ".localdomain", ".lan", ".home.arpa")
"""Top-level names reserved for private networks: containers', mDNS, home routers'."""
_SHOWN_HOST = 100
"""How many characters of a refused ``Host`` header an answer quotes."""


def served_host(header: str | None, bound: str) -> bool:
    """Whether a request's ``Host`` header (port included; ``None`` if it sent none) names this
    sandbox, so that it may be answered: absent, an IP address, ``localhost`` (or a name under
    it), the host it was bound to (``bound``, as given to ``Sandbox(host=...)``), or (bound to
    every address, as in a container) a name a private network gives. A web page whose own name
    an attacker re-points at 127.0.0.1 (DNS rebinding) sends that name, and is refused."""
    if header is None:  # HTTP/1.0 tools send none; every browser sends one
        return True
    host = header.strip().lower()
    if host.startswith("["):  # an IPv6 literal, maybe with a port
        host = host[1 : host.find("]")] if "]" in host else host
    elif host.count(":") == 1:
        host = host.partition(":")[0]
    with contextlib.suppress(ValueError):
        ipaddress.ip_address(host)  # no name to re-point: the client chose this address
        return True
    name, bound = host.removesuffix("."), bound.strip("[]").lower().removesuffix(".")
    return (
        name == "localhost"
        or name.endswith(".localhost")  # browsers resolve these to loopback themselves
        or name == bound
        or (bound in _EVERY_ADDRESS and _private_name(name))
    )


def _private_name(name: str) -> bool:
    """Whether ``name`` is one only a local network gives (``sandbox``, ``host.docker.internal``,
    ``app.svc.cluster.local``): no public DNS, so no page's name, can answer for it."""
    return bool(name) and ("." not in name or name.endswith(_PRIVATE_SUFFIXES))


class Answered(Controlled, Protocol):
    """What answering uses of a ``Sandbox``, beyond what the control endpoints use."""

    secret_key: str
    host: str
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
        reader has gone, its disk is full, it is closed) is lost: the request is answered all
        the same."""
        if self._sandbox.log_requests:
            with contextlib.suppress(OSError, ValueError):
                sys.stderr.write(f"sandbox: {printable(message)}\n")

    def connected(self, client_address: tuple[str, int]) -> None:
        self._requests.connected(client_address)

    def handle(self, handler: Handler, body: bytes) -> None:
        """Answer one request whose body was read: a control request, or an API one."""
        sandbox = self._sandbox
        method, target = handler.command, handler.path
        host = handler.headers.get("Host")
        if not served_host(host, sandbox.host):
            shown = printable((host or "")[:_SHOWN_HOST])
            self.log(f"refused {method} for Host {shown!r}: not this sandbox's name")
            message = (
                "the sandbox answers requests for 127.0.0.1, localhost or the address it "
                f"listens on, not for Host {shown!r}"
            )
            handler.send(Reply.error(403, "Forbidden", message).with_request_id(new_request_id()))
            return
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

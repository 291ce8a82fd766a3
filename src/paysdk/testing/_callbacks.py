"""Send the service's callback to the merchant's app in-process, no server or port: httpx's
``WSGITransport`` or ``ASGITransport``, which does not run the app's lifespan (enter an app that
needs one first, e.g. with ``asgi_lifespan.LifespanManager`` or Starlette's ``TestClient``)."""

from __future__ import annotations

import contextlib
import inspect
import sys
import threading
from collections.abc import Generator
from typing import TYPE_CHECKING, Any, Literal, cast

import httpx

from .._core.closing import Closes
from .._errors import ConfigurationError
from .._errors.quoting import quoted
from .._service.callbacks import callback_url

if TYPE_CHECKING:
    from anyio.from_thread import BlockingPortal

__all__ = ["CallbackSender", "Interface"]

TEST_HOST_NAME = "testserver"  # the host Django's test client and test runner use
TEST_HOST = f"http://{TEST_HOST_NAME}"
USER_AGENT = "paysdk-testing-callback"

Interface = Literal["auto", "wsgi", "asgi"]
"""How to call the app; ``"auto"`` takes an app whose ``__call__`` is ``async def`` as ASGI."""


class CallbackSender(Closes):
    """Sends ``GET <url>?reference=<reference>`` to a WSGI or ASGI app, as the service would.

    ``send`` works from a plain (sync) test for both kinds of app: an ASGI app runs on an event
    loop this sender keeps for its life (so an app's ``AsyncClient`` sees one loop), closed by
    ``close``. In an async test, ``await sender.asend(...)`` uses the test's own loop.
    """

    def __init__(self) -> None:
        self._portal: BlockingPortal | None = None
        self._exits = contextlib.ExitStack()

    def send(
        self, app: object, url: str, reference: str, *, interface: Interface = "auto"
    ) -> httpx.Response:
        """The app's answer to the callback for ``reference`` sent to ``url``.

        ``url`` is the callback path (``"/payments/callback"``, a query may follow) or an
        absolute URL; the percent-encoded ``reference`` is appended to its query. Exceptions the
        app raises are not turned into a 500: they propagate, so a crash fails the test.

        Args:
            app: the WSGI app (Django, Flask) or ASGI app (Starlette, FastAPI, Django's ASGI).
            url: the callback's path or absolute URL.
            reference: the payment's reference.
            interface: ``"wsgi"``, ``"asgi"``, or ``"auto"`` to tell from the app
                ([`Interface`][paysdk.testing.Interface]).

        Returns:
            The app's answer.
        """
        target = _target(url, reference)
        with _as_a_test_client(app):
            if _is_asgi(app, interface):
                return self._loop().call(_asend, app, target)
            transport = httpx.WSGITransport(app=cast(Any, app))
            with httpx.Client(transport=transport, base_url=TEST_HOST) as http:
                return http.get(target, headers={"User-Agent": USER_AGENT})

    async def asend(
        self, app: object, url: str, reference: str, *, interface: Interface = "auto"
    ) -> httpx.Response:
        """``send`` for async tests; an ASGI app runs on the caller's event loop.

        Args:
            app: the WSGI or ASGI app.
            url: the callback's path or absolute URL.
            reference: the payment's reference.
            interface: ``"wsgi"``, ``"asgi"``, or ``"auto"`` to tell from the app.

        Returns:
            The app's answer.
        """
        target = _target(url, reference)
        if not _is_asgi(app, interface):
            return self.send(app, url, reference, interface="wsgi")
        with _as_a_test_client(app, lend=False):
            return await _asend(app, target)

    def close(self) -> None:
        """Stop the event loop kept for ASGI apps, if one was started."""
        self._portal = None
        self._exits.close()

    def _loop(self) -> BlockingPortal:
        if self._portal is None:
            from anyio.from_thread import start_blocking_portal  # httpx depends on anyio

            self._portal = self._exits.enter_context(start_blocking_portal())
        return self._portal


@contextlib.contextmanager
def _as_a_test_client(app: object, *, lend: bool = True) -> Generator[None, None, None]:
    """Around a request, what the framework's own test client does: raise, in place of the 500
    Flask (unless ``TESTING``) or Django answers it with, the exception of a view; and, for
    Django, leave the database connections alone (its ``close_old_connections`` on the request
    signals would close a ``TestCase``'s connection inside its transaction, so the view could
    read nothing). The framework is the app's own, loaded already: nothing is imported; an app
    of another framework is left as it is."""
    raised: list[BaseException] = []
    flask: Any = sys.modules.get("flask.app")
    django: Any = sys.modules.get("django.core.handlers.base")
    if flask is not None and isinstance(app, flask.Flask):
        signal = sys.modules["flask.signals"].got_request_exception

        def keep_flasks(sender: object, exception: BaseException, **kwargs: object) -> None:
            raised.append(exception)

        with signal.connected_to(keep_flasks, sender=app):
            yield
    elif django is not None and isinstance(app, django.BaseHandler):
        with _djangos_test_request(raised, lend=lend):
            yield
    else:
        yield
    if raised:
        raise raised[0]


@contextlib.contextmanager
def _djangos_test_request(
    raised: list[BaseException], *, lend: bool
) -> Generator[None, None, None]:
    """Django's request signals as its test client has them: ``close_old_connections`` off,
    and a view's exception kept in ``raised``; and the test host allowed, as Django's test
    runner allows it, so a project's own ``ALLOWED_HOSTS`` never answers the callback 400.

    Django's ``ASGIHandler`` runs a sync view (and the rest of its sync code) in a thread of its
    own, whose connections could not see the test's rows (SQLite: "database table is locked"):
    there the request borrows this thread's open connections, as a ``LiveServerTestCase``'s
    server thread does, so the view reads the test's rows under ASGI as under WSGI. Only if
    ``lend``: from a sync test, which waits for the answer (``asend``'s callbacks may run at
    once, and one connection cannot serve two)."""
    signals, database = sys.modules["django.core.signals"], sys.modules["django.db"]
    close_old_connections = database.close_old_connections
    settings: Any = sys.modules["django.conf"].settings
    allowed = settings.ALLOWED_HOSTS
    if not any(host in allowed for host in (TEST_HOST_NAME, "*")):
        # With DEBUG on and no hosts named, Django allows its local names: keep those too.
        local = [".localhost", "127.0.0.1", "[::1]"] if settings.DEBUG and not allowed else []
        settings.ALLOWED_HOSTS = [*allowed, *local, TEST_HOST_NAME]

    def keep_djangos(**kwargs: object) -> None:
        error = sys.exc_info()[1]  # sent while Django handles the view's exception
        if error is not None:
            raised.append(error)

    unhooked = [
        signal
        for signal in (signals.request_started, signals.request_finished)
        if signal.disconnect(close_old_connections)
    ]
    connections: Any = database.connections
    tests_thread = threading.get_ident()
    shared = list(connections.all(initialized_only=True)) if lend else []

    def borrow(**kwargs: object) -> None:
        if threading.get_ident() != tests_thread:
            for connection in shared:
                connections[connection.alias] = connection

    def give_back(**kwargs: object) -> None:
        if threading.get_ident() != tests_thread:
            for connection in shared:
                del connections[connection.alias]

    for connection in shared:
        connection.inc_thread_sharing()
    signals.request_started.connect(borrow, weak=False)
    signals.request_finished.connect(give_back, weak=False)
    signals.got_request_exception.connect(keep_djangos, weak=False)
    try:
        yield
    finally:
        signals.got_request_exception.disconnect(keep_djangos)
        signals.request_finished.disconnect(give_back)
        signals.request_started.disconnect(borrow)
        for connection in shared:
            connection.dec_thread_sharing()
        for signal in unhooked:
            signal.connect(close_old_connections)
        settings.ALLOWED_HOSTS = allowed


async def _asend(app: object, target: str) -> httpx.Response:
    transport = httpx.ASGITransport(app=cast(Any, app))
    async with httpx.AsyncClient(transport=transport, base_url=TEST_HOST) as http:
        return await http.get(target, headers={"User-Agent": USER_AGENT})


def _target(url: object, reference: str) -> str:
    """The callback's URL on the test host: ``url`` (a path or an absolute URL) with the
    ``reference`` in its query.

    Raises:
        ConfigurationError: ``url`` is neither, or ``reference`` is not a string a URL carries;
            the message names the argument.
    """
    if not isinstance(url, str) or not (url.startswith("/") or "://" in url):
        raise ConfigurationError(
            f"url must be a path such as '/payments/callback' or a URL, not {quoted(url)}"
        )
    if not isinstance(reference, str):
        raise ConfigurationError(f"reference must be a string, not {type(reference).__name__}")
    try:
        return callback_url(TEST_HOST + url if url.startswith("/") else url, reference)
    except ValueError as exc:  # named as the argument: "callback URL ..." or "reference ..."
        said = str(exc)
        if said.startswith("callback URL"):
            said = "url" + said.removeprefix("callback URL")
        raise ConfigurationError(said) from None


def _is_asgi(app: object, interface: Interface) -> bool:
    """Whether to call ``app`` as ASGI.

    Raises:
        ConfigurationError: ``interface`` is not one of ``Interface``'s, or ``app`` is not an
            application; the message names the argument.
    """
    if interface not in ("auto", "wsgi", "asgi"):
        raise ConfigurationError(
            f"interface must be 'auto', 'wsgi' or 'asgi', not {quoted(interface)}"
        )
    if not callable(app):
        raise ConfigurationError(
            f"app must be a WSGI or ASGI application, not {type(app).__name__}"
        )
    if interface != "auto":
        return interface == "asgi"
    call = app if inspect.isfunction(app) or inspect.ismethod(app) else type(app).__call__
    return inspect.iscoroutinefunction(call)

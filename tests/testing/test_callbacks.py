"""paysdk.testing.CallbackSender: the service's callback into a WSGI or ASGI app, in-process."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable, Iterable, Iterator, MutableMapping
from typing import Any
from urllib.parse import quote

import pytest

from paysdk import ConfigurationError
from paysdk.sandbox import Sandbox
from paysdk.testing import CallbackSender

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]

ENCODED = "shop=1&reference=inv%2F7%20%C3%BC"


@pytest.fixture
def sender() -> Iterator[CallbackSender]:
    with CallbackSender() as running:
        yield running


class WSGIEcho:
    """A WSGI app that answers with the query and method it was sent."""

    def __init__(self) -> None:
        self.seen: list[dict[str, str]] = []

    def __call__(
        self, environ: dict[str, Any], start_response: Callable[..., object]
    ) -> Iterable[bytes]:
        if environ["PATH_INFO"] == "/boom":
            raise RuntimeError("the handler crashed")
        seen = {"method": environ["REQUEST_METHOD"], "query": environ["QUERY_STRING"]}
        self.seen.append(seen)
        start_response("200 OK", [("Content-Type", "application/json")])
        return [json.dumps(seen).encode()]


class ASGIEcho:
    """An ASGI app that answers with the query, and notes the event loop it ran on."""

    def __init__(self) -> None:
        self.loops: list[int] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        assert scope["type"] == "http"
        if scope["path"] == "/boom":
            raise RuntimeError("the handler crashed")
        self.loops.append(id(asyncio.get_running_loop()))
        body = json.dumps({"method": scope["method"], "query": scope["query_string"].decode()})
        headers = [(b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body.encode()})


@pytest.mark.parametrize("app", [WSGIEcho(), ASGIEcho()], ids=["wsgi", "asgi"])
def test_the_reference_is_appended_percent_encoded_to_a_get(
    sender: CallbackSender, app: object
) -> None:
    response = sender.send(app, "/payments/callback?shop=1", "inv/7 ü")
    assert response.json() == {"method": "GET", "query": ENCODED}
    absolute = sender.send(app, "https://shop.example/cb?shop=1#frag", "inv/7 ü")
    assert absolute.json()["query"] == ENCODED


@pytest.mark.parametrize("app", [WSGIEcho(), ASGIEcho()], ids=["wsgi", "asgi"])
def test_a_crash_in_the_app_fails_the_test(sender: CallbackSender, app: object) -> None:
    with pytest.raises(RuntimeError, match="the handler crashed"):
        sender.send(app, "/boom", "order-1")


def test_a_crash_flask_answers_with_its_500_fails_the_test(sender: CallbackSender) -> None:
    """Flask's defaults (``TESTING`` and debug off) answer a view's exception with a 500."""
    import flask

    app = flask.Flask(__name__)

    @app.get("/payments/callback")
    def payment_callback() -> str:
        raise LookupError("no such order table")

    with pytest.raises(LookupError, match="no such order table"):
        sender.send(app, "/payments/callback", "order-1")
    assert sender.send(app, "/nowhere", "order-1").status_code == 404  # not an exception


def test_an_asgi_app_sees_one_event_loop_until_the_sender_closes(sender: CallbackSender) -> None:
    app = ASGIEcho()
    sender.send(app, "/cb", "order-1")
    sender.send(app, "/cb", "order-2")
    sender.close()
    sender.send(app, "/cb", "order-3")
    assert app.loops[0] == app.loops[1]
    assert len(app.loops) == 3


@pytest.mark.anyio
async def test_asend_runs_an_asgi_app_on_the_callers_loop(sender: CallbackSender) -> None:
    app = ASGIEcho()
    response = await sender.asend(app, "/cb?shop=1", "inv/7 ü")
    assert response.json()["query"] == ENCODED
    assert app.loops == [id(asyncio.get_running_loop())]
    assert (await sender.asend(WSGIEcho(), "/cb", "x")).json()["query"] == "reference=x"


def test_the_interface_can_be_named(sender: CallbackSender) -> None:
    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        await ASGIEcho()(scope, receive, send)

    assert sender.send(app, "/cb", "a", interface="asgi").json()["query"] == "reference=a"
    assert sender.send(app, "/cb", "a").status_code == 200  # an async def function is ASGI


@pytest.mark.parametrize(
    ("app", "url", "interface", "error"),
    [
        (WSGIEcho(), "payments/callback", "auto", "^url must be a path"),
        (WSGIEcho(), "ftp://shop.example/cb", "auto", "^url must be an absolute http"),
        (WSGIEcho(), "http://[::1/cb", "auto", "^url 'http://\\[::1/cb' is not a valid URL"),
        (WSGIEcho(), "http://shop.example:99999/cb", "auto", "^url .* is not a valid URL"),
        (WSGIEcho(), "http://u:pw@[::1/cb", "auto", "^url 'http://u:\\*\\*\\*@\\[::1/cb' is not"),
        (WSGIEcho(), "/cb", "grpc", "^interface must be"),
        (42, "/cb", "auto", "^app must be a WSGI or ASGI application, not int"),
        (None, "/cb", "wsgi", "^app must be a WSGI or ASGI application, not NoneType"),
        (None, "/cb", "asgi", "^app must be a WSGI or ASGI application, not NoneType"),
    ],
)
@pytest.mark.anyio
async def test_bad_arguments_are_refused_naming_the_argument(
    sender: CallbackSender, app: object, url: str, interface: Any, error: str
) -> None:
    """As the kit's other helpers refuse theirs: a ``ConfigurationError`` whose message starts
    with the argument's name, before the app is called."""
    with pytest.raises(ConfigurationError, match=error):
        sender.send(app, url, "order-1", interface=interface)
    with pytest.raises(ConfigurationError, match=error):
        await sender.asend(app, url, "order-1", interface=interface)


@pytest.mark.parametrize(
    ("reference", "error"),
    [
        (1042, TypeError("reference must be a string, not int")),
        (b"order-1", TypeError("reference must be a string, not bytes")),
        ("order-\ud800", ValueError("not text UTF-8 can encode")),
    ],
)
def test_a_reference_no_url_can_carry_is_refused_saying_why(
    sender: CallbackSender, reference: Any, error: Exception
) -> None:
    for app in (WSGIEcho(), ASGIEcho()):
        with pytest.raises(ConfigurationError, match=re.escape(str(error))):
            sender.send(app, "/cb", reference)
    with Sandbox() as sandbox, pytest.raises(type(error), match=re.escape(str(error))):
        sandbox.send_callback("http://127.0.0.1:9/cb", reference)


@pytest.mark.parametrize("reference", ["", "a&b=c#d e", "\x00\n"])
def test_any_string_is_sent_percent_encoded(sender: CallbackSender, reference: str) -> None:
    answer = sender.send(WSGIEcho(), "/cb", reference)
    assert answer.json()["query"] == "reference=" + quote(reference, safe="")

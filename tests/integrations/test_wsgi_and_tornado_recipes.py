"""The callbacks guide's recipe for a framework paysdk has no helper for, in real WebOb (Pyramid's
request), Bottle, Falcon and Tornado apps served on 127.0.0.1: ``verify_callback`` given the
framework's own request, ``callback_response`` answering, against the bundled sandbox.

The WSGI apps run on the standard library's reference server, which hands the request line's
bytes to the app as PEP 3333 says (read as latin-1); Tornado on its own HTTP server. The callbacks
are sent over a plain socket, so that a query of raw UTF-8 arrives as the bytes a client sent.
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import anyio
import bottle  # type: ignore[import-untyped]
import falcon
import pytest
import tornado.httpserver
import tornado.testing
import tornado.web
import webob

import paysdk
from paysdk.integrations.responses import callback_response
from paysdk.sandbox import Sandbox
from tests.support.merchant import SHOP_ORDERS, Order, Shop

PATH = "/payments/callback"
RAW = "café-€"
"""A reference sent as raw UTF-8, not percent-encoded: each framework hands it on as latin-1."""

Answer = tuple[int, dict[str, str], dict[str, str]]
WSGIApp = Callable[[dict[str, Any], Any], Any]


def answer(client: paysdk.Client, shop: Shop, request: object) -> Answer:
    """The guide's view, framework aside: verify the request itself, then fulfil or refuse."""
    try:
        payment = client.verify_callback(request, lookup=shop.lookup)
    except paysdk.PaySDKError as error:
        refused = callback_response(error)
        return refused.status_code, refused.body, refused.headers
    shop.fulfil(payment)
    return 200, {"status": "ok"}, {}


def webob_app(client: paysdk.Client, shop: Shop) -> WSGIApp:
    def app(environ: dict[str, Any], start_response: Any) -> Any:
        request = webob.Request(environ)
        status, body, headers = answer(client, shop, request)
        response = webob.Response(json_body=body, status=status, headerlist=list(headers.items()))
        return response(environ, start_response)

    return app


def bottle_app(client: paysdk.Client, shop: Shop) -> WSGIApp:
    app = bottle.Bottle()

    @app.get(PATH)  # type: ignore[untyped-decorator]
    def payment_callback() -> dict[str, str]:
        status, body, headers = answer(client, shop, bottle.request)  # bound to this request
        bottle.response.status = status
        for name, value in headers.items():
            bottle.response.set_header(name, value)
        return body

    wsgi: WSGIApp = app
    return wsgi


def falcon_app(client: paysdk.Client, shop: Shop) -> WSGIApp:
    class PaymentCallback:
        def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
            status, body, headers = answer(client, shop, req)
            resp.status = status
            resp.media = body
            resp.set_headers(headers)

    app = falcon.App()
    app.add_route(PATH, PaymentCallback())
    return app


class QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """The test's output stays the test's."""


@contextmanager
def serving(app: WSGIApp) -> Iterator[int]:
    """``app`` on the standard library's WSGI server on 127.0.0.1; yields its port."""
    server: WSGIServer = make_server("127.0.0.1", 0, app, handler_class=QuietHandler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield server.server_port
    finally:
        server.shutdown()
        thread.join()
        server.server_close()


def get(port: int, query: bytes) -> tuple[int, object]:
    """``GET PATH?query``, the query's bytes sent as they are; the status and the JSON body."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as connection:
        connection.sendall(
            b"GET " + PATH.encode() + b"?" + query + b" HTTP/1.1\r\n"
            b"Host: 127.0.0.1\r\nConnection: close\r\n\r\n"
        )
        response = http.client.HTTPResponse(connection)
        response.begin()
        return response.status, json.loads(response.read())


def send_callbacks(port: int) -> list[tuple[int, object]]:
    """A verified callback, a repeated reference and a raw UTF-8 one."""
    queries = [
        b"reference=order-1042",
        b"reference=order-1042&reference=order-1042",
        f"reference={RAW}".encode(),
    ]
    return [get(port, query) for query in queries]


EXPECTED = [(200, {"status": "ok"}), (400, {"status": "invalid_callback"}), (200, {"status": "ok"})]


@pytest.fixture
def raw_shop(callback_sandbox: Sandbox) -> Shop:
    """The shop, with an order whose reference the service holds and a client sends raw."""
    callback_sandbox.add_payment(RAW, amount=500, currency="USD")
    return Shop(*SHOP_ORDERS, Order(RAW, amount=500, currency="USD"))


@pytest.mark.parametrize("make_app", [webob_app, bottle_app, falcon_app], ids=lambda f: f.__name__)
def test_a_wsgi_frameworks_own_request_is_verified_refused_and_read_as_utf8(
    make_app: Callable[[paysdk.Client, Shop], WSGIApp], client: paysdk.Client, raw_shop: Shop
) -> None:
    """WebOb's (Pyramid's), Bottle's ``bottle.request`` and Falcon's ``req``, on a real server."""
    with serving(make_app(client, raw_shop)) as port:
        answers = send_callbacks(port)
    assert answers == EXPECTED
    assert raw_shop.fulfilled == ["order-1042", RAW]


class TornadoCallback(tornado.web.RequestHandler):
    def initialize(self, client: paysdk.AsyncClient, shop: Shop) -> None:
        self.client = client
        self.shop = shop

    async def get(self) -> None:
        try:
            payment = await self.client.verify_callback(self.request, lookup=self.shop.lookup)
        except paysdk.PaySDKError as error:
            refused = callback_response(error)
            self.set_status(refused.status_code)
            for name, value in refused.headers.items():
                self.set_header(name, value)
            self.finish(refused.body)
            return
        self.shop.fulfil(payment)
        self.finish({"status": "ok"})


@pytest.mark.anyio
async def test_tornados_own_request_is_verified_refused_and_read_as_utf8(
    async_client: paysdk.AsyncClient, raw_shop: Shop
) -> None:
    """Tornado's ``self.request`` on Tornado's own server, the client made on its loop."""
    app = tornado.web.Application(
        [(PATH, TornadoCallback, {"client": async_client, "shop": raw_shop})]
    )
    server = tornado.httpserver.HTTPServer(app)
    sock, port = tornado.testing.bind_unused_port()  # on 127.0.0.1
    server.add_sockets([sock])
    try:
        answers = await anyio.to_thread.run_sync(send_callbacks, port)
    finally:
        server.stop()
        await server.close_all_connections()
    assert answers == EXPECTED
    assert raw_shop.fulfilled == ["order-1042", RAW]

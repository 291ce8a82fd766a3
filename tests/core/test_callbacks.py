"""parse_callback: one well-formed reference out of every request shape, or InvalidCallbackError."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode
from wsgiref.util import setup_testing_defaults

import bottle  # type: ignore[import-untyped]
import falcon.testing
import pytest
import tornado.httputil
import webob
from aiohttp.test_utils import make_mocked_request
from hypothesis import given, settings
from hypothesis import strategies as st
from multidict import MultiDict as MultiDictOfAiohttp
from multidict import MultiDictProxy
from starlette.datastructures import QueryParams
from starlette.requests import Request as StarletteRequest
from werkzeug.datastructures import MultiDict
from werkzeug.test import EnvironBuilder
from werkzeug.wrappers import Request as WerkzeugRequest

import paysdk
from paysdk import InvalidCallbackError, parse_callback
from paysdk._core import MAX_REFERENCE_LENGTH, reference_problem
from paysdk._core.callbacks import MAX_QUERY_LENGTH


def wsgi_environ(query: str) -> dict[str, Any]:
    return {"REQUEST_METHOD": "GET", "QUERY_STRING": query, "wsgi.version": (1, 0)}


def asgi_scope(query: bytes) -> dict[str, Any]:
    return {"type": "http", "method": "GET", "path": "/cb", "query_string": query, "headers": []}


def werkzeug_request(query: bytes) -> object:
    environ = EnvironBuilder(path="/cb").get_environ()
    environ["QUERY_STRING"] = query.decode("latin-1")
    return WerkzeugRequest(environ)


def starlette_request(query: bytes) -> object:
    return StarletteRequest(asgi_scope(query))


def aiohttp_request(query: str) -> object:
    """aiohttp's own request (a mapping too, of its state); its ``query_string`` is decoded."""
    return make_mocked_request("GET", f"/cb?{query}")


def full_environ(query: str) -> dict[str, Any]:
    """A WSGI environ as a server makes it (the stdlib's defaults), the query as PEP 3333 says:
    the request line's bytes read as latin-1."""
    environ = wsgi_environ(query)
    setup_testing_defaults(environ)
    return environ


def webob_request(query: str) -> object:
    """Pyramid's request is WebOb's: the WSGI environ as ``environ``."""
    return webob.Request.blank(f"/cb?{query}")


def bottle_request(query: str) -> object:
    """Bottle's request over a server's environ (``bottle.request`` is this, bound per thread)."""
    return bottle.BaseRequest(full_environ(query))


def falcon_request(query: str) -> object:
    """Falcon's WSGI request, made by its testing helpers: the WSGI environ as ``env``."""
    return falcon.testing.create_req(path="/cb", query_string=query)


def tornado_request(query: str) -> object:
    """Tornado's ``HTTPServerRequest``: the raw query as ``query`` and the ``uri``, both the
    request line's bytes read as latin-1, as Tornado's HTTP/1 server reads them."""
    start_line = tornado.httputil.RequestStartLine("GET", f"/cb?{query}", "HTTP/1.1")
    headers = tornado.httputil.HTTPHeaders({"Host": "shop.example"})
    return tornado.httputil.HTTPServerRequest(start_line=start_line, headers=headers)


class SanicRequest:
    """The shape of Sanic's request outside ASGI: the raw query as text in ``query_string``,
    and a ``scope`` property that raises (a raw non-ASCII query, Sanic refuses itself:
    BadRequest). A stand-in: Sanic 25.12, its newest, requires multidict<7, which in the tests
    extra would hold aiohttp's multidict below its newest in every job."""

    def __init__(self, query: str) -> None:
        self.query_string = query

    @property
    def scope(self) -> object:
        raise NotImplementedError("App isn't running in ASGI mode.")


SOURCES: dict[str, Callable[[str], object]] = {
    "url": lambda q: f"https://shop.example/payments/callback?{q}",
    "url-with-fragment": lambda q: f"https://shop.example/cb?{q}#top",
    "path": lambda q: f"/payments/callback?{q}",
    "query": lambda q: q,
    "query-with-?": lambda q: f"?{q}",
    "bytes": lambda q: q.encode(),
    "bytearray": lambda q: bytearray(q.encode()),
    "wsgi-environ": lambda q: wsgi_environ(q.encode().decode("latin-1")),
    "asgi-scope": lambda q: asgi_scope(q.encode()),
    "werkzeug-request": lambda q: werkzeug_request(q.encode()),
    "starlette-request": lambda q: starlette_request(q.encode()),
    "aiohttp-request": aiohttp_request,
    "webob-request": webob_request,
    "bottle-request": bottle_request,
    "falcon-wsgi-request": falcon_request,
    "tornado-request": tornado_request,
    "sanic-request": SanicRequest,
    "aiohttp-query-multidict": lambda q: MultiDictProxy(
        MultiDictOfAiohttp(parse_qsl(q, keep_blank_values=True))
    ),
}
"""Each kind of source, built from the same percent-encoded query string."""


RAW_SOURCES: dict[str, Callable[[bytes], object]] = {
    "bytes": lambda q: q,
    "wsgi-environ": lambda q: wsgi_environ(q.decode("latin-1")),
    "asgi-scope": asgi_scope,
    "werkzeug-request": werkzeug_request,
    "starlette-request": starlette_request,
    "webob-request": lambda q: webob_request(q.decode("latin-1")),
    "bottle-request": lambda q: bottle_request(q.decode("latin-1")),
    "falcon-wsgi-request": lambda q: falcon_request(q.decode("latin-1")),
    "tornado-request": lambda q: tornado_request(q.decode("latin-1")),
}
"""The sources that carry raw query bytes, where a client sent UTF-8 without percent-encoding."""


@pytest.mark.parametrize("make", RAW_SOURCES.values(), ids=RAW_SOURCES.keys())
def test_raw_utf8_query_bytes_are_read_as_utf8(make: Callable[[bytes], object]) -> None:
    assert parse_callback(make("reference=café-€".encode())) == "café-€"
    with pytest.raises(InvalidCallbackError, match="UTF-8"):
        parse_callback(make(b"reference=caf\xe9"))  # latin-1, not UTF-8


@pytest.mark.parametrize("make", SOURCES.values(), ids=SOURCES.keys())
@pytest.mark.parametrize(
    ("query", "reference"),
    [
        ("reference=order-1042", "order-1042"),
        ("shop=7&reference=order-1042&x=", "order-1042"),
        ("reference=order%2F1042", "order/1042"),
        ("reference=order+1042", "order 1042"),
        ("reference=order%201042%2B1", "order 1042+1"),
        ("reference=caf%C3%A9-%E2%82%AC-%F0%9F%98%80", "café-€-😀"),
        ("%72eference=order-1042", "order-1042"),
    ],
)
def test_every_source_kind_gives_the_decoded_reference(
    make: Callable[[str], object], query: str, reference: str
) -> None:
    assert parse_callback(make(query)) == reference


@pytest.mark.parametrize(
    "params",
    [
        {"reference": "order-1042"},
        {"reference": ["order-1042"]},
        {"reference": ("order-1042",)},
        {"reference": "order-1042", "other": ["a", "b"]},
        MultiDict([("reference", "order-1042")]),
        QueryParams("reference=order-1042"),
    ],
    ids=["str", "list", "tuple", "extra", "werkzeug-multidict", "starlette-queryparams"],
)
def test_mappings_of_parameters(params: object) -> None:
    assert parse_callback(params) == "order-1042"


def test_raw_utf8_bytes_are_decoded_like_percent_encoding() -> None:
    assert parse_callback("reference=café".encode()) == "café"
    assert parse_callback(wsgi_environ("reference=café".encode().decode("latin-1"))) == "café"


def test_wsgi_environ_without_query_string_has_no_reference() -> None:
    with pytest.raises(InvalidCallbackError, match="no 'reference'"):
        parse_callback({"REQUEST_METHOD": "GET", "wsgi.version": (1, 0)})


REPEATED = ["reference=a&reference=b", "reference=a&reference=a", "reference=a&reference="]


@pytest.mark.parametrize(
    ("source", "words"),
    [
        ("", "no 'reference'"),
        ("?", "no 'reference'"),
        ("ref=order-1042", "no 'reference'"),
        ("Reference=order-1042", "no 'reference'"),
        ("https://shop.example/cb", "no 'reference'"),
        ("reference=", "empty"),
        ("reference", "empty"),
        ("reference=+++", "empty"),
        ("reference=%20a", "whitespace"),
        ("reference=..", "not a reference"),
        ("reference=a%00b", "control"),
        ("reference=a%0Ab", "control"),
        ("reference=a%7Fb", "control"),
        ("reference=a\x00b", "control"),
        ("reference=%FF", "UTF-8"),
        ("reference=%C3", "UTF-8"),
        (b"reference=\xff", "UTF-8"),
        (b"reference=\xed\xa0\x80", "UTF-8"),  # an encoded surrogate
        ("reference=" + "a" * (MAX_REFERENCE_LENGTH + 1), "characters long"),
        ("reference=a&" + "x=1&" * 100, "parameters"),
        ("x" * (MAX_QUERY_LENGTH + 1), "at most"),
        (b"x" * (MAX_QUERY_LENGTH + 1), "at most"),
        ("https://shop.example/cb?reference=a\nb", "control"),
        ("https://shop.example/cb?reference=a\tb", "control"),
        ("ftp://shop.example/cb?reference=a", "http"),
        ("https://[shop/cb?reference=a", "cannot be parsed"),
        ({"reference": ["a", "b"]}, "2 times"),
        ({"reference": []}, "no 'reference'"),
        ({"reference": 42}, "is of type int, not str"),
        ({"reference": [b"a"]}, "bytes"),
        ({"reference": ""}, "empty"),
        ({}, "no 'reference'"),
        (MultiDict([("reference", "a"), ("reference", "a")]), "2 times"),
        (QueryParams("reference=a&reference=a"), "2 times"),
        (asgi_scope(b"reference=a&reference=b"), "2 times"),
        (wsgi_environ("reference=%FF"), "UTF-8"),
        ({"type": "http", "query_string": 5}, "is of type int, not text"),
        (42, "cannot read an object of type int; pass a URL, a query string"),
        (None, "a URL, a query string"),
        (object(), "a URL, a query string"),
        (["reference=a"], "a URL, a query string"),
        *[(query, "2 times") for query in REPEATED],
        *[(make(query), "2 times") for query in REPEATED for make in SOURCES.values()],
    ],
)
def test_invalid_callbacks_are_refused(source: object, words: str) -> None:
    with pytest.raises(InvalidCallbackError, match=words):
        parse_callback(source)


@pytest.mark.parametrize("query", ["reference=a%2541", "reference=a%2Bb%26c%3Dd"])
def test_an_aiohttp_request_is_read_from_its_raw_query_not_its_decoded_one(query: str) -> None:
    """aiohttp's ``query_string`` has decoded ``%25`` already: read again, ``a%2541`` would be
    ``aA``, not the ``a%41`` the service sent."""
    assert parse_callback(aiohttp_request(query)) == parse_callback(query)


def test_a_property_that_raises_is_no_framework_and_no_escape() -> None:
    class Refusing:
        @property
        def query_string(self) -> object:
            raise RuntimeError("outside a request")

        @property
        def scope(self) -> object:
            raise NotImplementedError

    with pytest.raises(
        InvalidCallbackError, match="cannot read an object of type Refusing"
    ) as caught:
        parse_callback(Refusing())
    assert "(reading its query_string raised RuntimeError: 'outside a request')" in str(
        caught.value
    )


def test_refusals_are_value_errors_and_paysdk_errors() -> None:
    with pytest.raises(ValueError, match="no 'reference'") as caught:
        parse_callback("")
    assert isinstance(caught.value, paysdk.PaySDKError)


@pytest.mark.parametrize(
    "attack",
    [
        "reference=" + "A" * 5000,
        "reference=" + quote("\u202eevil" + "B" * 300),
        "reference=" + quote("ok\x1b[31mred" + "C" * 300),
    ],
)
def test_messages_are_short_and_escaped(attack: str) -> None:
    with pytest.raises(InvalidCallbackError) as caught:
        parse_callback(attack)
    message = str(caught.value)
    assert len(message) < 200
    assert message.isprintable()
    assert "A" * 100 not in message
    assert "B" * 100 not in message


def test_importing_paysdk_loads_no_web_framework() -> None:
    code = (
        "import json, sys, paysdk, paysdk.integrations, paysdk.integrations.responses\n"
        "paysdk.parse_callback('reference=a')\n"
        "print(json.dumps(sorted(sys.modules)))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    loaded = json.loads(result.stdout)
    frameworks = {"django", "flask", "werkzeug", "starlette", "fastapi", "aiohttp"}
    frameworks |= {"webob", "bottle", "falcon", "tornado", "sanic"}
    assert "paysdk._core.callbacks" in loaded
    assert [name for name in loaded if name.split(".")[0] in frameworks] == []


# --- properties -------------------------------------------------------------------------------

valid_references = st.text(min_size=1, max_size=MAX_REFERENCE_LENGTH).filter(
    lambda text: reference_problem(text) is None
)
query_text = st.one_of(
    st.text(max_size=300),
    st.lists(
        st.tuples(st.sampled_from(["reference", "ref", "x", "%72eference", ""]), st.text()),
        max_size=5,
    ).map(lambda pairs: "&".join(f"{key}={value}" for key, value in pairs)),
)


def returns_reference_or_refuses(source: object) -> None:
    try:
        reference = parse_callback(source)
    except InvalidCallbackError:
        return
    assert isinstance(reference, str)
    assert reference_problem(reference) is None


@settings(max_examples=300, deadline=None)
@given(query_text)
def test_any_text_query_gives_a_reference_or_invalid_callback(query: str) -> None:
    returns_reference_or_refuses(query)
    returns_reference_or_refuses("https://shop.example/cb?" + query)
    returns_reference_or_refuses({"reference": query})


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300) | query_text.map(lambda text: text.encode("utf-8", "replace")))
def test_any_bytes_query_gives_a_reference_or_invalid_callback(query: bytes) -> None:
    returns_reference_or_refuses(query)
    returns_reference_or_refuses(asgi_scope(query))
    returns_reference_or_refuses(wsgi_environ(query.decode("latin-1")))


@settings(max_examples=300, deadline=None)
@given(valid_references)
def test_any_valid_reference_round_trips(reference: str) -> None:
    query = urlencode({"reference": reference})
    assert parse_callback(query) == reference
    assert parse_callback(query.encode()) == reference
    assert parse_callback("https://shop.example/cb?" + query) == reference
    assert parse_callback(asgi_scope(query.encode())) == reference
    assert parse_callback(urlencode({"reference": reference}, quote_via=quote)) == reference

"""Reading the ``reference`` out of a callback request, whatever shape the request arrives in.

The service's callback is an unsigned ``GET ...?reference=...``: anyone can send one. This module
only extracts a single, well-formed reference (it never trusts it); ``verify_callback`` then asks
the service about it. Frameworks are recognised by duck typing and never imported here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final, TypeGuard
from urllib.parse import parse_qs, urlsplit

from .._errors import InvalidCallbackError
from .._lazy import publish
from .references import reference_problem

__all__ = ["MAX_QUERY_LENGTH", "parse_callback"]

PARAMETER: Final = "reference"
MAX_QUERY_LENGTH: Final = 8192
"""Longest query string read (characters or bytes); a reference is at most 256 characters."""
MAX_QUERY_FIELDS: Final = 64

ACCEPTED: Final = (
    "a URL, a query string (str or bytes), a mapping of query parameters, a WSGI environ, "
    "an ASGI scope, or a Django, Flask/Werkzeug, Starlette, aiohttp, Falcon, Pyramid/WebOb, "
    "Bottle, Sanic or Tornado request"
)

_EXCERPT = 32
_ABSOLUTE_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
_HTTP_URL = re.compile(r"https?://", re.IGNORECASE)
_ASCII_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_NON_ASCII_BYTE = re.compile(rb"[\x80-\xff]")


def parse_callback(source: object) -> str:
    """The one well-formed ``reference`` in a callback request, else InvalidCallbackError.

    Missing, empty, repeated, over-long or control-character references are all refused, and
    nothing but InvalidCallbackError escapes, whatever ``source`` holds.

    Args:
        source: a request of Django, Flask/Werkzeug, Starlette/FastAPI (or another ASGI
            framework's, by its scope), aiohttp, Falcon, Pyramid/WebOb, Bottle, Sanic or Tornado,
            a URL or query string (``str`` or ``bytes``), or a mapping of query parameters.

    Returns:
        The reference, decoded.

    Raises:
        InvalidCallbackError: no single, well-formed reference, or a ``source`` it cannot read.
    """
    return _single_reference(_reference_values(source))


def _reference_values(source: object) -> list[object]:
    """Every value the ``reference`` parameter has in ``source``, decoded."""
    if isinstance(source, str):
        return _from_text(source)
    if isinstance(source, (bytes, bytearray)):
        return _from_query_bytes(bytes(source))
    if isinstance(source, memoryview):
        return _from_query_bytes(source.tobytes())
    if _is_mapping(source) and _attribute(source, "rel_url") is None:
        return _from_mapping(source)  # aiohttp's request is a mapping too, of its own state
    return _from_request(source)


def _from_text(text: str) -> list[object]:
    _check_length(len(text), "URL or query string")
    if not (_ABSOLUTE_URL.match(text) or text.startswith("/")):
        return _from_query_text(text[1:] if text.startswith("?") else text)
    if not (_HTTP_URL.match(text) or text.startswith("/")):
        raise InvalidCallbackError("invalid callback: a callback URL must be http:// or https://")
    if _ASCII_CONTROL.search(text):  # urlsplit would silently drop tabs and newlines
        raise InvalidCallbackError("invalid callback: the URL contains control characters")
    try:
        query = urlsplit(text).query
    except ValueError:
        raise InvalidCallbackError("invalid callback: the URL cannot be parsed") from None
    return _from_query_text(query)


def _from_query_bytes(query: bytes) -> list[object]:
    """Raw query bytes: stray non-ASCII bytes are read as percent-encoded, so UTF-8 is strict."""
    _check_length(len(query), "query string")
    escaped = _NON_ASCII_BYTE.sub(lambda match: b"%%%02X" % match[0][0], query)
    return _from_query_text(escaped.decode("ascii"))


def _from_query_text(query: str) -> list[object]:
    _check_length(len(query), "query string")
    try:
        fields = parse_qs(
            query,
            keep_blank_values=True,
            strict_parsing=False,
            encoding="utf-8",
            errors="strict",
            max_num_fields=MAX_QUERY_FIELDS,
        )
    except UnicodeError:
        raise InvalidCallbackError(
            "invalid callback: the query string is not valid percent-encoded UTF-8"
        ) from None
    except ValueError:  # more than max_num_fields
        raise InvalidCallbackError(
            f"invalid callback: the query string has more than {MAX_QUERY_FIELDS} parameters"
        ) from None
    return list(fields.get(PARAMETER, []))


def _from_mapping(params: Mapping[object, object]) -> list[object]:
    if _is_asgi_scope(params):
        return _from_query_bytes(_as_bytes(params.get("query_string", b""), "ASGI query_string"))
    if _is_wsgi_environ(params):
        return _from_query_bytes(_as_bytes(params.get("QUERY_STRING", ""), "QUERY_STRING"))
    getlist = _attribute(params, "getlist")
    getall = _attribute(params, "getall")
    if callable(getlist):  # MultiDict, QueryDict, QueryParams: a plain [] hides repeats
        value: object = getlist(PARAMETER)
    elif callable(getall):  # multidict's (aiohttp, Litestar) and WebOb's: as getlist
        value = getall(PARAMETER) if PARAMETER in params else []
    elif PARAMETER in params:
        value = params[PARAMETER]
    else:
        return []
    return list(value) if _is_list_or_tuple(value) else [value]


def _from_request(request: object) -> list[object]:
    """A framework's request, recognised by what it carries: each reads the raw query."""
    read = _Reader(request)
    query_string = read("query_string")  # Werkzeug / Flask (also Quart)
    if isinstance(query_string, bytes):
        return _from_query_bytes(query_string)
    scope = read("scope")  # Starlette / FastAPI, Litestar, Falcon's ASGI
    if _is_mapping(scope) and _is_asgi_scope(scope):
        return _from_mapping(scope)
    meta = read("META")  # Django (WSGIRequest and ASGIRequest)
    if _is_mapping(meta) and ("QUERY_STRING" in meta or "REQUEST_METHOD" in meta):
        return _from_query_bytes(_as_bytes(meta.get("QUERY_STRING", ""), "QUERY_STRING"))
    for name in ("environ", "env"):  # WebOb / Pyramid and Bottle; Falcon's WSGI
        environ = read(name)
        if _is_mapping(environ) and _is_wsgi_environ(environ):
            return _from_mapping(environ)
    url = read("rel_url")  # aiohttp: its query_string is decoded, so its URL's raw query
    raw_query = _attribute(url, "raw_query_string")
    if isinstance(raw_query, str):
        return _from_query_text(raw_query)
    query = read("query")  # Tornado's HTTPServerRequest: raw, read as latin-1
    if isinstance(query, str) and isinstance(read("uri"), str):
        return _from_query_bytes(_as_bytes(query, "query"))
    if isinstance(query_string, str):  # Sanic: the raw query, as text
        return _from_query_text(query_string)
    raise InvalidCallbackError(
        f"invalid callback source: cannot read an object of type {type(request).__name__}"
        f"{read.refusal}; pass {ACCEPTED}"
    )


class _Reader:
    """Reads a request's attributes as ``_attribute`` does, keeping the first refusal to say."""

    def __init__(self, request: object) -> None:
        self._request = request
        self.refusal = ""
        """``" (reading its NAME raised TYPE: MESSAGE)"``, for the first attribute that raised."""

    def __call__(self, name: str) -> object:
        try:
            return getattr(self._request, name, None)
        except Exception as error:  # Sanic's scope outside ASGI, Flask's outside a request
            if not self.refusal:
                said = _excerpt(str(error))
                self.refusal = f" (reading its {name} raised {type(error).__name__}: {said})"
            return None


def _attribute(value: object, name: str) -> object:
    """``value.name``, or None where reading it raises: a framework's property may refuse
    (Sanic's ``scope`` outside ASGI raises NotImplementedError), and only
    InvalidCallbackError leaves parse_callback."""
    try:
        return getattr(value, name, None)
    except Exception:  # any property's refusal means "not this framework"
        return None


def _is_mapping(value: object) -> TypeGuard[Mapping[object, object]]:
    return isinstance(value, Mapping)


def _is_list_or_tuple(value: object) -> TypeGuard[list[object] | tuple[object, ...]]:
    return isinstance(value, (list, tuple))


def _is_asgi_scope(params: Mapping[object, object]) -> bool:
    return params.get("type") == "http" and ("query_string" in params or "asgi" in params)


def _is_wsgi_environ(params: Mapping[object, object]) -> bool:
    return "wsgi.version" in params or "REQUEST_METHOD" in params


def _as_bytes(query: object, what: str) -> bytes:
    """WSGI gives the query as latin-1 text (PEP 3333), ASGI as bytes; both mean the raw bytes."""
    if isinstance(query, (bytes, bytearray)):
        return bytes(query)
    if isinstance(query, str):
        _check_length(len(query), "query string")
        try:
            return query.encode("latin-1")
        except UnicodeEncodeError:  # text decoded as UTF-8 by the server, not as PEP 3333 says
            return query.encode("utf-8", errors="backslashreplace")
    raise InvalidCallbackError(
        f"invalid callback: {what} is of type {type(query).__name__}, not text"
    )


def _check_length(length: int, what: str) -> None:
    if length > MAX_QUERY_LENGTH:
        raise InvalidCallbackError(
            f"invalid callback: the {what} is {length} characters long; "
            f"at most {MAX_QUERY_LENGTH} are read"
        )


def _single_reference(values: list[object]) -> str:
    if not values:
        raise InvalidCallbackError(f"invalid callback: no {PARAMETER!r} query parameter")
    if len(values) > 1:
        raise InvalidCallbackError(
            f"invalid callback: the {PARAMETER!r} parameter is given {len(values)} times; "
            "a callback carries exactly one"
        )
    value = values[0]
    if not isinstance(value, str):
        raise InvalidCallbackError(
            f"invalid callback: the {PARAMETER!r} parameter is of type {type(value).__name__}, "
            "not str"
        )
    problem = reference_problem(value)
    if problem is not None:
        raise InvalidCallbackError(f"invalid callback: {problem} ({_excerpt(value)})")
    return value


def _excerpt(text: str) -> str:
    """A short, escaped view of attacker-controlled text, safe to log: in ASCII, as a refused
    order's reference is quoted, so a look-alike (``'\\u043erder-1042'``, a Cyrillic o) or a
    character drawn as nothing (U+3164) never reads as a real order's reference."""
    return ascii(text[:_EXCERPT]) + ("..." if len(text) > _EXCERPT else "")


publish("paysdk", parse_callback)

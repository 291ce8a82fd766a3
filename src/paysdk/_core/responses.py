"""What an answer means, I/O-free like the rest of the core: the exception a failure is (what it
quotes from a body scrubbed of the secret key), or what a successful body's parser makes of it
(the model: ``validation``)."""

from __future__ import annotations

import errno
from collections.abc import Callable
from typing import Any, Final, TypeVar, cast
from urllib.parse import urlsplit

from pydantic import ValidationError

from .._errors import (
    APIConnectionError,
    APIError,
    APITimeoutError,
    AuthenticationError,
    CertificateVerificationError,
    ListUnavailableError,
    NotFoundError,
    PaymentNotFoundError,
    PaySDKError,
    PermissionDeniedError,
    ProxyAuthenticationError,
    RateLimitError,
    ResponseTooLargeError,
    ResponseValidationError,
    ServerError,
    TLSProtocolError,
)
from .._errors.api import MAX_ERRORS_KEPT, json_or_none
from .._errors.quoting import body_excerpt, bounded_detail, quoted
from .._parsing.repair import not_utf8
from .config import is_loopback
from .retry import PROXY_REFUSALS, RETRYABLE_STATUS, retry_after, wait_text
from .steps import Answer, Failure, Send

T = TypeVar("T")

FAKE_HOST: Final = "api.paysdk.test"
"""The host of ``paysdk.testing.MockPaymentAPI`` (and of the pytest plugin's default
environment): it never resolves, so a call to it where no fake runs is told what to do."""
NOTHING_LISTENS_HINT: Final = (
    "; nothing listens at {address}: if that was a paysdk sandbox, it has stopped (`paysdk "
    "sandbox status` lists those running; one started anew has a port and key of its own)"
)
"""Where a loopback base URL refuses the connection: most often a sandbox no longer running."""
FAKE_HOST_HINT: Final = (
    f"; {FAKE_HOST} is paysdk.testing's in-memory fake, which answers only in a process where a "
    "MockPaymentAPI runs: ask for the paysdk_api fixture in this test (or paysdk_sandbox, a real "
    "server on 127.0.0.1, for a client in another process)"
)


def map_response(
    request: Send, response: Answer, parse: Callable[[Answer], T], reference: str | None
) -> T:
    """What ``parse`` makes of a 2xx response, or the exception the response stands for."""
    status = response.status_code
    if 200 <= status < 300:
        try:
            return parse(response)
        except ValidationError as exc:
            raise invalid_body(request, response, exc) from None
    raise error_for(request, response, reference)


def info_of(request: Send, response: Answer | Failure) -> dict[str, Any]:
    return {
        "status_code": response.status_code,
        "headers": response.headers,
        "content": response.content,
        "method": request.method,
        "url": request.url,
        "scrub": request.scrub,
    }


KEY_NOT_ACCEPTED = "the secret key was not accepted; is it the key of the service at base_url?"
"""How a 401 begins: a key of another service (another sandbox's, say) is the usual cause."""


def error_for(request: Send, response: Answer, reference: str | None) -> APIError:
    status = response.status_code
    info = info_of(request, response)
    said = _what_the_server_said(response.content, request.scrub)
    if status == 401:
        return AuthenticationError(f"{KEY_NOT_ACCEPTED}{said}", **info)
    if status == 403:
        return PermissionDeniedError(f"the secret key may not do this{said}", **info)
    if status == 404:
        body = _json_object(response.content)
        if reference is not None and body.get("success") is False:
            return PaymentNotFoundError(
                f"no payment has the reference {quoted(reference, code=True)}{said}",
                reference=reference,
                **info,
            )
        if reference is None and body.get("error") == "Connection Error":
            return ListUnavailableError(f"the payment list is unavailable{said}", **info)
        hint = _endpoint_in_base_url(request.url, reference)
        return NotFoundError(f"not found; is base_url right?{hint}{said}", **info)
    if status in RETRYABLE_STATUS or status >= 500:
        # the wait asked for, said: a wait too long is raised without a retry, for the caller
        wait = retry_after(response.headers)
        if wait is not None:
            said += f"; the service asks to wait {wait_text(wait)} before another try"
        if status == 429:
            return RateLimitError(f"rate limited{said}", retry_after=wait, **info)
    if status >= 500:
        return ServerError(f"the service failed{said}", **info)
    return APIError(f"unexpected answer{said}", **info)


def _endpoint_in_base_url(url: str, reference: str | None) -> str:
    """Where the base URL of a request answered 404 holds ``/payment`` or ``/payments`` (one
    copied from the service's docs, or a whole verify URL), that paysdk adds those itself."""
    path = urlsplit(url).path
    base = path.rsplit("/payment/", 1)[0] if reference is not None else path[: -len("/payments")]
    if "/payment/" not in f"{base}/" and "/payments/" not in f"{base}/":
        return ""
    return " (its path holds /payment or /payments, which paysdk adds itself: leave them out)"


def invalid_body(
    request: Send,
    response: Answer,
    exc: ValidationError,
    *,
    where: tuple[str | int, ...] = (),
) -> APIError:
    """The error for a 2xx body (or, with ``where``, a part of it) that is not as documented."""
    errors = exc.errors(include_url=False, include_input=False, include_context=False)
    if errors and errors[0]["type"] == "json_invalid":
        content_type = _scrubbed_excerpt(
            response.headers.get("content-type", "no content-type"), request.scrub
        )  # a header is the server's text like the body: it may echo the key or hold controls
        excerpt = _scrubbed_excerpt(
            response.content.decode("utf-8", errors="replace"), request.scrub
        )
        bytes_said = not_utf8(response.content)
        why = "" if bytes_said is None else f", holding {bytes_said}, shown as \\ufffd"
        what = f"a body that is not JSON ({content_type}){why}: {excerpt}"
        if "number out of range" in errors[0]["msg"]:  # pydantic reads up to 4,300 digits
            what = f"a body with a number too long to read (over 4,300 digits): {excerpt}"
        elif "recursion limit exceeded" in errors[0]["msg"]:  # pydantic reads 200 levels deep
            what = f"a body nested too deeply to read (arrays or objects in each other): {excerpt}"
    else:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in (*where, *error['loc'])) or 'body'}: {error['msg']}"
            for error in errors[:5]
        )
        more = f" (and {len(errors) - 5:,} more)" if len(errors) > 5 else ""
        what = f"a body that is not the documented shape: {problems}{more}"
    return ResponseValidationError(
        f"the service answered with {what}",
        errors=[dict(error, loc=(*where, *error["loc"])) for error in errors[:MAX_ERRORS_KEPT]],
        **info_of(request, response),
    )


def _json_object(content: bytes) -> dict[str, Any]:
    body = json_or_none(content)
    return cast("dict[str, Any]", body) if isinstance(body, dict) else {}


def _what_the_server_said(content: bytes, scrub: Callable[[str], str]) -> str:
    """A short excerpt of what the server said, scrubbed of the key *before* it is cut (a key
    cut in two would no longer be recognised)."""
    body = _json_object(content)
    parts = [str(body[key]) for key in ("error", "message") if isinstance(body.get(key), str)]
    if parts:
        return ": " + _scrubbed_excerpt(" - ".join(dict.fromkeys(parts)), scrub)
    if content:
        return ": " + _scrubbed_excerpt(content.decode("utf-8", errors="replace"), scrub)
    return ""


def _address(url: str) -> str:
    """``host:port`` of a URL, the port said even when it is the scheme's default."""
    split = urlsplit(url)
    host = f"[{split.hostname}]" if split.hostname and ":" in split.hostname else split.hostname
    return f"{host}:{split.port or (443 if split.scheme == 'https' else 80)}"


def _scrubbed_excerpt(text: str, scrub: Callable[[str], str]) -> str:
    # A header aiohttp decoded keeps its undecodable bytes as lone surrogates: replaced.
    return body_excerpt(scrub(text).encode(errors="replace"))


def failure_error(request: Send, failure: Failure, reference: str | None = None) -> PaySDKError:
    """The exception an attempt that brought no usable answer stands for."""
    where = {"method": request.method, "url": request.url}
    detail = bounded_detail(request.scrub(failure.detail))  # cut once scrubbed: a cut key is missed
    error: PaySDKError
    if failure.kind == "timeout":
        error = APITimeoutError(detail + _spoken_to_in_tls(failure), **where)
    elif failure.kind == "certificate":
        whose = "the service's TLS certificate"
        if failure.proxy:  # checked with the same trust, the proxy's may be the one refused
            whose = f"the TLS certificate of the proxy {failure.proxy} or of the service"
        error = CertificateVerificationError(f"could not verify {whose}: {detail}", **where)
    elif failure.kind == "tls_protocol" and failure.proxy:
        error = TLSProtocolError(
            f"the proxy {failure.proxy}, or the server at {_address(request.url)} behind it, did "
            f"not answer in TLS ({detail}): most proxies speak plain HTTP, even to carry https:// "
            "requests: if this one does, start its URL with http://; else check base_url",
            **where,
        )
    elif failure.kind == "tls_protocol":
        error = TLSProtocolError(
            f"the server at {_address(request.url)} did not answer in TLS ({detail}): it seems to "
            "speak plain HTTP; use http:// if it is meant to, or check the port",
            **where,
        )
    elif failure.kind == "tls_version":
        error = TLSProtocolError(
            f"the server at {_address(request.url)} offers no TLS version this client accepts "
            f"({detail}): it likely offers only TLS 1.0 or 1.1, which Python refuses; the service "
            "must offer TLS 1.2 or later (or check the port, or the TLS context given as verify=)",
            **where,
        )
    elif failure.kind == "tls_refused":
        error = TLSProtocolError(f"the server at {_address(request.url)} {detail}", **where)
    elif failure.kind == "proxy" and failure.status_code in PROXY_REFUSALS:
        error = ProxyAuthenticationError(_proxy_refused(request, failure, detail), **where)
    elif failure.kind == "proxy":
        error = APIConnectionError(_proxy_said(request, failure, detail), **where)
    elif failure.kind == "proxy_connect":
        error = APIConnectionError(
            f"could not connect to the proxy {failure.proxy}: {detail}", **where
        )
    elif failure.kind == "too_large" and failure.status_code is not None:
        error = ResponseTooLargeError(
            f"{detail}; raise it with max_response_bytes=..."
            + ("" if request.stream else ", or use iter_payments() to stream a long list"),
            limit=request.max_body,
            **info_of(request, failure),
        )
    elif failure.kind == "undecodable" and failure.status_code is not None:
        if 200 <= failure.status_code < 300:
            error = ResponseValidationError(
                f"the service answered, but {detail}", **info_of(request, failure)
            )
        else:  # the status says what went wrong; the body was only ever an excerpt
            error = error_for(
                request, Answer(failure.status_code, failure.headers or {}, b""), reference
            )
    elif failure.kind == "undecodable":  # before any status: a proxy mangled the answer
        error = APIConnectionError(f"the service's answer {detail.removeprefix('the ')}", **where)
    elif failure.kind == "malformed":  # reached: what came back is not HTTP, or was cut short
        source = f"through the proxy {failure.proxy}" if failure.proxy else "from the service"
        error = APIConnectionError(
            f"the answer {source} could not be read as HTTP: {detail}", **where
        )
    else:
        through = f" through the proxy {failure.proxy}" if failure.proxy else ""
        host = urlsplit(request.url).hostname
        if host == FAKE_HOST:
            hint = FAKE_HOST_HINT
        elif not failure.proxy and is_loopback(host or "") and connection_refused(failure.cause):
            hint = NOTHING_LISTENS_HINT.format(address=_address(request.url))
        else:
            hint = ""
        error = APIConnectionError(f"could not reach the service{through}: {detail}{hint}", **where)
    if _holds_key(request, failure.cause):  # chained, its text would show in every traceback
        error.__cause__, error.__suppress_context__ = None, True
    else:
        error.__cause__ = failure.cause
    return error


def connection_refused(cause: BaseException | None) -> bool:
    """Whether the connection was refused: nothing listens at the address (in ``cause`` or
    what it was raised from, as the HTTP libraries wrap the socket's error; or every error of an
    exception group there, as trio raises one for each address it tried)."""
    seen = 0
    while cause is not None and seen < 8:
        if isinstance(cause, OSError) and cause.errno == errno.ECONNREFUSED:
            return True
        if isinstance(grouped := getattr(cause, "exceptions", None), tuple) and grouped:
            members = cast("tuple[object, ...]", grouped)  # an ExceptionGroup's (3.10: backport's)
            return all(
                isinstance(one, BaseException) and connection_refused(one) for one in members
            )
        cause, seen = cause.__cause__ or cause.__context__, seen + 1
    return False


def _spoken_to_in_tls(failure: Failure) -> str:
    """Where the attempt went through an ``https://`` proxy (``failure.proxy``), that the proxy
    may speak plain HTTP: waiting, silent, for the rest of a request it cannot read."""
    if not failure.proxy:
        return ""
    return (
        f"; the proxy {failure.proxy} is spoken to in TLS, as its https:// URL asks: if it speaks "
        "plain HTTP, as most proxies do, start its URL with http://"
    )


def _proxy_said(request: Send, failure: Failure, detail: str) -> str:
    """That the proxy (named, where the transport knows it) did not carry ``request``: a tunnel
    for an ``https://`` service, a forwarded request for a plain one; and its answer, whose
    reason phrase is the proxy's own text: escaped and cut, as a body's excerpt is."""
    proxy = f"the proxy {failure.proxy}" if failure.proxy else "the proxy"
    carry = "open a tunnel to" if request.url.startswith("https:") else "forward the request to"
    said = _scrubbed_excerpt(detail, request.scrub)
    return f"{proxy} did not {carry} the service at {_address(request.url)}: {said}"


def _proxy_refused(request: Send, failure: Failure, detail: str) -> str:
    """``_proxy_said``, and what to do about a refusal no retry changes: a 407 wants other
    credentials, a 403 is the proxy's policy, a 400 or 405 a request it does not take."""
    said = _proxy_said(request, failure, detail)
    if failure.status_code == 403:
        return (
            f"{said}; its policy does not let this client reach that host: ask the proxy's "
            "administrators to allow it, or check base_url"
        )
    if failure.status_code != 407:
        return (
            f"{said}; the proxy does not carry this client's tunnels (CONNECT): check that its "
            "URL names a forward proxy for https://, or ask its administrators"
        )
    where = "its URL" if failure.proxy else "proxy= or HTTPS_PROXY"
    return f"{said}; check the credentials in {where} (http://user:password@proxy:port)"


def _holds_key(request: Send, cause: BaseException | None) -> bool:
    """Whether the text of ``cause``, or of one it was raised from, holds the secret key: a
    parser's error quotes the line it refused, and a server may echo the key in any line."""
    seen: set[int] = set()
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        text = str(cause)
        if request.scrub(text) != text:
            return True
        cause = cause.__cause__ or cause.__context__
    return False

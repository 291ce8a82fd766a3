"""What every framework helper decides, free of I/O (the adapters carry it out): GET only, which
refusals the ledger records, and the fulfilment rule: a view's 2xx, 3xx or non-response is
fulfilled; a 4xx is the merchant's refusal, released and recorded with the status and a body
excerpt; a 5xx or an exception is released unrecorded, so the service's retry runs it again."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import gc
import inspect
from collections.abc import Awaitable, Callable, Generator
from typing import Generic, TypeVar, cast

from .._client._async.client import AsyncClient
from .._client._sync.client import Client
from .._core.expected import refuse_awaitable
from .._errors import (
    ConfigurationError,
    PaymentFailedError,
    PaymentMismatchError,
    PaySDKError,
    UnknownOrderError,
)
from .._errors.quoting import quoted
from .._models.verified import VerifiedPayment
from ..ledger import AmountOutOfRangeError
from .responses import CallbackResponse, log, log_fields

__all__ = [
    "FLASK_ROUTING",
    "STARLETTE_ROUTING",
    "NotFulfilled",
    "Refusal",
    "Watched",
    "check_answer",
    "check_sync_on_failed",
    "check_view",
    "failed_answer",
    "failed_payment",
    "method_response",
    "off_the_loop",
    "refusal_of",
    "scrub_of",
    "sendable_answer",
    "sync_on_failed_answer",
    "takes_keywords_only",
    "unrecorded_refusal",
    "watched_lookup",
]

R = TypeVar("R")
A = TypeVar("A")
V = TypeVar("V")
S = TypeVar("S")

EXCERPT = 200
"""How many characters of a refusing view's body its recorded reason quotes."""


@dataclasses.dataclass(frozen=True)
class Refusal:
    """A refusal worth recording: the payment the service confirmed, and why it is refused."""

    payment: VerifiedPayment
    reason: str


class NotFulfilled(Exception):
    """Raised from the ledger's action for a view answer that is not a success, so the ledger
    releases the claim; the helper then sends ``response``, the view's own, unchanged."""

    def __init__(self, response: object, refusal: str | None) -> None:
        super().__init__(refusal or "the callback view answered a server error")
        self.response = response
        self.refusal = refusal
        """Why the merchant refused the payment (a 4xx), or None for a 5xx."""

    def refusal_for(self, payment: VerifiedPayment) -> Refusal | None:
        """The refusal to record for ``payment``: only a 4xx is one."""
        return None if self.refusal is None else Refusal(payment, self.refusal)


def method_response(method: str) -> CallbackResponse | None:
    """The answer to a callback request by ``method`` (as the framework gives it): ``None`` for
    GET, which is handled; for any other (``HEAD`` too), 405 ``method_not_allowed``, whose
    ``headers`` hold ``Allow: GET``. Compared exactly: HTTP methods are case-sensitive."""
    if method == "GET":
        return None
    log.info(
        "callback answered 405 (method_not_allowed) to method %s",
        _shown_method(method),
        extra=log_fields(),
    )
    return CallbackResponse(405, "method_not_allowed")


def _shown_method(method: str) -> str:
    """The method for a log line: a client sends any token; at most 20 printable characters."""
    return "".join(c if c.isprintable() else "?" for c in method[:20]) or "(no method)"


def scrub_of(client: Client | AsyncClient) -> Callable[[str], str]:
    """What blots ``client``'s secret key out of text, for a refusal's reason: what the service
    sent (a currency, a reference, a view's body quoting them) may echo the key."""
    return client._config.scrub


def check_answer(
    response: R, status: int | None, body: Callable[[], bytes], scrub: Callable[[str], str]
) -> R:
    """Pass on a view's successful answer; raise for one that must not be recorded fulfilled.

    Args:
        response: what the view returned, as the adapter will send it.
        status: its HTTP status, or None for a value that is not a response (a success).
        body: reads the response's body, called only for a 4xx.
        scrub: blots the secret key out of the body (``scrub_of``), which the reason quotes.

    Returns:
        ``response``, for a success (2xx, 3xx, or no status).

    Raises:
        NotFulfilled: the view answered 4xx (with the refusal's reason) or 5xx.
    """
    if status is None or status < 400:
        return response
    if status >= 500:
        raise NotFulfilled(response, None)
    raise NotFulfilled(response, f"the callback view answered {status}: {_excerpt(body(), scrub)}")


@dataclasses.dataclass(frozen=True)
class Routing:
    """How a framework's router holds a view: under ``attribute`` of an object that also has
    ``marker`` (``in_mapping``: as a value of the mapping held there, as Flask's
    ``app.view_functions``)."""

    attribute: str
    marker: str
    in_mapping: bool = False


FLASK_ROUTING = Routing("view_functions", "url_map", in_mapping=True)
STARLETTE_ROUTING = Routing("endpoint", "path")


def check_view(
    view: object,
    leading: tuple[str, ...],
    routing: Routing | None = None,
    *,
    method: str,
    keywords: bool = False,
) -> None:
    """Refuse, when the decorator is applied, a view the helper could never call right.

    Args:
        view: what the decorator was applied to.
        leading: the positional arguments the helper calls it with, by name (``"payment"``, or
            ``"request", "payment"``).
        routing: how the framework's router holds a view, to tell a view routed already (the
            decorator written above the route's, so the router calls the view undecorated).
        method: what to write instead of the decorator on a method of a class (its first
            parameter ``self``), which the helper would call with ``self`` missing.
        keywords: whether a view taking keywords alone (``**kwargs``, as a class-based view's
            ``as_view()`` function does) is given ``leading`` by keyword.

    Raises:
        TypeError: ``view`` is not callable, cannot take ``leading``, is a method of a class,
            or is routed already.
    """
    shape = f"def view({', '.join(leading)}, ...)"
    if not callable(view):
        raise TypeError(f"verified_callback decorates a view ({shape}), not {view!r}")
    name = getattr(view, "__qualname__", repr(view))
    try:
        signature = inspect.signature(view)
    except ValueError:  # no signature to read (a builtin): let the call itself say
        return
    if _is_method(view):
        raise TypeError(
            f"verified_callback: {name} is a method (its first parameter is self), which the "
            f"helper would call with the {leading[0]} in its place: {method}"
        )
    try:
        if keywords and takes_keywords_only(view):
            signature.bind_partial(**dict.fromkeys(leading))
        else:
            signature.bind_partial(*leading)
    except TypeError:
        raise TypeError(
            f"verified_callback: the view {name} must take {' and '.join(leading)} as its "
            f"first positional parameter{'s' if len(leading) > 1 else ''}: {shape}"
        ) from None
    if routing is not None and _routed(view, routing):
        raise TypeError(
            f"verified_callback: the view {name} is routed already, so the route would call it "
            "without the decorator: write @verified_callback(...) below the route's decorator, "
            "next to the function"
        )


def _is_method(view: object) -> bool:
    """Whether ``view`` is a function written in a class body (its first parameter ``self``),
    through any decorators. Django's ``method_decorator`` hands a decorator the method bound
    already, a ``functools.partial`` that names the method as ``__wrapped__``: not a method."""
    inner = inspect.unwrap(view, stop=lambda f: isinstance(f, functools.partial))  # type: ignore[arg-type]
    if not inspect.isfunction(inner):
        return False
    return next(iter(inspect.signature(inner, follow_wrapped=False).parameters), None) == "self"


def takes_keywords_only(view: object) -> bool:
    """Whether ``view`` takes no positional parameter but does take ``**kwargs``: Flask's
    ``View.as_view()`` function, which passes what it is given by keyword to ``get`` (or
    ``dispatch_request``), so the helper hands it the payment as ``payment=``."""
    try:
        kinds = [p.kind for p in inspect.signature(view).parameters.values()]  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False
    positional = {
        inspect.Parameter.POSITIONAL_ONLY,
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
        inspect.Parameter.VAR_POSITIONAL,
    }
    return inspect.Parameter.VAR_KEYWORD in kinds and not positional.intersection(kinds)


def _routed(view: object, routing: Routing) -> bool:
    """Whether a router holds ``view`` already; looked up through what refers to it."""
    held: list[object] = [view]
    if routing.in_mapping:
        held = [r for r in gc.get_referrers(view) if type(r) is dict]
    for target in held:
        for holder in gc.get_referrers(target):
            if type(holder) is dict:  # an instance's __dict__, on Pythons before 3.12
                attributes = cast("dict[object, object]", holder)
                if attributes.get(routing.attribute) is target and routing.marker in attributes:
                    return True
            elif (
                inspect.getattr_static(holder, routing.attribute, None) is target
                and inspect.getattr_static(holder, routing.marker, None) is not None
            ):
                return True
    return False


def failed_payment(error: PaySDKError) -> PaymentFailedError | None:
    """``error`` if it is a failed payment (which ``on_failed`` is called with), else None."""
    return error if isinstance(error, PaymentFailedError) else None


def failed_answer(answer: R | None, own: Callable[[], R]) -> R:
    """What a failed payment is answered with: what ``on_failed`` returned, sent as the
    framework sends a view's answer (Flask's dict, str or tuple; FastAPI's value or response;
    Django's response, ``sendable_answer``), or, for ``None`` (or no ``on_failed``), the
    helper's own 200 ``failed``.

    Args:
        answer: what ``on_failed`` returned, awaited if it had to be.
        own: makes the helper's own answer (which logs it), called only for ``None``.

    Returns:
        ``answer``, or the helper's own answer for ``None``.
    """
    return own() if answer is None else answer


def sendable_answer(answer: object, sent: type[S], framework: str) -> S | None:
    """``on_failed``'s answer where the framework sends only a response of type ``sent``
    (Django's ``HttpResponseBase``): any other is refused, not dropped for the helper's answer.

    Args:
        answer: what ``on_failed`` returned, awaited if it had to be.
        sent: the type of what the framework sends.
        framework: its name, for the refusal.

    Returns:
        ``answer``: a ``sent``, or ``None``.

    Raises:
        ConfigurationError: ``answer`` is something else (a dict); the framework answers its
            500 and nothing is recorded, so the service calls again once ``on_failed`` is fixed.
    """
    if answer is None or isinstance(answer, sent):
        return answer
    raise ConfigurationError(
        f"on_failed returned a {type(answer).__name__}, which {framework} cannot send: return a "
        f"response ({sent.__name__}; a JsonResponse for a dict), or None for the helper's own "
        "answer (200 failed)"
    )


ASYNC_ON_FAILED = (
    "on_failed is async, and the helper of a sync view (a paysdk.Client) cannot await it: the "
    "failure it records would never be recorded; pass a plain function (Flask: or an async def, "
    "which Flask runs as it runs an async view), or use an AsyncClient (Django: and an async def "
    "view; FastAPI awaits either)"
)


def check_sync_on_failed(on_failed: object) -> None:
    """Refuse, when the decorator is applied, an ``async def`` ``on_failed`` for a sync view:
    called there, it would only make a coroutine, so the failed payment it records would never
    be recorded (Django answered as if it had been; Flask answered 500 to every retry).

    Raises:
        ConfigurationError: ``on_failed`` is a coroutine function.
    """
    if inspect.iscoroutinefunction(on_failed):
        raise ConfigurationError(ASYNC_ON_FAILED)


def sync_on_failed_answer(answer: object) -> None:
    """Refuse what a sync view's ``on_failed`` answered if it is awaitable (an object whose
    ``__call__`` is async, which ``check_sync_on_failed`` cannot see), closed: nothing awaits it.

    Raises:
        ConfigurationError: ``answer`` is awaitable; the framework answers its 500, so the
            service calls again once ``on_failed`` is fixed.
    """
    refuse_awaitable(answer, ASYNC_ON_FAILED)


class Watched(Generic[A, V]):
    """The merchant's code a helper runs (the lookup, the view as the ledger's action), noting
    a paysdk error it raises: one of its own calls (a linked payment confirmed, say) raised
    it, so it is that code's exception like any other (the claim released, the framework's
    500, the service's retry runs it again), never a verdict on the callback's payment to
    answer, refuse, record or pass to ``on_failed``."""

    def __init__(
        self, code: Callable[[A], V], *, verdicts: tuple[type[PaySDKError], ...] = ()
    ) -> None:
        self._code = code
        self._verdicts = verdicts  # raised on purpose, to say what paysdk would say
        self._raised: PaySDKError | None = None

    def run(self, argument: A) -> V:
        """Run the code (a sync one)."""
        with self._noting():
            return self._code(argument)

    async def arun(self: Watched[A, Awaitable[R]], argument: A) -> R:
        """Run and await the code (an async one)."""
        with self._noting():
            return await self._code(argument)

    async def aresolve(self, argument: A) -> object:
        """Run the code, and await what it returns if that is awaitable (an ``AsyncClient``'s
        lookup may be sync or async)."""
        with self._noting():
            found = self._code(argument)
            return await found if inspect.isawaitable(found) else found

    def raised(self, error: PaySDKError) -> bool:
        """Whether ``error`` is the one the code raised, not paysdk's verdict or the ledger's."""
        return error is self._raised

    @contextlib.contextmanager
    def _noting(self) -> Generator[None, None, None]:
        try:
            yield
        except PaySDKError as error:
            if not isinstance(error, self._verdicts):
                self._raised = error
            raise


def off_the_loop(
    code: Callable[..., object],
    in_thread: Callable[[Callable[..., object]], Callable[..., Awaitable[object]]],
) -> Callable[..., Awaitable[object]]:
    """``code`` (a lookup, an ``on_failed``) as an async endpoint calls it: an ``async def`` as
    it is; a plain function through ``in_thread``, the framework's way to run sync code (Django's
    ``sync_to_async``, Starlette's thread pool), as it runs a sync view. On the event loop it would
    hold up every other request while it waits on a database, and Django's ORM refuses it there
    (``SynchronousOnlyOperation``: every callback a 500). What it returns is awaited if awaitable
    (an object whose ``__call__`` is async)."""
    if inspect.iscoroutinefunction(code):
        return code
    threaded = in_thread(code)

    async def call(*args: object) -> object:
        found = await threaded(*args)
        return await found if inspect.isawaitable(found) else found

    return call


def watched_lookup(lookup: Callable[[str], object]) -> Watched[str, object]:
    """The merchant's lookup, watched: an ``UnknownOrderError`` it raises is its way of saying
    "no such order", as returning ``None`` is (the 404, so the service stops calling); any other
    paysdk error it raises is its own exception."""
    return Watched(lookup, verdicts=(UnknownOrderError,))


def refusal_of(error: PaySDKError, scrub: Callable[[str], str]) -> Refusal | None:
    """The refusal to record for a callback refused (``error``) before fulfilment or by the
    ledger, or None; ``scrub`` (``scrub_of``) blots the secret key out of what the service sent,
    which the reason quotes.

    Only a payment the service confirmed is recorded: the callback is unauthenticated, and
    recording an unknown order or reference would let anyone fill the ledger. A payment of
    another reference than the one asked for (a confused proxy's, one echoing the key) is none:
    recorded, it would be a row under that reference, which no order asked about.
    """
    if isinstance(error, AmountOutOfRangeError):
        return Refusal(error.payment, "its amount is beyond what the ledger records")
    if isinstance(error, PaymentFailedError):
        return Refusal(error.payment, "the service reports the payment failed")
    if isinstance(error, PaymentMismatchError) and "reference" not in error.mismatches:
        differs = ", ".join(
            # in ASCII, so a look-alike currency ('\\u212aES', a Kelvin sign) never reads as
            # 'KES'; and cut, so even two fields of escapes stay a reason the ledger records
            f"{field} {quoted(actual, scrub, code=True)} instead of {quoted(expected, code=True)}"
            for field, (expected, actual) in error.mismatches.items()
        )
        return Refusal(error.payment, f"paid, but not for this order: {differs}")
    return None


def unrecorded_refusal(reference: str, error: PaySDKError) -> None:
    """Log a refusal the ledger could not record; the callback is answered as if it had been.
    The reference is quoted in ASCII, as the refusal's messages quote one: a reference may hold
    characters a log viewer draws as nothing (U+3164, a Hangul filler)."""
    fields = {**log_fields(error), "paysdk_reference": reference}
    log.error(
        "could not record the refusal of %s in the ledger: %s",
        quoted(reference, code=True),
        error,
        extra=fields,
    )


def _excerpt(body: bytes, scrub: Callable[[str], str]) -> str:
    """The body's first characters, the secret key blotted out first (so no cut leaves part of
    it), each unprintable one escaped; at most ``EXCERPT`` characters once escaped (an escape is
    up to ten), so the reason stays one the ledger records."""
    text = scrub(body.decode("utf-8", "replace")).strip()
    shown = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text[:EXCERPT])
    cut = len(text) > EXCERPT or len(shown) > EXCERPT
    return shown[:EXCERPT] + ("..." if cut else "") or "(empty body)"

"""The merchant's code a framework helper takes, free of I/O: a view (and its ``on_failed``)
refused when it is decorated if the helper could never call it right; and the lookup and the
view run watched, so that a paysdk error of their own stays theirs, and off the event loop
where the framework runs sync code in a thread."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import gc
import inspect
from collections.abc import Awaitable, Callable, Generator
from typing import Generic, TypeVar, cast

from .._core.expected import refuse_awaitable
from .._errors import ConfigurationError, PaySDKError, UnknownOrderError

__all__ = [
    "FLASK_ROUTING",
    "STARLETTE_ROUTING",
    "Watched",
    "check_sync_on_failed",
    "check_view",
    "off_the_loop",
    "sync_on_failed_answer",
    "takes_keywords_only",
    "watched_lookup",
]

R = TypeVar("R")
A = TypeVar("A")
V = TypeVar("V")


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

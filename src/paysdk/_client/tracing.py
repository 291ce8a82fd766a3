"""OpenTelemetry spans: one ``paysdk.<method>`` span a call (the ledger's ``fulfil_once`` too),
current while each request is sent, so HTTP instrumentation nests under it, holding the attempts,
the last answer's status and request id, each retry's reason and wait, and how the call ended.
paysdk imports no OpenTelemetry: it traces once the application has loaded
``opentelemetry.trace``, and costs one dictionary lookup a call until then."""

from __future__ import annotations

import contextlib
import functools
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from .._core.steps import Answer, Failure, Opened, Send
from .._errors.api import request_id_of
from .._version import __version__

if TYPE_CHECKING:
    from types import ModuleType

__all__ = ["UNTRACED", "CallSpan", "call_span"]

R = TypeVar("R")


def call_span(name: str, reference: str | None = None, *, lazy: bool = False) -> CallSpan:
    """The span ``paysdk.<name>`` of one call (of the payment ``reference``, if it has one);
    ``UNTRACED`` when nothing would record it, so callers need no check. ``lazy``: start it with
    the first request, not now (``iter_payments``, which may never be iterated)."""
    trace = sys.modules.get("opentelemetry.trace")
    if trace is None or not _loaded(trace):
        return UNTRACED
    span = CallSpan(trace, f"paysdk.{name}", reference)
    if not lazy:
        span.start()
        if not span.recording:
            return UNTRACED
    return span


def _loaded(trace: ModuleType) -> bool:
    """Whether ``opentelemetry.trace`` is loaded whole: another thread may be importing it
    (configuring the SDK), its module in ``sys.modules`` before the names paysdk calls are
    defined; a call made meanwhile is not traced rather than failing."""
    if getattr(getattr(trace, "__spec__", None), "_initializing", False):
        return False
    return all(hasattr(trace, name) for name in ("get_tracer", "use_span", "Status", "StatusCode"))


@functools.lru_cache(maxsize=4)
def _tracer(trace: ModuleType) -> Any:
    return trace.get_tracer("paysdk", __version__)


class CallSpan:
    """One call's span: started once, fed what each attempt brought, ended once. ``with span:``
    ends it as the block ends, with what the block raised; ``with span.if_raised():`` only if the
    block raises (the call goes on after it)."""

    __slots__ = ("_answer", "_last", "_name", "_reference", "_span", "_trace", "attempts")

    def __init__(self, trace: ModuleType, name: str, reference: str | None) -> None:
        self._trace = trace
        self._name = name
        self._reference = reference
        self._span: Any = None
        self._last = ""
        self._answer: tuple[int, str | None] | None = None
        self.attempts = 0

    @property
    def recording(self) -> bool:
        return self._span is not None and bool(self._span.is_recording())

    def start(self) -> None:
        if self._span is None:
            attributes = {} if self._reference is None else {"paysdk.reference": self._reference}
            self._span = _tracer(self._trace).start_span(self._name, attributes=attributes)

    def describe(self, reference: str) -> None:
        """Name the payment once it is known (a callback's, read from its request)."""
        self._reference = reference
        if self._span is not None:
            self._span.set_attribute("paysdk.reference", reference)

    def current(self) -> Any:
        """A context manager making this span current (started if it was not): spans made
        inside it, the HTTP instrumentations' or the application's own, are its children.
        What it raises is not recorded here (``use_span`` would add an ``exception`` event with
        the message and stack, and a status quoting it): a bug's or a hook's words may quote the
        key or a server's text; ``end`` says the error's type alone."""
        self.start()
        return self._trace.use_span(
            self._span, end_on_exit=False, record_exception=False, set_status_on_exception=False
        )

    def _sent(self, request: Send, result: object) -> None:
        if isinstance(result, Failure):
            self._last = result.kind
            return
        opened = result if isinstance(result, (Answer, Opened)) else getattr(result, "opened", None)
        if isinstance(opened, (Answer, Opened)):
            self._last = f"HTTP {opened.status_code}"
            # kept as a pair and set at the end: the id of an earlier answer must never be
            # shown beside the status of a later one that had none
            self._answer = (opened.status_code, request_id_of(opened.headers, request.scrub))

    def sending(self, send: Callable[[Send], R]) -> Callable[[Send], R]:
        """``send``, with this span current while it runs and what it brought recorded."""

        def traced(request: Send) -> R:
            self.attempts += 1  # counted as it starts: one cancelled under way was sent too
            with self.current():
                result = send(request)
            self._sent(request, result)
            return result

        return traced

    def async_sending(self, send: Callable[[Send], Awaitable[R]]) -> Callable[[Send], Awaitable[R]]:
        """The async twin of ``sending``."""

        async def traced(request: Send) -> R:
            self.attempts += 1  # counted as it starts: one cancelled under way was sent too
            with self.current():
                result = await send(request)
            self._sent(request, result)
            return result

        return traced

    def sleeping(self, sleep: Callable[[float], R]) -> Callable[[float], R]:
        """``sleep`` (sync or async), each wait recorded as a ``retry`` event first."""

        def traced(seconds: float) -> R:
            if self._span is not None:
                self._span.add_event(
                    "retry", {"paysdk.retry.reason": self._last, "paysdk.retry.wait_s": seconds}
                )
            return sleep(seconds)

        return traced

    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type: object, exc: BaseException | None, tb: object) -> None:
        self.end(exc)

    @contextlib.contextmanager
    def if_raised(self) -> Any:
        """End the span only if the block raises."""
        try:
            yield
        except BaseException as exc:
            self.end(exc)
            raise

    def add(self, name: str, value: str | bool | int) -> None:
        """An attribute the call learnt on its way (the fulfilment's outcome)."""
        if self._span is not None:
            self._span.set_attribute(name, value)

    def end(self, error: BaseException | None = None) -> None:
        """End the span: ``error`` is what the call raised (``GeneratorExit``: an iteration the
        caller stopped early, which is no error)."""
        span = self._span
        if span is None:
            return
        self._span = None
        if self._answer is not None:
            status_code, request_id = self._answer
            span.set_attribute("http.response.status_code", status_code)
            if request_id is not None:
                span.set_attribute("paysdk.request_id", request_id)
        span.set_attribute("paysdk.attempts", self.attempts)
        if isinstance(error, GeneratorExit):
            span.set_attribute("paysdk.stopped_early", True)
        elif error is not None:
            kind = type(error)  # as a caller names it: paysdk.NotFoundError, builtins.TypeError
            module = "paysdk" if kind.__module__.startswith("paysdk.") else kind.__module__
            span.set_attribute("error.type", f"{module}.{kind.__qualname__}")
            span.set_status(self._trace.Status(self._trace.StatusCode.ERROR, kind.__name__))
        span.end()


class Untraced(CallSpan):
    """The span of a call nothing records: never started, each method a no-op."""

    def __init__(self) -> None:
        self._span = None
        self.attempts = 0

    def start(self) -> None:
        return None

    def describe(self, reference: str) -> None:
        return None

    def current(self) -> Any:
        return contextlib.nullcontext()

    def sending(self, send: Callable[[Send], R]) -> Callable[[Send], R]:
        return send

    def async_sending(self, send: Callable[[Send], Awaitable[R]]) -> Callable[[Send], Awaitable[R]]:
        return send

    def sleeping(self, sleep: Callable[[float], R]) -> Callable[[float], R]:
        return sleep


UNTRACED = Untraced()
"""The one span that records nothing."""

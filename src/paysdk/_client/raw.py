"""``client.with_raw_response``: the same calls, answering with what came over the wire, for a
merchant who needs the service's own ``status`` and ``message``, a header (a request id) or the
time taken. ``raw.parse()`` gives the model, validated exactly as the plain call would."""

from __future__ import annotations

import copy
import datetime as dt
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

from typing_extensions import Self, Unpack

from .. import _core
from .._core.steps import Answer
from .._errors.api import json_or_none, request_id_of, scrubbed_json
from .._lazy import publish
from .._models.verified import VerifiedPayment
from .options import CallOptions
from .unpicklable import Unpicklable

T = TypeVar("T")

if TYPE_CHECKING:
    from .._core.config import Config
    from .._core.plans import Plan
    from .._models.listed import ListedPayment

    Options = Callable[[CallOptions], Config]
    """The client's ``_options``: its config with per-call options applied (refused once closed)."""
    Run = Callable[[Plan[Answer]], T]
    AsyncRun = Callable[[Plan[Answer]], Awaitable[T]]

__all__ = ["AsyncRawClient", "RawClient", "RawResponse"]


class RawResponse(Unpicklable, Generic[T]):
    """A successful answer as received; ``parse()`` gives the model, or raises as the call would.

    Attributes:
        status_code: the HTTP status.
        headers: the response headers (a case-insensitive mapping).
        content: the body's bytes, decoded from any gzip or deflate.
        elapsed: how long the attempt took, from sending to the whole body.
    """

    def __init__(
        self, answer: Answer, parse: Callable[[Answer], T], scrub: Callable[[str], str]
    ) -> None:
        """Made by the ``with_raw_response`` calls, not by your code.

        Args:
            answer: the answer as the transport received it.
            parse: turns the answer into the call's model (or raises as the call would).
            scrub: blots the secret key out of text the service echoed.
        """
        self.status_code: int = answer.status_code
        self.headers: Mapping[str, str] = answer.headers
        self.content: bytes = answer.content
        self.elapsed: dt.timedelta = dt.timedelta(seconds=answer.elapsed)
        self.request_id: str | None = request_id_of(answer.headers, scrub)
        """The answer's ``X-Request-Id`` (or ``Request-Id``), if the service sent one."""
        self._answer = answer
        self._parse = parse
        self._scrub = scrub

    @property
    def _envelope(self) -> dict[str, Any]:
        body = scrubbed_json(json_or_none(self.content), self._scrub)  # as on exceptions
        return cast("dict[str, Any]", body) if isinstance(body, dict) else {}

    @property
    def status(self) -> object:
        """The envelope's ``status`` (verify sends ``true``); ``None`` if absent."""
        return self._envelope.get("status")

    @property
    def message(self) -> object:
        """The envelope's ``message`` (verify sends "Verification successful")."""
        return self._envelope.get("message")

    def parse(self) -> T:
        """The model the plain call returns, parsed from this answer.

        Raises:
            ResponseValidationError: the body is not the documented shape.
            PaymentNotFoundError: a verify answer saying the reference is unknown.
        """
        return self._parse(self._answer)

    def __repr__(self) -> str:
        return f"<RawResponse [{self.status_code}] {len(self.content)} bytes>"

    def _refusal(self) -> str:
        # parse() needs the request, the key in its headers: a pickler that takes closures
        # (cloudpickle, dill: joblib's, Dask's and Ray's workers) carried it
        return (
            "a paysdk.RawResponse cannot be pickled: parse() needs the request, which holds "
            "the secret key. Pickle what it holds (status_code, headers, content) or parse()'s "
            "model"
        )

    def __deepcopy__(self, memo: dict[int, Any]) -> Self:
        """A copy with headers of its own; the answer and the request ``parse()`` reads stay
        shared (nothing changes them)."""
        twin = self.__copy__()
        twin.headers = copy.deepcopy(self.headers, memo)
        return twin


def _verify_plan(
    config: Config, reference: str
) -> tuple[Plan[Answer], Callable[[Answer], VerifiedPayment], Callable[[str], str]]:
    request = _core.verify_request(config, reference)

    def parse(answer: Answer) -> VerifiedPayment:
        return _core.map_response(request, answer, _core.verified(reference, config), reference)

    return _core.call_raw(config, request, reference=reference), parse, request.scrub


def _list_plan(
    config: Config,
) -> tuple[Plan[Answer], Callable[[Answer], list[ListedPayment]], Callable[[str], str]]:
    request = _core.list_request(config)

    def parse(answer: Answer) -> list[ListedPayment]:
        parse_body = _core.listed(config)
        return _core.map_response(request, answer, lambda a: parse_body(a.content), None)

    return _core.call_raw(config, request), parse, request.scrub


class RawClient:
    """``Client.with_raw_response``."""

    def __init__(self, options: Options, run: Run[Answer]) -> None:
        self._options = options
        self._run = run

    def verify(
        self, reference: str, **options: Unpack[CallOptions]
    ) -> RawResponse[VerifiedPayment]:
        plan, parse, scrub = _verify_plan(self._options(options), reference)
        return RawResponse(self._run(plan), parse, scrub)

    def list_payments(self, **options: Unpack[CallOptions]) -> RawResponse[list[ListedPayment]]:
        plan, parse, scrub = _list_plan(self._options(options))
        return RawResponse(self._run(plan), parse, scrub)


class AsyncRawClient:
    """``AsyncClient.with_raw_response``."""

    def __init__(self, options: Options, run: AsyncRun[Answer]) -> None:
        self._options = options
        self._run = run

    async def verify(
        self, reference: str, **options: Unpack[CallOptions]
    ) -> RawResponse[VerifiedPayment]:
        plan, parse, scrub = _verify_plan(self._options(options), reference)
        return RawResponse(await self._run(plan), parse, scrub)

    async def list_payments(
        self, **options: Unpack[CallOptions]
    ) -> RawResponse[list[ListedPayment]]:
        plan, parse, scrub = _list_plan(self._options(options))
        return RawResponse(await self._run(plan), parse, scrub)


publish("paysdk", RawResponse)

"""How a successful body becomes its model, I/O-free like the rest of the core: verify's payment
and list's payments (past 1 MiB, in batches with the cyclic GC paused), read from the bytes by
pydantic's core validators; only once that strict parse fails, read again past a byte order mark,
repaired, or without the optional fields it could not read."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Final, Literal, Protocol, TypeVar, cast

from pydantic import ValidationError
from pydantic_core import PydanticCustomError
from typing_extensions import NotRequired, TypedDict

from .._models.verified import VerifiedPayment, VerifyEnvelope
from .._parsing.gcpause import gc_paused

if TYPE_CHECKING:
    from .._models.listed import ListedPayment, ListEnvelope

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)
Body = Literal["verify", "list", "batch"]
"""What a body is: verify's, list's, or a batch cut from list's (``_parsing/batches.py``)."""

_PAUSE_GC_ABOVE: Final = 1024 * 1024
"""Bodies past this size are parsed with the cyclic GC paused: it only slows building a list."""

ENVELOPE_FAILED: Final = PydanticCustomError(
    "envelope_failed",
    "the service reports that the request failed; its data is then no payment outcome to act on",
)
"""What a verify 200 whose envelope says ``"status": false`` is: a ``ResponseValidationError``
with this error at ``("status",)``, whatever ``data`` says."""


def parse_verify(content: bytes) -> VerifiedPayment:
    """The payment of a verify body; a ``ValidationError`` (``ENVELOPE_FAILED``) if its envelope
    reports failure."""
    try:
        envelope = _validated(content, _verify_envelope(), "verify")
    except ValidationError:
        if _reports_failure(content):
            raise _envelope_failed() from None
        raise
    if envelope.get("status") is False:
        raise _envelope_failed()
    return envelope["data"]


def _envelope_failed() -> ValidationError:
    return ValidationError.from_exception_data(
        "VerifyEnvelope", [{"type": ENVELOPE_FAILED, "loc": ("status",), "input": False}]
    )


class _EnvelopeStatus(TypedDict):
    """A verify body's ``status`` alone, read where its ``data`` is not a payment."""

    status: NotRequired[bool | None]


def _reports_failure(content: bytes) -> bool:
    """Whether a verify body that is not the documented shape says ``"status": false``: a
    service reporting a failed request seldom sends a whole payment beside it (``"data":
    null``), and its own report says more than the shape's errors."""
    try:
        return _envelope_status().validate_json(content).get("status") is False
    except ValidationError:
        return False


@functools.cache
def _envelope_status() -> Validator[_EnvelopeStatus]:
    return _validator(_EnvelopeStatus)


def parse_list(content: bytes, *, pause_gc: bool = True) -> list[ListedPayment]:
    """The payments of a list body; past 1 MiB, with the cyclic GC paused unless ``pause_gc``
    is false (the client's ``pause_gc=False``: the pause is process-wide)."""
    if len(content) < _PAUSE_GC_ABOVE:
        return _validated_list(content)
    if not pause_gc:
        return _parse_large_list(content)
    with gc_paused():  # building 10**5 objects that hold no cycles: collections only slow it
        return _parse_large_list(content)


def _parse_large_list(content: bytes) -> list[ListedPayment]:
    """Batch by batch where the body allows it (see ``_parsing/batches.py``), else whole."""
    from .._parsing.batches import validate_in_batches  # a verify-only process never cuts a list

    payments = validate_in_batches(content, _validated_batch)
    return _validated_list(content) if payments is None else payments


def _validated_list(content: bytes) -> list[ListedPayment]:
    """The payments of a whole ``{"data": [...]}`` body."""
    return _validated(content, _list_envelope(), "list")["data"]


def _validated_batch(content: bytes) -> list[ListedPayment]:
    """The payments of a batch cut from a list body, wrapped as ``[[...]]``."""
    return _validated(content, _batch_shape(), "batch")[0]


def _validated(content: bytes, validator: Validator[T], body: Body) -> T:
    """``content`` validated from its bytes. Only if that fails: validated again without a
    leading byte order mark, or once repaired where it is not JSON (``_parsing/repair.py``: a
    lone surrogate escape or a byte that is not UTF-8 then reads as U+FFFD), then without the
    optional fields it could not read (``_parsing/lenient.py``; ``body`` says where its
    payments sit)."""
    try:
        return validator.validate_json(content)
    except ValidationError as exc:
        error = exc
    from .._parsing.repair import BOM, not_json, repaired_json  # a well-formed body never needs it

    if content.startswith(BOM):  # JSON's RFC lets a reader ignore it, as ``json.loads`` does
        return _validated(content[len(BOM) :], validator, body)

    if not_json(error):
        repaired = repaired_json(content)
        if repaired is None:  # not JSON even so: the strict parse's error stands
            raise error
        content = repaired
        try:
            return validator.validate_json(content)
        except ValidationError as exc:
            error = exc
    from .._parsing.lenient import Shape, readable  # a well-formed body never needs it

    if body == "verify":
        shape = Shape(VerifiedPayment, "verify")
    else:
        from .._models.listed import ListedPayment

        shape = Shape(ListedPayment, body)
    return readable(validator.validate_python, content, error, shape)


@functools.cache
def _verify_envelope() -> Validator[VerifyEnvelope]:
    """Built on first use: a schema costs milliseconds, and not every program verifies."""
    return _validator(VerifyEnvelope)


@functools.cache
def _list_envelope() -> Validator[ListEnvelope]:
    from .._models.listed import ListEnvelope  # a verify-only process never builds the list shape

    return _validator(ListEnvelope)


@functools.cache
def _batch_shape() -> Validator[list[list[ListedPayment]]]:
    from .._models.listed import ListedPayment

    return _validator(list[list[ListedPayment]])


class Validator(Protocol[T_co]):
    def validate_json(self, data: bytes, /) -> T_co: ...
    def validate_python(self, data: object, /) -> T_co: ...


def _validator(shape: type[T]) -> Validator[T]:
    """The core validator of ``shape``, called directly to skip a Python layer per parse. It
    interns no string (pydantic's default interns every short one): a list's values rarely repeat,
    and interning them cost about 8% of a 100,000-payment parse; field names, from the schema, are
    shared anyway."""
    from pydantic import TypeAdapter
    from pydantic_core import CoreConfig, SchemaValidator

    schema = TypeAdapter(shape).core_schema  # a typed dict's adapter takes no config itself
    return cast("Validator[T]", SchemaValidator(schema, CoreConfig(cache_strings="none")))

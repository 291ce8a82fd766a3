"""Reading a payment whose optional field holds a value of another type.

One ``"fee": "n/a"``, ``"customer": "guest"`` or customer name sent as a number would fail a
whole verify or list. Each such value is taken out and the body validated again: the field
reads as unset (``None``, or empty products or metadata) and the value sent is kept in the
model's ``unparsed``, as unknown fields are kept in ``model_extra``. A field is taken out at
the deepest optional field holding the error: a customer's unreadable name leaves the rest of
the customer. The fields fulfilment is decided on are required, never taken out: their errors
stand. This runs only after the strict parse failed: a well-formed body costs nothing more.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import types
from collections.abc import Callable
from typing import (
    Annotated,
    Any,
    Literal,
    TypeAlias,
    TypeVar,
    Union,
    cast,
    get_args,
    get_origin,
)

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from .._models.wire import WireModel, keep_unparsed

T = TypeVar("T")

Loc: TypeAlias = tuple[str | int, ...]


@dataclasses.dataclass(frozen=True)
class Shape:
    """Where the payments sit in a body: in ``data`` of verify's ``{status, message, data}``
    (``"verify"``), as each element of list's ``{data: [...]}`` (``"list"``) or of a batch of
    it wrapped as ``[[...]]`` (``"batch"``, ``_parsing/batches.py``), or as the body itself
    (``"payment"``, a streamed element)."""

    payment: type[WireModel]
    body: Literal["verify", "list", "batch", "payment"]

    def may_hold(self, loc: Loc) -> bool:
        """Whether an optional field may hold the error at ``loc``: a look at the names
        alone, before the body is decoded to see."""
        if self.body == "payment":
            return _through_optional(self.payment, loc)
        if self.body == "verify":
            return loc == ("message",) or (
                loc[:1] == ("data",) and _through_optional(self.payment, loc[1:])
            )
        return (
            len(loc) > 1
            and loc[0] == self._items
            and isinstance(loc[1], int)
            and _through_optional(self.payment, loc[2:])
        )

    def where(self, loc: Loc, body: object) -> Loc | None:
        """Where, in the decoded ``body``, the optional field holding the error at ``loc`` is;
        ``None`` when the error is not in an optional field. A verify envelope's ``message``
        is only words: it may be left out."""
        if self.body == "payment":
            return unreadable(self.payment, body, loc)
        if self.body == "verify":
            if loc == ("message",):
                return loc
            if loc[:1] != ("data",) or not isinstance(body, dict):
                return None
            found = unreadable(self.payment, cast("dict[str, object]", body).get("data"), loc[1:])
            return None if found is None else ("data", *found)
        if len(loc) < 2 or loc[0] != self._items or not isinstance(loc[1], int):
            return None
        if isinstance(body, dict):
            items = cast("dict[str, object]", body).get("data")
        else:
            items = cast("list[object]", body)[0] if isinstance(body, list) and body else None
        if not isinstance(items, list):
            return None
        payments, index = cast("list[object]", items), loc[1]
        if not 0 <= index < len(payments):
            return None
        found = unreadable(self.payment, payments[index], loc[2:])
        return None if found is None else (self._items, index, *found)

    @property
    def _items(self) -> str | int:
        """Where a list body holds its payments: ``data``, or a batch's first element."""
        return "data" if self.body == "list" else 0


def readable(
    validate: Callable[[object], T], content: bytes, error: ValidationError, shape: Shape
) -> T:
    """``content`` (a JSON body the strict parse refused with ``error``) validated by
    ``validate`` without the values of optional fields it could not read, each kept in its
    model's ``unparsed``; ``shape`` says where the payments sit. Raises ``error`` when no
    optional field holds any of its errors, else the errors left (the required fields')."""
    if not any(shape.may_hold(tuple(detail["loc"])) for detail in _details(error)):
        raise error  # a large body is not decoded again only to say so
    try:
        body = json.loads(content)  # the strict parse read it as JSON: so does ``json``
    except (ValueError, RecursionError):  # fewer digits allowed, or a deeper stack needed
        raise error from None
    return readable_value(validate, body, error, shape)


def readable_value(
    validate: Callable[[object], T], body: object, error: ValidationError, shape: Shape
) -> T:
    """``readable`` of a body already decoded (``body`` loses the values taken out)."""
    found: dict[Loc, None] = {}  # in the order of the errors: the order of the fields
    for detail in _details(error):
        path = shape.where(tuple(detail["loc"]), body)
        if path is not None:
            found[path] = None
    if not found:
        raise error
    outermost = [path for path in found if not any(path[:n] in found for n in range(len(path)))]
    taken = [(path, _take(body, path)) for path in outermost]
    result = validate(body)
    for path, value in taken:
        owner = _at(result, path[:-1])
        if isinstance(owner, WireModel):  # a field of the envelope is only left out
            keep_unparsed(owner, str(path[-1]), value)
    return result


def _details(error: ValidationError) -> list[ErrorDetails]:
    return error.errors(include_url=False, include_input=False, include_context=False)


def unreadable(model: type[WireModel], value: object, loc: Loc) -> Loc | None:
    """The path in ``value`` (a ``model`` as decoded JSON) of the deepest optional field holding
    the error at ``loc``; ``None`` if none does (a required field's error, or the model's)."""
    current: type[WireModel] | None = model
    items: type[WireModel] | None = None  # ``node`` is a list of these models
    node: object = value
    path: Loc = ()
    found: Loc | None = None
    for at, part in enumerate(loc):
        if current is not None:
            if not isinstance(part, str) or not isinstance(node, dict):
                break
            field = current.model_fields.get(part)
            if field is None:
                break
            path = (*path, part)
            if not field.is_required():
                found = path
            current, items = _parts(current).get(part, (None, None))
            node = cast("dict[str, object]", node).get(part)
        elif items is not None:
            if isinstance(part, str):  # the tag of a union's member, such as ``list[Product]``
                if isinstance(node, list) and at == len(loc) - 1:
                    return None  # the list is a list: the other member's error (``null``)
                continue
            if not isinstance(node, list):
                break
            elements = cast("list[object]", node)
            if not 0 <= part < len(elements):
                break
            node, current, items = elements[part], items, None
            path = (*path, part)
        else:
            break
    return found


@functools.cache
def _parts(
    model: type[WireModel],
) -> dict[str, tuple[type[WireModel] | None, type[WireModel] | None]]:
    """For each field of ``model`` holding a model: that model, or the model of its list's items."""
    parts: dict[str, tuple[type[WireModel] | None, type[WireModel] | None]] = {}
    for name, field in model.model_fields.items():
        single, listed = _models_in(field.annotation, in_list=False)
        if single is not None or listed is not None:
            parts[name] = (single, listed)
    return parts


def _through_optional(model: type[WireModel], loc: Loc) -> bool:
    """Whether ``loc`` passes through an optional field of ``model`` or a model it holds."""
    current: type[WireModel] | None = model
    items: type[WireModel] | None = None
    for part in loc:
        if current is not None:
            if not isinstance(part, str):
                return False
            field = current.model_fields.get(part)
            if field is None:
                return False
            if not field.is_required():
                return True
            current, items = _parts(current).get(part, (None, None))
        elif items is not None:
            if isinstance(part, int):
                current, items = items, None
        else:
            return False
    return False


def _models_in(
    annotation: object, *, in_list: bool
) -> tuple[type[WireModel] | None, type[WireModel] | None]:
    origin = get_origin(annotation)
    args = get_args(annotation)
    if origin is None and isinstance(annotation, type) and issubclass(annotation, WireModel):
        # (before 3.11, ``list[Product]`` is an instance of ``type`` too: its origin tells)
        return (None, annotation) if in_list else (annotation, None)
    if origin is Annotated:
        return _models_in(args[0], in_list=in_list)
    if origin is list:
        return _models_in(args[0], in_list=True) if args else (None, None)
    if origin is Union or origin is types.UnionType:
        for arg in args:
            found = _models_in(arg, in_list=in_list)
            if found != (None, None):
                return found
    return None, None


def _take(body: object, path: Loc) -> object:
    """Take the value at ``path`` (a field's: its last part is a name) out of ``body``."""
    container: Any = body
    for part in path[:-1]:
        container = container[part]
    return cast("dict[str, object]", container).pop(str(path[-1]))


def _at(result: object, path: Loc) -> object:
    """What is at ``path`` in ``result``: an envelope (a dict), lists and models."""
    node: object = result
    for part in path:
        if isinstance(part, int):
            node = cast("list[object]", node)[part]
        elif isinstance(node, dict):
            node = cast("dict[str, object]", node)[part]
        else:
            node = getattr(node, part)
    return node

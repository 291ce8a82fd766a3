"""What both payment shapes are built from: the liberal base model, customer and product.

Field names are the wire names. Fields the spec leaves unclear are optional, unknown fields are
kept (``model_extra``), an unknown ``status`` stays a plain string, and an optional field sent in
a type it cannot be read as reads as unset, what was sent kept in ``unparsed``
(``_parsing/lenient.py``). What fulfilment is decided on (reference, amount, currency, outcome)
is required: a body without it is an error, not a payment that silently looks unpaid."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Final, Union, cast

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from .blotting import blot_repr

__all__ = [
    "Customer",
    "Exact",
    "Metadata",
    "Product",
    "Products",
    "WireModel",
    "blotted",
    "hidden_key",
    "hide_key",
    "keep_unparsed",
]

_UNPARSED: Final = "_unparsed"
"""The key of ``unparsed`` in the private dict: declared as a private attribute, it would cost
every model a Python call to build, and only a model read after a failed parse holds one."""
_NOTHING: Final[Mapping[str, Any]] = MappingProxyType({})
_HIDDEN: Final = "_hidden"
"""The key of the secret key ``repr`` blots out, in the private dict of a model read from a
body that held it; no other model holds one."""


class WireModel(BaseModel):
    """Keeps every field the server sent, including ones this version does not know."""

    model_config: ClassVar[ConfigDict] = ConfigDict(
        extra="allow",
        frozen=True,
        populate_by_name=True,
        defer_build=True,
        cache_strings="none",
    )

    @classmethod
    def model_rebuild(
        cls,
        *,
        force: bool = False,
        raise_errors: bool = True,
        _parent_namespace_depth: int = 2,
        _types_namespace: Any = None,
    ) -> bool | None:
        """Pydantic's, except that paysdk's own models resolve their annotations from their
        modules alone, never from the caller's frame: each builds on first use
        (``defer_build``), and before pydantic 2.10 that build kept the locals of the frame
        that set it off (the first ``model_validate`` or ``model_dump`` of a payment, wherever
        it ran: the stream parser's batch of payments and body text, an application's view
        and its secret key) on the class for the life of the process. A model subclassed
        outside paysdk keeps pydantic's rule, one frame up.

        Args:
            force: rebuild even if the schema is already built.
            raise_errors: raise when an annotation cannot be resolved, rather than return
                ``False``.
            _parent_namespace_depth: pydantic's: which caller's frame names annotations (for a
                model subclassed outside paysdk; paysdk's own use none).
            _types_namespace: pydantic's: names to resolve annotations with.

        Returns:
            ``None`` if the schema was already built and ``force`` was not given, else whether
            the rebuild succeeded.
        """
        depth = _parent_namespace_depth
        if cls.__module__.startswith(f"{__name__.partition('.')[0]}."):
            depth = 0
        elif depth > 0:
            depth += 1  # this method's frame, between the caller and pydantic's
        return super().model_rebuild(
            force=force,
            raise_errors=raise_errors,
            _parent_namespace_depth=depth,
            _types_namespace=_types_namespace,
        )

    @property
    def unparsed(self) -> Mapping[str, Any]:
        """The values of optional fields sent in a type they cannot be read as, by field name
        (``{"fee": "n/a"}``): each such field reads as unset (``None``, or empty products or
        metadata), and what the server sent is kept here, as unknown fields are in
        ``model_extra``. Not part of ``model_dump``."""
        private = self.__pydantic_private__
        if not private or _UNPARSED not in private:
            return _NOTHING
        return MappingProxyType(private[_UNPARSED])

    def __repr_args__(self) -> Iterator[tuple[str | None, Any]]:
        """The fields ``repr`` and ``str`` show, then ``unparsed``; the name of a field the
        server added is quoted as Python quotes a string unless it is a plain ASCII name, so
        escape sequences or bidi controls in it are shown as escapes, as they are in a value."""
        for name, value in super().__repr_args__():
            plain = name is None or (name.isascii() and name.isidentifier())
            yield (name if plain else repr(name)), _writable(value)
        if self.unparsed:
            yield "unparsed", _writable(dict(self.unparsed))

    def __eq__(self, other: object) -> bool:
        """Pydantic's equality, blind to the key ``repr`` blots out (``hide_key``): a payment
        read from a body that echoed the key equals the same payment read from another."""
        if not isinstance(other, WireModel) or hidden_key(self) is hidden_key(other) is None:
            return super().__eq__(other)
        return _unmarked(self) == _unmarked(other)

    def __repr__(self) -> str:
        return blot_repr(super().__repr__(), hidden_key(self))

    def __getstate__(self) -> dict[Any, Any]:
        """Pydantic's state, but of a model whose body held the secret key (``hide_key``) with
        the key blotted out of its values: a pickle (a task queue's message or result store, a
        cache) never holds it. The models in it blot their own."""
        state = super().__getstate__()
        key = hidden_key(self)
        if key is None:
            return state
        private: dict[str, Any] = dict(state.get("__pydantic_private__") or {})
        del private[_HIDDEN]
        if _UNPARSED in private:
            private[_UNPARSED] = blotted(private[_UNPARSED], key)
        return {
            **state,
            "__dict__": blotted(state["__dict__"], key),
            "__pydantic_extra__": blotted(state.get("__pydantic_extra__"), key),
            "__pydantic_private__": private or None,
        }

    def __str__(self) -> str:
        return blot_repr(super().__str__(), hidden_key(self))


_SHORT_INT_BITS: Final = 2048
"""An int of at most this many bits (617 digits) is within what Python writes as text however an
application sets ``sys.get_int_max_str_digits()`` (never below 640): shown as it is."""


class _LongInt:
    """How ``repr`` shows an int too long for Python to write as text, which a model built in
    code may hold (one read from an answer never does): its size, not a ``ValueError``."""

    def __init__(self, text: str) -> None:
        self._text = text

    @classmethod
    def of(cls, value: int) -> object:
        """``value`` itself if Python writes it as text, else a stand-in saying its size."""
        try:
            repr(value)
        except ValueError:
            return cls(f"<an integer of {value.bit_length():,} bits>")
        return value

    def __repr__(self) -> str:
        return self._text


def _writable(value: Any) -> Any:
    """``value`` as ``repr`` may write it: an int too long for Python to write as text, alone or
    in a dict, list or tuple (metadata, an extra field), stands in by its size; ``value`` itself
    when it holds none."""
    if type(value) is int:
        return _LongInt.of(value) if value.bit_length() > _SHORT_INT_BITS else value
    original: Any = value  # unnarrowed, for the type checkers: what is kept if nothing stands in
    if type(value) is dict:
        items = cast("dict[Any, Any]", original)
        shown: Any = {key: _writable(item) for key, item in items.items()}
        same = all(shown[key] is item for key, item in items.items())
    elif type(value) in (list, tuple):
        sequence = cast("list[Any] | tuple[Any, ...]", original)
        shown = type(sequence)(_writable(item) for item in sequence)
        same = all(new is old for new, old in zip(shown, sequence, strict=True))
    else:
        return original
    return original if same else shown


def blotted(value: Any, key: str) -> Any:
    """``value`` (a field's, an extra field's or an unparsed one's) with ``key`` blotted out of
    each string in it, dict keys included; a model is left to its own ``__getstate__``.

    Args:
        value: what to blot the key out of: a string, or a dict, list or tuple holding some.
        key: the secret key (``hidden_key``).

    Returns:
        ``value`` itself if it held no string, else a copy with ``<secret key>`` for ``key``.
    """
    if isinstance(value, str):  # a status (a str enum) without the key stays one
        return value.replace(key, "<secret key>") if key in value else value
    original: Any = value  # unnarrowed, for the type checkers (as in ``_writable``)
    if type(value) is dict:  # parsed JSON: plain dicts and lists
        items = cast("dict[Any, Any]", original)
        return {blotted(k, key): blotted(v, key) for k, v in items.items()}
    if type(value) in (list, tuple):
        sequence = cast("list[Any] | tuple[Any, ...]", original)
        return type(sequence)(blotted(item, key) for item in sequence)
    return value


def _unmarked(model: WireModel) -> WireModel:
    """A copy of ``model`` that hides no key (its other private values kept)."""
    copy = model.model_copy()
    private = {k: v for k, v in (copy.__pydantic_private__ or {}).items() if k != _HIDDEN}
    object.__setattr__(copy, "__pydantic_private__", private or None)
    return copy


def hide_key(model: WireModel, key: str) -> None:
    """Have ``repr`` and ``str`` of ``model``, and of the models in it, blot out ``key``: the
    secret key the body ``model`` was read from held (a server or proxy echoing it).

    Args:
        model: the model read from the body.
        key: the secret key.
    """
    _private(model)[_HIDDEN] = key
    for value in model.__dict__.values():
        parts = cast("list[object]", value) if isinstance(value, list) else [value]
        for part in parts:
            if isinstance(part, WireModel):
                hide_key(part, key)


def hidden_key(model: WireModel) -> str | None:
    """The secret key ``model``'s body held (``hide_key``), for a record made from its fields to
    blot out of its own ``repr``; ``None`` for a body that held none.

    Args:
        model: a model read from a body.

    Returns:
        The key, or ``None``.
    """
    private = model.__pydantic_private__
    return private.get(_HIDDEN) if private else None


def keep_unparsed(model: WireModel, field: str, value: object) -> None:
    """Keep ``value``, sent for ``model``'s optional ``field`` in a type it cannot be read as,
    in ``model.unparsed``.

    Args:
        model: the model read without the value (the field unset).
        field: the field's name.
        value: what the server sent for it.
    """
    _private(model).setdefault(_UNPARSED, {})[field] = value


def _private(model: WireModel) -> dict[str, Any]:
    """``model``'s private dict, made if it has none: a model without private attributes has no
    dict until it needs one."""
    private = model.__pydantic_private__
    if private is None:
        private = {}
        object.__setattr__(model, "__pydantic_private__", private)
    return private


Exact = Field(strict=True)
"""For the fields fulfilment is decided on, and the amounts: ``"100"``, ``100.0`` and ``true``
are no amount (an amount is an int as the service sent it, never converted)."""


class Customer(WireModel):
    name: str | None = None
    email: str | None = None
    phone: str | None = None


class Product(WireModel):
    name: str | None = None
    amount: Annotated[int, Exact] | None = None
    description: str | None = None


# ``null`` from the server means "nothing here", not a broken payment: it becomes empty. A union
# tried left to right keeps the common case (a list, an object) in pydantic's core: only a
# ``null`` costs a Python call.
if TYPE_CHECKING:  # what the fields hold, whatever came over the wire
    Products = list[Product]
    Metadata = dict[str, Any]
else:
    Products = Annotated[
        Union[list[Product], Annotated[None, AfterValidator(lambda _: [])]],  # noqa: UP007
        Field(union_mode="left_to_right"),
    ]
    Metadata = Annotated[
        Union[dict[str, Any], Annotated[None, AfterValidator(lambda _: {})]],  # noqa: UP007
        Field(union_mode="left_to_right"),
    ]

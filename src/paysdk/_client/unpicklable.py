"""``Unpicklable``: an object holding the secret key refuses pickling before a byte is written."""

from __future__ import annotations

from typing import NoReturn, SupportsIndex

from typing_extensions import Self

__all__ = ["Unpicklable"]


class Unpicklable:
    """Refuses ``pickle`` and ``copy.deepcopy`` (which asks the same method) with a ``TypeError``
    saying why and what to hand over instead (``_refusal``), before a pickler that streams to
    its file as it goes (dill, Python's own pure-Python one) has written the secret key;
    ``copy.copy`` still makes a shallow copy."""

    __slots__ = ()

    def _refusal(self) -> str:
        """Why this object cannot be pickled, and what to pickle instead."""
        raise NotImplementedError

    def __reduce_ex__(self, protocol: SupportsIndex) -> NoReturn:
        raise TypeError(self._refusal())

    def __copy__(self) -> Self:
        """A shallow copy, as ``copy.copy`` made before ``__reduce_ex__`` refused pickling."""
        twin = object.__new__(type(self))
        twin.__dict__.update(self.__dict__)
        return twin

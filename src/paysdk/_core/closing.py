"""``with`` and ``async with`` for what has a ``close``: entering gives the object itself, leaving
closes it, however the block ended. ``AsyncCloses`` is the async twin (``scripts/unasync.py``
maps one name to the other), with ``aclose`` as well, the name ``contextlib.aclosing`` calls."""

from __future__ import annotations

from typing_extensions import Self

__all__ = ["AsyncCloses", "Closes"]


class Closes:
    """A context manager over the subclass's ``close``."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class AsyncCloses:
    """An async context manager over the subclass's ``close``, which it also names ``aclose``."""

    async def close(self) -> None:
        raise NotImplementedError

    async def aclose(self) -> None:
        """Close it: the same as ``close``."""
        await self.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

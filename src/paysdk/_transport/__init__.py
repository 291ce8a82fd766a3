"""The shells that carry plans out: the loops, the senders, and the httpx transport over
paysdk's own connection pools. What the products may use is named here, loaded on first use (an
import contract in ``pyproject.toml`` keeps them out of the modules below)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_names

if TYPE_CHECKING:
    from .drivers import async_drive, drive
    from .fetching import Fetched, fetch
    from .httpx_common import check_host, httpx_timeout

__all__ = ["Fetched", "async_drive", "check_host", "drive", "fetch", "httpx_timeout"]

__getattr__, __dir__ = lazy_names(
    __name__,
    {
        "Fetched": ".fetching",
        "async_drive": ".drivers",
        "check_host": ".httpx_common",
        "drive": ".drivers",
        "fetch": ".fetching",
        "httpx_timeout": ".httpx_common",
    },
)

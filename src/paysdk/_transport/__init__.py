"""The shells that carry plans out: the loops (``_async/`` their source, ``_sync/`` generated
from it), the senders, and the httpx transport over paysdk's own connection pools.

What a product may use of them is named here, and loaded on first use: ``drive`` and
``async_drive``, the loops the ledger runs its plans with; ``fetch``, one GET on the clients'
own transport (the sandbox's callback); ``httpx_timeout``, paysdk's ``Timeout`` as httpx's;
``check_host``, the host check every URL paysdk sends to passes (the callback URLs too). The
modules under this package are the transport's own: an import contract in ``pyproject.toml``
keeps the products out of them.
"""

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

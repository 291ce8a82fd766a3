"""The loops the products carry their plans out with (the ledger's): ``drive`` and its async
twin ``async_drive``, named as ``scripts/unasync.py``'s rules turn one into the other."""

from __future__ import annotations

from ._async.drive import drive as async_drive
from ._sync.drive import drive

__all__ = ["async_drive", "drive"]

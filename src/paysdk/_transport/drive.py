"""Carrying plans out, sync and async: the loops that run a plan's steps with a sender.

Written once, async, in ``_async/drive.py``; ``scripts/unasync.py`` generates the sync loops in
``_sync/drive.py``. The client imports both from here: ``run``, ``arun`` and the item iterators.
"""

from __future__ import annotations

from ._async.drive import AsyncItemIterator
from ._async.drive import run as arun
from ._sync.drive import ItemIterator, run

__all__ = ["AsyncItemIterator", "ItemIterator", "arun", "run"]

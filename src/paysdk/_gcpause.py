"""Pausing the cyclic garbage collector while a large body becomes models.

Building 10**5 small objects that hold no cycles triggers dozens of collections that find
nothing; pausing them makes a large parse about as fast as ``json.loads``. ``gc.disable()`` is
process-wide, so pauses are counted: the collector comes back when the last one ends (even if
its parse raised), and only if it was on when the first began.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Generator
from contextlib import contextmanager

_lock = threading.Lock()
_pauses = 0
_was_enabled = False


@contextmanager
def gc_paused() -> Generator[None, None, None]:
    global _pauses, _was_enabled
    with _lock:
        if _pauses == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _pauses += 1
    try:
        yield
    finally:
        with _lock:
            _pauses -= 1
            if _pauses == 0 and _was_enabled:
                gc.enable()

"""Pausing the cyclic garbage collector while a large body becomes models.

Building 10**5 small objects that hold no cycles triggers dozens of collections that find
nothing; paused, a large parse is about as fast as ``json.loads``. ``gc.disable()`` is
process-wide, so pauses are counted: the collector comes back when the last one ends (even if
its parse raised), if it was on when the first began. The last pause also moves the objects
made meanwhile to the oldest generation (``gc.freeze()``, ``gc.unfreeze()``: no scan), else the
next allocation would scan them all (a million for 10**5 payments) only to find them alive;
unless the application froze objects itself (as pre-forking servers do), which stay frozen.
CPython 3.12.0 and 3.12.1 alone freeze objects of their own: there, what was frozen when paysdk
was imported (its ``__init__`` loads this module) is the interpreter's; elsewhere any frozen
object is the application's, even one frozen before a worker imported paysdk. A child forked
during another thread's pause ends it at once.
"""

from __future__ import annotations

import gc
import os
import sys
from _thread import allocate_lock  # threading's Lock, without importing threading with paysdk
from collections.abc import Generator
from contextlib import contextmanager

_lock = allocate_lock()
_pauses = 0
_was_enabled = False
_frozen_by_the_interpreter = (
    gc.get_freeze_count()
    if sys.implementation.name == "cpython" and sys.version_info[:3] in ((3, 12, 0), (3, 12, 1))
    else 0
)


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
                if gc.get_freeze_count() <= _frozen_by_the_interpreter:  # the app froze none
                    # every tracked object to the oldest generation, unscanned
                    gc.freeze()
                    gc.unfreeze()  # the interpreter's own too: merely scanned, or frozen, again
                gc.enable()


def _forked() -> None:
    """In a forked child: the threads whose pauses were running are not here to end them, and
    one may have held the lock; the child starts with no pause, and the collector as it was."""
    global _lock, _pauses
    _lock = allocate_lock()
    if _pauses:
        _pauses = 0
        if _was_enabled:
            gc.enable()


if hasattr(os, "register_at_fork"):  # not on Windows, which cannot fork
    os.register_at_fork(after_in_child=_forked)

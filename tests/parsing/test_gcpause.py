"""The cyclic GC pause around large parses: process-wide, so counted, restored, and safe."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator

import pytest

from paysdk import _core
from paysdk._parsing.gcpause import gc_paused
from tests.conftest import listed_body


@pytest.fixture(autouse=True)
def _gc_back_on() -> Iterator[None]:
    yield
    gc.enable()


def test_the_collector_comes_back_after_a_pause_even_when_the_parse_raises() -> None:
    during: list[bool] = []

    def failing_parse() -> None:
        with gc_paused():
            during.append(gc.isenabled())
            raise ValueError("boom")

    assert gc.isenabled()
    with pytest.raises(ValueError, match="boom"):
        failing_parse()
    assert during == [False]
    assert gc.isenabled()


def test_overlapping_pauses_in_threads_restore_it_once_the_last_ends() -> None:
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    seen: list[bool] = []

    def first() -> None:
        with gc_paused():
            first_in.set()
            second_in.wait(5)
        first_out.set()

    def second() -> None:
        first_in.wait(5)
        with gc_paused():
            second_in.set()
            first_out.wait(5)
            seen.append(gc.isenabled())  # the first pause ended, this one still runs
        seen.append(gc.isenabled())

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert seen == [False, True]


def test_a_collector_the_application_turned_off_stays_off() -> None:
    gc.disable()
    with gc_paused():
        pass
    assert not gc.isenabled()


def test_large_list_bodies_are_parsed_with_the_pause_and_small_ones_without(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    paused: list[bool] = []
    real = _core.parse_list.__globals__["gc_paused"]

    def spy() -> object:
        paused.append(True)
        return real()

    monkeypatch.setitem(_core.parse_list.__globals__, "gc_paused", spy)
    small = json.dumps({"data": [listed_body()]}).encode()
    large = json.dumps({"data": [listed_body(f"o-{n}") for n in range(3000)]}).encode()
    assert len(_core.parse_list(small)) == 1
    assert paused == []
    assert len(_core.parse_list(large)) == 3000
    assert paused == [True]
    assert gc.isenabled()


class _Node:
    """A GC-tracked object that can hold a cycle."""

    def __init__(self) -> None:
        self.other: object = None


def test_what_a_pause_made_goes_to_the_oldest_generation_without_a_young_scan() -> None:
    gc.collect()
    with gc_paused():
        made = [_Node() for _ in range(5000)]
    young = {id(obj) for obj in gc.get_objects(generation=0)}
    oldest = {id(obj) for obj in gc.get_objects(generation=2)}
    assert not any(id(node) in young for node in made)
    assert all(id(node) in oldest for node in made)
    assert gc.get_count()[0] < 700  # the young counter starts again: no scan is due
    assert gc.get_freeze_count() == 0  # moved, not left frozen
    assert gc.isenabled()


def test_garbage_cycles_made_during_a_pause_are_still_collected() -> None:
    with gc_paused():
        first, second = _Node(), _Node()
        first.other, second.other = second, first
    ids = {id(first), id(second)}
    del first, second
    assert gc.collect() >= 2
    assert not ids & {id(obj) for obj in gc.get_objects()}


def test_objects_the_application_froze_stay_frozen() -> None:
    """The application's frozen objects are still frozen after a pause: in no generation. (Not
    by the frozen count, which another thread's objects freed meanwhile lower.)"""
    kept = [_Node() for _ in range(300)]
    gc.collect()
    gc.freeze()
    try:
        with gc_paused():
            made = [_Node() for _ in range(100)]
        collected = {id(obj) for obj in gc.get_objects()}  # a frozen object is in no generation
        assert not any(id(node) in collected for node in kept), "the application's objects thawed"
        assert gc.isenabled()
        assert made
    finally:
        gc.unfreeze()


FROZEN_BEFORE_IMPORT = """
import gc
kept = [[n] for n in range(300)]
gc.freeze()  # before paysdk, as CPython 3.12.0 and 3.12.1 freeze tuples of their own at start
import paysdk
from paysdk._parsing.gcpause import gc_paused


class Node:
    pass


with gc_paused():
    made = [Node() for _ in range(5000)]
oldest = {id(obj) for obj in gc.get_objects(generation=2)}
assert all(id(node) in oldest for node in made), "the survivors were not promoted"
assert gc.get_count()[0] < 700, gc.get_count()
gc.freeze()  # the application's own, once loaded: kept through the next pause
frozen = gc.get_freeze_count()
with gc_paused():
    more = [Node() for _ in range(100)]
assert gc.get_freeze_count() == frozen, (gc.get_freeze_count(), frozen)
"""


INTERPRETER_FREEZES = sys.implementation.name == "cpython" and sys.version_info[:3] in (
    (3, 12, 0),
    (3, 12, 1),
)
"""CPython 3.12.0 and 3.12.1 freeze objects of their own at start; no other Python does."""


PAUSED_WHILE_FORKING = """
import gc
import os
import threading

from paysdk._parsing.gcpause import gc_paused

inside, done = threading.Event(), threading.Event()


def parse() -> None:
    with gc_paused():
        inside.set()
        done.wait(10)


thread = threading.Thread(target=parse)
thread.start()
inside.wait(10)
pid = os.fork()
if pid == 0:  # the parsing thread is not here to end its pause
    collecting = gc.isenabled()
    with gc_paused():
        pass
    os._exit(0 if collecting and gc.isenabled() else 3)
done.set()
thread.join(10)
_, status = os.waitpid(pid, 0)
assert os.waitstatus_to_exitcode(status) == 0, "the child's collector stayed paused"
assert gc.isenabled()
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the platform cannot fork")
def test_a_child_forked_while_another_thread_parses_collects_garbage() -> None:
    """A worker forked (multiprocessing, a prefork server) while a thread of the parent parses a
    large list inherits the paused collector, but not the thread that would end the pause."""
    subprocess.run([sys.executable, "-c", PAUSED_WHILE_FORKING], check=True, timeout=60)


APP_FROZE_BEFORE_IMPORT = """
import gc
kept = [[n] for n in range(300)]
gc.freeze()  # a prefork server's master, before a worker first imports paysdk
import paysdk
from paysdk._parsing.gcpause import gc_paused

with gc_paused():
    made = [[n] for n in range(5000)]
collected = {id(obj) for obj in gc.get_objects()}  # a frozen object is in no generation
assert not any(id(item) in collected for item in kept), "the application's objects thawed"
assert gc.isenabled()
"""


def test_objects_frozen_before_paysdk_was_imported_are_the_interpreters_only_where_it_freezes() -> (
    None
):
    """On CPython 3.12.0 and 3.12.1, which freeze objects of their own at start, what was frozen
    before paysdk's import does not stop the survivors' promotion. Elsewhere it is the
    application's: a master process freezes what its workers share, and a worker imports
    paysdk lazily, after the freeze; a large list must not unfreeze the shared objects (the
    next full collection would then write to every shared page)."""
    script = FROZEN_BEFORE_IMPORT if INTERPRETER_FREEZES else APP_FROZE_BEFORE_IMPORT
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60)

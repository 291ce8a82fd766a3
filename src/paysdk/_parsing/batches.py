"""Validating a large ``{"data": [...]}`` body a batch of whole payments at a time.

pydantic's ``validate_json`` builds a tree of the whole document before the models: for a 45 MB
body, over a hundred megabytes touched once, whose paging costs more than the parse. About
64 KiB at a time, the tree stays in cached memory: a 100,000-payment list parses ~15% faster,
with a lower peak (docs/performance.md).

A batch ends at the first ``}``, ``,`` and first payment's opening (``{"id"``, say: a server
writes every payment's keys in one order) past its size. A nested object opening the same way
can fool that, never silently: a batch cut inside a payment is not JSON, and is cut again where
its braces balance. After a few such misses, or any other error, the body is parsed whole (same
result, same error). A batch is wrapped as ``[[...]]`` so its payments sit as deep as in the
body (the nesting limit falls on the same payments); one spanning anything but payments (a
second ``"data"`` key) makes the body parse whole.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final, TypeVar

from pydantic import ValidationError

from .repair import not_json

T = TypeVar("T")

BATCH_BYTES: Final = 64 * 1024
"""About this much of the body per batch: measured fastest between 32 and 256 KiB."""
MAX_MISSES: Final = 4
"""Batches that may end inside a payment before the body is parsed whole instead."""

_SPACE: Final = rb"[ \t\r\n]*"
_SPACES: Final = b" \t\r\n"
_HEAD: Final = re.compile(rb"(?:\xef\xbb\xbf)?%s\{%s\"data\"%s:%s\[%s" % ((_SPACE,) * 5))
"""The body up to the first payment, after a byte order mark if the server wrote one."""
_OPENING: Final = re.compile(rb"\{%s\"[^\"\\]{0,64}\"" % _SPACE)
_TAIL_WINDOW: Final = 4096
"""How far from the end the closing ``]}`` is looked for: more trailing space parses whole."""
_WRAP: Final = (b"[[", b"]]")


def validate_in_batches(
    body: bytes, validate: Callable[[bytes], list[T]], batch_bytes: int = BATCH_BYTES
) -> list[T] | None:
    """The list's elements, ``validate`` (``[[...]]``'s bytes -> the elements inside) run
    batch by batch; ``None`` when the body is better parsed whole: it is not plainly
    ``{"data": [{...}, ...]}``, it cannot be cut, or a batch failed (the whole parse then says
    how, and where)."""
    span = _data_span(body)
    if span is None:
        return None
    start, end = span
    if start == end:
        return []
    opening = _OPENING.match(body, start, end)
    if opening is None:
        return None
    between = re.compile(rb"\}%s,%s(?=%s)" % (_SPACE, _SPACE, re.escape(opening.group())))
    items: list[T] = []
    misses = 0
    while start < end:
        stop, next_start = _cut(body, start, end, between, batch_bytes, balanced=misses > 0)
        if stop == end and not items and end - start > batch_bytes:
            return None  # one batch of it all: the whole parse does the same with less copying
        try:
            items += validate(_WRAP[0] + body[start:stop] + _WRAP[1])
        except ValidationError as exc:
            misses += 1
            if stop == end or misses > MAX_MISSES or not not_json(exc):
                return None
            continue  # the same batch, cut where the braces balance too
        start = next_start
    return items


def _data_span(body: bytes) -> tuple[int, int] | None:
    """Where the elements of ``data`` start, and where the last one ends: before space, ``]``,
    space, ``}`` and space at the end."""
    head = _HEAD.match(body)
    if head is None:
        return None
    window = body[-_TAIL_WINDOW:].rstrip(_SPACES)
    for closer in (b"}", b"]"):
        if not window.endswith(closer):
            return None
        window = window[:-1].rstrip(_SPACES)
    end = len(body) - min(len(body), _TAIL_WINDOW) + len(window)
    return head.end(), max(head.end(), end)  # ``[ ]``: the head took the space already


def _cut(
    body: bytes, start: int, end: int, between: re.Pattern[bytes], size: int, *, balanced: bool
) -> tuple[int, int]:
    """Where the batch from ``start`` ends (just after the ``}`` of a separator about ``size``
    bytes on, or at ``end``), and where the next one starts (that separator's ``{``)."""
    found = between.search(body, start + size, end) if end - start > size else None
    depth, counted = 0, start
    while found is not None:
        stop, next_start = found.start() + 1, found.end()
        if not balanced:
            return stop, next_start
        depth += body.count(b"{", counted, stop) - body.count(b"}", counted, stop)
        counted = stop
        if depth == 0:
            return stop, next_start
        found = between.search(body, found.end(), end)
    return end, end

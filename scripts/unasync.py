#!/usr/bin/env python3
"""Generate the sync twins of paysdk's async code: each ``_async/`` directory gives a ``_sync/``.

Modelled on httpcore's ``scripts/unasync.py``: the async source is the only source, and the sync
code is made from it line by line with the word substitutions in RULES (``async def`` -> ``def``,
``await x`` -> ``x``, ``AsyncLedger`` -> ``Ledger``, ``async_take`` -> ``take``...). Where sync and
async genuinely differ, the difference lives in a small helper outside ``_async/`` whose sync twin
has the name a rule gives it. Standard library only.

    python scripts/unasync.py            # (re)generate every _sync/ directory
    python scripts/unasync.py --check    # exit 1, with a unified diff, if one is stale
"""

from __future__ import annotations

import argparse
import difflib
import re
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

DIRECTORIES = [
    "src/paysdk/_client/_async",
    "src/paysdk/ledger/_async",
    "src/paysdk/ledger/_databases/_async",
    "src/paysdk/_transport/_async",
]
"""The async source directories, relative to the repository; each generates its ``_sync``."""

RULES = [
    (r"\basync (def|with|for)\b", r"\1"),
    (r"\bawait ", ""),
    (r"\benter_async_context\b", "enter_context"),
    (r"\baclose\b", "close"),
    (r"\baiter\b", "iter"),
    (r"\baiter_stream\b", "iter_stream"),  # httpcore's response body
    (r"\banext\b", "next"),
    (r"\b__a(enter|exit|iter|next)__\b", r"__\1__"),
    (r"\bhandle_async_request\b", "handle_request"),  # httpcore's pools and httpx's transports
    (r"(\bfrom \S*\.)_async\b", r"\1_sync"),  # an import of another async module: its twin
    (r"\bAsync([A-Z]\w*)", r"\1"),  # AsyncLedger, AsyncExitStack, AsyncIterator...
    (r"\basync_([a-z]\w*)\b(?!\.py)", r"\1"),  # a helper's twin (async_take -> take), not a file
]
"""Applied in order to each line: a regular expression and its replacement."""

PASSAGES = {
    # The clients' docstrings where async and sync say different things: the class's own,
    # iterating, the default concurrency, an async lookup, the event loop's error, closing.
    (
        '''"""The asynchronous client: the same methods as ``Client``, awaitable.

    ``http_backend="aiohttp"`` (with the ``aiohttp`` extra) sends through aiohttp instead of
    httpx: the same behaviour, several times the throughput under concurrency. One
    ``AsyncClient`` belongs to one event loop.
    """'''
    ): '''"""The synchronous client. Reuse one per process: it keeps connections open."""''',
    "            EventLoopError: the client is used from an event loop other than its own.\n": "",
    (
        """Every listed payment as the body streams in: ``async for p in iter_payments()``.

        Use it in an ``async with`` block (or ``await aclose()``) if you may stop early."""
    ): (
        """Every listed payment, one at a time as the body streams in: memory stays flat.

        Use it in a ``with`` block (or ``close()`` it) if you may stop early. A failure before
        the first payment is retried; after it, the error says how many payments came first."""
    ),
    (
        """An async iterator of [`ListedPayment`][paysdk.ListedPayment]s, also an async context
            manager; nothing is sent until the first item is asked for."""
    ): (
        """An iterator of [`ListedPayment`][paysdk.ListedPayment]s, also a context manager;
            nothing is sent until the first ``next()``."""
    ),
    "concurrency: int = 50,": "concurrency: int = 8,",
    (
        """Verify many references, ``concurrency`` at a time: ``async for result in ...``.

        Results come in input order, each the payment or the typed error for that reference;
        at most ``concurrency`` calls are in flight and as many results wait."""
    ): (
        """Verify many references on ``concurrency`` threads; results come in input order.

        Each result holds the payment or the typed error for that reference; at most
        ``concurrency`` calls are in flight and as many results wait, whatever the input's size."""
    ),
    (
        "references: the references to verify (any iterable, read lazily)."
    ): "references: the references to verify; read lazily, so it may be a generator.",
    (
        """An async iterator of [`VerifyResult`][paysdk.VerifyResult]s in input order;
            ``aclose()`` it (or use ``async with``) to stop early."""
    ): (
        """An iterator of [`VerifyResult`][paysdk.VerifyResult]s in input order; ``close()`` it
            (or use ``with``) to stop early."""
    ),
    ("Turn a callback request into a confirmed payment; ``lookup`` may be async."): (
        """Turn a callback request into a payment the service confirms, never trusting the caller.

        Give the expected ``amount`` and ``currency``, or a ``lookup`` that finds them from the
        reference (your order table)."""
    ),
    "order. It may\n                be async.": "order.",
    ("                three ASCII letters.\n            APIError"): (
        "                three ASCII letters. An async ``lookup`` needs ``AsyncClient``.\n"
        "            APIError"
    ),
    (
        '''(then it is yours to close).

        Safe from any event loop: the connections are closed in the loop they belong to.
        """'''
    ): '''(then it is yours to close)."""''',
}
"""Exact passages of async source and what the sync twin says instead, written as it is (the
RULES leave it alone): for the few sentences of a docstring that cannot be worded for both."""

COMPILED_RULES = [(re.compile(pattern), replacement) for pattern, replacement in RULES]
PASSAGE_PATTERN = re.compile("(" + "|".join(map(re.escape, PASSAGES)) + ")")
HEADER = (
    "# Generated from ../_async/{name} by scripts/unasync.py: do not edit this file; edit that\n"
    "# one and run `python scripts/unasync.py` (`--check` says whether this one is up to date).\n"
)


def unasync_line(line: str, used: set[str] | None = None) -> str:
    """The sync twin of one line of async source; the rules that changed it go into ``used``."""
    for regex, replacement in COMPILED_RULES:
        changed = regex.sub(replacement, line)
        if used is not None and changed != line:
            used.add(regex.pattern)
        line = changed
    return line


def unasync_source(name: str, source: str, used: set[str] | None = None) -> str:
    """The whole generated file for the async source file ``name``, header first: each of
    PASSAGES as the sync twin says it, every other line through the RULES."""
    pieces = PASSAGE_PATTERN.split(source)  # the passages found are at the odd indices
    for index in range(1, len(pieces), 2):
        if used is not None:
            used.add(pieces[index])
        pieces[index] = PASSAGES[pieces[index]]
    for index in range(0, len(pieces), 2):
        lines = pieces[index].splitlines(keepends=True)
        pieces[index] = "".join(unasync_line(line, used) for line in lines)
    return HEADER.format(name=name) + "".join(pieces)


def twins(root: Path) -> list[tuple[Path, Path | None]]:
    """Each async source file with its generated file, and generated files with no source left
    (paired with None): those are stale too."""
    pairs: list[tuple[Path, Path | None]] = []
    for directory in DIRECTORIES:
        source_dir = root / directory
        sync_dir = source_dir.with_name("_sync")
        sources = sorted(source_dir.glob("*.py"))
        pairs += [(sync_dir / source.name, source) for source in sources]
        expected = {source.name for source in sources}
        pairs += [
            (path, None) for path in sorted(sync_dir.glob("*.py")) if path.name not in expected
        ]
    return pairs


def expected_files(root: Path, used: set[str] | None = None) -> dict[Path, str | None]:
    """What each generated file must hold; None for one that must not exist."""
    return {
        target: None
        if source is None
        else unasync_source(source.name, source.read_text(encoding="utf-8"), used)
        for target, source in twins(root)
    }


def check(root: Path = ROOT) -> list[str]:
    """The unified diffs of every stale or missing generated file, and the unused rules: none
    when all is up to date."""
    used: set[str] = set()
    problems: list[str] = []
    for target, wanted in expected_files(root, used).items():
        current = target.read_text(encoding="utf-8") if target.exists() else None
        if current == wanted:
            continue
        name = target.relative_to(root).as_posix()
        diff = difflib.unified_diff(
            (current or "").splitlines(keepends=True),
            (wanted or "").splitlines(keepends=True),
            fromfile=f"{name} (as it is)" if current is not None else "/dev/null",
            tofile=f"{name} (as generated)" if wanted is not None else "/dev/null",
        )
        problems.append("".join(diff))
    unused = [pattern for pattern, _ in RULES if pattern not in used]
    problems += [f"rule {pattern!r} changes no line: remove it\n" for pattern in unused]
    unmatched = [passage for passage in PASSAGES if passage not in used]
    problems += [f"passage {passage!r} is in no source: remove it\n" for passage in unmatched]
    return problems


def generate(root: Path = ROOT) -> list[Path]:
    """Write every generated file that is stale or missing, remove orphans; what it changed."""
    changed: list[Path] = []
    for target, wanted in expected_files(root).items():
        if wanted is None:
            target.unlink()
            changed.append(target)
        elif not target.exists() or target.read_text(encoding="utf-8") != wanted:
            target.parent.mkdir(exist_ok=True)
            target.write_text(wanted, encoding="utf-8")
            changed.append(target)
    return changed


def main(argv: Sequence[str] | None = None, root: Path = ROOT) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--check", action="store_true", help="change nothing; exit 1 if a file is stale"
    )
    args = parser.parse_args(argv)
    if args.check:
        problems = check(root)
        sys.stdout.write("".join(problems))
        if problems:
            sys.stdout.write("unasync: out of date; `python scripts/unasync.py` regenerates.\n")
        return 1 if problems else 0
    for path in generate(root):
        sys.stdout.write(f"wrote {path.relative_to(root).as_posix()}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

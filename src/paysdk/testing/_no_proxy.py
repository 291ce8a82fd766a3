"""The fake's and the sandbox's host added to ``NO_PROXY``, so that a proxy the environment names
(as CI machines often do) never carries a test's requests to them. Imports only ``os``: the pytest
plugin uses it before anything else of paysdk is imported."""

from __future__ import annotations

import os

NAMES = ("no_proxy", "NO_PROXY")
"""Both spellings, in the order urllib (and so httpx and paysdk) prefers them."""
Changed = tuple[dict[str, str | None], str]
"""``NO_PROXY``'s spellings as they were, and what ``bypass`` set them to."""


def bypassing(host: str) -> str | None:
    """What both spellings of ``NO_PROXY`` are to hold: ``host`` (the fake's or the sandbox's)
    added, keeping what is there; ``None`` if it names ``host`` (or ``*``) already."""
    current = next((os.environ[name] for name in NAMES if name in os.environ), "")
    entries = [entry.strip() for entry in current.split(",") if entry.strip()]
    if host in entries or "*" in entries:
        return None
    return ",".join([*entries, host])


def bypass(host: str) -> Changed | None:
    """Add ``host`` (the fake's) to ``NO_PROXY`` (both spellings), keeping what is there; return
    the variables as they were and their new value, for ``restore`` (``None`` if none changed)."""
    value = bypassing(host)
    if value is None:
        return None
    before = {name: os.environ.get(name) for name in NAMES}
    for name in NAMES:
        os.environ[name] = value
    return before, value


def restore(changed: Changed | None) -> None:
    """Put ``NO_PROXY`` back as ``bypass`` found it (``changed``, what it returned), unless it
    was set again since (by the test): that value is left as it is."""
    if changed is None:
        return
    before, value = changed
    for name, was in before.items():
        if os.environ.get(name) != value:
            continue
        if was is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = was

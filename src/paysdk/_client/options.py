"""The small types a client's signature needs: defined apart, so ``paysdk.Client`` is cheap.

What a client runs on (the core, the senders, the models) loads with the first client made;
its signature only needs these.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeAlias, TypedDict

import httpx


class NotGiven:
    """The default of an argument the environment may fill in (``PAYSDK_TIMEOUT``...)."""

    def __repr__(self) -> str:
        return "NOT_GIVEN"

    def __bool__(self) -> bool:
        return False


NOT_GIVEN = NotGiven()

TimeoutTypes: TypeAlias = float | int | httpx.Timeout | None
"""Seconds for every phase, an ``httpx.Timeout`` for each phase, or ``None`` for no limit."""


class CallOptions(TypedDict, total=False):
    """Per-call overrides accepted by every client method and by ``with_options``."""

    timeout: TimeoutTypes
    max_retries: int
    extra_headers: Mapping[str, str]
    max_response_bytes: int | None
    deadline: float | None

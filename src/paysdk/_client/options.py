"""The small types a client's signature needs, apart so ``paysdk.Client`` loads cheaply: what a
client runs on loads with the first client made."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, TypeAlias, TypedDict

import httpx

if TYPE_CHECKING:
    import os
    import ssl

__all__ = ["NOT_GIVEN", "CallOptions", "NotGiven", "TimeoutTypes", "VerifyTypes"]


class NotGiven:
    """The default of an argument the environment may fill in (``PAYSDK_TIMEOUT``...)."""

    def __repr__(self) -> str:
        return "NOT_GIVEN"

    def __bool__(self) -> bool:
        return False


NOT_GIVEN = NotGiven()
"""The default of an argument the environment may fill in: not given, so ``PAYSDK_TIMEOUT`` (or
the built-in default) applies, where ``None`` would mean "no limit"."""

TimeoutTypes: TypeAlias = float | int | httpx.Timeout | None
"""Seconds for every phase, an ``httpx.Timeout`` for each phase, or ``None`` for no limit."""


VerifyTypes: TypeAlias = "ssl.SSLContext | str | os.PathLike[str] | bool"
"""What ``verify=`` takes: an ``ssl.SSLContext``, the path of a CA bundle (a PEM file, or a
directory of hashed certificates), ``True`` for the default trust, or ``False`` (loopback only)."""


class CallOptions(TypedDict, total=False):
    """Per-call overrides accepted by every client method and by ``with_options``.

    Each is optional and means what the client's argument of the same name means, for this call
    only. ``secret_key`` and ``base_url`` make the call for another merchant account over the
    same connections: a platform holding many accounts needs one client, not one per key.

    Attributes:
        secret_key: the merchant's secret key for this call.
        base_url: the service's URL for this call.
        timeout: seconds (or an ``httpx.Timeout``) for each request; ``None``: no limit.
        max_retries: how many times a retryable failure is tried again.
        extra_headers: headers added to each request (never ``Authorization``).
        max_response_bytes: the largest successful body read, decoded; ``None``: the
            endpoint's default (1 MiB for verify, 64 MiB for a list).
        deadline: seconds for the whole call, retries and waits included; ``None``: no limit.
        account: the label of the merchant account (with its ``secret_key``): the payments
            verified carry it, and a ledger fulfils each account's payments apart; ``""``
            takes the label off.
    """

    secret_key: str
    base_url: str
    timeout: TimeoutTypes
    max_retries: int
    extra_headers: Mapping[str, str]
    max_response_bytes: int | None
    deadline: float | None
    account: str

"""The service's timestamps: UTC, and the one way paysdk writes them. Apart from the models, so
that what only writes a timestamp (the sandbox, the SQLite ledger, the command line) does not
import pydantic."""

from __future__ import annotations

import datetime as dt

__all__ = ["as_utc", "wire_timestamp"]


def as_utc(value: dt.datetime) -> dt.datetime:
    if value.tzinfo is None:  # the service documents UTC; a missing offset still means UTC
        return value.replace(tzinfo=dt.timezone.utc)
    try:
        return value.astimezone(dt.timezone.utc)
    except OverflowError:  # e.g. 0001-01-01T00:00+01:00: pydantic reports ValueErrors only
        raise ValueError("the timestamp is outside the range of dates") from None


def wire_timestamp(value: dt.datetime) -> str:
    """The service's timestamp text: UTC, microseconds, trailing ``Z``. The one place it is made.

    Args:
        value: a timezone-aware datetime (a naive one is taken as UTC).

    Returns:
        The timestamp as the service writes it (``2024-05-01T12:00:00.000000Z``).
    """
    # isoformat, not strftime: ``%Y`` writes year 5 as "5" on glibc, which no parser reads back
    return as_utc(value).replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"

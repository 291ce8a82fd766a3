"""The request each endpoint is: method, URL, headers, timeout, budget and body cap."""

from __future__ import annotations

from urllib.parse import quote

from .config import ITEM_MAX_BYTES, LIST_MAX_BYTES, VERIFY_MAX_BYTES, Config
from .references import check_reference, is_plain
from .steps import Send

__all__ = ["list_request", "verify_request"]


def verify_request(config: Config, reference: str) -> Send:
    plain = isinstance(reference, str) and is_plain(reference)  # passes every rule
    segment = reference if plain else quote(check_reference(reference), safe="")
    return _get(config, f"/payment/{segment}", config.max_bytes(VERIFY_MAX_BYTES))


def list_request(config: Config, *, stream: bool = False) -> Send:
    return _get(
        config, "/payments", config.max_bytes(ITEM_MAX_BYTES if stream else LIST_MAX_BYTES), stream
    )


def _get(config: Config, path: str, max_body: int, stream: bool = False) -> Send:
    return Send(
        "GET",
        config.base_url + path,
        config.request_headers,
        config.timeout,
        budget=config.attempt_budget,
        max_body=max_body,
        stream=stream,
    )

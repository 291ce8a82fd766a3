"""The httpx request each step becomes (the senders over respx: client/test_clients; over real
sockets: test_hostile_servers)."""

from __future__ import annotations

from typing import Any

import httpx

from paysdk._client.configure import apply_options
from paysdk._core import verify_request
from paysdk._transport.httpx_common import HttpxDefaults, RequestBuilder
from tests.conftest import make_config


def test_paysdk_s_own_client_is_handed_only_what_differs_from_its_defaults() -> None:
    # httpx spends microseconds per header and per timeout it is given: a request that uses
    # the client's defaults hands it neither, one that differs hands it what differs.
    config = make_config()
    given: list[dict[str, Any]] = []

    class Recorder:
        def build_request(self, *args: Any, **kwargs: Any) -> Any:
            given.append(kwargs)

    builder = RequestBuilder(HttpxDefaults(config.headers, config.timeout))
    builder.build(Recorder(), verify_request(config, "order-1"))  # type: ignore[arg-type]
    later = apply_options(config, {"timeout": 2.0, "extra_headers": {"X-Trace": "1"}})
    builder.build(Recorder(), verify_request(later, "order-1"))  # type: ignore[arg-type]

    assert given[0]["timeout"] is httpx.USE_CLIENT_DEFAULT
    assert list(given[0]["headers"].keys()) == ["authorization"]
    assert given[1]["timeout"] == httpx.Timeout(2.0)
    assert sorted(given[1]["headers"].keys()) == ["authorization", "x-trace"]

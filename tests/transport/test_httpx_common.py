"""The httpx request each step becomes (the senders over respx: client/test_clients; over real
sockets: test_hostile_servers)."""

from __future__ import annotations

from typing import Any

import httpx

from paysdk._client.configure import apply_options
from paysdk._core import list_request, verify_request
from paysdk._transport.httpx_common import HttpxDefaults, RequestBuilder, core_url, url_parts
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


BASE_URLS = [
    "https://api.example.com",
    "https://api.example.com/v1",
    "http://127.0.0.1:8080/n/0",
    "https://api.example.com:443/v1/",
    "http://[::1]:9000",
    "https://bücher.example/api",
    "https://api.example.com/a%20b",
]
REFERENCES = [
    "order-1042",
    "a.b_c~d-e",
    "Zoë 😀",
    "a/b",
    "50%",
    "%41",
    "%zz",
    "q?x=1#f",
    ".hidden",
    "a..b",
    "...",
]


def test_the_parts_of_a_request_url_are_the_ones_httpx_parses_whole() -> None:
    # the base URL's parse is reused for every reference: the parts must be the very ones a
    # parse of the whole URL gives, for any reference the core can put after it
    for base_url in BASE_URLS:
        config = make_config(base_url=base_url, allow_insecure_http=True)
        for reference in REFERENCES:
            url = verify_request(config, reference).url
            assert core_url(url) == url_parts(url), url
        url = list_request(config).url
        assert core_url(url) == url_parts(url), url


def test_a_segment_httpx_would_rewrite_is_parsed_whole() -> None:
    # what the core never sends, but httpx would normalise: dot segments, a bare percent sign,
    # a character it escapes
    for tail in ("..", ".", "50%", "a b", "é", "x?y"):
        url = f"https://api.example.com/v1/{tail}"
        assert core_url(url) == url_parts(url), url

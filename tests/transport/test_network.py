"""How a client reaches the service: proxies given or from the environment, as httpx reads them
(over a real CONNECT proxy: tests/transport/test_tls_and_proxies.py)."""

from __future__ import annotations

import ssl

import pytest

import paysdk
from paysdk._transport.network import Network, Proxy, parse_proxy

PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")


@pytest.fixture(autouse=True)
def _no_proxy_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)


def _network(proxy: Proxy | None = None) -> Network:
    return Network(ssl.create_default_context(), proxy)


def test_a_proxy_url_keeps_its_credentials_apart_from_its_address() -> None:
    proxy = parse_proxy("http://us%40er:p%3Ass@proxy.corp:3128")
    assert proxy.url == "http://proxy.corp:3128"
    assert proxy.auth == ("us@er", "p:ss")
    assert "p:ss" not in repr(proxy) and "<hidden>" in repr(proxy)
    assert proxy.authorization == "Basic dXNAZXI6cDpzcw=="
    assert parse_proxy("proxy.corp:8080") == Proxy("http://proxy.corp:8080")
    assert parse_proxy("https://[::1]") == Proxy("https://[::1]:443")


def test_a_proxy_is_named_by_its_address_and_where_it_was_configured_never_its_password(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What an error says of a proxy: its address and ``proxy=`` or the variable that named it
    (the lower-case one where it is set, as urllib reads it first)."""
    given = parse_proxy("http://user:pa55-word@proxy.corp:3128")
    assert given.named == "http://proxy.corp:3128 (from proxy=)"
    monkeypatch.setenv("https_proxy", "http://user:pa55-word@proxy.corp:3128")
    (found,) = [p for p in [_network().proxy_for("https", "api.example.com")] if p is not None]
    assert found.named == "http://proxy.corp:3128 (from the environment's https_proxy)"
    assert "pa55-word" not in given.named + found.named


@pytest.mark.parametrize("url", ["socks5://proxy:1080", "ftp://proxy", "http://", "http://p:x"])
def test_a_proxy_paysdk_cannot_use_is_refused(url: str) -> None:
    with pytest.raises(ValueError, match="proxy"):
        parse_proxy(url)


def test_the_environments_proxies_are_read_per_scheme_and_no_proxy_is_honoured(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://user:pw@tls-proxy.corp:3128")
    monkeypatch.setenv("HTTP_PROXY", "http://plain-proxy.corp:3128")
    monkeypatch.setenv("NO_PROXY", "internal.example.com,127.0.0.1")
    network = _network()
    assert network.proxy_for("https", "api.example.com") == Proxy(
        "http://tls-proxy.corp:3128", ("user", "pw"), "HTTPS_PROXY"
    )
    assert network.proxy_for("http", "api.example.com") == Proxy(
        "http://plain-proxy.corp:3128", None, "HTTP_PROXY"
    )
    assert network.proxy_for("https", "internal.example.com") is None
    assert network.proxy_for("https", "api.internal.example.com") is None  # a subdomain too
    assert network.proxy_for("http", "127.0.0.1") is None


@pytest.mark.parametrize("host", ["127.0.0.1", "127.8.8.8", "::1", "localhost", "LocalHost"])
@pytest.mark.parametrize("variable", ["HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY"])
def test_the_environments_proxy_carries_nothing_to_this_machine(
    host: str, variable: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through a proxy, ``127.0.0.1`` would be the proxy's own machine, and a key allowed over
    plain HTTP to loopback alone would cross the network to it; a given ``proxy=`` still does."""
    monkeypatch.setenv(variable, "http://proxy.corp:3128")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    scheme = "http" if variable == "HTTP_PROXY" else "https"
    assert _network().proxy_for(scheme, host) is None
    assert _network().proxy_for(scheme, host, 8000) is None
    assert _network().proxy_for(scheme, "127.0.0.1.example.com") is not None  # a name
    given = Proxy("http://given.corp:8080")
    assert _network(given).proxy_for(scheme, host) == given


def test_all_proxy_carries_what_no_scheme_proxy_names(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALL_PROXY", "http://any-proxy.corp:3128")
    assert _network().proxy_for("https", "api.example.com") == Proxy(
        "http://any-proxy.corp:3128", None, "ALL_PROXY"
    )


def test_a_given_proxy_carries_every_request_whatever_the_environment_says(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://env-proxy.corp:3128")
    monkeypatch.setenv("NO_PROXY", "*")
    given = Proxy("http://given.corp:8080")
    assert _network(given).proxy_for("https", "api.example.com") == given


def test_the_environment_is_read_when_the_client_is_made(monkeypatch: pytest.MonkeyPatch) -> None:
    network = _network()
    monkeypatch.setenv("HTTPS_PROXY", "http://late.corp:3128")
    assert network.proxy_for("https", "api.example.com") is None
    assert _network().proxy_for("https", "api.example.com") == Proxy(
        "http://late.corp:3128", None, "HTTPS_PROXY"
    )


def test_a_client_refuses_an_environment_proxy_it_cannot_use_when_it_is_made(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "socks5://user:secret-pw@proxy.corp:1080")
    with pytest.raises(paysdk.ConfigurationError, match="HTTPS_PROXY") as caught:
        paysdk.Client(secret_key="sk_test_123456", base_url="https://api.example.com")
    assert "secret-pw" not in str(caught.value)


def test_without_trust_env_the_environment_is_not_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://env-proxy.corp:3128")
    network = Network(ssl.create_default_context(), None, trust_env=False)
    assert network.proxy_for("https", "api.example.com") is None


def test_the_routes_remembered_stay_bounded_however_many_hosts_are_called(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Per-call ``base_url`` lets a platform call any number of hosts: the route cache starts
    again past its bound instead of growing with them, and still answers right."""
    from paysdk._transport.network import MAX_ROUTES

    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.corp:3128")
    monkeypatch.setenv("NO_PROXY", "shop-7.example.com")
    network = _network()
    for number in range(MAX_ROUTES * 3):
        network.proxy_for("https", f"shop-{number}.example.com")
        assert len(network._routes) <= MAX_ROUTES
    assert network.proxy_for("https", "shop-7.example.com") is None
    assert network.proxy_for("https", "shop-8.example.com") == Proxy(
        "http://proxy.corp:3128", None, "HTTPS_PROXY"
    )

"""Configuration is checked when the client is made, before anything is sent."""

from __future__ import annotations

import ast
import ssl
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

import paysdk
from tests.conftest import (
    BASE_URL,
    NOT_FOUND_BODY,
    SECRET,
    EitherClient,
    MakeClient,
    verify_body,
)
from tests.support.clients import network_of

CLIENTS = [paysdk.Client, paysdk.AsyncClient]
ORDER = paysdk.Expected(amount=100, currency="USD")


@pytest.fixture(autouse=True)
def _no_paysdk_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PAYSDK_SECRET_KEY", raising=False)
    monkeypatch.delenv("PAYSDK_BASE_URL", raising=False)


@pytest.mark.parametrize("cls", CLIENTS)
def test_key_and_url_come_from_the_environment(
    cls: type[paysdk.Client], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PAYSDK_SECRET_KEY", SECRET)
    monkeypatch.setenv("PAYSDK_BASE_URL", BASE_URL + "/")
    client = cls()
    assert client.base_url == BASE_URL
    assert client._config.secret_key == SECRET


@pytest.mark.parametrize("cls", CLIENTS)
def test_arguments_win_over_the_environment(
    cls: type[paysdk.Client], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PAYSDK_SECRET_KEY", "sk_from_env")
    monkeypatch.setenv("PAYSDK_BASE_URL", "https://env.example")
    client = cls(secret_key=SECRET, base_url=BASE_URL)
    assert (client.base_url, client._config.secret_key) == (BASE_URL, SECRET)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"secret_key": ""}, "secret key is empty"),
        ({"secret_key": " sk_x "}, "whitespace"),
        ({"secret_key": "sk_x\r\nX-Evil: 1"}, "cannot be sent in a header"),
        ({"secret_key": "sk_é"}, "cannot be sent in a header"),
        ({"secret_key": "Bearer sk_x"}, "starts with 'Bearer ': pass the key alone"),
        ({"secret_key": "bearer sk_x"}, "starts with 'Bearer ': pass the key alone"),
        ({"secret_key": '"sk_x"'}, "wrapped in quotes; check how it is loaded"),
        ({"secret_key": "'sk_x'"}, "wrapped in quotes; check how it is loaded"),
        ({"secret_key": 123}, "must be a str"),
        ({"base_url": "api.pay.test"}, "absolute http"),
        ({"base_url": "ftp://api.pay.test"}, "absolute http"),
        ({"base_url": "https://"}, "absolute http"),
        ({"base_url": "https://user:pw@api.pay.test"}, "credentials"),
        ({"base_url": "https://api.pay.test/?x=1"}, "query"),
        ({"base_url": "https://api.pay.test:notaport"}, "not a valid URL"),
        ({"base_url": "https://api.pay.test:0/v1"}, "port 0"),
        ({"base_url": "http://127.0.0.1:00"}, "port 0"),
        ({"base_url": "http://api.pay.test"}, "plain http.*allow_insecure_http"),
        ({"base_url": "http://10.0.0.5:8080"}, "plain http"),
        ({"timeout": -1}, "more than 0"),
        ({"timeout": float("nan")}, "more than 0"),
        ({"timeout": float("inf")}, "at most 86400"),
        ({"timeout": 1e300}, "at most 86400"),
        ({"timeout": httpx.Timeout(-1)}, "the connect timeout must be more than 0"),
        ({"timeout": httpx.Timeout(5, read=float("inf"))}, "the read timeout"),
        ({"base_url": "https://api.pay.test/#frag"}, "query or fragment"),
        ({"base_url": "https://api.pay.test/v1?"}, "query or fragment"),
        ({"base_url": "https://api.pay.test/v1#"}, "query or fragment"),
        ({"base_url": "https://api.pay.test/v1/?#"}, "query or fragment"),
        ({"base_url": "https://ex\x7fample.com"}, "not a valid URL"),
        ({"base_url": "https://xn--a.com"}, "not a valid URL"),
        ({"base_url": "https://xn--zz.com"}, "not a valid URL"),  # not Punycode at all
        ({"base_url": "https://api.xn--.com"}, "not a valid URL"),  # an empty A-label
        ({"base_url": "https://\uff21.com"}, "not a valid URL"),
        ({"base_url": "https://api pay.test"}, "no host name has"),
        ({"base_url": "https://api%2Epay.test"}, "no host name has"),
        ({"base_url": "https://api,pay.test/v1"}, "no host name has"),
        ({"base_url": "https://" + "a" * 64 + ".com"}, "not a valid URL"),
        ({"default_headers": {"X-A": " lead"}}, "spaces at either end"),
        ({"default_headers": {"X-A": "\t"}}, "spaces at either end"),
        ({"timeout": "30"}, "timeout must be"),
        ({"max_retries": -1}, "between 0 and"),
        ({"max_retries": 11}, "between 0 and"),
        ({"max_retries": True}, "must be an int"),
        ({"default_headers": {"Authorization": "Bearer other"}}, "must not set"),
        ({"default_headers": {"X-A": "a\nb"}}, "cannot be sent"),
        ({"default_headers": {"Bad Name": "x"}}, "invalid header name"),
        ({"default_headers": {"Accept-Encoding": "br"}}, "offers br, which paysdk cannot read"),
        ({"default_headers": {"accept-encoding": "gzip, zstd;q=0.5"}}, "offers zstd, which"),
        ({"default_headers": {"Accept-Encoding": "*"}}, r"offers \*, which"),
    ],
)
def test_bad_configuration_is_refused_with_a_clear_message(
    kwargs: dict[str, Any], message: str
) -> None:
    options: dict[str, Any] = {"secret_key": SECRET, "base_url": BASE_URL, **kwargs}
    with pytest.raises(paysdk.ConfigurationError, match=message) as caught:
        paysdk.Client(**options)
    assert isinstance(caught.value, ValueError)
    assert SECRET not in str(caught.value)
    assert "sk_x" not in str(caught.value)


@pytest.mark.parametrize(
    ("name", "points_to_the_key"),
    [("Authorization", True), ("Host", False), ("content-length", False)],
)
def test_a_reserved_header_is_refused_with_a_hint_about_that_header(
    name: str, points_to_the_key: bool
) -> None:
    """Only an ``Authorization`` header is about the key: a ``Host`` is not told to use it."""
    with pytest.raises(paysdk.ConfigurationError, match="must not set") as caught:
        paysdk.Client(secret_key=SECRET, base_url=BASE_URL, default_headers={name: "x"})
    assert ("secret_key" in str(caught.value)) is points_to_the_key


@pytest.mark.parametrize(
    "kwargs",
    [
        {"base_url": SECRET},
        {"base_url": f"https://api.pay.test/v1?key={SECRET}"},
        {"base_url": f"https://api.pay.test:{SECRET}"},
        {"base_url": f"http://{SECRET}.pay.test"},
        {"verify": f"/etc/{SECRET}.pem"},
        {"pause_gc": SECRET},
    ],
    ids=["key-as-url", "in-query", "as-port", "in-host", "verify", "pause_gc"],
)
def test_a_key_pasted_where_another_setting_goes_is_not_quoted_back(
    kwargs: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The checks quote what they refuse, so that it can be found: never the key, whether it
    was given as secret_key, read from the environment, or given to a with_options copy."""
    options = {"secret_key": SECRET, "base_url": BASE_URL, **kwargs}
    with pytest.raises(paysdk.ConfigurationError) as caught:
        paysdk.Client(**options)
    assert SECRET.lower() not in str(caught.value).lower()  # a host name is quoted lower-cased
    monkeypatch.setenv("PAYSDK_SECRET_KEY", SECRET)
    with pytest.raises(paysdk.ConfigurationError) as caught:
        paysdk.Client(**{name: value for name, value in options.items() if name != "secret_key"})
    assert SECRET.lower() not in str(caught.value).lower()
    if "base_url" in kwargs:
        with paysdk.Client(secret_key=SECRET, base_url=BASE_URL) as client:
            with pytest.raises(paysdk.ConfigurationError) as caught:
                client.with_options(base_url=kwargs["base_url"])
            assert SECRET.lower() not in str(caught.value).lower()


@pytest.mark.parametrize(
    "base_url",
    [
        f"{BASE_URL}/{SECRET}",
        f"{BASE_URL}/{SECRET.upper()}",
        f"{BASE_URL}/{SECRET[:-1]}%{ord(SECRET[-1]):X}",
        f"{BASE_URL}/{SECRET[:-2]}%{ord(SECRET[-2]):X}{SECRET[-1]}",  # an upper-case R
    ],
    ids=["in-path", "other-case", "percent-encoded", "percent-encoded-letter"],
)
def test_a_base_url_holding_the_key_is_refused(
    base_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A valid URL with the key in its path would send the key in every request line and show
    it in the client's repr: refused, however the key was given, without quoting either."""
    with pytest.raises(paysdk.ConfigurationError, match="contains the secret key") as caught:
        paysdk.Client(secret_key=SECRET, base_url=base_url)
    assert SECRET.lower() not in str(caught.value).lower()
    monkeypatch.setenv("PAYSDK_SECRET_KEY", SECRET)
    monkeypatch.setenv("PAYSDK_BASE_URL", base_url)
    with pytest.raises(paysdk.ConfigurationError, match="contains the secret key"):
        paysdk.AsyncClient()
    refused = pytest.raises(paysdk.ConfigurationError, match="contains the secret key")
    with paysdk.Client(secret_key="sk_other_key_123", base_url=base_url) as client, refused:
        client.with_options(secret_key=SECRET)
    with paysdk.Client(secret_key=SECRET, base_url=BASE_URL) as client, refused:
        client.with_options(base_url=base_url)
    with paysdk.Client(secret_key=SECRET, base_url=BASE_URL) as client, refused:
        client.with_options(secret_key="sk_other_key_123", base_url=base_url)  # the original's


@pytest.mark.parametrize(
    ("key", "base_url"),
    [
        ("test", "https://api.paysdk.test"),
        ("localhost", "http://localhost:8000/v1"),
        ("127.0.0.1:8000", "http://127.0.0.1:8000"),
        ("payments-host", "https://payments-host.internal/v1"),
    ],
)
def test_a_key_found_by_chance_in_a_base_urls_host_or_port_is_not_refused(
    key: str, base_url: str
) -> None:
    """Only where a pasted key lands (path, query, user info) is looked in, for a key of eight
    characters or more: a short one, or a host or port, matches URLs that do not hold it."""
    with paysdk.Client(secret_key=key, base_url=base_url) as client:
        assert client.base_url == base_url.rstrip("/")
        assert client.with_options(timeout=5).base_url == client.base_url


def test_a_value_that_is_no_url_at_all_is_not_quoted_as_base_url(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """PAYSDK_BASE_URL holding the key (the two variables swapped) while the key is unset: the
    key is unknown, so the value is not quoted at all."""
    monkeypatch.setenv("PAYSDK_BASE_URL", SECRET)
    with pytest.raises(paysdk.ConfigurationError, match="absolute http") as caught:
        paysdk.Client()
    assert SECRET not in str(caught.value)


@pytest.mark.parametrize(
    "base_url",
    ["https://pay_api.internal:8443/v1", "https://api.pay.test./v1", "https://\u00fc.pay.test"],
    ids=["underscore", "final-dot", "idna"],
)
def test_host_names_a_resolver_takes_are_accepted(base_url: str) -> None:
    """Underscores (Docker's and Kubernetes' service names), the root's final dot and names
    in other scripts are host names; only characters no resolver takes are refused."""
    paysdk.Client(secret_key=SECRET, base_url=base_url).close()


@pytest.mark.parametrize("host", ["127.1", "0x7f.1", "2130706433", "127.0.0.1."])
@pytest.mark.parametrize("backend", ["sync", "httpx", "aiohttp"])
def test_an_ipv4_address_not_in_four_decimal_numbers_is_refused_before_any_request(
    host: str, backend: str
) -> None:
    """The resolver reads ``127.1``, ``0x7f.1`` and ``2130706433`` as 127.0.0.1 and httpx
    connects there, but aiohttp refuses them (and ``127.0.0.1.``), which a call would take for
    a failed connection and retry: every backend refuses them alike, saying the address.
    httpx before 0.26 refuses ``2130706433`` itself as a URL (``Invalid IPv4 address``): still
    refused before any request, in httpx's words."""
    base_url = f"http://{host}:8000"

    def make() -> object:
        if backend == "sync":
            return paysdk.Client(secret_key=SECRET, base_url=base_url, allow_insecure_http=True)
        return paysdk.AsyncClient(
            secret_key=SECRET,
            base_url=base_url,
            allow_insecure_http=True,
            http_backend="aiohttp" if backend == "aiohttp" else "httpx",
        )

    said = r"four decimal numbers \(127\.0\.0\.1\)|Invalid IPv4 address: '2130706433'"
    with pytest.raises(paysdk.ConfigurationError, match=said):
        make()


@pytest.mark.anyio
async def test_a_client_made_without_key_or_url_refuses_every_call_before_any_request(
    make_client: MakeClient, respx_mock: respx.MockRouter
) -> None:
    """Made at import time where the environment holds neither (a Django app's ``migrate``):
    made, and each call says what is missing; ``with_options`` can give both."""
    route = respx_mock.get(url__startswith=BASE_URL).respond(404, json=NOT_FOUND_BODY)
    client = make_client(secret_key=None, base_url=None)
    assert client.client.base_url == ""
    assert "base_url=<unset>" in repr(client.client)
    missing = "no secret key: pass secret_key=... or set PAYSDK_SECRET_KEY; no base URL"
    calls: list[Callable[[], Awaitable[Any]]] = [
        lambda: client.verify("order-1042"),
        lambda: client.list_payments(),
        lambda: client.drain(),
        lambda: client.confirm("order-1042", amount=100, currency="USD"),
        lambda: client.verify_callback("reference=order-1042", lookup=lambda _: ORDER),
    ]
    for call in calls:
        with pytest.raises(paysdk.ConfigurationError, match=missing):
            await call()
    with pytest.raises(paysdk.ConfigurationError, match=r"^no base URL: pass base_url"):
        await client.verify("order-1042", secret_key=SECRET)
    assert not route.called
    given = EitherClient(client.client.with_options(secret_key=SECRET, base_url=BASE_URL))
    with pytest.raises(paysdk.NotFoundError):
        await given.verify("order-1042")
    assert route.call_count == 1
    assert route.calls[0].request.headers["Authorization"] == f"Bearer {SECRET}"


def test_the_async_client_wants_an_async_http_client() -> None:
    with httpx.Client() as http, pytest.raises(paysdk.ConfigurationError, match="AsyncClient"):
        paysdk.AsyncClient(secret_key=SECRET, base_url=BASE_URL, http_client=http)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8000",
        "http://127.9.9.9",
        "http://localhost:5000/api",
        "http://[::1]:8080",
        "http://LOCALHOST:8000",
    ],
)
def test_plain_http_is_allowed_on_loopback(url: str) -> None:
    assert paysdk.Client(secret_key=SECRET, base_url=url).base_url == url.rstrip("/")


@pytest.mark.parametrize("host", ["sandbox.localhost", "app.LOCALHOST", "localhost.example.com"])
def test_plain_http_to_a_name_a_resolver_may_send_anywhere_needs_the_opt_in(host: str) -> None:
    """Browsers keep names under ``.localhost`` on the machine; Python's resolver looks them up
    as any other (glibc asks DNS for a name ``/etc/hosts`` does not hold), so the key would go
    in clear wherever a DNS answer points. ``verify=False`` is refused for them alike."""
    with pytest.raises(
        paysdk.ConfigurationError, match="refusing to send the secret key"
    ) as caught:
        paysdk.Client(secret_key=SECRET, base_url=f"http://{host}:8000")
    assert ("looked up as any other" in str(caught.value)) is host.lower().endswith(".localhost")
    with pytest.raises(paysdk.ConfigurationError, match="verify=False"):
        paysdk.Client(secret_key=SECRET, base_url=f"https://{host}:8443", verify=False)
    allowed = paysdk.Client(
        secret_key=SECRET, base_url=f"http://{host}:8000", allow_insecure_http=True
    )
    assert allowed.base_url == f"http://{host}:8000"


def test_plain_http_elsewhere_needs_an_explicit_opt_in() -> None:
    client = paysdk.Client(
        secret_key=SECRET, base_url="http://payments.internal", allow_insecure_http=True
    )
    assert client.base_url == "http://payments.internal"


def test_bad_per_call_options_are_refused() -> None:
    client = paysdk.Client(secret_key=SECRET, base_url=BASE_URL)
    with pytest.raises(paysdk.ConfigurationError, match="max_retries"):
        client.verify("order-1042", max_retries=-2)
    with pytest.raises(paysdk.ConfigurationError, match="unknown option"):
        client.verify("order-1042", retries=3)  # type: ignore[call-arg]
    with pytest.raises(paysdk.ConfigurationError, match="timeout"):
        client.with_options(timeout=0)


@pytest.mark.parametrize("setting", ["timeout", "deadline", "max_retries", "max_response_bytes"])
@pytest.mark.parametrize(
    "number", [10**5000, -(10**5000), 10**4000], ids=["huge", "negative", "4001-digits"]
)
def test_a_setting_of_thousands_of_digits_is_refused_in_a_short_message(
    setting: str, number: int
) -> None:
    """Python will not write an int of over 4,300 digits as text; one it will is cut."""
    options: dict[str, Any] = {setting: number}
    with pytest.raises(paysdk.ConfigurationError, match=f"^{setting} must be") as caught:
        paysdk.Client(secret_key=SECRET, base_url=BASE_URL, **options)
    assert len(str(caught.value)) < 200
    client = paysdk.Client(secret_key=SECRET, base_url=BASE_URL)
    with pytest.raises(paysdk.ConfigurationError, match=setting):
        client.with_options(**options)
    if setting != "max_response_bytes":
        with pytest.raises(paysdk.ConfigurationError, match=setting) as per_call:
            client.verify("order-1042", **options)
        assert len(str(per_call.value)) < 200


def test_an_option_of_thousands_of_digits_where_another_kind_goes_is_refused_saying_so() -> None:
    huge = 10**5000
    options: dict[str, Any] = {"secret_key": SECRET, "base_url": BASE_URL}
    for name in ("pause_gc", "http_backend"):
        with pytest.raises(paysdk.ConfigurationError, match="not an integer of over 4,300"):
            paysdk.Client(**{**options, name: huge})
    with (
        paysdk.Client(**options) as client,
        pytest.raises(paysdk.ConfigurationError, match="got an integer of over 4,300 digits"),
    ):
        client.verify_many(["order-1042"], concurrency=huge)
    with pytest.raises(paysdk.ConfigurationError, match="got an integer of over 4,300 digits"):
        paysdk.Expected(amount=5, currency=huge)  # type: ignore[arg-type]


def test_repr_shows_where_but_not_the_key() -> None:
    client = paysdk.Client(secret_key=SECRET, base_url=BASE_URL)
    assert repr(client) == (
        f"<paysdk.Client base_url='{BASE_URL}' max_retries=2 secret_key=<hidden>>"
    )


def test_importing_paysdk_loads_no_optional_parts() -> None:
    code = (
        "import sys, paysdk\n"
        "heavy = ['paysdk.sandbox', 'paysdk.cli', 'paysdk.integrations', 'paysdk.testing',"
        " 'respx', 'anyio', 'django',"
        " 'flask', 'starlette', 'fastapi', 'hypothesis']\n"
        "print([name for name in heavy if name in sys.modules])\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


def _modules_after(code: str) -> list[str]:
    """The paysdk modules a fresh interpreter has loaded after running ``code``."""
    script = f"import sys\n{code}\nprint(sorted(m for m in sys.modules if m.startswith('paysdk')))"
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    return ast.literal_eval(result.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def test_names_load_their_own_modules_and_the_engine_comes_with_the_first_client() -> None:
    loaded_with_the_package = [
        "paysdk",
        "paysdk._lazy",
        "paysdk._parsing",
        "paysdk._parsing.gcpause",  # counts what the interpreter froze before the application
        "paysdk._version",
    ]
    assert _modules_after("import paysdk") == loaded_with_the_package
    assert _modules_after(
        "import paysdk; paysdk.Client; paysdk.AsyncClient; paysdk.VerifiedPayment"
    ) == [
        "paysdk",
        "paysdk._client",
        "paysdk._client._async",
        "paysdk._client._async.client",
        "paysdk._client._sync",
        "paysdk._client._sync.client",
        "paysdk._client._twins",
        "paysdk._client.base",
        "paysdk._client.options",
        "paysdk._client.unpicklable",
        "paysdk._core",
        "paysdk._core.closing",
        "paysdk._lazy",
        "paysdk._models",
        "paysdk._models.blotting",
        "paysdk._models.verified",
        "paysdk._models.wire",
        "paysdk._parsing",
        "paysdk._parsing.gcpause",
        "paysdk._version",
    ]
    with_client = _modules_after(
        f"import paysdk; paysdk.Client(secret_key={SECRET!r}, base_url={BASE_URL!r})"
    )
    assert {"paysdk._core", "paysdk._transport.httpx_sync", "paysdk._models.verified"} <= set(
        with_client
    )
    assert "paysdk._models.listed" not in with_client  # a verify-only process never builds it
    assert "paysdk._transport.httpx_async" not in with_client
    event_loop = subprocess.run(
        [sys.executable, "-c", f"import sys, paysdk; paysdk.Client(secret_key={SECRET!r}, "
         f"base_url={BASE_URL!r}); print('asyncio' in sys.modules)"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert event_loop.stdout.strip() == "False"  # a sync client never loads asyncio


def test_a_callback_handler_s_names_load_only_their_own_part_of_the_core() -> None:
    # parse_callback and Expected are all a hand-written callback handler may need before it
    # makes a client: the plans, parsers and transports stay unloaded.
    assert _modules_after("import paysdk; paysdk.parse_callback") == [
        "paysdk",
        "paysdk._core",
        "paysdk._core.callbacks",
        "paysdk._core.references",
        "paysdk._errors",
        "paysdk._errors.api",
        "paysdk._errors.base",
        "paysdk._errors.caller",
        "paysdk._errors.connection",
        "paysdk._errors.verification",
        "paysdk._lazy",
        "paysdk._parsing",
        "paysdk._parsing.gcpause",
        "paysdk._version",
    ]
    expected = _modules_after("import paysdk; paysdk.Expected")
    assert "paysdk._core.expected" in expected
    parsers = {"paysdk._parsing.batches", "paysdk._parsing.decoding", "paysdk._parsing.stream"}
    assert not {"paysdk._core.plans", "paysdk._transport", *parsers} & set(expected)


def test_every_exported_name_resolves_once_and_dir_lists_them() -> None:
    for name in paysdk.__all__:
        value = getattr(paysdk, name)
        assert vars(paysdk)[name] is value  # kept: the next lookup skips __getattr__
    assert dir(paysdk) == sorted(paysdk.__all__)  # not what the module imports to work
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        paysdk.Nope  # noqa: B018


# --- verify= and proxy=: checked when the client is made ------------------------------------


def _made(**options: Any) -> paysdk.Client:
    options.setdefault("secret_key", SECRET)
    options.setdefault("base_url", "https://api.pay.test/v1")
    return paysdk.Client(**options)


@pytest.mark.parametrize(
    ("verify", "message"),
    [
        ("/nowhere/ca-bundle.pem", "names no CA bundle"),
        (1, "verify must be True"),
        (b"/etc/ssl", "verify must be True"),
    ],
)
def test_a_verify_that_cannot_be_a_trust_store_is_refused(verify: object, message: str) -> None:
    with pytest.raises(paysdk.ConfigurationError, match=message):
        _made(verify=verify)


def test_a_file_that_is_no_ca_bundle_is_refused(tmp_path: Path) -> None:
    bundle = tmp_path / "ca.pem"
    bundle.write_text("not a certificate")
    with pytest.raises(paysdk.ConfigurationError, match="cannot be loaded as a CA bundle"):
        _made(verify=bundle)


def test_verify_false_is_refused_but_for_a_loopback_service() -> None:
    with pytest.raises(paysdk.ConfigurationError, match="loopback") as caught:
        _made(verify=False)
    assert SECRET not in str(caught.value)
    _made(verify=False, base_url="https://127.0.0.1:8443").close()
    _made(verify=False, base_url="https://localhost:8443").close()


def test_verify_and_proxy_belong_to_the_connections_paysdk_makes() -> None:
    with httpx.Client() as http, pytest.raises(paysdk.ConfigurationError, match="http_client"):
        _made(http_client=http, proxy="http://proxy.corp:3128")
    with httpx.Client() as http, pytest.raises(paysdk.ConfigurationError, match="http_client"):
        _made(http_client=http, verify=ssl.create_default_context())


def test_an_http_client_of_the_other_kind_is_refused_by_its_full_name() -> None:
    httpx_name = httpx.__name__  # httpx2 where it stands in for httpx (alias_httpx())
    with pytest.raises(paysdk.ConfigurationError) as caught:
        _made(http_client=httpx.AsyncClient())  # unused, so it holds no connection to close
    assert str(caught.value) == (
        f"Client needs http_client to be an {httpx_name}.Client, not {httpx_name}.AsyncClient"
    )


@pytest.mark.parametrize("proxy", ["socks5://proxy:1080", "http://:3128", 3128])
def test_a_proxy_paysdk_cannot_use_is_refused_when_the_client_is_made(proxy: object) -> None:
    with pytest.raises(paysdk.ConfigurationError, match="proxy"):
        _made(proxy=proxy)


def test_the_proxys_password_is_never_shown() -> None:
    client = _made(proxy="http://ops:hunter2-secret@proxy.corp:3128")
    network = network_of(client)
    assert "hunter2" not in repr(client) + repr(network)
    client.close()


@pytest.mark.parametrize("value", ["gzip", "identity", "deflate, gzip;q=0.5", "gzip, br;q=0"])
def test_an_accept_encoding_of_codings_paysdk_reads_is_sent_as_given(value: str) -> None:
    with respx.mock(base_url=BASE_URL) as router:
        route = router.get("/payment/order-1042").respond(200, json=verify_body())
        with paysdk.Client(
            secret_key=SECRET, base_url=BASE_URL, default_headers={"Accept-Encoding": value}
        ) as client:
            client.verify("order-1042")
            with pytest.raises(paysdk.ConfigurationError, match="offers br"):
                client.verify("order-1042", extra_headers={"Accept-Encoding": "br"})
    assert [call.request.headers["accept-encoding"] for call in route.calls] == [value]


def _unchecked(value: object) -> Any:
    """``value``, typed as anything: a setting no signature allows."""
    return value


def _paysdk_locals_holding(key: str, exc: BaseException) -> list[str]:
    """The locals of paysdk's frames in ``exc``'s traceback (and the ones it was raised from)
    that hold ``key``, as a debug page (Django's, ``DEBUG = True``) walks and shows them."""
    found: list[str] = []
    shown: BaseException | None = exc
    while shown is not None:
        tb = shown.__traceback__
        while tb is not None:
            frame = tb.tb_frame
            if "paysdk" in frame.f_code.co_filename:
                found += [
                    f"{frame.f_code.co_name}:{name}"
                    for name, value in frame.f_locals.items()
                    if key in repr(value)
                ]
            tb = tb.tb_next
        shown = shown.__cause__ or (None if shown.__suppress_context__ else shown.__context__)
    return found


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda key: paysdk.Client(secret_key=key, base_url="ftp://x"), id="url"),
        pytest.param(
            lambda key: paysdk.Client(secret_key=key, base_url=BASE_URL, timeout=-1), id="timeout"
        ),
        pytest.param(
            lambda key: paysdk.Client(secret_key=key + "\n", base_url=BASE_URL), id="newline"
        ),
        pytest.param(
            lambda key: paysdk.Client(
                secret_key=key, base_url=BASE_URL, http_backend=_unchecked("curl")
            ),
            id="backend",
        ),
        pytest.param(
            lambda key: paysdk.Client(
                secret_key=key, base_url=BASE_URL, http_client=_unchecked(object())
            ),
            id="http_client",
        ),
        pytest.param(
            lambda key: paysdk.AsyncClient(secret_key=f'"{key}"', base_url=BASE_URL), id="quoted"
        ),
        pytest.param(
            lambda key: paysdk.Client(secret_key=SECRET, base_url=BASE_URL).with_options(
                secret_key=key + "\n"
            ),
            id="with_options",
        ),
        pytest.param(
            lambda key: paysdk.Client(secret_key=SECRET, base_url=BASE_URL).verify(
                "order-1", secret_key=f"'{key}'"
            ),
            id="per_call",
        ),
    ],
)
def test_a_refused_setting_leaves_the_key_in_no_local_of_paysdk_s_frames(
    make: Callable[[str], object],
) -> None:
    """A key read with its file's newline, or its quotes, is refused: the frames the error
    passes through (a debug page shows their locals) hold the key in none of them."""
    key = "sk_test_0123456789abcdefghij"
    with pytest.raises(paysdk.ConfigurationError) as raised:
        make(key)
    assert _paysdk_locals_holding(key, raised.value) == []


def test_a_body_cap_past_a_tib_is_refused_naming_the_range() -> None:
    largest = 2**40
    with paysdk.Client(secret_key=SECRET, base_url=BASE_URL, max_response_bytes=largest) as client:
        assert client.with_options(max_response_bytes=1) is not client
    for refused in (largest + 1, 0, 2**70):
        with pytest.raises(paysdk.ConfigurationError) as caught:
            paysdk.Client(secret_key=SECRET, base_url=BASE_URL, max_response_bytes=refused)
        assert str(caught.value) == (
            "max_response_bytes must be a whole number of bytes from 1 to 1 TiB (2**40), "
            f"or None, got {refused}"
        )

"""The core's settings value: Config, paysdk's own Timeout, and the headers that hold the key."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from paysdk import _core
from paysdk._core.config import SecretHeaders, secret_key_in
from tests.conftest import SECRET, listed_body, make_config, verify_body


def test_a_header_named_twice_in_any_case_is_one_entry_with_both_values() -> None:
    headers = SecretHeaders({"User-Agent": "paysdk/1", "X-Trace": "0", "user-agent": "shop/1.4"})
    assert dict(headers) == {"user-agent": "paysdk/1, shop/1.4", "x-trace": "0"}


def test_secret_headers_are_looked_up_in_any_case() -> None:
    headers = SecretHeaders({"Authorization": f"Bearer {SECRET}"})
    assert headers["AUTHORIZATION"] == headers["authorization"] == f"Bearer {SECRET}"
    assert headers.get("Authorization") == f"Bearer {SECRET}"
    assert headers.get("X-Missing", "none") == "none"
    assert "Authorization" in headers
    assert 1 not in headers  # type: ignore[comparison-overlap]


@pytest.mark.parametrize("name", ["Authorization", "authorization"])
def test_the_key_is_read_from_headers_in_either_case(name: str) -> None:
    assert secret_key_in({name: f"Bearer {SECRET}"}) == SECRET
    assert secret_key_in(SecretHeaders({name: f"Bearer {SECRET}"})) == SECRET
    assert secret_key_in({"Accept": "application/json"}) == ""


def test_request_headers_mask_the_key_in_any_repr() -> None:
    config = make_config(timeout=5, max_retries=0)
    request = _core.verify_request(config, "order-1")
    assert SECRET not in repr(request.headers)
    assert SECRET not in repr(request)
    assert "url='https://" in repr(request)


@pytest.mark.parametrize(
    ("timeout", "budget"),
    [(httpx.Timeout(30, connect=5), 30), (httpx.Timeout(2, read=7), 7), (None, None)],
)
def test_attempt_budget_is_the_longest_phase(timeout: Any, budget: float | None) -> None:
    config = make_config(timeout=timeout, max_retries=0)
    assert config.attempt_budget == budget
    assert _core.verify_request(config, "order-1").budget == budget


@pytest.mark.parametrize(
    ("spelled", "same"),
    [
        ("HTTPS://Pay.Example.COM/v1/", "https://pay.example.com/v1"),
        ("https://pay.example.com:443/v1", "https://pay.example.com/v1"),
        ("https://pay.example.com./v1", "https://pay.example.com/v1"),
        ("http://[::1]:8321/", "http://[::1]:8321"),
    ],
)
def test_the_account_fingerprint_is_the_same_however_the_base_url_is_spelled(
    spelled: str, same: str
) -> None:
    assert make_config(base_url=spelled).issuer == make_config(base_url=same).issuer


@pytest.mark.parametrize(
    "other",
    ["https://pay.example.com:8443/v1", "https://pay.example.com/V1", "http://pay.example.com/v1"],
)
def test_another_port_path_or_scheme_is_another_account(other: str) -> None:
    assert make_config(base_url=other, allow_insecure_http=True).issuer != (
        make_config(base_url="https://pay.example.com/v1").issuer
    )


@pytest.mark.parametrize(
    ("escape", "key"),
    [
        (lambda body: body, "sk_live_a/b+c=="),
        (lambda body: body.replace("/", "\\/"), "sk_live_a/b+c=="),  # PHP's json_encode
        (  # Go's encoding/json
            lambda body: (
                body.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            ),
            "sk_live_<a>&b",
        ),
        (lambda body: body, "sk_live_it's\\a\"b"),  # JSON's own \\ and \"
        (lambda body: body.replace("'", "\\u0027"), "sk_live_it's"),  # PHP's JSON_HEX_APOS
        (  # .NET's System.Text.Json
            lambda body: "".join(
                f"\\u{ord(char):04X}" if char in "<>&'+`" else char for char in body
            ).replace('\\"', "\\u0022"),
            "sk_live_'a'+`b`<c>&\"",
        ),
    ],
    ids=["as-sent", "php", "go", "json-quoted", "php-apos", "dotnet"],
)
def test_a_key_echoed_in_a_body_is_found_as_json_encoders_write_it(
    escape: Callable[[str], str], key: str
) -> None:
    """The key a server echoes is found however its JSON encoder writes it unasked, so a
    payment read from that body blots it out of its ``repr``."""
    config = make_config(secret_key=key)
    content = escape(json.dumps(verify_body("order-1", echo=f"Bearer {key}"))).encode()
    verified = _core.verified("order-1", config)(_core.Answer(200, {}, content))
    assert verified.model_extra is not None
    assert verified.model_extra["echo"] == f"Bearer {key}"
    for written in (repr(verified), str(verified)):  # the key as given, and as a repr quotes it
        assert "<secret key>" in written
        assert key not in written and repr(key)[1:-1] not in written
        assert key.replace("\\", "\\\\").replace("'", "\\'") not in written
    assert config.echoes_key(content)
    assert not config.echoes_key(content.replace(b"sk_live", b"sk_test"))
    scrubbed = config.scrub(content.decode())  # an error's text: the body as sent
    assert "sk_live" not in scrubbed and "Bearer <secret key>" in scrubbed


def test_a_key_too_short_to_blot_is_not_looked_for() -> None:
    """As ``scrub`` leaves a key under four characters: blotting it would blot common words."""
    assert not make_config(secret_key="abc").echoes_key(b'{"abc": 1}')


def test_a_payment_whose_repr_blots_the_key_equals_the_same_payment_read_otherwise() -> None:
    """Blotting is the repr's business: the payments (and their customers) read from a body
    with a client whose key it echoes equal those read with another client's."""
    echoing = make_config()
    other = make_config(secret_key="sk_test_another_key_entirely")
    customer = {"name": f"Bearer {SECRET}"}
    content = json.dumps({"data": [listed_body("order-1", customer=customer)]}).encode()
    (blotted,), (plain,) = _core.listed(echoing)(content), _core.listed(other)(content)
    assert SECRET not in repr(blotted) and SECRET in repr(plain)
    assert blotted == plain and plain == blotted
    assert blotted.customer == plain.customer
    assert blotted != _core.listed(other)(content.replace(b"order-1", b"order-2"))[0]

"""The sandbox speaks the specification's wire format: field tables, error bodies, auth, paths."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import socket
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest

from paysdk.sandbox import (
    COMPLETED_REFERENCE,
    FAILED_REFERENCE,
    NON_CARD_REFERENCE,
    UNKNOWN_REFERENCE,
    PaymentRecord,
    Sandbox,
    SeedError,
    default_payments,
    load_seed,
)

# The specification's field tables: field -> JSON type (as the Python type json.loads gives).
VERIFY_FIELDS = {
    "reference": str,
    "transaction_id": str,
    "amount": int,
    "fee": int,
    "currency": str,
    "success": bool,
    "customer": dict,
    "products": list,
    "metadata": dict,
    "authorization": dict,
}
LIST_FIELDS = {
    "id": str,
    "reference": str,
    "amount": int,
    "fee": int,
    "status": str,
    "customer_paid": bool,
    "currency": str,
    "customer": dict,
    "products": list,
    "created_at": str,
    "updated_at": str,
}
CUSTOMER_FIELDS = {"name": str, "email": str, "phone": str}
PRODUCT_FIELDS = {"name": str, "amount": int, "description": str}
AUTHORIZATION_FIELDS = {"card_type": str, "first_six": str, "last_four": str, "expiry": str}
NOT_IN_LIST = {"transaction_id", "success", "metadata", "authorization"}
NOT_IN_VERIFY = {"id", "status", "customer_paid", "created_at", "updated_at"}
TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z")
SHARED = ("reference", "amount", "fee", "currency", "customer", "products")


@pytest.fixture
def http(sandbox: Sandbox) -> Iterator[httpx.Client]:
    """A plain HTTP client that sends the sandbox's key: the wire, with no SDK in between."""
    headers = {"Authorization": f"Bearer {sandbox.secret_key}"}
    with httpx.Client(base_url=sandbox.base_url, headers=headers, trust_env=False) as client:
        yield client


def assert_fields(obj: dict[str, Any], table: Mapping[str, type]) -> None:
    assert set(obj) == set(table)
    for name, kind in table.items():
        assert type(obj[name]) is kind, f"{name} is {type(obj[name]).__name__}, not {kind}"


def list_status(sandbox: Sandbox, headers: dict[str, str]) -> int:
    return httpx.get(sandbox.base_url + "/payments", headers=headers, trust_env=False).status_code


def verify_data(http: httpx.Client, reference: str) -> dict[str, Any]:
    response = http.get(f"/payment/{reference}")
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"status", "message", "data"}
    assert body["status"] is True
    assert isinstance(body["message"], str)
    data: dict[str, Any] = body["data"]
    return data


def test_seed_covers_the_cases_demos_rely_on() -> None:
    seed = {record.reference: record for record in default_payments()}
    assert 6 <= len(seed) <= 12
    assert seed[COMPLETED_REFERENCE].status == "COMPLETED"
    assert seed[COMPLETED_REFERENCE].authorization is not None
    assert seed[COMPLETED_REFERENCE].currency == "NGN"
    assert seed[FAILED_REFERENCE].status == "FAILED"
    assert seed[NON_CARD_REFERENCE].status == "COMPLETED"
    assert seed[NON_CARD_REFERENCE].authorization is None
    assert UNKNOWN_REFERENCE not in seed
    assert {"NGN", "USD", "GHS", "KES"} <= {record.currency for record in seed.values()}
    assert {r.authorization is None for r in seed.values() if r.status == "FAILED"} == {True, False}


def test_verify_shape_matches_the_spec_for_every_payment(
    sandbox: Sandbox, http: httpx.Client
) -> None:
    for record in sandbox.payments:
        data = verify_data(http, record.reference)
        card = record.authorization is not None
        expected = (
            VERIFY_FIELDS
            if card
            else {k: v for k, v in VERIFY_FIELDS.items() if k != "authorization"}
        )
        assert_fields(data, expected)
        assert not NOT_IN_VERIFY & set(data)
        assert_fields(data["customer"], CUSTOMER_FIELDS)
        assert data["products"]
        for product in data["products"]:
            assert_fields(product, PRODUCT_FIELDS)
        if card:
            authorization = data["authorization"]
            assert_fields(authorization, AUTHORIZATION_FIELDS)
            assert authorization["card_type"] == authorization["card_type"].lower()
            assert re.fullmatch(r"\d{6}", authorization["first_six"])
            assert re.fullmatch(r"\d{4}", authorization["last_four"])
            assert re.fullmatch(r"(0[1-9]|1[0-2])/\d\d", authorization["expiry"])


def test_list_shape_matches_the_spec(http: httpx.Client) -> None:
    response = http.get("/payments")
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"data"}
    assert len(body["data"]) == len(default_payments())
    for item in body["data"]:
        assert_fields(item, LIST_FIELDS)
        assert not NOT_IN_LIST & set(item)
        assert str(uuid.UUID(item["id"])) == item["id"]
        assert item["status"] in ("COMPLETED", "FAILED")
        assert TIMESTAMP.fullmatch(item["created_at"])
        assert TIMESTAMP.fullmatch(item["updated_at"])
        assert item["updated_at"] >= item["created_at"]
        assert_fields(item["customer"], CUSTOMER_FIELDS)
        for product in item["products"]:
            assert_fields(product, PRODUCT_FIELDS)


def test_both_shapes_agree(http: httpx.Client) -> None:
    listed = http.get("/payments").json()["data"]
    for item in listed:
        data = verify_data(http, item["reference"])
        assert {k: data[k] for k in SHARED} == {k: item[k] for k in SHARED}
        assert data["success"] is item["customer_paid"] is (item["status"] == "COMPLETED")


def test_list_is_newest_first(http: httpx.Client) -> None:
    created = [item["created_at"] for item in http.get("/payments").json()["data"]]
    assert created == sorted(created, reverse=True)


def test_list_is_newest_first_in_the_hour_the_clocks_go_back(
    sandbox: Sandbox, http: httpx.Client
) -> None:
    """Python orders two times of one zone by their clocks: the second 01:10 of the night
    New York's clocks go back (06:10 UTC) is still listed before the first 01:30 (05:30 UTC)."""
    new_york = ZoneInfo("America/New_York")
    sandbox.add_payment("order-first", created_at=dt.datetime(2026, 11, 1, 1, 30, tzinfo=new_york))
    sandbox.add_payment(
        "order-second", created_at=dt.datetime(2026, 11, 1, 1, 10, fold=1, tzinfo=new_york)
    )
    listed = [item["reference"] for item in http.get("/payments").json()["data"]]
    assert listed.index("order-second") < listed.index("order-first")


def test_unknown_reference_is_the_documented_404(http: httpx.Client) -> None:
    response = http.get(f"/payment/{UNKNOWN_REFERENCE}")
    assert response.status_code == 404
    assert response.headers["content-type"] == "application/json"
    assert response.json() == {
        "success": False,
        "error": "Error in request",
        "message": "reference not found",
    }


@pytest.mark.parametrize("path", ["/payments", f"/payment/{COMPLETED_REFERENCE}"])
@pytest.mark.parametrize(
    "authorization", [None, "Bearer wrong", "Basic xyz", "Bearer", "sk_no_scheme"]
)
def test_missing_or_wrong_key_is_401(
    sandbox: Sandbox, path: str, authorization: str | None
) -> None:
    headers = {} if authorization is None else {"Authorization": authorization}
    response = httpx.get(sandbox.base_url + path, headers=headers, trust_env=False)
    assert response.status_code == 401
    assert response.json() == {
        "success": False,
        "error": "Unauthorized",
        "message": "invalid or missing secret key",
    }


def test_bearer_scheme_is_case_insensitive(sandbox: Sandbox) -> None:
    headers = {"Authorization": f"bearer {sandbox.secret_key}"}
    assert list_status(sandbox, headers) == 200


@pytest.mark.parametrize(
    ("raw", "reference"),
    [
        ("a%2Fb", "a/b"),
        ("..%2Fpayments", "../payments"),
        ("a%3Fb%3Dc", "a?b=c"),
        ("a%23b", "a#b"),
        ("100%25", "100%"),
        ("caf%C3%A9", "café"),
    ],
)
def test_the_reference_segment_is_percent_decoded_once(
    sandbox: Sandbox, http: httpx.Client, raw: str, reference: str
) -> None:
    sandbox.add_payment(reference, amount=777)
    data = verify_data(http, raw)
    assert data["reference"] == reference
    assert data["amount"] == 777


def test_double_encoding_is_decoded_only_once(sandbox: Sandbox, http: httpx.Client) -> None:
    sandbox.add_payment("a/b")
    assert http.get("/payment/a%252Fb").status_code == 404  # looks up "a%2Fb", not "a/b"
    sandbox.add_payment("a%2Fb")
    assert verify_data(http, "a%252Fb")["reference"] == "a%2Fb"


@pytest.mark.parametrize(
    "path", ["/", "/payment", "/payment/", "/payment/a/b", "/payments/", "/v1/payments", "/x"]
)
def test_other_paths_are_a_plain_404(sandbox: Sandbox, http: httpx.Client, path: str) -> None:
    sandbox.add_payment("a/b")
    response = http.get(path)
    assert response.status_code == 404
    assert response.json()["error"] == "Not Found"


def test_the_query_string_is_ignored(http: httpx.Client) -> None:
    assert verify_data(http, f"{COMPLETED_REFERENCE}?x=1")["reference"] == COMPLETED_REFERENCE
    assert len(http.get("/payments?page=2&status=FAILED").json()["data"]) == 8


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE"])
@pytest.mark.parametrize("path", ["/payments", f"/payment/{COMPLETED_REFERENCE}"])
def test_other_methods_are_405(http: httpx.Client, method: str, path: str) -> None:
    response = http.request(method, path, content=b"{}")
    assert response.status_code == 405
    assert response.headers["allow"] == "GET"
    assert response.json()["error"] == "Method Not Allowed"


def test_added_payments_render_in_both_shapes(sandbox: Sandbox, http: httpx.Client) -> None:
    record = sandbox.add_payment("shop-9", amount=1500, currency="USD", status="FAILED", fee=45)
    data = verify_data(http, "shop-9")
    assert data == record.verify_shape()
    assert (data["success"], data["amount"], data["currency"]) == (False, 1500, "USD")
    assert "authorization" not in data
    listed = {item["reference"]: item for item in http.get("/payments").json()["data"]}
    assert listed["shop-9"]["status"] == "FAILED"
    assert listed["shop-9"]["customer_paid"] is False
    sandbox.remove_payment("shop-9")
    assert http.get("/payment/shop-9").status_code == 404


def test_records_are_stable_and_round_trip() -> None:
    record = PaymentRecord("r-1", created_at=dt.datetime(2026, 1, 2, 3, 4, 5, 6, dt.timezone.utc))
    assert record.id == PaymentRecord("r-1").id  # derived from the reference
    assert record.transaction_id == PaymentRecord("r-1").transaction_id
    assert record.list_shape()["created_at"] == "2026-01-02T03:04:05.000006Z"
    assert PaymentRecord.from_json(record.to_json()) == record


@pytest.mark.parametrize("reference", ["r-1", "order-1042", "naïve-€-参考", "x" * 300])
def test_a_records_derived_ids_are_the_same_as_every_earlier_run_s(reference: str) -> None:
    """A seed file written before renders the same ids: the UUID 5 of the reference in the URL
    namespace, and the transaction id from its SHA-256."""
    record = PaymentRecord(reference)
    assert record.id == str(uuid.uuid5(uuid.NAMESPACE_URL, f"paysdk-sandbox:{reference}"))
    assert uuid.UUID(record.id).version == 5
    digest = hashlib.sha256(reference.encode()).hexdigest()
    assert record.transaction_id == f"txn_{digest[:20]}"


# --- seed files -------------------------------------------------------------------------------


def write_seed(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "seed.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_a_seed_file_replaces_the_bundled_payments(tmp_path: Path) -> None:
    records = [
        {
            "reference": "inv-1",
            "amount": 100,
            "currency": "KES",
            "status": "COMPLETED",
            "authorization": {
                "card_type": "visa",
                "first_six": "411111",
                "last_four": "1111",
                "expiry": "01/30",
            },
            "created_at": "2026-01-01T00:00:00.000000Z",
        },
        {"reference": "inv-2", "status": "FAILED"},
    ]
    payments = load_seed(write_seed(tmp_path, records))
    with Sandbox(payments=payments) as sb:
        response = httpx.get(
            f"{sb.base_url}/payments",
            headers={"Authorization": f"Bearer {sb.secret_key}"},
            trust_env=False,
        )
    assert {item["reference"] for item in response.json()["data"]} == {"inv-1", "inv-2"}


def test_the_bundled_seed_is_a_valid_seed_file(tmp_path: Path) -> None:
    bundled = [record.to_json() for record in default_payments()]
    assert load_seed(write_seed(tmp_path, bundled)) == default_payments()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"reference": "x"}, "expected a JSON array"),
        ([{"amount": 1}], "record 0: missing field reference"),
        ([{"reference": "x", "amount": "10"}], "record 0: amount must be a non-negative integer"),
        ([{"reference": "x", "amount": True}], "amount must be a non-negative integer"),
        ([{"reference": "x", "fee": -1}], "fee must be a non-negative integer"),
        ([{"reference": "x", "colour": "red"}], "unknown field(s) colour"),
        ([{"reference": "x"}, {"reference": "x"}], "record 1: duplicate reference 'x'"),
        ([{"reference": "x", "customer": {"name": "A"}}], "customer must be an object"),
        ([{"reference": "x", "products": [{"name": "A"}]}], "products[0] must be an object"),
        (
            [
                {
                    "reference": "x",
                    "authorization": {
                        "card_type": "VISA",
                        "first_six": "411111",
                        "last_four": "1111",
                        "expiry": "01/30",
                    },
                }
            ],
            "authorization.card_type",
        ),
        (
            [
                {
                    "reference": "x",
                    "authorization": {
                        "card_type": "visa",
                        "first_six": "411111",
                        "last_four": "1111",
                        "expiry": "13/30",
                    },
                }
            ],
            "authorization.expiry",
        ),
        (  # Arabic-Indic digits, which a regular expression's \d matches
            [
                {
                    "reference": "x",
                    "authorization": {
                        "card_type": "visa",
                        "first_six": "\u0664\u0661\u0661\u0661\u0661\u0661",
                        "last_four": "1111",
                        "expiry": "01/30",
                    },
                }
            ],
            "authorization.first_six",
        ),
        ([{"reference": "x", "created_at": "yesterday"}], "created_at must be an ISO 8601"),
        ([{"reference": "x", "created_at": "2026-01-01T00:00:00"}], "with a timezone"),
        # read by fromisoformat on Python 3.11 and later alone: refused on every Python
        ([{"reference": "x", "created_at": "2026-W45-1T00:00Z"}], "created_at must be an ISO 8601"),
        ([{"reference": "x", "created_at": "20261106T081527Z"}], "created_at must be an ISO 8601"),
        ([{"reference": ""}], "reference must be a non-empty string"),
        (["order-1"], "must be a JSON object"),
    ],
)
def test_a_bad_seed_file_says_what_is_wrong(tmp_path: Path, data: object, message: str) -> None:
    path = write_seed(tmp_path, data)
    with pytest.raises(SeedError, match=re.escape(message)) as caught:
        load_seed(path)
    assert str(path) in str(caught.value)


def test_an_unreadable_seed_file_is_a_seed_error(tmp_path: Path) -> None:
    with pytest.raises(SeedError, match="cannot read seed file"):
        load_seed(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("[{", encoding="utf-8")
    with pytest.raises(SeedError, match="not valid JSON"):
        load_seed(tmp_path / "bad.json")


# --- lifecycle --------------------------------------------------------------------------------


def test_start_and_stop_release_the_port() -> None:
    with Sandbox(secret_key="sk_test_fixed") as sb:
        assert sb.secret_key == "sk_test_fixed"
        assert sb.base_url == f"http://127.0.0.1:{sb.port}"
        assert sb.running
        port = sb.port
        headers = {"Authorization": "Bearer sk_test_fixed"}
        assert list_status(sb, headers) == 200
    assert not sb.running
    with pytest.raises(ConnectionRefusedError), socket.create_connection(("127.0.0.1", port)):
        pass
    with socket.socket() as probe:  # the port is free to bind again
        probe.bind(("127.0.0.1", port))


def test_stop_drops_kept_alive_connections_and_can_restart(sandbox: Sandbox) -> None:
    headers = {"Authorization": f"Bearer {sandbox.secret_key}"}
    with httpx.Client(base_url=sandbox.base_url, headers=headers, trust_env=False) as client:
        assert client.get("/payments").status_code == 200  # a pooled keep-alive connection
        sandbox.stop()
        with pytest.raises(httpx.TransportError):
            client.get("/payments")
    sandbox.start()
    assert list_status(sandbox, headers) == 200


def test_generated_keys_are_unique_and_port_is_only_known_while_running() -> None:
    first, second = Sandbox(), Sandbox()
    assert first.secret_key != second.secret_key
    assert first.secret_key.startswith("sk_sandbox_")
    with pytest.raises(RuntimeError, match="not running"):
        first.base_url  # noqa: B018
    with first, pytest.raises(RuntimeError, match="already running"):
        first.start()

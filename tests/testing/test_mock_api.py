"""paysdk.testing.MockPaymentAPI: answers as the sandbox does, fails on demand, records calls."""

from __future__ import annotations

import inspect
import os
from collections.abc import AsyncIterator, Iterator
from typing import Any
from urllib.parse import quote

import httpx
import pytest
import respx

import paysdk
from paysdk.sandbox import (
    NOT_FOUND_BODY,
    UNAUTHORIZED_BODY,
    PaymentRecord,
    Sandbox,
    SeedError,
    default_payments,
)
from paysdk.testing import Fault, MockPaymentAPI, payment_record

pytestmark = pytest.mark.anyio


class Either:
    """A Client or AsyncClient from the fake, behind one awaitable surface."""

    def __init__(self, client: paysdk.Client | paysdk.AsyncClient) -> None:
        self.client = client

    async def call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        result = getattr(self.client, name)(*args, **kwargs)
        return await result if inspect.isawaitable(result) else result


@pytest.fixture
def api() -> Iterator[MockPaymentAPI]:
    with MockPaymentAPI() as running:
        yield running


@pytest.fixture(params=["sync", "async"])
async def client(request: pytest.FixtureRequest, api: MockPaymentAPI) -> AsyncIterator[Either]:
    """The fake's own client, sync or async (each test runs for both)."""
    if request.param == "sync":
        yield Either(api.client())
    else:
        async with api.async_client() as async_client:
            yield Either(async_client)


# --- answering --------------------------------------------------------------------------------


async def test_verify_and_list_answer_with_the_payments_loaded(
    api: MockPaymentAPI, client: Either
) -> None:
    older = api.add_payment("order-1", amount=5000, currency="USD")
    newer = api.add_payment(payment_record(reference="order-2", success=False))
    payment = await client.call("verify", "order-1")
    assert (payment.reference, payment.amount, payment.currency) == ("order-1", 5000, "USD")
    assert payment.transaction_id == older.transaction_id
    listed = await client.call("list_payments")
    assert [p.reference for p in listed] == [r.reference for r in api.payments]
    assert {p.reference: p.succeeded for p in listed} == {"order-1": True, "order-2": False}
    assert newer in api.payments


async def test_an_unknown_reference_and_a_wrong_key_get_the_documented_bodies(
    api: MockPaymentAPI, client: Either
) -> None:
    with pytest.raises(paysdk.PaymentNotFoundError) as missing:
        await client.call("verify", "order-0000")
    assert missing.value.body == NOT_FOUND_BODY
    wrong = api.client(secret_key="sk_test_wrong")
    with pytest.raises(paysdk.AuthenticationError) as refused:
        wrong.list_payments()
    assert refused.value.body == UNAUTHORIZED_BODY
    assert [call.authorized for call in api.calls] == [True, False]


async def test_references_are_percent_decoded_once_as_the_sandbox_does(
    api: MockPaymentAPI, client: Either
) -> None:
    api.add_payment("inv/7 ü")
    assert (await client.call("verify", "inv/7 ü")).reference == "inv/7 ü"
    assert api.verified_references() == ["inv/7 ü"]
    assert api.calls[0].path == "/payment/inv%2F7%20%C3%BC"


PROBES = [
    ("GET", "/payment/order-1042", True),
    ("GET", "/payment/order-0000", True),
    ("GET", "/payments", True),
    ("GET", "/payment/a%2Fb", True),
    ("GET", "/payment/..%2Fpayments", True),
    ("GET", "/payment/order-1042", False),
    ("GET", "/payments?page=2", False),
    ("POST", "/payments", True),
    ("GET", "/nowhere", True),
]


FAULTED = ["a/b", "a b", "order-1042"]
"""References with a fault waiting (once): by path on the sandbox, by reference on the fake."""
FAULT_PROBES = [
    ("GET", "/payment/a%2fb", True),  # percent-encoded otherwise than paysdk does
    ("GET", "/payment/a%20b", True),
    ("GET", "/payment/order%2D1042", True),
    ("GET", "/payment/order-1042", True),  # the fault was used once: the payment again
]


def test_the_fake_answers_byte_for_byte_as_the_sandbox() -> None:
    seed = [*default_payments(), payment_record(reference="a/b")]
    key = "sk_test_same"
    fault = Fault(status=418, body="faulted")
    with Sandbox(secret_key=key, payments=seed) as sandbox:
        expected = _probe(sandbox.base_url, key, PROBES)
        for reference in FAULTED:
            sandbox.inject(fault, path="/payment/" + quote(reference, safe=""))
        expected += _probe(sandbox.base_url, key, FAULT_PROBES)
    with MockPaymentAPI(secret_key=key, payments=seed) as api:
        answers = _probe(api.base_url, key, PROBES)
        for reference in FAULTED:
            api.inject(fault, reference=reference)
        answers += _probe(api.base_url, key, FAULT_PROBES)
        assert answers == expected
    statuses = [status for status, _ in expected]
    assert statuses[: len(PROBES)] == [200, 404, 200, 200, 404, 401, 401, 405, 404]
    assert statuses[len(PROBES) :] == [418, 418, 418, 200]


@pytest.mark.parametrize("path", ["//payments", "///payment/order-1042", "//payment/a%2Fb"])
def test_a_doubled_slash_is_no_route_in_the_sandbox_as_in_the_fake(path: str) -> None:
    """A base URL's trailing slash joined to ``/payments`` by hand: the sandbox, whose HTTP
    server read ``//payments`` as ``/payments``, answers what the fake answers."""
    key = "sk_test_same"
    headers = {"Authorization": f"Bearer {key}"}
    answers = []
    for stand_in in (MockPaymentAPI(secret_key=key), Sandbox(secret_key=key)):
        with stand_in:
            response = httpx.get(stand_in.base_url + path, headers=headers, trust_env=False)
            answers.append((response.status_code, response.content))
    assert answers[0] == answers[1]
    assert answers[0][0] == 404 and b'"no route for //' in answers[0][1]


def _probe(base_url: str, key: str, probes: list[tuple[str, str, bool]]) -> list[tuple[int, bytes]]:
    answers = []
    with httpx.Client(base_url=base_url, trust_env=False) as http:
        for method, path, with_key in probes:
            headers = {"Authorization": f"Bearer {key}"} if with_key else {}
            response = http.request(method, path, headers=headers)
            answers.append((response.status_code, response.content))
    return answers


def test_removing_a_payment_is_the_same_in_the_fake_and_the_sandbox() -> None:
    """Removing a reference that is not there is no error in either (no raw KeyError)."""
    with MockPaymentAPI(payments=default_payments()) as api, Sandbox() as sandbox:
        for service in (api, sandbox):
            service.remove_payment("order-1042")
            service.remove_payment("order-1042")
            service.remove_payment("never-added")
            assert service.get_payment("order-1042") is None
        assert api.payments == sandbox.payments


def test_a_base_url_with_a_path_prefix(api: MockPaymentAPI) -> None:
    with MockPaymentAPI(base_url="https://pay.example.test/v1/") as prefixed:
        prefixed.add_payment("order-5")
        assert prefixed.client().verify("order-5").reference == "order-5"
        assert prefixed.calls[0].path == "/payment/order-5"


# --- failing on demand ------------------------------------------------------------------------


async def test_5xx_then_success_is_retried_without_sleeping(
    api: MockPaymentAPI, client: Either
) -> None:
    api.add_payment("order-1")
    api.inject(Fault.server_error(503), times=2)
    assert (await client.call("verify", "order-1")).succeeded
    assert len(api.calls) == 3
    assert len(api.waits) == 2 and 0.375 <= api.waits[0] <= 0.5 and 0.75 <= api.waits[1] <= 1


async def test_429_retry_after_is_obeyed_and_recorded(api: MockPaymentAPI, client: Either) -> None:
    api.inject(Fault.rate_limited(retry_after=3), endpoint="list")
    assert await client.call("list_payments") == []
    assert api.waits == [3.0]


@pytest.mark.parametrize(
    ("fault", "error", "detail"),
    [
        (Fault.timeout(), paysdk.APITimeoutError, "timeout"),
        (Fault.connection_reset(), paysdk.APIConnectionError, "without sending a response"),
        (Fault(disconnect="mid_body"), paysdk.APIConnectionError, "message body"),
        (Fault.html_502(), paysdk.ServerError, "502 Bad Gateway"),
        (Fault.server_error(500), paysdk.ServerError, "Internal Server Error"),
        (Fault.rate_limited(retry_after=1), paysdk.RateLimitError, "slow down"),
    ],
)
async def test_each_failure_reaches_the_caller_as_a_paysdk_error(
    api: MockPaymentAPI, client: Either, fault: Fault, error: type[Exception], detail: str
) -> None:
    api.add_payment("order-1")
    api.inject(fault, times=None)
    with pytest.raises(error, match=detail):
        await client.call("verify", "order-1")
    assert len(api.calls) == 3  # the default max_retries is 2
    api.clear_faults()
    assert (await client.call("verify", "order-1")).succeeded


async def test_a_short_delay_is_answered(api: MockPaymentAPI, client: Either) -> None:
    api.add_payment("order-1")
    api.inject(Fault(delay=0.5))
    assert (await client.call("verify", "order-1", timeout=1.0)).succeeded
    api.inject(Fault(delay=0.5))
    with pytest.raises(paysdk.APITimeoutError):
        await client.call("verify", "order-1", timeout=0.5, max_retries=0)


async def test_a_fault_for_one_reference_leaves_the_others_alone(
    api: MockPaymentAPI, client: Either
) -> None:
    api.add_payment("order-1")
    api.add_payment("order/2")
    api.inject(Fault.server_error(), reference="order/2", times=None)
    assert (await client.call("verify", "order-1")).succeeded
    assert await client.call("list_payments")
    with pytest.raises(paysdk.ServerError):
        await client.call("verify", "order/2", max_retries=0)


async def test_list_unavailable_is_the_documented_404(api: MockPaymentAPI, client: Either) -> None:
    api.inject(Fault.list_unavailable(), times=None)
    with pytest.raises(paysdk.ListUnavailableError):
        await client.call("list_payments", max_retries=1)


def test_a_bad_key_or_base_url_is_refused_up_front() -> None:
    with pytest.raises(paysdk.ConfigurationError, match="leading or trailing whitespace"):
        MockPaymentAPI(secret_key=" sk_test_x")
    with pytest.raises(paysdk.ConfigurationError, match="must be an absolute"):
        MockPaymentAPI(base_url="api.paysdk.test")


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        (Fault.server_error, r"not <bound method Fault\.server_error.*>: call it$"),
        ("timeout", "not 'timeout'$"),
        (None, "not None$"),
    ],
)
def test_something_other_than_a_fault_is_refused_when_injected(
    api: MockPaymentAPI, fault: Any, message: str
) -> None:
    api.add_payment("order-7")
    with pytest.raises(TypeError, match="fault must be a Fault such as .*" + message):
        api.inject(fault)
    with Sandbox() as sandbox, pytest.raises(TypeError, match=message):
        sandbox.inject(fault)
    with api.client() as client:
        assert client.verify("order-7").succeeded  # nothing was injected


def test_bad_fault_places_are_refused(api: MockPaymentAPI) -> None:
    with pytest.raises(paysdk.ConfigurationError, match="reference names a verify call"):
        api.inject(Fault.server_error(), reference="x", endpoint="list")
    with pytest.raises(paysdk.ConfigurationError, match="endpoint must be"):
        api.inject(Fault.server_error(), endpoint="payments")  # type: ignore[arg-type]
    with pytest.raises(paysdk.ConfigurationError, match="reference: the reference is empty"):
        api.inject(Fault.server_error(), reference="")


@pytest.mark.parametrize(
    "times", [0, -1, True, 1.5, 10**6 + 1, pytest.param(10**5000, id="5001-digits")]
)
def test_a_times_that_fails_no_call_is_refused_naming_the_argument(
    api: MockPaymentAPI, times: Any
) -> None:
    with pytest.raises(paysdk.ConfigurationError, match=r"^inject\(times=.*\): times is how many "):
        api.inject(Fault.server_error(), times=times)
    api.inject(Fault.server_error(), times=None)  # until cleared: allowed


@pytest.mark.parametrize(
    ("given", "offered"),
    [
        ({"secret_key": ""}, "leave secret_key out for the fake's fixed test key"),
        ({"secret_key": None}, "leave secret_key out for the fake's fixed test key"),
        ({"base_url": " "}, "leave base_url out for https://api.paysdk.test"),
    ],
)
def test_an_empty_key_or_url_is_refused_with_the_fakes_own_hint(
    given: dict[str, Any], offered: str
) -> None:
    """The client's hint (set PAYSDK_SECRET_KEY) does not apply to the fake, which reads no
    environment."""
    with pytest.raises(paysdk.ConfigurationError, match=r"^MockPaymentAPI") as refused:
        MockPaymentAPI(**given)
    assert offered in str(refused.value) and "PAYSDK_" not in str(refused.value)


# --- recording, secrecy, state ----------------------------------------------------------------


def test_calls_are_recorded_and_the_key_never_shows(api: MockPaymentAPI) -> None:
    api.add_payment("order-1")
    with api.client(default_headers={"X-Shop": "7"}) as client:
        client.verify("order-1")
        client.list_payments()
        (verify, listing) = api.calls
        assert (verify.method, verify.endpoint, verify.reference) == ("GET", "verify", "order-1")
        assert (listing.endpoint, listing.reference, listing.path) == ("list", None, "/payments")
        assert verify.headers["x-shop"] == "7" and verify.headers["authorization"] == "<redacted>"
        shown = repr(api.calls) + repr(api) + repr(client) + str(api.calls)
    assert api.secret_key not in shown


async def test_each_answer_carries_the_request_id_its_call_keeps(
    api: MockPaymentAPI, client: Either
) -> None:
    api.add_payment("order-1")
    raw: Any = client.client.with_raw_response.verify("order-1")
    raw = await raw if inspect.isawaitable(raw) else raw
    assert raw.request_id is not None
    assert raw.request_id == api.calls[-1].request_id
    with pytest.raises(paysdk.PaymentNotFoundError) as missing:
        await client.call("verify", "order-0000")
    assert missing.value.request_id == api.calls[-1].request_id
    api.inject(Fault.connection_reset())
    api.inject(Fault.server_error(503))
    assert (await client.call("verify", "order-1")).succeeded
    cut, failed, answered = api.calls[-3:]
    assert cut.request_id is None  # no answer came
    assert failed.request_id is not None
    assert answered.request_id is not None
    assert len({call.request_id for call in api.calls}) == len(api.calls)


def test_add_payment_forms(api: MockPaymentAPI) -> None:
    record = api.add_payment()
    assert api.get_payment(record.reference) == record
    with pytest.raises(paysdk.ConfigurationError, match="not both"):
        api.add_payment(record, amount=5)
    with pytest.raises(paysdk.ConfigurationError, match="reference once"):
        api.add_payment("order-1", reference="order-2")
    with pytest.raises(paysdk.ConfigurationError, match="PaymentRecord or a reference"):
        api.add_payment(42)  # type: ignore[arg-type]
    api.remove_payment(record.reference)
    assert api.payments == []


def test_a_payment_whose_metadata_is_not_json_is_refused_when_added(api: MockPaymentAPI) -> None:
    record = PaymentRecord(
        reference="order-7", amount=500, currency="NGN", status="COMPLETED", metadata={"ok": {1}}
    )
    with pytest.raises(paysdk.ConfigurationError, match="metadata must be JSON"):
        api.add_payment(record)
    with Sandbox() as sandbox, pytest.raises(SeedError, match="metadata must be JSON"):
        sandbox.add_payment(record)
    assert api.get_payment("order-7") is None


def test_an_endpoint_of_thousands_of_digits_is_refused_saying_so(api: MockPaymentAPI) -> None:
    with pytest.raises(paysdk.ConfigurationError, match="not an integer of over 4,300 digits"):
        api.inject(Fault.server_error(), endpoint=10**5000)  # type: ignore[arg-type]


def test_a_fee_too_long_to_write_is_refused_and_the_fake_answers_on(api: MockPaymentAPI) -> None:
    with pytest.raises(paysdk.ConfigurationError, match="fee must be an integer of at most 4,300"):
        api.add_payment("order-7", fee=10**5000)
    assert api.get_payment("order-7") is None
    with api.client() as client, pytest.raises(paysdk.NotFoundError):
        client.verify("order-7")


def test_reset_forgets_payments_faults_calls_and_waits(api: MockPaymentAPI) -> None:
    api.add_payment("order-1")
    api.inject(Fault.server_error(), times=1)
    client = api.client()
    client.verify("order-1")
    api.inject(Fault.server_error(), times=None)
    api.reset()
    assert (api.payments, api.calls, api.waits) == ([], [], [])
    assert client.list_payments() == []


def test_the_fake_leaves_no_routes_and_other_hosts_to_other_routers() -> None:
    api = MockPaymentAPI().start()
    with respx.mock(assert_all_called=False) as other:
        other.get("https://elsewhere.test/ping").respond(204)
        assert httpx.get("https://elsewhere.test/ping").status_code == 204
        assert httpx.get(f"{api.base_url}/payments").status_code == 401  # still the fake's
        api.stop()
        other.get(f"{api.base_url}/payments").respond(418)
        assert httpx.get(f"{api.base_url}/payments").status_code == 418  # no longer the fake's
    assert not api.running and not respx.mock.routes
    api.stop()  # twice is fine


@pytest.mark.parametrize("stand_in", [MockPaymentAPI, Sandbox])
@pytest.mark.parametrize(
    ("payments", "says"),
    [
        (5, "payments must be a list of PaymentRecord, not int"),
        ("order-1042", "payments must be a list of PaymentRecord, not str"),
        ({"reference": "order-1042"}, "payments must be a list of PaymentRecord, not dict"),
        (payment_record(), r"payments takes a list of PaymentRecord: pass \[record\]"),
        ([payment_record(), 5], "payments holds an object of type int, not a PaymentRecord"),
    ],
)
def test_payments_that_are_not_a_list_of_records_are_refused_saying_what_to_pass(
    stand_in: type[MockPaymentAPI] | type[Sandbox], payments: object, says: str
) -> None:
    with pytest.raises(paysdk.ConfigurationError, match=says) as caught:
        stand_in(payments=payments)  # type: ignore[arg-type]
    assert "paysdk.testing.payment_record" in str(caught.value)


@pytest.mark.parametrize("stand_in", [MockPaymentAPI, Sandbox])
def test_payments_may_be_any_iterable_of_records(
    stand_in: type[MockPaymentAPI] | type[Sandbox],
) -> None:
    made = stand_in(payments=iter([payment_record(reference="order-1")]))
    assert [payment.reference for payment in made.payments] == ["order-1"]


@pytest.fixture
def proxy_in_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """A proxy for every scheme, as CI machines often name one: a closed port on loopback, which
    refuses a request sent to it."""
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name.lower(), raising=False)
        monkeypatch.setenv(name, "http://127.0.0.1:9")
    monkeypatch.setenv("NO_PROXY", "internal.example")


@pytest.mark.usefixtures("proxy_in_environment")
async def test_a_proxy_in_the_environment_never_carries_the_fakes_requests() -> None:
    """Clients made while the fake runs (the merchant's own too), and the fake's own clients
    whenever made, send its requests to it, not to the proxy."""
    api = MockPaymentAPI()
    made_before = api.client(max_retries=0)
    with api:
        api.add_payment("order-7")
        with paysdk.Client(secret_key=api.secret_key, base_url=api.base_url) as own:
            assert own.verify("order-7").succeeded
        async with paysdk.AsyncClient(secret_key=api.secret_key, base_url=api.base_url) as aown:
            assert (await aown.verify("order-7")).succeeded
        async with api.async_client() as async_client:
            assert (await async_client.verify("order-7")).succeeded
        assert made_before.verify("order-7").succeeded
        assert (
            os.environ["NO_PROXY"] == os.environ["no_proxy"] == "internal.example,api.paysdk.test"
        )
    assert os.environ["NO_PROXY"] == "internal.example"  # put back as the fake found it
    assert "no_proxy" not in os.environ


@pytest.mark.usefixtures("proxy_in_environment")
def test_no_proxy_set_by_the_test_while_the_fake_runs_is_left_as_the_test_set_it() -> None:
    with MockPaymentAPI():
        os.environ["NO_PROXY"] = "payments.internal"
    assert os.environ["NO_PROXY"] == "payments.internal"
    assert "no_proxy" not in os.environ  # the spelling the test left alone is put back


@pytest.mark.usefixtures("proxy_in_environment")
async def test_a_client_made_before_the_fake_with_a_proxy_is_refused_saying_what_to_do() -> None:
    """A client made before the fake started read the environment's proxy then: respx cannot
    answer a request sent through it, and the call says so, as a paysdk error, on both clients;
    a client made while it runs reaches it."""
    api = MockPaymentAPI()
    own = paysdk.Client(secret_key=api.secret_key, base_url=api.base_url, max_retries=0)
    aown = paysdk.AsyncClient(secret_key=api.secret_key, base_url=api.base_url, max_retries=0)
    try:
        with api:
            api.add_payment("order-7")
            with pytest.raises(paysdk.ConfigurationError) as sync_refused:
                own.verify("order-7")
            with pytest.raises(paysdk.ConfigurationError) as async_refused:
                await aown.verify("order-7")
            for caught in (sync_refused, async_refused):
                said = str(caught.value)
                assert "https://api.paysdk.test" in said and "HTTPS_PROXY" in said
                assert "make the client while the mock runs" in said
            assert api.calls == []
            with paysdk.Client(secret_key=api.secret_key, base_url=api.base_url) as made:
                assert made.verify("order-7").succeeded
    finally:
        own.close()
        await aown.aclose()


def test_add_payment_refuses_a_reference_utf8_cannot_encode() -> None:
    with MockPaymentAPI() as api, pytest.raises(paysdk.ConfigurationError, match="UTF-8"):
        api.add_payment("order-\ud800")

"""What users see of each public name: ``dir()`` of the packages lists their public names only,
classes and functions say the module they are imported from, and exceptions survive pickling."""

from __future__ import annotations

import copy as stdlib_copy
import importlib
import inspect
import pickle
import subprocess
import sys
import typing
from types import ModuleType
from typing import Any

import pytest

import paysdk
import paysdk.ledger
import paysdk.sandbox
import paysdk.testing
from paysdk.testing import verified_payment

PACKAGES = [paysdk, paysdk.ledger, paysdk.sandbox, paysdk.testing]


@pytest.mark.parametrize("package", PACKAGES, ids=lambda package: package.__name__)
def test_dir_lists_the_public_names_only(package: ModuleType) -> None:
    assert dir(package) == sorted(package.__all__)
    assert not {"Any", "TYPE_CHECKING", "annotations", "lazy_names"} & set(dir(package))
    assert [name for name in dir(package) if name.startswith("_")] in ([], ["__version__"])


@pytest.mark.parametrize("package", PACKAGES, ids=lambda package: package.__name__)
def test_each_class_and_function_names_a_public_module_that_holds_it(package: ModuleType) -> None:
    for name in package.__all__:
        value = getattr(package, name)
        if typing.get_origin(value) is not None:
            continue  # an alias such as Lookup (on Python 3.10 a generic alias passes for a type)
        if not (isinstance(value, type) or inspect.isfunction(value)):
            continue
        home = value.__module__
        assert getattr(importlib.import_module(home), value.__qualname__) is value, name
        if hasattr(value, "model_rebuild"):
            continue  # a model resolves its deferred annotations in the module that defines it
        assert not any(part.startswith("_") for part in home.split(".")), (name, home)


def test_every_model_builds_in_a_fresh_interpreter_after_its_package_published_its_names() -> None:
    # Models build on first use, in the module __module__ names: publishing one to "paysdk"
    # (where names load lazily) left its annotations unresolvable on some Pythons and pydantics.
    script = (
        "import paysdk, paysdk.sandbox\n"
        "for package in (paysdk, paysdk.sandbox):\n"
        "    for name in package.__all__:\n"
        "        value = getattr(package, name)\n"
        "        if hasattr(value, 'model_rebuild'):\n"
        "            value.model_rebuild(raise_errors=True)\n"
        "            assert value.__pydantic_complete__, name\n"
        "            print(name)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert {"VerifiedPayment", "ListedPayment", "Customer", "Product"} <= set(done.stdout.split())


def test_a_traceback_names_the_exception_as_users_import_it() -> None:
    # A fresh interpreter, where nothing asked for paysdk.ConfigurationError before it is raised.
    done = subprocess.run(
        [sys.executable, "-c", "import paysdk; paysdk.Client(secret_key='', base_url='x')"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("paysdk.ConfigurationError: "), done.stderr


API_ERROR = {
    "status_code": 503,
    "headers": {"X-Request-Id": "req-7"},
    "content": b'{"error": "busy"}',
    "method": "GET",
    "url": "https://api.example.test/payment/order-7",
}
EXTRA: dict[str, dict[str, Any]] = {
    "APIConnectionError": {"method": "GET", "url": "https://api.example.test/payments"},
    "PaymentVerificationError": {"payment": verified_payment(reference="order-7")},
    "PaymentMismatchError": {"mismatches": {"amount": (5000, 4000)}},
    "PaymentNotFoundError": {"reference": "order-7"},
    "UnknownOrderError": {"reference": "order-7"},
    "RateLimitError": {"retry_after": 2.5},
    "ResponseValidationError": {"errors": [{"loc": ["amount"], "msg": "not an integer"}]},
    "ResponseTooLargeError": {"limit": 1024},
    "LeaseLostError": {"reference": "order-7"},
    "UnrecordedFulfilmentError": {"reference": "order-7", "value": "shipment-1"},
}
EXCEPTIONS = sorted(
    {
        value
        for package in PACKAGES
        for name in package.__all__
        for value in [getattr(package, name)]
        if isinstance(value, type) and issubclass(value, paysdk.PaySDKError)
    },
    key=lambda cls: cls.__name__,
)


def example(cls: type[paysdk.PaySDKError]) -> paysdk.PaySDKError:
    """An instance of ``cls`` made as paysdk makes one, with each keyword its family needs."""
    kwargs: dict[str, Any] = dict(API_ERROR) if issubclass(cls, paysdk.APIError) else {}
    for family in cls.__mro__:
        kwargs.update(EXTRA.get(family.__name__, {}))
    error = cls("it went wrong", **kwargs)
    error.attempts = 3
    return error


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
@pytest.mark.parametrize("cls", EXCEPTIONS, ids=lambda cls: cls.__name__)
def test_every_exception_survives_a_pickle_round_trip(
    cls: type[paysdk.PaySDKError], protocol: int
) -> None:
    """At every protocol (a task queue's result store may use any), and as ``copy`` and
    ``deepcopy`` make one (an error reporter), keeping each attribute."""
    error = example(cls)
    copy = pickle.loads(pickle.dumps(error, protocol))  # noqa: S301 (bytes this test just made)
    for twin in (copy, stdlib_copy.copy(error), stdlib_copy.deepcopy(error)):
        assert type(twin) is cls
        assert (str(twin), twin.args, vars(twin)) == (str(error), error.args, vars(error))
    assert type(copy) is cls
    assert str(copy) == str(error)
    assert copy.args == error.args
    assert vars(copy) == vars(error)
    assert f"{cls.__module__}.{cls.__name__}" in {
        "paysdk." + cls.__name__,
        f"paysdk.ledger.{cls.__name__}",
    }


def test_every_exception_is_published_as_paysdk_s_before_anyone_reads_it_there() -> None:
    # A traceback names an exception by its __module__: one raised before the application
    # first read its name from paysdk would otherwise read as paysdk._errors's.
    script = (
        "import paysdk._errors as errors\n"
        "for value in vars(errors).values():\n"
        "    if isinstance(value, type) and issubclass(value, errors.PaySDKError):\n"
        "        print(value.__module__, value.__qualname__)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    homes = [line.split() for line in done.stdout.splitlines()]
    assert len(homes) >= 20
    assert [name for home, name in homes if home != "paysdk"] == []

"""The wheel a merchant installs: built, installed into a fresh venv, imported and used."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import paysdk

ROOT = Path(__file__).resolve().parent.parent

SMOKE = """
import httpx, respx, paysdk
with respx.mock:
    respx.get("https://api.pay.test/payment/order-1").respond(200, json={
        "status": True, "message": "ok",
        "data": {"reference": "order-1", "amount": 5000, "currency": "NGN", "success": True},
    })
    payment = paysdk.Client(secret_key="sk_test_x", base_url="https://api.pay.test").verify("order-1")
print(paysdk.__version__, payment.reference, payment.succeeded, paysdk.__file__)
"""

MERCHANT_TEST = """
import paysdk
from paysdk.testing import Fault, verified_payment

def test_the_plugin_came_with_the_wheel(paysdk_api, paysdk_client):
    paysdk_api.add_payment("order-1", amount=5000)
    paysdk_api.inject(Fault.server_error(), times=1)
    assert paysdk_client.confirm("order-1", amount=5000, currency="NGN").succeeded
    assert paysdk.testing.__file__.startswith(paysdk.__file__.rsplit("/", 1)[0])

def test_factories():
    assert not verified_payment(success=False).succeeded
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(ROOT)],
        check=True,
        capture_output=True,
    )
    (built,) = out.glob("paysdk-*.whl")
    return built


def test_the_wheel_ships_the_package_and_its_type_marker(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    assert "paysdk/py.typed" in names
    assert "paysdk/__init__.py" in names
    assert "paysdk/sandbox/__init__.py" in names
    assert not [name for name in names if name.startswith("tests/")]
    metadata = zipfile.ZipFile(wheel).read(
        next(n for n in names if n.endswith(".dist-info/METADATA"))
    )
    assert b"Requires-Dist: httpx" in metadata
    assert b"Requires-Dist: pydantic" in metadata
    assert b"Provides-Extra: testing" in metadata
    assert b"Requires-Dist: respx>=0.21; extra == 'testing'" in metadata


def test_the_wheel_registers_the_pytest_plugin(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    assert "paysdk/testing/plugin.py" in names
    entry_points = (
        zipfile.ZipFile(wheel)
        .read(next(n for n in names if n.endswith(".dist-info/entry_points.txt")))
        .decode()
    )
    assert "[pytest11]\npaysdk = paysdk.testing.plugin" in entry_points


def test_the_wheel_installs_into_a_fresh_venv_and_verifies(wheel: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", f"{wheel}[testing]", "pytest"],
        check=True,
        capture_output=True,
    )
    result = subprocess.run(
        [str(python), "-c", SMOKE], check=True, capture_output=True, text=True, cwd=tmp_path
    )
    version, reference, succeeded, location = result.stdout.split()
    assert (version, reference, succeeded) == (paysdk.__version__, "order-1", "True")
    assert str(venv) in location  # the installed wheel, not this checkout
    (tmp_path / "test_merchant.py").write_text(MERCHANT_TEST)
    run = subprocess.run(
        [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_merchant.py"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert run.returncode == 0 and "2 passed" in run.stdout, run.stdout + run.stderr

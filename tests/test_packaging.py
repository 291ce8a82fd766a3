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


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(ROOT)],
        check=True,
        capture_output=True,
    )
    (built,) = out.glob("python_paysdk-*.whl")
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


def test_the_wheel_installs_into_a_fresh_venv_and_verifies(wheel: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", str(wheel), "respx"],
        check=True,
        capture_output=True,
    )
    result = subprocess.run(
        [str(python), "-c", SMOKE], check=True, capture_output=True, text=True, cwd=tmp_path
    )
    version, reference, succeeded, location = result.stdout.split()
    assert (version, reference, succeeded) == (paysdk.__version__, "order-1", "True")
    assert str(venv) in location  # the installed wheel, not this checkout

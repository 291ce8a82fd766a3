"""The wheel a merchant installs: built, installed into a fresh venv, imported and used.

The fresh venv gets the wheel alone, as ``pip install python-paysdk`` would: the command, the
sandbox, the demo and the missing-extra errors are checked there. The extras are not installed
into it (each run would resolve Django, Flask and Starlette from the index again); instead the
wheel's metadata must declare, for each extra, the package its helper imports, and the helpers
import cleanly in the dev venv, where ``make`` installed exactly those extras.
"""

from __future__ import annotations

import email.message
import email.parser
import os
import signal
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import paysdk
from paysdk.sandbox import COMPLETED_REFERENCE
from tests.support.wheels import fresh_venv

ROOT = Path(__file__).resolve().parents[2]

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

HELPERS = {  # extra -> (the helper module, the package it imports)
    "django": ("paysdk.integrations.django", "django"),
    "flask": ("paysdk.integrations.flask", "flask"),
    "fastapi": ("paysdk.integrations.fastapi", "starlette"),
}


@pytest.fixture(scope="module")
def wheel(paysdk_wheel: Path) -> Path:
    """The wheel built from this checkout (one per test session: ``paysdk_wheel``)."""
    return paysdk_wheel


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment with the wheel (and respx, for the smoke test) installed."""
    return fresh_venv(tmp_path_factory.mktemp("venv"), str(wheel), "respx")


def metadata(wheel: Path) -> email.message.Message:
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        return email.parser.BytesParser().parsebytes(archive.read(name))


def run_in(
    venv: Path, *argv: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``argv`` with the venv's ``bin`` first on PATH, no PAYSDK_* but those in ``env``, and no
    PYTHONPATH (which could name this checkout's ``src``)."""
    environ = {
        k: v for k, v in os.environ.items() if not k.startswith("PAYSDK_") and k != "PYTHONPATH"
    }
    environ["PATH"] = f"{venv / 'bin'}{os.pathsep}{environ.get('PATH', '')}"
    environ.update(env or {})
    return subprocess.run(
        argv, env=environ, cwd=cwd, capture_output=True, text=True, timeout=60, check=False
    )


def test_the_wheel_ships_the_package_its_type_marker_and_its_licence(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    assert "paysdk/py.typed" in names
    assert "paysdk/__init__.py" in names
    assert "paysdk/sandbox/__init__.py" in names
    assert "paysdk/_service/seed.json" in names
    assert not [name for name in names if name.startswith("tests/")]
    assert [name for name in names if name.endswith(".dist-info/licenses/LICENSE")]


def test_the_metadata_names_the_distribution_and_declares_each_extra(wheel: Path) -> None:
    meta = metadata(wheel)
    assert meta["Name"] == "python-paysdk"
    assert meta["Version"] == paysdk.__version__
    assert meta["License-Expression"] == "MIT"
    requires = meta.get_all("Requires-Dist") or []
    assert {r.split(">")[0].split("<")[0] for r in requires if "extra ==" not in r} == {
        "anyio",
        "h11",
        "httpcore",
        "httpx",
        "pydantic",
        "pydantic-core",
        "typing-extensions",
    }
    assert set(meta.get_all("Provides-Extra") or []) >= set(HELPERS)
    for extra, (_, package) in HELPERS.items():
        wanted = [r for r in requires if r.startswith(package) and f"extra == '{extra}'" in r]
        assert wanted, f"[{extra}] does not install {package}"


def test_the_wheel_installs_into_a_fresh_venv_and_verifies(venv: Path, tmp_path: Path) -> None:
    result = run_in(venv, "python", "-c", SMOKE, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    version, reference, succeeded, location = result.stdout.split()
    assert (version, reference, succeeded) == (paysdk.__version__, "order-1", "True")
    assert str(venv) in location  # the installed wheel, not this checkout


def test_the_paysdk_command_is_installed(venv: Path, tmp_path: Path) -> None:
    result = run_in(venv, "paysdk", "--version", cwd=tmp_path)
    assert (result.returncode, result.stdout) == (0, f"paysdk {paysdk.__version__}\n")


def test_the_sandbox_runs_from_the_installed_wheel_and_stops(venv: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PAYSDK_")}
    process = subprocess.Popen(
        [str(venv / "bin" / "python"), "-m", "paysdk", "sandbox", "--quiet",
         "--secret-key", "sk_wheel_test"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path, env=env,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        base_url = process.stdout.readline().split()[-1]
        verified = run_in(
            venv, "paysdk", "verify", COMPLETED_REFERENCE, "--json", cwd=tmp_path,
            env={"PAYSDK_BASE_URL": base_url, "PAYSDK_SECRET_KEY": "sk_wheel_test"},
        )  # fmt: skip
        assert verified.returncode == 0, verified.stderr
        assert f'"reference": "{COMPLETED_REFERENCE}"' in verified.stdout
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=10) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()


def test_the_demo_needs_nothing_but_the_package(venv: Path, tmp_path: Path) -> None:
    result = run_in(venv, "python", str(ROOT / "examples" / "quickstart.py"), cwd=tmp_path)
    assert (result.returncode, result.stderr) == (0, "")
    assert '-> 409 {"status": "mismatch"}' in result.stdout


@pytest.mark.parametrize("extra", sorted(HELPERS))
def test_a_helper_without_its_extra_names_it(venv: Path, tmp_path: Path, extra: str) -> None:
    module, package = HELPERS[extra]
    result = run_in(venv, "python", "-c", f"import {module}", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == (
        f"ModuleNotFoundError: {module} needs {package!r}, which is not installed: "
        f"pip install 'python-paysdk[{extra}]'"
    )


@pytest.mark.parametrize("extra", sorted(HELPERS))
def test_a_helper_imports_where_its_extra_is_installed(extra: str, tmp_path: Path) -> None:
    module, _ = HELPERS[extra]
    result = subprocess.run(
        [sys.executable, "-c", f"import {module}"],
        capture_output=True, text=True, cwd=tmp_path, timeout=60, check=False,
    )  # fmt: skip
    assert (result.returncode, result.stderr) == (0, "")


def test_the_wheel_registers_the_pytest_plugin(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    assert "paysdk/testing/plugin.py" in names
    entry_points = (
        zipfile.ZipFile(wheel)
        .read(next(n for n in names if n.endswith(".dist-info/entry_points.txt")))
        .decode()
    )
    assert "[pytest11]\npaysdk = paysdk.testing.plugin" in entry_points
    requires = metadata(wheel).get_all("Requires-Dist") or []
    assert any(r.startswith("respx") and "extra == 'testing'" in r for r in requires)


def test_the_testing_extra_runs_a_merchant_test(wheel: Path, tmp_path: Path) -> None:
    python = fresh_venv(tmp_path / "venv", f"{wheel}[testing]", "pytest") / "bin" / "python"
    (tmp_path / "test_merchant.py").write_text(MERCHANT_TEST)
    run = subprocess.run(
        [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_merchant.py"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert run.returncode == 0 and "2 passed" in run.stdout, run.stdout + run.stderr

"""``make demo``: examples/quickstart.py tells the safety story against its own sandbox."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.make import dry_run
from tests.support.ports import unused_port

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "examples" / "quickstart.py"


def run_quickstart(**paysdk_env: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PAYSDK_")}
    env.update(paysdk_env)
    return subprocess.run(
        [sys.executable, str(QUICKSTART)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_quickstart_runs_against_an_in_process_sandbox_and_says_so() -> None:
    done = run_quickstart()
    assert (done.returncode, done.stderr) == (0, "")
    first = done.stdout.splitlines()[0]
    assert re.fullmatch(
        r"paysdk demo, against the bundled sandbox at http://127\.0\.0\.1:\d+", first
    )
    assert "order-1042: 2500000 NGN succeeded" in done.stdout
    assert "order-1043: 4999 USD did NOT succeed" in done.stdout
    assert "PaymentNotFoundError: reference='order-0000', HTTP 404" in done.stdout
    assert len(done.stdout.splitlines()) <= 35  # one screen


@pytest.mark.parametrize(
    ("variables", "said"),
    [
        ({"PAYSDK_BASE_URL": "http://127.0.0.1:{port}"}, "ConfigurationError: no secret key"),
        (
            {"PAYSDK_BASE_URL": "http://127.0.0.1:{port}", "PAYSDK_SECRET_KEY": "sk_test_stale"},
            "APIConnectionError: could not reach the service",
        ),
    ],
    ids=["base-url-alone", "stopped-sandbox"],
)
def test_quickstart_against_a_service_it_cannot_use_says_so_and_how_to_use_its_own(
    variables: dict[str, str], said: str
) -> None:
    """``make demo`` in a terminal still holding a stopped sandbox's export lines (or half of
    them): one line saying what failed and one saying how to run against the bundled sandbox,
    never a traceback; the key is never printed."""
    port = unused_port()
    done = run_quickstart(**{name: value.format(port=port) for name, value in variables.items()})
    assert done.returncode == 1
    assert "Traceback" not in done.stderr and "sk_test_stale" not in done.stderr
    first, second = done.stderr.splitlines()
    assert first.startswith(f"paysdk demo: {said}")
    assert second.endswith(
        "to run it against the bundled sandbox: unset PAYSDK_BASE_URL PAYSDK_SECRET_KEY"
    )


def test_quickstart_ships_only_a_full_payment_and_refuses_a_mismatch() -> None:
    answers = dict(
        re.findall(r"^   (order-\d+): .*? -> (\d{3} \{.*\})$", run_quickstart().stdout, re.M)
    )
    assert answers == {
        "order-1042": '200 {"status": "ok"}',
        "order-1043": '200 {"status": "failed"}',
        "order-1044": '409 {"status": "mismatch"}',
        "order-0000": '404 {"status": "unknown_order"}',
    }


def test_quickstart_ends_with_where_to_go_next() -> None:
    last = run_quickstart().stdout.strip().splitlines()[-2:]
    assert last[0].startswith("Next: README.md and the docs site")
    assert "paysdk sandbox" in last[1]


def test_the_readme_and_the_docs_answer_a_failed_payment_as_the_demo_does() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    callbacks = (ROOT / "docs" / "callbacks.md").read_text(encoding="utf-8")
    assert "a failed payment is answered 200" in " ".join(readme.split())
    assert "| `PaymentFailedError` | 200 | `failed` |" in callbacks


def test_make_demo_installs_the_package_alone_not_the_dev_tools(tmp_path: Path) -> None:
    commands = dry_run("demo", tmp_path)
    installs = [line for line in commands if "pip install" in line]
    assert installs[-1].endswith("pip install --quiet -e .")
    assert not [line for line in installs if "[" in line]  # no extras: dev, docs, frameworks
    assert commands[-1].endswith("python examples/quickstart.py")

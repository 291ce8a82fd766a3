"""scripts/find_postgres.py (``make postgres``): where the ledger's tests find PostgreSQL, PgBouncer
and faketime, and the failure, naming what to install, when one is missing."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from tests.support import postgres
from tests.support.scripts import load_script

find_postgres = load_script("find_postgres")
NOWHERE = find_postgres.Fallbacks(postgres_bins=(), system_dirs=())


def stub(directory: Path, name: str, script: str = "exit 0") -> Path:
    """An executable shell script ``directory/name`` running ``script``."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(f"#!/bin/sh\n{script}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_every_tool_on_path_is_found_there(tmp_path: Path) -> None:
    on_path = tmp_path / "bin"
    for name in ("initdb", "pg_ctl", "pgbouncer", "faketime"):
        stub(on_path, name)
    tools = find_postgres.find_tools(str(on_path), NOWHERE)
    assert (tools.initdb, tools.pg_ctl) == (on_path / "initdb", on_path / "pg_ctl")
    assert (tools.pgbouncer, tools.faketime) == (on_path / "pgbouncer", on_path / "faketime")


def test_pg_config_names_the_bin_directory_and_system_dirs_hold_the_rest(tmp_path: Path) -> None:
    keg = tmp_path / "postgresql@16" / "bin"  # not on PATH, as Homebrew leaves its kegs
    stub(keg, "initdb")
    stub(keg, "pg_ctl")
    on_path = tmp_path / "bin"
    stub(on_path, "pg_config", f"echo {keg}")
    sbin = tmp_path / "sbin"
    stub(sbin, "pgbouncer")
    stub(sbin, "faketime")
    fallbacks = find_postgres.Fallbacks(postgres_bins=(), system_dirs=(str(sbin),))
    tools = find_postgres.find_tools(str(on_path), fallbacks)
    assert (tools.initdb, tools.pg_ctl) == (keg / "initdb", keg / "pg_ctl")
    assert tools.pgbouncer == sbin / "pgbouncer"


def test_the_newest_postgresql_of_a_fallback_pattern_wins(tmp_path: Path) -> None:
    for version in ("9", "16", "15"):
        stub(tmp_path / "postgresql" / version / "bin", "initdb")
        stub(tmp_path / "postgresql" / version / "bin", "pg_ctl")
    stub(tmp_path / "sbin", "pgbouncer")
    stub(tmp_path / "sbin", "faketime")
    fallbacks = find_postgres.Fallbacks(
        postgres_bins=(str(tmp_path / "postgresql" / "*" / "bin"),),
        system_dirs=(str(tmp_path / "sbin"),),
    )
    tools = find_postgres.find_tools(str(tmp_path / "empty"), fallbacks)
    assert tools.initdb == tmp_path / "postgresql" / "16" / "bin" / "initdb"


def test_an_initdb_without_pg_ctl_beside_it_is_not_enough(tmp_path: Path) -> None:
    stub(tmp_path / "bin", "initdb")
    with pytest.raises(find_postgres.MissingTools, match="need initdb, pg_ctl, pgbouncer"):
        find_postgres.find_tools(str(tmp_path / "bin"), NOWHERE)


@pytest.mark.parametrize(
    ("debian", "system", "dnf", "says"),
    [
        (True, "Linux", False, "sudo apt-get install postgresql pgbouncer faketime"),
        (False, "Darwin", False, "brew install postgresql@16 pgbouncer libfaketime"),
        (False, "Linux", True, "sudo dnf install postgresql-server pgbouncer libfaketime"),
    ],
)
def test_with_nothing_installed_the_error_lists_the_tools_and_what_to_install(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    debian: bool,
    system: str,
    dnf: bool,
    says: str,
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(find_postgres, "FALLBACKS", NOWHERE)
    monkeypatch.setattr(find_postgres, "is_debian", lambda: debian)
    monkeypatch.setattr(find_postgres.platform, "system", lambda: system)
    if dnf:
        stub(tmp_path, "dnf")
    assert find_postgres.main([]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: the ledger's tests need initdb, pg_ctl, pgbouncer, faketime,")
    assert says in err


def test_the_ledger_fixtures_fail_with_that_message_rather_than_skip(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(postgres.find_postgres, "FALLBACKS", NOWHERE)
    with (
        pytest.raises(RuntimeError, match="the ledger's tests need initdb, pg_ctl"),
        postgres.throwaway_cluster(),
    ):
        pass
    with (
        pytest.raises(RuntimeError, match="need initdb, pg_ctl, pgbouncer, faketime"),
        postgres.throwaway_pgbouncer("postgresql://postgres@127.0.0.1:5432/postgres", "session"),
    ):
        pass


def test_this_machine_has_every_tool_the_ledgers_tests_run() -> None:
    tools = find_postgres.find_tools()
    paths: list[Path] = [tools.initdb, tools.pg_ctl, tools.pgbouncer, tools.faketime]
    assert all(path.is_file() for path in paths)
    assert postgres.postgres_bin() == tools.initdb.parent

"""How pytest-xdist shares the suite out under ``--dist loadfile``: by groups of tests that one
function names, each group on one worker. ``tests/conftest.py`` groups by file, and the serial
tier (``tests/tiers.py``) into one group of its own, run one test at a time; it hands out the
serial tier first, then the longest files (``LONGEST``), then the rest in collection order."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

Hook = Callable[[pytest.Config, Any], Any]

LONGEST = (
    "tests/project/test_docs_examples.py",
    "tests/project/test_docs_shell.py",
    "tests/ledger/test_reconcile.py",
    "tests/ledger/test_ledger.py",
    "tests/transport/test_hostile_servers.py",
    "tests/project/test_docs_testing.py",
    "tests/transport/test_merchant_client_budget.py",
    "tests/cli/test_sandbox_loop.py",
    "tests/cli/test_pay_command.py",
    "tests/project/test_docs_site.py",
    "tests/ledger/test_sqlalchemy.py",
    "tests/integrations/test_module_level_clients.py",
    "tests/parsing/test_batches.py",
    "tests/project/test_packaging.py",
    "tests/ledger/test_sqlalchemy_connections.py",
)
"""The files that take a worker longest (20 s or more of a loaded run, as measured), longest
first: handed out right after the serial tier, so that none starts last and runs alone at the
end while the other workers idle. A file missing here only starts in its turn."""


def longest_first(nodeid: str) -> int:
    """Where the file of ``nodeid`` comes in :data:`LONGEST`, or after all of them."""
    path = nodeid.partition("::")[0]
    return LONGEST.index(path) if path in LONGEST else len(LONGEST)


def scheduler_by(group_of: Callable[[str], str]) -> Hook:
    """A ``pytest_xdist_make_scheduler`` hook that runs each group of tests on one worker.

    (``--dist loadgroup`` would do it with marks, but pytest 9.2 broke it: pytest-xdist's issue
    1386.) Other ``--dist`` modes keep xdist's own scheduling.

    Args:
        group_of: the group of a test's node id.

    Returns:
        The hook, for a conftest or a plugin to hold under the hook's name.
    """

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
        if config.getvalue("dist") != "loadfile":
            return None
        from xdist.scheduler import LoadScopeScheduling  # type: ignore[import-untyped,unused-ignore]

        class GroupScheduling(LoadScopeScheduling):  # type: ignore[misc,unused-ignore]
            def _split_scope(self, nodeid: str) -> str:
                return group_of(nodeid)

        return GroupScheduling(config, log)

    return pytest_xdist_make_scheduler

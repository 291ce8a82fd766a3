"""How pytest-xdist shares the suite out under ``--dist loadfile``: by groups of tests that one
function names, each group on one worker. ``tests/conftest.py`` groups by file, and the serial
tier (``tests/tiers.py``) into one group of its own, run one test at a time."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

Hook = Callable[[pytest.Config, Any], Any]


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

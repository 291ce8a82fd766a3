"""Which tier each test belongs to, by where it lives: the one place that says so.

``tests/conftest.py`` marks every collected test with its tiers; ``scripts/suite.py`` selects by
the marks. A test is in the tiers whose entries are a prefix of its node id (a directory, a file,
or a file and a test name), and may be in several.

- ``serial``: must not share the machine with another of its kind (many processes at once,
  clocks, restarts, memory peaks, the benchmarks' own rows), so under pytest-xdist these run one
  at a time on a worker of their own (``tests/conftest.py``).
- ``once``: does not depend on the interpreter or the versions installed (packaging, the docs
  site, the benchmarks' reporting, the repository's own rules): ``make test`` runs it, the
  matrix does not.
- ``smoke``: the subset the Pythons between the support window's ends run: the core, parsing,
  the clients, the transport, the framework helpers, the testing kit, and what changes with the
  interpreter (below).
"""

from __future__ import annotations

SERIAL = (
    "tests/ledger/test_races.py",  # 8 worker processes per race, some through PgBouncer
    "tests/ledger/on_django/test_races.py",
    "tests/ledger/test_restarts.py",  # restarts the PostgreSQL server under 8 workers
    "tests/ledger/test_clocks.py",  # leases against clocks moved by libfaketime
    "tests/transport/test_memory.py",  # peak RSS of child processes
    "tests/transport/test_stream_memory.py",
    "tests/ledger/test_reconcile.py::test_reconciling_a_long_list_that_is_in_order_keeps_memory",
    "tests/benchmarks/test_rows.py",  # each benchmark row, run for real with --quick
)

ONCE = (
    "tests/benchmarks/",  # the benchmarks' measuring and reporting
    "tests/project/test_dependencies.py",  # pyproject.toml's declarations, read as text
    "tests/project/test_docs_check.py",  # the rendered site's checks
    "tests/project/test_docs_examples.py",  # the pages' Python blocks (their syntax: 3.10's)
    "tests/project/test_docs_layout.py",
    "tests/project/test_docs_shell.py",  # the pages' shell blocks, over the wheel in fresh venvs
    "tests/project/test_docs_site.py",
    "tests/project/test_docs_testing.py",  # the testing page's pytest modules
    "tests/project/test_docstrings.py",
    "tests/project/test_examples_shipping.py",  # the sdist's contents
    "tests/project/test_find_postgres.py",
    "tests/project/test_layers.py",  # import-linter's contracts
    "tests/project/test_matrix.py",
    "tests/project/test_packaging.py",  # a wheel built and installed into fresh venvs
    "tests/project/test_release.py",
    "tests/project/test_tiers.py",
    "tests/project/test_unasync.py",  # the generated sync code is current
    "tests/project/test_private_names.py",  # paysdk uses only the HTTP libraries' public names
)

SMOKE = (
    "tests/core/",
    "tests/parsing/",  # the collector's pauses and memory change with the interpreter's GC
    "tests/client/",
    "tests/transport/",  # sockets, TLS, event loops, forks: each Python changes some of them
    # the framework helpers against each framework's test client; not the example apps nor the
    # module-level clients, which start an app or a Django project per test in fresh processes
    # to prove the apps' and the frameworks' start-up, not the interpreter's: the ends run them,
    # as they run the guide's views for frameworks without a helper (the recipes' tests)
    "tests/integrations/test_callback_core.py",
    "tests/integrations/test_decorator_misuse.py",
    "tests/integrations/test_django.py",
    "tests/integrations/test_django_ninja.py",
    "tests/integrations/test_django_rest_framework.py",
    "tests/integrations/test_extras.py",
    "tests/integrations/test_fastapi.py",
    "tests/integrations/test_flask.py",
    "tests/integrations/test_responses.py",
    "tests/testing/",  # the pytest plugin, which loads through the interpreter's entry points
    "tests/sandbox/",  # http.server and asyncio streams, which the sandbox is built on
    "tests/cli/test_commands.py",  # argparse's help and errors differ across Pythons
    "tests/cli/test_usage_errors.py",
    "tests/ledger/test_ledger.py",  # the sqlite3 module's transactions changed in 3.12
    "tests/ledger/test_sqlite_errors.py",  # and its error messages with SQLite's version
)

TIERS = {"serial": SERIAL, "once": ONCE, "smoke": SMOKE}


def tiers_of(nodeid: str) -> list[str]:
    """The tiers of the test ``nodeid`` (``tests/...py::name[param]``), in ``TIERS``' order.

    Args:
        nodeid: pytest's node id, relative to the repository's root.
    """
    return [tier for tier, prefixes in TIERS.items() if nodeid.startswith(prefixes)]

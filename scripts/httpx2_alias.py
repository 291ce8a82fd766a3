"""Make every interpreter of a virtual environment run httpx code on httpx2, lazily.

httpx2 (httpx's maintained successor) offers ``httpx2.alias_httpx()``: from then on ``import httpx``
gives ``httpx2`` and ``import httpcore`` gives ``httpcore2``; it must run before anything imports
either. Installed into a venv (``python scripts/httpx2_alias.py`` with the venv's Python, as the
matrix's httpx2 job does), this module is imported by a ``.pth`` file at each interpreter's start
and puts a finder first on ``sys.meta_path`` that calls ``alias_httpx()`` the first time ``httpx``
or ``httpcore`` is imported, then leaves the rest to httpx2's own finder. A process that never
imports httpx pays one finder call per import of a top-level package; without httpx2 installed,
the finder steps aside and the real httpx loads. ``PAYSDK_HTTPX2_ALIAS=off`` in a process's
environment leaves it on httpx (the tests of paysdk without the alias do so).

This file is the only copy in the repository; it imports nothing outside the standard library, so
that it can run before anything else is installed.
"""

import sys

TYPE_CHECKING = False  # as typing's, without importing typing at each interpreter's start
if TYPE_CHECKING:
    from collections.abc import Sequence
    from importlib.machinery import ModuleSpec
    from types import ModuleType

MODULE = "_paysdk_httpx2_alias"
"""The name this file takes in the venv's site-packages."""

PTH = "paysdk_httpx2_alias.pth"
"""The ``.pth`` file that imports it at each interpreter's start."""

ALIASED = {"httpx": "httpx2", "httpcore": "httpcore2"}
"""Each name ``alias_httpx()`` redirects, with the package it redirects to."""


class AliasOnFirstImport:
    """A ``sys.meta_path`` finder: an aliased package's first import calls ``alias_httpx()``."""

    def find_spec(
        self,
        fullname: str,
        path: "Sequence[str] | None" = None,
        target: "ModuleType | None" = None,
    ) -> "ModuleSpec | None":
        """A spec whose loader aliases, for ``httpx`` or ``httpcore`` while httpx2 is installed.

        Submodules need nothing of this finder: their package's import has aliased already, and
        httpx2's finder, now ahead of this one, answers for them.
        """
        real = ALIASED.get(fullname)
        if real is None:
            return None
        from importlib.machinery import ModuleSpec
        from importlib.util import find_spec

        if find_spec("httpx2") is None:  # not installed (yet): the real httpx loads as ever
            return None
        # a loader by protocol: importlib.abc would cost every interpreter's start its import
        return ModuleSpec(fullname, _AliasingLoader(real))  # type: ignore[arg-type]


class _AliasingLoader:
    """Calls ``alias_httpx()``, then gives the module it put in the aliased name's place.

    The alias is made here, not in ``find_spec``: once ``sys.modules`` holds the aliased name,
    the import system would load the module that name holds a second time, from its own spec.
    """

    def __init__(self, real: str) -> None:
        self._real = real
        self._spec: ModuleSpec | None = None

    def create_module(self, spec: "ModuleSpec") -> "ModuleType":
        import httpx2  # type: ignore[import-not-found, unused-ignore]  # only in the httpx2 job

        httpx2.alias_httpx()
        module = sys.modules[self._real]
        self._spec = module.__spec__
        return module

    def exec_module(self, module: "ModuleType") -> None:
        """Give the module back the spec it was loaded with: it is the same module as before."""
        module.__spec__ = self._spec


OPT_OUT = "PAYSDK_HTTPX2_ALIAS"
"""The environment variable that, set to ``off``, leaves a process on httpx."""


def install() -> None:
    """Put the finder first on ``sys.meta_path``, once (the ``.pth`` file calls this)."""
    import os  # imported already by the interpreter's start (site)

    if os.environ.get(OPT_OUT) == "off":
        return
    if not any(isinstance(finder, AliasOnFirstImport) for finder in sys.meta_path):
        sys.meta_path.insert(0, AliasOnFirstImport())  # type: ignore[arg-type, unused-ignore]


def install_into_venv() -> str:
    """Copy this file into the running interpreter's site-packages as ``MODULE``, beside a ``.pth``
    file that installs the finder at each start.

    Returns:
        The site-packages directory written to.
    """
    import py_compile
    import sysconfig
    from pathlib import Path

    site_packages = Path(sysconfig.get_path("purelib"))
    module = site_packages / f"{MODULE}.py"
    module.write_text(Path(__file__).read_text(encoding="utf-8"), encoding="utf-8")
    py_compile.compile(str(module), doraise=True)  # compiled once, not at each start
    (site_packages / PTH).write_text(f"import {MODULE}; {MODULE}.install()\n", encoding="utf-8")
    return str(site_packages)


if __name__ == "__main__":
    print(f"httpx2 aliasing installed in {install_into_venv()}")

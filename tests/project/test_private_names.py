"""paysdk uses only the public names of httpx, httpcore and anyio.

A private name (``httpx._transports``, ``transport._pool``) is free to change in any release
of its library, and paysdk's users would meet the change as a crash. This reads every module
of ``src/paysdk`` with ``ast`` (nothing is imported but the libraries' classes paysdk
subclasses) and refuses:

- importing a private module or name: ``import httpx._models``, ``from httpx._x import y``,
  ``from httpx import _x``;
- an attribute starting with ``_`` read or set through a name an import of those libraries
  binds: ``httpx._something``, ``httpcore.ConnectionPool._connections``, ``Client._transport``;
- the libraries' well-known private attributes (``KNOWN_PRIVATE``) read, set or deleted on any
  object, directly or through ``getattr``/``setattr``/``hasattr``/``delattr``;
- in a class of paysdk's made from one of theirs, a ``self._name`` that their class's own code
  uses: setting it would reach into their object.

``ALLOWED`` lists the one exception, with its reason. Each rule is shown to bite on a snippet.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from collections.abc import Iterator
from pathlib import Path
from types import CodeType

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "paysdk"

LIBRARIES = ("httpx", "httpcore", "anyio")
"""The libraries whose private names paysdk must not touch."""

KNOWN_PRIVATE = frozenset(
    {
        "_pool",  # httpx's transports' httpcore pool
        "_transport",  # httpx's clients' default transport
        "_mounts",  # httpx's clients' transports by URL pattern
        "_retry_connection",  # aiohttp's ClientSession: resend on a dropped kept-alive connection
        "_connections",  # httpcore's pools' connection list
        "_network_backend",  # httpcore's pools' socket opener
    }
)
"""Private attributes of those libraries (and aiohttp) refused on any object, whatever it is
bound to: the rules by name cannot follow an object handed from one function to another."""

ALLOWED = {
    ("_transport/aiohttp_sender.py", "_retry_connection"): (
        "aiohttp has no public way to stop a ClientSession from quietly resending a request "
        "whose kept-alive connection dropped, behind paysdk's retry policy; backend() checks "
        "that the attribute still exists (ClientSession.ATTRS) and refuses loudly otherwise"
    ),
}
"""(module under src/paysdk, name): why paysdk touches that private name there."""


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _is_library(module: str | None) -> bool:
    return module is not None and module.split(".")[0] in LIBRARIES


def _bound_names(tree: ast.AST) -> dict[str, str]:
    """Each name an import of the libraries binds anywhere in the module, and what it names
    (``httpx``, ``httpx.Client``)."""
    bound: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _is_library(alias.name):
                    if alias.asname:
                        bound[alias.asname] = alias.name
                    else:
                        root = alias.name.split(".")[0]
                        bound[root] = root
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and _is_library(node.module):
            for alias in node.names:
                bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return bound


def _chain(node: ast.expr) -> list[str] | None:
    """``a.b.c`` as ``["a", "b", "c"]``; ``None`` when it is not rooted at a plain name."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return [node.id, *reversed(parts)]


def _resolve(dotted: str) -> object:
    """The object a dotted name of the libraries names: ``httpx.AsyncBaseTransport``."""
    parts = dotted.split(".")
    obj: object = importlib.import_module(parts[0])
    for part in parts[1:]:
        obj = getattr(obj, part)
    return obj


def _code_names(code: CodeType) -> Iterator[str]:
    yield from code.co_names
    for const in code.co_consts:
        if isinstance(const, CodeType):
            yield from _code_names(const)


def _names_used_by(cls: type) -> set[str]:
    """Every attribute name the library class (and its library bases) defines or its code uses."""
    names: set[str] = set()
    for base in inspect.getmro(cls):
        if not _is_library(base.__module__):
            continue
        for name, value in vars(base).items():
            names.add(name)
            function = inspect.unwrap(value) if callable(value) else value
            code = getattr(function, "__code__", None)
            if isinstance(code, CodeType):
                names.update(_code_names(code))
    return names


def _library_bases(node: ast.ClassDef, bound: dict[str, str]) -> list[type]:
    bases: list[type] = []
    for base in node.bases:
        chain = _chain(base)
        if chain is None or chain[0] not in bound:
            continue
        resolved = _resolve(".".join([bound[chain[0]], *chain[1:]]))
        if isinstance(resolved, type):
            bases.append(resolved)
    return bases


def violations(source: str, module: str) -> list[str]:
    """Each private name of the libraries that ``source`` touches, as ``module:line: what``,
    less those ``ALLOWED`` for ``module``."""
    tree = ast.parse(source)
    bound = _bound_names(tree)
    found: list[tuple[int, str, str]] = []  # line, the private name, what touches it

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _is_library(alias.name) and any(map(_is_private, alias.name.split("."))):
                    found.append((node.lineno, alias.name, f"imports {alias.name}"))
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and _is_library(node.module):
            assert node.module is not None
            if any(map(_is_private, node.module.split("."))):
                found.append((node.lineno, node.module, f"imports from {node.module}"))
            for alias in node.names:
                if _is_private(alias.name):
                    found.append((node.lineno, alias.name, f"imports {node.module}.{alias.name}"))
        elif isinstance(node, ast.Attribute):
            chain = _chain(node)
            if node.attr in KNOWN_PRIVATE:
                found.append((node.lineno, node.attr, f"touches .{node.attr}"))
            elif chain is not None and chain[0] in bound and _is_private(node.attr):
                found.append((node.lineno, node.attr, f"touches {'.'.join(chain)}"))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "setattr", "hasattr", "delattr")
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
        ):
            name = node.args[1].value
            target = _chain(node.args[0])
            on_library = target is not None and target[0] in bound
            if name in KNOWN_PRIVATE or (on_library and _is_private(name)):
                found.append((node.lineno, name, f"{node.func.id}(..., {name!r})"))
        elif isinstance(node, ast.ClassDef):
            bases = _library_bases(node, bound)
            theirs = set().union(*map(_names_used_by, bases)) if bases else set()
            for inner in ast.walk(node):
                if (
                    isinstance(inner, ast.Attribute)
                    and isinstance(inner.value, ast.Name)
                    and inner.value.id == "self"
                    and _is_private(inner.attr)
                    and inner.attr in theirs
                ):
                    found.append(
                        (inner.lineno, inner.attr, f"self.{inner.attr} of {node.name}'s base")
                    )
    return sorted(
        {f"{module}:{line}: {what}" for line, name, what in found if (module, name) not in ALLOWED}
    )


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_paysdk_touches_no_private_name_of_httpx_httpcore_or_anyio() -> None:
    """No module of paysdk imports, reads or sets a private name of httpx, httpcore or anyio
    (nor a well-known private attribute of any object), but for ``ALLOWED``."""
    found: list[str] = []
    for path in _modules():
        module = path.relative_to(PACKAGE).as_posix()
        found += violations(path.read_text(encoding="utf-8"), module)
    assert not found, "\n".join(found)


def test_each_exception_is_still_needed() -> None:
    """An exception nothing uses any more is removed from ``ALLOWED``."""
    for module, name in ALLOWED:
        source = (PACKAGE / module).read_text(encoding="utf-8")
        assert f".{name}" in source, f"{module} no longer touches {name}: drop it from ALLOWED"


@pytest.mark.parametrize(
    "source",
    [
        "import httpx._transports.default",
        "import httpcore._sync as sync",
        "from httpx._transports.default import map_httpcore_exceptions",
        "from httpx import _models",
        "from anyio._core import _eventloop",
        "import httpx\nhttpx._config",
        "import httpx as h\nh.Client._transport_for_url",
        "from httpcore import ConnectionPool\nConnectionPool._assign_requests_to_connections",
        "import anyio\nanyio.abc._private_thing = 1",
        "def f(client):\n    return client._transport",
        "def f(client):\n    client._mounts.clear()",
        "def f(pool):\n    del pool._connections",
        "def f(transport):\n    return getattr(transport, '_pool')",
        "def f(session):\n    setattr(session, '_retry_connection', False)",
        "import httpx\ndef f(c):\n    return getattr(httpx.Client, '_send_single_request')",
        "import httpx\nclass T(httpx.HTTPTransport):\n    def __init__(self):\n"
        "        self._pool = None",
        "import httpcore\nclass P(httpcore.ConnectionPool):\n    def size(self):\n"
        "        return len(self._requests)",
    ],
)
def test_each_rule_refuses_a_private_name(source: str) -> None:
    """Each kind of reach into a library's insides is refused, so a rule that stopped biting
    would be noticed."""
    assert violations(source, "example.py") != []


@pytest.mark.parametrize(
    "source",
    [
        "import httpx\nhttpx.__version__",
        "import httpx\nhttpx.Client",
        "from httpcore import Request\nRequest.__init__",
        "import httpx\nclass T(httpx.BaseTransport):\n    def __init__(self):\n"
        "        self._routes = None",
        "def f(self):\n    return self._reader",
        "from . import _core\n_core._private",
        "import paysdk\npaysdk._core",
    ],
)
def test_public_names_and_paysdk_s_own_pass(source: str) -> None:
    """Public names of the libraries, and paysdk's own private names, are not refused."""
    assert violations(source, "example.py") == []


def test_the_exception_is_kept_to_its_module() -> None:
    """``_retry_connection`` is allowed in the aiohttp sender alone."""
    source = "def f(session):\n    session._retry_connection = False"
    assert violations(source, "_transport/aiohttp_sender.py") == []
    assert violations(source, "_transport/httpx_async.py") != []

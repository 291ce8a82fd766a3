"""The error for a framework helper imported without its extra: it says what to install."""

from __future__ import annotations

DISTRIBUTION = "python-paysdk"
"""The name paysdk is installed by (``paysdk`` on PyPI is another project)."""


def missing_extra(module: str, extra: str, error: ModuleNotFoundError) -> ModuleNotFoundError:
    """A ``ModuleNotFoundError`` for ``module`` naming the extra that installs what it imports."""
    package = (error.name or "").partition(".")[0] or None  # starlette.requests -> starlette
    return ModuleNotFoundError(
        f"{module} needs {package or 'a package'!r}, which is not installed: "
        f"pip install '{DISTRIBUTION}[{extra}]'",
        name=package,
    )

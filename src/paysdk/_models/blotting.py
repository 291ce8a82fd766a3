"""How a ``repr`` blots out the secret key a body held: for the models, and for what is made of
their fields (a reconcile report's discrepancies). Plain text: it loads no pydantic."""

from __future__ import annotations

__all__ = ["blot_repr"]


def blot_repr(text: str, key: str | None) -> str:
    """``text``, a ``repr``, with ``key`` blotted out as given and as a repr quotes it.

    Args:
        text: the repr.
        key: the secret key a body held (``wire.hidden_key``); ``None`` leaves ``text`` as it is.

    Returns:
        ``text``, each spelling of ``key`` in it ``<secret key>``.
    """
    if not key:
        return text
    quoted = key.replace("\\", "\\\\")  # as a repr quotes it: a backslash doubled,
    for form in (quoted.replace("'", "\\'"), quoted, key):  # and ' escaped where " is too
        text = text.replace(form, "<secret key>")
    return text

"""An incremental parser for list's ``{"data": [...]}`` body: payments out as the bytes come in,
one unfinished element held at a time, never the list. Each element is cut out and decoded by
the standard library's C scanner (``json.JSONDecoder.raw_decode``) and validated with
``ListedPayment.model_validate``: on a 100,000-payment body (docs/performance.md) about 1.25x
``json.loads`` of the whole body, against about 1.45x for ``ijson``'s C backend with the same
validation, so the fastest choice is also the one with no new dependency.
"""

from __future__ import annotations

import codecs
import json
import re
from typing import TYPE_CHECKING, Final

from pydantic import ValidationError

from .repair import not_utf8, without_lone_surrogates

if TYPE_CHECKING:
    from .._models.listed import ListedPayment


_SPACE: Final = re.compile(r"[ \t\n\r]*")


def _skip_space(text: str, pos: int) -> int:
    match = _SPACE.match(text, pos)
    return pos if match is None else match.end()


_DECODER: Final = json.JSONDecoder()
_CLOSERS: Final = re.compile(r"[}\],]")
_NOT_DOCUMENTED: Final = "a body that is not the documented shape"


class ListStream:
    """Feed it the body's chunks; it returns the payments each chunk completed.

    Raises ``ValueError`` for a body that is not JSON, is not the documented shape, or holds a
    single value over ``max_item_bytes``; ``pydantic.ValidationError`` for a payment that is
    not (``where`` says which one).
    """

    def __init__(self, *, max_item_bytes: int) -> None:
        from .._models.listed import ListedPayment  # built with the first list streamed

        self._validate = ListedPayment.model_validate
        self.max_item_bytes = max_item_bytes
        self.count = 0
        self._decoder = codecs.getincrementaldecoder("utf-8-sig")(errors="replace")
        """UTF-8 after a byte order mark, if the server wrote one (``json.loads`` reads it so)."""
        self._read = 0
        """Bytes decoded so far."""
        self._not_utf8: str | None = None
        """Where the body first held a byte that is not UTF-8 (``repair.not_utf8``), once seen."""
        self._text = ""
        self._pos = 0
        self._state = "start"
        self._key: str | None = None
        self._seen_data = False
        self._waiting = False
        """The last parse stopped inside a value (``_tried`` characters of it). Chunks are then
        only kept until one could close it (a ``}``, ``]`` or ``,``, perhaps inside a string)
        and they add up to as much again: each retry parses at most twice what is new since the
        last, so a value in any number of chunks costs linear time, not quadratic. Held text
        past ``max_item_bytes`` is parsed at once: it may be the value's end and the next ones,
        and only a parse tells a value over the cap from values under it."""
        self._tried = 0
        self._held: list[str] = []
        self._held_size = 0
        self._held_closer = False

    @property
    def where(self) -> tuple[str | int, ...]:
        """Where the element being validated sits in the body, for error locations."""
        return ("data", self.count)

    def feed(self, chunk: bytes) -> list[ListedPayment]:
        text = self._decode(chunk)
        if self._waiting:
            self._held.append(text)
            self._held_size += len(text)
            self._held_closer = self._held_closer or _CLOSERS.search(text) is not None
            unfinished = len(self._text) - self._pos + self._held_size
            if not self._held_closer:  # the value goes on: all of it is one value
                self._check_size(unfinished)
                return []
            if self._held_size < self._tried and unfinished <= self.max_item_bytes:
                return []
            # past the cap, what is held may be the value's end and the next ones: parse to see
            text = ""
        self._take_held(text)
        items = self._parse(final=False)
        self._check_size(len(self._text) - self._pos)
        return items

    def _decode(self, chunk: bytes, final: bool = False) -> str:
        """``chunk`` as text, each byte that is not UTF-8 read as U+FFFD (as ``repair`` does);
        the first such byte's place is kept, for an error that the body is not JSON."""
        pending = self._decoder.getstate()[0]
        text = self._decoder.decode(chunk, final)
        if self._not_utf8 is None and "\ufffd" in text:  # one sent as such, or a byte replaced
            self._not_utf8 = not_utf8(pending + chunk, self._read - len(pending), final=final)
        self._read += len(chunk)
        return text

    def _not_json(self, problem: str) -> ValueError:
        """The error for a body that is not JSON (or not shaped as documented) at ``problem``,
        saying where it holds bytes that are not UTF-8: the cause, most likely, read as U+FFFD."""
        if self._not_utf8 is not None:
            problem = f"{problem}, holding {self._not_utf8}"
        return ValueError(problem)

    def _take_held(self, text: str) -> None:
        if self._held:
            text = "".join(self._held) + text
            self._held.clear()
            self._held_size = 0
            self._held_closer = False
        self._text = self._text[self._pos :] + text if self._pos else self._text + text
        self._pos = 0

    def _check_size(self, unfinished: int) -> None:
        if unfinished > self.max_item_bytes:
            raise ValueError(
                f"a single value larger than the {self.max_item_bytes:,} bytes allowed "
                "(max_response_bytes)"
            )

    def close(self) -> list[ListedPayment]:
        """Parse what is left at the end of the body; raise if the body is incomplete."""
        self._take_held(self._decode(b"", final=True))
        items = self._parse(final=True)
        if self._state != "end":
            if self._state == "start" and not self._text.strip():
                raise ValueError("an empty body")
            raise self._not_json("a body that is cut short or is not JSON")
        if not self._seen_data:
            raise ValueError(f"{_NOT_DOCUMENTED}: data: Field required")
        return items

    def _parse(self, *, final: bool) -> list[ListedPayment]:
        self._waiting = False
        items: list[ListedPayment] = []
        text = self._text
        end = len(text)
        validate = self._validate
        while True:
            pos = _skip_space(text, self._pos)
            if pos >= end:
                self._pos = pos
                return items
            char = text[pos]
            state = self._state
            if state == "element" or (state == "items" and char != "]"):
                value, after = self._value(text, pos, final)
                if after is None:
                    return items
                try:
                    items.append(validate(value))
                except ValidationError as exc:
                    items.append(self._readable(value, exc))
                self.count += 1
                self._pos, self._state = after, "separator"
            elif state in ("items", "separator"):
                if char == "]":
                    self._pos, self._state = pos + 1, "after_value"
                elif char == "," and state == "separator":
                    self._pos, self._state = pos + 1, "element"
                else:
                    raise self._not_json("a body that is not JSON")
            elif state == "start":
                if char != "{":
                    raise self._not_json(f"{_NOT_DOCUMENTED}: body is not a JSON object")
                self._pos, self._state = pos + 1, "key"
            elif state in ("key", "next_key"):
                if char == "}" and state == "key":
                    self._pos, self._state = pos + 1, "end"
                    continue
                key, after = self._value(text, pos, final)
                if after is None:
                    return items
                if not isinstance(key, str):
                    raise self._not_json("a body that is not JSON")
                if key == "data" and self._seen_data:  # its first list is handed out already
                    raise ValueError(f"{_NOT_DOCUMENTED}: data: given twice")
                self._key, self._pos, self._state = key, after, "colon"
            elif state == "colon":
                if char != ":":
                    raise self._not_json("a body that is not JSON")
                self._pos, self._state = pos + 1, "value"
            elif state == "value":
                if self._key == "data":
                    if char != "[":
                        raise self._not_json(
                            f"{_NOT_DOCUMENTED}: data: Input should be a valid list"
                        )
                    self._seen_data = True
                    self._pos, self._state = pos + 1, "items"
                    continue
                _, after = self._value(text, pos, final)  # another field: not kept
                if after is None:
                    return items
                self._pos, self._state = after, "after_value"
            elif state == "after_value":
                if char == "}":
                    self._pos, self._state = pos + 1, "end"
                elif char == ",":
                    self._pos, self._state = pos + 1, "next_key"
                else:
                    raise self._not_json("a body that is not JSON")
            else:  # "end": only white space may follow
                raise self._not_json("a body with more after its closing brace")

    def _readable(self, value: object, error: ValidationError) -> ListedPayment:
        """The payment ``value`` without the optional fields it could not read, or ``error``
        (``_parsing/lenient.py``)."""
        from .._models.listed import ListedPayment
        from .lenient import Shape, readable_value

        return readable_value(self._validate, value, error, Shape(ListedPayment, "payment"))

    def _value(self, text: str, pos: int, final: bool) -> tuple[object, int | None]:
        """One JSON value at ``pos`` and where it ends, or ``None`` if more bytes must come."""
        try:
            value, after = _DECODER.raw_decode(text, pos)
        except json.JSONDecodeError:
            if final:
                raise self._not_json("a body that is cut short or is not JSON") from None
            return self._wait(text, pos)
        except ValueError:  # sys.get_int_max_str_digits, 4,300 unless the application changed it
            raise ValueError(
                "a body with a number too long to read (more digits than Python reads into an int)"
            ) from None
        except RecursionError:
            raise ValueError("a body nested too deeply") from None
        if after >= len(text) and not final:  # a number may go on in the next chunk
            return self._wait(text, pos)
        self._check_size(after - pos)  # one that arrived whole, within a single chunk
        if text.find("\\u", pos, after) != -1:  # rare: only an escape can make a lone surrogate
            value = without_lone_surrogates(value)
        return value, after

    def _wait(self, text: str, pos: int) -> tuple[None, None]:
        self._pos, self._waiting, self._tried = pos, True, len(text) - pos
        return None, None

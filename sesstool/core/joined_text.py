"""One text written as its parts joined by a separator, never held whole (issue 11 item 1).

A Claude span's system message (spec agent-formats §1.7 C) is the system-role attachment texts
of the user entries between two replies, joined by a blank line: as long as all of them. Once
those texts moved to the derivation's spill file (``dialects/claude/user_span.py``), the
message's text is a ``JoinedText``: a ``core.closer_list.Closers`` of the parts (made anew, one
at a time, each time it is walked) that stands for ``separator.join(parts)``. What walks a
``Closers`` walks it as it is: ``closer_list.walked`` (the redactor meets every part),
``walked_encodable`` (the text is encodable exactly when each part is: the separator is, and
orjson refuses a text only for a lone surrogate, one character). The writers write it as the one
string it stands for: ``render/json_stream.py`` (one JSON string, its parts encoded one at a
time), ``render/derive_markdown.py`` and ``render/derive_view.py`` (a part at a time);
``core/redact.py`` redacts it (whole up to a fixed size, else part by part: docs/format.md
"Memory"); ``core/transcript.py`` gives the report its first characters and how many follow.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from sesstool.core.closer_list import Closers


class JoinedText(Closers[str]):
    """``separator.join(parts)`` of ``length`` parts that ``make()`` produces anew on each walk.
    As a sequence, its parts (``len``: how many); as a text, ``pieces()`` (the parts with the
    separators between them), ``chars()``, ``head(n)``. Equal to the ``str`` it stands for (and
    to another ``JoinedText`` of the same text), compared piece by piece."""

    __slots__ = ("_chars", "separator")
    _what = "part index"

    def __init__(self, make: Callable[[], Iterable[str]], length: int, separator: str = "\n\n") -> None:
        if not (separator.startswith("\n") and separator.endswith("\n")):
            raise ValueError("a separator of whole lines: the text views print a part at a time")
        super().__init__(make, length)
        self.separator = separator
        self._chars: int | None = None

    def pieces(self) -> Iterator[str]:
        """The text in order: the first part, then the separator and a part, and so on."""
        for n, part in enumerate(self):
            if n:
                yield self.separator
            yield part

    def chars(self) -> int:
        """The text's length in characters (counted in one walk, then known)."""
        if self._chars is None:
            self._chars = sum(map(len, self.pieces()))
        return self._chars

    def head(self, limit: int) -> str:
        """The first ``limit`` characters of the text (the parts walked up to them)."""
        held: list[str] = []
        size = 0
        for piece in self.pieces():
            if size >= limit:
                break
            held.append(piece[: limit - size])
            size += len(held[-1])
        return "".join(held)

    def whole(self, limit: int) -> str | None:
        """The text as one ``str`` when it has at most ``limit`` characters, else None (the parts
        walked only up to the limit)."""
        held: list[str] = []
        size = 0
        for piece in self.pieces():
            size += len(piece)
            if size > limit:
                return None
            held.append(piece)
        return "".join(held)

    def between(self) -> list[str]:
        """The lines the separator puts between the last line of a part and the first line of
        the next (a blank line: one empty line)."""
        return self.separator.split("\n")[1:-1]

    def each(self, then: Callable[[str], str]) -> JoinedText:
        """The same text with each part made into ``then(part)`` as it is walked (the separators
        kept)."""
        return JoinedText(lambda: map(then, self), len(self), self.separator)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            return _same(self.pieces(), iter((other,)))
        if isinstance(other, JoinedText):
            return _same(self.pieces(), other.pieces())
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"JoinedText({len(self)} parts)"


def _same(a: Iterator[str], b: Iterator[str]) -> bool:
    """Do two runs of pieces make the same text (compared a slice at a time, nothing joined)?"""
    left, right = "", ""
    i = j = 0  # how far into ``left`` and ``right``
    while True:
        if i == len(left):
            found = next(a, None)
            if found is None:
                return j == len(right) and all(not piece for piece in b)
            left, i = found, 0
            continue
        if j == len(right):
            found = next(b, None)
            if found is None:
                return False  # ``left`` has characters still
            right, j = found, 0
            continue
        size = min(len(left) - i, len(right) - j)
        if left[i : i + size] != right[j : j + size]:
            return False
        i, j = i + size, j + size

"""The distinct values a log chooses for a field, bounded (issue 11 item 1; docs/format.md, "Memory").

A hostile log can give every entry its own session id, version, cwd, branch, model or type
(spec agent-formats §1.3, §1.6: nothing limits them), so a set of them grows with the file.
``FirstSeen`` keeps the first ``FIRST_SEEN`` distinct values in first-seen order, each with a
small value (a count, a line), and past them only that there were more: a count of the values
beyond would need every value seen, and outputs say "and more" instead of a number. What a
scan says once per value (an unknown type) it says again for a value past them, never not at
all (``fresh``): the findings are capped by ``--max-findings`` and the rest weighed anyway.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Generic, TypeVar

FIRST_SEEN = 64  # distinct values kept per field; a recorded session has a handful

V = TypeVar("V")


def more_note(name: str, more: Iterable[str]) -> str:
    """What a text row adds after the list ``name`` when it stopped at ``FIRST_SEEN`` values
    (``more``: the names of the lists that did): ", … and more (the first 64 shown)", else ""."""
    return f", … and more (the first {FIRST_SEEN} shown)" if name in more else ""


def said_once(seen: FirstSeen[None], key: str, said: str, more: str) -> str | None:
    """What a note says of ``key`` (a value the log chose): ``said`` the first time it is met,
    for the first ``FIRST_SEEN`` distinct keys of ``seen``; ``more`` for a key beyond them (the
    reader of the note keeps it once); None for a key already said."""
    if seen.add(key, None):
        return said
    return None if key in seen else more


class FirstSeen(Generic[V]):
    """The first ``limit`` distinct keys, in first-seen order, each with a value; ``more``
    once a key beyond them was offered."""

    __slots__ = ("kept", "limit", "more")

    def __init__(self, limit: int = FIRST_SEEN) -> None:
        self.limit = limit
        self.kept: dict[str, V] = {}
        self.more = False

    def add(self, key: str, value: V) -> bool:
        """Keep ``key`` with ``value`` when new and there is room; True when it was kept now."""
        if key in self.kept:
            return False
        if len(self.kept) < self.limit:
            self.kept[key] = value
            return True
        self.more = True
        return False

    def fresh(self, key: str, value: V) -> bool:
        """``add``, answering whether ``key`` was not among the kept keys before: past the limit
        a key not kept is fresh every time it comes (it cannot be told apart from one dropped),
        so what is said once per key is said again rather than never."""
        if key in self.kept:
            return False
        self.add(key, value)
        return True

    def __contains__(self, key: object) -> bool:
        return key in self.kept

    def __iter__(self) -> Iterator[str]:
        return iter(self.kept)

    def __len__(self) -> int:
        return len(self.kept)

    def __getitem__(self, key: str) -> V:
        return self.kept[key]

    def copy(self) -> FirstSeen[V]:
        twin: FirstSeen[V] = FirstSeen(self.limit)
        twin.kept, twin.more = dict(self.kept), self.more
        return twin


class Tally(FirstSeen[int]):
    """A ``FirstSeen`` that counts how often each kept key came (keys beyond: only ``more``)."""

    __slots__ = ()

    def count(self, key: str) -> bool:
        """Count one ``key``; True when it is new and kept now."""
        if key in self.kept:
            self.kept[key] += 1
            return False
        return self.add(key, 1)

    def copy(self) -> Tally:
        twin = Tally(self.limit)
        twin.kept, twin.more = dict(self.kept), self.more
        return twin

"""The distinct values a log chooses for a field, bounded (issue 11 item 1; docs/format.md, "Memory").

A hostile log can give every entry its own session id, version, cwd, branch, model or type
(spec agent-formats §1.3, §1.6: nothing limits them), so a set of them grows with the file.
``FirstSeen`` keeps the first ``FIRST_SEEN`` distinct values in first-seen order, each with a
small value (a count, a line), and past them only that there were more: a count of the values
beyond would need every value seen, and outputs say "and more" instead of a number. What a
scan says once per value (an unknown type) it says again for a value past them, never not at
all (``fresh``): the findings are capped by ``--max-findings`` and the rest weighed anyway.

Nor is a kept value held whole whatever its length (stop 32): one up to ``CHOSEN_CHARS`` (128)
characters is held as it is, as before; a longer one as it is quoted (``humanize.chosen``: its
first 128 characters and its length, what every output then prints: iteration gives this form)
with a 32-byte BLAKE2b digest of the whole value, by which values are told apart (``held_key``):
two long values alike in their first 128 characters and their length are two values, printed
alike. A field holds at most ``FIRST_SEEN`` short values or quoted forms and digests.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from typing import Generic, TypeVar

from sesstool.core.humanize import CHOSEN_CHARS, chosen

FIRST_SEEN = 64  # distinct values kept per field; a recorded session has a handful

V = TypeVar("V")


def held_key(value: object) -> object:
    """What a kept value is told apart by: a string longer than ``CHOSEN_CHARS`` by the BLAKE2b
    digest (32 bytes, never equal to a string) of its whole UTF-8, lone surrogates passed
    through; anything else by itself."""
    if isinstance(value, str) and len(value) > CHOSEN_CHARS:
        return hashlib.blake2b(value.encode("utf-8", "surrogatepass"), digest_size=32).digest()
    return value


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
    once a key beyond them was offered. ``kept`` maps each key's ``held_key`` to its value
    (a key up to ``CHOSEN_CHARS`` is its own: the hot loops count known types in it directly),
    ``shown`` a long key's digest to its quoted form."""

    __slots__ = ("kept", "limit", "more", "shown")

    def __init__(self, limit: int = FIRST_SEEN) -> None:
        self.limit = limit
        self.kept: dict[object, V] = {}
        self.shown: dict[object, str] = {}
        self.more = False

    def add(self, key: str, value: V) -> bool:
        """Keep ``key`` with ``value`` when new and there is room; True when it was kept now."""
        held = self._new(key)
        return held is not None and self._keep(held, key, value)

    def _new(self, key: str) -> object | None:
        """``key``'s ``held_key`` when it is not kept, else None: a short key is looked up once
        (it is its own held key), a long one by its digest as well."""
        kept = self.kept
        if key in kept:
            return None
        held = held_key(key)
        return None if held is not key and held in kept else held

    def _keep(self, held: object, key: str, value: V) -> bool:
        """Keep ``key`` (not kept: ``_new``) under ``held`` when there is room."""
        if len(self.kept) < self.limit:
            self.kept[held] = value
            if held is not key:
                self.shown[held] = chosen(key)
            return True
        self.more = True
        return False

    def fresh(self, key: str, value: V) -> bool:
        """``add``, answering whether ``key`` was not among the kept keys before: past the limit
        a key not kept is fresh every time it comes (it cannot be told apart from one dropped),
        so what is said once per key is said again rather than never."""
        held = self._new(key)
        if held is None:
            return False
        self._keep(held, key, value)
        return True

    def entries(self) -> Iterator[tuple[object, str, V]]:
        """(held key, the key as printed, value) of each kept key, in first-seen order."""
        shown = self.shown
        for held, value in self.kept.items():
            yield held, shown[held] if held in shown else str(held), value

    def items(self) -> Iterator[tuple[str, V]]:
        """(the key as printed, value) of each kept key, in first-seen order."""
        for _, key, value in self.entries():
            yield key, value

    def __contains__(self, key: object) -> bool:
        return key in self.kept or held_key(key) in self.kept  # a hit on a short key: one look-up

    def __iter__(self) -> Iterator[str]:
        """The kept keys as printed: a long one cut (``humanize.chosen``)."""
        for _, key, _ in self.entries():
            yield key

    def __len__(self) -> int:
        return len(self.kept)

    def __getitem__(self, key: str) -> V:
        return self.kept[held_key(key)]

    def copy(self) -> FirstSeen[V]:
        twin: FirstSeen[V] = FirstSeen(self.limit)
        twin.kept, twin.shown, twin.more = dict(self.kept), dict(self.shown), self.more
        return twin


class Tally(FirstSeen[int]):
    """A ``FirstSeen`` that counts how often each kept key came (keys beyond: only ``more``)."""

    __slots__ = ()

    def count(self, key: str) -> bool:
        """Count one ``key``; True when it is new and kept now."""
        kept = self.kept
        if key in kept:  # a short key: itself
            kept[key] += 1
            return False
        held = held_key(key)
        if held is not key and held in kept:  # a long key kept: by its digest
            kept[held] += 1
            return False
        return self._keep(held, key, 1)

    def copy(self) -> Tally:
        twin = Tally(self.limit)
        twin.kept, twin.shown, twin.more = dict(self.kept), dict(self.shown), self.more
        return twin

"""A Claude Code transcript's compactions (issue 11 item 1): a log can write any number of
``compact_boundary`` entries (spec agent-formats §1.6 "Compaction"), so they are held in
``held.py``'s structures — in the scan's spill file past ``held.HELD_AT`` of them — and found by
their anchor (derive looks one up per compact summary: never a walk of them all)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from sesstool.core.sequences import ItemsEqual
from sesstool.dialects.claude import held
from sesstool.dialects.claude.held import HeldList, HeldRows, Store


@dataclass(frozen=True, slots=True)
class Compaction:
    line: int
    uuid: str
    trigger: str | None
    pre_tokens: int | None
    logical_parent: str | None
    logical_parent_in_file: bool
    preserved: tuple[str, ...]
    anchor: str | None


class Compactions(ItemsEqual[Compaction]):
    """The compact_boundary entries in file order (spec agent-formats §1.6 "Compaction": one
    per ``/compact``; its ``compactMetadata.preservedMessages`` name the entries kept and the
    summary they follow, the anchor): a ``HeldList``, equal to the tuple it stands for. Found by
    anchor (``anchored``, §1.7 C: the summary's uuid) through ``HeldRows`` of anchor -> the last
    compaction with it and a ``HeldList`` of the one before it with the same anchor: a look-up
    reads only the compactions it hands back, whatever the log holds (issue 11 item 1). The
    records move to the spill file also once they preserve more than ``held.HELD_AT`` uuids in
    all (a few compactions can each name many: a record is as long as its line)."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._items: HeldList[Compaction] = HeldList(store)
        self._uuids = 0  # the preserved uuids of the records held in memory
        self._before: HeldList[int] = HeldList(store)  # the one before with the same anchor, -1: none
        self._last = HeldRows(store)  # anchor -> the last compaction with it
        self._last_none = -1  # the last compaction without an anchor

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[Compaction]:
        return self._items.walk()

    def __getitem__(self, i: Any) -> Any:
        return self._items[i]

    def __repr__(self) -> str:
        return f"Compactions({self._items!r})"

    def append(self, compaction: Compaction) -> None:
        anchor, at = compaction.anchor, len(self._items)
        if anchor is None:
            self._before.append(self._last_none)
            self._last_none = at
        else:
            self._before.append(self._last.get(anchor, -1))
            self._last[anchor] = at
        self._items.append(compaction)
        if not self._items.spilled:
            self._uuids += len(compaction.preserved)
            if self._uuids > held.HELD_AT:
                self._items.move()  # as a list of as many records would

    def anchored(self, anchor: object) -> Iterator[Compaction]:
        """The compactions whose anchor equals ``anchor``, in file order (None: those without
        one, as a summary without a uuid met them)."""
        if anchor is not None and not isinstance(anchor, str):
            return iter(())
        found: list[int] = []  # as many as it hands back
        at = self._last_none if anchor is None else self._last.get(anchor, -1)
        while at >= 0:
            found.append(at)
            at = self._before[at]
        return (self._items[n] for n in reversed(found))

    def copy(self) -> Compactions:
        twin = Compactions.__new__(Compactions)
        twin._items, twin._before, twin._last = self._items.copy(), self._before.copy(), self._last.copy()
        twin._store, twin._last_none, twin._uuids = self._store, self._last_none, self._uuids
        return twin

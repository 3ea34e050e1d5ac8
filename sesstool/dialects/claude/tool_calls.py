"""Tool calls and their results, by ``tool_use`` id (spec agent-formats §1.5, §1.6), kept
compactly for a file of any size: per id only the entry of its first call and of its first
result. A call's details are kept while it waits for its result (those are the calls a
repair closes); a result is remembered by id only when it was not written beside its call
(the entry it hangs off is not the call's): only such a result can be an orphan. A large
transcript's book moves to the graph's spill file with it (``spill``)."""

from __future__ import annotations

from array import array

from sesstool.dialects.claude.held import HeldList, HeldRows, Store
from sesstool.dialects.claude.key_index import KeyIndex
from sesstool.dialects.claude.scan_facts import ToolCall
from sesstool.store.spill import IntArray, SpilledArray, SpillFile

BLOOM_BITS = 1 << 21  # 256 KiB: a transcript has fewer tool ids than entries


class ToolBook:
    def __init__(self, held: Store | None = None) -> None:
        self.held = held if held is not None else Store()
        self.ids = KeyIndex()
        self.call_entry: IntArray = array("i")  # per id: the first entry carrying its tool_use, or -1
        # per id: the first entry with its result (a sidechain's too), or -1
        self.result_entry: IntArray = array("i")
        # Only hostile input makes these long: past ``held.HELD_AT`` items each is in the spill
        # file (issue 11 item 1). Calls without a result so far: id -> (item, call, its block's
        # place among the entry's calls); an id exactly when its call_entry is set and its
        # result_entry is not.
        self.waiting = HeldRows(self.held)
        # (item, entry, block): a tool_use id used again
        self.repeated: HeldList[tuple[int, int, int]] = HeldList(self.held)
        # (entry, id, item): results away from their call
        self.loose: HeldList[tuple[int, str, int]] = HeldList(self.held)

    def spill(self, store: SpillFile) -> None:
        """Move the ids and their entries to ``store`` (with the graph, past its ``SPILL_AT``)."""
        if not isinstance(self.call_entry, SpilledArray):
            self.ids.spill(store, BLOOM_BITS)
            self.call_entry = SpilledArray("i", store.pages(), self.call_entry)
            self.result_entry = SpilledArray("i", store.pages(), self.result_entry)

    def _item(self, tool_id: str) -> int:
        item = self.ids.intern(tool_id)
        if item == len(self.call_entry):
            self.call_entry.append(-1)
            self.result_entry.append(-1)
        return item

    def call(self, entry: int, call: ToolCall, block: int) -> None:
        """The ``block``-th tool_use of ``entry``."""
        item = self._item(call.id)
        if self.call_entry[item] < 0:
            self.call_entry[item] = entry
            if self.result_entry[item] < 0:
                self.waiting[call.id] = (item, call, block)
        else:
            self.repeated.append((item, entry, block))

    def result(self, entry: int, tool_id: str, parent: int, replayed: bool) -> int:
        """A result in ``entry`` (a sidechain entry's too: measured, docs/format.md), hanging off
        ``parent``; ``replayed``: the entry's uuid was used before. Answers the entry of an earlier
        result for the id, else -1."""
        item = self._item(tool_id)
        if not replayed and (parent < 0 or self.call_entry[item] != parent):
            self.loose.append((entry, tool_id, item))
        first = self.result_entry[item]
        if first < 0:
            self.result_entry[item] = entry
            self.waiting.pop(tool_id, None)
        return first

    def counts(self) -> tuple[int, int, int]:
        """(distinct calls, distinct ids with a result, calls answered)."""
        calls = results = answered = 0
        for call, result in zip(self.call_entry, self.result_entry, strict=True):
            calls += call >= 0
            results += result >= 0
            answered += call >= 0 and result >= 0
        return calls, results, answered

    def copy(self) -> ToolBook:
        twin = ToolBook(self.held)
        twin.ids = self.ids.copy()
        twin.call_entry, twin.result_entry = _copy(self.call_entry), _copy(self.result_entry)
        twin.waiting, twin.repeated, twin.loose = self.waiting.copy(), self.repeated.copy(), self.loose.copy()
        return twin


def _copy(values: IntArray) -> IntArray:
    return values.copy() if isinstance(values, SpilledArray) else array("i", values)

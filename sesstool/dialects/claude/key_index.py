"""Exact keys of one pass — entry uuids, tool-use ids — in flat arrays instead of a dict of
strings (issue 17: a large transcript is read in bounded memory).

A key is never reduced to a hash. A canonical uuid (lowercase 8-4-4-4-12 hex, what Claude Code
writes) is kept as its 128 bits in two 64-bit arrays; any other string as its UTF-8 bytes in
one arena. Two different keys are therefore never one item, whatever their hashes: hashing only
picks a slot of the open-addressing table, so a collision costs a probe, never a wrong answer
(docs/format.md, "Memory"). Items are numbered in append order; an item whose key was indexed
already is appended but not indexed again, so a lookup answers the first item with that key.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Callable

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_MASK64 = (1 << 64) - 1
_EMPTY = 0
_UUID_KIND, _TEXT_KIND = 0, 1


def slot_of(key: str) -> int:
    """Where a key's search starts: Python's string hash (salted per process, so a file cannot
    aim many keys at one slot)."""
    return hash(key)


def _parts(key: str) -> tuple[bytes | None, int, int]:
    """(None, high, low) for a canonical uuid; (its UTF-8 bytes, 0, 0) for any other key (a lone
    surrogate is a key like any other)."""
    if _UUID.fullmatch(key):
        value = int(key.replace("-", ""), 16)
        return None, value >> 64, value & _MASK64
    return key.encode("utf-8", "surrogatepass"), 0, 0


class KeyIndex:
    """Items in append order and an open-addressing table of their first positions.

    Per item: ``kind`` (uuid or text), ``high``/``low`` (a uuid's two halves, or a text's start
    and end in ``arena``). ``slot_hash`` picks table slots; it is a parameter so tests can make
    every key collide (``slot_of`` by default)."""

    __slots__ = ("_indexed", "_mask", "_slot_hash", "_table", "arena", "high", "kind", "low")

    def __init__(self, slot_hash: Callable[[str], int] | None = None) -> None:
        self.kind = bytearray()
        self.high = array("Q")
        self.low = array("Q")
        self.arena = bytearray()
        self._table = array("i", bytes(4 * 16))  # item + 1; 0 is an empty slot
        self._mask = 15
        self._indexed = 0
        self._slot_hash = slot_hash if slot_hash is not None else slot_of

    def __len__(self) -> int:
        return len(self.kind)

    def key(self, item: int) -> str:
        """The key of ``item``, as it was given."""
        if self.kind[item] == _UUID_KIND:
            digits = f"{self.high[item]:016x}{self.low[item]:016x}"
            return f"{digits[:8]}-{digits[8:12]}-{digits[12:16]}-{digits[16:20]}-{digits[20:]}"
        return self.arena[self.high[item] : self.low[item]].decode("utf-8", "surrogatepass")

    def find(self, key: str) -> int:
        """The first item with ``key``, or -1."""
        return self._find(key, _parts(key))

    def add(self, key: str) -> int:
        """Append an item; answer the first item with the same key, or -1 when it is new (then
        it is indexed)."""
        parts = _parts(key)
        first = self._find(key, parts)
        text, high, low = parts
        if text is None:
            self.kind.append(_UUID_KIND)
        else:
            self.kind.append(_TEXT_KIND)
            high = len(self.arena)
            self.arena += text
            low = len(self.arena)
        self.high.append(high)
        self.low.append(low)
        if first < 0:
            if (self._indexed + 1) * 5 > (self._mask + 1) * 4:  # at most 4/5 full
                self._grow()
            self._place(len(self.kind) - 1, key)
            self._indexed += 1
        return first

    def _find(self, key: str, parts: tuple[bytes | None, int, int]) -> int:
        text, high, low = parts
        table, mask, kinds, highs, lows = self._table, self._mask, self.kind, self.high, self.low
        slot = self._slot_hash(key) & mask
        while True:
            item = table[slot] - 1
            if item < 0:
                return -1
            if text is None:
                if kinds[item] == _UUID_KIND and highs[item] == high and lows[item] == low:
                    return item
            elif kinds[item] == _TEXT_KIND and self.arena[highs[item] : lows[item]] == text:
                return item
            slot = (slot + 1) & mask

    def intern(self, key: str) -> int:
        """The item with ``key``, appended (and indexed) when there is none yet."""
        found = self.find(key)
        if found >= 0:
            return found
        self.add(key)
        return len(self.kind) - 1

    def copy(self) -> KeyIndex:
        twin = KeyIndex(self._slot_hash)
        twin.kind, twin.arena = bytearray(self.kind), bytearray(self.arena)
        twin.high, twin.low = array("Q", self.high), array("Q", self.low)
        twin._table = array("i", self._table)
        twin._mask, twin._indexed = self._mask, self._indexed
        return twin

    def _place(self, item: int, key: str) -> None:
        table, mask = self._table, self._mask
        slot = self._slot_hash(key) & mask
        while table[slot] != _EMPTY:
            slot = (slot + 1) & mask
        table[slot] = item + 1

    def _grow(self) -> None:
        old = self._table
        self._mask = 2 * (self._mask + 1) - 1
        self._table = array("i", bytes(4 * (self._mask + 1)))
        for slot in old:
            if slot != _EMPTY:
                self._place(slot - 1, self.key(slot - 1))

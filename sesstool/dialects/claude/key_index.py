"""Exact keys of one pass — entry uuids, tool-use ids — in flat arrays instead of a dict of
strings (issue 17: a large transcript is read in bounded memory).

A key is never reduced to a hash. A canonical uuid (lowercase 8-4-4-4-12 hex, what Claude Code
writes) is kept as its 128 bits in two 64-bit arrays; any other string as its UTF-8 bytes in
one arena. Two different keys are therefore never one item, whatever their hashes: hashing only
picks a slot of the open-addressing table, so a collision costs a probe, never a wrong answer
(docs/format.md, "Memory"). Items are numbered in append order; an item whose key was indexed
already is appended but not indexed again, so a lookup answers the first item with that key.

Past ``spill`` (a large transcript, entry_graph.SPILL_AT, or long text keys,
entry_graph.SPILL_BYTES), the items are moved to a spill file (store/spill.py) every
``FLUSH_AT`` items or ``FLUSH_BYTES`` of their text keys, whichever comes first: there each
item's key (by item) and each key's first item (by key, exactly, as bytes). A fixed Bloom filter
of the moved keys (``BLOOM_BITS``, three probes from the slot hash) answers most "never seen"
lookups without reading the file; a "maybe" is always settled by the file, so the filter changes
the time, never an answer.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Callable

from sesstool.store.spill import Keys, Pages, SpillFile, text_key

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_MASK64 = (1 << 64) - 1
_EMPTY = 0
_UUID_KIND, _TEXT_KIND = 0, 1
FLUSH_AT = 1 << 12  # items held in memory between moves to the spill file, once spilled ...
FLUSH_BYTES = 1 << 20  # ... or this many bytes of their text keys (a key is as long as a log chose it)
BLOOM_BITS = 1 << 23  # 1 MiB
_SLICE = 1024  # items moved to the spill file per statement


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
    return text_key(key), 0, 0


class KeyIndex:
    """Items in append order and an open-addressing table of their first positions.

    Per item: ``kind`` (uuid or text), ``high``/``low`` (a uuid's two halves, or a text's start
    and end in ``arena``). ``slot_hash`` picks table slots; it is a parameter so tests can make
    every key collide (``slot_of`` by default)."""

    __slots__ = (
        "_base", "_bloom", "_by_item", "_by_key", "_hashes", "_indexed", "_mask", "_slot_hash", "_table",
        "arena", "high", "kind", "low",
    )  # fmt: skip

    def __init__(self, slot_hash: Callable[[str], int] | None = None) -> None:
        self.kind = bytearray()
        self.high = array("Q")
        self.low = array("Q")
        self.arena = bytearray()
        self._table = array("i", bytes(4 * 16))  # item + 1; 0 is an empty slot
        self._mask = 15
        self._indexed = 0
        self._slot_hash = slot_hash if slot_hash is not None else slot_of
        self._base = 0  # items moved to the spill file (they come first)
        self._hashes = array("q")  # once spilled: the slot hash of each item in memory, for the filter
        self._bloom: bytearray | None = None
        self._by_item: Pages | None = None
        self._by_key: Keys | None = None

    def __len__(self) -> int:
        return self._base + len(self.kind)

    def spill(self, store: SpillFile, bloom_bits: int = BLOOM_BITS) -> None:
        """From now on, keep at most ``FLUSH_AT`` items in memory, the others in ``store``;
        ``bloom_bits``: the filter's size, a power of two."""
        if self._by_key is None:
            self._bloom = bytearray(bloom_bits // 8)
            self._by_item, self._by_key = store.pages(), store.keys()
            self._hashes = array("q", (self._slot_hash(self._key(i)) for i in range(len(self.kind))))
            self._flush()

    def _flush(self) -> None:
        """Move the items in memory to the spill file, a slice at a time (no copy of them all)."""
        assert self._by_item is not None and self._by_key is not None and self._bloom is not None
        bloom, mask = self._bloom, len(self._bloom) * 8 - 1
        for start in range(0, len(self.kind), _SLICE):
            moved = [
                (self._base + i, self._bytes(i)) for i in range(start, min(start + _SLICE, len(self.kind)))
            ]
            self._by_item.put_many(moved)
            self._by_key.add_many(
                sorted((key, item) for item, key in moved)
            )  # equal keys: the first item wins
        for hashed in self._hashes:
            for bit in _probes(hashed, mask):
                bloom[bit >> 3] |= 1 << (bit & 7)
        self._base += len(self.kind)
        self.kind, self.arena, self.high, self.low = bytearray(), bytearray(), array("Q"), array("Q")
        self._hashes = array("q")
        # sized for FLUSH_AT items at most 4/5 full, so it never grows between moves
        self._mask = (1 << (FLUSH_AT * 5 // 4).bit_length()) - 1
        self._table, self._indexed = array("i", bytes(4 * (self._mask + 1))), 0

    def _bytes(self, item: int) -> bytes:
        """The exact key of an in-memory item as bytes: a uuid's 128 bits, or a text's UTF-8
        (a kind byte first, so the two never meet)."""
        if self.kind[item] == _UUID_KIND:
            return b"\0" + self.high[item].to_bytes(8, "big") + self.low[item].to_bytes(8, "big")
        return b"\1" + bytes(self.arena[self.high[item] : self.low[item]])

    def _spilled(self, hashed: int, parts: tuple[bytes | None, int, int]) -> int:
        """The first moved item with this key (``hashed``: its slot hash), or -1."""
        bloom = self._bloom
        if bloom is None:
            return -1
        for bit in _probes(hashed, len(bloom) * 8 - 1):
            if not bloom[bit >> 3] & (1 << (bit & 7)):
                return -1
        text, high, low = parts
        exact = b"\0" + high.to_bytes(8, "big") + low.to_bytes(8, "big") if text is None else b"\1" + text
        assert self._by_key is not None
        return self._by_key.find(exact)

    def key(self, item: int) -> str:
        """The key of ``item``, as it was given."""
        if item < self._base:
            assert self._by_item is not None
            data = self._by_item.get(item)
            assert data is not None
            if data[0] == 0:
                digits = data[1:].hex()
                return f"{digits[:8]}-{digits[8:12]}-{digits[12:16]}-{digits[16:20]}-{digits[20:]}"
            return data[1:].decode("utf-8", "surrogatepass")
        return self._key(item - self._base)

    def _key(self, item: int) -> str:
        if self.kind[item] == _UUID_KIND:
            digits = f"{self.high[item]:016x}{self.low[item]:016x}"
            return f"{digits[:8]}-{digits[8:12]}-{digits[12:16]}-{digits[16:20]}-{digits[20:]}"
        return self.arena[self.high[item] : self.low[item]].decode("utf-8", "surrogatepass")

    def find(self, key: str) -> int:
        """The first item with ``key``, or -1."""
        parts, hashed = _parts(key), self._slot_hash(key)
        found = self._spilled(hashed, parts)
        if found < 0:
            found = self._find(hashed, parts)
            if found >= 0:
                found += self._base
        return found

    def add(self, key: str) -> int:
        """Append an item; answer the first item with the same key, or -1 when it is new (then
        it is indexed)."""
        parts, hashed = _parts(key), self._slot_hash(key)
        first = self._spilled(hashed, parts)
        held = self._find(hashed, parts)
        if first < 0 and held >= 0:
            first = self._base + held
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
        if held < 0:
            if (self._indexed + 1) * 5 > (self._mask + 1) * 4:  # at most 4/5 full
                self._grow()
            self._place(len(self.kind) - 1, hashed)
            self._indexed += 1
        if self._by_key is not None:
            self._hashes.append(hashed)
            if len(self.kind) >= FLUSH_AT or len(self.arena) >= FLUSH_BYTES:
                self._flush()
        return first

    def _find(self, hashed: int, parts: tuple[bytes | None, int, int]) -> int:
        text, high, low = parts
        table, mask, kinds, highs, lows = self._table, self._mask, self.kind, self.high, self.low
        slot = hashed & mask
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
        return len(self) - 1

    def copy(self) -> KeyIndex:
        """An independent copy. The items moved to the spill file are shared (frozen: each side
        moves its later items to a layer of its own); the Bloom filter is copied."""
        twin = KeyIndex(self._slot_hash)
        twin.kind, twin.arena = bytearray(self.kind), bytearray(self.arena)
        twin.high, twin.low = array("Q", self.high), array("Q", self.low)
        twin._table = array("i", self._table)
        twin._mask, twin._indexed, twin._base = self._mask, self._indexed, self._base
        twin._hashes = array("q", self._hashes)
        if self._by_key is not None and self._by_item is not None and self._bloom is not None:
            by_key, by_item = self._by_key, self._by_item
            self._by_key, self._by_item = by_key.layer(), by_item.layer()
            twin._by_key, twin._by_item = by_key.layer(), by_item.layer()
            twin._bloom = bytearray(self._bloom)
        return twin

    def _place(self, item: int, hashed: int) -> None:
        table, mask = self._table, self._mask
        slot = hashed & mask
        while table[slot] != _EMPTY:
            slot = (slot + 1) & mask
        table[slot] = item + 1

    def _grow(self) -> None:
        old = self._table
        self._mask = 2 * (self._mask + 1) - 1
        self._table = array("i", bytes(4 * (self._mask + 1)))
        for slot in old:
            if slot != _EMPTY:
                self._place(slot - 1, self._slot_hash(self._key(slot - 1)))


def _probes(hashed: int, mask: int) -> tuple[int, int, int]:
    """Three bits of a Bloom filter of ``mask + 1`` bits (double hashing over the slot hash:
    the low bits, and the bits from 32 up as the step)."""
    first, step = hashed & mask, ((hashed >> 32) & mask) | 1
    return first, (first + step) & mask, (first + 2 * step) & mask

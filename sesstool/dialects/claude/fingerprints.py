"""A compact index of strings seen in one pass — uuids, tool ids, message ids — held as 64-bit
fingerprints in flat arrays instead of a dict of strings (issue 17: a 1 GiB transcript
validates in flat memory).

A fingerprint is Python's keyed string hash (SipHash, 64 bits, salted per process). Two
different strings of one file share one with a chance of about n²/2⁶⁵ — below 10⁻⁷ for ten
million entries; docs/format.md records the decision. Items are numbered in the order they were
appended; an item whose fingerprint was indexed already is appended but not indexed again, so a
lookup answers the first item with that fingerprint.
"""

from __future__ import annotations

from array import array

_EMPTY = 0


def fingerprint(text: str) -> int:
    return hash(text)


class FingerprintIndex:
    """Items in append order (``fps``) and an open-addressing table of their first positions."""

    __slots__ = ("_indexed", "_mask", "_table", "fps")

    def __init__(self) -> None:
        self.fps = array("q")
        self._table = array("i", bytes(4 * 16))  # item + 1; 0 is an empty slot
        self._mask = 15
        self._indexed = 0

    def __len__(self) -> int:
        return len(self.fps)

    def find(self, fp: int) -> int:
        """The first item with fingerprint ``fp``, or -1."""
        table, fps, mask = self._table, self.fps, self._mask
        slot = fp & mask
        while True:
            item = table[slot]
            if item == _EMPTY:
                return -1
            if fps[item - 1] == fp:
                return item - 1
            slot = (slot + 1) & mask

    def add(self, fp: int) -> int:
        """Append an item; answer the first item with the same fingerprint, or -1 when it is new
        (then it is indexed)."""
        first = self.find(fp)
        self.fps.append(fp)
        if first < 0:
            if (self._indexed + 1) * 5 > (self._mask + 1) * 4:  # at most 4/5 full
                self._grow()
            self._place(len(self.fps))
            self._indexed += 1
        return first

    def intern(self, fp: int) -> int:
        """The item with fingerprint ``fp``, appended (and indexed) when there is none yet."""
        found = self.find(fp)
        if found >= 0:
            return found
        self.add(fp)
        return len(self.fps) - 1

    def copy(self) -> FingerprintIndex:
        twin = FingerprintIndex()
        twin.fps = array("q", self.fps)
        twin._table = array("i", self._table)
        twin._mask, twin._indexed = self._mask, self._indexed
        return twin

    def _place(self, item: int) -> None:
        table, mask = self._table, self._mask
        slot = self.fps[item - 1] & mask
        while table[slot] != _EMPTY:
            slot = (slot + 1) & mask
        table[slot] = item

    def _grow(self) -> None:
        old = self._table
        self._mask = 2 * (self._mask + 1) - 1
        self._table = array("i", bytes(4 * (self._mask + 1)))
        for item in old:
            if item != _EMPTY:
                self._place(item)

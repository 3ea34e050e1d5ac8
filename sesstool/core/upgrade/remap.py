"""Seq renumbering for steps that drop and insert events (spec §1.3 v1→v2, v2→v3).

Old and new seqs both increase, so the map is stored as change points (old seq where the
offset new − old changes) plus the dropped runs: a few numbers per consumed chunk attempt or
inserted event, never one per event.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right


class SeqRemap:
    def __init__(self) -> None:
        self._points = array("q")  # old seqs where a new offset starts
        self._offsets = array("q")  # new - old from that point on
        self._dropped_start = array("q")
        self._dropped_end = array("q")  # inclusive

    def keep(self, old: int, new: int) -> None:
        """``old`` survives as ``new`` (calls come in increasing order)."""
        offset = new - old
        if not self._offsets or self._offsets[-1] != offset:
            self._points.append(old)
            self._offsets.append(offset)

    def drop(self, old: int) -> None:
        """``old`` was consumed (a reference to it refuses)."""
        if self._dropped_end and self._dropped_end[-1] == old - 1:
            self._dropped_end[-1] = old
        else:
            self._dropped_start.append(old)
            self._dropped_end.append(old)

    def dropped(self, old: int) -> bool:
        i = bisect_right(self._dropped_start, old) - 1
        return i >= 0 and old <= self._dropped_end[i]

    def new(self, old: int) -> int | None:
        """The new seq of ``old``; None when it was dropped or never seen."""
        if self.dropped(old):
            return None
        i = bisect_right(self._points, old) - 1
        if i < 0:
            return None
        return old + self._offsets[i]

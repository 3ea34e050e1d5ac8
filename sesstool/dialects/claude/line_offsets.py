"""The plaintext offset of every line of a transcript, by line number: what derive needs to
read an entry back (issue 11 item 1; ``Dialect.entry_derivation``).

A word per line the reader handed over; a run of filler lines (blank or NUL-only, handed over
as one issue, issue 11 item 2) costs one gap record, never a word per line: a flood of newlines
costs nothing here. Past ``derive.SPILL_AT`` lines the words and the gaps move to a spill file
(issue 17: ``SpilledArray``, pages on disk, a few in memory), so memory stays flat however long
the file.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from itertools import accumulate

from sesstool.store.spill import IntArray, SpilledArray, SpillFile, bisect


class LineOffsets:
    """``add`` each batch of lines as the scanner is fed; ``at(line)`` answers the offset of
    line ``line`` (1-based), or -1 for a line it never saw (filler, past the end)."""

    def __init__(self, spill_at: int, spill: Callable[[], SpillFile]) -> None:
        """``spill_at``: the lines kept in memory; past them ``spill()`` gives the file."""
        self._spill_at, self._spill = spill_at, spill
        self.lines = 0  # the last line accounted for, filler included
        self.offsets: IntArray = array("q")  # of the lines handed over, in order
        self._gap_end: IntArray = array("q")  # the first line after each run of filler…
        self._gap_total: IntArray = array("q")  # …and the filler lines up to there, in all
        self.spilled = False

    def add(self, lines: list[bytes], offset: int, lineno: int) -> None:
        """The batch ``lines`` (without their newlines), the first at ``offset``, numbered ``lineno``."""
        if lineno - 1 > self.lines:  # a filler run handed over whole
            total = (self._gap_total[-1] if len(self._gap_total) else 0) + lineno - 1 - self.lines
            self._gap_end.append(lineno)
            self._gap_total.append(total)
        starts = accumulate((len(line) + 1 for line in lines[:-1]), initial=offset)
        offsets = self.offsets
        if isinstance(offsets, array):
            offsets.extend(starts)
        else:
            for value in starts:
                offsets.append(value)
        self.lines = lineno - 1 + len(lines)
        if not self.spilled and len(offsets) + len(self._gap_end) >= self._spill_at:
            self._move(self._spill())

    def _move(self, store: SpillFile) -> None:
        self.spilled = True
        self.offsets = SpilledArray("q", store.pages(), self.offsets)
        self._gap_end = SpilledArray("q", store.pages(), self._gap_end, sorted=True)
        self._gap_total = SpilledArray("q", store.pages(), self._gap_total)

    def at(self, line: int) -> int:
        if not 0 < line <= self.lines:
            return -1
        k = bisect(self._gap_end, line + 1) - 1  # the last run of filler before ``line``
        skipped = self._gap_total[k] if k >= 0 else 0
        if k + 1 < len(self._gap_end):
            run = self._gap_total[k + 1] - skipped
            if line >= self._gap_end[k + 1] - run:
                return -1  # inside the next run of filler
        index = line - 1 - skipped
        return self.offsets[index] if index < len(self.offsets) else -1

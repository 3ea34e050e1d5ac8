"""Which zstd frame each line of a transcript was decoded from: what a finding made after its
line was read (a parent never seen, a call never answered) names as its frame, as every zstd
address does (``core.errors.Address``: ``decoded byte N, frame K``).

The reader hands the scanner batches of lines, each with the frame it came from (the frame of
the chunk that completed the batch's first line, as the dsh scanner's addresses use it). The
frames only grow, so the map is kept as runs: from a line on, the same frame for every line (a
whole log in one frame, as ``zstd FILE`` writes it), or one frame more per line (a frame per
append, as the harness writes; a repair or a migrate writes that way too). Both are one run,
however long the log. Only a hostile layout — frames of one line, then two, then one — makes a
run per frame: past ``SPILL_AT`` runs they move to the scan's spill file (``SpilledArray``,
pages on disk, a few in memory; issue 11 item 1), so memory stays flat whatever the layout.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Callable
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:  # sqlite3 is imported only when a hostile layout makes the runs many
    from sesstool.store.spill import IntArray, SpilledArray, SpillFile

SPILL_AT = 1 << 14  # runs held in memory; past them the runs move to the spill file


def _limit() -> int:
    return SPILL_AT  # read when used (the tests lower it)


class FrameRuns:
    """``seen(line, frame)`` for each batch, in order; ``frame_of(line)`` afterwards."""

    __slots__ = ("_frames", "_last_frame", "_last_line", "_spill", "_starts", "_steps")

    def __init__(self, spill: Callable[[], SpillFile] | None = None) -> None:
        """``spill``: the spill file to move to past ``SPILL_AT`` runs (None: stay in memory)."""
        self._spill = spill
        self._starts: IntArray = array("q")  # the first line of each run (they only grow)…
        self._frames: IntArray = array("q")  # …the frame of that line…
        self._steps: IntArray = bytearray()  # …and 1 when each later line is one frame on, else 0
        self._last_line = 0  # the first line of the last frame seen
        self._last_frame = -1  # and that frame (-1: none yet)

    def __len__(self) -> int:
        """The runs (what the map holds)."""
        return len(self._starts)

    @property
    def spilled(self) -> bool:
        return not isinstance(self._starts, array)

    def seen(self, line: int, frame: int | None) -> None:
        """Lines from ``line`` on came from ``frame`` (None: raw input, nothing to map)."""
        if frame is None or frame == self._last_frame:
            return
        last_line, last_frame = self._last_line, self._last_frame
        self._last_line, self._last_frame = line, frame
        k = len(self._starts) - 1
        if k < 0:
            self._add(line, frame, 0)
            return
        one_on = line == last_line + 1 and frame == last_frame + 1  # the last frame held one line
        if self._steps[k]:
            if one_on:
                return  # the run goes on
            if line > last_line + 1:  # the run's last frame held more lines: a run of its own
                self._add(last_line, last_frame, 0)
        elif one_on and self._starts[k] == last_line:
            self._steps[k] = 1  # a frame of one line, then the next: a run of a frame per line
            return
        self._add(line, frame, 0)

    def _add(self, line: int, frame: int, step: int) -> None:
        if self._starts and self._starts[-1] == line:  # replaces a run that held no line
            self._frames[-1], self._steps[-1] = frame, step
            return
        self._starts.append(line)
        self._frames.append(frame)
        self._steps.append(step)
        if self._spill is not None and not self.spilled and len(self._starts) > _limit():
            from sesstool.store.spill import SpilledArray

            store = self._spill()
            self._starts = SpilledArray("q", store.pages(), self._starts, sorted=True)
            self._frames = SpilledArray("q", store.pages(), self._frames)
            self._steps = SpilledArray("B", store.pages(), self._steps)

    def frame_of(self, line: int) -> int | None:
        """The frame line ``line`` was decoded from; None before the first frame (raw input)."""
        starts = self._starts
        # the last run starting at or before ``line`` (a spilled array reads one page for it)
        k = (
            cast("SpilledArray", starts).bisect_left(line + 1)
            if self.spilled
            else bisect_left(starts, line + 1)
        ) - 1
        if k < 0:
            return None
        start, frame = self._starts[k], self._frames[k]
        if not self._steps[k]:
            return frame
        if k == len(self._starts) - 1 and line >= self._last_line:
            return self._last_frame  # past the run's last frame start: in that frame
        return frame + line - start

    def copy(self) -> FrameRuns:
        twin = FrameRuns(self._spill)
        twin._last_line, twin._last_frame = self._last_line, self._last_frame
        if self.spilled:
            runs = (self._starts, self._frames, self._steps)
            twin._starts, twin._frames, twin._steps = (cast("SpilledArray", x).copy() for x in runs)
        else:
            twin._starts, twin._frames = array("q", self._starts), array("q", self._frames)
            twin._steps = bytearray(self._steps)
        return twin

"""Seq renumbering for steps that drop and insert events (spec §1.3 v1→v2, v2→v3), and the
remapping of every declared same-log reference.

Old and new seqs both increase, so the map is stored as change points (old seq where the
offset new − old changes) plus the dropped runs: a few numbers per consumed chunk attempt or
inserted event, never one per event. A log can still make either grow with every event (issue
11 item 1: an unclaimed chunk attempt per step, a changed ``request/header`` per line): past
``HELD_AT`` numbers each pair of arrays moves to the run's spill (``UpgradeSpill.sorted_words``,
injected by the engine; paged arrays searched by their values), so that a reference to any
earlier seq still resolves exactly, and memory stays a fixed amount. Without a spill they stay
arrays in memory. ``Inserted`` does the same for a step that only inserts (v3 → v4's closers of
evidenced interrupted turns, §1.3: one number per closer).
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Callable
from typing import Any, TypeAlias

from sesstool.core.humanize import chosen_repr
from sesstool.core.upgrade import SortedWords, UpgradeRefused, UpgradeSpill

HELD_AT = 4096  # change points (and, apart, dropped runs) in memory; past them both arrays spill

Words: TypeAlias = "array[int] | SortedWords"


def _floor(values: Words, old: int) -> int:
    """The index of the last value ≤ ``old`` in ``values`` (which only grow); -1 when none."""
    if isinstance(values, array):
        return bisect_right(values, old) - 1
    return values.bisect_left(old + 1) - 1


class SeqRemap:
    def __init__(self, spill: UpgradeSpill | None = None) -> None:
        self._spill = spill
        self._points: Words = array("q")  # old seqs where a new offset starts
        self._offsets: Words = array("q")  # new - old from that point on
        self._dropped_start: Words = array("q")
        self._dropped_end: Words = array("q")  # inclusive; the last one is ``_end`` until ``_settle``
        # the last offset and the end of the last dropped run, as plain ints: a chunk (the bulk
        # of a v0/v1 log) extends the run without touching an array, spilled or not
        self._offset: int | None = None
        self._end = -2
        self._end_written = True

    def keep(self, old: int, new: int) -> None:
        """``old`` survives as ``new`` (calls come in increasing order)."""
        offset = new - old
        if self._offset != offset:
            self._offset = offset
            self._points.append(old)
            self._offsets.append(offset)
            if len(self._points) > HELD_AT and isinstance(self._points, array) and self._spill is not None:
                self._points = self._spilled(self._points)
                self._offsets = self._spilled(self._offsets)

    def drop(self, old: int) -> None:
        """``old`` was consumed (a reference to it refuses)."""
        if self._end == old - 1:
            self._end = old
            self._end_written = False
        else:
            self._settle()
            self._end = old
            self._dropped_start.append(old)
            self._dropped_end.append(old)
            starts = self._dropped_start
            if len(starts) > HELD_AT and isinstance(starts, array) and self._spill is not None:
                self._dropped_start = self._spilled(starts)
                self._dropped_end = self._spilled(self._dropped_end)

    def _spilled(self, values: Words) -> SortedWords:
        assert self._spill is not None and isinstance(values, array)
        return self._spill.sorted_words("the seq renumbering of a migration", values)

    def _settle(self) -> None:
        """The open run's end written to its array."""
        if not self._end_written:
            self._dropped_end[-1] = self._end
            self._end_written = True

    def dropped(self, old: int) -> bool:
        if old > self._end:  # past every dropped run (the common reference: no search)
            return False
        self._settle()
        i = _floor(self._dropped_start, old)
        return i >= 0 and old <= self._dropped_end[i]

    def new(self, old: int) -> int | None:
        """The new seq of ``old``; None when it was dropped or never seen."""
        if self.dropped(old):
            return None
        i = _floor(self._points, old)
        if i < 0:
            return None
        return old + self._offsets[i]


class Inserted:
    """The old seqs before which a step inserted one event each (v3 → v4, §1.3 "v3 → v4": an
    evidenced interrupted turn's ``turn/end``), in increasing order: an old seq's new one is
    itself plus how many of them are ≤ it. Past ``HELD_AT`` they move to the run's spill, as
    ``SeqRemap``'s arrays do (issue 11 item 1: a log can close a turn every other line)."""

    __slots__ = ("_points", "_spill")

    def __init__(self, spill: UpgradeSpill | None = None) -> None:
        self._spill = spill
        self._points: Words = array("q")

    def __len__(self) -> int:
        return len(self._points)

    def add(self, old: int) -> None:
        """One event inserted before ``old`` (calls come in increasing order)."""
        points = self._points
        points.append(old)
        if len(points) > HELD_AT and isinstance(points, array) and self._spill is not None:
            self._points = self._spill.sorted_words("the seq renumbering of a migration", points)

    def before(self, old: int) -> int:
        """How many events were inserted before ``old`` (at or before its place)."""
        points = self._points
        n = len(points)
        if not n or old >= points[-1]:  # the event being renumbered (the common call): no search
            return n
        return _floor(points, old) + 1


Refuse = Callable[[str], UpgradeRefused]


def remap_references(
    event: dict[str, Any], old_seq: int, remap: SeqRemap, refuse: Refuse
) -> tuple[dict[str, Any], bool]:
    """Rewrite every declared same-log reference of ``event`` (spec §1.3): envelope
    ``sourceEventSeqs`` and ``surfaceOp.start/end``, ``command/done.data.sourceEventSeq``,
    ``compaction/summary|prune.data.shadowedRange.{start,end}`` and ``.shadowedSeqs``,
    ``session/title[-llm-request].data.messageSeqs``. Each must name an earlier event that
    survived. Returns the event (a shallow copy where something was rewritten) and whether any
    value changed. Nothing else is treated as a reference."""
    t = event.get("type")
    if (
        event.get("sourceEventSeqs") is None
        and not isinstance(event.get("surfaceOp"), dict)
        and not (type(t) is str and t in REFERRING_TYPES)
    ):
        return event, False  # the common event: no reference to remap (issue 14)
    return _remap_references(event, old_seq, remap, refuse)


# event types whose payload (``data``) may hold a declared reference (``remap_references``)
REFERRING_TYPES = frozenset(
    {"command/done", "compaction/summary", "compaction/prune", "session/title", "session/title-llm-request"}
)


def _remap_references(
    event: dict[str, Any], old_seq: int, remap: SeqRemap, refuse: Refuse
) -> tuple[dict[str, Any], bool]:
    def one(value: Any, label: str) -> int:
        if type(value) is not int or not 0 <= value < old_seq:
            raise refuse(f"{label} {chosen_repr(value)} does not name an earlier event")
        if remap.dropped(value):
            raise refuse(f"{label} targets consumed assistant/chunk {value}")
        new = remap.new(value)
        if new is None:  # pragma: no cover - every earlier seq was kept or dropped
            raise refuse(f"{label} {value} names no surviving event")
        return new

    def many(value: Any, label: str) -> list[int]:
        if not isinstance(value, list):
            raise refuse(f"{label} is not a list of seqs")
        return [one(v, label) for v in value]

    out = event
    src = event.get("sourceEventSeqs")
    if src is not None:
        mapped = many(src, "sourceEventSeqs")
        if mapped != src:
            out = {**out, "sourceEventSeqs": mapped}
    op = event.get("surfaceOp")
    if isinstance(op, dict):
        new_op = {
            **op,
            "start": one(op.get("start"), "surfaceOp.start"),
            "end": one(op.get("end"), "surfaceOp.end"),
        }
        if new_op != op:
            out = {**out, "surfaceOp": new_op}
    data = event.get("data")
    if not isinstance(data, dict):
        return out, out is not event
    t = event.get("type")
    new_data = data
    if t == "command/done" and "sourceEventSeq" in data:
        new_data = {**data, "sourceEventSeq": one(data["sourceEventSeq"], "data.sourceEventSeq")}
    elif t in ("compaction/summary", "compaction/prune"):
        rng = data.get("shadowedRange")
        if rng is not None:
            if not isinstance(rng, dict):
                raise refuse("data.shadowedRange is not an object")
            new_data = {
                **new_data,
                "shadowedRange": {
                    **rng,
                    "start": one(rng.get("start"), "data.shadowedRange.start"),
                    "end": one(rng.get("end"), "data.shadowedRange.end"),
                },
            }
        if "shadowedSeqs" in data:
            new_data = {**new_data, "shadowedSeqs": many(data["shadowedSeqs"], "data.shadowedSeqs")}
    elif t in ("session/title", "session/title-llm-request") and "messageSeqs" in data:
        new_data = {**data, "messageSeqs": many(data["messageSeqs"], "data.messageSeqs")}
    if new_data != data:
        out = {**out, "data": new_data}
    return out, out is not event

"""Seq renumbering for steps that drop and insert events (spec §1.3 v1→v2, v2→v3), and the
remapping of every declared same-log reference.

Old and new seqs both increase, so the map is stored as change points (old seq where the
offset new − old changes) plus the dropped runs: a few numbers per consumed chunk attempt or
inserted event, never one per event.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Callable
from typing import Any

from sesstool.core.upgrade import UpgradeRefused


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
            raise refuse(f"{label} {value!r} does not name an earlier event")
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

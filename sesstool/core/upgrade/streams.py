"""The embedded stream an attempt's chunks become (spec §4.5, §1.3 "v1 → v2": chunk folding):
consecutive deltas of one kind and index join a run record, everything else stays a raw
``chunk`` record, so a stream loses nothing the chunks said."""

from __future__ import annotations

from typing import Any

from sesstool.core.header import MAX_SAFE

_TEXT_DELTA_KEYS = frozenset({"type", "index", "text"})
_TOOL_DELTA_KEYS = frozenset({"type", "index", "id", "argumentsDelta"})
_TOOL_DELTA_NAMED_KEYS = _TOOL_DELTA_KEYS | {"name"}
_RUN_TYPE = {
    "text-delta": "text-chunks",
    "reasoning-delta": "reasoning-chunks",
    "tool-call-delta": "tool-call-chunks",
}


def _run_key(chunk: dict[str, Any]) -> tuple[Any, ...] | None:
    """The merge key of a delta chunk that may join a run record, or None when the chunk must
    stay a raw ``chunk`` record: runs hold only deltas with exactly the whitelisted members, a
    non-negative integer index and a non-empty text (tool calls: a non-empty id, an absent or
    non-empty name and a non-empty argument fragment), so a run record loses nothing."""
    kind = chunk.get("type")
    index = chunk.get("index")
    if type(index) is not int or not 0 <= index <= MAX_SAFE:
        return None
    keys = chunk.keys()
    if kind in ("text-delta", "reasoning-delta"):
        text = chunk.get("text")
        if keys != _TEXT_DELTA_KEYS or type(text) is not str or not text:
            return None
        return (kind, index)
    if kind == "tool-call-delta":
        if keys != _TOOL_DELTA_KEYS and keys != _TOOL_DELTA_NAMED_KEYS:
            return None
        cid, args = chunk.get("id"), chunk.get("argumentsDelta")
        if type(cid) is not str or not cid or type(args) is not str or not args:
            return None
        if "name" in chunk:
            name = chunk["name"]
            if type(name) is not str or not name:
                return None
            return (kind, index, cid, True, name)
        return (kind, index, cid, False, None)
    return None


class StreamBuilder:
    """Compacts an attempt's chunks into §4.5 records as they arrive: consecutive deltas with
    the same merge key and a safe time gap form one run of any length ≥ 1 (``time0`` = the first
    member's time, ``dt`` = the gaps, members never joined); everything else is
    ``{type: 'chunk', time, chunk}``."""

    __slots__ = ("_key", "_last_time", "records")

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []
        self._key: tuple[Any, ...] | None = None  # merge key of the open run (the last record)
        self._last_time = 0

    def add(self, time: int, chunk: dict[str, Any]) -> None:
        kind = chunk.get("type")
        if kind == "text-delta" or kind == "reasoning-delta":
            # the bulk of a stream, checked as ``_run_key`` checks it (issue 14)
            index, text = chunk.get("index"), chunk.get("text")
            if (
                type(index) is int
                and 0 <= index <= MAX_SAFE
                and type(text) is str
                and text
                and chunk.keys() == _TEXT_DELTA_KEYS
            ):
                gap = time - self._last_time
                self._last_time = time
                open_key = self._key
                if (
                    open_key is not None
                    and open_key[0] == kind
                    and open_key[1] == index
                    and len(open_key) == 2
                    and -MAX_SAFE <= gap <= MAX_SAFE
                ):
                    run = self.records[-1]
                    run["dt"].append(gap)
                    run["texts"].append(text)
                    return
                self._key = (kind, index)
                self.records.append(
                    {"type": _RUN_TYPE[kind], "time0": time, "index": index, "dt": [], "texts": [text]}
                )
                return
        key = _run_key(chunk)
        if key is None:
            self.records.append({"type": "chunk", "time": time, "chunk": chunk})
            self._key = None
            return
        gap = time - self._last_time
        self._last_time = time
        member = chunk["argumentsDelta"] if key[0] == "tool-call-delta" else chunk["text"]
        if key == self._key and -MAX_SAFE <= gap <= MAX_SAFE:
            run = self.records[-1]
            run["dt"].append(gap)
            run["args" if key[0] == "tool-call-delta" else "texts"].append(member)
            return
        self._key = key
        record: dict[str, Any] = {"type": _RUN_TYPE[key[0]], "time0": time, "index": key[1], "dt": []}
        if key[0] == "tool-call-delta":
            record["id"] = key[2]
            if key[3]:
                record["name"] = key[4]
            record["args"] = [member]
        else:
            record["texts"] = [member]
        self.records.append(record)

"""Packed chunk rows of v0/v1 (spec §9.3): validate a row; its assistant/chunk events are built
one at a time, so memory stays a small multiple of the row's own line."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, overload

from sesstool.core.header import MAX_SAFE, is_safe_int, is_safe_nonneg

_ROW_KEYS = frozenset({"type", "seq0", "time0", "data"})
_TEXT_DATA = frozenset({"turn", "step", "index", "dt", "texts"})
_TOOL_DATA = frozenset({"turn", "step", "index", "dt", "id", "args"})
_DELTA = {"text-chunks": "text-delta", "reasoning-chunks": "reasoning-delta"}


class RowError(Exception):
    pass


def expand_row(row: dict[str, Any]) -> ChunkRow:
    """Validate one packed row and return its assistant/chunk events (built lazily), or raise
    RowError (§9.3)."""
    tag = row["type"]
    if row.keys() != _ROW_KEYS:
        raise RowError(f"malformed {tag} storage row: keys must be exactly type, seq0, time0, data")
    seq0, time0, data = row["seq0"], row["time0"], row["data"]
    if not is_safe_nonneg(seq0):
        raise RowError(f"malformed {tag} storage row: seq0 is not a non-negative safe integer")
    if not is_safe_int(time0):
        raise RowError(f"malformed {tag} storage row: time0 is not a safe integer")
    if not isinstance(data, dict):
        raise RowError(f"malformed {tag} storage row: data is not an object")
    is_tool = tag == "tool-call-chunks"
    call_id: Any = None
    name: Any = None
    has_name = False
    keys = data.keys()
    if is_tool:
        if not (keys == _TOOL_DATA or keys == _TOOL_DATA | {"name"}):
            raise RowError(f"malformed {tag} storage row: data keys {sorted(keys)}")
        members = data["args"]
    else:
        if keys != _TEXT_DATA:
            raise RowError(f"malformed {tag} storage row: data keys {sorted(keys)}")
        members = data["texts"]
    turn, step, index, dt = data["turn"], data["step"], data["index"], data["dt"]
    for name, value in (("turn", turn), ("step", step), ("index", index)):
        if not is_safe_nonneg(value):
            raise RowError(f"malformed {tag} storage row: {name} is not a non-negative integer")
    if not isinstance(members, list) or not members or not all(isinstance(m, str) and m for m in members):
        raise RowError(f"malformed {tag} storage row: members must be non-empty strings")
    if not isinstance(dt, list) or len(dt) != len(members) - 1 or not all(is_safe_int(d) for d in dt):
        raise RowError(f"malformed {tag} storage row: dt must hold {len(members) - 1} safe integers")
    if seq0 + len(members) - 1 > MAX_SAFE:
        raise RowError(f"malformed {tag} storage row: seq range leaves the safe integers")
    if is_tool:
        call_id = data["id"]
        if not isinstance(call_id, str):
            raise RowError(f"malformed {tag} storage row: id is not a string")
        has_name = "name" in data
        name = data.get("name")
        if has_name and not isinstance(name, str):
            raise RowError(f"malformed {tag} storage row: name is not a string")
    time = time0
    for d in dt:  # the running time is checked up front: expansion itself cannot fail
        time += d
        if not -MAX_SAFE <= time <= MAX_SAFE:
            raise RowError(f"malformed {tag} storage row: running time leaves the safe integers")
    return ChunkRow(tag, seq0, time0, turn, step, index, dt, members, call_id, name if has_name else _NO_NAME)


_NO_NAME = object()


class ChunkRow(Sequence[dict[str, Any]]):
    """A validated packed row: its ``assistant/chunk`` events, built one at a time on demand.

    A row of 4M members is a 24 MB line; its events as dicts would be gigabytes, so they are
    never held together (iterate; indexing builds one event).
    """

    __slots__ = (
        "_call_id",
        "_dt",
        "_index",
        "_kind",
        "_members",
        "_name",
        "_step",
        "_time0",
        "_turn",
        "seq0",
    )

    def __init__(
        self,
        tag: str,
        seq0: int,
        time0: int,
        turn: Any,
        step: Any,
        index: Any,
        dt: list[int],
        members: list[str],
        call_id: Any,
        name: Any,
    ) -> None:
        self._kind = _DELTA.get(tag, "tool-call-delta")
        self.seq0 = seq0
        self._time0 = time0
        self._turn, self._step, self._index = turn, step, index
        self._dt = dt
        self._members = members
        self._call_id = call_id
        self._name = name

    @property
    def last_seq(self) -> int:
        return self.seq0 + len(self._members) - 1

    def __len__(self) -> int:
        return len(self._members)

    def _event(self, k: int, time: int) -> dict[str, Any]:
        chunk: dict[str, Any]
        if self._kind == "tool-call-delta":
            chunk = {"type": self._kind, "index": self._index, "id": self._call_id}
            if self._name is not _NO_NAME:
                chunk["name"] = self._name
            chunk["argumentsDelta"] = self._members[k]
        else:
            chunk = {"type": self._kind, "index": self._index, "text": self._members[k]}
        return {
            "type": "assistant/chunk",
            "seq": self.seq0 + k,
            "time": time,
            "data": {"turn": self._turn, "step": self._step, "chunk": chunk},
        }

    def __iter__(self) -> Iterator[dict[str, Any]]:
        time = self._time0
        dt = self._dt
        for k in range(len(self._members)):
            if k:
                time += dt[k - 1]
            yield self._event(k, time)

    @overload
    def __getitem__(self, k: int) -> dict[str, Any]: ...
    @overload
    def __getitem__(self, k: slice) -> Sequence[dict[str, Any]]: ...
    def __getitem__(self, k: int | slice) -> dict[str, Any] | Sequence[dict[str, Any]]:
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(len(self)))]
        n = len(self._members)
        if k < 0:
            k += n
        if not 0 <= k < n:
            raise IndexError(k)
        return self._event(k, self._time0 + sum(self._dt[:k]))

"""Packed chunk rows of v0/v1 (spec §9.3): validate a row and expand it into assistant/chunk events."""

from __future__ import annotations

from typing import Any

from sesstool.core.header import MAX_SAFE, is_safe_int, is_safe_nonneg

_ROW_KEYS = frozenset({"type", "seq0", "time0", "data"})
_TEXT_DATA = frozenset({"turn", "step", "index", "dt", "texts"})
_TOOL_DATA = frozenset({"turn", "step", "index", "dt", "id", "args"})
_DELTA = {"text-chunks": "text-delta", "reasoning-chunks": "reasoning-delta"}


class RowError(Exception):
    pass


def expand_row(row: dict[str, Any]) -> list[dict[str, Any]]:
    """Expand one packed row into its assistant/chunk events, or raise RowError (§9.3)."""
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
    out: list[dict[str, Any]] = []
    time = time0
    kind = _DELTA.get(tag, "tool-call-delta")
    for k, member in enumerate(members):
        if k:
            time += dt[k - 1]
            if not -MAX_SAFE <= time <= MAX_SAFE:
                raise RowError(f"malformed {tag} storage row: running time leaves the safe integers")
        chunk: dict[str, Any]
        if is_tool:
            chunk = {"type": kind, "index": index, "id": call_id}
            if has_name:
                chunk["name"] = name
            chunk["argumentsDelta"] = member
        else:
            chunk = {"type": kind, "index": index, "text": member}
        out.append(
            {
                "type": "assistant/chunk",
                "seq": seq0 + k,
                "time": time,
                "data": {"turn": turn, "step": step, "chunk": chunk},
            }
        )
    return out

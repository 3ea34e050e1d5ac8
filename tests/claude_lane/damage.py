"""Hand-made damage, applied by the lane to a real transcript before the CLI resumes it.

Each function takes the file's bytes and returns the damaged bytes, deterministically, so the
``damaged-*`` fixtures are reproducible and the CLI's own reaction to each is recorded (spec
agent-formats §0 rows "last line cut in half", "tool_use line deleted", and §1.8's causes).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any

Json = dict[str, Any]


def _lines(data: bytes) -> list[bytes]:
    assert data.endswith(b"\n"), "damage applies to a complete transcript"
    return data[:-1].split(b"\n")


def _join(lines: list[bytes]) -> bytes:
    return b"".join(line + b"\n" for line in lines)


def _entry(line: bytes) -> Json:
    value = json.loads(line)
    assert isinstance(value, dict)
    return value


def _index(lines: list[bytes], pred: Callable[[Json], bool]) -> int:
    for i, line in enumerate(lines):
        if pred(_entry(line)):
            return i
    raise LookupError("no line matches")


def _has_block(entry: Json, kind: str) -> bool:
    content = (entry.get("message") or {}).get("content")
    return isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == kind for b in content)


def cut_last_line(data: bytes) -> bytes:
    """The last line cut in half (power loss / kill -9 during the write): no newline at the end."""
    lines = _lines(data)
    last = lines[-1]
    return _join(lines[:-1]) + last[: len(last) // 2]


def nul_run(data: bytes) -> bytes:
    """A metadata line mid-file whose blocks were never written: NUL bytes in its place."""
    lines = _lines(data)
    i = _index(lines, lambda e: e.get("type") == "api-request")
    nulls = b"\0" * (len(lines[i]) + 1)
    return _join(lines[:i]) + nulls + _join(lines[i + 1 :])


def delete_tool_use(data: bytes) -> bytes:
    """The assistant entry carrying the first tool_use removed: its result becomes an orphan."""
    lines = _lines(data)
    i = _index(lines, lambda e: e.get("type") == "assistant" and _has_block(e, "tool_use"))
    return _join(lines[:i] + lines[i + 1 :])


def delete_attachment(data: bytes) -> bytes:
    """An attachment entry mid-chain removed: the next entry's parentUuid names no entry."""
    lines = _lines(data)
    i = _index(lines, lambda e: e.get("type") == "attachment" and e.get("parentUuid") is not None)
    return _join(lines[:i] + lines[i + 1 :])


def duplicate_prompt(data: bytes) -> bytes:
    """The first prompt entry appended again (a replayed write): a duplicate uuid."""
    lines = _lines(data)
    i = _index(
        lines, lambda e: e.get("type") == "user" and isinstance((e.get("message") or {}).get("content"), str)
    )
    return _join([*lines, lines[i]])


def unknown_type(data: bytes) -> bytes:
    """An entry type this sesstool has never seen, mid-file (newer CLIs add types all the time)."""
    lines = _lines(data)
    session = _entry(lines[0]).get("sessionId")
    extra = json.dumps(
        {"type": "lane-future-entry", "sessionId": session, "note": "written by a newer CLI"},
        separators=(",", ":"),
    ).encode()
    return _join([*lines[:3], extra, *lines[3:]])


def foreign_session(other: bytes) -> Callable[[bytes], bytes]:
    """Another session's chain appended (two writers on one file): several session ids."""

    def apply(data: bytes) -> bytes:
        foreign = [line for line in _lines(other) if "uuid" in _entry(line)]
        return _join([*_lines(data), *foreign])

    return apply


def drop_uuid(data: bytes) -> bytes:
    """The last assistant entry written without its uuid (a malformed entry)."""
    lines = _lines(data)
    i = max(n for n, line in enumerate(lines) if _entry(line).get("type") == "assistant")
    entry = _entry(lines[i])
    del entry["uuid"]
    return _join(
        [*lines[:i], json.dumps(entry, separators=(",", ":"), ensure_ascii=False).encode(), *lines[i + 1 :]]
    )


def _dump(entry: Json) -> bytes:
    return json.dumps(entry, separators=(",", ":"), ensure_ascii=False).encode()


def sidechain_result(data: bytes) -> bytes:
    """The first tool_result entry flagged ``isSidechain: true`` (a writer that mislabels an
    entry): does a sidechain entry's result still answer its call?"""
    lines = _lines(data)
    i = _index(lines, lambda e: e.get("type") == "user" and _has_block(e, "tool_result"))
    entry = _entry(lines[i])
    entry["isSidechain"] = True
    return _join([*lines[:i], _dump(entry), *lines[i + 1 :]])


def sidechain_orphan(data: bytes) -> bytes:
    """A sidechain user entry spliced into the active chain after the first tool_result: a text
    block and a result for a call that was never made (is it sent? is the result an orphan?)."""
    lines = _lines(data)
    i = _index(lines, lambda e: e.get("type") == "user" and _has_block(e, "tool_result"))
    result = _entry(lines[i])
    j = next(n for n in range(i + 1, len(lines)) if _entry(lines[n]).get("parentUuid") == result["uuid"])
    side = {k: v for k, v in result.items() if k not in ("toolUseResult", "sourceToolAssistantUUID")}
    side |= {
        "isSidechain": True,
        "parentUuid": result["uuid"],
        "uuid": str(uuid.uuid5(uuid.NAMESPACE_URL, "sesstool lane sidechain " + result["uuid"])),
        "message": {
            "role": "user",
            "content": [
                {"type": "text", "text": "a sidechain entry on the chain"},
                {"type": "tool_result", "tool_use_id": "toolu_lane_never_made", "content": "x"},
            ],
        },
    }
    child = _entry(lines[j])
    child["parentUuid"] = side["uuid"]
    return _join([*lines[: i + 1], _dump(side), *lines[i + 1 : j], _dump(child), *lines[j + 1 :]])

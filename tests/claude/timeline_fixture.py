"""The hand-built fixture of ``inspect --timeline``'s subagent rows (fixtures/claude/timeline/
two-subagents; docs/format.md "Subagent rows"): a session whose one reply starts two subagents
that run at the same time, so their rows interleave; a parent entry whose time is malformed and
one without a time; a subagent file whose first entry has no time and whose last line is torn.
Written by ``python -m tests.claude.timeline_fixture`` (the bytes are committed; the tests read
them, never this)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import FIXTURES

ROOT = FIXTURES / "claude" / "timeline" / "two-subagents"
SESSION = "3c9d2f00-7a1e-4c55-9d0b-5e1f2a3b4c5d"
AGENTS = ("a1f00000000000001", "b2f00000000000002")


def _at(second: float) -> str:
    return f"2026-12-01T10:00:{second:06.3f}Z"


def _entry(
    kind: str, uuid: str, parent: str | None, when: str | None, message: dict[str, Any], **more: Any
) -> str:
    entry: dict[str, Any] = {
        "parentUuid": parent,
        "isSidechain": False,
        "type": kind,
        "message": message,
        "uuid": uuid,
    }
    if when is not None:
        entry["timestamp"] = when
    entry.update(sessionId=SESSION, version="2.1.332", cwd="/w", **more)
    return json.dumps(entry)


def _reply(ident: str, content: list[dict[str, Any]], stop: str) -> dict[str, Any]:
    return {
        "id": ident,
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": content,
        "stop_reason": stop,
    }


def _call(ident: str, name: str, **args: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": ident, "name": name, "input": args}


def _result(ident: str, text: str) -> dict[str, Any]:
    return {
        "role": "user",
        "content": [{"tool_use_id": ident, "type": "tool_result", "content": text, "is_error": False}],
    }


def main_lines() -> list[str]:
    calls = [_call(f"toolu_agent_{n}", "Agent", prompt=f"task {n}") for n in (1, 2)]
    return [
        json.dumps(
            {"type": "queue-operation", "operation": "enqueue", "timestamp": _at(0), "sessionId": SESSION}
        ),
        _entry("user", "u1", None, _at(1), {"role": "user", "content": "start two agents"}),
        _entry("assistant", "a1", "u1", _at(2), _reply("msg_1", calls, "tool_use")),
        json.dumps({"type": "tools-used", "tools": ["Agent"], "sessionId": SESSION}),  # no time
        _entry("user", "u2", "a1", _at(9), _result("toolu_agent_1", "one done")),
        _entry("user", "u3", "u2", "yesterday", _result("toolu_agent_2", "two done")),  # malformed
        _entry(
            "assistant",
            "a2",
            "u3",
            _at(10),
            _reply("msg_2", [{"type": "text", "text": "Both agents reported."}], "end_turn"),
        ),
    ]


def _call_pair(n: str, parent: str, at: tuple[float, float], tool: str, side: dict[str, Any]) -> list[str]:
    """An assistant entry ``{n}c`` calling ``tool`` (id ``toolu_{n}``) and its result ``{n}r``."""
    call = _reply(f"msg_{n}", [_call(f"toolu_{n}", tool, arg=n)], "tool_use")
    return [
        _entry("assistant", f"{n}c", parent, _at(at[0]), call, **side),
        _entry("user", f"{n}r", f"{n}c", _at(at[1]), _result(f"toolu_{n}", "ok"), **side),
    ]


def _done(n: str, parent: str, at: float, text: str, side: dict[str, Any]) -> str:
    return _entry(
        "assistant",
        n,
        parent,
        _at(at),
        _reply(f"msg_{n}", [{"type": "text", "text": text}], "end_turn"),
        **side,
    )


def agent_lines(agent: str) -> list[str]:
    """Agent 1: a prompt, three calls, a reply; a result's time has no zone (UTC). Agent 2: a
    record without a time first, a prompt, three calls (a result's time malformed), a reply."""
    side = {"isSidechain": True, "agentId": agent}
    if agent == AGENTS[0]:
        first = _call_pair("s1", "s0", (4, 4.4), "Bash", side)
        first[1] = first[1].replace(_at(4.4), "2026-12-01T10:00:04.4")  # no zone: UTC
        return [
            _entry("user", "s0", None, _at(3), {"role": "user", "content": "task 1"}, **side),
            *first,
            *_call_pair("s2", "s1r", (6, 6.5), "Bash", side),
            *_call_pair("s3", "s2r", (7.2, 7.6), "Edit", side),
            _done("s4", "s3r", 8, "one done", side),
        ]
    second = _call_pair("t2", "t1r", (5, 5.4), "Grep", side)
    second[1] = second[1].replace(_at(5.4), "soon")  # malformed: placed after its line before
    return [
        json.dumps({"type": "api-request-blob", "agentId": agent, "sessionId": SESSION}),  # no time, first
        _entry("user", "t0", None, _at(3.5), {"role": "user", "content": "task 2"}, **side),
        *_call_pair("t1", "t0", (4.2, 4.6), "Read", side),
        *second,
        *_call_pair("t3", "t2r", (6.2, 6.8), "Read", side),
        _done("t4", "t3r", 7, "two done", side),
    ]


def write() -> None:
    subagents = ROOT / SESSION / "subagents"
    subagents.mkdir(parents=True, exist_ok=True)
    (ROOT / f"{SESSION}.jsonl").write_text("\n".join(main_lines()) + "\n")
    for n, agent in enumerate(AGENTS, 1):
        text = "\n".join(agent_lines(agent)) + "\n"
        if agent == AGENTS[1]:
            text += '{"parentUuid":"t4","isSidechain":true,"type":"assistant","timestamp":"2026-12'  # torn
        (subagents / f"agent-{agent}.jsonl").write_text(text)
        meta = {
            "agentType": "general-purpose",
            "description": f"task {n}",
            "toolUseId": f"toolu_agent_{n}",
            "finished": n == 1,
        }
        (subagents / f"agent-{agent}.meta.json").write_text(json.dumps(meta) + "\n")


def transcript() -> Path:
    return ROOT / f"{SESSION}.jsonl"


if __name__ == "__main__":
    write()

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


def agent_lines(agent: str) -> list[str]:
    side = {"isSidechain": True, "agentId": agent}
    if agent == AGENTS[0]:
        return [
            _entry("user", "s1", None, _at(3), {"role": "user", "content": "task 1"}, **side),
            _entry(
                "assistant",
                "s2",
                "s1",
                _at(4),
                _reply("msg_s1", [_call("toolu_s1", "Bash", command="ls")], "tool_use"),
                **side,
            ),
            _entry(
                "user", "s3", "s2", "2026-12-01T10:00:06", _result("toolu_s1", "ok"), **side
            ),  # no zone: UTC
            _entry(
                "assistant",
                "s4",
                "s3",
                _at(8),
                _reply("msg_s2", [{"type": "text", "text": "one done"}], "end_turn"),
                **side,
            ),
        ]
    return [
        json.dumps({"type": "api-request-blob", "agentId": agent, "sessionId": SESSION}),  # no time, first
        _entry("user", "t1", None, _at(3.5), {"role": "user", "content": "task 2"}, **side),
        _entry(
            "assistant",
            "t2",
            "t1",
            _at(5),
            _reply("msg_t1", [_call("toolu_t1", "Read", path="x")], "tool_use"),
            **side,
        ),
        _entry(
            "user", "t3", "t2", "soon", _result("toolu_t1", "read"), **side
        ),  # malformed: after its line 3
        _entry(
            "assistant",
            "t4",
            "t3",
            _at(7),
            _reply("msg_t2", [{"type": "text", "text": "two done"}], "end_turn"),
            **side,
        ),
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

"""Logs of many files (issue 11 item 1, "one report per file"): a Claude Code session whose
subagent directory holds ``n`` tiny transcripts (each with its meta sidecar, one in ten not a
session log, one in ten left with a call unanswered, so that every kind of per-file result is
made), inside a Claude Code home that ``list`` reads. ``validate`` and ``inspect`` of the main
transcript check or show every subagent file; ``list`` of the home makes a row of each."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import FIXTURES

SEED = FIXTURES / "claude" / "projects" / "subagent"
SESSION = "e7114e93-e94d-5201-934d-81e8a6bea216"


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_bytes().splitlines()]


def write_session(home: Path, n: int) -> Path:
    """``home/projects/many/<session>.jsonl`` with ``n`` subagent files; answers the main
    transcript's path."""
    project = home / "projects" / "many"
    sides = project / SESSION / "subagents"
    sides.mkdir(parents=True)
    main = project / f"{SESSION}.jsonl"
    main.write_bytes((SEED / f"{SESSION}.jsonl").read_bytes())
    (seed,) = sorted((SEED / SESSION / "subagents").glob("agent-*.jsonl"))
    meta = json.loads(seed.with_name(seed.name.removesuffix(".jsonl") + ".meta.json").read_bytes())
    first = _lines(seed)[0]  # the subagent's prompt: a clean transcript of one entry
    for i in range(n):
        agent = f"a{i:016x}"
        name = sides / f"agent-{agent}.jsonl"
        if i % 10 == 3:
            name.write_bytes(b"not a transcript\n")
            continue
        entries = [{**first, "agentId": agent, "uuid": f"00000000-0000-4000-8000-{i:012x}"}]
        if i % 10 == 7:  # a call left without its result: a finding and an inspect row of its own
            call = {
                "type": "tool_use",
                "id": f"toolu_{i}",
                "name": "Bash",
                "input": {"command": f"echo {i}"},
            }
            message = {"id": f"msg_{i}", "type": "message", "role": "assistant", "content": [call]}
            entries.append(
                {
                    **first,
                    "type": "assistant",
                    "parentUuid": entries[0]["uuid"],
                    "agentId": agent,
                    "uuid": f"00000000-0000-4000-9000-{i:012x}",
                    "message": {**message, "model": "claude-test", "stop_reason": "tool_use"},
                }
            )
        name.write_bytes(b"".join(json.dumps(e).encode() + b"\n" for e in entries))
        side = {**meta, "description": f"agent {i}"}
        name.with_name(f"agent-{agent}.meta.json").write_text(json.dumps(side))
    return main

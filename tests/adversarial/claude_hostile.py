"""Claude Code transcripts that only hostile input makes (issue 11 item 1, third round): entries
whose parent is named by no entry, calls never answered, results away from their call, tool ids
used twice. Each generator writes ``n`` such entries (one session, on its active chain) after a
prompt; the memory tests (test_claude_hostile.py) measure them at N and 4N."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

SESSION = "5f0c0a3e-0000-4000-8000-000000000099"
WHEN = "2026-01-01T00:00:00.000Z"


def _entry(kind: str, ident: int, parent: str | None, content: Any, msg: str | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": kind, "content": content}
    if msg is not None:
        message.update({"id": msg, "type": "message", "model": "claude-test", "stop_reason": "tool_use"})
    return {
        "parentUuid": parent,
        "isSidechain": False,
        "type": kind,
        "message": message,
        "uuid": str(uuid.UUID(int=ident)),
        "timestamp": WHEN,
        "sessionId": SESSION,
        "version": "2.1.332",
        "cwd": "/w",
    }


def _call(n: int, tool_id: str, parent: str | None) -> dict[str, Any]:
    block = {"type": "tool_use", "id": tool_id, "name": "Bash", "input": {"command": f"echo {n}"}}
    return _entry("assistant", (n << 8) + 1, parent, [block], f"msg_{n}")


def _result(n: int, tool_id: str, parent: str | None) -> dict[str, Any]:
    block = {"type": "tool_result", "tool_use_id": tool_id, "content": "ok"}
    return _entry("user", (n << 8) + 2, parent, [block])


def missing_parents(n: int) -> Iterator[dict[str, Any]]:
    """Prompts each naming a parent no entry has."""
    for i in range(n):
        yield _entry("user", (i << 8) + 3, str(uuid.UUID(int=(1 << 120) + i)), "go")


def never_answered(n: int) -> Iterator[dict[str, Any]]:
    """Calls, each followed by a prompt hanging off it, none answered: every call is on the
    active chain and dangles. (A prompt between them: derive's assistant message of calls
    still waiting for their results is one message of them all, as long as the run of calls.)"""
    parent: str | None = None
    for i in range(n):
        call = _call(i, f"toolu_{i}", parent)
        prompt = _entry("user", (i << 8) + 3, call["uuid"], "go")
        parent = prompt["uuid"]
        yield from (call, prompt)


def call_run(n: int) -> Iterator[dict[str, Any]]:
    """Calls, each parented to the one before, none answered, no user entry between them."""
    parent: str | None = None
    for i in range(n):
        call = _call(i, f"toolu_{i}", parent)
        parent = call["uuid"]
        yield call


def results_away(n: int) -> Iterator[dict[str, Any]]:
    """A call, a prompt hanging off it, the call's result hanging off the prompt: every result is
    away from its call (the book remembers it: it could be an orphan)."""
    parent: str | None = None
    for i in range(n):
        call = _call(i, f"toolu_{i}", parent)
        prompt = _entry("user", (i << 8) + 3, call["uuid"], "go")
        result = _result(i, f"toolu_{i}", prompt["uuid"])
        parent = result["uuid"]
        yield from (call, prompt, result)


def ids_twice(n: int) -> Iterator[dict[str, Any]]:
    """Each call's id used again by a second call, then the call answered."""
    parent: str | None = None
    for i in range(n):
        first = _call(i, f"toolu_{i}", parent)
        again = _call(i, f"toolu_{i}", first["uuid"])
        again["uuid"], again["message"]["id"] = str(uuid.UUID(int=(i << 8) + 4)), f"msg_{i}_again"
        result = _result(i, f"toolu_{i}", again["uuid"])
        parent = result["uuid"]
        yield from (first, again, result)


def compactions(n: int) -> Iterator[dict[str, Any]]:
    """Three entries, then ``n`` compactions (issue 11 item 1): a ``compact_boundary`` entry
    preserving those three and anchored on the compact summary that follows it. Each boundary
    hangs off the summary before it (a recorded one is a root, §1.6: here every summary is on the
    active chain, so derive meets them all). The preserved uuids are the same three each time:
    what grows is the compactions, not the entries they name."""
    first = [
        _entry("user", 1, None, "go"),
        _entry("assistant", 2, None, "ok", "msg_0"),
        _entry("user", 3, None, "on"),
    ]
    first[1]["parentUuid"], first[2]["parentUuid"] = first[0]["uuid"], first[1]["uuid"]
    yield from first
    kept = [e["uuid"] for e in first]
    parent = first[2]["uuid"]
    for i in range(n):
        boundary = _entry("system", (i << 8) + 5, parent, None)
        summary = _entry("user", (i << 8) + 6, boundary["uuid"], f"summary {i}")
        del boundary["message"]
        boundary.update(
            subtype="compact_boundary",
            logicalParentUuid=parent,
            compactMetadata={
                "trigger": "auto",
                "preTokens": 1000 + i,
                "preservedMessages": {"uuids": kept, "anchorUuid": summary["uuid"]},
            },
        )
        summary["isCompactSummary"] = True
        parent = summary["uuid"]
        yield from (boundary, summary)


PATTERNS: dict[str, Callable[[int], Iterator[dict[str, Any]]]] = {
    "missing-parents": missing_parents,
    "never-answered": never_answered,
    "results-away": results_away,
    "ids-twice": ids_twice,
}


def write(path: Path, pattern: str, n: int) -> Path:
    """``n`` units of ``pattern`` (of ``PATTERNS``, or ``compactions``)."""
    made = compactions if pattern == "compactions" else PATTERNS[pattern]
    with path.open("wb") as out:
        for entry in made(n):
            out.write(json.dumps(entry, separators=(",", ":")).encode() + b"\n")
    return path

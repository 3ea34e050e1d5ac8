"""Pure planners for Codex rollouts: the closers a repair appends and a fork's session_meta.

Repair (agent-formats §4): per call without output, the ``response_item`` Codex synthesises in
memory on every resume — ``function_call_output`` (``custom_tool_call_output`` for a custom
tool call) ``{id, call_id, output: "aborted"}`` with Codex's own UUIDv5 id — then, per
unfinished turn, the ``event_msg`` ``turn_aborted{reason: "interrupted"}`` 0.171 itself writes
on an interrupt (fields as it writes them). Timestamps are the last line's, ordinals continue
the last line's: the same source always gives the same bytes.

Fork: the child starts with a new ``session_meta`` (new thread id, ``forked_from_id`` naming
the source) and then carries the source lines; the source's own ``session_meta`` stays as a
later copy, which Codex reads as fork history (the first one is canonical, §3.3).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Any

import orjson

from sesstool.core.closer_list import Closers
from sesstool.core.humanize import chosen
from sesstool.dialects.codex.history import aborted_output
from sesstool.dialects.codex.model import CodexFacts


def epoch_seconds(stamp: str | None) -> int | None:
    """``2026-12-01T13:47:04.087Z`` -> epoch seconds (None when it is not such a time)."""
    if stamp is None:
        return None
    try:
        return int(dt.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp())
    except ValueError:
        return None


def _line(stamp: str | None, ordinal: int | None, kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    record: dict[str, Any] = {"timestamp": stamp or "1970-01-01T00:00:00.000Z"}
    if ordinal is not None:
        record["ordinal"] = ordinal
    record["type"] = kind
    record["payload"] = payload
    return record


def plan_closers(facts: CodexFacts) -> Closers[dict[str, Any]]:
    """The lines a repair appends after the committed prefix, in order (empty: balanced), made
    as they are walked (``core.closer_list``: the calls without output may be in a spill file)."""
    return Closers(lambda: _closer_lines(facts), len(facts.dangling) + len(facts.open_turns))


def _closer_lines(facts: CodexFacts) -> Iterator[dict[str, Any]]:
    ordinal = facts.last_ordinal

    def next_ordinal() -> int | None:
        nonlocal ordinal
        if ordinal is None:
            return None
        ordinal += 1
        return ordinal

    for call in facts.dangling:
        source = {"type": call.kind, "id": call.item_id, "call_id": call.call_id}
        yield _line(facts.last_time, next_ordinal(), "response_item", aborted_output(source))
    completed = epoch_seconds(facts.last_time)
    for turn in facts.open_turns:
        payload: dict[str, Any] = {"type": "turn_aborted"}
        if turn.root_turn_id is not None:
            payload["root_turn_id"] = turn.root_turn_id
        if turn.turn_id is not None:
            payload["turn_id"] = turn.turn_id
        payload["reason"] = "interrupted"
        if turn.started_at is not None and completed is not None:
            payload["started_at"] = turn.started_at
            payload["completed_at"] = max(completed, turn.started_at)
            payload["duration_ms"] = (payload["completed_at"] - turn.started_at) * 1000
        yield _line(facts.last_time, next_ordinal(), "event_msg", payload)


def encode_line(record: dict[str, Any]) -> bytes:
    """One line as Codex writes it: compact JSON, UTF-8, ``\\n``-terminated."""
    return orjson.dumps(record) + b"\n"


def describe_closer(record: dict[str, Any]) -> str:
    payload = record.get("payload") or {}
    if record.get("type") == "response_item":
        return (
            f'response_item {payload.get("type")} call_id {chosen(payload.get("call_id"))}: output "aborted"'
        )
    return f"event_msg turn_aborted turn {chosen(payload.get('turn_id'))} reason interrupted"


def fork_session_meta(meta_line: dict[str, Any], child_id: str) -> dict[str, Any]:
    """The child's first line: the source's session_meta with the new thread id, naming its
    parent in ``forked_from_id`` (the field Codex's own forks set, §3.3)."""
    payload = dict(meta_line.get("payload") or {})
    parent = payload.get("id")
    payload["id"] = child_id
    if "session_id" in payload:
        payload["session_id"] = child_id
    payload["forked_from_id"] = parent
    return {**meta_line, "payload": payload}

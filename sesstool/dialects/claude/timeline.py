"""The report timeline of a Claude Code transcript (agent-formats §1): a turn runs from a user
prompt to the last entry before the next one (the format writes no turn end; the last turn stays
open when the session was interrupted), a tool call from its ``tool_use`` block to the
``tool_result`` naming its id. Times are the entries' ``timestamp``s; a sidechain entry starts no
turn and no call, but its ``tool_result`` answers a call (measured, docs/format.md)."""

from __future__ import annotations

from typing import Any

from sesstool.core.timeline import SpanCollector, event_time
from sesstool.dialects.claude import vocabulary as vocab


class ClaudeTimeline(SpanCollector):
    def record(self, entry: dict[str, Any], line: int, offset: int) -> None:
        t = event_time(entry.get("timestamp"))
        if t is None:
            return
        kind = entry.get("type")
        message = entry.get("message")
        blocks = message.get("content") if type(message) is dict else None
        blocks = [b for b in blocks if type(b) is dict] if type(blocks) is list else []
        if kind == "user" and entry.get("isSidechain") is not True and _is_prompt(entry, message, blocks):
            if self.turn_is_open and self._last is not None:
                self.end_turn(self._last, "completed", self._last_line)
            self.tick(line, None, t, offset)
            self.next_turn(t, line)
            return
        self.tick(line, None, t, offset)
        if entry.get("isSidechain") is True and kind == "assistant":
            return  # a subagent's own calls are not the session's (its results still answer calls)
        for b in blocks:
            if kind == "assistant" and b.get("type") == "tool_use" and isinstance(b.get("id"), str):
                name = b.get("name")
                self.start_call(b["id"], name if isinstance(name, str) else "tool", t, None, line)
            elif kind == "user" and b.get("type") == "tool_result" and isinstance(b.get("tool_use_id"), str):
                self.end_call(b["tool_use_id"], t, line, b.get("is_error") is True)


def _is_prompt(entry: dict[str, Any], message: Any, blocks: list[dict[str, Any]]) -> bool:
    """A user entry that starts a turn: typed text, not a tool result, a local command, a
    compaction summary or a meta entry."""
    if (
        entry.get("isMeta") is True
        or entry.get("isCompactSummary") is True
        or entry.get("origin") is not None
    ):
        return False
    if any(b.get("type") == "tool_result" for b in blocks):
        return False
    content = message.get("content") if type(message) is dict else None
    text = (
        content
        if isinstance(content, str)
        else next(
            (b["text"] for b in blocks if b.get("type") == "text" and isinstance(b.get("text"), str)), ""
        )
    )
    return bool(text) and not text.startswith(vocab.LOCAL_COMMAND_PREFIXES)

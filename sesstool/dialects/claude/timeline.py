"""The timeline of a Claude Code transcript (agent-formats §1), for the report's spans and for
``inspect --timeline``'s rows alike: one classification of an entry (``_Entry``) drives both.

A turn runs from a user prompt to the last entry before the next one (the format writes no turn
end; the last turn stays open when the session was interrupted), a tool call from its
``tool_use`` block to the ``tool_result`` naming its id. Times are the entries' ``timestamp``s;
a sidechain entry starts no turn and no call, but its ``tool_result`` answers a call (measured,
docs/format.md). An entry without a usable ``timestamp`` is in no span; it still has its row
(docs/format.md "Timeline")."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sesstool.core.humanize import chosen
from sesstool.core.timeline import SpanCollector, event_time, preview
from sesstool.dialects.claude import vocabulary as vocab

# the field that names what kind of a type an entry is (its row's ``type/…``)
_SUBKIND = {"system": "subtype", "queue-operation": "operation", "progress": "subtype"}


@dataclass(slots=True)
class _Entry:
    """What the timeline reads of one entry."""

    kind: str
    t: int | None
    sidechain: bool
    prompt: str | None = None  # the typed text of a user prompt: the entry starts a turn
    text: str = ""  # the first text of its message
    note: str = ""  # a user entry with text that starts no turn: why (``_note``)
    calls: list[tuple[str, str]] = field(default_factory=list)  # (id, tool name) of tool_use blocks
    results: list[tuple[str, bool]] = field(default_factory=list)  # (tool_use_id, is_error)


def _classify(entry: dict[str, Any]) -> _Entry:
    kind = entry.get("type")
    kind = kind if isinstance(kind, str) else "?"
    message = entry.get("message")
    content = message.get("content") if type(message) is dict else None
    blocks = [b for b in content if type(b) is dict] if type(content) is list else []
    found = _Entry(kind, event_time(entry.get("timestamp")), entry.get("isSidechain") is True)
    text = content if isinstance(content, str) else _first_text(blocks)
    found.text = text
    if kind == "user" and not found.sidechain and _is_prompt(entry, blocks, text):
        found.prompt = text
    elif kind == "user" and text:
        found.note = _note(entry, text)
    for b in blocks:
        if kind == "assistant" and b.get("type") == "tool_use" and isinstance(b.get("id"), str):
            name = b.get("name")
            found.calls.append((b["id"], name if isinstance(name, str) else "tool"))
        elif kind == "user" and b.get("type") == "tool_result" and isinstance(b.get("tool_use_id"), str):
            found.results.append((b["tool_use_id"], b.get("is_error") is True))
    return found


def _first_text(blocks: list[dict[str, Any]]) -> str:
    return next((b["text"] for b in blocks if b.get("type") == "text" and isinstance(b.get("text"), str)), "")


def _is_prompt(entry: dict[str, Any], blocks: list[dict[str, Any]], text: str) -> bool:
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
    return bool(text) and not text.startswith(vocab.LOCAL_COMMAND_PREFIXES)


def _note(entry: dict[str, Any], text: str) -> str:
    """What a user entry with text that is no prompt is, for its row (``_is_prompt``)."""
    if entry.get("isCompactSummary") is True:
        return "compact summary: "
    if entry.get("isMeta") is True:
        return "meta: "
    if entry.get("origin") is not None:
        return "origin: "
    return "local command: " if text.startswith(vocab.LOCAL_COMMAND_PREFIXES) else ""


class ClaudeTimeline(SpanCollector):
    # a subagent's own file (its first entry a sidechain entry naming its agent, as the transcript
    # scanner tells): its calls are its own, so its results name their tool (docs/format.md
    # "Subagent rows"); None until the first entry
    subagent_file: bool | None = None

    def record(self, entry: dict[str, Any], line: int, offset: int) -> None:
        found = _classify(entry)
        if self.subagent_file is None and entry.get("type") in vocab.CHAIN_TYPES:
            self.subagent_file = found.sidechain and isinstance(entry.get("agentId"), str)
        before = self.open_turn
        names = [self.call_name(call_id) for call_id, _ in found.results]  # before the results close them
        if found.t is not None:
            self._spans(found, line, offset, found.t)
        if self.rows is not None:
            turn = self.open_turn if self.open_turn is not None else before
            self.row(
                line,
                entry.get("timestamp"),
                _row_kind(found.kind, entry),
                _summary(found, names),
                turn,
                found.sidechain,
            )

    def _spans(self, found: _Entry, line: int, offset: int, t: int) -> None:
        if found.prompt is not None:
            if self.turn_is_open and self._last is not None:
                self.end_turn(self._last, "completed", self._last_line)
            self.tick(line, None, t, offset)
            self.next_turn(t, line)
            return
        self.tick(line, None, t, offset)
        if found.sidechain and found.kind == "assistant" and not self.subagent_file:
            return  # a subagent's calls inline are not the session's (its results still answer calls)
        for call_id, name in found.calls:
            self.start_call(call_id, name, t, None, line)
        for call_id, error in found.results:
            self.end_call(call_id, t, line, error)


def _row_kind(kind: str, entry: dict[str, Any]) -> str:
    """``type``, or ``type/sub`` where the entry names its sub-kind (a system entry's
    ``subtype``, an attachment's ``attachment.type``, a queue operation's ``operation``)."""
    if kind == "attachment":
        attachment = entry.get("attachment")
        sub = attachment.get("type") if type(attachment) is dict else None
    else:
        sub = entry.get(_SUBKIND[kind]) if kind in _SUBKIND else None
    return f"{kind}/{sub}" if isinstance(sub, str) and sub else kind


def _summary(found: _Entry, names: list[str | None]) -> str:
    """What a row says of its entry: the prompt that starts a turn, the calls it makes and the
    results it brings (tool name and id), or else the start of a message's text."""
    if found.prompt is not None:
        return f"prompt: {preview(found.prompt)}"
    parts = [f"call {chosen(name)} {chosen(call_id)}" for call_id, name in found.calls]
    for (call_id, error), name in zip(found.results, names, strict=True):
        said = f"result {chosen(name)} {chosen(call_id)}" if name is not None else f"result {chosen(call_id)}"
        parts.append(said + (" (error)" if error else ""))
    if parts:
        return "; ".join(parts)
    return found.note + preview(found.text) if found.text and found.kind in ("user", "assistant") else ""

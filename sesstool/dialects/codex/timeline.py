"""The timeline of a Codex rollout (agent-formats §3.3, §3.4), for the report's spans and for
``inspect --timeline``'s rows alike: one reading of a line drives both. Turns run from
``task_started`` to ``task_complete``/``turn_aborted``, tool calls from a call item to the
output with its ``call_id``. Times are the lines' ``timestamp``s; a line without a usable one is
in no span, and still has its row (docs/format.md "Timeline")."""

from __future__ import annotations

from typing import Any

from sesstool.core.humanize import chosen
from sesstool.core.timeline import SpanCollector, event_time, preview
from sesstool.dialects.codex.vocabulary import CALL_TYPES, OUTPUT_TYPES, TURN_END_EVENTS

# event_msg events whose row shows a text field, and who said it
_SAID = {"user_message": ("user", "message"), "agent_message": ("assistant", "message")}


class CodexTimeline(SpanCollector):
    def record(self, obj: dict[str, Any], line: int, offset: int) -> None:
        given = obj.get("payload")
        decoded = isinstance(given, dict)
        payload: dict[str, Any] = given if isinstance(given, dict) else {}
        kind, inner = obj.get("type"), payload.get("type")
        t = event_time(obj.get("timestamp"))
        before = self.open_turn
        call_id = payload.get("call_id")
        name = self.call_name(call_id) if isinstance(call_id, str) else None  # before the output closes it
        if t is not None and decoded:
            self._spans(kind, inner, payload, line, offset, t)
        if self.rows is not None:
            turn = self.open_turn if self.open_turn is not None else before
            label = f"{kind}/{inner}" if isinstance(inner, str) and inner else str(kind)
            self.row(line, obj.get("timestamp"), label, _summary(kind, inner, payload, name), turn)

    def _spans(self, kind: Any, inner: Any, payload: dict[str, Any], line: int, offset: int, t: int) -> None:
        self.tick(line, None, t, offset)
        if kind == "event_msg" and inner == "task_started":
            self.next_turn(t, line)
        elif kind == "event_msg" and inner in TURN_END_EVENTS:
            if self.turn_is_open:
                self.end_turn(t, "completed" if inner == "task_complete" else "aborted", line)
        elif kind == "response_item" and inner in CALL_TYPES:
            call_id = payload.get("call_id")
            if isinstance(call_id, str):
                name = payload.get("name")
                self.start_call(call_id, name if isinstance(name, str) else str(inner), t, None, line)
        elif kind == "response_item" and inner in OUTPUT_TYPES:
            call_id = payload.get("call_id")
            if isinstance(call_id, str):
                self.end_call(call_id, t, line, _failed(payload))


def _failed(payload: dict[str, Any]) -> bool:
    output = payload.get("output")
    return type(output) is dict and output.get("success") is False


def _summary(kind: Any, inner: Any, payload: dict[str, Any], name: str | None) -> str:
    """What a row says of its line: a call (tool name and ``call_id``), an output (the name of
    the call it answers, when that call is open), who said a message and its start, how a turn
    ended; other lines say nothing more than their type."""
    call_id = payload.get("call_id")
    call_id = call_id if isinstance(call_id, str) else "(no call_id)"
    if kind == "response_item" and inner in CALL_TYPES:
        called = payload.get("name")
        return f"call {chosen(called if isinstance(called, str) else inner)} {chosen(call_id)}"
    if kind == "response_item" and inner in OUTPUT_TYPES:
        said = f"result {chosen(name)} {chosen(call_id)}" if name is not None else f"result {chosen(call_id)}"
        return said + (" (error)" if _failed(payload) else "")
    if kind == "response_item" and inner == "message":
        role = payload.get("role")
        return f"{role if isinstance(role, str) else '?'}: {preview(_message_text(payload.get('content')))}"
    if kind == "event_msg" and inner in _SAID:
        who, key = _SAID[inner]
        text = payload.get(key)
        return f"{who}: {preview(text)}" if isinstance(text, str) else who
    if kind == "event_msg" and inner == "task_complete":
        return "completed"
    if kind == "event_msg" and inner == "thread_rolled_back":
        return f"rolled back {payload.get('num_turns')} turn(s)"
    if kind == "event_msg" and inner == "turn_aborted":
        reason = payload.get("reason")
        return f"aborted: {reason}" if isinstance(reason, str) else "aborted"
    return ""


def _message_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if type(content) is list:
        for part in content:
            if type(part) is dict and isinstance(part.get("text"), str):
                return str(part["text"])
    return ""

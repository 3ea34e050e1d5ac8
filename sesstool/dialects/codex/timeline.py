"""The report timeline of a Codex rollout (agent-formats §3): turns from ``task_started`` to
``task_complete``/``turn_aborted``, tool calls from a call item to the output with its
``call_id``. Times are the lines' ``timestamp``s."""

from __future__ import annotations

from typing import Any

from sesstool.core.timeline import SpanCollector, event_time
from sesstool.dialects.codex.vocabulary import CALL_TYPES, OUTPUT_TYPES, TURN_END_EVENTS


class CodexTimeline(SpanCollector):
    def record(self, obj: dict[str, Any], line: int, offset: int) -> None:
        t = event_time(obj.get("timestamp"))
        payload = obj.get("payload")
        if t is None or type(payload) is not dict:
            return
        self.tick(line, None, t, offset)
        kind, inner = obj.get("type"), payload.get("type")
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
                output = payload.get("output")
                error = type(output) is dict and output.get("success") is False
                self.end_call(call_id, t, line, error)

"""The report timeline of the ``{type, seq, time, data}`` envelope dialects (dsh, mini-agent).

``turn/start``…``turn/end`` and ``step/start``…``step/end`` are bands; a ``tool/call`` is a bar
to the ``tool/result`` that cites its seq in ``sourceEventSeqs`` (else names its call id).
Records of other types only mark time, read from the envelope keys before ``data`` without
decoding the record (chunk events are most of a log's bytes).
"""

from __future__ import annotations

import re
from typing import Any

from sesstool.core.timeline import SpanCollector, event_time


class EnvelopeTimeline(SpanCollector):
    def skim(self, raw: bytes, line: int, offset: int) -> bool:
        envelope = _envelope(raw)
        if envelope is None:
            return False
        t, seq = envelope
        self.tick(line, seq, t, offset)
        return True

    def record(self, obj: dict[str, Any], line: int, offset: int) -> None:
        t = event_time(obj.get("time"))
        if t is None:
            return
        seq = obj.get("seq")
        seq = seq if type(seq) is int else None
        self.tick(line, seq, t, offset)
        kind = obj.get("type")
        data = obj.get("data")
        data = data if type(data) is dict else {}
        turn = data.get("turn") if type(data.get("turn")) is int else None
        if kind == "turn/start":
            self.start_turn(f"turn {turn if turn is not None else '?'}", t, turn, seq, line)
        elif kind == "turn/end":
            if self.turn_is_open:
                self.end_turn(t, _reason(data.get("reason")), line)
        elif kind == "step/start":
            step = data.get("step")
            label = f"step {turn if turn is not None else '?'}.{step if type(step) is int else '?'}"
            self.start_step(label, t, turn, seq, line)
        elif kind == "step/end":
            self.end_step(t, "completed", line)
        elif kind == "tool/call":
            call_id = data.get("callId")
            if isinstance(call_id, str):
                self.start_call(call_id, str(data.get("name")), t, seq, line)
        elif kind == "tool/result":
            call_id = self._result_call_id(obj, data)
            if call_id is not None:
                self.end_call(call_id, t, line, _is_error(data))

    def _result_call_id(self, obj: dict[str, Any], data: dict[str, Any]) -> str | None:
        cited = obj.get("sourceEventSeqs")
        if type(cited) is list:
            for s in cited:
                if type(s) is int and (call_id := self.call_of_seq(s)) is not None:
                    return call_id
        message = data.get("message")
        if type(message) is dict:
            for key in ("toolCallId", "tool_call_id"):
                if isinstance(message.get(key), str):
                    return str(message[key])
            source = message.get("source")
            if type(source) is dict and isinstance(source.get("callId"), str):
                return str(source["callId"])
        return data["callId"] if isinstance(data.get("callId"), str) else None


_SPAN_TYPES = frozenset(
    (b"turn/start", b"turn/end", b"step/start", b"step/end", b"tool/call", b"tool/result")
)
_ENVELOPE_KEY = re.compile(rb'"(type|seq|time)":(?:"([^"\\]{0,64})"|(-?\d{1,20})[,}])')


def _envelope(raw: bytes) -> tuple[int, int | None] | None:
    """(time, seq) of a record that opens no span and closes none, read from the envelope keys
    that precede its ``data`` (both dialects write them first); None: decode it."""
    head = raw[:256]
    cut = head.find(b'"data"')
    if cut < 0:
        return None
    text: dict[bytes, bytes] = {}  # quoted values
    number: dict[bytes, int] = {}
    for m in _ENVELOPE_KEY.finditer(head, 0, cut):
        if m.group(2) is not None:
            text[m.group(1)] = m.group(2)
        else:
            number[m.group(1)] = int(m.group(3))
    kind = text.get(b"type")
    if kind is None or kind in _SPAN_TYPES:
        return None
    t = number.get(b"time")
    if t is None and b"time" in text:
        t = event_time(text[b"time"].decode("ascii", "replace"))
    if t is None:
        return None
    return t, number.get(b"seq")


def _reason(value: Any) -> str:
    if type(value) is dict:
        value = value.get("kind")
    return value if isinstance(value, str) else "ended"


def _is_error(data: dict[str, Any]) -> bool:
    if data.get("isError") is True:
        return True
    message = data.get("message")
    if type(message) is not dict:
        return False
    if message.get("isError") is True:
        return True
    content = message.get("content")
    if type(content) is list:
        return any(type(b) is dict and b.get("isError") is True for b in content)
    return False

"""The report's timeline, collected in one streaming pass over ``{type, seq, time, data}`` events.

Fed the same reader batches as the scanner, it pairs turn/step starts with their ends and
tool calls with their results (by the cited ``sourceEventSeqs``, else by call id) and keeps a
bounded amount: the first ``head`` and last ``tail`` closed spans, the calls still open, the
longest gaps, and a time index of at most ``2 * index_points`` checkpoints from which any line
or seq is placed on the time axis. Memory does not grow with the log.
"""

from __future__ import annotations

import heapq
import re
from bisect import bisect_right
from collections import deque
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson

from sesstool.core.report_model import Gap, ItemKind, TimelineItem


def event_time(value: Any) -> int | None:
    """Epoch ms from a dsh integer time or a mini-agent ISO-8601 string; None when neither."""
    if type(value) is int:
        return value
    if isinstance(value, str):
        try:
            return int(datetime.fromisoformat(value).timestamp() * 1000)
        except (ValueError, OverflowError):
            return None
    return None


MIN_GAP_MS = 30_000  # a gap is at least this long and a tenth of the session


@dataclass(slots=True)
class _Open:
    kind: ItemKind
    label: str
    start: int
    turn: int | None
    seq: int | None
    line: int
    offset: int


class TimeIndex:
    """(line, seq, time) checkpoints with a doubling stride: bounded, monotone in line."""

    def __init__(self, points: int = 2048) -> None:
        self._points = points
        self._stride = 1
        self._count = 0
        self.last_line = 0  # the last event's line, checkpoint or not
        self.lines: list[int] = []
        self.seqs: list[int | None] = []
        self.times: list[int] = []

    def add(self, line: int, seq: int | None, time: int) -> None:
        self.last_line = line
        self._count += 1
        if self._count % self._stride:
            return
        if self.lines and line <= self.lines[-1]:
            return
        self.lines.append(line)
        self.seqs.append(seq)
        self.times.append(time)
        if len(self.lines) >= 2 * self._points:
            self.lines = self.lines[::2]
            self.seqs = self.seqs[::2]
            self.times = self.times[::2]
            self._stride *= 2

    def at_line(self, line: int) -> int | None:
        i = bisect_right(self.lines, line) - 1
        if i < 0:
            return self.times[0] if self.times else None
        if i + 1 < len(self.lines) and self.lines[i] != line:
            l0, l1, t0, t1 = self.lines[i], self.lines[i + 1], self.times[i], self.times[i + 1]
            return t0 + (t1 - t0) * (line - l0) // (l1 - l0)
        return self.times[i]

    def line_of_seq(self, seq: int) -> int | None:
        best: int | None = None
        for line, s in zip(self.lines, self.seqs, strict=True):
            if s is None:
                continue
            if s > seq:
                break
            best = line + (seq - s)  # seqs advance one per line between checkpoints, as a rule
        return best


@dataclass(frozen=True, slots=True)
class CollectedTimeline:
    items: tuple[TimelineItem, ...]  # sorted by start
    elided: int
    gaps: tuple[Gap, ...]
    start: int | None
    end: int | None
    index: TimeIndex


class TimelineCollector:
    """One pass over envelope events (dsh and mini-agent; any dialect with that envelope)."""

    def __init__(self, head: int = 1500, tail: int = 1500, max_open_calls: int = 4096) -> None:
        self._head: list[TimelineItem] = []
        self._head_max = head
        self._tail: deque[TimelineItem] = deque(maxlen=tail)
        self._closed = 0
        self._max_open = max_open_calls
        self._turn: _Open | None = None
        self._step: _Open | None = None
        self._calls: dict[str, _Open] = {}  # call id -> the open call
        self._call_ids: dict[int, str] = {}  # tool/call seq -> call id (open calls only)
        self._gaps: list[tuple[int, int, int]] = []  # min-heap of (length, start, end)
        self._first: int | None = None
        self._last: int | None = None
        self._last_line = 0
        self._seq: int | None = None
        self._offset = 0
        self.index = TimeIndex()

    # -- feeding --------------------------------------------------------------------------------

    def feed_lines(self, lines: list[bytes], offset: int, lineno: int, frame: int | None) -> None:
        loads = orjson.loads
        for i, raw in enumerate(lines):
            self._offset = offset
            offset += len(raw) + 1
            envelope = _envelope(raw)
            if envelope is not None:
                # most events (chunks, messages) only mark time: read it from the envelope
                # without decoding a record that may be megabytes long
                t, seq = envelope
                self._tick(lineno + i, seq, t)
                continue
            try:
                obj = loads(raw)
            except orjson.JSONDecodeError:
                continue
            if type(obj) is dict:
                self._event(obj, lineno + i)

    def _tick(self, line: int, seq: int | None, t: int) -> None:
        self.index.add(line, seq, t)
        if self._last is not None and t - self._last > 0:
            gap = (t - self._last, self._last, t)
            if len(self._gaps) < 16:
                heapq.heappush(self._gaps, gap)
            elif gap > self._gaps[0]:
                heapq.heapreplace(self._gaps, gap)
        self._first = t if self._first is None else min(self._first, t)
        self._last = t if self._last is None else max(self._last, t)
        self._last_line = line
        self._seq = seq

    def _event(self, obj: dict[str, Any], line: int) -> None:
        t = event_time(obj.get("time"))
        if t is None:
            return
        seq = obj.get("seq")
        seq = seq if type(seq) is int else None
        self._tick(line, seq, t)
        kind = obj.get("type")
        data = obj.get("data")
        data = data if type(data) is dict else {}
        turn = data.get("turn") if type(data.get("turn")) is int else None
        if kind == "turn/start":
            if self._turn is not None:  # a second start without an end: the first never closed
                self._emit(self._turn, None, "unclosed", line)
            self._turn = _Open(
                "turn", f"turn {turn if turn is not None else '?'}", t, turn, seq, line, self._offset
            )
        elif kind == "turn/end":
            if self._step is not None:
                self._emit(self._step, None, "unclosed", line)
                self._step = None
            if self._turn is not None:
                self._emit(self._turn, t, _reason(data.get("reason")), line)
                self._turn = None
        elif kind == "step/start":
            if self._step is not None:
                self._emit(self._step, None, "unclosed", line)
            step = data.get("step")
            label = f"step {turn if turn is not None else '?'}.{step if type(step) is int else '?'}"
            self._step = _Open("step", label, t, turn, seq, line, self._offset)
        elif kind == "step/end":
            if self._step is not None:
                self._emit(self._step, t, "completed", line)
                self._step = None
        elif kind == "tool/call":
            call_id = data.get("callId")
            if isinstance(call_id, str):
                name = data.get("name")
                turn = turn if turn is not None else (self._turn.turn if self._turn else None)
                self._open_call(call_id, _Open("tool", str(name), t, turn, seq, line, self._offset))
        elif kind == "tool/result":
            call_id = self._result_call_id(obj, data)
            if call_id is not None and call_id in self._calls:
                call = self._calls.pop(call_id)
                if call.seq is not None:
                    self._call_ids.pop(call.seq, None)
                error = _is_error(data)
                self._emit(call, t, "error" if error else "answered", line, error)

    def _open_call(self, call_id: str, call: _Open) -> None:
        old = self._calls.pop(call_id, None)
        if old is not None:  # a repeated call id: the earlier call never got its result
            self._emit(old, None, "dangling", old.line)
        if len(self._calls) >= self._max_open:  # bounded: the oldest open call is kept as dangling
            oldest_id = next(iter(self._calls))
            oldest = self._calls.pop(oldest_id)
            if oldest.seq is not None:
                self._call_ids.pop(oldest.seq, None)
            self._emit(oldest, None, "dangling", oldest.line)
        self._calls[call_id] = call
        if call.seq is not None:
            self._call_ids[call.seq] = call_id

    def _result_call_id(self, obj: dict[str, Any], data: dict[str, Any]) -> str | None:
        cited = obj.get("sourceEventSeqs")
        if type(cited) is list:
            for s in cited:
                if type(s) is int and s in self._call_ids:
                    return self._call_ids[s]
        message = data.get("message")
        if type(message) is dict:
            for key in ("toolCallId", "tool_call_id"):
                if isinstance(message.get(key), str):
                    return str(message[key])
            source = message.get("source")
            if type(source) is dict and isinstance(source.get("callId"), str):
                return str(source["callId"])
        return data["callId"] if isinstance(data.get("callId"), str) else None

    def _emit(self, item: _Open, end: int | None, status: str, line: int, error: bool = False) -> None:
        done = TimelineItem(
            f"{item.kind}-{item.line}",
            item.kind,
            item.label,
            item.start,
            end,
            status,
            item.turn,
            item.seq,
            self._seq if end is not None else None,
            item.line,
            line,
            item.offset,
            self._offset if end is not None else item.offset,
            error or status in ("unclosed", "dangling"),
        )
        self._closed += 1
        if len(self._head) < self._head_max:
            self._head.append(done)
        else:
            self._tail.append(done)

    # -- the end --------------------------------------------------------------------------------

    def finish(self, committed: int | None = None) -> CollectedTimeline:
        """Close the collection. Spans still open stay open-ended (``end`` None); with
        ``committed`` (the plaintext offset where the committed region ends), nothing past it
        counts as having happened: spans that start there are dropped, spans that end there are
        reopened."""
        for call in self._calls.values():
            self._emit(call, None, "dangling", call.line)
        for still_open in (self._step, self._turn):
            if still_open is not None:
                self._emit(still_open, None, "open", still_open.line)
        kept = [*self._head, *self._tail]
        elided = self._closed - len(kept)
        if committed is not None:
            kept = [_reopened(i, committed) for i in kept if i.first_offset < committed]
        kept.sort(key=lambda i: (i.start, {"turn": 0, "step": 1, "tool": 2}[i.kind], i.first_line))
        span = (self._last or 0) - (self._first or 0)
        gaps = tuple(
            Gap(start, end)
            for length, start, end in sorted(self._gaps, key=lambda g: g[1])
            if span and length * 10 >= span and length >= MIN_GAP_MS
        )
        return CollectedTimeline(tuple(kept), elided, gaps, self._first, self._last, self.index)


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


def _reopened(item: TimelineItem, committed: int) -> TimelineItem:
    if item.last_offset < committed or item.end is None:
        return item
    status = "dangling" if item.kind == "tool" else "open"
    return TimelineItem(
        item.key, item.kind, item.label, item.start, None, status, item.turn,
        item.first_seq, None, item.first_line, item.first_line, item.first_offset, item.first_offset,
        True,
    )  # fmt: skip


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

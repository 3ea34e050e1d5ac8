"""The report's timeline, collected in the scan's own streaming pass: the part every dialect shares.

A dialect's collector (``SpanCollector`` subclass) is fed the same reader batches as the
scanner, decodes its own records and reports spans: turns and steps that start and end, tool
calls from call to result. This part keeps a bounded amount — the first ``head`` and last
``tail`` closed spans, the calls still open, the longest gaps, and a time index of at most
``2 * points`` checkpoints from which any line or seq is placed on the time axis — so memory
does not grow with the log.
"""

from __future__ import annotations

import heapq
from bisect import bisect_right
from collections import deque
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Self

import orjson

from sesstool.core.model import TimelineEntry
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


def preview(text: str, width: int = 60) -> str:
    """The start of a text on one line (whitespace runs made one space), cut at ``width``."""
    flat = " ".join(text[: width * 4].split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


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


class SpanCollector:
    """The bounded span bookkeeping every dialect's timeline shares.

    A dialect's collector decodes its own records in ``feed_lines`` and calls ``tick`` for every
    timed record and ``start_*``/``end_*`` for spans; this class pairs, bounds and finishes.
    """

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
        self._turns = 0  # turns started through next_turn
        self.index = TimeIndex()
        self.rows: Any = None  # inspect --timeline: where ``row`` hands one entry per record

    @classmethod
    def rows_to(cls, sink: Any) -> Self | None:
        """A collector for ``inspect --timeline``: it keeps no closed span (head and tail 0; the
        open calls and the time index stay bounded) and hands ``sink`` (anything with
        ``append``) one ``TimelineEntry`` per record as it is read: the rows are streamed,
        never held (issue 11 item 1c). The turns and calls are the report's, counted the same way.
        None when ``sink`` is (no timeline asked)."""
        if sink is None:
            return None
        collector = cls(0, 0)
        collector.rows = sink
        return collector

    def feed_lines(self, lines: list[bytes], offset: int, lineno: int, frame: int | None) -> None:
        """One reader batch (complete lines without newlines, as the scanner gets them): every
        line that decodes to a JSON object goes to ``record``, unless ``skim`` took it first."""
        loads, skim, record = orjson.loads, self.skim, self.record
        for i, raw in enumerate(lines):
            at = offset
            offset += len(raw) + 1
            if skim(raw, lineno + i, at):
                continue
            try:
                obj = loads(raw)
            except orjson.JSONDecodeError:
                continue
            if type(obj) is dict:
                record(obj, lineno + i, at)

    # -- what a dialect's collector overrides ---------------------------------------------------

    def record(self, obj: dict[str, Any], line: int, offset: int) -> None:
        """One decoded record at ``line`` (``offset`` = its plaintext byte offset)."""
        raise NotImplementedError

    def skim(self, raw: bytes, line: int, offset: int) -> bool:
        """True when the raw line was accounted for without decoding it (a collector that can
        tell from a record's first bytes that it opens and closes no span)."""
        return False

    # -- what a dialect's collector calls -------------------------------------------------------

    def tick(self, line: int, seq: int | None, t: int, offset: int) -> None:
        """A timed record at ``line`` (``offset`` = its plaintext byte offset)."""
        self._offset = offset
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

    def next_turn(self, t: int, line: int) -> None:
        """Start turn N+1 of a dialect that does not number its turns ("turn N")."""
        self._turns += 1
        self.start_turn(f"turn {self._turns}", t, self._turns, None, line)

    def start_turn(self, label: str, t: int, turn: int | None, seq: int | None, line: int) -> None:
        if self._turn is not None:  # a second start without an end: the first never closed
            self._close_step(None, "unclosed", line)
            self._emit(self._turn, None, "unclosed", line)
        self._turn = _Open("turn", label, t, turn, seq, line, self._offset)

    def end_turn(self, t: int, status: str, line: int) -> None:
        self._close_step(None, "unclosed", line)
        if self._turn is not None:
            self._emit(self._turn, t, status, line)
            self._turn = None

    @property
    def open_turn(self) -> int | None:
        return self._turn.turn if self._turn is not None else None

    @property
    def turn_is_open(self) -> bool:
        return self._turn is not None

    def start_step(self, label: str, t: int, turn: int | None, seq: int | None, line: int) -> None:
        self._close_step(None, "unclosed", line)
        self._step = _Open("step", label, t, turn, seq, line, self._offset)

    def end_step(self, t: int, status: str, line: int) -> None:
        self._close_step(t, status, line)

    def _close_step(self, t: int | None, status: str, line: int) -> None:
        if self._step is not None:
            self._emit(self._step, t, status, line)
            self._step = None

    def start_call(self, call_id: str, name: str, t: int, seq: int | None, line: int) -> None:
        call = _Open("tool", name, t, self.open_turn, seq, line, self._offset)
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

    def call_name(self, call_id: str) -> str | None:
        """The tool name of the open call ``call_id`` (None: no such open call)."""
        call = self._calls.get(call_id)
        return call.label if call is not None else None

    def row(
        self, line: int, time: Any, kind: str, summary: str, turn: int | None, sidechain: bool = False
    ) -> None:
        """Hand the row of the record at ``line`` to ``rows`` (``time``: its timestamp as
        written; a value that is not a string is shown as none)."""
        stamp = time if isinstance(time, str) else None
        self.rows.append(TimelineEntry(line - 1, turn, None, kind, summary, False, line, stamp, sidechain))

    def call_of_seq(self, seq: int) -> str | None:
        """The id of the open call whose record had ``seq``."""
        return self._call_ids.get(seq)

    def end_call(self, call_id: str, t: int, line: int, error: bool) -> bool:
        """Close an open call (False: no open call has that id)."""
        call = self._calls.pop(call_id, None)
        if call is None:
            return False
        if call.seq is not None:
            self._call_ids.pop(call.seq, None)
        self._emit(call, t, "error" if error else "answered", line, error)
        return True

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

    def finish(self, committed: int | None = None, interrupted: bool = True) -> CollectedTimeline:
        """Close the collection. Spans still open stay open-ended (``end`` None) — unless the log
        was not ``interrupted`` and its dialect has no explicit turn end (the collector closed
        nothing): then an open turn ends at the last event. With ``committed`` (the plaintext
        offset where the committed region ends), nothing past it counts as having happened:
        spans that start there are dropped, spans that end there are reopened."""
        for call in self._calls.values():
            self._emit(call, None, "dangling", call.line)
        self._calls.clear()
        self._close_step(None, "open", self._last_line)
        if self._turn is not None:
            if interrupted or self._last is None:
                self._emit(self._turn, None, "open", self._turn.line)
            else:
                self._emit(self._turn, self._last, "completed", self._last_line)
            self._turn = None
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


def _reopened(item: TimelineItem, committed: int) -> TimelineItem:
    if item.last_offset < committed or item.end is None:
        return item
    status = "dangling" if item.kind == "tool" else "open"
    return TimelineItem(
        item.key, item.kind, item.label, item.start, None, status, item.turn,
        item.first_seq, None, item.first_line, item.first_line, item.first_offset, item.first_offset,
        True,
    )  # fmt: skip

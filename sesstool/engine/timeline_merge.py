"""``inspect --timeline`` of a log with side files (a Claude Code session's subagent transcripts,
``engine.companions``): the side files' rows merged by time into the log's own rows, which keep
their file order (docs/format.md "Timeline", "Subagent rows").

Streamed: every side file is read once, one after the other, its rows spilled to a table that
SQLite sorts on disk (``store.spill_sort.SpilledRows``); then the log's own rows are read again
and the spilled rows are handed out between them. Memory holds no row beyond a small fetch batch,
whatever the number of rows or side files.
"""

from __future__ import annotations

import pickle
import re
from collections.abc import Callable, Collection, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import PurePath

from sesstool.core.errors import InputError, NotASessionLog
from sesstool.core.model import TimelineEntry
from sesstool.core.options import ScanOptions
from sesstool.engine.scan import scan_source
from sesstool.store.source import ReadLimits
from sesstool.store.spill_sort import SpilledRows

Sink = Callable[[TimelineEntry], None]
LAST = 2**63 - 1  # the key of a side file that has no usable time: after every timed row

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICRO = timedelta(microseconds=1)
_SUFFIX = re.compile(r"\.jsonl(?:\.zstd?)?$")


def row_time(time: str | None) -> int | None:
    """A row's ``timestamp`` as written, in microseconds since the epoch; a time without a zone
    is UTC's (the order must not depend on the machine's zone); None when it does not parse."""
    if time is None:
        return None
    try:
        at = datetime.fromisoformat(time)
        if at.tzinfo is None:
            at = at.replace(tzinfo=UTC)
        return (at - _EPOCH) // _MICRO
    except (ValueError, OverflowError):
        return None


def side_name(path: str) -> str:
    """How a side file's rows are marked: its name without ``.jsonl[.zstd]`` (``agent-<id>``),
    the same for a raw file and its zstd twin."""
    return _SUFFIX.sub("", PurePath(path).name)


class _Spiller:
    """The sink of one side file's scan: each row spilled with its key, the latest time of its
    file so far; rows before the file's first usable time get that time once it comes."""

    def __init__(self, rows: SpilledRows, name: str) -> None:
        self.rows = rows
        self.name = name
        self.start = len(rows)
        self.key: int | None = None

    def append(self, e: TimelineEntry) -> None:
        t = row_time(e.time)
        if t is not None and (self.key is None or t > self.key):
            if self.key is None:
                self.rows.settle(t)
            self.key = t
        row = (e.seq, e.kind, e.summary, e.line, e.time, e.sidechain, self.name)
        self.rows.add(self.key, pickle.dumps(row, pickle.HIGHEST_PROTOCOL))

    def close(self) -> None:
        if self.key is None:
            self.rows.settle(LAST)


def _spill(rows: SpilledRows, side: str, options: ScanOptions, limits: ReadLimits) -> None:
    """One side file's rows into ``rows``; a file that cannot be read adds none (inspect's row
    for it says why)."""
    spiller = _Spiller(rows, side_name(side))
    try:
        scan_source(side, ScanOptions(options.fixture, collect_timeline=True, timeline_sink=spiller), limits)
    except (InputError, NotASessionLog):
        rows.drop(spiller.start)
        return
    spiller.close()


def _entry(row: bytes, turn: int | None) -> TimelineEntry:
    seq, kind, summary, line, time, sidechain, name = pickle.loads(row)
    return TimelineEntry(seq, turn, None, kind, summary, False, line, time, sidechain, name)


def merged(
    own: Callable[[Sink], None], sides: Collection[str], options: ScanOptions, limits: ReadLimits
) -> Callable[[Sink], None]:
    """The timeline of ``own`` (the log's rows, in file order) with the rows of the files
    ``sides`` placed by time: a side row comes before the first of the log's rows whose time
    (the latest of the log so far) is later than its own; ties go to the log, then to the side
    files in path order, then to line order. A side row belongs to the turn of the log's row
    before it (None before the first)."""
    if not sides:
        return own

    def replay(sink: Sink) -> None:
        rows = SpilledRows("the timeline of a session's subagent files")
        try:
            for side in sides:
                _spill(rows, side, options, limits)
            _merge(own, rows.sorted(), sink)
        finally:
            rows.close()

    return replay


def _merge(own: Callable[[Sink], None], spilled: Iterator[tuple[int, bytes]], sink: Sink) -> None:
    head = next(spilled, None)
    latest: int | None = None  # the latest time of the log's rows so far
    turn: int | None = None

    def take(e: TimelineEntry) -> None:
        nonlocal head, latest, turn
        t = row_time(e.time)
        if t is not None and (latest is None or t > latest):
            latest = t
        while head is not None and latest is not None and head[0] < latest:
            sink(_entry(head[1], turn))
            head = next(spilled, None)
        sink(e)
        turn = e.turn

    own(take)
    while head is not None:
        sink(_entry(head[1], turn))
        head = next(spilled, None)

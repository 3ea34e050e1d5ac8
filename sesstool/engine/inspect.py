"""inspect: scan one log and predict what a repair would append; its side files (a Claude
session's subagent transcripts, ``engine.companions``) are scanned and shown with it.

The timeline is never held for a file: the summary comes from one pass, and the timeline is
replayed by a second pass straight into the renderer (issue 11 item 1c: memory flat in the
number of events). A stream (stdin, a FIFO) cannot be read twice: its entries are kept, up to
``max_timeline``, past which inspect refuses (exit 3) naming the option.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

from sesstool.core.errors import InputError
from sesstool.core.model import TimelineEntry
from sesstool.core.options import ScanOptions
from sesstool.engine.companions import Companion, companion_paths, scan_companions, sidecar_of
from sesstool.engine.listing import ListReport, ListRequest, classify, nothing_found, run_list
from sesstool.engine.scan import Progress, ScanReport, scan_source
from sesstool.engine.timeline_merge import merged
from sesstool.store.sidecar import Sidecar
from sesstool.store.source import ReadLimits, is_stream
from sesstool.store.spool import ItemSpool

DEFAULT_MAX_TIMELINE = 100_000

TimelineSink = Callable[[TimelineEntry], None]


@dataclass(frozen=True, slots=True)
class InspectRequest:
    path: str
    limits: ReadLimits = field(default_factory=ReadLimits)
    timeline: bool = False
    fixture: bool = False
    max_timeline: int = DEFAULT_MAX_TIMELINE  # entries kept from a stream (a file has no limit)
    timeline_turn: int | None = None  # --turn N: only the entries of turn N
    timeline_last: int | None = None  # --last N: only the last N entries (of that turn)
    companions: bool = True  # scan the log's side files too (the fleet lists them on their own)


@dataclass(frozen=True, slots=True)
class InspectReport:
    scan: ScanReport
    closers: Collection[dict[str, Any]]  # what `repair` would append (empty: nothing/refused); walked
    repairable: bool
    # with --timeline: call with a sink to receive every entry in order (a second pass for a file)
    replay_timeline: Callable[[TimelineSink], None] | None = None
    companions: Collection[Companion] = ()  # side files read with it (Claude Code: its subagents), spooled
    reframe: bool = False  # a write rewrites the zstd framing (``Dialect.rewrites_framing``)
    sidecar: Sidecar | None = None  # the log's own sidecar (``Dialect.sidecar_name``), read

    def close(self) -> None:
        """Give back the spool of side files (its temporary file, when it spilled)."""
        if isinstance(self.companions, ItemSpool):
            self.companions.close()


class _Kept(list[TimelineEntry]):
    """The entries of a stream, refused past the limit."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit

    def append(self, entry: TimelineEntry) -> None:
        if len(self) >= self.limit:
            raise InputError(
                f"the timeline of a stream has more than {self.limit} entries; raise "
                "--max-timeline or inspect a file (a file's timeline is streamed, unbounded)"
            )
        super().append(entry)


class _Forward:
    def __init__(self, sink: TimelineSink) -> None:
        self.append = sink


def run_inspect_path(request: InspectRequest, progress: Progress | None = None) -> InspectReport | ListReport:
    """``inspect PATH``: a directory of sessions (a dialect's root, a directory of logs, a remote
    prefix) is listed one row per session (``engine.listing``); anything else is one log."""
    found = classify(request.path)
    if found.listable:
        return run_list(ListRequest(request.path, request.limits), progress, found)
    if found.kind == "empty-dir" and found.walk is not None and found.walk.skipped:
        raise InputError(nothing_found(request.path, found))  # say what the bounded search skipped
    return run_inspect(request, progress)


def run_inspect(request: InspectRequest, progress: Progress | None = None) -> InspectReport:
    options = ScanOptions(fixture=request.fixture)
    kept: _Kept | None = None
    stream = is_stream(request.path)
    if request.timeline and stream:
        kept = _Kept(request.max_timeline)
        options = ScanOptions(fixture=request.fixture, collect_timeline=True, timeline_sink=kept)
    report = scan_source(request.path, options, request.limits, progress)
    result = report.scan
    repairable = result.verdict in ("interrupted", "torn")
    closers = report.dialect.closers(result) if repairable else ()  # walked, not held (issue 11 item 1)
    replay: Callable[[TimelineSink], None] | None = None
    # the side files, found once: the timeline merges and the summary scans the same ones
    where = str(report.source.path or request.path)
    side_files = companion_paths(where, report.dialect) if request.companions and not stream else ()
    if kept is not None:
        entries = kept

        def replay(sink: TimelineSink) -> None:
            for entry in entries:
                sink(entry)

    elif request.timeline:

        def own(sink: TimelineSink) -> None:
            _timeline_pass(request, report, sink)

        # the side files' rows merged by time (engine.timeline_merge), read when the rows are
        replay = merged(own, side_files, options, request.limits)

    if replay is not None:
        replay = _selected(replay, request.timeline_turn, request.timeline_last)
    sides = (
        ()
        if stream or not request.companions
        else scan_companions(side_files, report.dialect, ScanOptions(fixture=request.fixture), request.limits)
    )
    reframe = report.dialect.rewrites_framing(result)
    sidecar = None if stream else sidecar_of(where, report.dialect)
    return InspectReport(report, closers, repairable, replay, sides, reframe, sidecar)


def _selected(
    replay: Callable[[TimelineSink], None], turn: int | None, last: int | None
) -> Callable[[TimelineSink], None]:
    """The timeline narrowed to one turn and/or its last entries; ``--last N`` holds N entries
    (a merged subagent's rows count as rows, in the turn they are placed in)."""
    if turn is None and last is None:
        return replay

    def narrowed(sink: TimelineSink) -> None:
        tail: deque[TimelineEntry] | None = deque(maxlen=last) if last is not None else None

        def take(entry: TimelineEntry) -> None:
            if turn is not None and entry.turn != turn:
                return
            if tail is not None:
                tail.append(entry)
            else:
                sink(entry)

        replay(take)
        for entry in tail or ():
            sink(entry)

    return narrowed


def _timeline_pass(request: InspectRequest, first: ScanReport, sink: TimelineSink) -> None:
    """Scan the same file again, handing every timeline entry to ``sink`` as it is made."""
    path = first.source.path
    assert path is not None
    options = ScanOptions(fixture=request.fixture, collect_timeline=True, timeline_sink=_Forward(sink))
    again = scan_source(path, options, request.limits)
    src = again.source
    replaced = (src.dev, src.ino) != (first.source.dev, first.source.ino)
    if replaced or (src.size or 0) < (first.source.size or 0):
        raise InputError(f"{first.source.display}: the file was replaced while its timeline was read")

"""report: one streaming pass builds the frozen, bounded model behind ``sesstool report``.

The scanner reads the log as every command does (verdict, findings, open state); the timeline
collector is fed the same batches. The derived messages are read back by address as ``derive``
reads them (engine/derive.py; issue 17: the scan keeps a few words per line, never the
messages), and only the conversation's head and tail are kept. What reaches the model is
bounded whatever the log's size: the timeline's head and tail, the conversation's head and
tail with long parts cut, and counts of everything left out (docs/format.md, "report").
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from sesstool.core.closer_list import ends, walked
from sesstool.core.errors import Address
from sesstool.core.model import PendingCall, ScanResult
from sesstool.core.options import ScanOptions
from sesstool.core.physical import Batch
from sesstool.core.redact import Redactor
from sesstool.core.report_model import Elision, Message, Report, ReportFinding, TimelineItem
from sesstool.core.timeline import CollectedTimeline, SpanCollector, TimeIndex
from sesstool.core.transcript import bounded
from sesstool.dialects.base import Dialect
from sesstool.engine.derive import scan_to_read_back, scanned_messages
from sesstool.engine.scan import Progress, ScanReport
from sesstool.store.run_spill import spilled_strings
from sesstool.store.source import ReadLimits

REPORT_CLOSERS = 10  # closers shown at each end of a longer list (docs/format.md "Reports")
REPORT_PARTS = 500  # parts of one message shown at each end of a longer one (the same section)


@dataclass(frozen=True, slots=True)
class ReportLimits:
    """How much of a large log the page holds (the rest is counted, and the page says so)."""

    timeline_head: int = 1500
    timeline_tail: int = 1500
    messages_head: int = 100
    messages_tail: int = 200
    part_chars: int = 20_000
    total_chars: int = 1_500_000  # past this, parts are cut to ``part_chars_after``
    part_chars_after: int = 1_000


@dataclass(frozen=True, slots=True)
class ReportRequest:
    path: str
    limits: ReadLimits = field(default_factory=ReadLimits)
    fixture: bool = False
    redact: bool = False
    bounds: ReportLimits = field(default_factory=ReportLimits)


class _TimelineTap:
    """Feeds the batches the scanner gets to the timeline collector of the dialect reading the
    log (known once the first line is read)."""

    def __init__(self, bounds: ReportLimits) -> None:
        self.bounds = bounds
        self.started = False
        self.collector: SpanCollector | None = None

    def __call__(self, batch: Batch, dialect: Dialect) -> None:
        if not self.started:
            self.started = True
            self.collector = dialect.timeline(self.bounds.timeline_head, self.bounds.timeline_tail)
        if self.collector is not None:
            self.collector.feed_lines(*batch)

    def finish(self, committed: int | None, interrupted: bool) -> CollectedTimeline:
        if self.collector is None:
            return CollectedTimeline((), 0, (), None, None, TimeIndex())
        return self.collector.finish(committed, interrupted=interrupted)


def run_report(request: ReportRequest, progress: Progress | None = None) -> Report:
    bounds = request.bounds
    tap = _TimelineTap(bounds)
    options = ScanOptions(fixture=request.fixture, collect_messages=True, message_addresses=True)
    scan_report, readable, release = scan_to_read_back(request.path, options, request.limits, progress, tap)
    try:
        scan = scan_report.scan
        committed = scan.tail.committed_bytes if scan.tail.kind != "none" else None
        timeline = tap.finish(committed, interrupted=scan.verdict != "clean")
        redactor = Redactor(spill=spilled_strings) if request.redact else None
        derived = None
        if scan.verdict not in ("corrupt", "unsupported") and scan.messages is not None:
            derived = scanned_messages(scan_report, readable, request.limits)
        report = build_report(scan_report, timeline, bounds, redactor, derived)
    finally:
        release()
    return redacted(report, redactor) if redactor is not None else report


def build_report(
    scan_report: ScanReport,
    timeline: CollectedTimeline,
    bounds: ReportLimits,
    redactor: Redactor | None = None,
    derived: Iterable[Any] | None = None,
) -> Report:
    """The model; with a ``redactor`` the messages are redacted before long parts are cut (a
    value is never half shown); ``redacted`` then covers the rest of the text. ``derived``:
    the messages, produced as they are read (None: the scan's own)."""
    scan = scan_report.scan
    end = timeline.end
    findings = tuple(_finding(i, f, timeline, end) for i, f in enumerate(scan.findings))
    if derived is None:
        derived = scan.messages
    messages, total, cut, note = _messages(scan, derived, bounds, redactor)
    closers, closers_hidden, repair_note = _closers(scan, scan_report.dialect)
    crash = scan.verdict in ("interrupted", "torn", "corrupt")
    never, never_hidden = _never_started(scan.open.pending, bounds.timeline_tail)
    not_started = tuple(p.call_id for p in never)
    items = timeline.items
    if never and end is not None:
        # advertised by the model, never started: marked at the point where the log stops
        line = timeline.index.last_line
        offset = scan.tail.committed_bytes
        items += tuple(
            TimelineItem(
                f"tool-not-started-{n}", "tool", f"{p.name or '?'} {p.call_id}", end, None, "not-started",
                scan.open.turn, None, None, line, line, offset, offset, False,
            )
            for n, p in enumerate(never)
        )  # fmt: skip
    elision = Elision(timeline.elided, max(0, total - len(messages)), cut, scan.findings_dropped)
    return Report(
        path=scan_report.source.display,
        dialect=scan.dialect,
        version=scan.version,
        session=scan.session_id or (scan.header.id if scan.header is not None else None),
        encoding=scan_report.source.encoding,
        file_bytes=scan_report.source.size,
        events=scan.stats.events,
        verdict=scan.verdict,
        verdict_reason=scan.verdict_reason,
        verdict_address=scan.verdict_address,
        findings=findings,
        items=items,
        gaps=timeline.gaps,
        start=timeline.start,
        end=end,
        crash=crash,
        not_started=not_started,
        messages=messages,
        messages_total=total,
        messages_gap_at=bounds.messages_head if total > len(messages) else None,
        messages_note=note,
        closers=closers,
        repair_note=repair_note,
        elision=elision,
        live=scan_report.live,
        version_label=scan.version_label,
        closers_hidden=closers_hidden,
        not_started_hidden=never_hidden,
    )


def _finding(index: int, f: Any, timeline: CollectedTimeline, end: int | None) -> ReportFinding:
    """Place a finding on the time axis: by its line, else its seq; past the last event (a torn
    tail, an open turn reported at the end) it sits at the crash point."""
    address: Address = f.address
    line = address.line
    if line is None and address.seq is not None:
        line = timeline.index.line_of_seq(address.seq)
    time: int | None = None
    item: str | None = None
    if line is not None and timeline.index.lines and line <= timeline.index.last_line:
        time = timeline.index.at_line(line)
        item = _holder(timeline.items, line)
    else:
        time = end  # past the last event: a torn tail, a check made at the end of the log
    return ReportFinding(index, f.rule, f.severity.name.lower(), f.message, address, time, item)


def _holder(items: tuple[TimelineItem, ...], line: int) -> str | None:
    best: TimelineItem | None = None
    rank = {"turn": 0, "step": 1, "tool": 2}
    for item in items:
        last = item.last_line if item.end is not None else 1 << 62
        if item.first_line <= line <= last and (best is None or rank[item.kind] >= rank[best.kind]):
            best = item
    return best.key if best is not None else None


def _messages(
    scan: ScanResult,
    derived: Iterable[Any] | None,
    bounds: ReportLimits,
    redactor: Redactor | None,
) -> tuple[tuple[Message, ...], int, int, str | None]:
    if scan.verdict in ("corrupt", "unsupported") or derived is None:
        why = "corrupt" if scan.verdict == "corrupt" else "not supported"
        return (), 0, 0, f"no conversation: the log is {why}, so no resume would derive one"
    head, tail = bounds.messages_head, bounds.messages_tail
    # the head and the tail only, taken as the messages are produced (the rest is counted):
    # memory holds at most head + tail messages, whatever the conversation's length
    chosen: list[Any] = []
    last: deque[Any] = deque(maxlen=tail)
    total = 0
    for message in derived:
        (chosen if total < head else last).append(message)
        total += 1
    chosen.extend(last)
    del last
    if redactor is not None:  # a part made as walked meets the redactor here, in order
        chosen = [_redacted(redactor, m) for m in chosen]
    out_list: list[Message] = []
    used = 0
    for m in chosen:
        limit = bounds.part_chars if used < bounds.total_chars else bounds.part_chars_after
        message = _shown(bounded(m, limit))
        used += sum(len(p.text) for p in message.parts)
        out_list.append(message)
    out = tuple(out_list)
    return out, total, sum(m.truncated for m in out), None


def _redacted(redactor: Redactor, message: Any) -> Any:
    redacted = redactor.value(message)
    walked(redacted)  # a content made as walked (``Closers``) gets its tokens now, in order
    return redacted


def _shown(message: Message) -> Message:
    """The parts the page shows: every one up to ``2 * REPORT_PARTS``, else the first and last
    ``REPORT_PARTS`` and how many lie between (docs/format.md "Reports": one message of 80,000
    interrupted results), walked once."""
    first, last = ends(message.parts, REPORT_PARTS)
    return Message(message.role, first + last, message.truncated, len(message.parts) - len(first) - len(last))


def _closers(scan: ScanResult, dialect: Dialect) -> tuple[tuple[str, ...], int, str]:
    """The closers a repair would append as raw lines: every one up to ``2 * REPORT_CLOSERS``,
    else the first and last ``REPORT_CLOSERS`` and how many lie between (docs/format.md
    "Reports": a page does not list 80,000 closers), walked once; then the repair note."""
    if scan.verdict == "clean":
        return (), 0, "nothing: the log is balanced"
    if scan.verdict in ("corrupt", "unsupported"):
        return (), 0, f"a repair refuses this log ({scan.verdict}: {scan.verdict_reason})"
    records = dialect.closers(scan)
    first, last = ends(records, REPORT_CLOSERS)
    lines = tuple(dialect.encode_record(c)[:-1].decode("utf-8", "replace") for c in first + last)
    dropped = scan.tail.dropped_bytes
    if not lines:
        return (), 0, f"would append nothing; it would drop the {dropped}-byte torn tail"
    after = f" after dropping the {dropped}-byte torn tail" if dropped else ""
    return lines, len(records) - len(lines), f"would append {len(records)} closer(s){after}"


def redacted(report: Report, redactor: Redactor) -> Report:
    """The same report with every credential-shaped value in its text replaced by a token
    (messages excepted: ``build_report`` redacted them whole, before cutting)."""
    text = redactor.text
    findings = tuple(
        ReportFinding(f.index, f.rule, f.severity, text(f.message), f.address, f.time, f.item)
        for f in report.findings
    )
    items = tuple(
        TimelineItem(
            i.key, i.kind, text(i.label), i.start, i.end, i.status, i.turn, i.first_seq, i.last_seq,
            i.first_line, i.last_line, i.first_offset, i.last_offset, i.error,
        )
        for i in report.items
    )  # fmt: skip
    closers = tuple(text(c) for c in report.closers)
    reason = text(report.verdict_reason)
    counts = redactor.counts()
    return Report(
        report.path, report.dialect, report.version, _opt(redactor, report.session), report.encoding,
        report.file_bytes, report.events, report.verdict, reason, report.verdict_address, findings,
        items, report.gaps, report.start, report.end, report.crash,
        tuple(text(c) for c in report.not_started), report.messages, report.messages_total,
        report.messages_gap_at,
        report.messages_note, closers, report.repair_note, report.elision, report.live,
        counts.by_kind, report.version_label, report.closers_hidden, report.not_started_hidden,
    )  # fmt: skip


def _never_started(pending: Iterable[PendingCall], keep: int) -> tuple[list[PendingCall], int]:
    """The first ``keep`` calls advertised but never started, and how many more there are: a
    timeline item each on the page, so a log of any number of them is drawn with at most
    ``keep``, the rest counted in its list of them (issue 11 item 1). The pending calls are
    walked once (read back from the scan's spill file past its threshold)."""
    kept: list[PendingCall] = []
    hidden = 0
    for p in pending:
        if p.call_seq is not None:
            continue
        if len(kept) < keep:
            kept.append(p)
        else:
            hidden += 1
    return kept, hidden


def _opt(redactor: Redactor, value: str | None) -> str | None:
    return None if value is None else redactor.text(value)
